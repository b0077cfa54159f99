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
        let Some(var) = self.p.vars.get(v.index()) else {
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
            Atom::Fun(Fun::Log2, args) => {
                let r = args.first().map_or((0.0, f64::INFINITY), |x| self.range(x));
                (r.0.max(1.0).log2().floor(), r.1.max(1.0).log2().floor())
            }
            Atom::Fun(f, args) => {
                let (Some(x), Some(y)) = (args.first(), args.get(1)) else {
                    return (f64::NEG_INFINITY, f64::INFINITY);
                };
                let (ra, rb) = (self.range(x), self.range(y));
                match f {
                    Fun::Pow if ra.0 >= 1.0 && ra.0 == ra.1 && rb.0 >= 0.0 => {
                        (ra.0.powf(rb.0), ra.0.powf(rb.1))
                    }
                    Fun::CeilLog if rb.0 >= 2.0 && rb.0 == rb.1 => {
                        let l = |v: f64| (v.max(1.0).ln() / rb.0.ln() - 1e-9).ceil().max(0.0);
                        (l(ra.0), l(ra.1))
                    }
                    Fun::Xor | Fun::Or if ra.0 >= 0.0 && rb.0 >= 0.0 => {
                        (0.0, (ra.1.max(rb.1) + 1.0).log2().ceil().exp2() - 1.0)
                    }
                    Fun::And if ra.0 >= 0.0 || rb.0 >= 0.0 => {
                        let hi = if ra.0 >= 0.0 && rb.0 >= 0.0 {
                            ra.1.min(rb.1)
                        } else if ra.0 >= 0.0 {
                            ra.1
                        } else {
                            rb.1
                        };
                        (0.0, hi)
                    }
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
        let a = match a {
            Atom::Fun(f, args) => Atom::Fun(f, args.iter().map(fold_low).collect()),
            Atom::Ind(t, d) => Atom::Ind(t, fold_low(&d)),
            a => a,
        };
        match a {
            Atom::Var(_) => Poly::atom(a),
            Atom::Fun(f @ (Fun::Log2 | Fun::Pow | Fun::CeilLog | Fun::Xor), args) => {
                self.mk_log(f, args)
            }
            Atom::Fun(f, args) => self.mk_fun(f, args),
            Atom::Ind(t, d) => {
                if let Some(c) = d.as_const() {
                    return Poly::k(i128::from(match t {
                        Test::Eq0 => c.is_zero(),
                        Test::Lt0 => c.0 < 0,
                    }));
                }
                let r = self.range(&d);
                match t {
                    Test::Eq0 => self.mk_eq0(d, r),
                    Test::Lt0 => self.mk_lt0(d, r),
                }
            }
        }
    }

    /// [`Self::mk`] of a binary function: constant folding, `%` of a rank or of a sum
    /// with a multiple of P, `min`/`max` decided by ranges.
    fn mk_fun(&self, f: Fun, args: Vec<Poly>) -> Poly {
        let (Some(x), Some(y)) = (args.first(), args.get(1)) else {
            return Poly::atom(Atom::Fun(f, args));
        };
        let whole = Atom::Fun(f, args.clone());
        if let (Some(_), Some(_)) = (x.as_const(), y.as_const()) {
            if let Some(v) = whole.eval(&|_| None) {
                return Poly::k(v as i128);
            }
        }
        if f == Fun::Mod {
            // ((a % y) + c) % y = (a + c) % y; a rank modulo P is itself
            let inner = x.0.iter().find_map(|(m, c)| match m.as_slice() {
                [Atom::Fun(Fun::Mod, a)] if *c == Rat::int(1) && a.get(1) == Some(y) => {
                    Some((m.clone(), a[0].clone()))
                }
                _ => None,
            });
            if let Some((m, a)) = inner {
                let mut t = BTreeMap::new();
                t.insert(m, Rat::int(1));
                let flat = x.sub(&Poly(t)).add(&a);
                return self.mk(Atom::Fun(Fun::Mod, vec![flat, y.clone()]));
            }
            if *y == Poly::var(self.p.world) && self.rank_var(x).is_some() {
                return x.clone();
            }
            // (a + k*P) % P = a for a in 0..P
            let a = if *y == Poly::var(self.p.world) {
                self.strip_world(x)
            } else {
                x.clone()
            };
            if self.inside(&a, y) {
                return a;
            }
        }
        let (ra, rb) = (self.range(x), self.range(y));
        let gap = self.range(&x.sub(y)); // x - y
        match f {
            Fun::CeilDiv | Fun::Div if y.as_const() == Some(Rat::int(1)) => x.clone(),
            Fun::Min if gap.1 <= 0.0 => x.clone(),
            Fun::Min if gap.0 >= 0.0 => y.clone(),
            Fun::Max if gap.0 >= 0.0 => x.clone(),
            Fun::Max if gap.1 <= 0.0 => y.clone(),
            Fun::Min if x == y || ra.1 <= rb.0 || self.below(x, y) => x.clone(),
            Fun::Min if rb.1 <= ra.0 || self.below(y, x) => y.clone(),
            Fun::Max if x == y || ra.0 >= rb.1 => x.clone(),
            Fun::Max if rb.0 >= ra.1 => y.clone(),
            _ => Poly::atom(whole),
        }
    }

    /// [`Self::mk`] of the indicator `d == 0` (`r`: the range of `d`).
    fn mk_eq0(&self, d: Poly, r: (f64, f64)) -> Poly {
        if let Some(c) = self.rotation(&d) {
            if self.in_world(&c) || self.in_world(&c.scale(Rat::int(-1))) {
                // (x + c) % P == x never holds for 1 <= c < P
                return Poly::k(0);
            }
            // c = c' + k*P with c' (or -c') in 0..P: P divides c iff c' == 0
            let world = Poly::var(self.p.world);
            let rest = self.strip_world(&c);
            if rest.as_const().is_none()
                && (self.inside(&rest, &world) || self.inside(&rest.scale(Rat::int(-1)), &world))
            {
                return self.mk(Atom::Ind(Test::Eq0, rest));
            }
            if let Some(c) = c.as_const().filter(|c| c.1 == 1) {
                // (x + c) % P == x  iff  P divides c
                let m = self.mk(Atom::Fun(
                    Fun::Mod,
                    vec![Poly::k(c.0), Poly::var(self.p.world)],
                ));
                return self.mk(Atom::Ind(Test::Eq0, m));
            }
        }
        let world = Poly::var(self.p.world);
        if let Some(e) = mod_difference(&d, &world) {
            // a % P == b % P  iff  (a - b) % P == 0
            let m = self.mk(Atom::Fun(Fun::Mod, vec![e, world.clone()]));
            return self.mk(Atom::Ind(Test::Eq0, m));
        }
        if let Some(Atom::Fun(Fun::Mod, args)) = single(&d) {
            // (e' + k*P) % P == 0 with e' (or -e') in 0..P: iff e' == 0
            let e = self.strip_world(&args[0]);
            let fits = self.inside(&e, &world) || self.inside(&e.scale(Rat::int(-1)), &world);
            if args[1] == world && e.as_const().is_none() && fits {
                return self.mk(Atom::Ind(Test::Eq0, e));
            }
        }
        let neg = d.scale(Rat::int(-1));
        for e in [&d, &neg] {
            if let Some(Atom::Fun(Fun::And, args)) = single(e) {
                // x & -x (the lowest set bit) is 0 iff x is
                if args.len() == 2 && args[1] == args[0].scale(Rat::int(-1)) {
                    return self.mk(Atom::Ind(Test::Eq0, args[0].clone()));
                }
            }
        }
        if let Some(y) = self.xor_with(&d) {
            // x ^ y == x  iff  y == 0
            return self.mk(Atom::Ind(Test::Eq0, y));
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

    /// [`Self::mk`] of the indicator `d < 0` (`r`: the range of `d`).
    fn mk_lt0(&self, d: Poly, r: (f64, f64)) -> Poly {
        // d = v - u + c with v < u (a loop bound or a cell's dimension), c <= 0
        let bounded = self.upper.iter().any(|(v, u)| {
            let c = d.sub(&Poly::var(*v)).add(u).as_const();
            c.is_some_and(|c| c.0 <= 0)
        });
        if r.1 < 0.0 || bounded {
            Poly::k(1)
        } else if r.0 >= 0.0 {
            Poly::k(0)
        } else if let Some(e) = self.below_by_bits(&d) {
            self.mk(Atom::Ind(Test::Lt0, e))
        } else if r.0 == -1.0 {
            self.mk(Atom::Ind(Test::Eq0, d.add(&Poly::k(1))))
        } else if r.1 == 0.0 {
            self.mk(Atom::Ind(Test::Eq0, d)).not()
        } else {
            Poly::atom(Atom::Ind(Test::Lt0, d))
        }
    }

    /// `x` without its integer multiple of the world size (`x - k*P`).
    fn strip_world(&self, x: &Poly) -> Poly {
        let mut x = x.clone();
        x.0.retain(|m, k| !(m == &vec![Atom::Var(self.p.world)] && k.1 == 1));
        x
    }

    /// `x` is a rank variable and `y` the world size, or `x` is `min(y, _)` (so `x <= y`).
    pub(super) fn below(&self, x: &Poly, y: &Poly) -> bool {
        let log_of = match single(x) {
            // ceil(log_b(y)) <= y and log2(y) <= y for y >= 1
            Some(Atom::Fun(Fun::CeilLog | Fun::Log2, a)) => a.first() == Some(y),
            _ => false,
        };
        let bounded = match single(x) {
            // a loop variable below its loop's bound
            Some(Atom::Var(v)) => self.upper.get(v) == Some(y),
            _ => false,
        };
        *y == Poly::var(self.p.world) && self.rank_var(x).is_some()
            || bounded
            || self.min_of(x, y)
            || log_of && self.range(y).0 >= 1.0
    }

    /// The variable, when `x` is one rank-typed variable (`me`, a rank parameter, a
    /// `peers`/`ranks` loop variable): a value in `0..P`.
    pub(super) fn rank_var(&self, x: &Poly) -> Option<VarId> {
        match single(x)? {
            Atom::Var(v)
                if *v == self.p.me
                    || self.ranks.contains(v)
                    || self.p.vars.get(v.index()).is_some_and(|x| x.ty == Ty::Rank) =>
            {
                Some(*v)
            }
            _ => None,
        }
    }

    /// `d` is `(x + c) % P - x` (either sign) for a rank variable `x` and `c` free
    /// of `x`: `Some(c)`.
    pub(super) fn rotation(&self, d: &Poly) -> Option<Poly> {
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
            let c = args[0].sub(&Poly::var(v));
            if !c.mentions(v) {
                return Some(c);
            }
        }
        None
    }

    /// `c` lies in `1..P` for every value: at least 1 by its range, and a loop
    /// variable bounded by the world size (`for d in 1..P step *2`).
    pub(super) fn in_world(&self, c: &Poly) -> bool {
        let below_world = match single(c) {
            Some(Atom::Var(v)) => self.upper.get(v) == Some(&Poly::var(self.p.world)),
            _ => false,
        };
        below_world && self.range(c).0 >= 1.0
    }

    /// `d` is `(x ^ y) - x` (either sign, either operand order): `Some(y)`.
    pub(super) fn xor_with(&self, d: &Poly) -> Option<Poly> {
        xor_parts(d).into_iter().find_map(|(a, b, x)| {
            if a == x {
                Some(b)
            } else if b == x {
                Some(a)
            } else {
                None
            }
        })
    }

    /// Powers, logarithms and `^`, simplified: `log2(pow2(e)) = e`,
    /// `pow2(log2(x)) = x`, `b^(e + c) = b^c * b^e`, `ceil(log_b(b^e)) = e`,
    /// `ceil(log2(P)) = log2(P)` when a `require` makes P a power of two,
    /// `x ^ 0 = x`, `x ^ x = 0`.
    fn mk_log(&self, f: Fun, args: Vec<Poly>) -> Poly {
        let whole = Atom::Fun(f, args.clone());
        if args.iter().all(|a| a.as_const().is_some()) {
            if let Some(v) = whole.eval(&|_| None) {
                return Poly::k(v as i128);
            }
        }
        let x = args.first().cloned().unwrap_or_default();
        let y = args.get(1).cloned().unwrap_or_default();
        let two = Poly::k(2);
        match f {
            Fun::Log2 => match single(&x) {
                Some(Atom::Fun(Fun::Pow, a)) if a.first() == Some(&two) => a[1].clone(),
                _ => Poly::atom(whole),
            },
            Fun::Pow => {
                if y.is_zero() {
                    return Poly::k(1);
                }
                if let (Some(Atom::Fun(Fun::Log2, a)), true) = (single(&y), x == two) {
                    return a[0].clone();
                }
                let c = y.0.get(&Vec::new()).copied().unwrap_or(Rat::int(0));
                match (x.as_const(), c.as_int()) {
                    (Some(b), Some(k)) if k > 0 && y.0.len() > 1 && b.1 == 1 => {
                        match u32::try_from(k).ok().and_then(|k| b.0.checked_pow(k)) {
                            Some(scale) => {
                                let rest = y.sub(&Poly::k(k));
                                self.mk(Atom::Fun(Fun::Pow, vec![x, rest]))
                                    .scale(Rat::int(scale))
                            }
                            None => Poly::atom(whole),
                        }
                    }
                    _ => Poly::atom(whole),
                }
            }
            Fun::CeilLog => {
                if self.range(&x).1 <= 1.0 {
                    return Poly::k(0);
                }
                if y == two && x == Poly::var(self.p.world) && self.pow2_world {
                    return self.mk(Atom::Fun(Fun::Log2, vec![x]));
                }
                match single(&x) {
                    Some(Atom::Fun(Fun::Pow, a)) if a.first() == Some(&y) => a[1].clone(),
                    _ => Poly::atom(whole),
                }
            }
            _ => {
                if x.is_zero() {
                    y
                } else if y.is_zero() {
                    x
                } else if x == y {
                    Poly::k(0)
                } else {
                    Poly::atom(whole)
                }
            }
        }
    }

    /// `d < 0` as an equivalent `e < 0` with the bit operation taken out:
    /// `pow2(a) - b < 0` is `a - ceil(log2(b)) < 0` (`2^a < b` iff
    /// `a < ceil(log2(b))` for integers `a >= 0` and `b`), and with P a power of two
    /// (a `require`), `(x ^ c) - P < 0` for a rank `x` and `c >= 0` is `c - P < 0` (the
    /// bits of `x ^ c` from `log2(P)` up are those of `c`).
    fn below_by_bits(&self, d: &Poly) -> Option<Poly> {
        let (mono, one) =
            d.0.iter()
                .find(|(m, _)| matches!(m.as_slice(), [Atom::Fun(Fun::Pow | Fun::Xor, _)]))?;
        let [Atom::Fun(f, args)] = mono.as_slice() else {
            return None;
        };
        if *one != Rat::int(1) || args.len() != 2 {
            return None;
        }
        let mut t = BTreeMap::new();
        t.insert(mono.clone(), *one);
        let b = Poly(t).sub(d); // d = atom - b
        match f {
            Fun::Pow if args[0] == Poly::k(2) && self.range(&args[1]).0 >= 0.0 => {
                let lg = self.mk(Atom::Fun(Fun::CeilLog, vec![b, Poly::k(2)]));
                Some(args[1].sub(&lg))
            }
            Fun::Xor if self.pow2_world && b == Poly::var(self.p.world) => {
                let c = if self.rank_var(&args[0]).is_some() {
                    &args[1]
                } else if self.rank_var(&args[1]).is_some() {
                    &args[0]
                } else {
                    return None;
                };
                (self.range(c).0 >= 0.0).then(|| c.sub(&b))
            }
            _ => None,
        }
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
        // a summation index (an id past the protocol's) is no `let`
        let Some(VarKind::Derived(Expr::Min(a, b))) = self.p.vars.get(v.index()).map(|x| &x.kind)
        else {
            return false;
        };
        let (Ok(a), Ok(b)) = (self.poly(a), self.poly(b)) else {
            return false;
        };
        // x = min(a, b) is below a, b and min(b, a)
        let same_min = match single(y) {
            Some(Atom::Fun(Fun::Min, args)) => {
                (args[0] == a && args[1] == b) || (args[0] == b && args[1] == a)
            }
            _ => false,
        };
        a == *y || b == *y || same_min
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

/// `d` as `(a ^ b) - x`, for each sign of `d` where it has that form (`x` without
/// the `^` term): the triples `(a, b, x)`.
pub(super) fn xor_parts(d: &Poly) -> Vec<(Poly, Poly, Poly)> {
    let mut out = Vec::new();
    for d in [d.clone(), d.scale(Rat::int(-1))] {
        let Some((mono, one)) =
            d.0.iter()
                .find(|(m, _)| matches!(m.as_slice(), [Atom::Fun(Fun::Xor, _)]))
        else {
            continue;
        };
        let [Atom::Fun(Fun::Xor, args)] = mono.as_slice() else {
            continue;
        };
        if *one != Rat::int(1) || args.len() != 2 {
            continue;
        }
        let mut t = BTreeMap::new();
        t.insert(mono.clone(), *one);
        let x = Poly(t).sub(&d); // x = xor - d
        out.push((args[0].clone(), args[1].clone(), x));
    }
    out
}

/// `d` is `a % P - b % P` (either sign): `a - b`.
fn mod_difference(d: &Poly, world: &Poly) -> Option<Poly> {
    if d.0.len() != 2 {
        return None;
    }
    let mut pos = None;
    let mut neg = None;
    for (m, k) in &d.0 {
        let [Atom::Fun(Fun::Mod, args)] = m.as_slice() else {
            return None;
        };
        if args.get(1) != Some(world) {
            return None;
        }
        if *k == Rat::int(1) {
            pos = Some(args[0].clone());
        } else if *k == Rat::int(-1) {
            neg = Some(args[0].clone());
        }
    }
    Some(pos?.sub(&neg?))
}

/// `x` with two of `a`, its lowest set bit `a & -a` and the rest `a & (a - 1)` (a
/// binomial tree's child, round and parent) written as the third when their
/// coefficients allow (`(a & (a - 1)) + (a & -a)` is `a`, `a - (a & -a)` is
/// `a & (a - 1)`, `(a & (a - 1)) - a` is `-(a & -a)`), for `a` one atom.
pub(super) fn fold_low(x: &Poly) -> Poly {
    let mut x = x.clone();
    'again: loop {
        let bases: Vec<Poly> =
            x.0.keys()
                .filter_map(|m| match m.as_slice() {
                    [Atom::Fun(Fun::And, args)] if args.len() == 2 => Some(args[0].clone()),
                    _ => None,
                })
                .collect();
        for a in bases {
            let Some((am, ak)) = a.0.iter().next() else {
                continue;
            };
            if a.0.len() != 1 || *ak != Rat::int(1) {
                continue;
            }
            let low = Poly::atom(Atom::Fun(Fun::And, vec![a.clone(), a.scale(Rat::int(-1))]));
            let par = Poly::atom(Atom::Fun(Fun::And, vec![a.clone(), a.sub(&Poly::k(1))]));
            let coef = |p: &Poly| {
                p.0.keys()
                    .next()
                    .and_then(|m| x.0.get(m).copied())
                    .unwrap_or(Rat::int(0))
            };
            let (al, be, ga) = (
                x.0.get(am).copied().unwrap_or(Rat::int(0)),
                coef(&low),
                coef(&par),
            );
            let zero = Rat::int(0);
            let neg = |r: Rat| r * Rat::int(-1);
            let step = if be != zero && ga == be {
                Some((be, a.sub(&low).sub(&par)))
            } else if al != zero && be == neg(al) {
                Some((al, par.sub(&a).add(&low)))
            } else if al != zero && ga == neg(al) {
                Some((al, low.sub(&a).add(&par)))
            } else {
                None
            };
            if let Some((k, d)) = step {
                x = x.add(&d.scale(k));
                continue 'again;
            }
        }
        return x;
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
