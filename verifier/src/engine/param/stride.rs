//! Loops with a symbolic step (`for c in 0..n step CH`, `for l in G .. P step G`):
//! the step must be at least 1 on the whole declared domain (the parameters' domains
//! after the `require`s tightened them), else the loop is declined with the form named.
//! Iteration `j` then has the value `lo + s*j` (a product atom `s*j` when `s` is
//! symbolic) and the loop `max(0, ceil((hi - lo) / s))` iterations; a division or
//! remainder of a multiple of `s` by `s` is exact (`Syms::div`), so `c / CH` of
//! `c = CH*j` is `j`.

use crate::engine::sym::{Atom, AtomId, Formula, Lin, Printer, Syms};
use collc_spec::ir::Protocol;

/// `Ok` when the step `s` is at least 1 for every value of its atoms' domains.
pub fn positive(s: &Syms, p: &Protocol, step: &Lin) -> Result<(), String> {
    if s.lb(step).is_some_and(|l| l >= 1) {
        return Ok(());
    }
    Err(format!(
        "a loop whose step `{}` is not shown to be at least 1 by the declared domains and \
         `require`s",
        Printer { syms: s, p }.lin(step)
    ))
}

/// A strided loop's variable solved from one cell equation ([`solve`]).
pub struct Solved {
    /// The variable `x`.
    pub var: AtomId,
    /// Its value `e / s`.
    pub val: Lin,
    /// The product atom `s*x` and its value `e` (exact under the fact `e % s == 0`).
    pub product: (AtomId, Lin),
    /// Side conditions of the solution: `e % s == 0`, and the loop's range when `x` is
    /// its own variable.
    pub facts: Vec<Formula>,
    /// True when the facts state the loop's range (`0 <= x < trip`).
    pub ranged: bool,
}

/// Solves `d == 0` for a variable `x` of a strided loop: `d = k * (s * x) + r` with
/// `k` = ±1, `s` a symbolic value of at least 1 that reads no unsolved variable and `r`
/// not reading `x`, gives `x = e / s` for `e = -r / k`, exact when `e % s == 0` (the
/// returned fact). The iteration of `for l in G .. P step G` that reaches rank `o` is
/// `(o - G) / G`, when `(o - G) % G == 0`. The product `s*x` the loop's value reads is
/// `e` itself under that fact (`s*(e / s) + e % s == e`): the value `lo + s*x` the path
/// condition compares (`p != me`) is the target, not a product of `s` and a quotient.
pub fn solve(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    d: &Lin,
) -> Option<Solved> {
    let reads = |s: &Syms, l: &Lin, x: AtomId| l.coeff(x) != 0 || s.nested(l, x);
    for (a, k) in &d.t {
        if *k != 1 && *k != -1 {
            continue;
        }
        let Atom::Mul(u, v) = s.atoms[*a as usize].clone() else {
            continue;
        };
        let (_, rest) = d.split(*a);
        for (xl, step) in [(&u, &v), (&v, &u)] {
            let [(x, 1)] = xl.t.as_slice() else { continue };
            if xl.c != 0 || !vars.contains(x) || solved(*x) || reads(s, &rest, *x) {
                continue;
            }
            if vars.iter().any(|y| !solved(*y) && reads(s, step, *y)) {
                continue;
            }
            if s.lb(step).is_none_or(|l| l < 1) {
                continue;
            }
            let e = rest.scale(-k)?;
            let val = s.div(&e, step)?;
            let mut facts = vec![Formula::Eq0(divisible(s, &e, step)?)];
            // With `e % s == 0`: `0 <= x < max(0, ceil(D / s))` iff `0 <= e < D` (`D` the
            // loop's range `hi - lo`): linear facts instead of divisions for Z3.
            let ranged = match s.strides.get(x) {
                Some((d, st)) if st == step => {
                    facts.push(Formula::Ge0(lower(s, &e, step)));
                    facts.push(Formula::Ge0(d.sub(&e)?.add(&Lin::k(-1))?));
                    true
                }
                _ => false,
            };
            return Some(Solved {
                var: *x,
                val,
                product: (*a, e),
                facts,
                ranged,
            });
        }
    }
    None
}

/// The fact `e >= 0` of a strided loop that starts at a residue: with `e = t - r`, `t`
/// the cell's value and `r` the start, `0 <= r < s` (`r = y % s`, or a constant below
/// every value of `s`) and `e % s == 0`, `e >= 0` iff `t >= 0` (`lower_bound_theorem`
/// below), so the fact is `t >= 0`, which reads no remainder: the members of the class
/// `for p in me % G .. P step G` visits are the `t` with `(t - me) % G == 0` and `0 <= t <
/// P`, whichever side of the balance (`p != me` on the writer's or on the owner's) names
/// the start.
///
/// Theorem: `s >= 1`, `0 <= r < s`, `s | t - r`: `t - r >= 0 <=> t >= 0`. (=>) `t >= r >=
/// 0`. (<=) `t - r = s*k` for an integer `k`, and `s*k = t - r > -s` (as `t >= 0`, `r <
/// s`), so `k > -1`, `k >= 0` and `t - r = s*k >= 0`.
fn lower(s: &Syms, e: &Lin, step: &Lin) -> Lin {
    let start = |s: &Syms, a: AtomId| matches!(&s.atoms[a as usize], Atom::Mod(_, m) if m == step);
    let mods: Vec<AtomId> =
        e.t.iter()
            .filter(|(a, k)| *k == -1 && start(s, *a))
            .map(|(a, _)| *a)
            .collect();
    match mods.as_slice() {
        // e = t - y % s
        [r] if e.c == 0 => e.split(*r).1,
        // e = t - c, 0 <= c < s
        [] if e.c <= 0 && s.lb(step).is_some_and(|l| -e.c < l) => Lin {
            c: 0,
            t: e.t.clone(),
        },
        _ => e.clone(),
    }
}

/// A value that is 0 exactly when `m` (>= 1) divides `e`: `e % m` or `(-e) % m`
/// (simplified by the identities of modular arithmetic), whichever is the smaller
/// term, so that `(o - i) % G == 0` and `(i - o) % G == 0` are one condition.
fn divisible(s: &mut Syms, e: &Lin, m: &Lin) -> Option<Lin> {
    let a = super::invert::rem(s, e, m)?;
    let b = super::invert::rem(s, &e.scale(-1)?, m)?;
    Some(if b < a { b } else { a })
}

#[cfg(test)]
mod tests {
    use z3::ast::{Bool, Int};
    use z3::{SatResult, Solver};

    /// The members `x % s + s*j`, `j` in `0..max(0, ceil((hi - x % s) / s))`, of the loop
    /// `for p in x % s .. hi step s`.
    fn visited(x: i64, s: i64, hi: i64) -> Vec<i64> {
        let r = x.rem_euclid(s);
        let trip = (hi - r + s - 1).div_euclid(s).max(0);
        (0..trip).map(|j| r + s * j).collect()
    }

    /// `lower`'s theorem and the membership it gives, on all small values: `o` is visited
    /// by `for p in x % s .. hi step s` iff `(o - x) % s == 0` and `0 <= o < hi` — the
    /// solved form (`j = (o - x % s) / s` with `(o - x % s) % s == 0`, `o - x % s >= 0`,
    /// `o - x % s < hi - x % s`) with its lower bound replaced by `o >= 0`.
    #[test]
    fn membership_of_a_loop_from_a_residue_is_a_congruence_and_bounds() {
        for s in 1..8i64 {
            for r in 0..s {
                for t in -30..30i64 {
                    if (t - r).rem_euclid(s) == 0 {
                        assert_eq!(t - r >= 0, t >= 0, "s {s} r {r} t {t}");
                    }
                }
            }
            // The facts of the product the symbolic proof below uses.
            for k in -10..10i64 {
                assert!(k < 0 || s * k >= 0);
                assert!(k > -1 || s * k <= -s);
            }
            for x in -12..24i64 {
                for hi in -4..26i64 {
                    let v = visited(x, s, hi);
                    for o in -12..30i64 {
                        let member = (o - x).rem_euclid(s) == 0 && 0 <= o && o < hi;
                        assert_eq!(v.contains(&o), member, "x {x} s {s} hi {hi} o {o}");
                        let r = x.rem_euclid(s);
                        let solved = (o - r).rem_euclid(s) == 0 && o - r >= 0 && o < hi;
                        assert_eq!(solved, member, "x {x} s {s} hi {hi} o {o}");
                    }
                }
            }
        }
    }

    fn unsat(b: &Bool) {
        let s = Solver::new();
        let mut params = z3::Params::new();
        params.set_u32("rlimit", 5_000_000);
        s.set_params(&params);
        s.assert(b.not());
        assert_eq!(s.check(), SatResult::Unsat, "{b}");
    }

    /// The same as theorems of the integers (Z3): for every step `s` of G's domain in the
    /// fixtures (`1..=64`, a constant per query, so `%` and `/` are linear), with `r`, `t`,
    /// `x`, `hi` and `j` unbounded; and for a symbolic `s >= 1` from the two facts of the
    /// product the proof uses (`k >= 0 => s*k >= 0`, `k <= -1 => s*k <= -s`), with `s*k`
    /// an unconstrained integer.
    #[test]
    fn membership_of_a_loop_from_a_residue_is_a_theorem() {
        let v = |n: &str| Int::new_const(n);
        let (r, t, x, hi, j) = (v("r"), v("t"), v("x"), v("hi"), v("j"));
        let zero = Int::from_i64(0);
        for step in 1..=64i64 {
            let s = Int::from_i64(step);
            // 0 <= r < s, s | t - r: t - r >= 0 <=> t >= 0.
            let pre = Bool::and(&[&r.ge(&zero), &r.lt(&s), &(&t - &r).modulo(&s).eq(&zero)]);
            unsat(&pre.implies((&t - &r).ge(&zero).eq(t.ge(&zero))));
            // Visited (x % s + s*j == t for a j >= 0, t < hi) => the congruence and bounds.
            let start = x.modulo(&s);
            let member = Bool::and(&[&(&t - &x).modulo(&s).eq(&zero), &t.ge(&zero), &t.lt(&hi)]);
            let visit = Bool::and(&[&j.ge(&zero), &(&start + &s * &j).eq(&t), &t.lt(&hi)]);
            unsat(&visit.implies(&member));
            // The congruence and bounds => the iteration (t - x % s) / s reaches t.
            let q = (&t - &start).div(&s);
            let back = Bool::and(&[&q.ge(&zero), &(&start + &s * &q).eq(&t)]);
            unsat(&member.implies(&back));
        }
        // Symbolic s: t - r = m for the product m = s*k.
        let (s, k, m) = (v("s"), v("k"), v("m"));
        let facts = Bool::and(&[
            &s.ge(Int::from_i64(1)),
            &k.ge(&zero).implies(m.ge(&zero)),
            &k.le(Int::from_i64(-1)).implies(m.le(&(&zero - &s))),
            &r.ge(&zero),
            &r.lt(&s),
            &(&t - &r).eq(&m),
        ]);
        unsat(&facts.implies((&t - &r).ge(&zero).eq(t.ge(&zero))));
    }
}
