//! Symbolic integers for the verifier: linear combinations ([`Lin`]) over interned
//! atoms ([`Atom`]: symbolic parameters, host-array elements, iteration indices of
//! summarised loops, and the non-linear forms `ceil`, `/`, `%`, `min`, `max`, `*`,
//! triangular numbers, guard indicators). Atoms are hash-consed per configuration
//! ([`Syms`]), so equal sub-terms are the same atom and most per-cell sums cancel to a
//! literal before Z3 is asked anything.

use collc_spec::ir::{ArrayId, CmpOp, VarId};
use std::collections::HashMap;

/// Index of an atom in [`Syms::atoms`].
pub type AtomId = u32;
/// Index of a condition in [`Syms::conds`].
pub type CondId = u32;

/// The terms of a [`Lin`].
pub type Terms = smallvec::SmallVec<[(AtomId, i64); 2]>;

/// `c + Σ k·atom` with non-zero coefficients, sorted by atom id.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Lin {
    /// The constant term.
    pub c: i64,
    /// `(atom, coefficient)`, sorted by atom, no zero coefficients (inline up to 2).
    pub t: Terms,
}

impl Lin {
    /// A literal.
    pub fn k(c: i64) -> Lin {
        Lin { c, t: Terms::new() }
    }
    /// One atom.
    pub fn atom(a: AtomId) -> Lin {
        Lin {
            c: 0,
            t: smallvec::smallvec![(a, 1)],
        }
    }
    /// The literal value, if there are no atoms.
    pub fn as_const(&self) -> Option<i64> {
        if self.t.is_empty() {
            Some(self.c)
        } else {
            None
        }
    }
    /// True for the literal 0.
    pub fn is_zero(&self) -> bool {
        self.c == 0 && self.t.is_empty()
    }
    /// `self + other`.
    pub fn add(&self, o: &Lin) -> Option<Lin> {
        self.axpy(1, o)
    }
    /// `self - other`.
    pub fn sub(&self, o: &Lin) -> Option<Lin> {
        self.axpy(-1, o)
    }
    /// `self + k·other`.
    pub fn axpy(&self, k: i64, o: &Lin) -> Option<Lin> {
        let mut t = Terms::with_capacity(self.t.len() + o.t.len());
        let (mut i, mut j) = (0, 0);
        while i < self.t.len() || j < o.t.len() {
            let take_a = j >= o.t.len() || (i < self.t.len() && self.t[i].0 < o.t[j].0);
            let take_b = i >= self.t.len() || (j < o.t.len() && o.t[j].0 < self.t[i].0);
            if take_a {
                t.push(self.t[i]);
                i += 1;
            } else if take_b {
                t.push((o.t[j].0, o.t[j].1.checked_mul(k)?));
                j += 1;
            } else {
                let v = self.t[i].1.checked_add(o.t[j].1.checked_mul(k)?)?;
                if v != 0 {
                    t.push((self.t[i].0, v));
                }
                i += 1;
                j += 1;
            }
        }
        Some(Lin {
            c: self.c.checked_add(o.c.checked_mul(k)?)?,
            t,
        })
    }
    /// `k·self`.
    pub fn scale(&self, k: i64) -> Option<Lin> {
        if k == 0 {
            return Some(Lin::k(0));
        }
        let mut t = Terms::with_capacity(self.t.len());
        for (a, v) in &self.t {
            t.push((*a, v.checked_mul(k)?));
        }
        Some(Lin {
            c: self.c.checked_mul(k)?,
            t,
        })
    }
    /// The coefficient of an atom.
    pub fn coeff(&self, a: AtomId) -> i64 {
        self.t
            .binary_search_by_key(&a, |x| x.0)
            .map_or(0, |i| self.t[i].1)
    }
    /// Splits off an atom: `self = coeff·a + rest`.
    pub fn split(&self, a: AtomId) -> (i64, Lin) {
        let mut rest = self.clone();
        let mut k = 0;
        if let Ok(i) = rest.t.binary_search_by_key(&a, |x| x.0) {
            k = rest.t.remove(i).1;
        }
        (k, rest)
    }
}

/// A conjunction of conditions (sorted, deduplicated): the path condition of an event.
pub type Guard = Vec<CondId>;

/// An interned symbolic term.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Atom {
    /// A parameter kept symbolic.
    Param(VarId),
    /// Element `flat` of host array `array` on rank `rank`.
    Elem(ArrayId, u32, u32),
    /// The iteration index (0, 1, ...) of summarised loop number `.0`.
    Iter(u32),
    /// `ceil(a / b)`.
    CeilDiv(Lin, Lin),
    /// Euclidean `a / b`.
    Div(Lin, Lin),
    /// Euclidean `a % b`.
    Mod(Lin, Lin),
    /// `min(a, b)`.
    Min(Lin, Lin),
    /// `max(a, b)`.
    Max(Lin, Lin),
    /// `a * b` (both non-literal; ordered).
    Mul(Lin, Lin),
    /// `x * (x - 1) / 2`.
    Tri(Lin),
    /// 1 when the guard holds, else 0.
    Ind(Guard),
    /// `atom` when the guard holds, else 0.
    Guarded(Guard, AtomId),
    /// A power of two, a base-2 logarithm or a bit operation (the parametric route
    /// only, `param::bits`); unary functions leave the second operand 0.
    Bit(BitFn, Lin, Lin),
}

/// The functions of [`Atom::Bit`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BitFn {
    /// `2^a` (`a` in `0..=62`).
    Pow2,
    /// The smallest `k >= 0` with `2^k >= a` (0 for `a <= 1`): the number of powers
    /// of two below `a`.
    Lg,
    /// `a ^ b` (two's complement).
    Xor,
    /// `a & b`.
    And,
    /// `a | b`.
    Or,
    /// `a << b`.
    Shl,
    /// `a >> b` (arithmetic).
    Shr,
}

/// A normalised condition.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Formula {
    /// `lin >= 0`
    Ge0(Lin),
    /// `lin == 0`
    Eq0(Lin),
    /// negation
    Not(CondId),
    /// conjunction (sorted)
    And(Vec<CondId>),
    /// disjunction (sorted)
    Or(Vec<CondId>),
}

/// A condition's value: known, or symbolic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CondV {
    /// Decided.
    Const(bool),
    /// Depends on symbolic atoms.
    Sym(CondId),
}

/// What a summarised loop looks like (for the iteration atom).
#[derive(Clone, Debug)]
pub struct IterInfo {
    /// Trip count.
    pub trip: Lin,
    /// The loop variable (for printing).
    pub var: VarId,
}

/// Inclusive bounds (None = unbounded).
pub type Bounds = (Option<i64>, Option<i64>);

/// The atom and condition tables of one configuration.
#[derive(Default, Debug)]
pub struct Syms {
    /// Atoms by id.
    pub atoms: Vec<Atom>,
    index: FxMap<Atom, AtomId>,
    /// Known bounds of each atom.
    pub bounds: Vec<Bounds>,
    /// Iteration atoms each atom depends on (sorted).
    pub iters: Vec<Vec<AtomId>>,
    /// Conditions by id.
    pub conds: Vec<Formula>,
    cindex: FxMap<Formula, CondId>,
    /// Iteration atoms each condition depends on.
    pub citers: Vec<Vec<AtomId>>,
    /// Summarised loops, by iteration number.
    pub loops: Vec<IterInfo>,
    /// Display names of atoms bound by `let`s.
    pub names: HashMap<AtomId, String>,
    /// Domains of symbolic parameters (after tightening by `require`s).
    pub param_bounds: HashMap<VarId, (i64, i64)>,
    /// Domains of host arrays.
    pub array_bounds: HashMap<ArrayId, (i64, i64)>,
    /// Bit operations, `log2` and `pow2` of symbolic operands become [`Atom::Bit`]s
    /// (the parametric route) instead of asking for concrete operands.
    pub bits: bool,
    /// Iteration atoms of loops with a symbolic step `s` (the parametric route): the
    /// range `hi - lo` and `s` (`param::stride`).
    pub strides: HashMap<AtomId, (Lin, Lin)>,
}

fn merge(a: &[AtomId], b: &[AtomId]) -> Vec<AtomId> {
    let mut v: Vec<AtomId> = a.iter().chain(b.iter()).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn add_b(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    a?.checked_add(b?)
}

impl Syms {
    /// An empty table with the given parameter domains.
    pub fn with_bounds(param_bounds: HashMap<VarId, (i64, i64)>) -> Syms {
        Syms {
            param_bounds,
            ..Syms::default()
        }
    }
    /// Interns an atom.
    pub fn intern(&mut self, a: Atom) -> AtomId {
        if let Some(&id) = self.index.get(&a) {
            return id;
        }
        let id = self.atoms.len() as AtomId;
        let (b, it) = self.describe(&a, id);
        self.atoms.push(a.clone());
        self.bounds.push(b);
        self.iters.push(it);
        self.index.insert(a, id);
        id
    }

    fn lin_iters(&self, l: &Lin) -> Vec<AtomId> {
        let mut v = Vec::new();
        for (a, _) in &l.t {
            v = merge(&v, &self.iters[*a as usize]);
        }
        v
    }

    fn describe(&self, a: &Atom, id: AtomId) -> (Bounds, Vec<AtomId>) {
        match a {
            Atom::Param(v) => {
                let b = self.param_bounds.get(v).copied();
                ((b.map(|x| x.0), b.map(|x| x.1)), Vec::new())
            }
            Atom::Elem(arr, _, _) => {
                let b = self.array_bounds.get(arr).copied();
                ((b.map(|x| x.0), b.map(|x| x.1)), Vec::new())
            }
            Atom::Iter(n) => {
                let ub = self.loops[*n as usize]
                    .trip
                    .as_const()
                    .map(|t| t - 1)
                    .or_else(|| self.ub(&self.loops[*n as usize].trip).map(|t| t - 1));
                ((Some(0), ub), vec![id])
            }
            Atom::CeilDiv(x, y) | Atom::Div(x, y) => self.div_bounds(a, x, y),
            Atom::Mod(x, y) => {
                let it = merge(&self.lin_iters(x), &self.lin_iters(y));
                let b = match y.as_const() {
                    Some(d) if d != 0 => (Some(0), Some(d.abs() - 1)),
                    _ => (Some(0), None),
                };
                (b, it)
            }
            Atom::Min(x, y) | Atom::Max(x, y) => self.min_max_bounds(a, x, y),
            Atom::Mul(x, y) => self.mul_bounds(x, y),
            Atom::Tri(x) => {
                let lb = if self.lb(x).is_some_and(|l| l >= 0) {
                    Some(0)
                } else {
                    None
                };
                (
                    (
                        lb,
                        self.ub(x).and_then(|u| u.checked_mul(u - 1).map(|v| v / 2)),
                    ),
                    self.lin_iters(x),
                )
            }
            Atom::Ind(g) => {
                let mut it = Vec::new();
                for c in g {
                    it = merge(&it, &self.citers[*c as usize]);
                }
                ((Some(0), Some(1)), it)
            }
            Atom::Guarded(g, x) => {
                let mut it = self.iters[*x as usize].clone();
                for c in g {
                    it = merge(&it, &self.citers[*c as usize]);
                }
                let (l, u) = self.bounds[*x as usize];
                ((l.map(|v| v.min(0)), u.map(|v| v.max(0))), it)
            }
            Atom::Bit(f, x, y) => {
                let it = merge(&self.lin_iters(x), &self.lin_iters(y));
                let b = crate::engine::param::bits::bounds(
                    *f,
                    (self.lb(x), self.ub(x)),
                    (self.lb(y), self.ub(y)),
                );
                (b, it)
            }
        }
    }

    /// [`Syms::describe`] of `ceil(x / y)` or `x / y`.
    fn div_bounds(&self, a: &Atom, x: &Lin, y: &Lin) -> (Bounds, Vec<AtomId>) {
        let it = merge(&self.lin_iters(x), &self.lin_iters(y));
        let (xl, xu) = (self.lb(x), self.ub(x));
        let b = match y.as_const() {
            Some(d) if d > 0 => {
                let ceil = matches!(a, Atom::CeilDiv(..));
                let f = |v: i64| {
                    if ceil {
                        collc_spec::eval::ceil_div(v, d)
                    } else {
                        Some(v.div_euclid(d))
                    }
                };
                (xl.and_then(f), xu.and_then(f))
            }
            _ => match (xl, self.lb(y)) {
                (Some(l), Some(yl)) if l >= 0 && yl > 0 => (Some(0), xu),
                _ => (None, None),
            },
        };
        (b, it)
    }

    /// [`Syms::describe`] of `min(x, y)` or `max(x, y)`.
    fn min_max_bounds(&self, a: &Atom, x: &Lin, y: &Lin) -> (Bounds, Vec<AtomId>) {
        let it = merge(&self.lin_iters(x), &self.lin_iters(y));
        let (xl, xu, yl, yu) = (self.lb(x), self.ub(x), self.lb(y), self.ub(y));
        let b = if matches!(a, Atom::Min(..)) {
            (
                xl.zip(yl).map(|(p, q)| p.min(q)),
                match (xu, yu) {
                    (Some(p), Some(q)) => Some(p.min(q)),
                    (p, q) => p.or(q),
                },
            )
        } else {
            (
                match (xl, yl) {
                    (Some(p), Some(q)) => Some(p.max(q)),
                    (p, q) => p.or(q),
                },
                xu.zip(yu).map(|(p, q)| p.max(q)),
            )
        };
        (b, it)
    }

    /// [`Syms::describe`] of `x * y`.
    fn mul_bounds(&self, x: &Lin, y: &Lin) -> (Bounds, Vec<AtomId>) {
        let it = merge(&self.lin_iters(x), &self.lin_iters(y));
        let b = match (self.lb(x), self.ub(x), self.lb(y), self.ub(y)) {
            (Some(a1), Some(a2), Some(b1), Some(b2)) => {
                let c = [
                    a1.checked_mul(b1),
                    a1.checked_mul(b2),
                    a2.checked_mul(b1),
                    a2.checked_mul(b2),
                ];
                if c.iter().all(|x| x.is_some()) {
                    let c: Vec<i64> = c.iter().map(|x| x.unwrap_or(0)).collect();
                    (c.iter().min().copied(), c.iter().max().copied())
                } else {
                    (None, None)
                }
            }
            (Some(a1), _, Some(b1), _) if a1 >= 0 && b1 >= 0 => (Some(0), None),
            _ => (None, None),
        };
        (b, it)
    }

    /// Lower bound of a Lin from atom bounds.
    pub fn lb(&self, l: &Lin) -> Option<i64> {
        let mut s = Some(l.c);
        for (a, k) in &l.t {
            let (lo, hi) = self.bounds[*a as usize];
            let v = if *k > 0 { lo } else { hi };
            s = add_b(s, v.and_then(|v| v.checked_mul(*k)));
        }
        s
    }
    /// Upper bound of a Lin from atom bounds.
    pub fn ub(&self, l: &Lin) -> Option<i64> {
        let mut s = Some(l.c);
        for (a, k) in &l.t {
            let (lo, hi) = self.bounds[*a as usize];
            let v = if *k > 0 { hi } else { lo };
            s = add_b(s, v.and_then(|v| v.checked_mul(*k)));
        }
        s
    }

    /// Iteration atoms a Lin depends on.
    pub fn deps(&self, l: &Lin) -> Vec<AtomId> {
        self.lin_iters(l)
    }
    /// Iteration atoms a condition depends on.
    pub fn cond_deps(&self, c: CondId) -> &[AtomId] {
        &self.citers[c as usize]
    }

    /// The atom for a symbolic parameter.
    pub fn param(&mut self, v: VarId) -> Lin {
        Lin::atom(self.intern(Atom::Param(v)))
    }

    /// A new summarised loop; returns its iteration atom.
    pub fn new_iter(&mut self, trip: Lin, var: VarId) -> AtomId {
        let n = self.loops.len() as u32;
        self.loops.push(IterInfo { trip, var });
        self.intern(Atom::Iter(n))
    }

    /// `a * b`.
    pub fn mul(&mut self, a: &Lin, b: &Lin) -> Option<Lin> {
        if let Some(k) = a.as_const() {
            return b.scale(k);
        }
        if let Some(k) = b.as_const() {
            return a.scale(k);
        }
        let (x, y) = if a <= b { (a, b) } else { (b, a) };
        Some(Lin::atom(self.intern(Atom::Mul(x.clone(), y.clone()))))
    }
    /// `a = b*q + r` with `q` the multiples of a symbolic `b` that `a` spells out
    /// (`b` itself, `b * x`); `None` when there are none (or `b` is constant). Then
    /// `a / b = q + r / b`, `a % b = r % b` and `ceil(a / b) = q + ceil(r / b)` for every
    /// `b != 0` (Euclidean division, as Z3's).
    fn multiples(&self, a: &Lin, b: &Lin) -> Option<(Lin, Lin)> {
        if b.as_const().is_some() {
            return None;
        }
        let mut q = Lin::k(0);
        let mut r = Lin::k(a.c);
        for (x, k) in &a.t {
            let of = match &self.atoms[*x as usize] {
                Atom::Mul(u, v) if u == b => Some(v.clone()),
                Atom::Mul(u, v) if v == b => Some(u.clone()),
                _ => None,
            };
            match of {
                Some(o) => q = q.axpy(*k, &o)?,
                None => r = r.add(&Lin::atom(*x).scale(*k)?)?,
            }
        }
        if let [(g, kb)] = b.t.as_slice() {
            if b.c == 0 && *kb != 0 {
                let k = r.coeff(*g);
                if k % kb == 0 && k != 0 {
                    let (_, rest) = r.split(*g);
                    r = rest;
                    q = q.add(&Lin::k(k / kb))?;
                }
            }
        }
        (!q.is_zero() || r.is_zero()).then_some((q, r))
    }
    /// `q + f(r, b)` (`f` a division) when `a = b*q + r` spells out multiples of `b`.
    fn over_multiples(
        &mut self,
        a: &Lin,
        b: &Lin,
        f: fn(&mut Syms, &Lin, &Lin) -> Option<Lin>,
    ) -> Option<Option<Lin>> {
        let (q, r) = self.multiples(a, b)?;
        let d = if r.is_zero() {
            Some(Lin::k(0))
        } else {
            f(self, &r, b)
        };
        Some(d.and_then(|d| q.add(&d)))
    }
    /// Euclidean `a / b` (None on division by zero or overflow).
    pub fn div(&mut self, a: &Lin, b: &Lin) -> Option<Lin> {
        if let Some(x) = self.over_multiples(a, b, Syms::div) {
            return x;
        }
        match (a.as_const(), b.as_const()) {
            (_, Some(0)) => None,
            (Some(x), Some(y)) => x.checked_div_euclid(y).map(Lin::k),
            (_, Some(1)) => Some(a.clone()),
            _ => Some(Lin::atom(self.intern(Atom::Div(a.clone(), b.clone())))),
        }
    }
    /// Euclidean `a % b`.
    pub fn rem(&mut self, a: &Lin, b: &Lin) -> Option<Lin> {
        if let Some((_, r)) = self.multiples(a, b) {
            if r.is_zero() {
                return Some(Lin::k(0));
            }
            return self.rem(&r, b);
        }
        match (a.as_const(), b.as_const()) {
            (_, Some(0)) => None,
            (Some(x), Some(y)) => x.checked_rem_euclid(y).map(Lin::k),
            (_, Some(1)) | (_, Some(-1)) => Some(Lin::k(0)),
            _ => Some(Lin::atom(self.intern(Atom::Mod(a.clone(), b.clone())))),
        }
    }
    /// `ceil(a / b)`.
    pub fn ceil_div(&mut self, a: &Lin, b: &Lin) -> Option<Lin> {
        if let Some(x) = self.over_multiples(a, b, Syms::ceil_div) {
            return x;
        }
        match (a.as_const(), b.as_const()) {
            (_, Some(0)) => None,
            (Some(x), Some(y)) => collc_spec::eval::ceil_div(x, y).map(Lin::k),
            (_, Some(1)) => Some(a.clone()),
            _ => Some(Lin::atom(self.intern(Atom::CeilDiv(a.clone(), b.clone())))),
        }
    }
    /// `min(a, b)`, decided by bounds when possible.
    pub fn min(&mut self, a: &Lin, b: &Lin) -> Option<Lin> {
        let d = a.sub(b)?;
        if self.ub(&d).is_some_and(|u| u <= 0) {
            return Some(a.clone());
        }
        if self.lb(&d).is_some_and(|l| l >= 0) {
            return Some(b.clone());
        }
        let (x, y) = if a <= b { (a, b) } else { (b, a) };
        Some(Lin::atom(self.intern(Atom::Min(x.clone(), y.clone()))))
    }
    /// `max(a, b)`, decided by bounds when possible.
    pub fn max(&mut self, a: &Lin, b: &Lin) -> Option<Lin> {
        let d = a.sub(b)?;
        if self.lb(&d).is_some_and(|l| l >= 0) {
            return Some(a.clone());
        }
        if self.ub(&d).is_some_and(|u| u <= 0) {
            return Some(b.clone());
        }
        let (x, y) = if a <= b { (a, b) } else { (b, a) };
        Some(Lin::atom(self.intern(Atom::Max(x.clone(), y.clone()))))
    }
    /// The trip count of `for x in lo..hi step step`: `max(0, ceil((hi - lo) / step))`.
    pub fn trip(&mut self, lo: &Lin, hi: &Lin, step: &Lin) -> Option<Lin> {
        let q = self.ceil_div(&hi.sub(lo)?, step)?;
        self.max(&Lin::k(0), &q)
    }

    /// `x (x - 1) / 2`.
    pub fn tri(&mut self, x: &Lin) -> Option<Lin> {
        if let Some(v) = x.as_const() {
            return v.checked_mul(v - 1).map(|p| Lin::k(p / 2));
        }
        Some(Lin::atom(self.intern(Atom::Tri(x.clone()))))
    }

    /// Interns a formula, simplifying literals.
    pub fn formula(&mut self, f: Formula) -> CondV {
        match &f {
            Formula::Ge0(l) => {
                if let Some(c) = l.as_const() {
                    return CondV::Const(c >= 0);
                }
                if self.lb(l).is_some_and(|v| v >= 0) {
                    return CondV::Const(true);
                }
                if self.ub(l).is_some_and(|v| v < 0) {
                    return CondV::Const(false);
                }
            }
            Formula::Eq0(l) => {
                if let Some(c) = l.as_const() {
                    return CondV::Const(c == 0);
                }
                if self.lb(l).is_some_and(|v| v > 0) || self.ub(l).is_some_and(|v| v < 0) {
                    return CondV::Const(false);
                }
            }
            _ => {}
        }
        if let Some(&id) = self.cindex.get(&f) {
            return CondV::Sym(id);
        }
        let it = match &f {
            Formula::Ge0(l) | Formula::Eq0(l) => self.lin_iters(l),
            Formula::Not(c) => self.citers[*c as usize].clone(),
            Formula::And(cs) | Formula::Or(cs) => {
                let mut v = Vec::new();
                for c in cs {
                    v = merge(&v, &self.citers[*c as usize]);
                }
                v
            }
        };
        let id = self.conds.len() as CondId;
        self.conds.push(f.clone());
        self.citers.push(it);
        self.cindex.insert(f, id);
        CondV::Sym(id)
    }

    /// Interns a formula as is (no simplification).
    pub fn formula_raw(&mut self, f: Formula) -> CondId {
        if let Some(&id) = self.cindex.get(&f) {
            return id;
        }
        let id = self.conds.len() as CondId;
        self.conds.push(f.clone());
        self.citers.push(Vec::new());
        self.cindex.insert(f, id);
        id
    }

    /// `a cmp b`.
    pub fn cmp(&mut self, op: CmpOp, a: &Lin, b: &Lin) -> Option<CondV> {
        let d = a.sub(b)?;
        Some(match op {
            CmpOp::Ge => self.formula(Formula::Ge0(d)),
            CmpOp::Gt => self.formula(Formula::Ge0(d.add(&Lin::k(-1))?)),
            CmpOp::Le => self.formula(Formula::Ge0(d.scale(-1)?)),
            CmpOp::Lt => self.formula(Formula::Ge0(d.scale(-1)?.add(&Lin::k(-1))?)),
            CmpOp::Eq => self.formula(Formula::Eq0(d)),
            CmpOp::Ne => {
                let e = self.formula(Formula::Eq0(d));
                self.not(e)
            }
        })
    }
    /// Negation.
    pub fn not(&mut self, c: CondV) -> CondV {
        match c {
            CondV::Const(b) => CondV::Const(!b),
            CondV::Sym(id) => {
                if let Formula::Not(inner) = self.conds[id as usize] {
                    return CondV::Sym(inner);
                }
                self.formula(Formula::Not(id))
            }
        }
    }
    /// Conjunction or disjunction.
    pub fn junction(&mut self, and: bool, cs: Vec<CondV>) -> CondV {
        let mut ids = Vec::new();
        for c in cs {
            match c {
                CondV::Const(b) if b == and => {}
                CondV::Const(b) => return CondV::Const(b),
                CondV::Sym(id) => ids.push(id),
            }
        }
        ids.sort_unstable();
        ids.dedup();
        match ids.len() {
            0 => CondV::Const(and),
            1 => CondV::Sym(ids[0]),
            _ => self.formula(if and {
                Formula::And(ids)
            } else {
                Formula::Or(ids)
            }),
        }
    }

    /// `v` when the guard holds, else 0 (linear in `v`).
    pub fn guarded(&mut self, g: &Guard, v: &Lin) -> Lin {
        if g.is_empty() || v.is_zero() {
            return v.clone();
        }
        let mut out = Lin::k(0);
        if v.c != 0 {
            let ind = self.intern(Atom::Ind(g.clone()));
            out.t.push((ind, v.c));
        }
        for (a, k) in &v.t {
            let atom = match &self.atoms[*a as usize] {
                Atom::Ind(g2) => Atom::Ind(union(g, g2)),
                Atom::Guarded(g2, x) => Atom::Guarded(union(g, g2), *x),
                _ => Atom::Guarded(g.clone(), *a),
            };
            let id = self.intern(atom);
            out = out.axpy(*k, &Lin::atom(id)).unwrap_or(out);
        }
        out.t.sort_unstable();
        out
    }

    /// Simplifies `l` assuming `g` holds: indicators of implied guards become 1.
    pub fn assume(&mut self, g: &Guard, l: &Lin) -> Lin {
        let mut out = Lin::k(l.c);
        for (a, k) in &l.t {
            let rep = match &self.atoms[*a as usize] {
                Atom::Ind(g2) if subset(g2, g) => Lin::k(1),
                Atom::Guarded(g2, x) if subset(g2, g) => Lin::atom(*x),
                _ => Lin::atom(*a),
            };
            match out.axpy(*k, &rep) {
                Some(o) => out = o,
                None => return l.clone(),
            }
        }
        out
    }

    /// Substitutes `a := by` at the top level of `l` (exact when `a` occurs only linearly).
    pub fn subst(&self, l: &Lin, a: AtomId, by: &Lin) -> Option<Lin> {
        let (k, rest) = l.split(a);
        rest.axpy(k, by)
    }

    /// True when some atom of `l` has `a` nested inside it (not a plain coefficient).
    pub fn nested(&self, l: &Lin, a: AtomId) -> bool {
        l.t.iter()
            .any(|(x, _)| *x != a && self.iters[*x as usize].contains(&a))
    }

    /// Tries to show `l >= 0` for every value of its iteration atoms (each in
    /// `0..trip`, and inside the loop, so `trip >= 1`) from literal arithmetic and
    /// atom bounds. `false` means "not shown", not "false".
    pub fn nonneg(&mut self, l: &Lin) -> bool {
        let mut l = l.clone();
        let mut facts: Vec<Lin> = Vec::new();
        for _ in 0..8 {
            let its = self.deps(&l);
            let Some(&j) = its.first() else { break };
            if self.nested(&l, j) {
                return false;
            }
            let Atom::Iter(n) = self.atoms[j as usize] else {
                return false;
            };
            let trip = self.loops[n as usize].trip.clone();
            facts.push(trip.clone());
            let k = l.coeff(j);
            let by = if k > 0 {
                Lin::k(0)
            } else {
                match trip.add(&Lin::k(-1)) {
                    Some(x) => x,
                    None => return false,
                }
            };
            l = match self.subst(&l, j, &by) {
                Some(x) => x,
                None => return false,
            };
        }
        if !self.deps(&l).is_empty() {
            return false;
        }
        // Inside a loop its trip count is at least 1.
        let mut lb = Some(l.c);
        for (a, k) in &l.t {
            let (mut lo, mut hi) = self.bounds[*a as usize];
            for f in &facts {
                if f.t.len() == 1 && f.t[0] == (*a, 1) {
                    lo = Some(lo.unwrap_or(i64::MIN).max(1 - f.c));
                }
            }
            if hi.is_some_and(|h| lo.is_some_and(|l| h < l)) {
                hi = lo;
            }
            let v = if *k > 0 { lo } else { hi };
            lb = add_b(lb, v.and_then(|v| v.checked_mul(*k)));
        }
        lb.is_some_and(|v| v >= 0)
    }
}

/// Sorted union of two guards.
pub fn union(a: &Guard, b: &Guard) -> Guard {
    merge(a, b)
}

/// `a ⊆ b` for sorted guards.
pub fn subset(a: &Guard, b: &Guard) -> bool {
    a.iter().all(|x| b.binary_search(x).is_ok())
}

/// Concrete values for evaluating atoms (parameters, array elements, iterations).
#[derive(Debug, Default, Clone)]
pub struct Assign {
    /// Symbolic parameters.
    pub params: HashMap<VarId, i64>,
    /// Atoms given directly (array elements, iteration indices).
    pub atoms: HashMap<AtomId, i64>,
}

impl Syms {
    /// Evaluates a Lin concretely (None when something is unassigned or overflows).
    pub fn eval(&self, l: &Lin, a: &Assign) -> Option<i64> {
        let mut s = l.c;
        for (x, k) in &l.t {
            s = s.checked_add(self.eval_atom(*x, a)?.checked_mul(*k)?)?;
        }
        Some(s)
    }
    /// Evaluates an atom concretely.
    pub fn eval_atom(&self, id: AtomId, a: &Assign) -> Option<i64> {
        if let Some(v) = a.atoms.get(&id) {
            return Some(*v);
        }
        Some(match &self.atoms[id as usize] {
            Atom::Param(v) => *a.params.get(v)?,
            Atom::Elem(..) | Atom::Iter(_) => return None,
            Atom::CeilDiv(x, y) => collc_spec::eval::ceil_div(self.eval(x, a)?, self.eval(y, a)?)?,
            Atom::Div(x, y) => self.eval(x, a)?.checked_div_euclid(self.eval(y, a)?)?,
            Atom::Mod(x, y) => self.eval(x, a)?.checked_rem_euclid(self.eval(y, a)?)?,
            Atom::Min(x, y) => self.eval(x, a)?.min(self.eval(y, a)?),
            Atom::Max(x, y) => self.eval(x, a)?.max(self.eval(y, a)?),
            Atom::Mul(x, y) => self.eval(x, a)?.checked_mul(self.eval(y, a)?)?,
            Atom::Tri(x) => {
                let v = self.eval(x, a)?;
                v.checked_mul(v - 1)? / 2
            }
            Atom::Ind(g) => i64::from(self.eval_guard(g, a)?),
            Atom::Guarded(g, x) => {
                if self.eval_guard(g, a)? {
                    self.eval_atom(*x, a)?
                } else {
                    0
                }
            }
            Atom::Bit(f, x, y) => {
                crate::engine::param::bits::eval(*f, self.eval(x, a)?, self.eval(y, a)?)?
            }
        })
    }
    /// Evaluates a guard.
    pub fn eval_guard(&self, g: &Guard, a: &Assign) -> Option<bool> {
        for c in g {
            if !self.eval_cond(*c, a)? {
                return Some(false);
            }
        }
        Some(true)
    }
    /// Evaluates a condition.
    pub fn eval_cond(&self, c: CondId, a: &Assign) -> Option<bool> {
        Some(match &self.conds[c as usize] {
            Formula::Ge0(l) => self.eval(l, a)? >= 0,
            Formula::Eq0(l) => self.eval(l, a)? == 0,
            Formula::Not(x) => !self.eval_cond(*x, a)?,
            Formula::And(xs) => {
                for x in xs {
                    if !self.eval_cond(*x, a)? {
                        return Some(false);
                    }
                }
                true
            }
            Formula::Or(xs) => {
                for x in xs {
                    if self.eval_cond(*x, a)? {
                        return Some(true);
                    }
                }
                false
            }
        })
    }
}

/// Prints Lins with the protocol's names.
pub struct Printer<'a> {
    /// The atoms.
    pub syms: &'a Syms,
    /// The protocol (variable names).
    pub p: &'a collc_spec::ir::Protocol,
}

impl Printer<'_> {
    /// `c + k·atom ...` in source-like syntax.
    pub fn lin(&self, l: &Lin) -> String {
        let mut s = String::new();
        for (a, k) in &l.t {
            let body = self.atom(*a);
            let (neg, mag) = (*k < 0, k.unsigned_abs());
            if s.is_empty() {
                if neg {
                    s.push('-');
                }
            } else {
                s.push_str(if neg { " - " } else { " + " });
            }
            if mag != 1 {
                s.push_str(&format!("{mag}*"));
                s.push_str(&self.wrap(*a, &body));
            } else if neg {
                s.push_str(&self.wrap(*a, &body));
            } else {
                s.push_str(&body);
            }
        }
        if s.is_empty() {
            return l.c.to_string();
        }
        if l.c > 0 {
            s.push_str(&format!(" + {}", l.c));
        } else if l.c < 0 {
            s.push_str(&format!(" - {}", -l.c));
        }
        s
    }
    fn wrap(&self, a: AtomId, body: &str) -> String {
        let simple = self.syms.names.contains_key(&a)
            || matches!(
                self.syms.atoms[a as usize],
                Atom::Param(_) | Atom::Iter(_) | Atom::Elem(..)
            )
            || !body.contains(' ');
        if simple {
            body.to_string()
        } else {
            format!("({body})")
        }
    }
    fn paren(&self, l: &Lin) -> String {
        let s = self.lin(l);
        if s.contains(' ') {
            format!("({s})")
        } else {
            s
        }
    }
    /// One atom.
    pub fn atom(&self, a: AtomId) -> String {
        if let Some(n) = self.syms.names.get(&a) {
            return n.clone();
        }
        match &self.syms.atoms[a as usize] {
            Atom::Param(v) => self.p.var_name(*v).to_string(),
            Atom::Elem(arr, r, i) => format!("{}[{}]@{}", self.p.arrays[*arr].name, i, r),
            Atom::Iter(n) => self
                .p
                .var_name(self.syms.loops[*n as usize].var)
                .to_string(),
            Atom::CeilDiv(x, y) => format!("ceil({} / {})", self.paren(x), self.paren(y)),
            Atom::Div(x, y) => format!("{} / {}", self.paren(x), self.paren(y)),
            Atom::Mod(x, y) => format!("{} % {}", self.paren(x), self.paren(y)),
            Atom::Min(x, y) => format!("min({}, {})", self.lin(x), self.lin(y)),
            Atom::Max(x, y) => format!("max({}, {})", self.lin(x), self.lin(y)),
            Atom::Mul(x, y) => format!("{}*{}", self.paren(x), self.paren(y)),
            Atom::Tri(x) => {
                let m = x.add(&Lin::k(-1)).unwrap_or_default();
                format!("{}*{}/2", self.paren(x), self.paren(&m))
            }
            Atom::Ind(g) => format!("[{}]", self.guard(g)),
            Atom::Guarded(g, x) => format!("[{}]*{}", self.guard(g), self.wrap(*x, &self.atom(*x))),
            Atom::Bit(f, x, y) => {
                crate::engine::param::bits::show(*f, &self.paren(x), &self.paren(y))
            }
        }
    }
    /// A guard as `c1 && c2`.
    pub fn guard(&self, g: &Guard) -> String {
        g.iter()
            .map(|c| self.cond(*c))
            .collect::<Vec<_>>()
            .join(" && ")
    }
    /// One condition.
    pub fn cond(&self, c: CondId) -> String {
        match &self.syms.conds[c as usize] {
            Formula::Ge0(l) => self.rel(l, ">="),
            Formula::Eq0(l) => self.rel(l, "=="),
            Formula::Not(x) => match &self.syms.conds[*x as usize] {
                Formula::Eq0(l) => self.rel(l, "!="),
                _ => format!("!({})", self.cond(*x)),
            },
            Formula::And(xs) => xs
                .iter()
                .map(|x| format!("({})", self.cond(*x)))
                .collect::<Vec<_>>()
                .join(" && "),
            Formula::Or(xs) => xs
                .iter()
                .map(|x| format!("({})", self.cond(*x)))
                .collect::<Vec<_>>()
                .join(" || "),
        }
    }
    fn rel(&self, l: &Lin, op: &str) -> String {
        // Put positive terms left, negative terms and the constant right.
        let mut pos = Lin::k(0);
        let mut neg = Lin::k(0);
        for (a, k) in &l.t {
            if *k > 0 {
                pos.t.push((*a, *k));
            } else {
                neg.t.push((*a, -*k));
            }
        }
        if pos.t.is_empty() {
            let flipped = match op {
                ">=" => "<=",
                o => o,
            };
            return format!("{} {flipped} {}", self.lin(&neg), l.c);
        }
        neg.c = -l.c;
        format!("{} {op} {}", self.lin(&pos), self.lin(&neg))
    }
}

/// A fast non-cryptographic hasher (FxHash) for the verifier's interning tables.
#[derive(Default, Clone, Copy)]
pub struct Fx(u64);

impl std::hash::Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u128(&mut self, i: u128) {
        self.write_u64(i as u64);
        self.write_u64((i >> 64) as u64);
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
}

/// HashMap with [`Fx`].
pub type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<Fx>>;

/// Whether `l` mentions atom `a`, at the top level or nested.
pub(crate) fn mentions(s: &Syms, l: &Lin, a: AtomId) -> bool {
    l.t.iter().any(|(x, _)| atom_mentions(s, *x, a))
}

pub(crate) fn atom_mentions(s: &Syms, x: AtomId, a: AtomId) -> bool {
    if x == a {
        return true;
    }
    match &s.atoms[x as usize] {
        Atom::Param(_) | Atom::Elem(..) | Atom::Iter(_) => false,
        Atom::CeilDiv(l, r)
        | Atom::Div(l, r)
        | Atom::Mod(l, r)
        | Atom::Min(l, r)
        | Atom::Max(l, r)
        | Atom::Mul(l, r)
        | Atom::Bit(_, l, r) => mentions(s, l, a) || mentions(s, r, a),
        Atom::Tri(l) => mentions(s, l, a),
        Atom::Ind(g) => g.iter().any(|c| cond_mentions(s, *c, a)),
        Atom::Guarded(g, y) => g.iter().any(|c| cond_mentions(s, *c, a)) || atom_mentions(s, *y, a),
    }
}

pub(crate) fn cond_mentions(s: &Syms, c: CondId, a: AtomId) -> bool {
    match &s.conds[c as usize] {
        Formula::Ge0(l) | Formula::Eq0(l) => mentions(s, l, a),
        Formula::Not(x) => cond_mentions(s, *x, a),
        Formula::And(xs) | Formula::Or(xs) => xs.iter().any(|x| cond_mentions(s, *x, a)),
    }
}

/// `l` with atom `a` replaced by `by` everywhere, nested atoms included (`None` for a form
/// this does not rebuild: a guard indicator that mentions `a`).
pub(crate) fn subst_deep(s: &mut Syms, l: &Lin, a: AtomId, by: &Lin) -> Option<Lin> {
    let mut out = Lin::k(l.c);
    for (x, k) in l.t.clone() {
        let v = subst_atom(s, x, a, by)?;
        out = out.axpy(k, &v)?;
    }
    Some(out)
}

fn subst_atom(s: &mut Syms, x: AtomId, a: AtomId, by: &Lin) -> Option<Lin> {
    if x == a {
        return Some(by.clone());
    }
    if !atom_mentions(s, x, a) {
        return Some(Lin::atom(x));
    }
    let two =
        |s: &mut Syms, l: &Lin, r: &Lin| Some((subst_deep(s, l, a, by)?, subst_deep(s, r, a, by)?));
    match s.atoms[x as usize].clone() {
        Atom::CeilDiv(l, r) => two(s, &l, &r).and_then(|(l, r)| s.ceil_div(&l, &r)),
        Atom::Div(l, r) => two(s, &l, &r).and_then(|(l, r)| s.div(&l, &r)),
        Atom::Mod(l, r) => two(s, &l, &r).and_then(|(l, r)| s.rem(&l, &r)),
        Atom::Min(l, r) => two(s, &l, &r).and_then(|(l, r)| s.min(&l, &r)),
        Atom::Max(l, r) => two(s, &l, &r).and_then(|(l, r)| s.max(&l, &r)),
        Atom::Mul(l, r) => two(s, &l, &r).and_then(|(l, r)| s.mul(&l, &r)),
        Atom::Tri(l) => subst_deep(s, &l, a, by).and_then(|l| s.tri(&l)),
        _ => None,
    }
}

/// Sums `v` over iteration atom `j` in `0..trip` (closed form; `v` affine in `j`).
pub fn sum_over(s: &mut Syms, v: &Lin, j: AtomId, trip: &Lin) -> Result<Lin, String> {
    if s.nested(v, j) {
        return Err("a value is not affine in its loop variable".into());
    }
    let (b, a) = v.split(j);
    let mut out = Lin::k(0);
    // a * trip, distributed over a's terms so equal products cancel.
    if a.c != 0 {
        out = out.axpy(a.c, trip).ok_or("overflow")?;
    }
    for (x, k) in &a.t {
        let m = s.mul(&Lin::atom(*x), trip).ok_or("overflow")?;
        out = out.axpy(*k, &m).ok_or("overflow")?;
    }
    if b != 0 {
        let t = s.tri(trip).ok_or("overflow")?;
        out = out.axpy(b, &t).ok_or("overflow")?;
    }
    Ok(out)
}

/// The value of `l` if every atom has coefficient 0 (renaming iteration atoms can leave
/// zero terms behind).
pub(crate) fn literal(l: &Lin) -> Option<i64> {
    l.t.iter().all(|(_, k)| *k == 0).then_some(l.c)
}
