//! Test-only fault injection into the C++ generator, for the mutation tests of both
//! validators: the static one (`collc_lift::validate`, `collc emit --validate`) and the
//! trace conformance check (`collc run --trace`). A test switches a fault on for one
//! emission ([`with`]); the switch is per thread, so tests running in parallel do not see
//! each other's faults, and nothing else (no command line) reaches it.

use collc_spec::ir::{BinOp, Expr, NotifyOp, Stmt};

/// A fault in the generated code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Every `.coll fence` prints nothing.
    DropFence,
    /// The pto::comm publish before a notify (`pipe_barrier` + `dsb`) prints nothing.
    DropPublish,
    /// A remote notify's target and its cell's last index trade places.
    SwapNotifyTarget,
    /// A negative `AtomicAdd` (a reset) subtracts one more.
    ResetValue,
    /// The first wait (or loop of waits) of a block moves before the statement preceding it.
    ReorderWait,
}

impl Mutation {
    /// Every mutation.
    pub const ALL: [Mutation; 5] = [
        Mutation::DropFence,
        Mutation::DropPublish,
        Mutation::SwapNotifyTarget,
        Mutation::ResetValue,
        Mutation::ReorderWait,
    ];
}

thread_local! {
    static ACTIVE: std::cell::Cell<Option<Mutation>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` (an emission, or a build and run) with `m` switched on in this thread.
pub fn with<T>(m: Mutation, f: impl FnOnce() -> T) -> T {
    let before = ACTIVE.with(|a| a.replace(Some(m)));
    let out = f();
    ACTIVE.with(|a| a.set(before));
    out
}

/// Is `m` switched on?
pub(crate) fn active(m: Mutation) -> bool {
    ACTIVE.with(|a| a.get()) == Some(m)
}

/// A notify's cell index, target and value as emitted.
pub(crate) fn notify(
    index: &[Expr],
    target: Option<&Expr>,
    op: NotifyOp,
    value: &Expr,
) -> (Vec<Expr>, Option<Expr>, Expr) {
    let mut index = index.to_vec();
    let mut target = target.cloned();
    let mut value = value.clone();
    if active(Mutation::SwapNotifyTarget) {
        if let (Some(t), Some(last)) = (target.as_mut(), index.last_mut()) {
            std::mem::swap(t, last);
        }
    }
    let negative = matches!(value, Expr::Neg(_)) || value.as_const().is_some_and(|c| c < 0);
    if active(Mutation::ResetValue) && op == NotifyOp::AtomicAdd && negative {
        value = Expr::Bin(BinOp::Sub, Box::new(value), Box::new(Expr::Int(1)));
    }
    (index, target, value)
}

/// A block's statements as emitted: with [`Mutation::ReorderWait`], the first statement
/// `is_wait` accepts (past the first) swapped with the one before it.
pub(crate) fn block<'s>(
    stmts: &'s [Stmt],
    is_wait: &dyn Fn(&Stmt) -> bool,
) -> std::borrow::Cow<'s, [Stmt]> {
    if !active(Mutation::ReorderWait) {
        return std::borrow::Cow::Borrowed(stmts);
    }
    let mut v = stmts.to_vec();
    if let Some(i) = (1..v.len()).find(|&i| is_wait(&v[i])) {
        v.swap(i - 1, i);
    }
    std::borrow::Cow::Owned(v)
}
