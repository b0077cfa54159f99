//! The one IR rewrite validation compares modulo: `1 << k` is `pow2(k)`. `collc emit`
//! writes both as `collc_shl(1, k)`, which the lifter reads as `pow2(k)`.

use collc_spec::ir::{BinOp, Block, Cond, Expr, Range, Region, StmtKind};

/// `b` with every `1 << k` written `pow2(k)`.
pub fn pow2_block(b: &Block) -> Block {
    let mut b = b.clone();
    block(&mut b);
    b
}

fn block(b: &mut Block) {
    for s in &mut b.stmts {
        match &mut s.kind {
            StmtKind::Let { value, .. } => expr(value),
            StmtKind::Notify {
                index,
                target,
                value,
                ..
            } => {
                index.iter_mut().for_each(expr);
                target.iter_mut().for_each(expr);
                expr(value);
            }
            StmtKind::Wait {
                index, threshold, ..
            } => {
                index.iter_mut().for_each(expr);
                expr(threshold);
            }
            StmtKind::Copy { dst, src } => {
                region(dst);
                region(src);
            }
            StmtKind::Get { dst, src, from: r } | StmtKind::Put { dst, to: r, src } => {
                region(dst);
                region(src);
                expr(r);
            }
            StmtKind::Reduce {
                dst, src, from, to, ..
            } => {
                region(dst);
                region(src);
                from.iter_mut().chain(to.iter_mut()).for_each(expr);
            }
            StmtKind::Fence => {}
            StmtKind::For { range, body, .. } => {
                match range {
                    Range::Peers | Range::Ranks => {}
                    Range::Span { lo, hi, step } => [lo, hi, step].into_iter().for_each(expr),
                    Range::Seq(q) => [&mut q.lo, &mut q.hi, &mut q.step]
                        .into_iter()
                        .for_each(expr),
                }
                block(body);
            }
            StmtKind::If {
                cond: c,
                then_block,
                else_block,
            } => {
                cond(c);
                block(then_block);
                else_block.iter_mut().for_each(block);
            }
            StmtKind::Return { cond: c } => cond(c),
        }
    }
}

fn region(r: &mut Region) {
    r.index.iter_mut().for_each(expr);
    expr(&mut r.lo);
    expr(&mut r.hi);
}

fn cond(c: &mut Cond) {
    match c {
        Cond::Bool(_) => {}
        Cond::Cmp(_, a, b) => {
            expr(a);
            expr(b);
        }
        Cond::Not(a) => cond(a),
        Cond::And(xs) | Cond::Or(xs) => xs.iter_mut().for_each(cond),
    }
}

fn expr(e: &mut Expr) {
    match e {
        Expr::Int(_) | Expr::Var(_) => {}
        Expr::Array(_, xs) => xs.iter_mut().for_each(expr),
        Expr::Neg(a) | Expr::Rank(a) | Expr::Log2(a) | Expr::Pow2(a) => expr(a),
        Expr::Bin(op, a, b) => {
            expr(a);
            expr(b);
            if *op == BinOp::Shl && **a == Expr::Int(1) {
                *e = Expr::Pow2(b.clone());
            }
        }
        Expr::CeilDiv(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
            expr(a);
            expr(b);
        }
    }
}
