//! Walks the protocol IR once with the world size symbolic and derives, per call
//! and summed over every rank and block, closed forms of the counted operations:
//! `for p in peers` is a sum over all ranks minus the term at `me`, numeric loops
//! sum over `max(0, ceil((hi - lo) / step))` iterations (Faulhaber's sums for
//! polynomial bodies), guards become 0/1 indicators that summation resolves
//! (`me == root` holds for one rank, `blk < A` for `min(C, A)` blocks). A form it
//! cannot sum in closed form is an error naming the form.

use super::alg::{Atom, Fun, Poly, Rat, Test};
use super::show::Names;
use collc_spec::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// The counted operations, in the order of the report's rows.
pub const KINDS: [&str; 4] = ["remote atomics", "local notifies", "waits", "fences"];

/// One count per kind.
pub type Counts = [Poly; 4];

type Iv = (f64, f64);

/// The derivation's state.
pub struct Walk<'a> {
    p: &'a Protocol,
    /// Statement-level `let`s in scope, inlined.
    locals: BTreeMap<VarId, Poly>,
    /// Value ranges of `me`, the block index, loop variables and summation indices.
    bounds: BTreeMap<VarId, Iv>,
    /// Loop variables of `for p in peers` in scope (never `me`).
    peers: BTreeSet<VarId>,
    /// Summation indices made so far (ids from `p.vars.len()`).
    fresh: usize,
    /// Why a count has no closed form, by kind.
    failed: [Option<String>; 4],
}

fn corners(a: Iv, b: Iv, f: &dyn Fn(f64, f64) -> f64) -> Iv {
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

impl<'a> Walk<'a> {
    /// A walk over `p`.
    pub fn new(p: &'a Protocol) -> Self {
        Walk {
            p,
            locals: BTreeMap::new(),
            bounds: BTreeMap::new(),
            peers: BTreeSet::new(),
            fresh: 0,
            failed: Default::default(),
        }
    }

    /// Names for printing (summation indices included).
    pub fn names(&self) -> Names<'a> {
        Names { p: self.p }
    }

    fn world_range(&self) -> Iv {
        match self.p.vars[self.p.world].kind {
            VarKind::World { lo, hi } => (lo as f64, hi as f64),
            _ => (1.0, f64::INFINITY),
        }
    }

    fn var_range(&self, v: VarId) -> Iv {
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

    fn atom_range(&self, a: &Atom) -> Iv {
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
    fn below(&self, x: &Poly, y: &Poly) -> bool {
        *y == Poly::var(self.p.world) && self.rank_var(x).is_some() || self.min_of(x, y)
    }

    /// The variable, when `x` is one rank-typed variable (`me`, a rank parameter, a
    /// `peers`/`ranks` loop variable): a value in `0..P`.
    fn rank_var(&self, x: &Poly) -> Option<VarId> {
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
    fn rotation(&self, d: &Poly) -> Option<i128> {
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
    fn min_of(&self, x: &Poly, y: &Poly) -> bool {
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

    /// `Σ_{v in 0..n} max(0, ceil((X - c*v) / (c*n)))` is `ceil(X / c)` for `X >= 0`,
    /// `c >= 1`, `n >= 1` (Hermite's identity: the `n` blocks' round-robin shares
    /// of `ceil(X / c)` tiles add up to all of them). `a` is the term's one factor
    /// that mentions `v`.
    fn hermite(&self, a: &Atom, v: VarId, n: &Poly) -> Option<Poly> {
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

    /// `d` is `p - me` or `me - p` for a peer `p`.
    fn peer_vs_me(&self, d: &Poly) -> bool {
        let me = Poly::var(self.p.me);
        self.peers.iter().any(|v| {
            let x = Poly::var(*v).sub(&me);
            *d == x || *d == x.scale(Rat::int(-1))
        })
    }

    fn fun(&self, f: Fun, a: &Expr, b: &Expr) -> Result<Poly, String> {
        Ok(self.mk(Atom::Fun(f, vec![self.poly(a)?, self.poly(b)?])))
    }

    /// An expression as a polynomial (constants as numbers, statement-level `let`s inlined).
    pub fn poly(&self, e: &Expr) -> Result<Poly, String> {
        Ok(match e {
            Expr::Int(v) => Poly::k(*v as i128),
            Expr::Var(v) => match &self.p.vars[*v].kind {
                VarKind::Const(c) => Poly::k(*c as i128),
                VarKind::Local => self
                    .locals
                    .get(v)
                    .cloned()
                    .ok_or_else(|| format!("`{}` is not in scope", self.p.var_name(*v)))?,
                _ => Poly::var(*v),
            },
            Expr::Array(a, _) => {
                return Err(format!("it reads host array `{}`", self.p.arrays[*a].name))
            }
            Expr::Neg(a) => self.poly(a)?.scale(Rat::int(-1)),
            Expr::Rank(a) => self.poly(a)?,
            Expr::Bin(op, a, b) => match op {
                BinOp::Add => self.poly(a)?.add(&self.poly(b)?),
                BinOp::Sub => self.poly(a)?.sub(&self.poly(b)?),
                BinOp::Mul => self.poly(a)?.mul(&self.poly(b)?),
                BinOp::Div => self.fun(Fun::Div, a, b)?,
                BinOp::Mod => self.fun(Fun::Mod, a, b)?,
            },
            Expr::CeilDiv(a, b) => self.fun(Fun::CeilDiv, a, b)?,
            Expr::Min(a, b) => self.fun(Fun::Min, a, b)?,
            Expr::Max(a, b) => self.fun(Fun::Max, a, b)?,
        })
    }

    /// A condition as a 0/1 polynomial.
    pub fn ind(&self, c: &Cond) -> Result<Poly, String> {
        Ok(match c {
            Cond::Bool(b) => Poly::k(i128::from(*b)),
            Cond::Cmp(op, a, b) => {
                let d = self.poly(a)?.sub(&self.poly(b)?);
                let eq = |d: Poly| self.mk(Atom::Ind(Test::Eq0, d));
                let lt = |d: Poly| self.mk(Atom::Ind(Test::Lt0, d));
                match op {
                    CmpOp::Eq => eq(d),
                    CmpOp::Ne => eq(d).not(),
                    CmpOp::Lt => lt(d),
                    CmpOp::Ge => lt(d).not(),
                    CmpOp::Gt => lt(d.scale(Rat::int(-1))),
                    CmpOp::Le => lt(d.scale(Rat::int(-1))).not(),
                }
            }
            Cond::Not(c) => self.ind(c)?.not(),
            Cond::And(cs) => {
                let mut acc = Poly::k(1);
                for c in cs {
                    acc = acc.mul(&self.ind(c)?);
                }
                acc
            }
            Cond::Or(cs) => {
                let mut none = Poly::k(1);
                for c in cs {
                    none = none.mul(&self.ind(c)?.not());
                }
                none.not()
            }
        })
    }

    fn fresh_index(&mut self, r: Iv) -> VarId {
        let id = self.p.vars.len() + self.fresh;
        self.fresh += 1;
        self.bounds.insert(id, r);
        id
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
    fn residues(&self, d: &Poly, v: VarId, n: &Poly) -> Option<Poly> {
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
    fn clamp(&self, x: &Poly, n: &Poly) -> Poly {
        let m = self.mk(Atom::Fun(Fun::Max, vec![Poly::k(0), x.clone()]));
        self.mk(Atom::Fun(Fun::Min, vec![n.clone(), m]))
    }

    /// Whether `e` lies in `0..n` for every value (rank-typed values in `0..P`).
    fn inside(&self, e: &Poly, n: &Poly) -> bool {
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

    /// Records that count `k` has no closed form (the first reason is kept).
    fn fail(&mut self, k: usize, why: String) {
        if self.failed[k].is_none() {
            self.failed[k] = Some(why);
        }
    }

    fn sum_or_fail(&mut self, k: usize, f: &Poly, v: VarId, n: &Poly) -> Option<Poly> {
        match self.sum(f, v, n) {
            Ok(x) => Some(x),
            Err(why) => {
                self.fail(k, why);
                None
            }
        }
    }

    /// Counts of one block's statements per execution, and the indicator that the
    /// block ran to its end (a top-level `return if c` ends it when `c` holds).
    pub fn block(&mut self, b: &Block, top: bool) -> Result<(Counts, Poly), String> {
        let mut out: Counts = Default::default();
        let mut go = Poly::k(1);
        for s in &b.stmts {
            let c = self.stmt(s, top, &mut go)?;
            for (k, x) in c.iter().enumerate() {
                out[k] = out[k].add(&go.mul(x));
            }
        }
        Ok((out, go))
    }

    fn stmt(&mut self, s: &Stmt, top: bool, go: &mut Poly) -> Result<Counts, String> {
        let mut out: Counts = Default::default();
        match &s.kind {
            StmtKind::Let { var, value } => {
                // A `let` nothing counted depends on may not have a polynomial form.
                if let Ok(x) = self.poly(value) {
                    self.locals.insert(*var, x);
                } else {
                    self.locals.remove(var);
                }
            }
            StmtKind::Notify { target, .. } => match target {
                None => out[1] = Poly::k(1),
                Some(t) => {
                    let d = self.poly(t)?.sub(&Poly::var(self.p.me));
                    let local = self.mk(Atom::Ind(Test::Eq0, d));
                    out[0] = local.not();
                    out[1] = local;
                }
            },
            StmtKind::Wait { .. } => out[2] = Poly::k(1),
            StmtKind::Fence => out[3] = Poly::k(1),
            StmtKind::Copy { .. }
            | StmtKind::Get { .. }
            | StmtKind::Put { .. }
            | StmtKind::Reduce { .. } => {}
            StmtKind::Return { cond } => {
                if !top {
                    return Err("a `return` inside a loop or branch".into());
                }
                *go = go.mul(&self.ind(cond)?.not());
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let (t, _) = self.block(then_block, false)?;
                let e = match else_block {
                    Some(b) => self.block(b, false)?.0,
                    None => Default::default(),
                };
                match self.ind(cond) {
                    Ok(c) => {
                        for k in 0..4 {
                            out[k] = c.mul(&t[k]).add(&c.not().mul(&e[k]));
                        }
                    }
                    Err(why) => {
                        for k in 0..4 {
                            if !(t[k].is_zero() && e[k].is_zero()) {
                                self.fail(
                                    k,
                                    format!(
                                        "the guard `{}`: {why}",
                                        collc_spec::print::cond_to_string(self.p, cond)
                                    ),
                                );
                            }
                        }
                    }
                }
            }
            StmtKind::For { var, range, body } => {
                let world = Poly::var(self.p.world);
                let wr = self.world_range();
                match range {
                    Range::Peers | Range::Ranks => {
                        self.bounds.insert(*var, (0.0, wr.1 - 1.0));
                        let peers = matches!(range, Range::Peers);
                        if peers {
                            self.peers.insert(*var);
                        }
                        let (b, _) = self.block(body, false)?;
                        self.peers.remove(var);
                        for k in 0..4 {
                            if b[k].is_zero() {
                                continue;
                            }
                            let Some(all) = self.sum_or_fail(k, &b[k], *var, &world) else {
                                continue;
                            };
                            out[k] = all;
                            if peers {
                                let me = Poly::var(self.p.me);
                                out[k] = out[k].sub(&b[k].subst(*var, &me, &|a| self.mk(a)));
                            }
                        }
                    }
                    Range::Span { lo, hi, step } => {
                        let (lo, hi, step) = (self.poly(lo)?, self.poly(hi)?, self.poly(step)?);
                        let span =
                            self.mk(Atom::Fun(Fun::CeilDiv, vec![hi.sub(&lo), step.clone()]));
                        let trips = self.mk(Atom::Fun(Fun::Max, vec![Poly::k(0), span]));
                        let (rl, rh) = (self.range(&lo), self.range(&hi));
                        self.bounds.insert(*var, (rl.0, rh.1 - 1.0));
                        let (b, _) = self.block(body, false)?;
                        // Sum over the iteration number j (`var = lo + step*j`); over
                        // `var` itself when lo is 0 and step 1.
                        let plain = lo.is_zero() && step == Poly::k(1);
                        let j = if plain {
                            *var
                        } else {
                            self.fresh_index((0.0, self.range(&trips).1 - 1.0))
                        };
                        let at = lo.add(&step.mul(&Poly::var(j)));
                        for k in 0..4 {
                            if b[k].is_zero() {
                                continue;
                            }
                            let f = if plain {
                                b[k].clone()
                            } else {
                                b[k].subst(*var, &at, &|a| self.mk(a))
                            };
                            if let Some(x) = self.sum_or_fail(k, &f, j, &trips) {
                                out[k] = x;
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Per call, all ranks and blocks together: body, then the epilogue unless a
    /// top-level `return` left, summed over `me` and the block index.
    pub fn protocol(&mut self) -> Vec<Result<Poly, String>> {
        let p = self.p;
        let wr = self.world_range();
        self.bounds.insert(p.me, (0.0, wr.1 - 1.0));
        let blocks = match &p.blocks {
            Some(b) => match self.poly(&b.count) {
                Ok(c) => {
                    let r = self.range(&c);
                    self.bounds.insert(b.var, (0.0, r.1 - 1.0));
                    Some((b.var, c))
                }
                Err(e) => return vec![Err(e); 4],
            },
            None => None,
        };
        let body = self.block(&p.body, true);
        let epi = self.block(&p.epilogue, true);
        let (body, go, epi) = match (body, epi) {
            (Ok((b, go)), Ok((e, _))) => (b, go, e),
            (Err(e), _) | (_, Err(e)) => return vec![Err(e); 4],
        };
        let world = Poly::var(p.world);
        (0..4)
            .map(|k| {
                if let Some(why) = &self.failed[k] {
                    return Err(why.clone());
                }
                let per = body[k].add(&go.mul(&epi[k]));
                let mut all = self.sum(&per, p.me, &world)?;
                if let Some((v, c)) = &blocks {
                    all = self.sum(&all, *v, c)?;
                }
                Ok(self.tidy(&all))
            })
            .collect()
    }

    /// Terms under `[X == k]` (one variable) get `X := k` in their cofactor; a
    /// cofactor that vanishes there drops (e.g. `[P == 1] * (P - 1)`).
    fn tidy(&self, x: &Poly) -> Poly {
        let mut groups: BTreeMap<Vec<Atom>, Poly> = BTreeMap::new();
        for (m, c) in &x.0 {
            let (inds, rest): (Vec<Atom>, Vec<Atom>) = m
                .iter()
                .cloned()
                .partition(|a| matches!(a, Atom::Ind(Test::Eq0, _)));
            let mut t = BTreeMap::new();
            t.insert(rest, *c);
            let g = groups.entry(inds).or_default();
            *g = g.add(&Poly(t));
        }
        let mut out = Poly::default();
        for (inds, mut co) in groups {
            for a in &inds {
                if let Atom::Ind(_, d) = a {
                    if let Some((v, k)) = solve_one(d) {
                        co = co.subst(v, &Poly::rat(k), &|a| self.mk(a));
                    }
                }
            }
            let mut f = Poly::k(1);
            for a in inds {
                f = f.mul(&Poly::atom(a));
            }
            out = out.add(&f.mul(&co));
        }
        out
    }
}

/// The one atom `x` is (coefficient 1), if it is one.
fn single(x: &Poly) -> Option<&Atom> {
    let (m, c) = x.0.iter().next()?;
    match m.as_slice() {
        [a] if x.0.len() == 1 && *c == Rat::int(1) => Some(a),
        _ => None,
    }
}

/// `d == 0` as `v = k` when `d` is `a*v + b` for one variable `v`.
fn solve_one(d: &Poly) -> Option<(VarId, Rat)> {
    let mut var = None;
    let mut a = Rat::int(0);
    let mut b = Rat::int(0);
    for (m, c) in &d.0 {
        match m.as_slice() {
            [] => b = *c,
            [Atom::Var(v)] if var.is_none() => {
                var = Some(*v);
                a = *c;
            }
            _ => return None,
        }
    }
    let v = var?;
    Some((v, b * Rat::new(-a.1, a.0)))
}

/// `Σ_{v in 0..n} v^k` for `k <= 3`.
fn faulhaber(k: usize, n: &Poly) -> Option<Poly> {
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
