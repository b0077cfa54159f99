//! The parametric route: the symbolic obligations and deadlock freedom proved for
//! every world size of the declared domain at once, with `P`, the rank, the block
//! index and every loop variable symbolic (no enumeration).
//!
//! A *generic cell* of signal `s` is a pair of fresh atoms `(o, i)` with `o` in
//! `0..P` and `i` in the signal's dimensions. Each notify statement (of a second,
//! independent copy of the actor, pass B) is solved for the writer and loop
//! iteration that reach that cell ([`solve`]); what the cell does not determine is
//! summed in closed form (numeric loops) or counted (ranks). Each question is then
//! one query over `P`, `o`, `i` and the parameters, closed by literal arithmetic or
//! by Z3 (unsat of the negation). A query that is refuted or undecided does not make
//! a violation here: the obligation stays open and the enumerated route
//! (`check.rs`) decides it, stated as such in the report.
//!
//! Deadlock freedom is proved with a ranking of waits by *program point* (the
//! statement and the iteration of every enclosing loop, ordered lexicographically,
//! the epilogue after the body): if every wait's threshold is reached by the
//! credits that every rank sends at program points before it, and only the owner
//! of a cell ever lowers it, then in any state where some rank waits forever, the
//! waiting rank at the smallest (call, point) has every one of those credits
//! (every other rank is at a later point or done, and the reuse theorem removes
//! earlier calls' credits), so it can move: no deadlock (`README.md`, "Progress").

mod bitlemma;
pub mod bits;
mod bvq;
mod claim;
mod epoch;
pub mod extract;
pub mod horizon;
pub mod invert;
mod lowbit;
mod multi_next;
mod oblig;
mod phase;
mod rank_key;
pub mod residue;
pub mod reuse;
mod reuse_hop;
mod rotate;
pub mod solve;
pub mod stride;
pub mod value;
mod value_next;
mod value_order;
mod value_rank;
mod window;

use crate::engine::exec::{self, Run};
use crate::engine::smt::{Answer, Prop, Smt};
use crate::engine::sym::{Guard, Lin, Syms};
use crate::report::evidence::Undecided;
use crate::report::Obligation;
use collc_spec::ir::*;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One proved obligation.
#[derive(Clone, Debug)]
pub struct Proof {
    /// Checks made.
    pub items: u64,
    /// Closed by literal arithmetic.
    pub literal: u64,
    /// Closed by Z3.
    pub z3: u64,
}

impl Proof {
    /// Its counts, as a scope states them.
    pub fn checks(&self) -> crate::report::scope::Checks {
        crate::report::scope::Checks {
            items: self.items,
            literal: self.literal,
            z3: self.z3,
        }
    }
}

/// What the parametric route showed: per obligation id, a proof or why not.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// `credit-balance`, ..., `guard-symmetry`, and `deadlock`.
    pub results: HashMap<&'static str, Result<Proof, String>>,
    /// The world-size domain covered.
    pub world: (i64, i64),
    /// Milliseconds spent.
    pub millis: u64,
    /// World sizes of the counterexamples Z3 gave to refuted progress queries (ascending,
    /// each the smallest for its query): where a bounded run should look for a deadlock
    /// (`BoundedOptions::target_worlds`).
    pub named_worlds: Vec<i64>,
    /// The overflow horizon of the monotonic cells, derived with `P` symbolic (`None`:
    /// no monotonic cell, or `credit-balance` not proved symbolically).
    pub horizon: Option<horizon::Horizon>,
}

impl Outcome {
    /// The proof of obligation `id`, if the route closed it.
    pub fn proof(&self, id: &str) -> Option<&Proof> {
        self.results.get(id).and_then(|r| r.as_ref().ok())
    }
    /// Why the route did not close `id`.
    pub fn open(&self, id: &str) -> Option<&str> {
        match self.results.get(id) {
            Some(Err(r)) => Some(r),
            None => Some("not attempted"),
            _ => None,
        }
    }
    /// "all P in 1..=16" or "all P >= 1".
    pub fn domain(&self) -> String {
        world_phrase(self.world.0, self.world.1)
    }
}

pub use crate::report::summary::world_phrase;

/// The obligations this route can prove (the symbolic six, then `deadlock`).
pub const IDS: [&str; 7] = crate::report::obligation::ids([
    Obligation::CreditBalance,
    Obligation::OpExclusivity,
    Obligation::WaitReachable,
    Obligation::StaleCredit,
    Obligation::GarbageCredit,
    Obligation::GuardSymmetry,
    Obligation::Deadlock,
]);

/// `r`, unless `credit-balance` or `op-exclusivity` is open (the reuse theorem).
fn with_reuse(out: &Outcome, mut r: Result<Proof, String>) -> Result<Proof, String> {
    if r.is_ok() {
        for dep in ["credit-balance", "op-exclusivity"] {
            if let Some(Err(why)) = out.results.get(dep) {
                r = Err(format!("{dep} is not proved symbolically ({why})"));
            }
        }
    }
    r
}

/// Tries every obligation of [`IDS`] for the whole declared domain.
pub fn prove(p: &Protocol, budget: Duration) -> Outcome {
    let start = Instant::now();
    let (lo, hi) = match p.vars[p.world].kind {
        VarKind::World { lo, hi } => (lo, hi),
        _ => (1, 1),
    };
    let mut out = Outcome {
        world: (lo, hi),
        ..Outcome::default()
    };
    match Ctx::new(p, start + budget) {
        Ok(mut cx) => {
            for id in IDS {
                let mut r = cx.obligation(id);
                // Only the progress questions name world sizes for the bounded search
                // (a deadlock the ranking could not exclude); the other obligations are
                // decided by enumeration where this route does not close them.
                if matches!(id, "wait-reachable" | "deadlock") {
                    out.named_worlds.append(&mut cx.named);
                } else {
                    cx.named.clear();
                }
                if id == "deadlock" && r.is_ok() {
                    // The ranking argument needs the reuse theorem: every call nets 0 on
                    // every cell and no cell mixes Set with AtomicAdd.
                    r = with_reuse(&out, r);
                    r = value_rank::with_value_signal(&cx, &out, r);
                }
                if id == "stale-credit" && cx.multi_chained {
                    // The many-writer rule's chains wait on self-clearing cells: the
                    // reuse theorem again.
                    r = with_reuse(&out, r);
                }
                out.results.insert(id, r);
            }
            if out.proof("credit-balance").is_some() && !cx.horizon.is_empty() {
                out.horizon = cx.symbolic_horizon().ok().flatten();
            }
        }
        Err(reason) => {
            for id in IDS {
                out.results.insert(id, Err(reason.clone()));
            }
        }
    }
    out.named_worlds.sort_unstable();
    out.named_worlds.dedup();
    out.millis = start.elapsed().as_millis() as u64;
    out
}

/// The state of the route: the atoms, the two passes, one Z3 solver.
pub(crate) struct Ctx<'a> {
    pub(crate) p: &'a Protocol,
    pub(crate) run: Run,
    pub(crate) smt: Smt,
    pub(crate) a: extract::Pass,
    pub(crate) b: extract::Pass,
    pub(crate) world: Lin,
    pub(crate) blocks: Lin,
    pub(crate) env: Vec<Option<exec::Val>>,
    pub(crate) deadline: Instant,
    pub(crate) stats: Proof,
    progress: Option<Result<Proof, String>>,
    named: Vec<i64>,
    /// The rotation of relative ranks (`param::rotate`), if the actors are relabelled.
    pub(crate) rotation: Option<Lin>,
    /// The rank key of each level of the progress ranking, chosen so far
    /// (`param::rank_key`).
    keys: rank_key::Schedule,
    /// The progress ranking's answers so far (`param::rank_key`).
    answers: rank_key::Answers,
    /// Claims of the claimed solving rules, by their query (`param::claim`).
    claims: HashMap<crate::engine::sym::Guard, bool>,
    /// Level raises of straight-line waits (by statement start) for the progress ranking.
    pub(crate) delta: HashMap<usize, i64>,
    /// Phase raises inside loop iterations for the progress ranking (`param::phase`).
    phases: Vec<phase::Raise>,
    /// Whether the progress ranking may raise phases.
    phased: bool,
    /// Threshold growth per call of each wait on a monotonic cell ([`epoch::reduce`]).
    pub(crate) growth: epoch::Growth,
    /// Per-call credit of each monotonic signal's generic cell (`credit-balance`).
    pub(crate) horizon: Vec<(SignalId, Lin)>,
    /// Answers of the bit-vector queries posed so far.
    bv_cache: bvq::Cache,
    /// The many-writer rule used a credit chain (it rests on the reuse theorem).
    pub(crate) multi_chained: bool,
}

impl<'a> Ctx<'a> {
    fn new(p: &'a Protocol, deadline: Instant) -> Result<Ctx<'a>, String> {
        let (mut syms, (env, mut assumptions)) = tightened(p, declared_bounds(p))?;
        let world = syms.param(p.world);
        // A rank parameter (`param root: rank`) is a rank of the world: `0 <= root < P`.
        for (id, v) in collc_spec::id::enumerate(&p.vars) {
            if matches!(v.kind, VarKind::Param { domain: None }) {
                let r = syms.param(id);
                let top = world.sub(&r).and_then(|x| x.add(&Lin::k(-1)));
                for l in [Some(r), top].into_iter().flatten() {
                    if let crate::engine::sym::CondV::Sym(c) =
                        syms.formula(crate::engine::sym::Formula::Ge0(l))
                    {
                        assumptions.push(c);
                    }
                }
            }
        }
        let blocks = match &p.blocks {
            Some(b) => {
                let mut ev = exec::Evaluator {
                    p,
                    syms: &mut syms,
                    env: &env,
                    rank: None,
                };
                ev.expr(&b.count, p.span).map_err(stop)?
            }
            None => Lin::k(1),
        };
        let mut a = extract::pass(p, &mut syms, &env, &world, &blocks).map_err(|(m, _)| m)?;
        let mut b = extract::pass(p, &mut syms, &env, &world, &blocks).map_err(|(m, _)| m)?;
        let mut rotation = None;
        for pass in [&mut a, &mut b] {
            rotation = rotate::apply(p, &mut syms, pass, &world).ok_or("arithmetic overflow")?;
        }
        let growth = epoch::reduce(p, &mut syms, &mut a)?;
        epoch::reduce(p, &mut syms, &mut b)?;
        Ok(Ctx {
            p,
            run: Run {
                syms,
                config: Vec::new(),
                assumptions,
                events: Vec::new(),
                frames: Vec::new(),
                returns: Vec::new(),
                world: 0,
                blocks: 0,
            },
            smt: Smt::new(),
            a,
            b,
            world,
            blocks,
            env,
            deadline,
            stats: Proof {
                items: 0,
                literal: 0,
                z3: 0,
            },
            progress: None,
            named: Vec::new(),
            claims: HashMap::new(),
            keys: rank_key::Schedule::new(),
            answers: rank_key::Answers::new(),
            rotation,
            delta: HashMap::new(),
            phases: Vec::new(),
            phased: false,
            growth,
            horizon: Vec::new(),
            bv_cache: bvq::Cache::default(),
            multi_chained: false,
        })
    }

    fn obligation(&mut self, id: &str) -> Result<Proof, String> {
        self.stats = Proof {
            items: 0,
            literal: 0,
            z3: 0,
        };
        match id {
            "credit-balance" => self.credit_balance()?,
            "op-exclusivity" => self.op_exclusivity()?,
            "wait-reachable" | "deadlock" => {
                if self.progress.is_none() {
                    let r = self.progress().map(|_| self.stats.clone());
                    self.progress = Some(r);
                }
                return self
                    .progress
                    .clone()
                    .unwrap_or_else(|| Err("not attempted".into()));
            }
            "stale-credit" => self.stale_credit()?,
            "garbage-credit" => self.garbage_credit()?,
            "guard-symmetry" => self.guard_symmetry()?,
            _ => return Err("not an obligation of the parametric route".into()),
        }
        Ok(self.stats.clone())
    }

    /// Literal arithmetic first, then Z3 (unsat of the negation under `guard`); why not, in
    /// words ([`Ctx::decide`] keeps whether it was refuted).
    pub(crate) fn holds(&mut self, guard: &Guard, prop: Prop) -> Result<(), String> {
        self.decide(guard, prop).map_err(NotShown::text)
    }

    /// [`Ctx::holds`], with why not as data: refuted (Z3's counterexample) or open.
    pub(crate) fn decide(&mut self, guard: &Guard, prop: Prop) -> Result<(), NotShown> {
        self.stats.items += 1;
        let lit = match &prop {
            Prop::Ge0(l) => {
                let l2 = self.run.syms.assume(guard, l);
                self.run.syms.nonneg(&l2)
            }
            Prop::Eq0(l) => self.run.syms.assume(guard, l).is_zero(),
            Prop::Never(_) | Prop::Equiv(..) => false,
        };
        if lit {
            self.stats.literal += 1;
            return Ok(());
        }
        if Instant::now() >= self.deadline {
            return Err(NotShown::Open(CAP_HIT.into()));
        }
        self.stats.z3 += 1;
        let g = guard.clone();
        let extra = move |tr: &mut crate::engine::smt::Tr| vec![tr.guard(&g)];
        // Bit operations (or a `require` on bits): the bit-vector encoding first when the
        // query reads `^ & | << >>`, the integer one first otherwise; the other on unknown.
        let s = &self.run.syms;
        let none = Prop::Never(Vec::new());
        let has = |bitwise| {
            bvq::has_bits(s, &prop, guard, bitwise)
                || bvq::has_bits(s, &none, &self.run.assumptions, bitwise)
        };
        let order = match (has(true), has(false)) {
            (true, _) => [true, false],
            (false, true) => [false, true],
            _ => [false, false],
        };
        let mut answer = Answer::Unknown(Undecided::Form, "not attempted".into());
        for (k, bv) in order.into_iter().enumerate() {
            if k == 1 && (order[0] == order[1] || !matches!(answer, Answer::Unknown(..))) {
                break;
            }
            // A query over `^ & |` gets three times the resources in its bit-vector
            // encoding (the integer one, through `int2bv`, rarely closes what that one
            // cannot).
            let q = self.limit(if bv && k == 0 && order[1] != order[0] {
                3 * QUERY_RLIMIT
            } else {
                QUERY_RLIMIT
            });
            let a = if bv {
                let s = &self.run.syms;
                let c = &mut self.bv_cache;
                bvq::check(c, self.p, s, &self.run.assumptions, guard, &prop, q)
            } else {
                None
            };
            answer = match a {
                Some(a) => a,
                None => self.smt.check(self.p, &self.run, &[], &extra, &prop, q),
            };
        }
        match answer {
            Answer::Valid => Ok(()),
            Answer::Refuted(a) => {
                let w = a.params.get(&self.p.world).copied();
                self.named.extend(w);
                Err(NotShown::Refuted(match w {
                    Some(w) => format!("Z3 found a counterexample at P = {w}"),
                    None => "Z3 found a counterexample".into(),
                }))
            }
            Answer::Unknown(_, r) => Err(NotShown::Open(r)),
        }
    }
}

/// The declared bounds of the parameters, the world size and the call index; a rank
/// parameter is below the largest world size.
fn declared_bounds(p: &Protocol) -> HashMap<VarId, (i64, i64)> {
    let mut bounds: HashMap<VarId, (i64, i64)> = HashMap::new();
    for (id, v) in collc_spec::id::enumerate(&p.vars) {
        match v.kind {
            VarKind::Param {
                domain: Some((lo, hi)),
            } => {
                bounds.insert(id, (lo, hi));
            }
            VarKind::World { lo, hi } => {
                bounds.insert(id, (lo, hi));
            }
            _ => {}
        }
    }
    if let Some(c) = p.call {
        bounds.insert(c, crate::engine::call::call_bounds(p));
    }
    // A rank parameter is below the largest world size (and below P: an assumption).
    if let VarKind::World { hi, .. } = p.vars[p.world].kind {
        for (id, v) in collc_spec::id::enumerate(&p.vars) {
            if matches!(v.kind, VarKind::Param { domain: None }) {
                bounds.insert(id, (0, hi.saturating_sub(1)));
            }
        }
    }
    bounds
}

/// The symbolic values of `p` with `bounds` tightened from the single-parameter `require`s
/// (as the enumerated route does), its environment and its assumptions.
fn tightened(
    p: &Protocol,
    mut bounds: HashMap<VarId, (i64, i64)>,
) -> Result<(Syms, exec::Setup), String> {
    // Tighten single-parameter bounds from the `require`s (as the enumerated route does).
    let mut syms = Syms::with_bounds(bounds.clone());
    syms.bits = true;
    let mut setup = exec::setup(p, &[], &mut syms).map_err(stop)?;
    for _ in 0..2 {
        let Some((_, assumptions)) = &setup else {
            return Err("the `require`s exclude every parameter value".into());
        };
        let mut changed = false;
        for c in assumptions {
            for (v, lo, hi) in exec::tighten(&syms, *c) {
                if let Some(b) = bounds.get_mut(&v) {
                    let nb = (b.0.max(lo), b.1.min(hi));
                    if nb != *b {
                        *b = nb;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
        syms = Syms::with_bounds(bounds.clone());
        syms.bits = true;
        setup = exec::setup(p, &[], &mut syms).map_err(stop)?;
    }
    let Some((env, assumptions)) = setup else {
        return Err("the `require`s exclude every parameter value".into());
    };
    Ok((syms, (env, assumptions)))
}

/// Why a question of the route was not shown.
#[derive(Debug, Clone)]
pub(crate) enum NotShown {
    /// Z3 found a counterexample (the words name it).
    Refuted(String),
    /// Undecided (Z3's unknown, the wall-clock cap) or a form not covered.
    Open(String),
}

impl NotShown {
    /// The words.
    pub(crate) fn text(self) -> String {
        match self {
            NotShown::Refuted(s) | NotShown::Open(s) => s,
        }
    }
}

/// Z3's deterministic resource limit of one query of this route ([`crate::engine::smt::QUERY_RLIMIT`]).
pub const QUERY_RLIMIT: u32 = crate::engine::smt::QUERY_RLIMIT;

/// Why an obligation of this route is open when its wall-clock safety cap was hit.
pub const CAP_HIT: &str = "the wall-clock cap of the parametric route (--timeout-ms) was hit \
     (a safety cap: the verdict may depend on the machine's load)";

impl Ctx<'_> {
    /// The limits of one query: `rlimit` resource units within the route's wall-clock
    /// cap.
    pub(crate) fn limit(&self, rlimit: u32) -> crate::engine::smt::Limit {
        crate::engine::smt::Limit {
            rlimit,
            cap: self.deadline,
        }
    }
}

fn stop(s: exec::Stop) -> String {
    match s {
        exec::Stop::Unsupported(m, _) | exec::Stop::Need(_, m, _) | exec::Stop::Iter(_, m, _) => m,
    }
}
