//! The one IR rewrite validation compares modulo: `1 << k` is `pow2(k)`. `collc emit`
//! writes both as `collc_shl(1, k)`, which the lifter reads as `pow2(k)`.

use collc_spec::ir::{BinOp, Block, Expr};
use collc_spec::visit::{walk_expr_mut, VisitMut};

/// `b` with every `1 << k` written `pow2(k)`.
pub fn pow2_block(b: &Block) -> Block {
    let mut b = b.clone();
    Pow2.visit_block_mut(&mut b);
    b
}

/// Rewrites `1 << k` to `pow2(k)`, bottom up, everywhere in the statements it visits.
struct Pow2;

impl VisitMut for Pow2 {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        walk_expr_mut(self, e);
        if let Expr::Bin(BinOp::Shl, a, b) = e {
            if **a == Expr::Int(1) {
                *e = Expr::Pow2(b.clone());
            }
        }
    }
}
