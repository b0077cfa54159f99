//! The protocol IR: one validated, name-resolved, typed description of a
//! collective's synchronisation protocol. Produced by [`crate::lower`]; consumed by
//! the verifier, the simulator and the backends. Once lowering succeeds, every
//! reference in the IR is in range and every expression is well typed, so later
//! stages may index the tables directly.

pub use collc_grammar::ast::{BinOp, CmpOp};
use collc_grammar::Span;
use serde::{Deserialize, Serialize};

pub use crate::id::Id;

/// Position in [`Protocol::vars`].
pub type VarId = Id<Var>;
/// Position in [`Protocol::signals`].
pub type SignalId = Id<Signal>;
/// Position in [`Protocol::windows`].
pub type WindowId = Id<crate::id::Window>;
/// Position in [`Protocol::tiles`].
pub type TileId = Id<crate::id::Tile>;
/// Position in [`Protocol::arrays`].
pub type ArrayId = Id<Array>;
/// Position in [`Protocol::requires`].
pub type RequireId = Id<Require>;

/// The largest world size the language allows: signal cells and the runtimes' rank
/// arguments are int32. `ranks P >= LO;` means `LO..=MAX_WORLD`.
pub const MAX_WORLD: i64 = i32::MAX as i64;

/// A whole collective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    /// The collective's name.
    pub name: String,
    /// What the outputs must equal.
    pub semantics: Semantics,
    /// Every named value: world size, parameters, constants, lets, `me`, the block index, loop variables.
    pub vars: Vec<Var>,
    /// The world-size variable (`ranks P in ...`).
    pub world: VarId,
    /// The implicit `me` (this rank).
    pub me: VarId,
    /// The implicit call index `call` (0-based, per rank), if the protocol reads it.
    #[serde(default)]
    pub call: Option<VarId>,
    /// `calls <= N;`: the most back-to-back calls per rank the protocol promises.
    #[serde(default)]
    pub calls: Option<CallsBound>,
    /// Blocks (cores) per rank, if the protocol is multicore.
    pub blocks: Option<Blocks>,
    /// Constraints on the parameters.
    pub requires: Vec<Require>,
    /// Signal arrays (int32 cells in every rank's window).
    pub signals: Vec<Signal>,
    /// Symmetric data windows.
    pub windows: Vec<Buffer>,
    /// Private per-block scratch tiles.
    pub tiles: Vec<Buffer>,
    /// `type T in f32 | f64 | ...;`: the element-type parameter, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elem_param: Option<ElemParam>,
    /// `op O in sum | max;`: the reduction-operator parameter, if declared. When it is, the
    /// header's operator and every `reduce` statement name it (lowering checks), so
    /// [`Protocol::with_op`] sets them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_param: Option<OpParam>,
    /// Per-rank host input arrays of integers.
    pub arrays: Vec<Array>,
    /// The top-level declarations in source order (for printing).
    pub decls: Vec<Decl>,
    /// The protocol body.
    pub body: Block,
    /// The epilogue (runs after the body; resets signals for reuse).
    pub epilogue: Block,
    /// The whole collective.
    pub span: Span,
    /// How the `per call` windows and value signals live: `None` (what a `.coll` says) gives
    /// every call a fresh instance; `Some(k)` gives them `k` instances used in rotation, call
    /// `c` using instance `c % k` — a library's model (it cannot allocate a buffer per call
    /// for ever). Never written in a `.coll`; [`Protocol::with_per_call_rotation`] sets it so
    /// the verifier checks reuse at distance `k`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_call_rotation: Option<u32>,
}

/// A top-level declaration, in source order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Decl {
    /// `ranks`, `param`, `const` or top-level `let`.
    Var(VarId),
    /// `blocks`.
    Blocks,
    /// `require`.
    Require(RequireId),
    /// `calls <= N;`
    Calls,
    /// `signal`.
    Signal(SignalId),
    /// `window`.
    Window(WindowId),
    /// `tile`.
    Tile(TileId),
    /// `array`.
    Array(ArrayId),
    /// `type`.
    Type,
    /// `op`.
    Op,
}

/// The value type of an integer expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ty {
    /// A count, size, index or threshold.
    Int,
    /// A rank in `0..P`.
    Rank,
}

/// A named value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Var {
    /// Its name.
    pub name: String,
    /// Where it comes from.
    pub kind: VarKind,
    /// Its type.
    pub ty: Ty,
    /// Its declaration.
    pub span: Span,
}

/// Where a variable's value comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum VarKind {
    /// The world size, with its inclusive domain.
    World { lo: i64, hi: i64 },
    /// A parameter: an integer in `lo..=hi`, or (for `rank`) a rank in `0..P`.
    Param { domain: Option<(i64, i64)> },
    /// A compile-time constant.
    Const(i64),
    /// A rank-uniform derived value (top-level `let`).
    Derived(Expr),
    /// This rank.
    Me,
    /// The call index: 0 in a rank's first call, then 1, 2, ... (kept by the runtime).
    Call,
    /// This block's index (multicore).
    Block,
    /// A loop variable.
    Loop,
    /// A statement-level `let` (value given by its statement).
    Local,
}

/// `blocks blk in 0..C;`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Blocks {
    /// The block-index variable.
    pub var: VarId,
    /// How many blocks each rank runs.
    pub count: Expr,
}

/// `calls <= N;`
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallsBound {
    /// N (a constant, at least 1).
    pub max: i64,
    /// Where.
    pub span: Span,
}

/// `require cond;`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Require {
    /// The constraint.
    pub cond: Cond,
    /// Where.
    pub span: Span,
}

/// Whether a signal counts credits or carries a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SignalKind {
    /// Credit counter: must be all-zero at exit.
    Credit,
    /// Value cells (`as value`): written with `Set`, never reset.
    Value,
}

/// A signal array declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// Name.
    pub name: String,
    /// Dimension sizes (rank-uniform expressions).
    pub dims: Vec<Expr>,
    /// Credits or values.
    pub kind: SignalKind,
    /// How a value signal lives across calls (`None`: not written, reused).
    /// Credit signals never carry one: they are the one buffer every call reuses.
    #[serde(default)]
    pub lifetime: Option<Lifetime>,
    /// `monotonic`: a credit signal whose cells only grow (epoch counters): never reset,
    /// every wait's threshold grows with the call index by the cell's per-call credit.
    #[serde(default)]
    pub monotonic: bool,
    /// Declaration.
    pub span: Span,
}

/// How a window or a value signal lives across back-to-back calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lifetime {
    /// `reused`: one buffer serves every call; a cross-call race on it is a violation.
    Reused,
    /// `per call`: the caller hands in a fresh buffer for each call.
    PerCall,
}

/// The element type of a window or tile. Only the data statements and the generated code
/// read it: the signal discipline, and so every verification obligation, is the same for
/// every element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum ElemType {
    /// 32-bit IEEE float (`f32`).
    #[default]
    F32,
    /// 64-bit IEEE float (`f64`).
    F64,
    /// 32-bit two's-complement integer (`i32`).
    I32,
    /// 64-bit two's-complement integer (`i64`).
    I64,
}

impl ElemType {
    /// Every element type, in the order the language lists them.
    pub const ALL: [ElemType; 4] = [ElemType::F32, ElemType::F64, ElemType::I32, ElemType::I64];
    /// The keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
        }
    }
    /// Parses the keyword.
    pub fn from_name(s: &str) -> Option<Self> {
        ElemType::ALL.into_iter().find(|t| t.as_str() == s)
    }
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElemType::F32 | ElemType::I32 => 4,
            ElemType::F64 | ElemType::I64 => 8,
        }
    }
    /// The C++ type of an element.
    pub fn cpp(self) -> &'static str {
        match self {
            ElemType::F32 => "float",
            ElemType::F64 => "double",
            ElemType::I32 => "int32_t",
            ElemType::I64 => "int64_t",
        }
    }
    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }
}

/// `type T in f32 | f64;`: the element-type parameter. Buffers declared `T` are
/// [`Buffer::generic`]; lowering gives them the first listed type, and
/// [`Protocol::with_elem`] another listed one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElemParam {
    /// Name.
    pub name: String,
    /// The listed types, in written order (non-empty, distinct).
    pub types: Vec<ElemType>,
    /// Declaration.
    pub span: Span,
}

/// `op O in sum | max;`: the reduction-operator parameter. Lowering gives the header and
/// every `reduce` statement the first listed operator, and [`Protocol::with_op`] another
/// listed one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpParam {
    /// Name.
    pub name: String,
    /// The listed operators, in written order (non-empty, distinct).
    pub ops: Vec<ReduceOp>,
    /// Declaration.
    pub span: Span,
}

/// Sets the operator of every `reduce` statement in `b` (nested blocks included).
fn set_reduce_ops(b: &mut Block, to: ReduceOp) {
    crate::visit::each_stmt_mut(b, &mut |s| {
        if let StmtKind::Reduce { op, .. } = &mut s.kind {
            *op = to;
        }
    });
}

/// A window or tile declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Buffer {
    /// Name.
    pub name: String,
    /// Element type (for a [`Buffer::generic`] buffer: the type parameter's current type).
    #[serde(default)]
    pub elem: ElemType,
    /// Declared with the `type` parameter rather than a scalar type.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generic: bool,
    /// Dimension sizes (rank-uniform expressions).
    pub dims: Vec<Expr>,
    /// How a window lives across calls (`None`: not written, reused; always `None`
    /// for tiles, which are private to one call).
    #[serde(default)]
    pub lifetime: Option<Lifetime>,
    /// Declaration.
    pub span: Span,
}

/// A per-rank host input array of integers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Array {
    /// Name.
    pub name: String,
    /// Dimension sizes.
    pub dims: Vec<Expr>,
    /// Inclusive value domain.
    pub domain: (i64, i64),
    /// Declaration.
    pub span: Span,
}

/// A reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    /// Addition.
    Sum,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Product.
    Prod,
}

impl ReduceOp {
    /// The keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Prod => "prod",
        }
    }
    /// Parses the keyword.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "sum" => ReduceOp::Sum,
            "max" => ReduceOp::Max,
            "min" => ReduceOp::Min,
            "prod" => ReduceOp::Prod,
            _ => return None,
        })
    }
    /// Applies the operator.
    pub fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            ReduceOp::Sum => a + b,
            ReduceOp::Max => a.max(b),
            ReduceOp::Min => a.min(b),
            ReduceOp::Prod => a * b,
        }
    }
}

/// The collective a protocol implements: what its outputs must equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Semantics {
    /// Every rank's `data` becomes the reduction of all ranks' `data`.
    Allreduce { op: ReduceOp, data: WindowId },
    /// Every rank's `data` becomes the root's `data`.
    Broadcast { root: VarId, data: WindowId },
    /// `data` is `[P][m]`; rank r's row r becomes the reduction of all ranks' row r.
    ReduceScatter { op: ReduceOp, data: WindowId },
    /// `target` is `[P][m]`; every rank's row j becomes rank j's `input`.
    Allgather { input: WindowId, target: WindowId },
    /// `input` and `target` are `[P][m]`; rank r's `target` row j becomes rank j's `input` row r.
    AllToAll { input: WindowId, target: WindowId },
    /// As all_to_all with per-destination row counts: rank r's `recv_counts[j]` becomes
    /// min(rank j's `send_counts[r]`, rows per block) and that many rows of block j arrive.
    AllToAllV {
        input: WindowId,
        target: WindowId,
        send_counts: ArrayId,
        recv_counts: SignalId,
        /// The row length in elements when given (`all_to_all_v(.., ROW)`), for windows
        /// declared with flat blocks (`[P][R * m]`); else the windows' last dimension.
        row: Option<VarId>,
    },
    /// No data; no process leaves a call before the processes it synchronises with have
    /// entered it (`meaning::barrier_peers`).
    Barrier {
        /// `barrier(blk)`: the `blocks` variable of a per-lane barrier (block b of every rank
        /// synchronises with block b of every other rank only); `None` (`barrier()`): every
        /// block of every rank with every block of every other rank.
        lane: Option<VarId>,
    },
    /// The root's `data` becomes the reduction of all ranks' `data` (other ranks' `data`
    /// unspecified after the call).
    Reduce {
        op: ReduceOp,
        root: VarId,
        data: WindowId,
    },
    /// The root's `target` is `[P][m]`: its row j becomes rank j's `input` (m elements);
    /// other ranks' `target` unspecified.
    Gather {
        root: VarId,
        input: WindowId,
        target: WindowId,
    },
    /// The root's `input` is `[P][m]`: every rank r's `target` (m elements) becomes the
    /// root's row r.
    Scatter {
        root: VarId,
        input: WindowId,
        target: WindowId,
    },
}

impl Semantics {
    /// The kind as written in the header (`allreduce`, `reduce`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Semantics::Allreduce { .. } => "allreduce",
            Semantics::Broadcast { .. } => "broadcast",
            Semantics::ReduceScatter { .. } => "reduce_scatter",
            Semantics::Allgather { .. } => "allgather",
            Semantics::AllToAll { .. } => "all_to_all",
            Semantics::AllToAllV { .. } => "all_to_all_v",
            Semantics::Barrier { .. } => "barrier",
            Semantics::Reduce { .. } => "reduce",
            Semantics::Gather { .. } => "gather",
            Semantics::Scatter { .. } => "scatter",
        }
    }

    /// The `param NAME: rank` that names the root, for the rooted kinds.
    pub fn root(&self) -> Option<VarId> {
        match self {
            Semantics::Broadcast { root, .. }
            | Semantics::Reduce { root, .. }
            | Semantics::Gather { root, .. }
            | Semantics::Scatter { root, .. } => Some(*root),
            _ => None,
        }
    }

    /// Whether the kind is a barrier (`barrier()` or `barrier(blk)`).
    pub fn is_barrier(&self) -> bool {
        matches!(self, Semantics::Barrier { .. })
    }
}

/// A block of statements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// Braces included.
    pub span: Span,
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it was written.
    pub span: Span,
}

/// How a notify changes its cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NotifyOp {
    /// cell += value
    AtomicAdd,
    /// cell = value
    Set,
}

/// The statement kinds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum StmtKind {
    /// `let v = e;` (immutable)
    Let { var: VarId, value: Expr },
    /// Adds to or sets a cell; on rank `target`, or locally when `target` is `None`.
    Notify {
        signal: SignalId,
        index: Vec<Expr>,
        target: Option<Expr>,
        op: NotifyOp,
        value: Expr,
    },
    /// Blocks until the local cell satisfies `cell cmp threshold`.
    Wait {
        signal: SignalId,
        index: Vec<Expr>,
        cmp: CmpOp,
        threshold: Expr,
    },
    /// Local copy.
    Copy { dst: Region, src: Region },
    /// Remote read: local `dst` <- `src` on rank `from`.
    Get {
        dst: Region,
        src: Region,
        from: Expr,
    },
    /// Remote write: `dst` on rank `to` <- local `src`.
    Put { dst: Region, to: Expr, src: Region },
    /// `dst = dst op src`, `src` on rank `from` (remote) or local; or, with `to`, `dst` a
    /// window on rank `to` (a reduction into a peer's window, atomic per element; `from` is
    /// then `None`).
    Reduce {
        op: ReduceOp,
        dst: Region,
        src: Region,
        from: Option<Expr>,
        to: Option<Expr>,
    },
    /// Orders all earlier memory operations of this block before all later ones.
    Fence,
    /// A loop.
    For {
        var: VarId,
        range: Range,
        body: Block,
    },
    /// A conditional.
    If {
        cond: Cond,
        then_block: Block,
        else_block: Option<Block>,
    },
    /// Early return when `cond` holds.
    Return { cond: Cond },
}

/// Loop ranges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Range {
    /// Every rank but `me`, ascending.
    Peers,
    /// Every rank, ascending.
    Ranks,
    /// `lo, lo+step, ... < hi`; `step` is positive.
    Span { lo: Expr, hi: Expr, step: Expr },
    /// A power-of-two or reversed numeric range (`lo..hi step *f`, `(...).rev()`).
    Seq(Seq),
}

/// `lo..hi step s` or `lo..hi step *s` (geometric: `lo, lo*s, lo*s*s, ... < hi`, with
/// `lo >= 1` and `s >= 2`), visited last to first when `rev`. Its values, in order, are
/// [`crate::eval::SeqValues`]; an ascending additive range without `rev` is a
/// [`Range::Span`] instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seq {
    /// The first value of the ascending sequence.
    pub lo: Expr,
    /// The exclusive bound of the ascending sequence.
    pub hi: Expr,
    /// The step (added) or factor (multiplied, when `geometric`).
    pub step: Expr,
    /// The step multiplies.
    pub geometric: bool,
    /// Visited last to first.
    pub rev: bool,
}

/// Which buffer a region lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BufferRef {
    /// A symmetric window.
    Window(WindowId),
    /// A private tile.
    Tile(TileId),
}

/// `buf[i]...[lo .. hi]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    /// The buffer.
    pub buffer: BufferRef,
    /// Indices of all dimensions but the last.
    pub index: Vec<Expr>,
    /// Slice start in the last dimension.
    pub lo: Expr,
    /// Slice end (exclusive) in the last dimension.
    pub hi: Expr,
}

/// A boolean condition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Cond {
    /// Constant.
    Bool(bool),
    /// Comparison.
    Cmp(CmpOp, Expr, Expr),
    /// Negation.
    Not(Box<Cond>),
    /// Conjunction.
    And(Vec<Cond>),
    /// Disjunction.
    Or(Vec<Cond>),
}

/// An integer expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Expr {
    /// Literal.
    Int(i64),
    /// A variable.
    Var(VarId),
    /// An element of a host array on this rank.
    Array(ArrayId, Vec<Expr>),
    /// `-e`
    Neg(Box<Expr>),
    /// `a op b`
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `ceil(a / b)`
    CeilDiv(Box<Expr>, Box<Expr>),
    /// `min(a, b)`
    Min(Box<Expr>, Box<Expr>),
    /// `max(a, b)`
    Max(Box<Expr>, Box<Expr>),
    /// `rank(e)`: an integer used as a rank (taken mod nothing; must be in `0..P`).
    Rank(Box<Expr>),
    /// `log2(e)`: the exponent of `e`, which must be a power of two (`1, 2, 4, ...`).
    Log2(Box<Expr>),
    /// `pow2(e)`: `1 << e`, `e` in `0..=62`.
    Pow2(Box<Expr>),
}

impl Expr {
    /// Visits every variable the expression reads, left to right ([`crate::visit`]'s walk).
    pub fn for_each_var(&self, f: &mut dyn FnMut(VarId)) {
        crate::visit::Visit::visit_expr(&mut crate::visit::Reads(f), self);
    }
    /// The literal value, if the expression is a literal (possibly negated).
    pub fn as_const(&self) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            Expr::Neg(a) => a.as_const().map(|v| -v),
            _ => None,
        }
    }
}

impl Cond {
    /// Visits every variable the condition reads, left to right ([`crate::visit`]'s walk).
    pub fn for_each_var(&self, f: &mut dyn FnMut(VarId)) {
        crate::visit::Visit::visit_cond(&mut crate::visit::Reads(f), self);
    }
}

impl Protocol {
    /// Whether window `w` is a fresh buffer for each call (`per call`).
    pub fn window_per_call(&self, w: WindowId) -> bool {
        self.windows[w].lifetime == Some(Lifetime::PerCall)
    }
    /// Whether signal `s` is a `monotonic` (epoch) counter.
    pub fn signal_monotonic(&self, s: SignalId) -> bool {
        self.signals[s].monotonic
    }
    /// Whether signal `s` has a fresh instance for each call (a `per call` value signal).
    pub fn signal_per_call(&self, s: SignalId) -> bool {
        self.signals[s].lifetime == Some(Lifetime::PerCall)
    }
    /// This protocol with its `per call` windows and value signals held as `k` instances
    /// used in rotation (call `c` uses instance `c % k`; `k >= 1`): what a library that
    /// rotates `k` buffers runs, to be verified before it is packaged.
    pub fn with_per_call_rotation(&self, k: u32) -> Protocol {
        Protocol {
            per_call_rotation: Some(k.max(1)),
            ..self.clone()
        }
    }
    /// This protocol with its element-type parameter set to `t` (every generic buffer's
    /// element type), or `None` when `t` is not one the protocol declares: a type that is
    /// not declared is refused, never converted. A protocol without a `type` parameter
    /// takes only the type its buffers already have (and every type when it has no buffers).
    pub fn with_elem(&self, t: ElemType) -> Option<Protocol> {
        let Some(param) = &self.elem_param else {
            let all = self.windows.iter().chain(&self.tiles);
            return all.clone().all(|b| b.elem == t).then(|| self.clone());
        };
        if !param.types.contains(&t) {
            return None;
        }
        let mut p = self.clone();
        for b in p.windows.iter_mut().chain(p.tiles.iter_mut()) {
            if b.generic {
                b.elem = t;
            }
        }
        Some(p)
    }
    /// The element types the protocol can be emitted for: the `type` parameter's, else the
    /// one its buffers share (every type for a protocol without data, such as a barrier).
    pub fn elem_types(&self) -> Vec<ElemType> {
        match &self.elem_param {
            Some(param) => param.types.clone(),
            None => ElemType::ALL
                .into_iter()
                .filter(|t| self.with_elem(*t).is_some())
                .collect(),
        }
    }
    /// The header's reduction operator (`None` for a kind that does not reduce).
    pub fn reduce_op(&self) -> Option<ReduceOp> {
        match self.semantics {
            Semantics::Allreduce { op, .. }
            | Semantics::ReduceScatter { op, .. }
            | Semantics::Reduce { op, .. } => Some(op),
            _ => None,
        }
    }
    /// This protocol with its operator parameter set to `op` (the header's operator and
    /// every `reduce` statement's), or `None` when `op` is not one the protocol declares: an
    /// operator that is not declared is refused, never substituted. A protocol without an
    /// `op` parameter takes only its header's operator.
    pub fn with_op(&self, op: ReduceOp) -> Option<Protocol> {
        let Some(param) = &self.op_param else {
            return (self.reduce_op() == Some(op)).then(|| self.clone());
        };
        if !param.ops.contains(&op) {
            return None;
        }
        let mut p = self.clone();
        match &mut p.semantics {
            Semantics::Allreduce { op: o, .. }
            | Semantics::ReduceScatter { op: o, .. }
            | Semantics::Reduce { op: o, .. } => *o = op,
            _ => {}
        }
        set_reduce_ops(&mut p.body, op);
        set_reduce_ops(&mut p.epilogue, op);
        Some(p)
    }
    /// The operators the protocol can be emitted for: the `op` parameter's, else the
    /// header's (none for a kind that does not reduce).
    pub fn reduce_ops(&self) -> Vec<ReduceOp> {
        match &self.op_param {
            Some(param) => param.ops.clone(),
            None => self.reduce_op().into_iter().collect(),
        }
    }
    /// This protocol with its operator parameter fixed at its current operator (no `op`
    /// declaration; the header and every `reduce` name that operator): the instance a
    /// backend emits, as it reads back from the emitted code.
    pub fn op_instance(&self) -> Protocol {
        let mut p = self.clone();
        p.op_param = None;
        p.decls.retain(|d| *d != Decl::Op);
        p
    }
    /// The instance the verifier and the simulator check: the operator parameter at its
    /// strictest listed operator. A sum or a product must see every contribution exactly
    /// once (a multiset), a maximum or a minimum at least once (a set), so a protocol
    /// correct for `sum` is correct for `max` and `min`; the signal discipline does not
    /// depend on the operator. Without an `op` parameter, the protocol itself.
    pub fn for_verification(&self) -> Protocol {
        let strict = self.op_param.as_ref().and_then(|param| {
            let multiset = param
                .ops
                .iter()
                .find(|o| matches!(o, ReduceOp::Sum | ReduceOp::Prod));
            multiset.or(param.ops.first()).copied()
        });
        strict
            .and_then(|o| self.with_op(o))
            .unwrap_or_else(|| self.clone())
    }
    /// The element type of a buffer.
    pub fn buffer_elem(&self, b: BufferRef) -> ElemType {
        match b {
            BufferRef::Window(w) => self.windows[w].elem,
            BufferRef::Tile(t) => self.tiles[t].elem,
        }
    }
    /// This protocol with every window and every value signal declared `l`: the same
    /// kernel under the other lifetime contract (tests and benches compare both).
    pub fn with_every_lifetime(&self, l: Lifetime) -> Protocol {
        let mut p = self.clone();
        for w in p.windows.iter_mut() {
            w.lifetime = Some(l);
        }
        for s in p.signals.iter_mut().filter(|s| s.kind == SignalKind::Value) {
            s.lifetime = Some(l);
        }
        p
    }
    /// The name of a variable.
    pub fn var_name(&self, v: VarId) -> &str {
        &self.vars[v].name
    }
    /// The dimensions of a buffer.
    pub fn buffer_dims(&self, b: BufferRef) -> &[Expr] {
        match b {
            BufferRef::Window(w) => &self.windows[w].dims,
            BufferRef::Tile(t) => &self.tiles[t].dims,
        }
    }
    /// The name of a buffer.
    pub fn buffer_name(&self, b: BufferRef) -> &str {
        match b {
            BufferRef::Window(w) => &self.windows[w].name,
            BufferRef::Tile(t) => &self.tiles[t].name,
        }
    }
    /// Parameters the user sets (world size first, then `param`s), in declaration order.
    pub fn inputs(&self) -> Vec<VarId> {
        let mut v = vec![self.world];
        v.extend(
            self.vars
                .iter()
                .enumerate()
                .filter(|(_, x)| matches!(x.kind, VarKind::Param { .. }))
                .map(|(i, _)| VarId::new(i)),
        );
        v
    }
}
