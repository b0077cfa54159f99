//! The abstract syntax tree of a `.coll` file. Every node carries its span.
//! The AST is what the parser saw; names are not resolved and nothing is typed.

use crate::diag::Span;

/// An identifier with its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it was written.
    pub span: Span,
}

/// How a window or a value signal lives across back-to-back calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// `reused`: one buffer serves every call (the default).
    Reused,
    /// `per call`: the caller hands in a fresh buffer for each call.
    PerCall,
}

/// A whole file: one collective.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// The collective's name.
    pub name: Ident,
    /// Which collective it implements, e.g. `allreduce(sum, data)`.
    pub semantics: Semantics,
    /// Declarations, the body and the epilogue, in source order.
    pub items: Vec<Item>,
    /// The whole collective.
    pub span: Span,
}

/// `kind(arg, ...)` after the collective's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Semantics {
    /// `allreduce`, `broadcast`, ...
    pub kind: Ident,
    /// Operator, root and buffer names.
    pub args: Vec<Ident>,
    /// The whole clause.
    pub span: Span,
}

/// A top-level item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// What it is.
    pub kind: ItemKind,
    /// Where.
    pub span: Span,
}

/// The kinds of top-level items.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemKind {
    /// `ranks P in 1..=16;` or `ranks P >= 1;` — the world size and its domain.
    Ranks { name: Ident, domain: RankDomain },
    /// `param root: rank;` or `param n: int in 1..=4096;`
    Param { name: Ident, ty: ParamType },
    /// `const TILE = 256;`
    Const { name: Ident, value: Expr },
    /// `let T = ceil(n / TILE);` — a derived, rank-uniform value.
    Let { name: Ident, value: Expr },
    /// `blocks blk in 0..C;` — each rank runs this many blocks (cores).
    Blocks { name: Ident, lo: Expr, hi: Expr },
    /// `signal sig[P];` or `signal counts[P] as value per call;`
    Signal {
        name: Ident,
        dims: Vec<Expr>,
        value: bool,
        /// `monotonic` (an epoch counter, never reset), where written.
        monotonic: Option<Span>,
        /// Every lifetime written (the front end accepts at most one).
        lifetimes: Vec<(Lifetime, Span)>,
    },
    /// `window data: f32[n] per call;` — a symmetric data buffer.
    Window {
        name: Ident,
        /// Its element type as written (`f32`, `f64`, `i32`, `i64` or the `type` parameter).
        elem: Ident,
        dims: Vec<Expr>,
        /// Every lifetime written (the front end accepts at most one).
        lifetimes: Vec<(Lifetime, Span)>,
    },
    /// `tile acc: f32[256];` — private scratch memory of one block.
    Tile {
        name: Ident,
        /// Its element type as written.
        elem: Ident,
        dims: Vec<Expr>,
    },
    /// `type T in f32 | f64;` — the element-type parameter and the types it ranges over.
    Type { name: Ident, types: Vec<Ident> },
    /// `op O in sum | max;` — the reduction-operator parameter and the operators it ranges over.
    Op { name: Ident, ops: Vec<Ident> },
    /// `array send_counts: int[P] in 0..=R;` — per-rank host input values.
    Array {
        name: Ident,
        dims: Vec<Expr>,
        domain: Domain,
    },
    /// `require n % P == 0;` — a constraint on the parameters.
    Require(Cond),
    /// `calls <= 1000000;` — the most back-to-back calls per rank the protocol promises.
    Calls(Expr),
    /// `body { ... }`
    Body(Block),
    /// `epilogue { ... }`
    Epilogue(Block),
}

/// The type of a parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamType {
    /// A rank in `0..P`.
    Rank(Span),
    /// An integer in an inclusive domain.
    Int(Domain),
}

/// The world size's domain as written.
#[derive(Debug, Clone, PartialEq)]
pub enum RankDomain {
    /// `in LO..=HI`.
    Range(Domain),
    /// `>= LO`: from `LO` up to the language's largest world size.
    AtLeast {
        /// Lowest value.
        lo: Expr,
        /// `>= LO`.
        span: Span,
    },
}

impl RankDomain {
    /// The whole domain as written.
    pub fn span(&self) -> Span {
        match self {
            RankDomain::Range(d) => d.span,
            RankDomain::AtLeast { span, .. } => *span,
        }
    }
}

/// An inclusive range `lo..=hi`.
#[derive(Debug, Clone, PartialEq)]
pub struct Domain {
    /// Lowest value.
    pub lo: Expr,
    /// Highest value.
    pub hi: Expr,
    /// The whole range.
    pub span: Span,
}

/// A `{ ... }` block of statements.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The statements in order.
    pub stmts: Vec<Stmt>,
    /// Braces included.
    pub span: Span,
}

impl File {
    /// The body and the epilogue, in source order.
    pub fn code(&self) -> impl Iterator<Item = &Block> + '_ {
        self.items.iter().filter_map(|item| match &item.kind {
            ItemKind::Body(b) | ItemKind::Epilogue(b) => Some(b),
            _ => None,
        })
    }
}

impl Block {
    /// Calls `f` with this block, then with every block nested in it (loop bodies and
    /// branches), in source order, a block before the blocks nested in its statements.
    pub fn each_block<'a>(&'a self, f: &mut dyn FnMut(&'a Block)) {
        f(self);
        for s in &self.stmts {
            s.nested().for_each(|b| b.each_block(f));
        }
    }
    /// Calls `f` with every statement of this block, nested ones included, in source
    /// order (a statement before the statements nested in it).
    pub fn each_stmt<'a>(&'a self, f: &mut dyn FnMut(&'a Stmt)) {
        for s in &self.stmts {
            f(s);
            s.nested().for_each(|b| b.each_stmt(f));
        }
    }
}

impl Stmt {
    /// The blocks written directly in this statement: a loop's body, an `if`'s branches.
    pub fn nested(&self) -> impl Iterator<Item = &Block> + '_ {
        let (a, b) = match &self.kind {
            StmtKind::For { body, .. } => (Some(body), None),
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => (Some(then_block), else_block.as_ref()),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }
    /// Whether this statement, or one nested in it at any depth, satisfies `f`.
    pub fn any_nested(&self, f: &dyn Fn(&Stmt) -> bool) -> bool {
        f(self)
            || self
                .nested()
                .any(|b| b.stmts.iter().any(|s| s.any_nested(f)))
    }
}

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// How a notify changes the cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyOpAst {
    /// `+= v` (AtomicAdd v)
    Add,
    /// `-= v` (AtomicAdd -v)
    Sub,
    /// `= v` (Set v)
    Set,
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CmpOp {
    /// `>=`
    Ge,
    /// `<=`
    Le,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `<`
    Lt,
}

impl CmpOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Ge => ">=",
            CmpOp::Le => "<=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Gt => ">",
            CmpOp::Lt => "<",
        }
    }
    /// Applies the comparison.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Ge => a >= b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Gt => a > b,
            CmpOp::Lt => a < b,
        }
    }
}

/// The statement kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    /// `let len = min(TILE, n - base);`
    Let { name: Ident, value: Expr },
    /// `notify sig[me] @ p += 1;` (remote) or `notify sig[p] -= T;` (local)
    Notify {
        cell: CellRef,
        target: Option<Expr>,
        op: NotifyOpAst,
        value: Expr,
    },
    /// `wait sig[p] >= t + 1;`
    Wait {
        cell: CellRef,
        target: Option<Expr>,
        cmp: CmpOp,
        threshold: Expr,
    },
    /// `copy dst[..] <- src[..];` — local copy
    Copy { dst: Region, src: Region },
    /// `get dst[..] <- src[..] @ peer;` — remote read into local memory
    Get {
        dst: Region,
        src: Region,
        from: Expr,
    },
    /// `put dst[..] @ peer <- src[..];` — remote write from local memory
    Put { dst: Region, to: Expr, src: Region },
    /// `reduce sum acc[..] <- src[..] @ peer;` — acc = acc op src; `reduce sum dst[..] @ peer
    /// <- src[..];` — the same into `dst` on `peer` (atomic per element)
    Reduce {
        op: Ident,
        dst: Region,
        src: Region,
        from: Option<Expr>,
        to: Option<Expr>,
    },
    /// `fence;` — all earlier memory operations complete before later ones start
    Fence,
    /// `for v in range { ... }`
    For {
        var: Ident,
        range: LoopRange,
        body: Block,
    },
    /// `if cond { ... } else { ... }`
    If {
        cond: Cond,
        then_block: Block,
        else_block: Option<Block>,
    },
    /// `return if cond;` — an early-return guard
    Return { cond: Cond },
}

/// A signal cell reference `sig[i][j]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRef {
    /// The signal.
    pub name: Ident,
    /// One expression per dimension.
    pub index: Vec<Expr>,
    /// The whole reference.
    pub span: Span,
}

/// A data region `buf[i][lo .. hi]`: leading indices, then a slice of the last dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    /// The window or tile.
    pub name: Ident,
    /// Indices of the leading dimensions.
    pub index: Vec<Expr>,
    /// Slice start (default 0).
    pub lo: Option<Expr>,
    /// Slice end, exclusive (default: the dimension's size).
    pub hi: Option<Expr>,
    /// The whole reference.
    pub span: Span,
}

/// What a `for` loop ranges over.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one per loop; boxing would only add indirection
pub enum LoopRange {
    /// `peers`: every rank except `me`, in increasing order.
    Peers(Span),
    /// `ranks`: every rank, `me` included.
    Ranks(Span),
    /// `lo..hi`, `lo..hi step s` or `lo..hi step *f`, possibly `(...).rev()`.
    Span {
        lo: Expr,
        hi: Expr,
        step: Option<Expr>,
        /// `step *f`: the step multiplies (lo, lo*f, lo*f*f, ... < hi).
        geometric: bool,
        /// `(...).rev()`: the same values, last to first.
        rev: bool,
        span: Span,
    },
}

/// A boolean condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Cond {
    /// Its shape.
    pub kind: CondKind,
    /// Where.
    pub span: Span,
}

/// The condition kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum CondKind {
    /// `true` / `false`
    Bool(bool),
    /// `a >= b`
    Cmp(CmpOp, Expr, Expr),
    /// `!c`
    Not(Box<Cond>),
    /// `a && b && ...`
    And(Vec<Cond>),
    /// `a || b || ...`
    Or(Vec<Cond>),
}

/// An integer expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// Its shape.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// The binding strength of a prefix `-` (tighter than every [`BinOp`]).
pub const NEG_PRECEDENCE: u8 = 7;

/// Binary arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (floor division)
    Div,
    /// `%` (Euclidean remainder, never negative)
    Mod,
    /// `<<` (shift left; the shift amount must be in `0..=62`)
    Shl,
    /// `>>` (arithmetic shift right, i.e. floor division by a power of two)
    Shr,
    /// `&` (bitwise and, two's complement)
    And,
    /// `^` (bitwise exclusive or)
    Xor,
    /// `|` (bitwise or)
    Or,
}

impl BinOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::And => "&",
            BinOp::Xor => "^",
            BinOp::Or => "|",
        }
    }
    /// Binding strength (higher binds tighter), as in C and Rust: `|` < `^` < `&` <
    /// shifts < `+ -` < `* / %`; a prefix `-` binds tighter than all ([`NEG_PRECEDENCE`]).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::Xor => 2,
            BinOp::And => 3,
            BinOp::Shl | BinOp::Shr => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Mod => 6,
        }
    }
    /// Whether the operator works on bits (`<< >> & ^ |`).
    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinOp::Shl | BinOp::Shr | BinOp::And | BinOp::Xor | BinOp::Or
        )
    }
}

/// The expression kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// `42`
    Int(i64),
    /// `n`, `me`, `p`
    Name(Ident),
    /// `send_counts[dest]` — an element of a host array
    Indexed(Ident, Vec<Expr>),
    /// `-e`
    Neg(Box<Expr>),
    /// `a + b` and friends
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `ceil(a / b)`, `min(a, b)`, `max(a, b)`, `rank(e)`
    Call(Ident, Vec<Expr>),
    /// `(e)` — kept so spans and the formatter stay faithful
    Paren(Box<Expr>),
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE: &str = "collective c: barrier() {
        ranks P in 1..=8;
        signal s[P];
        body {
            for q in peers { notify s[me] @ q += 1; }
            if me == 0 { wait s[0] >= 1; } else { for j in 0..2 { fence; } }
        }
        epilogue { notify s[me] -= P - 1; }
    }";

    fn kind(s: &Stmt) -> &'static str {
        match s.kind {
            StmtKind::Notify { .. } => "notify",
            StmtKind::Wait { .. } => "wait",
            StmtKind::Fence => "fence",
            StmtKind::For { .. } => "for",
            StmtKind::If { .. } => "if",
            _ => "other",
        }
    }

    #[test]
    fn the_walk_meets_every_block_and_statement_in_source_order() {
        let file = crate::parse(CASE).expect("the case parses");
        let mut stmts = Vec::new();
        let mut blocks = 0;
        for b in file.code() {
            b.each_stmt(&mut |s| stmts.push(kind(s)));
            b.each_block(&mut |_| blocks += 1);
        }
        let want = ["for", "notify", "if", "wait", "for", "fence", "notify"];
        assert_eq!(stmts, want);
        // body, the peers loop, both branches, the inner loop, the epilogue
        assert_eq!(blocks, 6);
        let body = file.code().next().expect("a body");
        let fence = |s: &Stmt| matches!(s.kind, StmtKind::Fence);
        let nested: Vec<bool> = body.stmts.iter().map(|s| s.any_nested(&fence)).collect();
        assert_eq!(nested, [false, true]);
        assert_eq!(body.stmts[1].nested().count(), 2);
    }
}
