//! The bit-operation goals of a statement: every shift amount (`<<`, `>>`,
//! `pow2`) lies in `0..=62` and every `log2` argument is a power of two.

use super::obligation::Goal;
use collc_spec::ir::{BinOp, Cond, Expr, Range, Region, Seq, Stmt, StmtKind};

/// The goals of the expressions `s` evaluates itself (loop bounds included,
/// nested statements excluded: the walk visits them in their own context).
pub fn of_stmt(s: &Stmt, out: &mut Vec<Goal>) {
    let mut e = |x: &Expr| of_expr(x, out);
    match &s.kind {
        StmtKind::Let { value, .. } => e(value),
        StmtKind::Notify {
            index,
            target,
            value,
            ..
        } => {
            index.iter().for_each(&mut e);
            target.iter().for_each(&mut e);
            e(value);
        }
        StmtKind::Wait {
            index, threshold, ..
        } => {
            index.iter().for_each(&mut e);
            e(threshold);
        }
        StmtKind::Copy { dst, src } => {
            region(dst, &mut e);
            region(src, &mut e);
        }
        StmtKind::Get { dst, src, from } => {
            region(dst, &mut e);
            region(src, &mut e);
            e(from);
        }
        StmtKind::Put { dst, to, src } => {
            region(dst, &mut e);
            e(to);
            region(src, &mut e);
        }
        StmtKind::Reduce {
            dst, src, from, to, ..
        } => {
            region(dst, &mut e);
            region(src, &mut e);
            from.iter().chain(to).for_each(&mut e);
        }
        StmtKind::For { range, .. } => {
            if let Range::Span { lo, hi, step } | Range::Seq(Seq { lo, hi, step, .. }) = range {
                e(lo);
                e(hi);
                e(step);
            }
        }
        StmtKind::If { cond, .. } | StmtKind::Return { cond } => of_cond(cond, out),
        StmtKind::Fence => {}
    }
}

fn region(r: &Region, e: &mut impl FnMut(&Expr)) {
    r.index.iter().for_each(&mut *e);
    e(&r.lo);
    e(&r.hi);
}

fn of_cond(c: &Cond, out: &mut Vec<Goal>) {
    match c {
        Cond::Bool(_) => {}
        Cond::Cmp(_, a, b) => {
            of_expr(a, out);
            of_expr(b, out);
        }
        Cond::Not(x) => of_cond(x, out),
        Cond::And(xs) | Cond::Or(xs) => xs.iter().for_each(|x| of_cond(x, out)),
    }
}

/// The goals of one expression, innermost first.
pub fn of_expr(e: &Expr, out: &mut Vec<Goal>) {
    match e {
        Expr::Int(_) | Expr::Var(_) => {}
        Expr::Array(_, xs) => xs.iter().for_each(|x| of_expr(x, out)),
        Expr::Neg(a) | Expr::Rank(a) => of_expr(a, out),
        Expr::Log2(a) => {
            of_expr(a, out);
            out.push(Goal::Log2 { e: (**a).clone() });
        }
        Expr::Pow2(a) => {
            of_expr(a, out);
            out.push(Goal::Shift { e: (**a).clone() });
        }
        Expr::Bin(op, a, b) => {
            of_expr(a, out);
            of_expr(b, out);
            if matches!(op, BinOp::Shl | BinOp::Shr) {
                out.push(Goal::Shift { e: (**b).clone() });
            }
        }
        Expr::CeilDiv(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
            of_expr(a, out);
            of_expr(b, out);
        }
    }
}
