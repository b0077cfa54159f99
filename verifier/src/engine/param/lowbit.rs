//! Width-free facts of [`super::bitlemma`] about the lowest set bit `x & -x` and about
//! remainders `x % y` by a symbolic divisor: the forms of rooted trees (the binomial
//! tree's parent `vr - (vr & -vr)` and children `vr + m` for powers `m` below the lowest
//! set bit of `vr`, every rank rotated by `(... + root) % P`). Each fact is a theorem of
//! the integers, with a proof below; none mentions a width or the declared bounds, and
//! the tests check every instance on all small operands.
//!
//! Lowest set bit, `low(x) = x & -x` (the 64-bit operation, exact for `x` in
//! `1..=2^62`: there `-x` does not overflow and `x & -x` is the lowest set bit):
//!
//! - (L0) `low(0) = 0`.
//! - (L1) for `x` in `1..=2^62`: `low(x) = 2^j` for some `j` (a power view), `low(x)
//!   <= x`, and `x = low(x)` or `x >= 3 low(x)`. Proof: write `x = 2^j (2q + 1)` with
//!   `q >= 0` (every positive integer is an odd multiple of a power of two); the lowest
//!   set bit of `x` is `2^j`, and `x - 2^j = 2^(j+1) q` is 0 or at least `2^(j+1)`.
//! - (L2) for `a`, `b` in `1..=2^62` and a power `w = 2^i` with `b = a + w`:
//!   `w < low(a) ⇒ low(b) = w`; `w > low(a) ⇒ low(b) = low(a)`; `w = low(a) ⇒
//!   low(b) >= 2w`; and the same with `a`, `b` swapped (`a = b - w`). Proof: with `low(a) =
//!   2^j`, `a = 2^j (2q + 1)`. If `i < j`, `b = 2^i (2^(j-i) (2q + 1) + 1)`, an odd
//!   multiple of `2^i`. If `i > j`, `b = 2^j (2q + 1 + 2^(i-j))`, and `2q + 1 + 2^(i-j)`
//!   is odd. If `i = j`, `b = 2^(j+1) (q + 1)`, a multiple of `2^(j+1)`, so `low(b) >=
//!   2^(j+1)`. Swapped, with `low(b) = 2^j`, `b = 2^j (2q + 1)` and `a = b - 2^i >= 1`:
//!   if `i < j`, `a = 2^i (2^(j-i) (2q + 1) - 1)`, odd cofactor; if `i > j`, `a = 2^j
//!   (2q + 1 - 2^(i-j))`, odd cofactor (positive since `a >= 1`); if `i = j`, `a =
//!   2^(j+1) q`, a multiple of `2^(j+1)`.
//! - (L3) `low(w) = w` for a power `w` in `1..=2^62` (`w = 2^i · 1`).
//! - (L4) for `x` in `1..=2^62` and a power `w = 2^i` (any `i >= 0`): `x % w = 0 ⇔
//!   low(x) >= w`. Proof: `x = 2^j (2q + 1)` with `low(x) = 2^j`. If `i <= j`, `2^i`
//!   divides `2^j`, so `x % w = 0`, and `low(x) = 2^j >= 2^i`. If `i > j`, `2^i` does not
//!   divide `x` (else `2^(i-j)`, an even number, would divide the odd `2q + 1`), so `x % w
//!   != 0`, and `low(x) = 2^j < 2^i`. (For `x = 0`, R1 gives `x % w = 0`.) The child test
//!   of a binomial tree, `r % (2m) == 0`, is this fact's left side: `low(r) > m`.
//!
//! `low` is a function of its operand, so a remainder by a power needs no `x & -x` in the
//! protocol: the facts name a fresh lowest set bit of its argument (constrained by L0-L2
//! and equal to any other `low` of an equal operand), which the real `x & -x` satisfies.
//!
//! The binomial tree's parent `p = vr - low(vr)` has `low(p) >= 2 low(vr)` when `p >= 1`
//! (L2 swapped with `w = low(vr)`: `low(vr)` is itself a power view).
//!
//! Remainders `v = x % y` (Euclidean, as the language's `%`) with `y >= 1`:
//!
//! - (R1) `0 <= v < y`; `v = x` for `x` in `0..y`, `v = x - y` for `x` in `y..2y`,
//!   `v = x + y` for `x` in `-y..0` (the definition: `x = qy + v` with `0 <= v < y`,
//!   `q` being 0, 1 or -1 there);
//! - (R2) two remainders by the same divisor of arguments that differ by 0 or `±y` are
//!   equal (`(x + ky) % y = x % y`).

use super::bitlemma::View;
use z3::ast::{Bool, Int};

/// The largest operand the lowest-set-bit facts speak of.
const TOP: i64 = 1 << 62;

/// One `x & -x`: its operand and value.
pub struct Low {
    pub x: Int,
    pub v: Int,
}

/// One `x % y` with a symbolic divisor (its divisor as a term, to pair remainders).
pub struct Rem {
    pub x: Int,
    pub y: Int,
    pub ylin: crate::engine::sym::Lin,
    pub v: Int,
}

/// `1 <= x <= 2^62`.
fn positive(x: &Int) -> Bool {
    Bool::and(&[x.ge(1), x.le(TOP)])
}

/// Where `low` is a power: the condition of its power view.
pub fn view_cond(low: &Low) -> Bool {
    positive(&low.x)
}

/// L0 and L1 (with the power view of `low.v` stated by the caller).
pub fn alone(low: &Low) -> Vec<Bool> {
    let (x, v) = (&low.x, &low.v);
    vec![
        x.eq(Int::from_i64(0)).implies(v.eq(Int::from_i64(0))),
        positive(x).implies(Bool::and(&[
            v.ge(1),
            v.le(x),
            Bool::or(&[x.eq(v), x.ge(v * Int::from_i64(3))]),
        ])),
    ]
}

/// L3: the lowest set bit of a power view is itself.
pub fn of_power(low: &Low, w: &View) -> Bool {
    Bool::and(&[w.c.clone(), positive(&low.x), low.x.eq(&w.v)]).implies(low.v.eq(&w.v))
}

/// L2 for `b = a + w`, both directions.
pub fn step(a: &Low, b: &Low, w: &View) -> Vec<Bool> {
    let pre = Bool::and(&[
        w.c.clone(),
        positive(&a.x),
        positive(&b.x),
        b.x.eq(&a.x + &w.v),
    ]);
    let two = Int::from_i64(2);
    let mut out = Vec::new();
    for (p, q) in [(a, b), (b, a)] {
        out.push(pre.implies(Bool::and(&[
            w.v.lt(&p.v).implies(q.v.eq(&w.v)),
            w.v.gt(&p.v).implies(q.v.eq(&p.v)),
            w.v.eq(&p.v).implies(q.v.ge(&w.v * &two)),
        ])));
    }
    out
}

/// L4 for the remainder `r` and the lowest set bit `low` of its argument, where `power`
/// holds only if the divisor is a power of two.
pub fn rem_of_power(r: &Rem, low: &Low, power: &Bool) -> Bool {
    let pre = Bool::and(&[power.clone(), r.x.eq(&low.x), positive(&low.x)]);
    pre.implies(r.v.eq(Int::from_i64(0)).eq(low.v.ge(&r.y)))
}

/// `low` is a function: two lowest set bits of equal operands are equal.
pub fn same(a: &Low, b: &Low) -> Bool {
    a.x.eq(&b.x).implies(a.v.eq(&b.v))
}

/// R1.
pub fn rem_alone(r: &Rem) -> Bool {
    let (x, y, v) = (&r.x, &r.y, &r.v);
    let zero = Int::from_i64(0);
    y.ge(1).implies(Bool::and(&[
        v.ge(&zero),
        v.lt(y),
        Bool::and(&[x.ge(&zero), x.lt(y)]).implies(v.eq(x)),
        Bool::and(&[x.ge(y), x.lt(y * Int::from_i64(2))]).implies(v.eq(x - y)),
        Bool::and(&[x.ge(-y.clone()), x.lt(&zero)]).implies(v.eq(x + y)),
    ]))
}

/// R2 (for two remainders by the same divisor).
pub fn rem_pair(a: &Rem, b: &Rem) -> Bool {
    let d = &a.x - &b.x;
    let close = Bool::or(&[d.eq(Int::from_i64(0)), d.eq(&a.y), d.eq(-a.y.clone())]);
    Bool::and(&[a.y.ge(1), close]).implies(a.v.eq(&b.v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sym::Lin;
    use z3::ast::Ast;

    fn holds(b: &Bool) -> bool {
        b.simplify().as_bool() == Some(true)
    }

    fn k(v: i64) -> Int {
        Int::from_i64(v)
    }

    fn low(x: i64) -> Low {
        Low {
            x: k(x),
            v: k(x & x.wrapping_neg()),
        }
    }

    fn power(i: i64) -> View {
        View {
            lin: Lin::k(1 << i),
            v: k(1 << i),
            e: k(i),
            c: Bool::from_bool(true),
        }
    }

    /// Every instance of L0-L3 on all operands below 2^9 (every width up to 9 bits).
    #[test]
    fn the_lowest_set_bit_facts_hold_on_all_small_operands() {
        for x in -4..512i64 {
            let l = low(x);
            for b in alone(&l) {
                assert!(holds(&b), "{x}: {b}");
            }
            if x >= 1 {
                assert!(holds(&view_cond(&l)));
                let j = x.trailing_zeros();
                assert_eq!(x & -x, 1 << j, "a power");
            }
            for i in 0..9 {
                let w = power(i);
                assert!(holds(&of_power(&l, &w)), "{x} {i}");
                for b in step(&l, &low(x + (1 << i)), &w) {
                    assert!(holds(&b), "{x} + 2^{i}: {b}");
                }
            }
        }
    }

    /// Every instance of L4 (and of `same`) on all operands below 2^9 and every power
    /// divisor up to 2^10, against the remainder and the lowest set bit computed directly.
    #[test]
    fn a_remainder_by_a_power_is_zero_exactly_above_the_lowest_set_bit() {
        for x in -4..512i64 {
            for i in 0..=10 {
                let y = 1i64 << i;
                let r = Rem {
                    x: k(x),
                    y: k(y),
                    ylin: Lin::k(y),
                    v: k(x.rem_euclid(y)),
                };
                let f = rem_of_power(&r, &low(x), &Bool::from_bool(true));
                assert!(holds(&f), "{x} % 2^{i}: {f}");
                // The statement itself, on the integers: not vacuous for x >= 1.
                if x >= 1 {
                    let lowest = 1i64 << x.trailing_zeros();
                    assert_eq!(x % y == 0, lowest >= y, "{x} % 2^{i}");
                }
            }
            for x2 in -4..64i64 {
                assert!(holds(&same(&low(x), &low(x2))), "{x} {x2}");
            }
        }
        // A wrong low bit is refuted: 12 % 8 != 0, so low(12) >= 8 must not be allowed.
        let r = Rem {
            x: k(12),
            y: k(8),
            ylin: Lin::k(8),
            v: k(4),
        };
        let wrong = Low { x: k(12), v: k(8) };
        assert!(!holds(&rem_of_power(&r, &wrong, &Bool::from_bool(true))));
    }

    /// L4 as a bit-vector theorem at the widths 8, 16, 32 and 64: for `x` in `1..=2^(w-2)`
    /// and `i < w - 2`, `x urem 2^i == 0 ⇔ (x & -x) >= 2^i`.
    #[test]
    fn the_power_remainder_fact_is_a_bit_vector_theorem() {
        use z3::ast::BV;
        use z3::{SatResult, Solver};
        for w in [8u32, 16, 32, 64] {
            let (x, i) = (BV::new_const("x", w), BV::new_const("i", w));
            let one = BV::from_u64(1, w);
            let zero = BV::from_u64(0, w);
            let pw = one.bvshl(&i);
            let pre = Bool::and(&[
                x.bvuge(&one),
                x.bvule(BV::from_u64(1u64 << (w - 2), w)),
                i.bvult(BV::from_u64(u64::from(w) - 2, w)),
            ]);
            let low = x.bvand(x.bvneg());
            let thm = pre.implies(x.bvurem(&pw).eq(&zero).eq(low.bvuge(&pw)));
            let s = Solver::new();
            s.assert(thm.not());
            assert_eq!(s.check(), SatResult::Unsat, "width {w}");
        }
    }

    /// Every instance of R1 and R2 on small arguments and divisors.
    #[test]
    fn the_remainder_facts_hold_on_all_small_operands() {
        let rem = |x: i64, y: i64| Rem {
            x: k(x),
            y: k(y),
            ylin: Lin::k(y),
            v: k(x.rem_euclid(y)),
        };
        for y in 1..12i64 {
            for x in -40..40i64 {
                let r = rem(x, y);
                assert!(holds(&rem_alone(&r)), "{x} % {y}");
                for x2 in -40..40i64 {
                    assert!(holds(&rem_pair(&r, &rem(x2, y))), "{x} {x2} % {y}");
                }
            }
        }
    }

    /// L1-L3 as bit-vector theorems: Z3 proves each at the widths 8, 16, 32 and 64 over
    /// all operands of the width (below `2^(w-2)`, as the facts require of `2^62`).
    #[test]
    fn the_lowest_set_bit_facts_are_bit_vector_theorems() {
        use z3::ast::BV;
        use z3::{SatResult, Solver};
        for w in [8u32, 16, 32, 64] {
            let top = BV::from_u64(1u64 << (w - 2), w);
            let zero = BV::from_u64(0, w);
            let one = BV::from_u64(1, w);
            let (a, i) = (BV::new_const("a", w), BV::new_const("i", w));
            let pw = one.bvshl(&i);
            let b = a.bvadd(&pw);
            let lo = |x: &BV| x.bvand(x.bvneg());
            let pos = |x: &BV| Bool::and(&[x.bvuge(&one), x.bvule(&top)]);
            let (la, lb) = (lo(&a), lo(&b));
            let two = |x: &BV| x.bvshl(&one);
            let power = |x: &BV| Bool::and(&[x.bvuge(&one), x.bvand(x.bvsub(&one)).eq(&zero)]);
            let pre = Bool::and(&[pos(&a), pos(&b), i.bvult(BV::from_u64(u64::from(w) - 2, w))]);
            let mut thms = vec![
                pos(&a).implies(Bool::and(&[
                    power(&la),
                    la.bvule(&a),
                    Bool::or(&[a.eq(&la), a.bvuge(la.bvmul(BV::from_u64(3, w)))]),
                ])),
                Bool::and(&[pos(&pw), i.bvult(BV::from_u64(u64::from(w) - 2, w))])
                    .implies(lo(&pw).eq(&pw)),
            ];
            for (p, q) in [(&la, &lb), (&lb, &la)] {
                thms.push(pre.implies(Bool::and(&[
                    pw.bvult(p).implies(q.eq(&pw)),
                    pw.bvugt(p).implies(q.eq(p)),
                    pw.eq(p).implies(q.bvuge(two(&pw))),
                ])));
            }
            for t in thms {
                let s = Solver::new();
                s.assert(t.not());
                assert_eq!(s.check(), SatResult::Unsat, "width {w}: {t}");
            }
        }
    }
}
