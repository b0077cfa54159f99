//! The range obligations of a validated protocol, decided for every value of
//! the declared domains: every signal-cell index and region index lies in its
//! dimension, every slice satisfies `0 <= lo <= hi <= size`, and every rank
//! expression after `@` lies in `0..P`. Lowering checks the constant cases;
//! this module the symbolic ones.
//!
//! Each obligation is first tried by inspection (a rank variable indexing a
//! dimension `P`, a whole-row slice); the rest go to Z3 as one query each: the
//! negated bound under the declared domains, the `require`s, the definitions
//! of the `let`s and loop variables it reads and the enclosing `if`
//! conditions and early returns. Unsat is a proof; a model is a
//! counterexample (minimised, reported with the parameter values that break
//! the bound); anything else is reported as not proved, naming the form.

mod bits;
mod encode;
mod lemma;
mod memo;
mod obligation;
mod solve;

use collc_grammar::{ast, Diagnostic, Span};
use collc_spec::ir::{Block, Cond, Expr, Protocol, Region, StmtKind};
use encode::Defs;
use obligation::{Goal, Obligation};

/// Z3's deterministic resource limit of one range query (`rlimit` units: the same
/// verdict whatever the machine's load); an obligation Z3 does not decide within it is
/// reported as not proved.
pub const QUERY_RLIMIT: u32 = crate::engine::smt::QUERY_RLIMIT;

/// The resource limit of one bisection step of the smallest-counterexample search.
pub const MINIMISE_RLIMIT: u32 = crate::engine::smt::QUERY_RLIMIT / 4;

/// Decides every range obligation of `p` (lowered from `file`; `info` its facts): errors
/// for bounds that some value of the domains breaks, warnings for bounds that could not be
/// decided. Within the planner's budget of Z3 resource units (`range_budget_units`: the
/// bounds left when it is spent are reported together as not checked, the same whatever
/// the machine's load).
pub fn check(
    p: &Protocol,
    info: &collc_spec::info::ProtocolInfo,
    file: &ast::File,
) -> Vec<Diagnostic> {
    let defs = Defs::of(info);
    let mut w = Walk {
        p,
        conds: Vec::new(),
        out: Vec::new(),
    };
    // Top-level `let`s and dimensions: shift amounts and `log2` arguments.
    let mut top = Vec::new();
    for v in &p.vars {
        if let collc_spec::ir::VarKind::Derived(e) = &v.kind {
            let mut gs = Vec::new();
            bits::of_expr(e, &mut gs);
            top.extend(gs.into_iter().map(|g| (g, v.span)));
        }
    }
    for (g, span) in top {
        w.push(g, span);
    }
    let (body, epilogue) = ast_blocks(file);
    let guards = w.block(&p.body, body);
    w.conds.extend(guards);
    w.block(&p.epilogue, epilogue);
    let context = memo::context(p, &defs);
    let mut solver = solve::Solver::new(p, &defs).with_verdicts(memo::take(&context));
    // The planner's budget of Z3 resource units (`range_budget_units`), not the clock:
    // the bounds left when it is spent, the same whatever the load, are reported together
    // as not checked, and say so.
    let budget = crate::planning::TABLE.range_budget_units;
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for o in &w.out {
        if solver.obvious(&o.goal) {
            continue;
        }
        if solver.spent() >= budget {
            skipped.push(o.span);
            continue;
        }
        if let Some(v) = solver.decide(o) {
            out.push(obligation::diagnostic(p, o, &v));
        }
    }
    memo::keep(context, solver.into_verdicts());
    if let Some(first) = skipped.first() {
        out.push(obligation::not_checked(*first, skipped.len()));
    }
    out
}

/// The body and epilogue blocks of the AST.
fn ast_blocks(file: &ast::File) -> (Option<&ast::Block>, Option<&ast::Block>) {
    let mut body = None;
    let mut epilogue = None;
    for item in &file.items {
        match &item.kind {
            ast::ItemKind::Body(b) => body = Some(b),
            ast::ItemKind::Epilogue(b) => epilogue = Some(b),
            _ => {}
        }
    }
    (body, epilogue)
}

/// Walks the IR and the AST it was lowered from side by side (lowering keeps
/// every statement, in order), collecting obligations with the spans of the
/// expressions they are about.
struct Walk<'a> {
    p: &'a Protocol,
    /// The path: conditions that hold (`true`) or fail (`false`) here.
    conds: Vec<(Cond, bool)>,
    out: Vec<Obligation>,
}

impl Walk<'_> {
    /// Walks a block; returns the early-return guards it passed (which also
    /// hold in the epilogue).
    fn block(&mut self, b: &Block, a: Option<&ast::Block>) -> Vec<(Cond, bool)> {
        let depth = self.conds.len();
        let ast_stmts = a.map(|a| a.stmts.as_slice()).unwrap_or_default();
        let aligned = ast_stmts.len() == b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            let a = if aligned { ast_stmts.get(i) } else { None };
            self.stmt(s, a);
        }
        self.conds.split_off(depth)
    }

    fn stmt(&mut self, s: &collc_spec::ir::Stmt, a: Option<&ast::Stmt>) {
        use ast::StmtKind as A;
        let at = s.span;
        // Shift amounts and `log2` arguments anywhere in the statement (its own
        // expressions, not those of nested blocks).
        let mut bits = Vec::new();
        bits::of_stmt(s, &mut bits);
        for g in bits {
            self.push(g, at);
        }
        match (&s.kind, a.map(|a| &a.kind)) {
            (
                StmtKind::Notify {
                    signal,
                    index,
                    target,
                    ..
                },
                ast,
            ) => {
                let (cell, t) = match ast {
                    Some(A::Notify { cell, target, .. }) => {
                        (Some(cell), target.as_ref().map(|t| t.span))
                    }
                    _ => (None, None),
                };
                self.cell(signal.index(), index, cell, at);
                if let Some(target) = target {
                    self.target(target, t.unwrap_or(at));
                }
            }
            (StmtKind::Wait { signal, index, .. }, ast) => {
                let cell = match ast {
                    Some(A::Wait { cell, .. }) => Some(cell),
                    _ => None,
                };
                self.cell(signal.index(), index, cell, at);
            }
            (StmtKind::Copy { dst, src }, ast) => {
                let (d, s2) = match ast {
                    Some(A::Copy { dst, src }) => (Some(dst), Some(src)),
                    _ => (None, None),
                };
                self.region(dst, d, at);
                self.region(src, s2, at);
            }
            (StmtKind::Get { dst, src, from }, ast) => {
                let (d, s2, f) = match ast {
                    Some(A::Get { dst, src, from }) => (Some(dst), Some(src), Some(from.span)),
                    _ => (None, None, None),
                };
                self.region(dst, d, at);
                self.region(src, s2, at);
                self.target(from, f.unwrap_or(at));
            }
            (StmtKind::Put { dst, to, src }, ast) => {
                let (d, t, s2) = match ast {
                    Some(A::Put { dst, to, src }) => (Some(dst), Some(to.span), Some(src)),
                    _ => (None, None, None),
                };
                self.region(dst, d, at);
                self.target(to, t.unwrap_or(at));
                self.region(src, s2, at);
            }
            (
                StmtKind::Reduce {
                    dst, src, from, to, ..
                },
                ast,
            ) => self.reduce((dst, src), (from.as_ref(), to.as_ref()), ast, at),
            (StmtKind::For { body, .. }, ast) => {
                let b = match ast {
                    Some(A::For { body, .. }) => Some(body),
                    _ => None,
                };
                self.block(body, b);
            }
            (
                StmtKind::If {
                    cond,
                    then_block,
                    else_block,
                },
                ast,
            ) => self.branch(cond, then_block, else_block.as_ref(), ast),
            (StmtKind::Return { cond }, _) => self.conds.push((cond.clone(), false)),
            (StmtKind::Let { .. } | StmtKind::Fence, _) => {}
        }
    }

    /// A `reduce`: its two regions, and its peer when the source or the destination is
    /// remote, each at its syntax's span when the statement's syntax is known.
    fn reduce(
        &mut self,
        (dst, src): (&Region, &Region),
        (from, to): (Option<&Expr>, Option<&Expr>),
        ast: Option<&ast::StmtKind>,
        at: Span,
    ) {
        let (d, s2, f, t) = match ast {
            Some(ast::StmtKind::Reduce {
                dst, src, from, to, ..
            }) => (
                Some(dst),
                Some(src),
                from.as_ref().map(|f| f.span),
                to.as_ref().map(|t| t.span),
            ),
            _ => (None, None, None, None),
        };
        self.region(dst, d, at);
        self.region(src, s2, at);
        if let Some(from) = from {
            self.target(from, f.unwrap_or(at));
        }
        if let Some(to) = to {
            self.target(to, t.unwrap_or(at));
        }
    }

    /// An `if`: each block under its condition (negated for `else`), with its syntax.
    fn branch(
        &mut self,
        cond: &Cond,
        then_block: &Block,
        else_block: Option<&Block>,
        ast: Option<&ast::StmtKind>,
    ) {
        let (t, e) = match ast {
            Some(ast::StmtKind::If {
                then_block,
                else_block,
                ..
            }) => (Some(then_block), else_block.as_ref()),
            _ => (None, None),
        };
        self.conds.push((cond.clone(), true));
        self.block(then_block, t);
        self.conds.pop();
        if let Some(eb) = else_block {
            self.conds.push((cond.clone(), false));
            self.block(eb, e);
            self.conds.pop();
        }
    }

    fn push(&mut self, goal: Goal, span: collc_grammar::Span) {
        self.out.push(Obligation {
            goal,
            span,
            conds: self.conds.clone(),
        });
    }

    fn cell(
        &mut self,
        signal: usize,
        index: &[collc_spec::ir::Expr],
        a: Option<&ast::CellRef>,
        at: collc_grammar::Span,
    ) {
        let sig = &self.p.signals[signal];
        for (k, (e, dim)) in index.iter().zip(&sig.dims).enumerate() {
            let span = a.and_then(|c| c.index.get(k)).map_or(at, |x| x.span);
            self.push(
                Goal::Index {
                    e: e.clone(),
                    dim: dim.clone(),
                    pos: k,
                    of: sig.name.clone(),
                    what: "signal",
                },
                span,
            );
        }
    }

    fn region(
        &mut self,
        r: &collc_spec::ir::Region,
        a: Option<&ast::Region>,
        at: collc_grammar::Span,
    ) {
        let dims = self.p.buffer_dims(r.buffer).to_vec();
        let name = self.p.buffer_name(r.buffer).to_string();
        let what = match r.buffer {
            collc_spec::ir::BufferRef::Window(_) => "window",
            collc_spec::ir::BufferRef::Tile(_) => "tile",
        };
        for (k, (e, dim)) in r.index.iter().zip(&dims).enumerate() {
            let span = a.and_then(|x| x.index.get(k)).map_or(at, |x| x.span);
            self.push(
                Goal::Index {
                    e: e.clone(),
                    dim: dim.clone(),
                    pos: k,
                    of: name.clone(),
                    what,
                },
                span,
            );
        }
        let Some(dim) = dims.last() else { return };
        let span = a.map_or(at, |x| match (&x.lo, &x.hi) {
            (Some(l), Some(h)) => l.span.join(h.span),
            (Some(l), None) => l.span,
            (None, Some(h)) => h.span,
            (None, None) => x.span,
        });
        self.push(
            Goal::Slice {
                lo: r.lo.clone(),
                hi: r.hi.clone(),
                dim: dim.clone(),
                of: name,
                what,
            },
            span,
        );
    }

    fn target(&mut self, e: &collc_spec::ir::Expr, span: collc_grammar::Span) {
        self.push(Goal::Target { e: e.clone() }, span);
    }
}
