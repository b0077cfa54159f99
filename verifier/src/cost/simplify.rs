//! Simplification for the cost derivation: value intervals from the declared domains,
//! and atoms built simplified (constants folded, `min`/`max` and indicators decided by
//! intervals and by what ranks are: a rank is below P, `(x + c) % P == x` iff P divides
//! c, a peer is never `me`).

use super::alg::{Atom, Fun, Poly, Rat, Test};
use super::walk::{Iv, Walk};
use collc_spec::ir::*;
use std::collections::BTreeMap;

pub(super) fn corners(a: Iv, b: Iv, f: &dyn Fn(f64, f64) -> f64) -> Iv {
    let xs = [f(a.0, b.0), f(a.0, b.1), f(a.1, b.0), f(a.1, b.1)];
    let lo = xs.iter().fold(f64::INFINITY, |m, x| {
        if x.is_nan() {
            m.min(0.0)
        } else {
            m.min(*x)
        }
    });
    let hi = xs.iter().fold(f64::NEG_INFINITY, |m, x| {
        if x.is_nan() {
            m.max(0.0)
        } else {
            m.max(*x)
        }
    });
    (lo, hi)
}

impl Walk<'_> {
    pub(super) fn world_range(&self) -> Iv {
        match self.p.vars[self.p.world].kind {
            VarKind::World { lo, hi } => (lo as f64, hi as f64),
            _ => (1.0, f64::INFINITY),
        }
    }

    pub(super) fn var_range(&self, v: VarId) -> Iv {
        if let Some(r) = self.bounds.get(&v) {
            return *r;
        }
        let Some(var) = self.p.vars.get(v) else {
            return (f64::NEG_INFINITY, f64::INFINITY);
        };
        match &var.kind {
            VarKind::World { lo, hi } => (*lo as f64, *hi as f64),
            VarKind::Param {
                domain: Some((lo, hi)),
            } => (*lo as f64, *hi as f64),
            VarKind::Param { domain: None } | VarKind::Me => (0.0, self.world_range().1 - 1.0),
            VarKind::Const(c) => (*c as f64, *c as f64),
            VarKind::Derived(e) => match self.poly(e) {
                Ok(x) => self.range(&x),
                Err(_) => (f64::NEG_INFINITY, f64::INFINITY),
            },
            _ => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// An interval containing every value of `x`.
    pub fn range(&self, x: &Poly) -> Iv {
        let mut acc = (0.0, 0.0);
        for (m, c) in &x.0 {
            let cv = c.0 as f64 / c.1 as f64;
            let mut t = (cv, cv);
            for a in m {
                t = corners(t, self.atom_range(a), &|x, y| x * y);
            }
            acc = (acc.0 + t.0, acc.1 + t.1);
        }
        acc
    }

    pub(super) fn atom_range(&self, a: &Atom) -> Iv {
        match a {
            Atom::Var(v) => self.var_range(*v),
            Atom::Ind(..) => (0.0, 1.0),
            Atom::Fun(f, args) => {
                let (Some(x), Some(y)) = (args.first(), args.get(1)) else {
                    return (f64::NEG_INFINITY, f64::INFINITY);
                };
                let (ra, rb) = (self.range(x), self.range(y));
                match f {
                    Fun::Min => (ra.0.min(rb.0), ra.1.min(rb.1)),
                    Fun::Max => (ra.0.max(rb.0), ra.1.max(rb.1)),
                    Fun::Mod if rb.0 > 0.0 => (0.0, rb.1 - 1.0),
                    Fun::CeilDiv if rb.0 > 0.0 => {
                        let q = corners(ra, rb, &|x, y| x / y);
                        (q.0.ceil(), q.1.ceil())
                    }
                    Fun::Div if rb.0 > 0.0 => {
                        let q = corners(ra, rb, &|x, y| x / y);
                        (q.0.floor(), q.1.floor())
                    }
                    _ => (f64::NEG_INFINITY, f64::INFINITY),
                }
            }
        }
    }

    /// Builds an atom, simplified: constant folding, `min`/`max` decided by ranges,
    /// indicators decided by ranges (and `p == me` false for a peer `p`).
    pub fn mk(&self, a: Atom) -> Poly {
        match a {
            Atom::Var(_) => Poly::atom(a),
            Atom::Fun(f, args) => {
                let (Some(x), Some(y)) = (args.first(), args.get(1)) else {
                    return Poly::atom(Atom::Fun(f, args));
                };
                let whole = Atom::Fun(f, args.clone());
                if let (Some(_), Some(_)) = (x.as_const(), y.as_const()) {
                    if let Some(v) = whole.eval(&|_| None) {
                        return Poly::k(v as i128);
                    }
                }
                let (ra, rb) = (self.range(x), self.range(y));
                match f {
                    Fun::CeilDiv | Fun::Div if y.as_const() == Some(Rat::int(1)) => x.clone(),
                    Fun::Min if x == y || ra.1 <= rb.0 || self.below(x, y) => x.clone(),
                    Fun::Min if rb.1 <= ra.0 || self.below(y, x) => y.clone(),
                    Fun::Max if x == y || ra.0 >= rb.1 => x.clone(),
                    Fun::Max if rb.0 >= ra.1 => y.clone(),
                    _ => Poly::atom(whole),
                }
            }
            Atom::Ind(t, d) => {
                if let Some(c) = d.as_const() {
                    return Poly::k(i128::from(match t {
                        Test::Eq0 => c.is_zero(),
                        Test::Lt0 => c.0 < 0,
                    }));
                }
                let r = self.range(&d);
                match t {
                    Test::Eq0 => {
                        if let Some(c) = self.rotation(&d) {
                            // (x + c) % P == x  iff  P divides c
                            let m = self.mk(Atom::Fun(
                                Fun::Mod,
                                vec![Poly::k(c), Poly::var(self.p.world)],
                            ));
                            return self.mk(Atom::Ind(Test::Eq0, m));
                        }
                        if let Some(Atom::Fun(Fun::Mod, args)) = single(&d) {
                            // c % P == 0 for c = ±1 iff P == 1
                            let unit = args[0]
                                .as_const()
                                .is_some_and(|c| c.0.abs() == 1 && c.1 == 1);
                            if unit && args[1] == Poly::var(self.p.world) {
                                return self.mk(Atom::Ind(Test::Eq0, args[1].sub(&Poly::k(1))));
                            }
                        }
                        if r.0 > 0.0 || r.1 < 0.0 || self.peer_vs_me(&d) {
                            return Poly::k(0);
                        }
                        // One sign for `a == b` and `b == a`.
                        let lead = d.0.iter().max_by_key(|(m, _)| m.len()).map(|(_, c)| *c);
                        let neg = lead.is_some_and(|c| c.0 < 0);
                        Poly::atom(Atom::Ind(
                            Test::Eq0,
                            if neg { d.scale(Rat::int(-1)) } else { d },
                        ))
                    }
                    Test::Lt0 => {
                        if r.1 < 0.0 {
                            Poly::k(1)
                        } else if r.0 >= 0.0 {
                            Poly::k(0)
                        } else if r.0 == -1.0 {
                            self.mk(Atom::Ind(Test::Eq0, d.add(&Poly::k(1))))
                        } else if r.1 == 0.0 {
                            self.mk(Atom::Ind(Test::Eq0, d)).not()
                        } else {
                            Poly::atom(Atom::Ind(Test::Lt0, d))
                        }
                    }
                }
            }
        }
    }

    /// `x` is a rank variable and `y` the world size, or `x` is `min(y, _)` (so `x <= y`).
    pub(super) fn below(&self, x: &Poly, y: &Poly) -> bool {
        *y == Poly::var(self.p.world) && self.rank_var(x).is_some() || self.min_of(x, y)
    }

    /// The variable, when `x` is one rank-typed variable (`me`, a rank parameter, a
    /// `peers`/`ranks` loop variable): a value in `0..P`.
    pub(super) fn rank_var(&self, x: &Poly) -> Option<VarId> {
        match single(x)? {
            Atom::Var(v)
                if *v == self.p.me || self.p.vars.get(*v).is_some_and(|x| x.ty == Ty::Rank) =>
            {
                Some(*v)
            }
            _ => None,
        }
    }

    /// `d` is `(x + c) % P - x` (either sign) for a rank variable `x`: `Some(c)`.
    pub(super) fn rotation(&self, d: &Poly) -> Option<i128> {
        for d in [d.clone(), d.scale(Rat::int(-1))] {
            let m =
                d.0.iter()
                    .find(|(m, _)| matches!(m.as_slice(), [Atom::Fun(Fun::Mod, _)]));
            let Some((mono, one)) = m else { continue };
            let [Atom::Fun(Fun::Mod, args)] = mono.as_slice() else {
                continue;
            };
            if *one != Rat::int(1) || args[1] != Poly::var(self.p.world) {
                continue;
            }
            let mut t = BTreeMap::new();
            t.insert(mono.clone(), *one);
            let x = Poly(t).sub(&d); // x = mod - d
            let Some(v) = self.rank_var(&x) else { continue };
            let c = args[0].sub(&Poly::var(v)).as_const()?;
            if c.1 == 1 {
                return Some(c.0);
            }
        }
        None
    }

    /// `x` is a top-level `let` defined as `min(y, _)` or `min(_, y)` (so `x <= y`).
    pub(super) fn min_of(&self, x: &Poly, y: &Poly) -> bool {
        let Some((m, c)) = x.0.iter().next() else {
            return false;
        };
        let [Atom::Var(v)] = m.as_slice() else {
            return false;
        };
        if x.0.len() != 1 || *c != Rat::int(1) {
            return false;
        }
        let VarKind::Derived(Expr::Min(a, b)) = &self.p.vars[*v].kind else {
            return false;
        };
        [a, b].iter().any(|e| self.poly(e).is_ok_and(|e| e == *y))
    }

    /// `d` is `p - me` or `me - p` for a peer `p`.
    pub(super) fn peer_vs_me(&self, d: &Poly) -> bool {
        let me = Poly::var(self.p.me);
        self.peers.iter().any(|v| {
            let x = Poly::var(*v).sub(&me);
            *d == x || *d == x.scale(Rat::int(-1))
        })
    }
}

/// The one atom `x` is (coefficient 1), if it is one.
pub(super) fn single(x: &Poly) -> Option<&Atom> {
    let (m, c) = x.0.iter().next()?;
    match m.as_slice() {
        [a] if x.0.len() == 1 && *c == Rat::int(1) => Some(a),
        _ => None,
    }
}
