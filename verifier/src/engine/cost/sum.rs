//! Sums in closed form for the cost derivation: `Σ_{v in 0..n} f` for bodies
//! polynomial in `v` (Faulhaber) or in `b^v` (geometric series), indicators of
//! `v == e` (in or out of `0..n`), `v < e`, `v > e`, `v % G == c`,
//! `(v + c) % P == x` (one `v` of `0..P` for each `x`) and `v ^ c == x` (the one
//! `v = x ^ c`, counted when in `0..n`), and the round-robin tiling identity.

use super::alg::{Atom, Fun, Poly, Rat, Test};
use super::simplify::{single, xor_parts};
use super::walk::Walk;
use collc_spec::ir::*;
use std::collections::BTreeMap;

impl Walk<'_> {
    /// `Σ_{v in 0..n} max(0, ceil((X - c*v) / (c*n)))` is `ceil(X / c)` for `X >= 0`,
    /// `c >= 1`, `n >= 1` (Hermite's identity: the `n` blocks' round-robin shares
    /// of `ceil(X / c)` tiles add up to all of them). `a` is the term's one factor
    /// that mentions `v`.
    pub(super) fn hermite(&self, a: &Atom, v: VarId, n: &Poly) -> Option<Poly> {
        let inner = match a {
            Atom::Fun(Fun::Max, args) if args.first()? == &Poly::k(0) => {
                match args.get(1)?.0.iter().next()? {
                    (m, c) if args.get(1)?.0.len() == 1 && *c == Rat::int(1) && m.len() == 1 => {
                        m[0].clone()
                    }
                    _ => return None,
                }
            }
            a => a.clone(),
        };
        let Atom::Fun(Fun::CeilDiv, args) = inner else {
            return None;
        };
        let cs = args.first()?.coefficients_in(v)?;
        let c = cs.get(1)?.as_const()?.scale_neg()?;
        if cs.len() != 2 || *args.get(1)? != n.scale(c) || self.range(n).0 < 1.0 {
            return None;
        }
        let x = &cs[0];
        if self.range(x).0 < 0.0 || c.0 < 1 || c.1 != 1 {
            return None;
        }
        Some(self.mk(Atom::Fun(Fun::CeilDiv, vec![x.clone(), Poly::rat(c)])))
    }

    /// `Σ_{v in 0..n} f` (`n >= 0`), in closed form.
    pub fn sum(&self, f: &Poly, v: VarId, n: &Poly) -> Result<Poly, String> {
        let names = self.names();
        let mut out = Poly::default();
        for (m, c) in &f.0 {
            let pos = self.pick(m, v);
            let Some(i) = pos else {
                out = out.add(&self.sum_term(m, *c, v, n)?);
                continue;
            };
            let Atom::Ind(test, d) = &m[i] else {
                continue;
            };
            let mut rest_m = m.clone();
            rest_m.remove(i);
            let mut t = std::collections::BTreeMap::new();
            t.insert(rest_m, *c);
            let rest = Poly(t);
            let cant = || {
                format!(
                    "cannot count the values of {} for which `{}` holds",
                    names.var(v),
                    names.atom(&m[i])
                )
            };
            if *test == Test::Eq0 {
                if let Some(m) = self.own_class(d, v) {
                    // `v % m == v` iff `v < m` (v >= 0, m >= 1): the leaders `me < G`.
                    let hi = self.clamp(&m, n);
                    out = out.add(&self.sum(&rest, v, &hi)?);
                    continue;
                }
            }
            if *test == Test::Eq0 && !rest.mentions(v) {
                if let Some(k) = self.residues(d, v, n) {
                    out = out.add(&rest.mul(&k));
                    continue;
                }
            }
            if *test == Test::Eq0 {
                if let Some(at) = self.rotated(d, v, n) {
                    out = out.add(&rest.subst(v, &at, &|a| self.mk(a)));
                    continue;
                }
            }
            if *test == Test::Eq0 {
                if let Some(e) = self.xor_inverse(d, v) {
                    // `v ^ c == x` iff `v == x ^ c`: one `v`, counted when in `0..n`
                    out = out.add(&self.at_one(&rest, v, &e, n));
                    continue;
                }
            }
            let cs = d.coefficients_in(v).ok_or_else(cant)?;
            if cs.len() != 2 {
                return Err(cant());
            }
            let unit = cs[1].as_const().ok_or_else(cant)?;
            if unit != Rat::int(1) && unit != Rat::int(-1) {
                return Err(cant());
            }
            // d = unit * v + c0
            let c0 = &cs[0];
            match test {
                Test::Eq0 => {
                    let e = c0.scale(Rat::int(-unit.0));
                    out = out.add(&self.at_one(&rest, v, &e, n));
                }
                Test::Lt0 if unit.0 == 1 => {
                    // v < -c0
                    let hi = self.clamp(&c0.scale(Rat::int(-1)), n);
                    out = out.add(&self.sum(&rest, v, &hi)?);
                }
                Test::Lt0 => {
                    // v > c0, i.e. v >= c0 + 1
                    let lo = self.clamp(&c0.add(&Poly::k(1)), n);
                    out = out.add(&self.sum(&rest, v, n)?.sub(&self.sum(&rest, v, &lo)?));
                }
            }
        }
        Ok(out)
    }

    /// `Σ_{v in 0..n} c * m` for a monomial `m` with no indicator on `v` to count: a
    /// polynomial in `v` (Faulhaber), a geometric series, or a count per residue class.
    fn sum_term(&self, m: &[Atom], c: Rat, v: VarId, n: &Poly) -> Result<Poly, String> {
        let names = self.names();
        let mut t = std::collections::BTreeMap::new();
        t.insert(m.to_vec(), c);
        let term = Poly(t);
        let Some(cs) = term.coefficients_in(v) else {
            let dep: Vec<&Atom> = m.iter().filter(|a| a.mentions(v)).collect();
            if let [a] = dep.as_slice() {
                if let Some(g) = self.geometric(a, v, n) {
                    let rest: Vec<Atom> = m.iter().filter(|b| b != a).cloned().collect();
                    let mut t = std::collections::BTreeMap::new();
                    t.insert(rest, c);
                    return Ok(Poly(t).mul(&g));
                }
                if let Some(h) = self.hermite(a, v, n).or_else(|| self.class_trips(a, v, n)) {
                    let rest: Vec<Atom> = m.iter().filter(|b| b != a).cloned().collect();
                    let mut t = std::collections::BTreeMap::new();
                    t.insert(rest, c);
                    return Ok(Poly(t).mul(&h));
                }
            }
            let a = m.iter().find(|a| a.mentions(v)).cloned();
            let shown = a.map(|a| names.atom(&a)).unwrap_or_default();
            return Err(format!("`{shown}` depends on {}", names.var(v)));
        };
        let mut out = Poly::default();
        for (k, ck) in cs.iter().enumerate() {
            out = out.add(
                &ck.mul(&faulhaber(k, n).ok_or_else(|| format!("a sum of {}^{k}", names.var(v)))?),
            );
        }
        Ok(out)
    }

    /// `Σ_{v in 0..n} [v == e] * rest`: `rest` at `v = e`, times `[0 <= e < n]`
    /// unless `e` lies in `0..n` for every value.
    fn at_one(&self, rest: &Poly, v: VarId, e: &Poly, n: &Poly) -> Poly {
        let at = rest.subst(v, e, &|a| self.mk(a));
        if self.inside(e, n) {
            return at;
        }
        let ge0 = self.mk(Atom::Ind(Test::Lt0, e.clone())).not();
        let ltn = self.mk(Atom::Ind(Test::Lt0, e.sub(n)));
        at.mul(&ge0).mul(&ltn)
    }

    /// `d` is `(v ^ c) - x` (either sign, either operand order) with `c`, `x` free
    /// of `v`: `x ^ c`, the one `v` with `d == 0` (`^ c` is an involution: a
    /// partner `me ^ d` is a bijection of the integers).
    fn xor_inverse(&self, d: &Poly, v: VarId) -> Option<Poly> {
        let me = Poly::var(v);
        xor_parts(d).into_iter().find_map(|(a, b, x)| {
            let c = if a == me {
                b
            } else if b == me {
                a
            } else {
                return None;
            };
            if c.mentions(v) || x.mentions(v) {
                return None;
            }
            Some(self.mk(Atom::Fun(Fun::Xor, vec![x, c])))
        })
    }

    /// Which indicator of monomial `m` to sum `v` out of first: one `v == e` with
    /// a unit coefficient (it fixes `v`), then a rotation `(v + c) % P == x` or a
    /// partner `v ^ c == x`, then any.
    fn pick(&self, m: &[Atom], v: VarId) -> Option<usize> {
        let solvable = |a: &Atom| match a {
            Atom::Ind(Test::Eq0, d) => d.coefficients_in(v).is_some_and(|cs| {
                cs.len() == 2 && cs[1].as_const().is_some_and(|u| u.0.abs() == 1 && u.1 == 1)
            }),
            _ => false,
        };
        let rotation = |a: &Atom| match a {
            Atom::Ind(Test::Eq0, d) => {
                self.rotation_in(d, v).is_some() || self.xor_inverse(d, v).is_some()
            }
            _ => false,
        };
        // a rotation by an offset of the protocol's own variables first (`vr ==
        // x` with `vr = (me - root + P) % P`), before one by a summation index
        let fixed = |a: &Atom| match a {
            Atom::Ind(Test::Eq0, d) => self.rotation_in(d, v).is_some_and(|(c, _)| {
                let mut vs = std::collections::BTreeSet::new();
                super::tree::vars_of(&c, &mut vs);
                vs.iter().all(|x| *x < Id::new(self.p.vars.len()))
            }),
            _ => false,
        };
        let any = |a: &Atom| matches!(a, Atom::Ind(..)) && a.mentions(v);
        m.iter()
            .position(|a| any(a) && solvable(a))
            .or_else(|| m.iter().position(|a| any(a) && fixed(a)))
            .or_else(|| m.iter().position(|a| any(a) && rotation(a)))
            .or_else(|| m.iter().position(any))
    }

    /// `d` is `(v + c) % P - x` (either sign) with `c`, `x` free of `v`: `(c, x)`.
    fn rotation_in(&self, d: &Poly, v: VarId) -> Option<(Poly, Poly)> {
        let world = Poly::var(self.p.world);
        for d in [d.clone(), d.scale(Rat::int(-1))] {
            let Some((mono, one)) = d.0.iter().find(|(m, _)| {
                matches!(m.as_slice(), [Atom::Fun(Fun::Mod, a)] if a.get(1) == Some(&world))
            }) else {
                continue;
            };
            let [Atom::Fun(Fun::Mod, args)] = mono.as_slice() else {
                continue;
            };
            let c = args[0].sub(&Poly::var(v));
            if *one != Rat::int(1) || c.mentions(v) || args[0].coefficients_in(v)?.len() != 2 {
                continue;
            }
            let mut t = BTreeMap::new();
            t.insert(mono.clone(), *one);
            let x = Poly(t).sub(&d); // x = mod - d
            if !x.mentions(v) {
                return Some((c, x));
            }
        }
        None
    }

    /// `Σ_{v in 0..P} [(v + c) % P == x] f(v)` is `f((x - c) % P)` for `x` in
    /// `0..P` (the rotation is a bijection of the ranks): the value `v` takes.
    fn rotated(&self, d: &Poly, v: VarId, n: &Poly) -> Option<Poly> {
        let world = Poly::var(self.p.world);
        let (c, x) = self.rotation_in(d, v)?;
        if *n != world || !self.inside(&x, n) {
            return None;
        }
        Some(self.mk(Atom::Fun(Fun::Mod, vec![x.sub(&c), world])))
    }

    /// `Σ_{v in 0..n} b^v = (b^n - 1) / (b - 1)` for a constant `b >= 2` (`a` is
    /// the term's one factor that mentions `v`).
    fn geometric(&self, a: &Atom, v: VarId, n: &Poly) -> Option<Poly> {
        let Atom::Fun(Fun::Pow, args) = a else {
            return None;
        };
        let b = args.first()?.as_const()?;
        if b.1 != 1 || b.0 < 2 || *args.get(1)? != Poly::var(v) {
            return None;
        }
        let all = self.mk(Atom::Fun(Fun::Pow, vec![Poly::k(b.0), n.clone()]));
        Some(all.sub(&Poly::k(1)).scale(Rat::new(1, b.0 - 1)))
    }

    /// `|{v in 0..n : v % G == c}|` = `max(0, ceil((n - c) / G))` when `d` is
    /// `v % G - c` (either sign), with `G`, `c` free of `v` and `0 <= c < G` (group
    /// leaders: `me % G == 0` holds for `ceil(P / G)` ranks).
    pub(super) fn residues(&self, d: &Poly, v: VarId, n: &Poly) -> Option<Poly> {
        for d in [d.clone(), d.scale(Rat::int(-1))] {
            let (mono, one) =
                d.0.iter()
                    .find(|(m, _)| matches!(m.as_slice(), [Atom::Fun(Fun::Mod, _)]))?;
            let [Atom::Fun(Fun::Mod, args)] = mono.as_slice() else {
                continue;
            };
            if *one != Rat::int(1) || args[0] != Poly::var(v) || args[1].mentions(v) {
                continue;
            }
            let mut t = BTreeMap::new();
            t.insert(mono.clone(), *one);
            let c = Poly(t).sub(&d); // d = mod - c
            let (rc, rg) = (self.range(&c), self.range(&args[1]));
            if c.mentions(v) || rc.0 < 0.0 || rc.1 >= rg.0 {
                continue;
            }
            let q = self.mk(Atom::Fun(Fun::CeilDiv, vec![n.sub(&c), args[1].clone()]));
            return Some(self.mk(Atom::Fun(Fun::Max, vec![Poly::k(0), q])));
        }
        None
    }

    /// `Σ_{v in 0..n} max(0, ceil((X - v) / d))` is `max(0, X)` for `d >= 1` and `n = d`,
    /// or `n = min(d, Y)` with `X <= Y` (the terms at `v >= Y >= X` are 0): Hermite's
    /// identity `Σ_{v < d} ceil((X - v) / d) = X`, each term 0 when `X <= 0`. The trips of
    /// the leaders `v < min(G, P)` of the residue classes over their members
    /// (`for p in v + G .. P step G`: `X = P - G`) add up to `max(0, P - G)`. Without the
    /// `max` (the bare `ceil`), `n = d` only, and the sum is `X`.
    pub(super) fn class_trips(&self, a: &Atom, v: VarId, n: &Poly) -> Option<Poly> {
        let (inner, clamped) = match a {
            Atom::Fun(Fun::Max, args) if args.first()? == &Poly::k(0) => {
                (single(args.get(1)?)?.clone(), true)
            }
            a => (a.clone(), false),
        };
        let Atom::Fun(Fun::CeilDiv, args) = inner else {
            return None;
        };
        let d = args.get(1)?;
        let cs = args.first()?.coefficients_in(v)?;
        if cs.len() != 2 || cs[1].as_const()? != Rat::int(-1) || d.mentions(v) {
            return None;
        }
        if self.range(d).0 < 1.0 {
            return None;
        }
        let x = &cs[0];
        let fits = n == d
            || clamped
                && match single(n) {
                    Some(Atom::Fun(Fun::Min, m)) if m.len() == 2 => {
                        let y = if &m[0] == d { &m[1] } else { &m[0] };
                        (&m[0] == d || &m[1] == d) && self.range(&x.sub(y)).1 <= 0.0
                    }
                    _ => false,
                };
        if !fits {
            return None;
        }
        Some(if clamped {
            self.mk(Atom::Fun(Fun::Max, vec![Poly::k(0), x.clone()]))
        } else {
            x.clone()
        })
    }

    /// `m` when `d` is `±(v % m - v)` (`v % m == v`) with `m >= 1` not reading `v`.
    fn own_class(&self, d: &Poly, v: VarId) -> Option<Poly> {
        for d in [d.clone(), d.scale(Rat::int(-1))] {
            let with_v = d.add(&Poly::var(v));
            let Some(Atom::Fun(Fun::Mod, args)) = single(&with_v) else {
                continue;
            };
            if args.len() == 2
                && args[0] == Poly::var(v)
                && !args[1].mentions(v)
                && self.range(&args[1]).0 >= 1.0
            {
                return Some(args[1].clone());
            }
        }
        None
    }

    /// `min(n, max(0, x))`.
    pub(super) fn clamp(&self, x: &Poly, n: &Poly) -> Poly {
        let m = self.mk(Atom::Fun(Fun::Max, vec![Poly::k(0), x.clone()]));
        self.mk(Atom::Fun(Fun::Min, vec![n.clone(), m]))
    }

    /// Whether `e` lies in `0..n` for every value (rank-typed values in `0..P`).
    pub(super) fn inside(&self, e: &Poly, n: &Poly) -> bool {
        if let Some(Atom::Var(v)) = single(e) {
            if self.upper.get(v) == Some(n) && self.var_range(*v).0 >= 0.0 {
                return true;
            }
        }
        if let Some(Atom::Fun(Fun::And, args)) = single(e) {
            // 0 <= a & b <= a for a >= 0
            if args.iter().any(|a| self.inside(a, n)) {
                return true;
            }
        }
        if *n == Poly::var(self.p.world) {
            if let Some(Atom::Fun(Fun::Mod, args)) = single(e) {
                if args.get(1) == Some(n) {
                    return true;
                }
            }
            if self.rank_var(e).is_some() {
                return true;
            }
        }
        let (re, rn) = (self.range(e), self.range(n));
        re.0 >= 0.0 && re.1 < rn.0
    }
}

/// `Σ_{v in 0..n} v^k` for `k <= 3`.
pub(super) fn faulhaber(k: usize, n: &Poly) -> Option<Poly> {
    let n1 = n.sub(&Poly::k(1));
    let tri = n.mul(&n1).scale(Rat::new(1, 2));
    Some(match k {
        0 => n.clone(),
        1 => tri,
        2 => n
            .mul(&n1)
            .mul(&n.scale(Rat::int(2)).sub(&Poly::k(1)))
            .scale(Rat::new(1, 6)),
        3 => tri.mul(&tri),
        _ => return None,
    })
}
