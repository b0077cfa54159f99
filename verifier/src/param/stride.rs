//! Loops with a symbolic step (`for c in 0..n step CH`, `for l in G .. P step G`):
//! the step must be at least 1 on the whole declared domain (the parameters' domains
//! after the `require`s tightened them), else the loop is declined with the form named.
//! Iteration `j` then has the value `lo + s*j` (a product atom `s*j` when `s` is
//! symbolic) and the loop `max(0, ceil((hi - lo) / s))` iterations; a division or
//! remainder of a multiple of `s` by `s` is exact (`Syms::div`), so `c / CH` of
//! `c = CH*j` is `j`.

use crate::sym::{Atom, AtomId, Formula, Lin, Printer, Syms};
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

/// Solves `d == 0` for a variable `x` of a strided loop: `d = k * (s * x) + r` with
/// `k` = ±1, `s` a symbolic value of at least 1 that reads no unsolved variable and `r`
/// not reading `x`, gives `x = e / s` for `e = -r / k`, exact when `e % s == 0` (the
/// returned fact). The iteration of `for l in G .. P step G` that reaches rank `o` is
/// `(o - G) / G`, when `(o - G) % G == 0`.
pub fn solve(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    d: &Lin,
) -> Option<(AtomId, Lin, Vec<Formula>, bool)> {
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
                    facts.push(Formula::Ge0(e.clone()));
                    facts.push(Formula::Ge0(d.sub(&e)?.add(&Lin::k(-1))?));
                    true
                }
                _ => false,
            };
            return Some((*x, val, facts, ranged));
        }
    }
    None
}

/// A value that is 0 exactly when `m` (>= 1) divides `e`: `e % m` or `(-e) % m`
/// (simplified by the identities of modular arithmetic), whichever is the smaller
/// term, so that `(o - i) % G == 0` and `(i - o) % G == 0` are one condition.
fn divisible(s: &mut Syms, e: &Lin, m: &Lin) -> Option<Lin> {
    let a = super::invert::rem(s, e, m)?;
    let b = super::invert::rem(s, &e.scale(-1)?, m)?;
    Some(if b < a { b } else { a })
}
