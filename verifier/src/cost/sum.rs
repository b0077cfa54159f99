//! Sums in closed form for the cost derivation: `Σ_{v in 0..n} f` for bodies
//! polynomial in `v` (Faulhaber), indicators of `v == e`, `v < e`, `v > e` and
//! `v % G == c`, and the round-robin tiling identity.

use super::alg::{Atom, Fun, Poly, Rat, Test};
use super::simplify::single;
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
            let pos = m
                .iter()
                .position(|a| matches!(a, Atom::Ind(..)) && a.mentions(v));
            let Some(i) = pos else {
                let mut t = std::collections::BTreeMap::new();
                t.insert(m.clone(), *c);
                let term = Poly(t);
                let Some(cs) = term.coefficients_in(v) else {
                    let dep: Vec<&Atom> = m.iter().filter(|a| a.mentions(v)).collect();
                    if let [a] = dep.as_slice() {
                        if let Some(h) = self.hermite(a, v, n) {
                            let rest: Vec<Atom> = m.iter().filter(|b| b != a).cloned().collect();
                            let mut t = std::collections::BTreeMap::new();
                            t.insert(rest, *c);
                            out = out.add(&Poly(t).mul(&h));
                            continue;
                        }
                    }
                    let a = m.iter().find(|a| a.mentions(v)).cloned();
                    let shown = a.map(|a| names.atom(&a)).unwrap_or_default();
                    return Err(format!("`{shown}` depends on {}", names.var(v)));
                };
                for (k, ck) in cs.iter().enumerate() {
                    out = out.add(&ck.mul(
                        &faulhaber(k, n).ok_or_else(|| format!("a sum of {}^{k}", names.var(v)))?,
                    ));
                }
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
            if *test == Test::Eq0 && !rest.mentions(v) {
                if let Some(k) = self.residues(d, v, n) {
                    out = out.add(&rest.mul(&k));
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
                    if !self.inside(&e, n) {
                        return Err(cant());
                    }
                    out = out.add(&rest.subst(v, &e, &|a| self.mk(a)));
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

    /// `min(n, max(0, x))`.
    pub(super) fn clamp(&self, x: &Poly, n: &Poly) -> Poly {
        let m = self.mk(Atom::Fun(Fun::Max, vec![Poly::k(0), x.clone()]));
        self.mk(Atom::Fun(Fun::Min, vec![n.clone(), m]))
    }

    /// Whether `e` lies in `0..n` for every value (rank-typed values in `0..P`).
    pub(super) fn inside(&self, e: &Poly, n: &Poly) -> bool {
        if *n == Poly::var(self.p.world) {
            if let Some(Atom::Fun(Fun::Mod, args)) = single(e) {
                if args.get(1) == Some(n) {
                    return true;
                }
            }
            if let Some((m, c)) = e.0.iter().next() {
                if e.0.len() == 1 && *c == Rat::int(1) && m.len() == 1 {
                    if let Atom::Var(x) = &m[0] {
                        let ranky = *x == self.p.me
                            || self.p.vars.get(*x).is_some_and(|v| v.ty == Ty::Rank);
                        if ranky {
                            return true;
                        }
                    }
                }
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
