//! Residue classes of a symbolic group size: the members `x` of class `e` modulo `m`
//! (`x % m == e`, `m >= 1` possibly symbolic) and the ranks `x + m*j` a strided loop
//! `for p in x .. hi step m` visits.
//!
//! - *Counting* ([`count`]): the writers `x` in `0..T` of a cell that the cell determines
//!   only through a remainder (`notify c @ rank(me % G)`: the members of class `o`), with
//!   linear bounds on `x` (`me >= G`) and exclusions (`x != e`), are
//!   `[0 <= e < m] * max(0, ceil((H - e) / m) - ceil((L - e) / m))` minus the excluded
//!   values inside, for `L` the largest lower bound (at least 0) and `H` the smallest upper
//!   bound (at most `T`): the number of integers `e + m*k` in `L..H`. `ceil((L - e) / m)`
//!   of a lower bound `L` that is a multiple of `m` (`0`, `G`, `G*q`) is exactly `L / m`
//!   there (`0 <= e < m`: `ceil(-e / m) == 0`).
//! - *Solving* ([`claimed`]): `X + s*j == E`, `j` the variable of a loop with the
//!   symbolic step `s` and `X` reading the other unsolved variables (a leader `me < G`
//!   releasing `for p in me + G .. P step G`), is `X == E % s` and `j == E / s` under the
//!   claim `0 <= X < s` (Euclidean division is unique); the loop's range `0 <= s*j < hi -
//!   lo` is then stated linearly as `E >= 0` (`s*j = s*floor(E / s)`) and `E - X < hi -
//!   lo`.
//! - *Loops from a residue* (`for p in me % G .. P step G`, a rank's own class) need no
//!   claim: `super::stride::solve` solves them exactly, with `G*j` the solved `t - me % G`
//!   and membership `(t - me) % G == 0`, `0 <= t < P` (the theorem is there).

use super::invert::Step;
use crate::engine::sym::{Atom, AtomId, CondV, Formula, Guard, Lin, Syms};

/// What the conditions of one guarded term say about the counted variable `x`.
#[derive(Default)]
struct Shape {
    /// Conditions not on `x`.
    keep: Guard,
    /// `x != e`.
    excl: Vec<Lin>,
    /// `x >= a`.
    lower: Vec<Lin>,
    /// `x < b`.
    upper: Vec<Lin>,
    /// `x + c ≡ e (mod m)`, `0 <= e < m`: `(c, m, e)`.
    class: Option<(Lin, Lin, Lin)>,
}

/// `d` as `k*x + rest`, `k` = ±1 and `x` not nested: `(k, rest)`.
fn linear_in(s: &Syms, d: &Lin, x: AtomId) -> Option<(i64, Lin)> {
    let k = d.coeff(x);
    ((k == 1 || k == -1) && !s.nested(d, x)).then(|| (k, d.split(x).1))
}

/// `d == 0` as `(x + c) % m == e`: one term `±((x + c) % m)`, `x` linear inside with
/// coefficient 1, `m >= 1` and the rest not reading `x`.
fn class_of(s: &Syms, d: &Lin, x: AtomId) -> Option<(Lin, Lin, Lin)> {
    for (a, k) in &d.t {
        if *k != 1 && *k != -1 {
            continue;
        }
        let Atom::Mod(inner, m) = &s.atoms[*a as usize] else {
            continue;
        };
        let (_, rest) = d.split(*a);
        if rest.coeff(x) != 0 || s.nested(&rest, x) || m.coeff(x) != 0 || s.nested(m, x) {
            continue;
        }
        if s.lb(m).is_none_or(|l| l < 1) || inner.coeff(x) != 1 || s.nested(inner, x) {
            continue;
        }
        let c = inner.split(x).1;
        return Some((c, m.clone(), rest.scale(-k)?));
    }
    None
}

fn shape(s: &Syms, g: &Guard, x: AtomId) -> Result<Shape, String> {
    let other = || "a condition on a writer other than `!=`, a bound or a class".to_string();
    let mut out = Shape::default();
    for c in g {
        if !s.citers[*c as usize].contains(&x) {
            out.keep.push(*c);
            continue;
        }
        match s.conds[*c as usize].clone() {
            Formula::Ge0(d) => {
                let (k, rest) = linear_in(s, &d, x).ok_or_else(other)?;
                // x + rest >= 0: x >= -rest; -x + rest >= 0: x < rest + 1.
                match k {
                    1 => out.lower.push(rest.scale(-1).ok_or_else(other)?),
                    _ => out.upper.push(rest.add(&Lin::k(1)).ok_or_else(other)?),
                }
            }
            Formula::Eq0(d) => {
                if out.class.is_some() {
                    return Err(other());
                }
                out.class = Some(class_of(s, &d, x).ok_or_else(other)?);
            }
            Formula::Not(inner) => match s.conds[inner as usize].clone() {
                Formula::Eq0(d) => {
                    let (k, rest) = linear_in(s, &d, x).ok_or_else(other)?;
                    out.excl.push(rest.scale(-k).ok_or_else(other)?);
                }
                // not (k*x + rest >= 0): k*x + rest <= -1.
                Formula::Ge0(d) => {
                    let (k, rest) = linear_in(s, &d, x).ok_or_else(other)?;
                    match k {
                        1 => out.upper.push(rest.scale(-1).ok_or_else(other)?),
                        _ => out.lower.push(rest.add(&Lin::k(1)).ok_or_else(other)?),
                    }
                }
                _ => return Err(other()),
            },
            _ => return Err(other()),
        }
    }
    Ok(out)
}

/// True when the guard's conditions on `x` are only `x != e` (the plain count applies).
pub fn plain(s: &Syms, g: &Guard, x: AtomId) -> bool {
    shape(s, g, x).is_ok_and(|sh| sh.lower.is_empty() && sh.upper.is_empty() && sh.class.is_none())
}

/// The test "an excluded value `e` is one of the counted" (in the class, if any).
type Member = Box<dyn Fn(&mut Syms, &Lin) -> Option<Vec<CondV>>>;

/// `ceil(a / m)` with `ceil(-e / m)` taken as 0 (exact where `0 <= e < m`).
fn ceil_in_class(s: &mut Syms, a: &Lin, m: &Lin, e: &Lin) -> Option<Lin> {
    let q = s.ceil_div(a, m)?;
    let neg = e.scale(-1)?;
    let mut out = Lin::k(q.c);
    for (t, k) in &q.t {
        match &s.atoms[*t as usize] {
            Atom::CeilDiv(x, y) if x == &neg && y == m => {}
            _ => out = out.axpy(*k, &Lin::atom(*t))?,
        }
    }
    Some(out)
}

/// The guarded terms of `Σ_{x < trip} [g] * l` (`l` not reading `x`) for a guard with
/// bounds or a class on `x` ([`plain`] false), in closed form (module docs).
pub fn count(
    s: &mut Syms,
    g: &Guard,
    l: &Lin,
    x: AtomId,
    trip: &Lin,
) -> Result<Vec<(Guard, Lin)>, String> {
    let ov = || "arithmetic overflow".to_string();
    let sh = shape(s, g, x)?;
    let mut lo = Lin::k(0);
    for a in &sh.lower {
        lo = s.max(&lo, a).ok_or_else(ov)?;
    }
    let mut hi = trip.clone();
    for b in &sh.upper {
        hi = s.min(&hi, b).ok_or_else(ov)?;
    }
    let mut keep = sh.keep.clone();
    // The number of x in lo..hi (in the class), and the test "e is counted".
    let (n, member): (Lin, Member) = match &sh.class {
        None => {
            let n = s
                .max(&Lin::k(0), &hi.sub(&lo).ok_or_else(ov)?)
                .ok_or_else(ov)?;
            (n, Box::new(|_, _| Some(Vec::new())))
        }
        Some((c, m, e)) => {
            let cond = [
                s.formula(Formula::Ge0(e.clone())),
                s.formula(Formula::Ge0(
                    m.sub(e).and_then(|v| v.add(&Lin::k(-1))).ok_or_else(ov)?,
                )),
            ];
            for cv in cond {
                match cv {
                    CondV::Const(true) => {}
                    CondV::Const(false) => return Ok(Vec::new()),
                    CondV::Sym(id) => keep.push(id),
                }
            }
            // x ≡ e - c (mod m)
            let base = e.sub(c).ok_or_else(ov)?;
            let up = s
                .ceil_div(&hi.sub(&base).ok_or_else(ov)?, m)
                .ok_or_else(ov)?;
            let down = if c.is_zero() {
                ceil_in_class(s, &lo.sub(&base).ok_or_else(ov)?, m, e)
            } else {
                s.ceil_div(&lo.sub(&base).ok_or_else(ov)?, m)
            }
            .ok_or_else(ov)?;
            let n = s
                .max(&Lin::k(0), &up.sub(&down).ok_or_else(ov)?)
                .ok_or_else(ov)?;
            let (c, m, e) = (c.clone(), m.clone(), e.clone());
            (
                n,
                Box::new(move |s: &mut Syms, v: &Lin| {
                    let r = super::invert::rem(s, &v.add(&c)?, &m)?;
                    Some(vec![s.formula(Formula::Eq0(r.sub(&e)?))])
                }),
            )
        }
    };
    keep.sort_unstable();
    keep.dedup();
    let mut out = vec![(keep.clone(), s.mul(l, &n).ok_or_else(ov)?)];
    let neg = l.scale(-1).ok_or_else(ov)?;
    for (k, e) in sh.excl.iter().enumerate() {
        let mut cs = vec![
            s.formula(Formula::Ge0(e.sub(&lo).ok_or_else(ov)?)),
            s.formula(Formula::Ge0(
                hi.sub(e).and_then(|v| v.add(&Lin::k(-1))).ok_or_else(ov)?,
            )),
        ];
        cs.extend(member(s, e).ok_or_else(ov)?);
        for prev in &sh.excl[..k] {
            let eq = s.formula(Formula::Eq0(e.sub(prev).ok_or_else(ov)?));
            cs.push(s.not(eq));
        }
        let c = s.junction(true, cs);
        out.extend(super::solve::gand(&vec![(keep.clone(), neg.clone())], c));
    }
    Ok(out)
}

/// `X + s*j == E` solved under the claim `0 <= X < s` (module docs): the rewriting and
/// the loop variable whose range the facts state (`None`: `j` is no strided loop's).
pub fn claimed(
    s: &mut Syms,
    vars: &[AtomId],
    solved: &dyn Fn(AtomId) -> bool,
    d: &Lin,
) -> Option<(Step, Option<AtomId>)> {
    let reads = |s: &Syms, l: &Lin, y: AtomId| l.coeff(y) != 0 || s.nested(l, y);
    for (a, k) in &d.t {
        if *k != 1 && *k != -1 {
            continue;
        }
        let Atom::Mul(u, v) = s.atoms[*a as usize].clone() else {
            continue;
        };
        for (jl, step) in [(&u, &v), (&v, &u)] {
            let [(j, 1)] = jl.t.as_slice() else { continue };
            if jl.c != 0 || !vars.contains(j) || solved(*j) {
                continue;
            }
            let unsolved = |y: &AtomId| !solved(*y);
            if vars
                .iter()
                .filter(|y| unsolved(y))
                .any(|y| reads(s, step, *y))
            {
                continue;
            }
            if s.lb(step).is_none_or(|l| l < 1) {
                continue;
            }
            // k*(s*j) + rest == 0  =>  s*j + k*rest == 0: X + s*j == E.
            let rest = d.split(*a).1.scale(*k)?;
            let mut x = Lin::k(0);
            let mut r = Lin::k(rest.c);
            for (t, c) in &rest.t {
                let term = Lin::atom(*t).scale(*c)?;
                if vars
                    .iter()
                    .filter(|y| unsolved(y))
                    .any(|y| reads(s, &term, *y))
                {
                    x = x.add(&term)?;
                } else {
                    r = r.add(&term)?;
                }
            }
            if x.t.is_empty() || reads(s, &x, *j) {
                continue;
            }
            let e = r.scale(-1)?;
            let xv = super::invert::rem(s, &e, step)?;
            let jv = s.div(&e, step)?;
            let mut facts = Vec::new();
            let ranged = match s.strides.get(j) {
                Some((range, st)) if st == step => {
                    facts.push(Formula::Ge0(e.clone()));
                    facts.push(Formula::Ge0(range.sub(&e)?.add(&x)?.add(&Lin::k(-1))?));
                    Some(*j)
                }
                _ => None,
            };
            let top = step.sub(&x)?.add(&Lin::k(-1))?;
            return Some((
                Step {
                    eqs: vec![x.sub(&xv)?, Lin::atom(*j).sub(&jv)?],
                    facts,
                    claims: vec![Formula::Ge0(x), Formula::Ge0(top)],
                },
                ranged,
            ));
        }
    }
    None
}
