//! Deciding range obligations: by inspection where the bound is evident,
//! otherwise by one Z3 query each (cached, since a region is often repeated
//! under the same conditions). Every query is limited by Z3's resource limit only, and
//! what it costs (Z3's resource units, [`crate::engine::smt::units`]) is kept with its
//! verdict and counted against the check's budget: the same obligations are decided,
//! and the same left unchecked, whatever the machine's load.

use super::encode::{Defs, Enc};
use super::obligation::{Goal, Obligation, Verdict};
use super::{MINIMISE_RLIMIT, QUERY_RLIMIT};
use crate::report::evidence::Undecided;
use collc_spec::eval::{eval, Env};
use collc_spec::ir::{BinOp, Cond, Expr, Protocol, Range, Seq, VarId, VarKind};
use collc_spec::print::expr_to_string;
use std::collections::{HashMap, HashSet};
use z3::ast::{Bool, Int};
use z3::SatResult;

/// Decides obligations of one protocol.
pub struct Solver<'a> {
    p: &'a Protocol,
    defs: &'a Defs,
    consts: Env,
    z3: Option<z3::Solver>,
    cache: HashMap<Key, Decided>,
    /// The keys whose cost is counted in `spent` (each once per check, whether its verdict
    /// was decided in this check or kept from the last one).
    charged: HashSet<Key>,
    /// Z3 resource units the verdicts met so far cost.
    spent: u64,
}

/// A verdict (`None`: the bound holds) and the Z3 resource units deciding it cost.
pub type Decided = (Option<Verdict>, u64);

/// The negation of goal `goal` (of a slice, its `part`: `0 <= lo`, `lo <= hi`, `hi <= dim`)
/// and the terms a counterexample shows.
fn negated(enc: &mut Enc, p: &Protocol, goal: &Goal, part: usize) -> (Bool, Vec<Int>) {
    let world = enc.var(p.world);
    match goal {
        Goal::Index { e, dim, .. } => {
            let (x, d) = (enc.expr(e), enc.expr(dim));
            (Bool::or(&[x.lt(0), x.ge(&d)]), vec![x, d])
        }
        Goal::Slice { lo, hi, dim, .. } => {
            let (l, h, d) = (enc.expr(lo), enc.expr(hi), enc.expr(dim));
            let neg = match part {
                0 => l.lt(0),
                1 => l.gt(&h),
                _ => h.gt(&d),
            };
            (neg, vec![l, h, d])
        }
        Goal::Target { e } => {
            let x = enc.expr(e);
            (Bool::or(&[x.lt(0), x.ge(&world)]), vec![x, world.clone()])
        }
        Goal::Log2 { e } => {
            let x = enc.expr(e);
            (super::encode::is_pow2(&x).not(), vec![x])
        }
        Goal::Shift { e } => {
            let x = enc.expr(e);
            (
                Bool::or(&[x.lt(0), x.gt(collc_spec::eval::MAX_SHIFT)]),
                vec![x],
            )
        }
    }
}

impl<'a> Solver<'a> {
    /// A decider for `p`; Z3 is started only when an obligation needs it.
    pub fn new(p: &'a Protocol, defs: &'a Defs) -> Self {
        let mut consts = Env::new(p);
        for (v, var) in collc_spec::id::enumerate(&p.vars) {
            if let VarKind::Const(c) = var.kind {
                consts.set(v, c);
            }
        }
        Solver {
            p,
            defs,
            consts,
            z3: None,
            cache: HashMap::new(),
            charged: HashSet::new(),
            spent: 0,
        }
    }

    /// Starts from verdicts decided before in the same context ([`super::memo`]), each
    /// still charged its cost when first met.
    pub fn with_verdicts(mut self, cache: HashMap<Key, Decided>) -> Self {
        self.cache = cache;
        self
    }

    /// The verdicts decided, by obligation key.
    pub fn into_verdicts(self) -> HashMap<Key, Decided> {
        self.cache
    }

    /// The Z3 resource units the obligations decided so far cost (a verdict kept from the
    /// last check counts what it cost then).
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// `None` when the obligation holds for every value of the domains.
    pub fn decide(&mut self, o: &Obligation) -> Option<Verdict> {
        if self.obvious(&o.goal) {
            return None;
        }
        // `0 <= log2(x) <= x - 1` for x >= 1 (x's own goal): `x - 1` in range is
        // enough, and linear where `x` is (a `step *2` loop variable below `P`). Asked
        // first, under its own key, so that a kept verdict charges the same as a new one.
        let easier = match &o.goal {
            Goal::Index {
                e: Expr::Log2(x), ..
            } => {
                let mut easier = o.clone();
                if let Goal::Index { e, .. } = &mut easier.goal {
                    *e = Expr::Bin(BinOp::Sub, x.clone(), Box::new(Expr::Int(1)));
                }
                Some(self.decide(&easier).is_none())
            }
            _ => None,
        };
        let key: Key = (key_of(&o.goal), o.conds.clone());
        if let Some((v, cost)) = self.cache.get(&key) {
            if self.charged.insert(key) {
                self.spent += cost;
            }
            return v.clone();
        }
        let before = self.spent;
        let v = if easier == Some(true) {
            None
        } else {
            // A slice's three bounds are three smaller queries.
            let parts = if matches!(o.goal, Goal::Slice { .. }) {
                3
            } else {
                1
            };
            (0..parts).find_map(|part| self.query(o, part))
        };
        self.charged.insert(key.clone());
        self.cache.insert(key, (v.clone(), self.spent - before));
        v
    }

    fn fold(&self, e: &Expr) -> Option<i64> {
        eval(self.p, e, &self.consts).ok()
    }

    /// A rank variable: `me`, a rank parameter, a `peers`/`ranks` loop
    /// variable, or a `let` of one.
    fn is_rank_var(&self, e: &Expr) -> bool {
        let Expr::Var(v) = e else { return false };
        match &self.p.vars[*v].kind {
            VarKind::Me | VarKind::Param { domain: None } => true,
            VarKind::Loop => matches!(self.defs.loops.get(v), Some(Range::Peers | Range::Ranks)),
            VarKind::Local => self.defs.lets.get(v).is_some_and(|x| self.is_rank_var(x)),
            VarKind::Derived(x) => self.is_rank_var(x),
            _ => false,
        }
    }

    /// A power of two by its form: a constant one, `pow2(..)`, `1 << ..`, or the
    /// variable of a `step *f` loop whose start and factor are constant powers of two
    /// (or a `let` of one of these).
    fn is_pow2(&self, e: &Expr) -> bool {
        let pow2 = |x: i64| collc_spec::eval::log2(x).is_ok();
        if let Some(c) = self.fold(e) {
            return pow2(c);
        }
        match e {
            Expr::Pow2(_) => true,
            Expr::Bin(BinOp::Shl, a, _) => self.fold(a) == Some(1),
            Expr::Var(v) => match &self.p.vars[*v].kind {
                VarKind::Loop => matches!(
                    self.defs.loops.get(v),
                    Some(Range::Seq(Seq { lo, step, geometric: true, .. }))
                        if self.fold(lo).is_some_and(pow2) && self.fold(step).is_some_and(pow2)
                ),
                VarKind::Local => self.defs.lets.get(v).is_some_and(|x| self.is_pow2(x)),
                VarKind::Derived(x) => self.is_pow2(x),
                _ => false,
            },
            _ => false,
        }
    }

    /// `0 <= e < dim` for a power of two `dim` by the bits: `e` is a rank variable
    /// (`dim` = P), a loop variable of a range `lo..dim` with `lo >= 0`, or `^`, `|`, `&` of
    /// such values (no bit at or above log2 dim is set in either operand). `dim` is a
    /// constant power of two or `P` with `require P & (P - 1) == 0;`.
    fn below_pow2(&self, e: &Expr, dim: &Expr) -> bool {
        let world = Expr::Var(self.p.world);
        let dim_pow2 = match self.fold(dim) {
            Some(c) => collc_spec::eval::log2(c).is_ok(),
            None => *dim == world && self.world_pow2(),
        };
        dim_pow2 && self.bits_below(e, dim)
    }

    fn bits_below(&self, e: &Expr, dim: &Expr) -> bool {
        match e {
            Expr::Bin(BinOp::Xor | BinOp::Or | BinOp::And, a, b) => {
                self.bits_below(a, dim) && self.bits_below(b, dim)
            }
            Expr::Rank(a) => self.bits_below(a, dim),
            Expr::Var(v) => {
                (self.is_rank_var(e) && *dim == Expr::Var(self.p.world))
                    || match &self.p.vars[*v].kind {
                        VarKind::Loop => matches!(
                            self.defs.loops.get(v),
                            Some(Range::Span { lo, hi, .. } | Range::Seq(Seq { lo, hi, .. }))
                                if hi == dim && self.fold(lo).is_some_and(|l| l >= 0)
                        ),
                        VarKind::Local => self
                            .defs
                            .lets
                            .get(v)
                            .is_some_and(|x| self.bits_below(x, dim)),
                        _ => false,
                    }
            }
            _ => {
                self.fold(e).is_some_and(|c| c >= 0)
                    && self
                        .fold(dim)
                        .is_some_and(|d| self.fold(e).is_some_and(|c| c < d))
            }
        }
    }

    /// Whether a `require` says the world size is a power of two (`P & (P - 1) == 0`).
    fn world_pow2(&self) -> bool {
        let w = Expr::Var(self.p.world);
        let minus1 = Expr::Bin(BinOp::Sub, Box::new(w.clone()), Box::new(Expr::Int(1)));
        let form = Expr::Bin(BinOp::And, Box::new(w), Box::new(minus1));
        self.p.requires.iter().any(|r| {
            matches!(&r.cond, collc_spec::ir::Cond::Cmp(collc_spec::ir::CmpOp::Eq, a, b)
                if (*a == form && b.as_const() == Some(0)) || (*b == form && a.as_const() == Some(0)))
        })
    }

    /// A size that is never negative: `P`, a parameter with a non-negative
    /// domain, a non-negative constant.
    fn nonneg(&self, e: &Expr) -> bool {
        if let Some(c) = self.fold(e) {
            return c >= 0;
        }
        let Expr::Var(v) = e else { return false };
        match self.p.vars[*v].kind {
            VarKind::World { lo, .. } => lo >= 0,
            VarKind::Param {
                domain: Some((lo, _)),
            } => lo >= 0,
            _ => false,
        }
    }

    /// Bounds evident without a solver.
    pub fn obvious(&self, g: &Goal) -> bool {
        let world = Expr::Var(self.p.world);
        match g {
            Goal::Index { e, dim, .. } => {
                (self.is_rank_var(e) && *dim == world)
                    || self.below_pow2(e, dim)
                    || matches!((self.fold(e), self.fold(dim)), (Some(i), Some(d)) if 0 <= i && i < d)
            }
            Goal::Slice { lo, hi, dim, .. } => {
                let (l, h, d) = (self.fold(lo), self.fold(hi), self.fold(dim));
                (l == Some(0) && hi == dim && self.nonneg(dim))
                    || matches!((l, h, d), (Some(l), Some(h), Some(d)) if 0 <= l && l <= h && h <= d)
            }
            Goal::Target { e } => self.is_rank_var(e) || self.below_pow2(e, &world),
            Goal::Log2 { e } => self.is_pow2(e),
            // `log2(..)` is in 0..=62 by construction.
            Goal::Shift { e } => {
                matches!(e, Expr::Log2(_))
                    || self
                        .fold(e)
                        .is_some_and(|x| (0..=collc_spec::eval::MAX_SHIFT).contains(&x))
            }
        }
    }

    /// One Z3 query (with the minimisation of its counterexample), its cost added to
    /// `spent`.
    fn query(&mut self, o: &Obligation, part: usize) -> Option<Verdict> {
        let p = self.p;
        let mut enc = Enc::new(p, self.defs);
        let (neg, terms) = negated(&mut enc, p, &o.goal, part);
        let mut asserts = vec![neg];
        for (c, holds) in &o.conds {
            let b = enc.cond(c);
            asserts.push(if *holds { b } else { b.not() });
        }
        self.requires(&mut enc, &mut asserts);
        super::lemma::add(&mut enc);
        asserts.extend(enc.side.iter().cloned());

        let solver = self.z3.get_or_insert_with(z3::Solver::new);
        // Z3's deterministic resource limit, not the clock, decides a query, and what it
        // spends is counted against the check's budget: the same verdicts whatever the load.
        solver.set_params(&crate::engine::smt::rlimit_params(QUERY_RLIMIT));
        let at_start = crate::engine::smt::units(solver);
        solver.push();
        for a in &asserts {
            solver.assert(a);
        }
        let r = solver.check();
        let cost = |solver: &z3::Solver| {
            u64::from(crate::engine::smt::units(solver).wrapping_sub(at_start))
        };
        let out = match r {
            SatResult::Unsat => None,
            SatResult::Sat => match minimise(solver, &enc) {
                Some(m) => Some(broken(p, &enc, &terms, &m)),
                None => Some(Verdict::Undecided {
                    form: None,
                    reason: "Z3 found a counterexample but gave no model".into(),
                }),
            },
            SatResult::Unknown => {
                let why = solver
                    .get_reason_unknown()
                    .unwrap_or_else(|| "unknown".into());
                let spent = crate::engine::smt::Spent {
                    units: cost(solver),
                    rlimit: QUERY_RLIMIT,
                    clock: None,
                };
                let reason = match crate::engine::smt::classify_unknown(&why, spent) {
                    Undecided::Form => format!("unknown: {why}"),
                    _ => format!(
                        "unknown: Z3 gave up within its deterministic limit of {QUERY_RLIMIT} resource units ({why})"
                    ),
                };
                Some(Verdict::Undecided { form: None, reason })
            }
        };
        solver.pop(1);
        self.spent += cost(solver) + crate::planning::TABLE.range_query_units;
        match out {
            Some(Verdict::Undecided { form: None, reason }) => Some(Verdict::Undecided {
                form: self.hard_form(o),
                reason,
            }),
            other => other,
        }
    }

    /// Adds the `require`s that constrain a variable the query reads (to a
    /// fixpoint: a require may bring in another parameter).
    fn requires(&self, enc: &mut Enc, asserts: &mut Vec<Bool>) {
        let mut done = vec![false; self.p.requires.len()];
        loop {
            let mut grew = false;
            for (i, r) in self.p.requires.iter().enumerate() {
                if done[i] {
                    continue;
                }
                let mut relevant = false;
                let mut only_world = true;
                r.cond.for_each_var(&mut |v| {
                    if v != self.p.world {
                        only_world = false;
                        relevant |= enc.reads(v);
                    }
                });
                if relevant || only_world {
                    done[i] = true;
                    grew = true;
                    let b = enc.cond(&r.cond);
                    asserts.push(b);
                }
            }
            if !grew {
                return;
            }
        }
    }

    /// The first form in the obligation's definitions that is nonlinear: a
    /// product of two symbolic values, or a division by a symbolic value.
    fn hard_form(&self, o: &Obligation) -> Option<String> {
        let mut exprs: Vec<Expr> = match &o.goal {
            Goal::Index { e, dim, .. } => vec![e.clone(), dim.clone()],
            Goal::Slice { lo, hi, dim, .. } => vec![lo.clone(), hi.clone(), dim.clone()],
            Goal::Target { e } | Goal::Log2 { e } | Goal::Shift { e } => vec![e.clone()],
        };
        let mut seen: Vec<VarId> = Vec::new();
        while let Some(e) = exprs.pop() {
            if let Some(f) = self.nonlinear(&e) {
                return Some(f);
            }
            e.for_each_var(&mut |v| {
                if seen.contains(&v) {
                    return;
                }
                seen.push(v);
                match &self.p.vars[v].kind {
                    VarKind::Derived(x) => exprs.push(x.clone()),
                    VarKind::Local => exprs.extend(self.defs.lets.get(&v).cloned()),
                    VarKind::Loop => {
                        if let Some(
                            Range::Span { lo, hi, step } | Range::Seq(Seq { lo, hi, step, .. }),
                        ) = self.defs.loops.get(&v)
                        {
                            exprs.extend([lo.clone(), hi.clone(), step.clone()]);
                        }
                    }
                    _ => {}
                }
            });
        }
        None
    }

    fn nonlinear(&self, e: &Expr) -> Option<String> {
        let s = |x: &Expr| expr_to_string(self.p, x);
        match e {
            Expr::Bin(BinOp::Mul, a, b) if self.fold(a).is_none() && self.fold(b).is_none() => {
                Some(format!("the product `{}` of two symbolic values", s(e)))
            }
            Expr::Bin(BinOp::Div | BinOp::Mod, _, b) | Expr::CeilDiv(_, b)
                if self.fold(b).is_none() =>
            {
                Some(format!("`{}`, a division by the symbolic `{}`", s(e), s(b)))
            }
            Expr::Int(_) | Expr::Var(_) => None,
            Expr::Array(_, xs) => xs.iter().find_map(|x| self.nonlinear(x)),
            Expr::Bin(op, _, _) if op.is_bitwise() => Some(format!(
                "`{}`, a bit operation (decided on 64-bit vectors)",
                s(e)
            ))
            .filter(|_| self.fold(e).is_none()),
            Expr::Log2(_) | Expr::Pow2(_) if self.fold(e).is_none() => {
                Some(format!("`{}` (decided on 64-bit vectors)", s(e)))
            }
            Expr::Neg(a) | Expr::Rank(a) | Expr::Log2(a) | Expr::Pow2(a) => self.nonlinear(a),
            Expr::Bin(_, a, b) | Expr::CeilDiv(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
                self.nonlinear(a).or_else(|| self.nonlinear(b))
            }
        }
    }
}

/// What a goal asks, without where it comes from (the region and position it bounds):
/// the same question asked twice is decided once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Question {
    Index(Expr, Expr),
    Slice(Expr, Expr, Expr),
    Target(Expr),
    Log2(Expr),
    Shift(Expr),
}

/// An obligation's key: its question and its path conditions.
pub type Key = (Question, Vec<(Cond, bool)>);

fn key_of(g: &Goal) -> Question {
    match g {
        Goal::Index { e, dim, .. } => Question::Index(e.clone(), dim.clone()),
        Goal::Slice { lo, hi, dim, .. } => Question::Slice(lo.clone(), hi.clone(), dim.clone()),
        Goal::Target { e } => Question::Target(e.clone()),
        Goal::Log2 { e } => Question::Log2(e.clone()),
        Goal::Shift { e } => Question::Shift(e.clone()),
    }
}

/// The smallest counterexample: the world size first, then the parameters in
/// declaration order, then the other variables and host-array elements, each
/// made as small as the earlier ones allow by bisection on the solver that
/// just found a model (deterministic, unlike `Optimize`, whose answer depends
/// on what the context solved before). Each step gets at most
/// [`MINIMISE_RLIMIT`] resource units (deterministic: the same counterexample
/// whatever the load); whatever model was last found is the answer when a step
/// gives up, so a counterexample is never lost, only possibly not the smallest.
fn minimise(solver: &z3::Solver, enc: &Enc) -> Option<z3::Model> {
    let mut order: Vec<&(VarId, Int)> = enc.vars.iter().collect();
    order.sort_by_key(|(v, _)| *v);
    let terms: Vec<&Int> = order
        .into_iter()
        .map(|(_, x)| x)
        .chain(enc.elems.iter().map(|(_, _, x)| x))
        .collect();
    let mut model = solver.get_model()?;
    solver.set_params(&crate::engine::smt::rlimit_params(MINIMISE_RLIMIT));
    for x in terms {
        let Some(mut hi) = model.eval(x, true).and_then(|v| v.as_i64()) else {
            continue;
        };
        // Every variable has a domain below 2^31 in magnitude; bisect on [lo, hi].
        let mut lo = -(1i64 << 31);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            solver.push();
            solver.assert(x.le(mid));
            if solver.check() == SatResult::Sat {
                if let Some(m) = solver.get_model() {
                    hi = m
                        .eval(x, true)
                        .and_then(|v| v.as_i64())
                        .unwrap_or(mid)
                        .min(mid);
                    model = m;
                }
            } else {
                lo = mid + 1;
            }
            solver.pop(1);
        }
        solver.assert(x.eq(Int::from_i64(hi)));
    }
    Some(model)
}

/// A counterexample from a model: the values of the inputs, `me`, the block
/// index and loop variables the query read, and of the goal's terms.
fn broken(p: &Protocol, enc: &Enc, terms: &[Int], m: &z3::Model) -> Verdict {
    let class = |v: VarId| match p.vars[v].kind {
        VarKind::World { .. } => Some(0),
        VarKind::Param { .. } => Some(1),
        VarKind::Me => Some(2),
        VarKind::Block => Some(3),
        VarKind::Loop => Some(4),
        _ => None,
    };
    let mut shown: Vec<(u8, VarId, i64)> = enc
        .vars
        .iter()
        .filter_map(|(v, x)| {
            let c = class(*v)?;
            let val = m.eval(x, true).and_then(|x| x.as_i64())?;
            Some((c, *v, val))
        })
        .collect();
    shown.sort();
    let mut values: Vec<(String, i64)> = shown
        .into_iter()
        .map(|(_, v, x)| (p.var_name(v).to_string(), x))
        .collect();
    for (_, name, x) in &enc.elems {
        if let Some(val) = m.eval(x, true).and_then(|x| x.as_i64()) {
            values.push((name.clone(), val));
        }
    }
    let got = terms
        .iter()
        .map(|t| m.eval(t, true).and_then(|x| x.as_i64()).unwrap_or(0))
        .collect();
    Verdict::Broken { values, got }
}
