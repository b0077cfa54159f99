//! Walks the protocol IR once with the world size symbolic and derives, summed
//! over every rank and block, closed forms of what a leaf function counts at each
//! statement (the cost rows: notifies, waits, fences; the credit table: how often
//! a statement touches a given cell): `for p in peers` is a sum over all ranks
//! minus the term at `me`, numeric loops sum over `max(0, ceil((hi - lo) / step))`
//! iterations (Faulhaber's sums for polynomial bodies), loops over powers
//! (`lo..hi step *f`) over `ceil(log_f(ceil(hi / lo)))` iterations (geometric
//! series for bodies in `f^j`), reversed loops like their ascending form, guards
//! become 0/1 indicators that summation resolves (`me == root` holds for one rank,
//! `blk < A` for `min(C, A)` blocks), a binomial tree's rounds over powers become a
//! sum over its children (`tree.rs`). A form it cannot sum in closed form is an
//! error naming the form.

use super::alg::{Atom, Fun, Poly, Rat, Test};
use super::show::Names;
use collc_spec::ir::*;
use std::collections::{BTreeMap, BTreeSet};

/// The counted operations, in the order of the report's rows.
pub const KINDS: [&str; 4] = ["remote atomics", "local notifies", "waits", "fences"];

/// One count per kind.
pub type Counts = Vec<Poly>;

/// What a walk counts at one (non-structural) statement: one polynomial per kind.
pub type Leaf<'l> = dyn Fn(&Walk, &Stmt) -> Result<Counts, String> + 'l;

pub(super) type Iv = (f64, f64);

/// The derivation's state.
pub struct Walk<'a> {
    pub(super) p: &'a Protocol,
    /// Statement-level `let`s in scope, inlined.
    /// (A `let` with no polynomial form keeps why, for a count that uses it.)
    pub(super) locals: BTreeMap<VarId, Result<Poly, String>>,
    /// Value ranges of `me`, the block index, loop variables and summation indices.
    pub(super) bounds: BTreeMap<VarId, Iv>,
    /// Loop variables of `for p in peers` in scope (never `me`).
    pub(super) peers: BTreeSet<VarId>,
    /// Summation indices and cell coordinates made so far (ids from `p.vars.len()`).
    pub(super) fresh: usize,
    /// Exclusive upper bounds of the loop variables in scope (`d < P`).
    pub(super) upper: BTreeMap<VarId, Poly>,
    /// Fresh variables that hold ranks (cell owners): values in `0..P`.
    pub(super) ranks: BTreeSet<VarId>,
    /// A `require P & (P - 1) == 0` makes the world size a power of two.
    pub(super) pow2_world: bool,
    /// Loops over the powers of two below a bound (`for m in 1..n step *2`) in
    /// scope: their variable and bound (a binomial tree's rounds).
    pub(super) powers: BTreeMap<VarId, Poly>,
    /// Sums deferred to the end of the walk, innermost last: the children `c` in
    /// `0..n` of binomial trees (`src/engine/cost/tree.rs`), of the terms marked with a
    /// factor `u` (a variable that stands for 1): `(c, u, n)`.
    pub(super) pending: Vec<(VarId, VarId, Poly)>,
    /// How many kinds the leaf counts.
    kinds: usize,
    /// Why a count has no closed form, by kind.
    pub(super) failed: Vec<Option<String>>,
}

/// Whether a `require` says the world size is a power of two (`P & (P - 1) == 0`).
fn pow2_required(p: &Protocol) -> bool {
    let w = || Expr::Var(p.world);
    let form = Expr::Bin(
        BinOp::And,
        Box::new(w()),
        Box::new(Expr::Bin(BinOp::Sub, Box::new(w()), Box::new(Expr::Int(1)))),
    );
    p.requires.iter().any(|r| match &r.cond {
        Cond::Cmp(CmpOp::Eq, a, b) => {
            (*a == form && *b == Expr::Int(0)) || (*b == form && *a == Expr::Int(0))
        }
        _ => false,
    })
}

/// The cost rows' leaf: a notify is a remote atomic unless it targets `me`, then
/// a local notify; a wait; a fence.
pub fn cost_leaf(w: &Walk, s: &Stmt) -> Result<Counts, String> {
    let mut out: Counts = vec![Poly::default(); KINDS.len()];
    match &s.kind {
        StmtKind::Notify { target, .. } => match target {
            None => out[1] = Poly::k(1),
            Some(t) => {
                let d = w.poly(t)?.sub(&Poly::var(w.p.me));
                let local = w.mk(Atom::Ind(Test::Eq0, d));
                out[0] = local.not();
                out[1] = local;
            }
        },
        StmtKind::Wait { .. } => out[2] = Poly::k(1),
        StmtKind::Fence => out[3] = Poly::k(1),
        _ => {}
    }
    Ok(out)
}

impl<'a> Walk<'a> {
    /// A walk over `p` counting `kinds` things per statement.
    pub fn new(p: &'a Protocol, kinds: usize) -> Self {
        Walk {
            p,
            locals: BTreeMap::new(),
            bounds: BTreeMap::new(),
            peers: BTreeSet::new(),
            fresh: 0,
            upper: BTreeMap::new(),
            ranks: BTreeSet::new(),
            pow2_world: pow2_required(p),
            powers: BTreeMap::new(),
            pending: Vec::new(),
            kinds,
            failed: vec![None; kinds],
        }
    }

    fn zero(&self) -> Counts {
        vec![Poly::default(); self.kinds]
    }

    /// Names for printing (summation indices included).
    pub fn names(&self) -> Names<'a> {
        Names { p: self.p }
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
                    .unwrap_or_else(|| Err(format!("`{}` is not in scope", self.p.var_name(*v))))
                    .map_err(|why| format!("`{}`: {why}", self.p.var_name(*v)))?,
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
                BinOp::Shl => self.poly(a)?.mul(&self.pow2(b)?),
                BinOp::Shr => self.mk(Atom::Fun(Fun::Div, vec![self.poly(a)?, self.pow2(b)?])),
                BinOp::And => self.fun(Fun::And, a, b)?,
                BinOp::Xor => self.fun(Fun::Xor, a, b)?,
                BinOp::Or => self.fun(Fun::Or, a, b)?,
            },
            Expr::Log2(a) => self.mk(Atom::Fun(Fun::Log2, vec![self.poly(a)?])),
            Expr::Pow2(a) => self.pow2(a)?,
            Expr::CeilDiv(a, b) => self.fun(Fun::CeilDiv, a, b)?,
            Expr::Min(a, b) => self.fun(Fun::Min, a, b)?,
            Expr::Max(a, b) => self.fun(Fun::Max, a, b)?,
        })
    }

    fn pow2(&self, e: &Expr) -> Result<Poly, String> {
        Ok(self.mk(Atom::Fun(Fun::Pow, vec![Poly::k(2), self.poly(e)?])))
    }

    /// A fresh variable with values in `r` (a summation index or a cell coordinate).
    pub(super) fn fresh_var(&mut self, r: Iv) -> VarId {
        self.fresh_index(r)
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
        self.bounds.insert(Id::new(id), r);
        Id::new(id)
    }

    /// Records that count `k` has no closed form (the first reason is kept).
    fn fail(&mut self, k: usize, why: String) {
        if self.failed[k].is_none() {
            self.failed[k] = Some(why);
        }
    }

    pub(super) fn sum_or_fail(&mut self, k: usize, f: &Poly, v: VarId, n: &Poly) -> Option<Poly> {
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
    pub fn block(&mut self, b: &Block, top: bool, leaf: &Leaf) -> Result<(Counts, Poly), String> {
        let mut out: Counts = self.zero();
        let mut go = Poly::k(1);
        for s in &b.stmts {
            let c = self.stmt(s, top, &mut go, leaf)?;
            for (k, x) in c.iter().enumerate() {
                out[k] = out[k].add(&go.mul(x));
            }
        }
        Ok((out, go))
    }

    fn stmt(&mut self, s: &Stmt, top: bool, go: &mut Poly, leaf: &Leaf) -> Result<Counts, String> {
        let mut out: Counts = self.zero();
        match &s.kind {
            StmtKind::Let { var, value } => {
                // A `let` nothing counted depends on may have no polynomial form.
                let x = self.poly(value);
                self.locals.insert(*var, x);
            }
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
                let (t, _) = self.block(then_block, false, leaf)?;
                let e = match else_block {
                    Some(b) => self.block(b, false, leaf)?.0,
                    None => self.zero(),
                };
                match self.ind(cond) {
                    Ok(c) => {
                        let c = self.canonical_guard(c);
                        for k in 0..self.kinds {
                            out[k] = c.mul(&t[k]).add(&c.not().mul(&e[k]));
                        }
                    }
                    Err(why) => {
                        for k in 0..self.kinds {
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
                out = self.for_loop(*var, range, body, leaf)?;
            }
            _ => out = leaf(self, s)?,
        }
        Ok(out)
    }

    /// A loop over ranks (`peers`: but `me`): the body's counts summed over the ranks.
    fn rank_loop(
        &mut self,
        var: VarId,
        peers: bool,
        body: &Block,
        leaf: &Leaf,
    ) -> Result<Counts, String> {
        let mut out = self.zero();
        let world = Poly::var(self.p.world);
        let wr = self.world_range();
        self.bounds.insert(var, (0.0, wr.1 - 1.0));
        if peers {
            self.peers.insert(var);
        }
        let (b, _) = self.block(body, false, leaf)?;
        self.peers.remove(&var);
        for k in 0..self.kinds {
            if b[k].is_zero() {
                continue;
            }
            let Some(all) = self.sum_or_fail(k, &b[k], var, &world) else {
                continue;
            };
            out[k] = all;
            if peers {
                let me = Poly::var(self.p.me);
                out[k] = out[k].sub(&b[k].subst(var, &me, &|a| self.mk(a)));
            }
        }
        Ok(out)
    }

    /// The trip count of a numeric loop over `var`: `max(0, ceil((hi - lo) / step))`, or
    /// for a geometric one (`lo * f^j < hi` iff `f^j < ceil(hi / lo)`)
    /// `ceil(log_f(max(1, ceil(hi / lo))))`, with `f` a constant of at least 2.
    fn trips(
        &mut self,
        var: VarId,
        lo: &Poly,
        hi: &Poly,
        step: &Poly,
        geometric: bool,
    ) -> Result<Poly, String> {
        if !geometric {
            let span = self.mk(Atom::Fun(Fun::CeilDiv, vec![hi.sub(lo), step.clone()]));
            return Ok(self.mk(Atom::Fun(Fun::Max, vec![Poly::k(0), span])));
        }
        let f = step
            .as_const()
            .filter(|f| f.1 == 1 && f.0 >= 2)
            .ok_or_else(|| {
                format!(
                    "the loop over `{}` multiplies by `{}`, not a constant of at least 2",
                    self.p.var_name(var),
                    self.names().sum(step)
                )
            })?;
        let m = self.mk(Atom::Fun(Fun::CeilDiv, vec![hi.clone(), lo.clone()]));
        let m = self.mk(Atom::Fun(Fun::Max, vec![Poly::k(1), m]));
        Ok(self.mk(Atom::Fun(Fun::CeilLog, vec![m, Poly::k(f.0)])))
    }

    fn for_loop(
        &mut self,
        var: VarId,
        range: &Range,
        body: &Block,
        leaf: &Leaf,
    ) -> Result<Counts, String> {
        let mut out = self.zero();
        let (lo, hi, step, geometric) = match range {
            Range::Peers | Range::Ranks => {
                return self.rank_loop(var, matches!(range, Range::Peers), body, leaf)
            }
            Range::Span { lo, hi, step } => (lo, hi, step, false),
            // A reversed loop visits the same values: the counts are its ascending form's.
            Range::Seq(q) => (&q.lo, &q.hi, &q.step, q.geometric),
        };
        let (lo, hi, step) = (self.poly(lo)?, self.poly(hi)?, self.poly(step)?);
        let trips = self.trips(var, &lo, &hi, &step, geometric)?;
        let (rl, rh) = (self.range(&lo), self.range(&hi));
        self.bounds.insert(var, (rl.0, rh.1 - 1.0));
        self.upper.insert(var, hi.clone());
        let tree = geometric && lo == Poly::k(1) && step == Poly::k(2);
        if tree {
            self.powers.insert(var, hi.clone());
        }
        let walked = self.block(body, false, leaf);
        self.powers.remove(&var);
        self.upper.remove(&var);
        let (mut b, _) = walked?;
        // Terms under a binomial tree's guard: a sum over the children (deferred).
        let mut kids = self.zero();
        if tree {
            let mut c = None;
            for k in 0..self.kinds {
                (b[k], kids[k]) = self.tree_children(&b[k], var, &hi, &mut c);
            }
        }
        // Sum over the iteration number j (`var = lo + step*j` or `lo * f^j`); over
        // `var` itself when lo is 0 and step 1.
        let plain = !geometric && lo.is_zero() && step == Poly::k(1);
        let j = if plain {
            var
        } else {
            self.fresh_index((0.0, self.range(&trips).1 - 1.0))
        };
        let at = if geometric {
            lo.mul(&self.mk(Atom::Fun(Fun::Pow, vec![step.clone(), Poly::var(j)])))
        } else {
            lo.add(&step.mul(&Poly::var(j)))
        };
        for k in 0..self.kinds {
            out[k] = kids[k].clone();
            if b[k].is_zero() {
                continue;
            }
            let f = if plain {
                b[k].clone()
            } else {
                b[k].subst(var, &at, &|a| self.mk(a))
            };
            if let Some(x) = self.sum_or_fail(k, &f, j, &trips) {
                out[k] = out[k].add(&x);
            }
        }
        Ok(out)
    }

    /// Per call, all ranks and blocks together: body, then the epilogue unless a
    /// top-level `return` left, summed over `me` and the block index.
    pub fn protocol(&mut self, leaf: &Leaf) -> Vec<Result<Poly, String>> {
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
                Err(e) => return vec![Err(e); self.kinds],
            },
            None => None,
        };
        let body = self.block(&p.body, true, leaf);
        let epi = self.block(&p.epilogue, true, leaf);
        let (body, go, epi) = match (body, epi) {
            (Ok((b, go)), Ok((e, _))) => (b, go, e),
            (Err(e), _) | (_, Err(e)) => return vec![Err(e); self.kinds],
        };
        let world = Poly::var(p.world);
        // a rank relative to `me` (`(me + k) % P`), for a sum over the ranks that
        // needs it
        let rel = self.fresh_var((0.0, wr.1 - 1.0));
        self.ranks.insert(rel);
        self.upper.insert(rel, world.clone());
        (0..self.kinds)
            .map(|k| {
                if let Some(why) = &self.failed[k] {
                    return Err(why.clone());
                }
                let per = body[k].add(&go.mul(&epi[k]));
                let mut all = self
                    .sum(&per, p.me, &world)
                    .or_else(|why| self.sum_relative(&per, rel).ok_or(why))?;
                if let Some((v, c)) = &blocks {
                    all = self.sum(&all, *v, c)?;
                }
                for (c, u, n) in self.pending.iter().rev() {
                    let (marked, rest) = super::tree::marked(&all, *u);
                    all = rest.add(&self.sum(&marked, *c, n)?);
                }
                Ok(self.tidy(&all))
            })
            .collect()
    }

    /// `Σ_{me in 0..P} f` as a sum over the relative rank `y = (me + k) % P` (a
    /// bijection of the ranks; `me = (y - k) % P`) for a `(me + k) % P` in `f`.
    fn sum_relative(&self, f: &Poly, y: VarId) -> Option<Poly> {
        let (me, world) = (self.p.me, Poly::var(self.p.world));
        let k = rotation_of(f, me, &world)?;
        let at = self.mk(Atom::Fun(
            Fun::Mod,
            vec![Poly::var(y).sub(&k), world.clone()],
        ));
        let g = f.subst(me, &at, &|a| self.mk(a));
        self.sum(&g, y, &world).ok()
    }

    /// `c` with a binomial tree's guard in a loop over powers in scope written in
    /// its canonical form (when Z3 proves them equal; `src/engine/cost/tree.rs`).
    fn canonical_guard(&self, c: Poly) -> Poly {
        let mut c = c;
        for (m, n) in &self.powers {
            if c.mentions(*m) {
                if let Some(t) = self.as_tree_guard(&c, *m, n) {
                    c = t;
                }
            }
        }
        c
    }

    /// Terms under `[X == k]` (one variable) get `X := k` in their cofactor; a
    /// cofactor that vanishes there drops (e.g. `[P == 1] * (P - 1)`).
    pub(super) fn tidy(&self, x: &Poly) -> Poly {
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

/// `k` of a `(v + k) % P` in `f` (at any depth), with `k` free of `v`.
fn rotation_of(f: &Poly, v: VarId, world: &Poly) -> Option<Poly> {
    f.0.keys().flatten().find_map(|a| {
        let here = match a {
            Atom::Fun(Fun::Mod, args) if args.get(1) == Some(world) => args[0]
                .coefficients_in(v)
                .filter(|cs| cs.len() == 2 && cs[1] == Poly::k(1) && !cs[0].is_zero())
                .map(|cs| cs[0].clone()),
            _ => None,
        };
        here.or_else(|| a.operands().iter().find_map(|x| rotation_of(x, v, world)))
    })
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
