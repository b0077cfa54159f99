//! Inverting the writer relation of log-structured trees: cell equations that the
//! linear, modular and xor rules of [`super::solve`] cannot solve, because the
//! statement's variables sit inside a rank rotation and a power of two at once (the
//! binomial tree: rank `vr` credits `(vr + m + root) % P` in the round of distance
//! `m`, for every power `m` below the lowest set bit of `vr`).
//!
//! Exact rules (equivalences, no proof needed):
//! - `pow2(E) == e`, `E` affine in a variable with coefficient ±1: `E = lg(e)` with
//!   the side condition `pow2(lg(e)) == e` (`e` a power of two);
//!
//! Rules that hold under a *claim* about every execution of the statement (the
//! caller proves each claim with Z3 under the statement's path condition and cell
//! equations, and drops the solution if one is not proved):
//! - `(X + c) % m == e`, `X` reading the variables: `X == (e - c) % m` (side
//!   `0 <= e < m`) under the claim `0 <= X < m`;
//! - `A + pow2(E) == e`, both reading the variables: `pow2(E) == b(e)` and
//!   `A == e - b(e)`, where `b(e)` is the lowest set bit `e & -e` under the claim that
//!   `pow2(E)` is the lowest set bit of `A + pow2(E)` (children `vr + m` with `m`
//!   below the lowest set bit of `vr`), or the highest one `pow2(lg(e + 1) - 1)`
//!   under the claim `0 <= A < pow2(E)` (children `vr + m` with `m` above `vr`).
//!
//! [`rem`] rebuilds remainders with the identities of modular arithmetic
//! (`(k * (a % m) + b) % m == (k * a + b) % m`, `(a + k * m) % m == a % m`, and
//! `a % m == a` for `0 <= a < m`), so a rotation composed with its inverse cancels.

use crate::engine::sym::{Atom, AtomId, BitFn, CondV, Formula, Lin, Syms};

/// Which bit the power of two of a sum `A + pow2(E)` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// The lowest set bit.
    Low,
    /// The highest set bit.
    High,
}

/// The solving rules allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The exact rules only.
    Exact,
    /// The exact rules, then the claimed ones with this split.
    Claimed(Split),
}

/// A rewriting of one equation `d == 0`: new equations, facts the solution needs
/// (side conditions) and claims to prove.
pub struct Step {
    /// Replacing equations (each `== 0`).
    pub eqs: Vec<Lin>,
    /// Side conditions of the solution.
    pub facts: Vec<Formula>,
    /// Conditions every execution must satisfy for the rewriting to be exact.
    pub claims: Vec<Formula>,
}

/// True when `l` reads an unsolved variable of `vars`.
fn reads(s: &Syms, vars: &[AtomId], solved: &dyn Fn(AtomId) -> bool, l: &Lin) -> bool {
    vars.iter()
        .any(|x| !solved(*x) && (l.coeff(*x) != 0 || s.nested(l, *x)))
}

/// Splits `l` into the terms that read an unsolved variable and the rest.
fn parts(s: &Syms, vars: &[AtomId], solved: &dyn Fn(AtomId) -> bool, l: &Lin) -> (Lin, Lin) {
    let mut with = Lin::k(0);
    let mut without = Lin::k(l.c);
    for (a, k) in &l.t {
        if reads(s, vars, solved, &Lin::atom(*a)) {
            with.t.push((*a, *k));
        } else {
            without.t.push((*a, *k));
        }
    }
    (with, without)
}

/// `pow2(E) == e`: solves `E`'s variable (an exact rule).
pub fn pow2(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    d: &Lin,
) -> Option<(AtomId, Lin, Vec<Formula>)> {
    for (a, k) in &d.t {
        if *k != 1 && *k != -1 {
            continue;
        }
        let Atom::Bit(BitFn::Pow2, ex, _) = s.atoms[*a as usize].clone() else {
            continue;
        };
        let (_, rest) = d.split(*a);
        if reads(s, vars, solved, &rest) {
            continue;
        }
        // k * pow2(E) + rest == 0  =>  pow2(E) == -rest / k
        let e = rest.scale(-k)?;
        for x in vars {
            let c = ex.coeff(*x);
            if solved(*x) || (c != 1 && c != -1) || s.nested(&ex, *x) {
                continue;
            }
            let (_, other) = ex.split(*x);
            if reads(s, vars, solved, &other) {
                continue;
            }
            let g = super::bits::bit(s, BitFn::Lg, &e, &Lin::k(0))?;
            // c * x + other == lg(e)
            let val = g.sub(&other)?.scale(c)?;
            let back = super::bits::pow2(s, &g)?;
            return Some((*x, val, vec![Formula::Eq0(back.sub(&e)?)]));
        }
    }
    None
}

/// The power and its value in a side condition `pow2(lg(e)) - e` of [`pow2`].
pub fn power(s: &Syms, l: &Lin) -> Option<(Lin, Lin)> {
    for (a, k) in &l.t {
        if *k != 1 {
            continue;
        }
        let Atom::Bit(BitFn::Pow2, g, _) = &s.atoms[*a as usize] else {
            continue;
        };
        let [(ga, 1)] = g.t.as_slice() else { continue };
        let Atom::Bit(BitFn::Lg, e, _) = &s.atoms[*ga as usize] else {
            continue;
        };
        if g.c == 0 && l.split(*a).1.scale(-1).as_ref() == Some(e) {
            return Some((Lin::atom(*a), e.clone()));
        }
    }
    None
}

/// `e` is a power of two: `e >= 1` and `e & (e - 1) == 0` (bit operations only).
pub fn is_power(s: &mut Syms, e: &Lin) -> Option<CondV> {
    let pos = s.formula(Formula::Ge0(e.add(&Lin::k(-1))?));
    let m = super::bits::bit(s, BitFn::And, e, &e.add(&Lin::k(-1))?)?;
    let one = s.formula(Formula::Eq0(m));
    Some(s.junction(true, vec![pos, one]))
}

/// `lg(h) - lg(e) - 1 >= 0` (the iteration `lg(e)` of a loop over the powers of two
/// below `h`) is `h - e - 1 >= 0` when `e` is a power of two (its side condition).
pub fn below_power(s: &mut Syms, c: CondV, e: &Lin) -> Option<CondV> {
    let CondV::Sym(id) = c else { return Some(c) };
    let Formula::Ge0(l) = s.conds[id as usize].clone() else {
        return Some(c);
    };
    let lge = super::bits::bit(s, BitFn::Lg, e, &Lin::k(0))?;
    let [(ga, 1)] = lge.t.as_slice() else {
        return Some(c);
    };
    let (k, rest) = l.split(*ga);
    let [(ha, 1)] = rest.t.as_slice() else {
        return Some(c);
    };
    if k != -1 || rest.c != -1 {
        return Some(c);
    }
    let Atom::Bit(BitFn::Lg, h, _) = s.atoms[*ha as usize].clone() else {
        return Some(c);
    };
    Some(s.formula(Formula::Ge0(h.sub(e)?.add(&Lin::k(-1))?)))
}

/// The claimed rules, tried on `d == 0` when no exact rule applies.
pub fn claimed(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    split: Split,
    d: &Lin,
) -> Option<Step> {
    if !reads(s, vars, solved, d) {
        return None;
    }
    modular(s, vars, solved, d).or_else(|| bits(s, vars, solved, split, d))
}

/// `(X + c) % m == e` with `0 <= X < m` claimed.
fn modular(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    d: &Lin,
) -> Option<Step> {
    for (k, inner, m, others) in mod_terms(s, d) {
        if reads(s, vars, solved, &others) || reads(s, vars, solved, &m) {
            continue;
        }
        let (x, c) = parts(s, vars, solved, &inner);
        if x.t.is_empty() {
            continue;
        }
        let e = others.scale(-k)?;
        let target = rem(s, &e.sub(&c)?, &m)?;
        let top = m.sub(&x)?.add(&Lin::k(-1))?;
        return Some(Step {
            eqs: vec![x.sub(&target)?],
            facts: vec![
                Formula::Ge0(e.clone()),
                Formula::Ge0(m.sub(&e)?.add(&Lin::k(-1))?),
            ],
            claims: vec![Formula::Ge0(x), Formula::Ge0(top)],
        });
    }
    None
}

/// The terms `k * (inner % m)` of `d` with `k` = ±1: `(k, inner, m, the rest of d)`.
pub fn mod_terms(s: &Syms, d: &Lin) -> Vec<(i64, Lin, Lin, Lin)> {
    let mut out = Vec::new();
    for (a, k) in &d.t {
        if let (1 | -1, Atom::Mod(inner, m)) = (*k, &s.atoms[*a as usize]) {
            out.push((*k, inner.clone(), m.clone(), d.split(*a).1));
        }
    }
    out
}

/// `A + pow2(E) == e`: the power of two is the lowest (or highest) set bit of `e`.
fn bits(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    split: Split,
    d: &Lin,
) -> Option<Step> {
    let (with, without) = parts(s, vars, solved, d);
    // with + without == 0: with == e
    let e = without.scale(-1)?;
    for (a, k) in &with.t {
        if *k != 1 {
            continue;
        }
        let Atom::Bit(BitFn::Pow2, _, _) = s.atoms[*a as usize] else {
            continue;
        };
        let (_, rest) = with.split(*a);
        if rest.t.is_empty() {
            continue;
        }
        let p = Lin::atom(*a);
        let (b, claims) = match split {
            Split::Low => {
                let sum = with.clone();
                let low = lowest(s, &sum)?;
                (lowest(s, &e)?, vec![Formula::Eq0(p.sub(&low)?)])
            }
            Split::High => {
                let g = super::bits::bit(s, BitFn::Lg, &e.add(&Lin::k(1))?, &Lin::k(0))?;
                let hb = super::bits::pow2(s, &g.add(&Lin::k(-1))?)?;
                let below = p.sub(&rest)?.add(&Lin::k(-1))?;
                (hb, vec![Formula::Ge0(rest.clone()), Formula::Ge0(below)])
            }
        };
        return Some(Step {
            eqs: vec![p.sub(&b)?, rest.sub(&e)?.add(&b)?],
            facts: Vec::new(),
            claims,
        });
    }
    None
}

/// `x & -x`, the lowest set bit.
fn lowest(s: &mut Syms, x: &Lin) -> Option<Lin> {
    super::bits::bit(s, BitFn::And, x, &x.scale(-1)?)
}

/// `d == 0` for `d = a % m - b % m` is `(a - b) % m == 0` (`m > 0`): one remainder
/// of the difference (which cancels what `a` and `b` share) instead of two.
pub fn congruence(s: &mut Syms, d: &Lin) -> Option<Lin> {
    if let [(x, 1), (y, -1)] | [(y, -1), (x, 1)] = d.t.as_slice() {
        if let (Atom::Mod(a, m), Atom::Mod(b, m2)) =
            (s.atoms[*x as usize].clone(), s.atoms[*y as usize].clone())
        {
            if d.c == 0 && m == m2 && s.lb(&m).is_some_and(|v| v > 0) {
                return rem(s, &a.sub(&b)?, &m);
            }
        }
    }
    Some(d.clone())
}

/// `a % m`, simplified by the identities of modular arithmetic.
pub fn rem(s: &mut Syms, a: &Lin, m: &Lin) -> Option<Lin> {
    let mut x = a.clone();
    if m.as_const().is_none() {
        // (k * (y % m) + b) % m == (k * y + b) % m
        for (t, k) in a.t.clone() {
            if let Atom::Mod(y, m2) = s.atoms[t as usize].clone() {
                if m2 == *m {
                    let (_, rest) = x.split(t);
                    x = rest.axpy(k, &y)?;
                }
            }
        }
        // (x + k * m) % m == x % m, m one atom
        if let [(ma, mk)] = m.t.as_slice() {
            if m.c == 0 {
                let k = x.coeff(*ma);
                if k % mk == 0 {
                    x = x.split(*ma).1;
                }
            }
        }
        // 0 <= x < m
        let top = m.sub(&x)?.add(&Lin::k(-1))?;
        if s.nonneg(&x) && s.nonneg(&top) {
            return Some(x);
        }
    }
    s.rem(&x, m)
}
