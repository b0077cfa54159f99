//! Cell counts with the cost walk: how often each statement that names a signal
//! touches one cell `(owner o, index i...)` per call (a sum over every rank, block
//! and loop iteration of `[owner == o] * [index == i]`), which cells a set of
//! statements touches and no other (the credit table's `cells per call`), and the
//! remote atomics sent to cells no wait reads (the garbage-credit waste). All
//! derived with the world size and the parameters symbolic; a form the walk cannot
//! sum is an error naming it.

use super::alg::{Atom, Mono, Poly, Rat, Test};
use super::walk::{Counts, Walk};
use collc_grammar::Span;

/// A statement's place in the source (its span's bounds): sets of statements are
/// sets of these.
pub type At = (usize, usize);

/// The place of a span.
pub fn at(s: Span) -> At {
    (s.start, s.end)
}
use collc_spec::info::{Access, Cell, ProtocolInfo};
use collc_spec::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// How often each statement naming one signal touches a symbolic cell, and what
/// each `AtomicAdd` adds to it.
pub struct Touches<'a> {
    walk: Walk<'a>,
    /// The statements naming the signal (by span), in program order.
    pub stmts: Vec<Span>,
    /// Those statements' cells ([`ProtocolInfo::cells`]), in the same order.
    pub named: Vec<Cell>,
    /// Per statement: what an `AtomicAdd` adds to the cell per call (0 for any other
    /// statement), or why no closed form.
    weights: Vec<Result<Poly, String>>,
    /// The cell's owner and index coordinates (fresh variables).
    coords: (VarId, Vec<VarId>),
    /// The signal's dimension sizes.
    dims: Vec<Result<Poly, String>>,
    /// Per statement: the times it touches the cell per call, or why no closed form.
    counts: Vec<Result<Poly, String>>,
}

impl<'a> Touches<'a> {
    /// Derives, for signal `sig`, every naming statement's touches of one cell (`info`:
    /// the facts of `p`).
    pub fn new(p: &'a Protocol, info: &ProtocolInfo, sig: SignalId) -> Self {
        let named: Vec<Cell> = info.cells_of(sig).cloned().collect();
        let stmts: Vec<Span> = named.iter().map(|c| c.span).collect();
        let n = stmts.len();
        let mut walk = Walk::new(p, 2 * n);
        let wr = walk.world_range();
        let owner = walk.fresh_var((0.0, wr.1 - 1.0));
        walk.ranks.insert(owner);
        walk.upper.insert(owner, Poly::var(p.world));
        let mut index = Vec::new();
        let dims: Vec<Result<Poly, String>> =
            p.signals[sig].dims.iter().map(|d| walk.poly(d)).collect();
        for d in &dims {
            let hi = d.as_ref().map_or(f64::INFINITY, |x| walk.range(x).1);
            let i = walk.fresh_var((0.0, hi - 1.0));
            if let Ok(x) = d {
                walk.upper.insert(i, x.clone());
            }
            index.push(i);
        }
        let coords = (owner, index);
        // Kinds 0..n: the touches of statement k; n..2n: what it adds.
        let leaf = |w: &Walk, s: &Stmt| -> Result<Counts, String> {
            let mut out = vec![Poly::default(); 2 * n];
            let Some(k) = stmts.iter().position(|x| *x == s.span) else {
                return Ok(out);
            };
            let cell = &named[k];
            out[k] = at_cell(w, &cell.owner(p.me), &cell.index, &coords)?;
            if let Access::Add(value) = &cell.access {
                out[n + k] = out[k].mul(&w.poly(value)?);
            }
            Ok(out)
        };
        let mut counts = walk.protocol(&leaf);
        let weights = counts.split_off(n);
        Touches {
            walk,
            stmts,
            named,
            weights,
            coords,
            dims,
            counts,
        }
    }

    /// What statement `k` adds to each cell it touches, per call: its weight's factor
    /// that does not depend on the cell (the same on every cell of its support), or
    /// why there is none (the amount differs between the cells it reaches).
    pub fn per_cell(&self, k: usize) -> Result<Poly, String> {
        let m = self.weights[k].clone()?;
        if m.is_zero() {
            return Ok(m);
        }
        let (first, b) = self.split(&m)?;
        let (b, s) = (self.normal(&b), self.normal(&self.support(k)?));
        let c =
            s.0.iter()
                .next()
                .and_then(|(mono, c)| b.0.get(mono).map(|x| *x * Rat::new(c.1, c.0)));
        match c {
            Some(c) if b == s.scale(c) => Ok(self.walk.tidy(&first.scale(c))),
            _ => Err(format!(
                "the amount `{}` differs between the cells it reaches",
                self.walk.names().sum(&m)
            )),
        }
    }

    /// `[statement k reaches the cell]` as a 0/1 polynomial in the coordinates:
    /// its count when that is 0/1, or the count's 0/1 factor when the rest never
    /// goes negative (`T * [o == root]`, `nb * [...]`: a statement in a loop reaches
    /// the cells it names when its loops run, as the credit table's symbolic loops
    /// count it).
    fn support(&self, k: usize) -> Result<Poly, String> {
        let m = self.counts[k].clone()?;
        let (mut first, mut b) = self.split(&m)?;
        if self.walk.range(&first).1 <= 0.0 {
            // m = (-first) * (-b)
            b = b.scale(Rat::int(-1));
            first = first.scale(Rat::int(-1));
        }
        let idempotent = self.normal(&b.mul(&b)) == self.normal(&b);
        if !idempotent || self.walk.range(&first).0 < 0.0 {
            return Err(self.unsure(&m));
        }
        Ok(b)
    }

    /// `m` as `first * b`: `b` a sum of constant multiples of indicators on the
    /// coordinates, `first` free of them.
    fn split(&self, m: &Poly) -> Result<(Poly, Poly), String> {
        let (o, idx) = &self.coords;
        let dep = |a: &Atom| {
            matches!(a, Atom::Ind(..)) && (a.mentions(*o) || idx.iter().any(|i| a.mentions(*i)))
        };
        // m = Σ_g B_g * q_g with B_g a product of indicators on the coordinates
        let mut groups: BTreeMap<Mono, Poly> = BTreeMap::new();
        for (mono, c) in &m.0 {
            let (d, f): (Mono, Mono) = mono.iter().cloned().partition(|a| dep(a));
            let mut t = BTreeMap::new();
            t.insert(f, *c);
            let g = groups.entry(d).or_default();
            *g = g.add(&Poly(t));
        }
        let Some(first) = groups.values().next().cloned() else {
            return Ok((Poly::default(), Poly::default()));
        };
        // every group's other factor is a constant times the first one
        let Some((lead, lc)) = first.0.iter().next().map(|(m, c)| (m.clone(), *c)) else {
            return Ok((Poly::default(), Poly::default()));
        };
        let mut b = Poly::default();
        for (d, f) in &groups {
            let r = f.0.get(&lead).map(|c| *c * Rat::new(lc.1, lc.0));
            let r = r.filter(|r| first.scale(*r) == *f);
            let Some(r) = r else {
                return Err(self.unsure(m));
            };
            let mut t = BTreeMap::new();
            t.insert(d.clone(), r);
            b = b.add(&Poly(t));
        }
        Ok((first, b))
    }

    /// `x` with each monomial's indicators rewritten by its `coordinate == e`
    /// indicators (`[o == r] * [o == i]` is `[o == r] * [i == r]`), so that equal
    /// 0/1 functions compare equal more often.
    fn normal(&self, x: &Poly) -> Poly {
        let (o, idx) = &self.coords;
        let vars: Vec<VarId> = std::iter::once(*o).chain(idx.iter().copied()).collect();
        let mut out = Poly::default();
        for (mono, c) in &x.0 {
            let mut atoms: Vec<Atom> = mono.clone();
            for v in &vars {
                let fix = atoms.iter().position(|a| match a {
                    Atom::Ind(Test::Eq0, d) => d.coefficients_in(*v).is_some_and(|cs| {
                        cs.len() == 2 && cs[1].as_const().is_some_and(|u| u.0.abs() == 1)
                    }),
                    _ => false,
                });
                let Some(i) = fix else { continue };
                let Atom::Ind(_, d) = &atoms[i] else { continue };
                let Some(cs) = d.coefficients_in(*v) else {
                    continue;
                };
                let Some(u) = cs[1].as_const() else { continue };
                let e = cs[0].scale(Rat::int(-u.0)); // v = e
                let mut rebuilt = Poly::atom(atoms[i].clone());
                for (j, a) in atoms.iter().enumerate() {
                    if j != i {
                        rebuilt =
                            rebuilt.mul(&Poly::atom(a.clone()).subst(*v, &e, &|a| self.walk.mk(a)));
                    }
                }
                match rebuilt.0.len() {
                    0 => {
                        atoms.clear();
                        atoms.push(Atom::Ind(Test::Eq0, Poly::k(1))); // 0
                    }
                    1 => {
                        if let Some((m, k)) = rebuilt.0.into_iter().next() {
                            if k != Rat::int(1) {
                                break;
                            }
                            atoms = m;
                        }
                    }
                    _ => break,
                }
            }
            let mut t = BTreeMap::new();
            if atoms.iter().any(|a| *a == Atom::Ind(Test::Eq0, Poly::k(1))) {
                continue;
            }
            atoms.sort();
            atoms.dedup();
            t.insert(atoms, *c);
            out = out.add(&Poly(t));
        }
        out
    }

    fn unsure(&self, m: &Poly) -> String {
        format!(
            "cannot tell which cells a statement touching `{}` times reaches",
            self.walk.names().sum(m)
        )
    }

    /// The cells of the signal touched by exactly the statements in `set` (indices
    /// into [`Touches::stmts`]) per call, summed over every owner and index.
    pub fn cells(&mut self, set: &BTreeSet<usize>) -> Result<Poly, String> {
        let mut f = Poly::k(1);
        for k in 0..self.stmts.len() {
            let b = self.support(k)?;
            f = f.mul(&if set.contains(&k) { b } else { b.not() });
        }
        // Over the indices, then the owner; or the other way round (a binomial
        // tree's cell `done[c]` on the parent of `c` is counted from the owner).
        let by_index = self.sum_cells(&f, false);
        let f = by_index.or_else(|why| self.sum_cells(&f, true).map_err(|_| why))?;
        Ok(self.walk.tidy(&f))
    }

    fn sum_cells(&self, f: &Poly, owner_first: bool) -> Result<Poly, String> {
        let (o, idx) = &self.coords;
        let world = Poly::var(self.walk.p.world);
        let mut f = f.clone();
        if owner_first {
            f = self.walk.sum(&f, *o, &world)?;
        }
        for (n, i) in self.dims.iter().zip(idx.iter()).rev() {
            f = self.walk.sum(&f, *i, &n.clone()?)?;
        }
        if !owner_first {
            f = self.walk.sum(&f, *o, &world)?;
        }
        Ok(f)
    }
}

/// `[target == o] * Π [index_d == i_d]` at the walk's current scope.
fn at_cell(
    w: &Walk,
    target: &Expr,
    idx: &[Expr],
    coords: &(VarId, Vec<VarId>),
) -> Result<Poly, String> {
    let eq = |x: Poly, v: VarId| w.mk(Atom::Ind(Test::Eq0, x.sub(&Poly::var(v))));
    let mut f = eq(w.poly(target)?, coords.0);
    for (e, v) in idx.iter().zip(coords.1.iter()) {
        f = f.mul(&eq(w.poly(e)?, *v));
    }
    Ok(f)
}

/// Remote atomics per call that add credits (a body `+=` of a value that is not a
/// constant <= 0) to a cell no wait reads: each such notify times `[target != me]`
/// times `Π (1 - [wait W reads the target cell])` over the waits on its signal,
/// summed over every rank, block and iteration.
pub fn waste(p: &Protocol) -> Result<Poly, String> {
    let info = ProtocolInfo::of(p);
    let plain = Walk::new(p, 0);
    let credits: Vec<&Cell> = info
        .cells
        .iter()
        .filter(|c| match &c.access {
            Access::Add(value) if !c.epilogue && c.target.is_some() => plain
                .poly(value)
                .ok()
                .and_then(|x| x.as_const())
                .is_none_or(|v| v.0 > 0),
            _ => false,
        })
        .collect();
    let waits: BTreeSet<At> = info
        .cells
        .iter()
        .filter(|c| c.is_wait())
        .map(|c| at(c.span))
        .collect();
    // Per signal: the 0/1 "a wait reads cell (o, i)" of each wait naming it.
    let mut reads: BTreeMap<SignalId, (VarId, Vec<VarId>, Vec<Poly>)> = BTreeMap::new();
    let mut fresh = 0;
    for c in &credits {
        let sig = c.signal;
        if reads.contains_key(&sig) {
            continue;
        }
        let t = Touches::new(p, &info, sig);
        let mut ws = Vec::new();
        for (k, span) in t.stmts.iter().enumerate() {
            if waits.contains(&at(*span)) {
                ws.push(t.support(k)?);
            }
        }
        fresh = fresh.max(t.walk.fresh);
        reads.insert(sig, (t.coords.0, t.coords.1.clone(), ws));
    }
    let mut walk = Walk::new(p, 1);
    walk.fresh = fresh;
    let leaf = |w: &Walk, s: &Stmt| -> Result<Counts, String> {
        let Some(cell) = credits.iter().find(|c| c.span == s.span) else {
            return Ok(vec![Poly::default()]);
        };
        let (sig, idx) = (cell.signal, &cell.index);
        let t = w.poly(&cell.owner(p.me))?;
        let remote = w.mk(Atom::Ind(Test::Eq0, t.sub(&Poly::var(p.me)))).not();
        let mut f = remote;
        if let Some((o, iv, ws)) = reads.get(&sig) {
            let ix: Vec<Poly> = idx.iter().map(|e| w.poly(e)).collect::<Result<_, _>>()?;
            for b in ws {
                let mut at = b.subst(*o, &t, &|a| w.mk(a));
                for (v, e) in iv.iter().zip(ix.iter()) {
                    at = at.subst(*v, e, &|a| w.mk(a));
                }
                f = f.mul(&at.not());
            }
        }
        Ok(vec![f])
    };
    let out = walk.protocol(&leaf);
    out.into_iter()
        .next()
        .unwrap_or_else(|| Err("nothing to count".into()))
}
