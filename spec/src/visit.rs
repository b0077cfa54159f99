//! A visitor over the IR ([`crate::ir`]): one walk of statements, regions, ranges,
//! conditions and expressions that every pass reuses instead of copying the
//! destructuring of [`StmtKind`].
//!
//! Implement [`Visit`] and override the methods for the nodes a pass cares about; each
//! default method calls the matching `walk_*` function, which visits the node's children
//! in source order. An override that still wants the children calls the `walk_*`
//! function itself (as in `syn` and `naga`). Overriding [`Visit::visit_block`] with an
//! empty body keeps a walk to a statement's own operands (nested statements excluded);
//! overriding [`Visit::visit_expr`] without walking treats every outermost expression as
//! one unit.
//!
//! The order, per statement: `let` its value; `notify` index, target, value; `wait`
//! index, threshold; `copy` destination, source; `get` destination, source, `from`;
//! `put` destination, `to`, source; `reduce` destination, source, `from`, `to`; `for`
//! its range, then its body; `if` its condition, then branch, else branch; `return` its
//! condition. A region is its indices, then its slice bounds.

use crate::ir::{Block, Cond, Expr, Protocol, Range, Region, Seq, Stmt, StmtKind, VarKind};

/// A pass over the IR; every method defaults to visiting the node's children.
pub trait Visit {
    /// A block: its statements in order.
    fn visit_block(&mut self, b: &Block) {
        walk_block(self, b);
    }
    /// A statement: its operands, then its nested blocks.
    fn visit_stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s);
    }
    /// A region: its indices, then its slice bounds.
    fn visit_region(&mut self, r: &Region) {
        walk_region(self, r);
    }
    /// A loop range: its bounds and step (none for `peers` and `ranks`).
    fn visit_range(&mut self, r: &Range) {
        walk_range(self, r);
    }
    /// A condition: its comparisons' operands.
    fn visit_cond(&mut self, c: &Cond) {
        walk_cond(self, c);
    }
    /// An expression: its subexpressions.
    fn visit_expr(&mut self, e: &Expr) {
        walk_expr(self, e);
    }
}

/// The pass behind [`Expr::for_each_var`] and [`Cond::for_each_var`]: calls its
/// function with every variable an expression reads, in the walk's order.
pub struct Reads<'f>(pub &'f mut dyn FnMut(crate::ir::VarId));

impl Visit for Reads<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let Expr::Var(v) = e {
            (self.0)(*v);
        }
        walk_expr(self, e);
    }
}

/// Visits every statement of `b` in order.
pub fn walk_block<V: Visit + ?Sized>(v: &mut V, b: &Block) {
    for s in &b.stmts {
        v.visit_stmt(s);
    }
}

/// Visits the operands of `s`, then its nested blocks (module documentation: the order).
pub fn walk_stmt<V: Visit + ?Sized>(v: &mut V, s: &Stmt) {
    match &s.kind {
        StmtKind::Let { value, .. } => v.visit_expr(value),
        StmtKind::Notify {
            index,
            target,
            value,
            ..
        } => {
            index.iter().for_each(|e| v.visit_expr(e));
            target.iter().for_each(|e| v.visit_expr(e));
            v.visit_expr(value);
        }
        StmtKind::Wait {
            index, threshold, ..
        } => {
            index.iter().for_each(|e| v.visit_expr(e));
            v.visit_expr(threshold);
        }
        StmtKind::Copy { dst, src } => {
            v.visit_region(dst);
            v.visit_region(src);
        }
        StmtKind::Get { dst, src, from } => {
            v.visit_region(dst);
            v.visit_region(src);
            v.visit_expr(from);
        }
        StmtKind::Put { dst, to, src } => {
            v.visit_region(dst);
            v.visit_expr(to);
            v.visit_region(src);
        }
        StmtKind::Reduce {
            dst, src, from, to, ..
        } => {
            v.visit_region(dst);
            v.visit_region(src);
            from.iter().chain(to).for_each(|e| v.visit_expr(e));
        }
        StmtKind::Fence => {}
        StmtKind::For { range, body, .. } => {
            v.visit_range(range);
            v.visit_block(body);
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            v.visit_cond(cond);
            v.visit_block(then_block);
            if let Some(e) = else_block {
                v.visit_block(e);
            }
        }
        StmtKind::Return { cond } => v.visit_cond(cond),
    }
}

/// Visits the indices of `r`, then its slice bounds.
pub fn walk_region<V: Visit + ?Sized>(v: &mut V, r: &Region) {
    r.index.iter().for_each(|e| v.visit_expr(e));
    v.visit_expr(&r.lo);
    v.visit_expr(&r.hi);
}

/// Visits the bounds and the step of a numeric range.
pub fn walk_range<V: Visit + ?Sized>(v: &mut V, r: &Range) {
    match r {
        Range::Span { lo, hi, step } | Range::Seq(Seq { lo, hi, step, .. }) => {
            v.visit_expr(lo);
            v.visit_expr(hi);
            v.visit_expr(step);
        }
        Range::Peers | Range::Ranks => {}
    }
}

/// Visits the operands of every comparison of `c`.
pub fn walk_cond<V: Visit + ?Sized>(v: &mut V, c: &Cond) {
    match c {
        Cond::Bool(_) => {}
        Cond::Cmp(_, a, b) => {
            v.visit_expr(a);
            v.visit_expr(b);
        }
        Cond::Not(x) => v.visit_cond(x),
        Cond::And(xs) | Cond::Or(xs) => xs.iter().for_each(|x| v.visit_cond(x)),
    }
}

/// Visits the subexpressions of `e`, left to right.
pub fn walk_expr<V: Visit + ?Sized>(v: &mut V, e: &Expr) {
    match e {
        Expr::Int(_) | Expr::Var(_) => {}
        Expr::Array(_, xs) => xs.iter().for_each(|x| v.visit_expr(x)),
        Expr::Neg(a) | Expr::Rank(a) | Expr::Log2(a) | Expr::Pow2(a) => v.visit_expr(a),
        Expr::Bin(_, a, b) | Expr::CeilDiv(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
            v.visit_expr(a);
            v.visit_expr(b);
        }
    }
}

/// Visits the values of the top-level `let`s (in declaration order).
pub fn walk_derived<V: Visit + ?Sized>(v: &mut V, p: &Protocol) {
    for x in &p.vars {
        if let VarKind::Derived(e) = &x.kind {
            v.visit_expr(e);
        }
    }
}

/// Visits the conditions of the `require`s, in order.
pub fn walk_requires<V: Visit + ?Sized>(v: &mut V, p: &Protocol) {
    for r in &p.requires {
        v.visit_cond(&r.cond);
    }
}

/// Calls `f` with every statement of `b`, nested ones included, in program order (a
/// statement before the statements nested in it).
pub fn each_stmt<'b>(b: &'b Block, f: &mut dyn FnMut(&'b Stmt)) {
    for s in &b.stmts {
        f(s);
        match &s.kind {
            StmtKind::For { body, .. } => each_stmt(body, f),
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                each_stmt(then_block, f);
                if let Some(e) = else_block {
                    each_stmt(e, f);
                }
            }
            _ => {}
        }
    }
}

/// Whether some statement of `b`, nested ones included, satisfies `f`.
pub fn any_stmt(b: &Block, f: &mut dyn FnMut(&Stmt) -> bool) -> bool {
    b.stmts.iter().any(|s| {
        f(s) || match &s.kind {
            StmtKind::For { body, .. } => any_stmt(body, f),
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => any_stmt(then_block, f) || else_block.as_ref().is_some_and(|e| any_stmt(e, f)),
            _ => false,
        }
    })
}

/// Calls `f` with every statement of `b`, nested ones included, mutably, in program
/// order (a statement before the statements nested in it, which `f` may change).
pub fn each_stmt_mut(b: &mut Block, f: &mut dyn FnMut(&mut Stmt)) {
    for s in &mut b.stmts {
        f(s);
        match &mut s.kind {
            StmtKind::For { body, .. } => each_stmt_mut(body, f),
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                each_stmt_mut(then_block, f);
                if let Some(e) = else_block {
                    each_stmt_mut(e, f);
                }
            }
            _ => {}
        }
    }
}
