//! Z3 translation of [`Lin`]s, atoms and conditions, and the two queries the
//! obligations need: "is this property valid under the configuration's
//! assumptions?" (unsat of the negation) and "give me the smallest model of its
//! negation" (`Optimize`, symbolic parameters minimised in declaration order).

use crate::engine::exec::Run;
use crate::engine::sym::{Assign, Atom, AtomId, CondId, Formula, Guard, Lin, Syms};
use crate::report::evidence::Undecided;
use collc_spec::ir::{Protocol, VarId};
use std::collections::BTreeMap;
use std::time::Instant;
use z3::ast::{Bool, Int};
use z3::{Optimize, Params, SatResult, Solver};

/// A property to check, as a Z3-independent description.
#[derive(Clone, Debug)]
pub enum Prop {
    /// `l >= 0`
    Ge0(Lin),
    /// `l == 0`
    Eq0(Lin),
    /// The guard is unsatisfiable (the property "not g").
    Never(Guard),
    /// Two conditions are equivalent.
    Equiv(CondId, CondId),
}

/// The answer to one query.
#[derive(Clone, Debug)]
pub enum Answer {
    /// Valid for every value.
    Valid,
    /// Refuted; the (minimised) assignment.
    Refuted(Assign),
    /// Z3 could not decide: why (as data, and in words).
    Unknown(Undecided, String),
}

/// The limits of one query: Z3's deterministic resource limit (`rlimit`: units of Z3's
/// own work, not of the clock, so the same query gets the same answer whatever the
/// machine's load), and the wall-clock safety cap of the whole route or obligation
/// (`--timeout-ms`), reported as a timeout when it is hit.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// Z3 resource units for this query.
    pub rlimit: u32,
    /// The wall-clock cap (the instant the route or obligation stops).
    pub cap: Instant,
}

/// Z3's deterministic resource limit of one query (`rlimit` units), for both routes: the
/// same query gets the same answer whatever the machine's load. Calibrated on the
/// examples (verifier/README.md, "Resource limits"): the costliest query a proof of
/// theirs needs stays below a twentieth of it at their former domains; the
/// widened binomial tree's costliest, in its bit-vector attempt (three times this),
/// below a fifth of that.
pub const QUERY_RLIMIT: u32 = 8_000_000;

/// Applies `limit` to a solver's parameters; `None` when the cap has passed. Returns the
/// milliseconds left to the cap.
pub fn limit_params(limit: Limit) -> Option<(Params, u32)> {
    let left = limit
        .cap
        .saturating_duration_since(Instant::now())
        .as_millis();
    if left == 0 {
        return None;
    }
    let ms = (left.min(u128::from(u32::MAX)) as u32).max(1);
    let mut params = Params::new();
    params.set_u32("timeout", ms);
    params.set_u32("rlimit", limit.rlimit.max(1));
    Some((params, ms))
}

/// The parameters of a query limited only by Z3's deterministic resource limit (`rlimit`
/// units), with no wall-clock cap: its answer and its cost ([`units`]) are the same
/// whatever the machine's load. Without `arith.nl.nra`: the nonlinear real procedure
/// (nlsat) that Z3's incremental arithmetic calls when linearisation finds no lemma barely
/// counts its work in units (libz3 4.8.12, `collc/tests/ui/domain_range_unproved.coll`'s
/// `x*x - 2*y*y` query: 500,000 units took 13 s with it and 0.7 s without), so a
/// unit budget would not bound the time.
pub fn rlimit_params(rlimit: u32) -> Params {
    let mut params = Params::new();
    params.set_u32("rlimit", rlimit.max(1));
    params.set_bool("arith.nl.nra", false);
    params
}

/// The resource units Z3 has spent so far in the context of `solver` (the calling thread's):
/// the statistic `rlimit count`, cumulative over every query of the context and reported
/// modulo 2^32 (libz3 4.8.12: an unsigned statistic). The cost of a query is the wrapping
/// difference of two readings around it (a query spends at most its `rlimit`, far below
/// 2^32), the same in every run whatever the load.
pub fn units(solver: &Solver) -> u32 {
    match solver.get_statistics().value("rlimit count") {
        Some(z3::StatisticsValue::UInt(n)) => n,
        Some(z3::StatisticsValue::Double(x)) => (x as u64) as u32,
        None => 0,
    }
}

/// What one query spent against its limits, read by [`classify_unknown`].
#[derive(Clone, Copy, Debug)]
pub struct Spent {
    /// Z3's resource units the query spent (the difference of [`units`] around it).
    pub units: u64,
    /// Its resource limit.
    pub rlimit: u32,
    /// The wall time it took and its wall-clock limit in milliseconds; `None` for a query
    /// without a clock ([`rlimit_params`]).
    pub clock: Option<(std::time::Duration, u32)>,
}

/// One solver per verification (thread-local context), reused with push/pop.
pub struct Smt {
    solver_: Option<Solver>,
    /// Number of Z3 checks made.
    pub calls: u32,
}

impl Default for Smt {
    fn default() -> Self {
        Smt::new()
    }
}

impl Smt {
    /// A fresh solver.
    pub fn new() -> Smt {
        Smt {
            solver_: None,
            calls: 0,
        }
    }

    /// The solver, created on first use (creating a Z3 context costs ~20 ms).
    fn solver(&mut self) -> &Solver {
        self.solver_.get_or_insert_with(Solver::new)
    }

    fn set_limit(&mut self, limit: Limit) -> Option<u32> {
        let (params, ms) = limit_params(limit)?;
        self.solver().set_params(&params);
        Some(ms)
    }

    /// Checks `assume ⇒ prop` for all values of the symbolic atoms, under the
    /// run's assumptions; on refutation, returns the smallest counterexample.
    pub fn check(
        &mut self,
        p: &Protocol,
        run: &Run,
        assume: &[Bool],
        extra: &dyn Fn(&mut Tr) -> Vec<Bool>,
        prop: &Prop,
        limit: Limit,
    ) -> Answer {
        let Some(limit_ms) = self.set_limit(limit) else {
            return Answer::Unknown(Undecided::Clock, CAP_HIT.into());
        };
        let mut tr = Tr::new(p, &run.syms);
        let neg = match prop {
            Prop::Ge0(l) => tr.lin(l).lt(0),
            Prop::Eq0(l) => tr.lin(l).eq(Int::from_i64(0)).not(),
            Prop::Never(g) => tr.guard(g),
            Prop::Equiv(a, b) => {
                let (x, y) = (tr.cond(*a), tr.cond(*b));
                x.eq(&y).not()
            }
        };
        let mut asserts: Vec<Bool> = assume.to_vec();
        for c in &run.assumptions {
            asserts.push(tr.cond(*c));
        }
        asserts.extend(extra(&mut tr));
        asserts.push(neg);
        let side = tr.side();
        self.solver();
        let Some(solver) = self.solver_.as_ref() else {
            return Answer::Unknown(
                Undecided::Form,
                "unsupported form: Z3 could not be started".into(),
            );
        };
        solver.push();
        for a in asserts.iter().chain(side.iter()) {
            solver.assert(a);
        }
        let start = Instant::now();
        let at_start = units(solver);
        let r = solver.check();
        let out = match r {
            SatResult::Unsat => Answer::Valid,
            SatResult::Unknown => {
                let spent = Spent {
                    units: u64::from(units(solver).wrapping_sub(at_start)),
                    rlimit: limit.rlimit,
                    clock: Some((start.elapsed(), limit_ms)),
                };
                let (why, text) = unknown_reason(
                    &solver
                        .get_reason_unknown()
                        .unwrap_or_else(|| "unknown".into()),
                    spent,
                );
                Answer::Unknown(why, text)
            }
            SatResult::Sat => {
                let model = solver.get_model();
                let first = model.map(|m| tr.extract(&m));
                // Minimise: P is already the smallest (enumeration order); then the
                // symbolic parameters in declaration order.
                let min = minimise(&tr, &asserts, &side, limit);
                match (min, first) {
                    (Some(a), _) => Answer::Refuted(a),
                    (None, Some(a)) => Answer::Refuted(a),
                    (None, None) => Answer::Unknown(
                        Undecided::Form,
                        "unsupported form: Z3 refuted the obligation but gave no counterexample; \
                         replay it with `collc sim` at small parameter values"
                            .into(),
                    ),
                }
            }
        };
        solver.pop(1);
        self.calls += 1;
        out
    }
}

/// Why a query was not posed: the wall-clock cap had passed.
pub const CAP_HIT: &str =
    "timeout: the wall-clock cap (--timeout-ms) was hit before this query (the verdict may depend on the machine's load)";

/// Why Z3 answered unknown, from the reason it gives (`get_reason_unknown`) and what the
/// query spent: its deterministic resource limit ([`Undecided::Resources`]: it spent all its
/// units, or its reason says so; libz3 4.8.12's incremental core reports an exhausted
/// limit as "canceled", like a timer, so the units decide first); the wall-clock cap
/// ([`Undecided::Clock`], only for a query with a clock: its reason says so, or it used
/// (nearly) all of its time, since a timer can also end the nonlinear procedures, which
/// then report "incomplete"); else a form it cannot decide ([`Undecided::Form`]). This is
/// the one place that reads Z3's reason text: every route classifies an unknown answer
/// here and keeps the text only to show it.
pub fn classify_unknown(z3: &str, spent: Spent) -> Undecided {
    if spent.units >= u64::from(spent.rlimit) || z3.contains("resource") || z3.contains("rlimit") {
        return Undecided::Resources;
    }
    let stopped = z3.contains("timeout") || z3.contains("canceled");
    match spent.clock {
        Some((time, limit_ms)) if stopped || time.as_millis() * 10 >= u128::from(limit_ms) * 9 => {
            Undecided::Clock
        }
        None if stopped => Undecided::Resources,
        _ => Undecided::Form,
    }
}

/// Why Z3 answered unknown ([`classify_unknown`]), with the reason shown: its resource
/// limit (deterministic: the same answer whatever the load); `timeout` only when the
/// wall-clock cap ended it (the one case where `--timeout-ms` helps); otherwise the form
/// it cannot decide.
pub fn unknown_reason(z3: &str, spent: Spent) -> (Undecided, String) {
    let why = classify_unknown(z3, spent);
    let text = match why {
        Undecided::Resources => format!(
            "resource limit: Z3 gave up within its deterministic limit of {} resource units per query ({z3})",
            spent.rlimit
        ),
        Undecided::Clock => format!("timeout: Z3 was stopped by the wall-clock cap (--timeout-ms) ({z3}); the verdict may depend on the machine's load"),
        Undecided::Form => format!(
            "unsupported form: Z3 answered unknown ({z3}), which happens on products or divisions \
             of two symbolic values; write them with a constant factor or divisor"
        ),
    };
    (why, text)
}

fn minimise(tr: &Tr, asserts: &[Bool], side: &[Bool], limit: Limit) -> Option<Assign> {
    let (params, _) = limit_params(limit)?;
    let opt = Optimize::new();
    opt.set_params(&params);
    for a in asserts.iter().chain(side.iter()) {
        opt.assert(a);
    }
    let mut order: Vec<(&VarId, &Int)> = tr.params.iter().collect();
    order.sort_by_key(|x| *x.0);
    for (_, x) in &order {
        opt.minimize(*x);
    }
    for x in tr.others.values() {
        opt.minimize(x);
    }
    match opt.check(&[]) {
        SatResult::Sat => opt.get_model().map(|m| tr.extract(&m)),
        _ => None,
    }
}

/// The shifts `k` of the lattice lemmas (`d` within `y` of `k*y` is `k*y`, `|k| <= 2`).
const LATTICE_SHIFT: i64 = 2;

/// Translation state: Z3 terms for atoms, plus their defining side constraints.
pub struct Tr<'a> {
    p: &'a Protocol,
    syms: &'a Syms,
    atoms: BTreeMap<AtomId, Int>,
    conds: BTreeMap<CondId, Bool>,
    side: Vec<Bool>,
    params: BTreeMap<VarId, Int>,
    others: BTreeMap<AtomId, Int>,
    /// With [`Tr::opaque_bits`]: the bit atoms met, each an unconstrained constant
    /// (the caller states what it knows of them).
    opaque: Option<Vec<AtomId>>,
    /// Multiples of each symbolic divisor met (`x - x % y`, products `y * z`), for the
    /// lattice lemmas of [`Tr::side`].
    multiples: Vec<(Lin, Int)>,
    /// Products `a * b` with their operands, each a candidate multiple of a divisor.
    products: Vec<(Lin, Lin, Int)>,
}

impl<'a> Tr<'a> {
    /// A fresh translation.
    pub fn new(p: &'a Protocol, syms: &'a Syms) -> Self {
        Tr {
            p,
            syms,
            atoms: BTreeMap::new(),
            conds: BTreeMap::new(),
            side: Vec::new(),
            params: BTreeMap::new(),
            others: BTreeMap::new(),
            opaque: None,
            multiples: Vec::new(),
            products: Vec::new(),
        }
    }
    /// A translation in which every bit atom ([`Atom::Bit`]), and every remainder by a
    /// symbolic divisor, is an unconstrained integer constant, listed by [`Tr::opaque`].
    pub fn opaque_bits(p: &'a Protocol, syms: &'a Syms) -> Self {
        Tr {
            opaque: Some(Vec::new()),
            ..Tr::new(p, syms)
        }
    }
    /// The bit atoms made opaque so far, in the order they were met.
    pub fn opaque(&self) -> &[AtomId] {
        self.opaque.as_deref().unwrap_or_default()
    }
    /// The side constraints collected so far, with the lattice lemmas of every symbolic
    /// divisor `y`: for two multiples `a`, `b` of `y` (`x - x % y` of a remainder, of a
    /// quotient's or a `ceil`'s dividend, a product `y * z`, and 0) and `y > 0`, a
    /// difference within `y` of `k*y` is `k*y` (`|k| <= 2`). True of the integers (the
    /// difference is a multiple of `y`), and linear in `a - b` for each `k`: with them,
    /// `x % G == e` and `(x - e) % G != 0` contradict each other without nonlinear
    /// reasoning, and a positive multiple of `G` is at least `G`.
    pub fn side(&mut self) -> Vec<Bool> {
        let mut out = self.side.clone();
        let mut divisors: Vec<Lin> = Vec::new();
        for (y, _) in &self.multiples {
            if !divisors.contains(y) {
                divisors.push(y.clone());
            }
        }
        for y in divisors {
            let mut ms: Vec<Int> = vec![Int::from_i64(0)];
            ms.extend(
                self.multiples
                    .iter()
                    .filter(|m| m.0 == y)
                    .map(|m| m.1.clone()),
            );
            ms.extend(
                self.products
                    .iter()
                    .filter(|(a, b, _)| *a == y || *b == y)
                    .map(|m| m.2.clone()),
            );
            let yv = self.lin(&y);
            let pos = yv.gt(0);
            for i in 0..ms.len() {
                for j in i + 1..ms.len() {
                    let d = ms[i].clone() - ms[j].clone();
                    // For y > 0: k*y - y < d < k*y + y means d == k*y (small k).
                    for k in -LATTICE_SHIFT..=LATTICE_SHIFT {
                        let ky = yv.clone() * Int::from_i64(k);
                        let lo = d.gt(ky.clone() - yv.clone());
                        let hi = d.lt(ky.clone() + yv.clone());
                        out.push(Bool::and(&[pos.clone(), lo, hi]).implies(d.eq(&ky)));
                    }
                }
            }
        }
        out
    }
    fn extract(&self, m: &z3::Model) -> Assign {
        let mut a = Assign::default();
        for (v, x) in &self.params {
            if let Some(val) = m.eval(x, true).and_then(|x| x.as_i64()) {
                a.params.insert(*v, val);
            }
        }
        for (id, x) in &self.others {
            if let Some(val) = m.eval(x, true).and_then(|x| x.as_i64()) {
                a.atoms.insert(*id, val);
            }
        }
        a
    }
    /// A Lin as a Z3 Int.
    pub fn lin(&mut self, l: &Lin) -> Int {
        let mut parts: Vec<Int> = vec![Int::from_i64(l.c)];
        for (a, k) in &l.t {
            let x = self.atom(*a);
            parts.push(if *k == 1 { x } else { x * Int::from_i64(*k) });
        }
        Int::add(&parts)
    }
    /// A guard as a conjunction.
    pub fn guard(&mut self, g: &Guard) -> Bool {
        let cs: Vec<Bool> = g.iter().map(|c| self.cond(*c)).collect();
        Bool::and(&cs)
    }
    /// A condition.
    pub fn cond(&mut self, c: CondId) -> Bool {
        if let Some(b) = self.conds.get(&c) {
            return b.clone();
        }
        let b = match &self.syms.conds[c as usize] {
            Formula::Ge0(l) => self.lin(l).ge(0),
            Formula::Eq0(l) => self.lin(l).eq(Int::from_i64(0)),
            Formula::Not(x) => self.cond(*x).not(),
            Formula::And(xs) => {
                let v: Vec<Bool> = xs.iter().map(|x| self.cond(*x)).collect();
                Bool::and(&v)
            }
            Formula::Or(xs) => {
                let v: Vec<Bool> = xs.iter().map(|x| self.cond(*x)).collect();
                Bool::or(&v)
            }
        };
        self.conds.insert(c, b.clone());
        b
    }
    /// An atom.
    pub fn atom(&mut self, a: AtomId) -> Int {
        if let Some(x) = self.atoms.get(&a) {
            return x.clone();
        }
        let x = match self.syms.atoms[a as usize].clone() {
            Atom::Param(v) => {
                let x = Int::new_const(self.p.var_name(v));
                if let Some((lo, hi)) = self.syms.param_bounds.get(&v) {
                    self.side.push(x.ge(*lo));
                    self.side.push(x.le(*hi));
                }
                self.params.insert(v, x.clone());
                x
            }
            Atom::Elem(arr, r, i) => {
                let x = Int::new_const(format!("{}[{i}]@{r}", self.p.arrays[arr].name));
                let (lo, hi) = self.p.arrays[arr].domain;
                self.side.push(x.ge(lo));
                self.side.push(x.le(hi));
                self.others.insert(a, x.clone());
                x
            }
            Atom::Iter(n) => self.iter(a, n),
            Atom::CeilDiv(x, y) => self.quotient(&x, y, true),
            Atom::Div(x, y) => self.quotient(&x, y, false),
            Atom::Mod(_, y) if self.opaque.is_some() && y.as_const().is_none() => {
                self.opaque.get_or_insert_with(Vec::new).push(a);
                Int::new_const(format!("mod#{a}"))
            }
            Atom::Mod(x, y) => {
                let (x, yl) = (self.lin(&x), y);
                let y = self.lin(&yl);
                self.side.push(y.eq(Int::from_i64(0)).not());
                let m = x.modulo(&y);
                if yl.as_const().is_none() {
                    self.multiples.push((yl, x - m.clone()));
                }
                m
            }
            Atom::Min(x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                x.le(&y).ite(&x, &y)
            }
            Atom::Max(x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                x.ge(&y).ite(&x, &y)
            }
            Atom::Mul(x, y) => {
                let (xl, yl) = (x, y);
                let (x, y) = (self.lin(&xl), self.lin(&yl));
                let m = x * y;
                self.products.push((xl, yl, m.clone()));
                m
            }
            Atom::Tri(x) => {
                let x = self.lin(&x);
                (x.clone() * (x - Int::from_i64(1))).div(Int::from_i64(2))
            }
            Atom::Ind(g) => {
                let b = self.guard(&g);
                b.ite(&Int::from_i64(1), &Int::from_i64(0))
            }
            Atom::Guarded(g, x) => {
                let b = self.guard(&g);
                let x = self.atom(x);
                b.ite(&x, &Int::from_i64(0))
            }
            Atom::Bit(..) if self.opaque.is_some() => {
                self.opaque.get_or_insert_with(Vec::new).push(a);
                Int::new_const(format!("bit#{a}"))
            }
            Atom::Bit(f, x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                crate::engine::param::bits::z3(f, &x, &y, &mut self.side)
            }
        };
        self.atoms.insert(a, x.clone());
        x
    }

    /// Loop iteration atom `a` (loop `n`): `0 <= j < trip`, and with a symbolic step `s >= 1`
    /// over the range `r` (`param::stride`), `0 <= s*j < r` (`j < ceil(r / s)` iff `s*j < r`,
    /// the product the loop's value reads).
    fn iter(&mut self, a: AtomId, n: u32) -> Int {
        let info = &self.syms.loops[n as usize];
        let x = Int::new_const(format!("{}#{n}", self.p.var_name(info.var)));
        let trip = self.lin(&info.trip.clone());
        self.side.push(x.ge(0));
        self.side.push(x.lt(&trip));
        if let Some((range, st)) = self.syms.strides.get(&a).cloned() {
            if self.syms.lb(&st).is_some_and(|l| l >= 1) {
                let sx = self.lin(&st) * x.clone();
                let r = self.lin(&range);
                self.side.push(sx.lt(&r));
                self.side.push(sx.ge(0));
            }
        }
        self.others.insert(a, x.clone());
        x
    }

    /// `x / y` rounded down, or up (`ceil`); `y != 0`, and a symbolic `y` divides the
    /// rounded numerator.
    fn quotient(&mut self, xl: &Lin, yl: Lin, ceil: bool) -> Int {
        let (x, y) = (self.lin(xl), self.lin(&yl));
        self.side.push(y.eq(Int::from_i64(0)).not());
        if !ceil {
            if yl.as_const().is_none() {
                self.multiples.push((yl, x.clone() - x.modulo(&y)));
            }
            return x.div(&y);
        }
        if yl.as_const().is_none() {
            let nx = -x.clone();
            self.multiples.push((yl, nx.clone() - nx.modulo(&y)));
        }
        let pos = -((-x.clone()).div(&y));
        y.gt(0).ite(&pos, &x.div(&y))
    }
}
