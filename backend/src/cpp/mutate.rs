//! Test-only fault injection into the C++ generator (the mutation tests of the validators:
//! each fault makes the emitted kernel differ from the protocol it was emitted from, and a
//! validator must notice). Nothing outside tests calls [`with`]; without it the generator is
//! unaffected. The switch is per thread, so tests running in parallel do not see each
//! other's faults.

use collc_spec::ir::{Block, Protocol, StmtKind};
use std::cell::Cell;

/// One fault of the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Every `.coll` `fence` is emitted as nothing.
    DropFence,
    /// Every remote notify goes to rank `(target + 1) % P` instead of `target`.
    SwapNotifyTarget,
    /// Every reset (an `AtomicAdd` of a negated value, `-= v`) subtracts one credit more.
    ResetValue,
    /// The first wait (or loop of waits) of the body trades places with the next statement
    /// that is not a `let` (the previous one if it is the last).
    ReorderWait,
}

thread_local! {
    static CURRENT: Cell<Option<Mutation>> = const { Cell::new(None) };
}

/// Runs `f` with the generator faulty in way `m` on this thread.
pub fn with<R>(m: Mutation, f: impl FnOnce() -> R) -> R {
    let before = CURRENT.with(|c| c.replace(Some(m)));
    let r = f();
    CURRENT.with(|c| c.set(before));
    r
}

/// The fault in force on this thread, if any.
pub(crate) fn current() -> Option<Mutation> {
    CURRENT.with(Cell::get)
}

pub(crate) fn is(m: Mutation) -> bool {
    current() == Some(m)
}

fn is_wait_stmt(k: &StmtKind) -> bool {
    match k {
        StmtKind::Wait { .. } => true,
        StmtKind::For { body, .. } => body.stmts.iter().any(|s| is_wait_stmt(&s.kind)),
        _ => false,
    }
}

/// The body the generator walks: `p.body`, or under [`Mutation::ReorderWait`] the body with
/// its first top-level wait (or wait loop) moved. `None`: nothing to reorder.
pub(crate) fn body(p: &Protocol) -> Option<Block> {
    if !is(Mutation::ReorderWait) {
        return None;
    }
    let mut b = p.body.clone();
    let i = b.stmts.iter().position(|s| is_wait_stmt(&s.kind))?;
    let not_let = |j: &usize| !matches!(b.stmts[*j].kind, StmtKind::Let { .. });
    let j = (i + 1..b.stmts.len())
        .find(not_let)
        .or_else(|| (0..i).rev().find(not_let))?;
    b.stmts.swap(i, j);
    Some(b)
}
