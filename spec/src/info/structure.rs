//! The loops and the signal cells of a protocol ([`super::ProtocolInfo::loops`],
//! [`super::ProtocolInfo::cells`]): where each `for` is and what it iterates, and which
//! statement notifies, sets or waits on which cell, gathered by one walk of the body and
//! the epilogue.

use crate::eval::{eval, Env, SeqValues};
use crate::ir::{CmpOp, Cond, Expr, NotifyOp, Protocol, Range, SignalId, Stmt, StmtKind, VarId};
use crate::visit::{self, Visit};
use collc_grammar::Span;

/// A `for` loop of the body or the epilogue.
#[derive(Debug, Clone, PartialEq)]
pub struct Loop {
    /// Its variable.
    pub var: VarId,
    /// What it iterates: its kind (`peers`, `ranks`, a span, a power-of-two or reversed
    /// sequence) and its bounds.
    pub range: Range,
    /// The `for` statement.
    pub span: Span,
    /// In the epilogue (else the body).
    pub epilogue: bool,
    /// The loops around it, outermost first (indices into
    /// [`super::ProtocolInfo::loops`]); its depth is their number.
    pub enclosing: Vec<usize>,
    /// Its trip count.
    pub trip: Trip,
}

/// How many times a loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trip {
    /// The same for every parameter value: its bounds read only literals, constants and
    /// top-level `let`s of constants.
    Literal(i64),
    /// It depends on the world size, a parameter, the rank, the block or a statement `let`.
    Symbolic,
}

/// What a statement does to a cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Access {
    /// `notify ... += value` (`-=` is `+=` of a negation).
    Add(Expr),
    /// `notify ... = value`.
    Set(Expr),
    /// `wait ... cmp threshold`.
    Wait(CmpOp, Expr),
}

/// A statement that names a signal cell: a notify or a wait.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The signal.
    pub signal: SignalId,
    /// The cell's index, one expression per dimension.
    pub index: Vec<Expr>,
    /// The rank whose cell a notify changes (`@ target`); `None`: the statement's own
    /// rank (a wait, a local notify).
    pub target: Option<Expr>,
    /// Who changes or reads it, and how.
    pub access: Access,
    /// The statement.
    pub span: Span,
    /// In the epilogue (else the body).
    pub epilogue: bool,
    /// The loops around it, outermost first (indices into
    /// [`super::ProtocolInfo::loops`]).
    pub loops: Vec<usize>,
    /// Under an `if` (taken only when its condition holds).
    pub conditional: bool,
}

impl Cell {
    /// The rank that holds the cell: the target, else `me`.
    pub fn owner(&self, me: VarId) -> Expr {
        self.target.clone().unwrap_or(Expr::Var(me))
    }
    /// Whether it is a wait.
    pub fn is_wait(&self) -> bool {
        matches!(self.access, Access::Wait(..))
    }
    /// The index when every coordinate is a literal (`s[0][3]`), else `None` (it reads a
    /// variable).
    pub fn literal_index(&self) -> Option<Vec<i64>> {
        self.index.iter().map(Expr::as_const).collect()
    }
}

/// The loops and cells of the body and the epilogue of `p`, in program order.
pub(super) fn of(p: &Protocol) -> (Vec<Loop>, Vec<Cell>) {
    let mut env = Env::new(p);
    env.set_top_level(p);
    let mut walk = Structure {
        p,
        env,
        epilogue: false,
        stack: Vec::new(),
        ifs: 0,
        loops: Vec::new(),
        cells: Vec::new(),
    };
    walk.visit_block(&p.body);
    walk.epilogue = true;
    walk.visit_block(&p.epilogue);
    (walk.loops, walk.cells)
}

/// The walk of [`of`]: the loops it is in and the number of `if`s around it.
struct Structure<'p> {
    p: &'p Protocol,
    /// The constants and the top-level `let`s that only read constants.
    env: Env,
    epilogue: bool,
    stack: Vec<usize>,
    ifs: usize,
    loops: Vec<Loop>,
    cells: Vec<Cell>,
}

impl Structure<'_> {
    fn trip(&self, range: &Range) -> Trip {
        let val = |e: &Expr| eval(self.p, e, &self.env).ok();
        let (lo, hi, step, geometric, rev) = match range {
            Range::Peers | Range::Ranks => return Trip::Symbolic,
            Range::Span { lo, hi, step } => (lo, hi, step, false, false),
            Range::Seq(q) => (&q.lo, &q.hi, &q.step, q.geometric, q.rev),
        };
        match (val(lo), val(hi), val(step)) {
            (Some(lo), Some(hi), Some(step)) => SeqValues::new(lo, hi, step, geometric, rev)
                .map_or(Trip::Symbolic, |v| Trip::Literal(v.len())),
            _ => Trip::Symbolic,
        }
    }

    fn cell(&mut self, s: &Stmt) {
        let (signal, index, target, access) = match &s.kind {
            StmtKind::Notify {
                signal,
                index,
                target,
                op,
                value,
            } => {
                let access = match op {
                    NotifyOp::AtomicAdd => Access::Add(value.clone()),
                    NotifyOp::Set => Access::Set(value.clone()),
                };
                (*signal, index, target.clone(), access)
            }
            StmtKind::Wait {
                signal,
                index,
                cmp,
                threshold,
            } => (*signal, index, None, Access::Wait(*cmp, threshold.clone())),
            _ => return,
        };
        self.cells.push(Cell {
            signal,
            index: index.clone(),
            target,
            access,
            span: s.span,
            epilogue: self.epilogue,
            loops: self.stack.clone(),
            conditional: self.ifs > 0,
        });
    }
}

impl Visit for Structure<'_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::For { var, range, body } => {
                self.loops.push(Loop {
                    var: *var,
                    range: range.clone(),
                    span: s.span,
                    epilogue: self.epilogue,
                    enclosing: self.stack.clone(),
                    trip: self.trip(range),
                });
                self.stack.push(self.loops.len() - 1);
                self.visit_block(body);
                self.stack.pop();
            }
            StmtKind::If { .. } => {
                self.ifs += 1;
                visit::walk_stmt(self, s);
                self.ifs -= 1;
            }
            _ => self.cell(s),
        }
    }
    // Only statements matter: no expression or condition is looked into.
    fn visit_cond(&mut self, _: &Cond) {}
}
