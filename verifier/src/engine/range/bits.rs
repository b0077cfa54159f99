//! The bit-operation goals of a statement: every shift amount (`<<`, `>>`,
//! `pow2`) lies in `0..=62` and every `log2` argument is a power of two.

use super::obligation::Goal;
use collc_spec::ir::{BinOp, Block, Expr, Stmt};
use collc_spec::visit::{self, Visit};

/// The goals of the expressions `s` evaluates itself (loop bounds included,
/// nested statements excluded: the walk visits them in their own context).
pub fn of_stmt(s: &Stmt, out: &mut Vec<Goal>) {
    visit::walk_stmt(&mut Own(out), s);
}

/// A statement's own expressions: nested blocks are not walked.
struct Own<'o>(&'o mut Vec<Goal>);

impl Visit for Own<'_> {
    fn visit_block(&mut self, _: &Block) {}
    fn visit_expr(&mut self, e: &Expr) {
        of_expr(e, self.0);
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
