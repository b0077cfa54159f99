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
//!
//! [`VisitMut`] is the same walk over mutable nodes, for passes that rewrite the IR in
//! place.

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

/// A pass that rewrites the IR in place: [`Visit`]'s walk, in the same order, over mutable
/// nodes. Every method defaults to visiting the node's children; an override that still
/// wants them calls the `walk_*_mut` function itself (before a rewrite of the node, for a
/// bottom-up rewrite).
pub trait VisitMut {
    /// A block: its statements in order.
    fn visit_block_mut(&mut self, b: &mut Block) {
        walk_block_mut(self, b);
    }
    /// A statement: its operands, then its nested blocks.
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        walk_stmt_mut(self, s);
    }
    /// A region: its indices, then its slice bounds.
    fn visit_region_mut(&mut self, r: &mut Region) {
        walk_region_mut(self, r);
    }
    /// A loop range: its bounds and step.
    fn visit_range_mut(&mut self, r: &mut Range) {
        walk_range_mut(self, r);
    }
    /// A condition: its comparisons' operands.
    fn visit_cond_mut(&mut self, c: &mut Cond) {
        walk_cond_mut(self, c);
    }
    /// An expression: its subexpressions.
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        walk_expr_mut(self, e);
    }
}

/// Visits every statement of `b` in order.
pub fn walk_block_mut<V: VisitMut + ?Sized>(v: &mut V, b: &mut Block) {
    for s in &mut b.stmts {
        v.visit_stmt_mut(s);
    }
}

/// Visits the operands of `s`, then its nested blocks ([`walk_stmt`]'s order).
pub fn walk_stmt_mut<V: VisitMut + ?Sized>(v: &mut V, s: &mut Stmt) {
    match &mut s.kind {
        StmtKind::Let { value, .. } => v.visit_expr_mut(value),
        StmtKind::Notify {
            index,
            target,
            value,
            ..
        } => {
            index.iter_mut().for_each(|e| v.visit_expr_mut(e));
            target.iter_mut().for_each(|e| v.visit_expr_mut(e));
            v.visit_expr_mut(value);
        }
        StmtKind::Wait {
            index, threshold, ..
        } => {
            index.iter_mut().for_each(|e| v.visit_expr_mut(e));
            v.visit_expr_mut(threshold);
        }
        StmtKind::Copy { dst, src } => {
            v.visit_region_mut(dst);
            v.visit_region_mut(src);
        }
        StmtKind::Get { dst, src, from } => {
            v.visit_region_mut(dst);
            v.visit_region_mut(src);
            v.visit_expr_mut(from);
        }
        StmtKind::Put { dst, to, src } => {
            v.visit_region_mut(dst);
            v.visit_expr_mut(to);
            v.visit_region_mut(src);
        }
        StmtKind::Reduce {
            dst, src, from, to, ..
        } => {
            v.visit_region_mut(dst);
            v.visit_region_mut(src);
            from.iter_mut()
                .chain(to.iter_mut())
                .for_each(|e| v.visit_expr_mut(e));
        }
        StmtKind::Fence => {}
        StmtKind::For { range, body, .. } => {
            v.visit_range_mut(range);
            v.visit_block_mut(body);
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            v.visit_cond_mut(cond);
            v.visit_block_mut(then_block);
            if let Some(e) = else_block {
                v.visit_block_mut(e);
            }
        }
        StmtKind::Return { cond } => v.visit_cond_mut(cond),
    }
}

/// Visits the indices of `r`, then its slice bounds.
pub fn walk_region_mut<V: VisitMut + ?Sized>(v: &mut V, r: &mut Region) {
    r.index.iter_mut().for_each(|e| v.visit_expr_mut(e));
    v.visit_expr_mut(&mut r.lo);
    v.visit_expr_mut(&mut r.hi);
}

/// Visits the bounds and the step of a numeric range.
pub fn walk_range_mut<V: VisitMut + ?Sized>(v: &mut V, r: &mut Range) {
    match r {
        Range::Span { lo, hi, step } | Range::Seq(Seq { lo, hi, step, .. }) => {
            v.visit_expr_mut(lo);
            v.visit_expr_mut(hi);
            v.visit_expr_mut(step);
        }
        Range::Peers | Range::Ranks => {}
    }
}

/// Visits the operands of every comparison of `c`.
pub fn walk_cond_mut<V: VisitMut + ?Sized>(v: &mut V, c: &mut Cond) {
    match c {
        Cond::Bool(_) => {}
        Cond::Cmp(_, a, b) => {
            v.visit_expr_mut(a);
            v.visit_expr_mut(b);
        }
        Cond::Not(x) => v.visit_cond_mut(x),
        Cond::And(xs) | Cond::Or(xs) => xs.iter_mut().for_each(|x| v.visit_cond_mut(x)),
    }
}

/// Visits the subexpressions of `e`, left to right.
pub fn walk_expr_mut<V: VisitMut + ?Sized>(v: &mut V, e: &mut Expr) {
    match e {
        Expr::Int(_) | Expr::Var(_) => {}
        Expr::Array(_, xs) => xs.iter_mut().for_each(|x| v.visit_expr_mut(x)),
        Expr::Neg(a) | Expr::Rank(a) | Expr::Log2(a) | Expr::Pow2(a) => v.visit_expr_mut(a),
        Expr::Bin(_, a, b) | Expr::CeilDiv(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
            v.visit_expr_mut(a);
            v.visit_expr_mut(b);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Rewrites `a + 0` to `a`, bottom up, and counts the expressions it visits.
    struct DropZero(usize);

    impl VisitMut for DropZero {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            walk_expr_mut(self, e);
            self.0 += 1;
            if let Expr::Bin(crate::ir::BinOp::Add, a, b) = e {
                if **b == Expr::Int(0) {
                    *e = (**a).clone();
                }
            }
        }
    }

    /// Counts the expressions it visits.
    struct Count(usize);

    impl Visit for Count {
        fn visit_expr(&mut self, e: &Expr) {
            self.0 += 1;
            walk_expr(self, e);
        }
    }

    #[test]
    fn the_mutable_walk_meets_what_the_walk_meets_and_rewrites_it() {
        let mut p = crate::lowered(
            "collective c: barrier() {
                ranks P in 1..=8;
                signal s[P];
                body {
                    for q in 0 + 0..P + 0 { notify s[me + 0] @ rank(q + 0) += 1 + 0; }
                    if me + 0 == 0 { wait s[0] >= (P - 1) + 0; } else { fence; }
                    return if P + 0 > 7;
                }
                epilogue { notify s[me] -= P - 1 + 0; }
            }",
        )
        .protocol
        .expect("the case lowers");
        let zeros = crate::print::print(&p).matches("+ 0").count();
        assert!(zeros >= 8, "{}", crate::print::print(&p));
        let mut before = Count(0);
        before.visit_block(&p.body);
        before.visit_block(&p.epilogue);
        let mut rw = DropZero(0);
        rw.visit_block_mut(&mut p.body);
        rw.visit_block_mut(&mut p.epilogue);
        assert_eq!(rw.0, before.0, "it visits what the walk visits");
        let printed = crate::print::print(&p);
        assert_eq!(printed.matches("+ 0").count(), 0, "{printed}");
        let mut after = Count(0);
        after.visit_block(&p.body);
        after.visit_block(&p.epilogue);
        // Each `a + 0` went with its `0`.
        assert_eq!(before.0 - after.0, 2 * zeros);
    }
}
