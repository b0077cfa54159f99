//! Powers of two, base-2 logarithms and bit operations as symbolic atoms
//! ([`Atom::Bit`]) for the parametric route: construction with the exact
//! simplifications (`log2(2^x) = x`, `x ^ 0 = x`, constants folded), bounds, concrete
//! evaluation, solving a cell equation through `^` (`x ^ c == e` has the one solution
//! `x = e ^ c`: the partner function is a bijection), and the Z3 encoding (the 64-bit
//! two's complement image of the integers, exact for every value the language allows).

use crate::engine::sym::{Atom, AtomId, BitFn, Bounds, Lin, Syms};
use collc_spec::ir::BinOp;
use z3::ast::{Bool, Int, BV};

/// The largest shift the language allows (`collc_spec::eval::MAX_SHIFT`).
const MAX_SHIFT: i64 = 62;

/// The value of `f` on concrete operands (`None` outside its domain).
pub fn eval(f: BitFn, x: i64, y: i64) -> Option<i64> {
    match f {
        BitFn::Pow2 if (0..=MAX_SHIFT).contains(&x) => Some(1i64 << x),
        BitFn::Pow2 => None,
        BitFn::Lg => Some(lg(x)),
        BitFn::Xor => Some(x ^ y),
        BitFn::And => Some(x & y),
        BitFn::Or => Some(x | y),
        BitFn::Shl => collc_spec::eval::bin(BinOp::Shl, x, y).ok(),
        BitFn::Shr => collc_spec::eval::bin(BinOp::Shr, x, y).ok(),
    }
}

/// The smallest `k >= 0` with `2^k >= x`.
pub(crate) fn lg(x: i64) -> i64 {
    if x <= 1 {
        0
    } else {
        i64::from(64 - (x - 1).leading_zeros())
    }
}

/// Bounds of `f` from its operands' bounds.
pub fn bounds(f: BitFn, x: Bounds, y: Bounds) -> Bounds {
    let nonneg = |b: Bounds| b.0.is_some_and(|l| l >= 0);
    // Every value below 2^k when both operands are in 0..2^k.
    let below = |u: Option<i64>| u.and_then(|u| eval(BitFn::Pow2, lg(u.saturating_add(1)), 0));
    match f {
        BitFn::Pow2 => (
            Some(x.0.map_or(1, |l| eval(BitFn::Pow2, l.max(0), 0).unwrap_or(1))),
            x.1.and_then(|u| eval(BitFn::Pow2, u, 0)),
        ),
        BitFn::Lg => (Some(x.0.map_or(0, lg)), Some(x.1.map_or(63, lg))),
        BitFn::And if nonneg(x) || nonneg(y) => (
            Some(0),
            match (
                nonneg(x).then_some(x.1).flatten(),
                nonneg(y).then_some(y.1).flatten(),
            ) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        ),
        BitFn::Xor | BitFn::Or if nonneg(x) && nonneg(y) => {
            let u = x.1.zip(y.1).map(|(a, b)| a.max(b));
            (Some(0), below(u).map(|v| v - 1))
        }
        BitFn::Shr if nonneg(x) => (Some(0), x.1),
        _ => (None, None),
    }
}

/// How an atom prints.
pub fn show(f: BitFn, x: &str, y: &str) -> String {
    match f {
        BitFn::Pow2 => format!("pow2({x})"),
        BitFn::Lg => format!("ceil(log2({x}))"),
        BitFn::Xor => format!("{x} ^ {y}"),
        BitFn::And => format!("{x} & {y}"),
        BitFn::Or => format!("{x} | {y}"),
        BitFn::Shl => format!("{x} << {y}"),
        BitFn::Shr => format!("{x} >> {y}"),
    }
}

/// The atom `f(a, b)`, simplified; `None` on a concrete operand outside the domain.
pub fn bit(s: &mut Syms, f: BitFn, a: &Lin, b: &Lin) -> Option<Lin> {
    if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
        return eval(f, x, y).map(Lin::k);
    }
    let (a, b) = match f {
        BitFn::Pow2 | BitFn::Lg => (a.clone(), Lin::k(0)),
        // Commutative: one order.
        BitFn::Xor | BitFn::And | BitFn::Or if b < a => (b.clone(), a.clone()),
        _ => (a.clone(), b.clone()),
    };
    match f {
        BitFn::Xor if a == b => return Some(Lin::k(0)),
        BitFn::Xor | BitFn::Or if a.is_zero() => return Some(b),
        BitFn::And if a.is_zero() => return Some(Lin::k(0)),
        BitFn::And | BitFn::Or if a == b => return Some(a),
        BitFn::Shl if b.as_const() == Some(0) => return Some(a),
        // a << k == a * 2^k
        BitFn::Shl if b.as_const().is_some_and(|k| (0..=MAX_SHIFT).contains(&k)) => {
            return a.scale(1i64 << b.as_const()?)
        }
        _ => {}
    }
    Some(Lin::atom(s.intern(Atom::Bit(f, a, b))))
}

/// `2^e`.
pub fn pow2(s: &mut Syms, e: &Lin) -> Option<Lin> {
    bit(s, BitFn::Pow2, e, &Lin::k(0))
}

/// A bit operation of the language on symbolic operands.
pub fn binop(s: &mut Syms, op: BinOp, a: &Lin, b: &Lin) -> Option<Lin> {
    let f = match op {
        BinOp::Xor => BitFn::Xor,
        BinOp::And => BitFn::And,
        BinOp::Or => BitFn::Or,
        BinOp::Shl => {
            // 1 << k is pow2(k).
            if a.as_const() == Some(1) {
                return pow2(s, b);
            }
            BitFn::Shl
        }
        BinOp::Shr => BitFn::Shr,
        _ => return None,
    };
    bit(s, f, a, b)
}

/// `log2(x)` (`log`) or `pow2(x)` on a symbolic operand. `log2` is exact on powers of
/// two only (anything else is an error of the program), so it is defined here only
/// when `x` is `k * 2^e` with `k` a power of two: `e + log2(k)`.
pub fn log_pow(s: &mut Syms, log: bool, x: &Lin) -> Option<Lin> {
    if !log {
        return pow2(s, x);
    }
    if x.c != 0 || x.t.len() != 1 {
        return None;
    }
    let (a, k) = x.t[0];
    if k <= 0 || k & (k - 1) != 0 {
        return None;
    }
    let Atom::Bit(BitFn::Pow2, e, _) = s.atoms[a as usize].clone() else {
        return None;
    };
    e.add(&Lin::k(i64::from(k.trailing_zeros())))
}

/// Solves `d == 0` for one of `vars` through `^`: `d = k * (x ^ c) + r` with `k` = ±1,
/// `x` a variable and neither `c` nor `r` reading an unsolved variable gives
/// `x = (-r / k) ^ c`.
pub fn solve_xor(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    d: &Lin,
) -> Option<(AtomId, Lin)> {
    let free = |s: &Syms, l: &Lin| {
        vars.iter()
            .any(|x| !solved(*x) && (l.coeff(*x) != 0 || s.nested(l, *x)))
    };
    for (a, k) in &d.t {
        if *k != 1 && *k != -1 {
            continue;
        }
        let Atom::Bit(BitFn::Xor, l, r) = s.atoms[*a as usize].clone() else {
            continue;
        };
        let (_, rest) = d.split(*a);
        if free(s, &rest) {
            continue;
        }
        let e = rest.scale(-k)?;
        for (x, c) in [(&l, &r), (&r, &l)] {
            let [(v, 1)] = x.t.as_slice() else { continue };
            if x.c != 0 || !vars.contains(v) || solved(*v) || free(s, c) {
                continue;
            }
            let val = bit(s, BitFn::Xor, &e, c)?;
            return Some((*v, val));
        }
    }
    None
}

/// The shape of a power-of-two or reversed loop (`Range::Seq`).
pub enum Shape {
    /// `lo + step*k`, `k` in `0..trip`, visited in reverse when `rev`.
    Arith { lo: Lin, step: Lin, rev: bool },
    /// `2^(a + b*k)`, `k` in `0..trip`, visited in reverse when `rev`.
    Geo { a: i64, b: i64, rev: bool },
}

/// The trip count and shape of `for x in lo..hi step s` (`*s` when `geometric`,
/// reversed when `rev`); `Err` names what has no closed form here: a geometric
/// loop must start at a constant power of two and multiply by a constant power of
/// two (2, 4, ...), an arithmetic one a step of at least 1 (possibly symbolic).
pub fn seq(
    s: &mut Syms,
    lo: &Lin,
    hi: &Lin,
    step: &Lin,
    geometric: bool,
    rev: bool,
) -> Result<(Lin, Shape), String> {
    let ov = || "arithmetic overflow".to_string();
    if !geometric {
        if s.lb(step).is_none_or(|l| l < 1) {
            return Err("a reversed loop whose step is not shown to be at least 1".into());
        }
        let trip = s.trip(lo, hi, step).ok_or_else(ov)?;
        let shape = Shape::Arith {
            lo: lo.clone(),
            step: step.clone(),
            rev,
        };
        return Ok((trip, shape));
    }
    let Some(st) = step.as_const() else {
        return Err("a power-of-two loop whose factor is not a constant".into());
    };
    let pow = |v: i64| v >= 1 && v & (v - 1) == 0;
    let Some(l) = lo.as_const().filter(|v| pow(*v)) else {
        return Err(
            "a geometric loop (`step *f`) that does not start at a constant power of two".into(),
        );
    };
    if !(pow(st) && st >= 2) {
        return Err(format!(
            "a geometric loop multiplying by {st}: only powers of two (2, 4, ...) have a \
             closed form with `log2`"
        ));
    }
    let a = i64::from(l.trailing_zeros());
    let b = i64::from(st.trailing_zeros());
    // 2^(a + b k) < hi  <=>  a + b k < lg(hi): trip = max(0, ceil((lg(hi) - a) / b)).
    let g = bit(s, BitFn::Lg, hi, &Lin::k(0)).ok_or_else(ov)?;
    let q = s
        .ceil_div(&g.add(&Lin::k(-a)).ok_or_else(ov)?, &Lin::k(b))
        .ok_or_else(ov)?;
    let trip = s.max(&Lin::k(0), &q).ok_or_else(ov)?;
    Ok((trip, Shape::Geo { a, b, rev }))
}

/// The loop variable's value in iteration `j` (execution order) of a loop of `trip`
/// iterations.
pub fn value(s: &mut Syms, shape: &Shape, j: AtomId, trip: &Lin) -> Option<Lin> {
    let (rev, k) = match shape {
        Shape::Arith { rev, .. } | Shape::Geo { rev, .. } => (*rev, Lin::atom(j)),
    };
    let k = if rev {
        trip.add(&Lin::k(-1))?.sub(&k)?
    } else {
        k
    };
    match shape {
        Shape::Arith { lo, step, .. } => {
            let sk = s.mul(step, &k)?;
            lo.add(&sk)
        }
        Shape::Geo { a, b, .. } => pow2(s, &k.scale(*b)?.add(&Lin::k(*a))?),
    }
}

/// The 64-bit two's complement image of an integer.
fn bv(x: &Int) -> BV {
    BV::from_int(x, 64)
}

fn int(b: &BV) -> Int {
    Int::from_bv(b, true)
}

/// `2^k` on `0..=62`, else 0: total, so it constrains no operand (a symbolic term such
/// as `pow2(i)` for a generic cell index `i` is evaluated on cells no writer reaches too).
fn z3_pow2(k: &Int) -> Int {
    let ok = Bool::and(&[k.ge(0), k.le(MAX_SHIFT)]);
    ok.ite(&int(&BV::from_u64(1, 64).bvshl(bv(k))), &Int::from_i64(0))
}

/// The Z3 term of `f(x, y)`; facts that define it go to `side`.
pub fn z3(f: BitFn, x: &Int, y: &Int, side: &mut Vec<Bool>) -> Int {
    match f {
        BitFn::Pow2 => z3_pow2(x),
        BitFn::Lg => {
            // k = 0 for x <= 1, 63 above 2^62, else 2^(k-1) < x <= 2^k.
            let k = Int::fresh_const("lg");
            let p = z3_pow2(&k);
            let q = z3_pow2(&(k.clone() - Int::from_i64(1)));
            let top = Int::from_i64(1i64 << MAX_SHIFT);
            side.push(x.le(1).implies(k.eq(Int::from_i64(0))));
            side.push(x.gt(&top).implies(k.eq(Int::from_i64(63))));
            let mid = Bool::and(&[x.gt(1), x.le(&top)]);
            side.push(mid.implies(Bool::and(&[k.ge(1), k.le(MAX_SHIFT), q.lt(x), x.le(&p)])));
            k
        }
        BitFn::Xor => int(&bv(x).bvxor(bv(y))),
        BitFn::And => int(&bv(x).bvand(bv(y))),
        BitFn::Or => int(&bv(x).bvor(bv(y))),
        // Total as well: an amount outside 0..=62 gives 0.
        BitFn::Shl | BitFn::Shr => {
            let ok = Bool::and(&[y.ge(0), y.le(MAX_SHIFT)]);
            let v = if f == BitFn::Shl {
                int(&bv(x).bvshl(bv(y)))
            } else {
                int(&bv(x).bvashr(bv(y)))
            };
            ok.ite(&v, &Int::from_i64(0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lg_counts_the_powers_of_two_below() {
        for x in -3..=70i64 {
            let n = (0..63).filter(|k| (1i64 << k) < x).count() as i64;
            assert_eq!(lg(x), n, "{x}");
        }
    }

    #[test]
    fn log2_of_a_power_is_its_exponent() {
        let mut s = Syms::default();
        let e = Lin::atom(s.new_iter(Lin::k(5), collc_spec::ir::Id::new(0)));
        let p = pow2(&mut s, &e).expect("pow2");
        assert_eq!(log_pow(&mut s, true, &p), Some(e.clone()));
        let p4 = p.scale(4).expect("scale");
        assert_eq!(log_pow(&mut s, true, &p4), e.add(&Lin::k(2)));
        assert_eq!(log_pow(&mut s, true, &p.scale(3).expect("scale")), None);
        assert_eq!(
            log_pow(&mut s, true, &p.add(&Lin::k(1)).expect("add")),
            None
        );
    }
}
