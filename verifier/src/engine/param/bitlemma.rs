//! Queries over bit operations proved without bit-blasting. Every bit atom (`^ & | >>`,
//! `pow2`, `lg`) becomes an opaque integer, constrained only by facts that hold of the
//! 64-bit integers the language computes with, whatever their magnitude (below); the
//! query is then posed over the integers. Its cost does not depend on how large the
//! declared bounds are (no vector width, no bits of `P` to search), which the exact
//! bit-vector encoding ([`super::bvq`]) cannot offer: there every bit of a bounded value
//! is a SAT variable.
//!
//! The facts, with `2^E` a *power view* (a `pow2(E)` atom on `0..=62`, a literal power
//! of two, or an `X` with `X >= 1` and `(X - 1) & X == 0`, i.e. `X = 2^E` for an
//! `E` in `0..=62`):
//!
//! - powers: `2^E >= E + 1`; `E_i < E_j ⇔ 2^E_i < 2^E_j`, then also `2·2^E_i <= 2^E_j`;
//!   `lg(X) = L`: `L = 0` for `X <= 1`, `1 <= L <= 63` above, `2^E < X ⇔ E < L`;
//! - `x ^ 2^k` is `x + 2^k` or `x - 2^k` (one bit flips), `x + 2^k` when
//!   `0 <= x < 2^k`, and below `2^m` exactly when `x` is, for `k < m` (the bits at
//!   `m` and above do not change);
//! - `x & y` with `y` equal to a power `2^k` is 0 or `2^k`, 0 when `0 <= x < 2^k`;
//! - the lowest set bit `x & -x` and remainders by a symbolic divisor, with a remainder by
//!   a power read through the lowest set bit of its argument: [`super::lowbit`];
//! - on non-negative operands: `|x - y| <= x ^ y <= x + y`, `max(x, y) <= x | y <= x + y`,
//!   `x & y <= min(x, y)`, and `^ |` stay below `2^m` when both operands do;
//!   `0 <= x >> s <= x` for `s` in `0..=62`.
//!
//! Each holds of the real operations (checked on all small operands in the tests), so
//! the encoding over-approximates: a query proved here holds; anything else says
//! nothing, and the caller poses the exact query.

use super::lowbit::{self, Low, Rem};
use crate::engine::smt::{Prop, Tr};
use crate::engine::sym::{Atom, AtomId, BitFn, CondId, Lin, Syms};
use collc_spec::ir::Protocol;
use std::collections::HashMap;
use z3::ast::{Bool, Int};
use z3::{Params, SatResult, Solver};

/// Z3's deterministic resource limit of one query here (`rlimit` units): the queries
/// are small linear problems; one that needs more is left to the exact encoding.
const RLIMIT: u32 = 2_000_000;

/// `v = 2^e` wherever `c` holds.
#[derive(Clone)]
pub(super) struct View {
    /// The power as a term of the query (to recognise it as an operand).
    pub lin: Lin,
    pub v: Int,
    pub e: Int,
    pub c: Bool,
}

/// True when `assumptions ∧ extra ⇒ prop` is proved with every bit atom opaque and
/// constrained by the facts above only (with those of [`super::lowbit`]).
///
/// Answers are kept in `memo` by the query's terms (before the facts, which follow from
/// them): a query posed again, by another obligation or claim, is answered once.
pub fn valid(
    memo: &mut Memo,
    p: &Protocol,
    s: &Syms,
    assumptions: &[CondId],
    extra: &[CondId],
    prop: &Prop,
) -> bool {
    let mut tr = Tr::opaque_bits(p, s);
    let mut asserts: Vec<Bool> = assumptions
        .iter()
        .chain(extra)
        .map(|c| tr.cond(*c))
        .collect();
    asserts.push(match prop {
        Prop::Ge0(l) => tr.lin(l).lt(0),
        Prop::Eq0(l) => tr.lin(l).eq(Int::from_i64(0)).not(),
        Prop::Never(g) => tr.guard(g),
        Prop::Equiv(a, b) => tr.cond(*a).eq(tr.cond(*b)).not(),
    });
    if tr.opaque().is_empty() {
        return false;
    }
    let mut keyed = asserts.clone();
    keyed.extend(tr.side());
    let key = Bool::and(&keyed).to_string();
    if let Some(r) = memo.0.get(&key) {
        return *r;
    }
    asserts.extend(facts(s, &mut tr));
    asserts.extend(tr.side());
    // The linear-integer solver: about a fifth of the general one's time on these small
    // queries (its set-up dominates). A product of two symbolic values or a quotient by a
    // symbolic divisor is outside it: unknown, and the exact encoding takes the query
    // (remainders by a symbolic divisor are opaque, with the facts of `lowbit`).
    let solver = Solver::new_for_logic("QF_LIA").unwrap_or_default();
    let mut params = Params::new();
    params.set_u32("rlimit", RLIMIT);
    solver.set_params(&params);
    for a in &asserts {
        solver.assert(a);
    }
    let r = solver.check() == SatResult::Unsat;
    memo.0.insert(key, r);
    r
}

/// Answers of the width-free queries posed so far, by their terms.
#[derive(Default)]
pub struct Memo(HashMap<String, bool>);

/// One bit atom: its function, operands and opaque value.
struct Op {
    id: AtomId,
    f: BitFn,
    x: Lin,
    y: Lin,
    tx: Int,
    ty: Int,
    v: Int,
}

/// The facts about every opaque atom of `tr` (translating their operands may meet more).
fn facts(s: &Syms, tr: &mut Tr) -> Vec<Bool> {
    let (ops, rems) = opaque(s, tr);
    let mut out = Vec::new();
    let (views, mut lows) = power_views(&ops, &mut out);
    let powers = rem_powers(&rems, &views);
    let (fresh, of) = rem_lows(&rems, &lows, &mut out);
    for (r, j) in rems.iter().zip(of) {
        if let Some(c) = powers.get(&r.ylin) {
            out.push(lowbit::rem_of_power(r, &fresh[j], c));
        }
    }
    lows.extend(fresh);
    for (i, a) in views.iter().enumerate() {
        out.push(power(a));
        for b in &views[i + 1..] {
            out.push(pair(a, b));
            out.push(pair(b, a));
        }
    }
    for o in &ops {
        out.extend(op(o, &views));
    }
    for (i, a) in lows.iter().enumerate() {
        for w in &views {
            out.push(lowbit::of_power(a, w));
            for b in &lows[i + 1..] {
                out.extend(lowbit::step(a, b, w));
                out.extend(lowbit::step(b, a, w));
            }
        }
    }
    for (i, a) in rems.iter().enumerate() {
        out.push(lowbit::rem_alone(a));
        for b in rems[i + 1..].iter().filter(|b| b.ylin == a.ylin) {
            out.push(lowbit::rem_pair(a, b));
        }
    }
    out
}

/// The remainders' divisors that are powers of two, by the divisor's term: the condition
/// under which it is one. A divisor is a power where a power view is (`w.c`), times any
/// literal power of two (`2 * m` for a loop `m in 1..P step *2`: a power of the integers
/// whatever `m`'s exponent, so no exponent is named).
fn rem_powers(rems: &[Rem], views: &[View]) -> HashMap<Lin, Bool> {
    let mut out = HashMap::new();
    for r in rems {
        if out.contains_key(&r.ylin) {
            continue;
        }
        // Every view of that term (a lowest set bit has one per operand side).
        let cs: Vec<Bool> = views
            .iter()
            .filter(|w| (0..=62).any(|i| w.lin.scale(1i64 << i).as_ref() == Some(&r.ylin)))
            .map(|w| w.c.clone())
            .collect();
        if !cs.is_empty() {
            out.insert(r.ylin.clone(), Bool::or(&cs));
        }
    }
    out
}

/// A fresh lowest set bit of each distinct remainder argument, and which of them each
/// remainder reads; the facts about a low bit alone and its equality to every other low
/// bit of an equal operand are pushed to `out`. Sound: the real `x & -x` satisfies every
/// fact stated of it ([`lowbit`], L4).
fn rem_lows(rems: &[Rem], lows: &[Low], out: &mut Vec<Bool>) -> (Vec<Low>, Vec<usize>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut fresh: Vec<Low> = Vec::new();
    let mut of = Vec::new();
    for r in rems {
        let n = fresh.len();
        let j = *seen.entry(r.x.to_string()).or_insert(n);
        of.push(j);
        if j < n {
            continue;
        }
        let l = Low {
            x: r.x.clone(),
            v: Int::new_const(format!("lowrem#{n}")),
        };
        out.extend(lowbit::alone(&l));
        for o in lows.iter().chain(&fresh) {
            out.push(lowbit::same(&l, o));
        }
        fresh.push(l);
    }
    (fresh, of)
}

/// The bit atoms and remainders among the opaque atoms of `tr`, translated.
fn opaque(s: &Syms, tr: &mut Tr) -> (Vec<Op>, Vec<Rem>) {
    let mut ops = Vec::new();
    let mut rems = Vec::new();
    let mut i = 0;
    while i < tr.opaque().len() {
        let a = tr.opaque()[i];
        i += 1;
        let (f, x, y) = match s.atoms[a as usize].clone() {
            Atom::Bit(f, x, y) => (f, x, y),
            Atom::Mod(x, y) => {
                let (tx, ty) = (tr.lin(&x), tr.lin(&y));
                let v = tr.atom(a);
                rems.push(Rem {
                    x: tx,
                    y: ty,
                    ylin: y,
                    v,
                });
                continue;
            }
            _ => continue,
        };
        let (tx, ty) = (tr.lin(&x), tr.lin(&y));
        let v = tr.atom(a);
        ops.push(Op {
            id: a,
            f,
            x,
            y,
            tx,
            ty,
            v,
        });
    }
    (ops, rems)
}

/// The power-of-two views the bit atoms give (`pow2(e)`, `x & (x - 1) == 0`, constant
/// powers of two operands) and the low bits (`x & -x`), with the facts about a low bit
/// alone and a `pow2` out of range pushed to `out`.
fn power_views(ops: &[Op], out: &mut Vec<Bool>) -> (Vec<View>, Vec<Low>) {
    let mut views = Vec::new();
    let mut lows = Vec::new();
    for (n, o) in ops.iter().enumerate() {
        if o.f == BitFn::And && o.x.scale(-1).as_ref() == Some(&o.y) {
            // `x & -x` is `(-x) & x`: either operand may be the positive one.
            for (side, t) in [&o.tx, &o.ty].into_iter().enumerate() {
                let low = Low {
                    x: t.clone(),
                    v: o.v.clone(),
                };
                out.extend(lowbit::alone(&low));
                views.push(View {
                    lin: Lin::atom(o.id),
                    v: o.v.clone(),
                    e: Int::new_const(format!("el#{n}#{side}")),
                    c: lowbit::view_cond(&low),
                });
                lows.push(low);
            }
        }
        match o.f {
            BitFn::Pow2 => {
                let c = in_shift(&o.tx);
                out.push(c.not().implies(o.v.eq(Int::from_i64(0))));
                views.push(View {
                    lin: Lin::atom(o.id),
                    v: o.v.clone(),
                    e: o.tx.clone(),
                    c,
                });
            }
            BitFn::And => {
                for (lo, hi, thi) in [(&o.x, &o.y, &o.ty), (&o.y, &o.x, &o.tx)] {
                    if hi.sub(lo) == Some(Lin::k(1)) {
                        views.push(View {
                            lin: hi.clone(),
                            v: thi.clone(),
                            e: Int::new_const(format!("e#{n}")),
                            c: Bool::and(&[o.v.eq(Int::from_i64(0)), thi.ge(1)]),
                        });
                    }
                }
            }
            _ => {}
        }
        for l in [&o.x, &o.y] {
            if let Some(k) = l.as_const().filter(|k| *k >= 1 && k & (k - 1) == 0) {
                views.push(View {
                    lin: l.clone(),
                    v: Int::from_i64(k),
                    e: Int::from_i64(i64::from(k.trailing_zeros())),
                    c: Bool::from_bool(true),
                });
            }
        }
    }
    (views, lows)
}

/// `0 <= e <= 62`: where `pow2(e)` is `2^e`.
fn in_shift(e: &Int) -> Bool {
    Bool::and(&[e.ge(0), e.le(62)])
}

/// What one power view says alone.
fn power(a: &View) -> Bool {
    let one = Int::from_i64(1);
    a.c.implies(Bool::and(&[
        in_shift(&a.e),
        a.v.ge(&one),
        a.v.ge(&a.e + &one),
        a.e.eq(Int::from_i64(0)).eq(a.v.eq(&one)),
    ]))
}

/// Two power views: the order of the exponents is the order of the powers.
fn pair(a: &View, b: &View) -> Bool {
    let both = Bool::and(&[a.c.clone(), b.c.clone()]);
    let two = Int::from_i64(2);
    both.implies(Bool::and(&[
        a.e.lt(&b.e).eq(a.v.lt(&b.v)),
        a.e.eq(&b.e).eq(a.v.eq(&b.v)),
        a.e.lt(&b.e).implies((&a.v * &two).le(&b.v)),
        b.e.eq(&a.e + Int::from_i64(1)).implies(b.v.eq(&a.v * &two)),
    ]))
}

/// The facts about one atom, given the power views of the query.
fn op(o: &Op, views: &[View]) -> Vec<Bool> {
    let (x, y, v) = (&o.tx, &o.ty, &o.v);
    let zero = Int::from_i64(0);
    let nonneg = Bool::and(&[x.ge(0), y.ge(0)]);
    let mut out = Vec::new();
    // Below every power both non-negative operands are below.
    let below = |out: &mut Vec<Bool>| {
        for w in views {
            let pre = Bool::and(&[nonneg.clone(), w.c.clone(), x.lt(&w.v), y.lt(&w.v)]);
            out.push(pre.implies(v.lt(&w.v)));
        }
    };
    // The operand that is a power view, and the other one.
    let bit = |l: &Lin| views.iter().find(|w| w.lin == *l);
    let flips = [(bit(&o.y), x), (bit(&o.x), y)];
    match o.f {
        BitFn::Lg => {
            out.push(x.le(1).implies(v.eq(&zero)));
            out.push(x.gt(1).implies(v.ge(1)));
            out.push(Bool::and(&[v.ge(0), v.le(63)]));
            for w in views {
                out.push(w.c.implies(w.v.lt(x).eq(w.e.lt(v))));
                if w.lin == o.x {
                    out.push(w.c.implies(v.eq(&w.e)));
                }
            }
        }
        BitFn::Xor => {
            out.push(nonneg.implies(Bool::and(&[
                v.ge(&zero),
                v.le(x + y),
                v.ge(x - y),
                v.ge(y - x),
            ])));
            below(&mut out);
            for (w, z) in flips {
                let Some(w) = w else { continue };
                out.push(w.c.implies(Bool::or(&[v.eq(z + &w.v), v.eq(z - &w.v)])));
                let small = Bool::and(&[w.c.clone(), z.ge(0), z.lt(&w.v)]);
                out.push(small.implies(v.eq(z + &w.v)));
                for m in views {
                    let pre = Bool::and(&[w.c.clone(), m.c.clone(), z.ge(0), w.e.lt(&m.e)]);
                    out.push(pre.implies(z.lt(&m.v).eq(v.lt(&m.v))));
                }
            }
        }
        BitFn::And => {
            out.push(Bool::or(&[x.ge(0), y.ge(0)]).implies(v.ge(&zero)));
            out.push(x.ge(0).implies(v.le(x)));
            out.push(y.ge(0).implies(v.le(y)));
            // An operand equal to a power (not only one written as it: `(m - 1) & m`
            // with `m` the lowest set bit of a rank).
            for w in views {
                for (z, t) in [(x, y), (y, x)] {
                    let on = Bool::and(&[w.c.clone(), t.eq(&w.v)]);
                    out.push(on.implies(Bool::or(&[v.eq(&zero), v.eq(&w.v)])));
                    let small = Bool::and(&[on, z.ge(0), z.lt(&w.v)]);
                    out.push(small.implies(v.eq(&zero)));
                }
            }
        }
        BitFn::Or => {
            out.push(nonneg.implies(Bool::and(&[v.ge(x), v.ge(y), v.le(x + y)])));
            below(&mut out);
        }
        BitFn::Shr => {
            let pre = Bool::and(&[x.ge(0), in_shift(y)]);
            out.push(pre.implies(Bool::and(&[v.ge(&zero), v.le(x)])));
        }
        BitFn::Pow2 | BitFn::Shl => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::param::bits::{eval, lg};
    use z3::ast::Ast;

    /// The power views of 1, 2, 4, ..., 64.
    fn powers() -> Vec<View> {
        (0..7)
            .map(|e| View {
                lin: Lin::k(1 << e),
                v: Int::from_i64(1 << e),
                e: Int::from_i64(e),
                c: Bool::from_bool(true),
            })
            .collect()
    }

    fn holds(b: &Bool) -> bool {
        b.simplify().as_bool() == Some(true)
    }

    #[test]
    fn every_fact_holds_of_the_real_operations() {
        let views = powers();
        for f in [BitFn::Xor, BitFn::And, BitFn::Or, BitFn::Shr, BitFn::Lg] {
            let ys: Vec<i64> = if f == BitFn::Lg {
                vec![0]
            } else {
                (-3..70).collect()
            };
            for x in -9..70i64 {
                for &y in &ys {
                    let Some(r) = eval(f, x, y) else { continue };
                    let o = Op {
                        id: 0,
                        f,
                        x: Lin::k(x),
                        y: Lin::k(y),
                        tx: Int::from_i64(x),
                        ty: Int::from_i64(y),
                        v: Int::from_i64(r),
                    };
                    for b in op(&o, &views) {
                        assert!(holds(&b), "{f:?} {x} {y} = {r}: {b}");
                    }
                }
            }
        }
        assert_eq!(lg(64), 6);
    }

    /// `o ^ 2^k < P` for `o < P` and `k < lg(P) + off`, with `P` in `1..=65536` a power of
    /// two when `pow` (`(P - 1) & P == 0`).
    fn partner_below_p(off: i64, pow: bool) -> bool {
        use crate::engine::param::bits;
        use collc_spec::ir::BinOp;
        let text = include_str!("../../../../examples/allreduce_recursive_doubling.coll");
        let Some(p) = collc_spec::lowered(text).protocol else {
            panic!("the example validates")
        };
        let mut s = Syms::with_bounds([(p.world, (1, 65536))].into_iter().collect());
        let w = s.param(p.world);
        let lgp = bits::bit(&mut s, BitFn::Lg, &w, &Lin::k(0)).expect("lg");
        let k = Lin::atom(s.new_iter(
            lgp.add(&Lin::k(off)).expect("add"),
            collc_spec::ir::Id::new(0),
        ));
        let o = Lin::atom(s.new_iter(w.clone(), collc_spec::ir::Id::new(0)));
        let d = bits::pow2(&mut s, &k).expect("pow2");
        let x = bits::binop(&mut s, BinOp::Xor, &o, &d).expect("xor");
        let below = w.sub(&x).and_then(|l| l.add(&Lin::k(-1))).expect("sub");
        let mut assume = Vec::new();
        if pow {
            let m = w.add(&Lin::k(-1)).expect("add");
            let and = bits::binop(&mut s, BinOp::And, &m, &w).expect("and");
            let crate::engine::sym::CondV::Sym(c) =
                s.formula(crate::engine::sym::Formula::Eq0(and))
            else {
                panic!("a symbolic condition")
            };
            assume.push(c);
        }
        valid(
            &mut Memo::default(),
            &p,
            &s,
            &assume,
            &[],
            &Prop::Ge0(below),
        )
    }

    #[test]
    fn the_partner_of_a_power_of_two_world_is_proved_in_range_and_nothing_more() {
        assert!(partner_below_p(0, true));
        // k = lg(P): o ^ P >= P. P = 3, o = 1, k = 1: 1 ^ 2 = 3.
        assert!(!partner_below_p(1, true));
        assert!(!partner_below_p(0, false));
    }

    #[test]
    fn power_views_are_ordered_like_their_exponents() {
        let views = powers();
        for a in &views {
            assert!(holds(&power(a)));
            for b in &views {
                assert!(holds(&pair(a, b)), "{} {}", a.v, b.v);
            }
        }
    }
}
