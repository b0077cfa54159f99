//! The enumerated route of the six credit obligations and `value-signal`: configuration by
//! configuration over the events of [`crate::engine::exec::run`], each obligation decided
//! by its own module's entry (`credit_balance`, `op_exclusivity`, `wait_reachable`,
//! `stale_credit`, `garbage_credit`, `guard_symmetry`, `value_signal`) on the facts the
//! configuration's obligations share ([`Facts`]), its evidence accumulated over the
//! configurations ([`Acc`]) and turned into the report's entry once the sweep ends.

use crate::engine::exec::{self, Plan, Run};
use crate::engine::smt::Smt;
use crate::engine::sweep::{self, Visit};
use crate::obligations::context::{Acc, Ctx, Facts};
use crate::report::evidence::Evidence;
use crate::report::scope::{Cap, Covered, Reach, Scope};
use crate::report::*;
use collc_spec::ir::*;
use std::time::{Duration, Instant};

/// Verification options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Wall-clock budget of each obligation, in milliseconds.
    pub timeout_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout_ms: crate::planning::TABLE.timeout_ms,
        }
    }
}

/// One obligation's entry: decides it on one configuration, into its evidence.
type Entry = fn(&mut Ctx, &mut Run, &mut Acc);

/// The obligations of this route, in report order, with their entries.
const ROUTE: [(Obligation, Entry); 7] = [
    (
        crate::obligations::credit_balance::OBLIGATION,
        crate::obligations::credit_balance::check,
    ),
    (
        crate::obligations::op_exclusivity::OBLIGATION,
        crate::obligations::op_exclusivity::check,
    ),
    (
        crate::obligations::wait_reachable::OBLIGATION,
        crate::obligations::wait_reachable::check,
    ),
    (
        crate::obligations::stale_credit::OBLIGATION,
        crate::obligations::stale_credit::check,
    ),
    (
        crate::obligations::garbage_credit::OBLIGATION,
        crate::obligations::garbage_credit::check,
    ),
    (
        crate::obligations::guard_symmetry::OBLIGATION,
        crate::obligations::guard_symmetry::check,
    ),
    (
        crate::obligations::value_signal::OBLIGATION,
        crate::obligations::value_signal::check,
    ),
];

/// The `verify` entry point: every obligation, with the statuses of [`Status`].
pub fn verify(p: &collc_spec::Validated, opts: &Options) -> Report {
    verify_at(p, opts, None)
}

/// [`verify`] with the world size over `worlds` (`None`: the enumerated domain). Given
/// worlds, the `fence` obligation is left out (it looks at sizes of its own).
pub(crate) fn verify_at(
    p: &collc_spec::Validated,
    opts: &Options,
    worlds: Option<&[i64]>,
) -> Report {
    let start = Instant::now();
    let deadline = start + Duration::from_millis(opts.timeout_ms);
    let (accs, plan, mut stats) = sweep_route(p, worlds, deadline);
    let declared = exec::declared_world(p);
    let finish = Finish::new(p, Scope::of(Covered::Enumeration(plan.coverage(p))));
    let mut obligations: Vec<ObligationResult> =
        accs.into_iter().map(|a| finish.result(a)).collect();
    if worlds.is_none() {
        obligations.push(crate::obligations::fence::check(
            p,
            &plan,
            Instant::now() + Duration::from_millis(opts.timeout_ms),
            "FILE",
        ));
    }
    stats.millis = start.elapsed().as_millis() as u64;
    Report {
        schema: SCHEMA,
        protocol: p.name.clone(),
        method: crate::report::method::Method::of(plan.scope(p)),
        world: WorldRange {
            lo: declared.0,
            hi: declared.1,
        },
        obligations,
        stats,
    }
}

/// Every configuration of the enumeration (restarted when the sweep restarts), each
/// open obligation's entry on it, until each is violated or undecided or the configurations
/// end: the evidence of each, the plan, and the statistics.
fn sweep_route(p: &Protocol, worlds: Option<&[i64]>, deadline: Instant) -> (Vec<Acc>, Plan, Stats) {
    let fresh = || -> Vec<Acc> { ROUTE.iter().map(|(o, _)| Acc::new(*o, deadline)).collect() };
    let mut accs = fresh();
    let mut stats = Stats::default();
    let mut check_time = Duration::ZERO;
    let mut smt = Smt::new();
    let sweep = sweep::each_run(p, worlds, &mut |visit| match visit {
        Visit::Restart => {
            accs = fresh();
            stats = Stats::default();
            true
        }
        Visit::Run(plan, run) => {
            if Instant::now() >= deadline {
                for a in accs.iter_mut().filter(|a| !a.done()) {
                    a.timed_out();
                }
                return false;
            }
            let t1 = Instant::now();
            stats.configurations += 1;
            stats.events += run.events.len() as u64;
            check_run(p, plan, &mut smt, run, &mut accs);
            check_time += t1.elapsed();
            !accs.iter().all(|a| a.done() || a.unknown.is_some())
        }
    });
    if let Some(f) = &sweep.failure {
        for a in accs.iter_mut().filter(|a| !a.done()) {
            a.unknown(f.message(), f.span());
        }
    }
    if exec::enumerated_world(p).is_none() {
        for a in accs.iter_mut() {
            if !a.done() && a.unknown.is_none() {
                a.unknown(enumeration_scope(p), None);
            }
        }
    }
    stats.exec_millis = sweep.exec_time.as_millis() as u64;
    stats.check_millis = check_time.as_millis() as u64;
    stats.z3_calls = smt.calls as u64;
    stats.literal = accs.iter().map(|a| a.literal).sum();
    (accs, sweep.plan, stats)
}

/// Every obligation of the route on one configuration: the shared facts once, then each
/// open obligation's entry (`garbage-credit` also after its finding: it records every
/// configuration's waste).
fn check_run(p: &Protocol, plan: &Plan, smt: &mut Smt, run: &mut Run, accs: &mut [Acc]) {
    let facts = match Facts::of(p, run) {
        Ok(f) => f,
        Err((why, span)) => {
            for a in accs.iter_mut() {
                a.unknown(format!("unsupported form: {why}"), Some(span));
            }
            return;
        }
    };
    let mut ctx = Ctx {
        p,
        plan,
        smt,
        facts: &facts,
    };
    for ((o, entry), acc) in ROUTE.iter().zip(accs.iter_mut()) {
        let open = if *o == Obligation::GarbageCredit {
            !acc.timed_out()
        } else {
            acc.open()
        };
        if open {
            entry(&mut ctx, run, acc);
        }
    }
}

/// What turns an obligation's evidence into its report entry: the scope of the plan, and
/// what the enumeration covers against the declared domain.
struct Finish<'a> {
    p: &'a Protocol,
    scope: Scope,
    checked_scope: Scope,
    covered: Option<WorldRange>,
    /// Enumeration decides P up to TABLE.enum_world_max only: past that, nothing is proved.
    capped: bool,
}

impl<'a> Finish<'a> {
    fn new(p: &'a Protocol, scope: Scope) -> Self {
        let covered = exec::enumerated_world(p).map(|(lo, hi)| WorldRange { lo, hi });
        let declared = exec::declared_world(p);
        Finish {
            p,
            checked_scope: Scope::of(Covered::Capped(cap(p))).then(scope.clone()),
            scope,
            covered,
            capped: covered.is_some_and(|w| w.hi < declared.1),
        }
    }

    fn result(&self, a: Acc) -> ObligationResult {
        let id = a.obligation.id();
        let why = a.unknown.as_ref().map(|u| u.0);
        let (status, mut findings, reason) = if let Some(f) = a.violation {
            let st = if a.obligation == Obligation::GarbageCredit {
                Status::Warning
            } else {
                Status::Violated
            };
            let mut v = vec![f];
            v.extend(a.extra);
            (st, v, None)
        } else if let Some((_, r, span)) = a.unknown {
            let mut f = Finding::new(r.clone());
            f.primary = span;
            (Status::Unknown, vec![f], Some(r))
        } else if self.capped {
            (Status::Checked, Vec::new(), None)
        } else {
            (Status::Proved, Vec::new(), None)
        };
        if a.obligation == Obligation::GarbageCredit && status == Status::Warning {
            if let Some(f) = findings.first_mut() {
                f.formula = Some(format!(
                    "wasted remote atomics per call: {}",
                    crate::obligations::garbage_credit::formula(self.p, &a.points)
                ));
            }
        }
        ObligationResult {
            id: id.to_string(),
            code: format!("verify::{id}"),
            status,
            scope: match status {
                Status::Proved => Some(self.scope.clone()),
                Status::Checked => Some(self.checked_scope.clone()),
                _ => None,
            },
            world: self.covered.filter(|_| status != Status::Unknown),
            evidence: match (status, why) {
                (Status::Unknown, Some(why)) => Evidence::undecided(why),
                _ => Evidence::of_enumeration(status, self.covered, &findings),
            },
            reason,
            claim: claim(id, status, a.items, a.literal, a.z3),
            findings,
        }
    }
}

/// What an enumeration of P covers against the declared domain:
/// `checked for P in 1..=16 by enumeration; the declared domain goes to 65536`.
pub fn enumeration_scope(p: &Protocol) -> String {
    Scope::of(Covered::Capped(cap(p))).to_string()
}

/// How far the enumeration of P goes against the declared domain, as a scope's part.
pub fn cap(p: &Protocol) -> Cap {
    let (lo, hi) = exec::declared_world(p);
    Cap {
        world: p.var_name(p.world).to_string(),
        enumerated: exec::enumerated_world(p),
        lo,
        reach: if hi >= MAX_WORLD {
            Reach::Unbounded(exec::world_text(p))
        } else {
            Reach::To(hi)
        },
        cap: crate::planning::TABLE.enum_world_max,
    }
}

/// What the enumerated route claims: the obligation's statement with its counts of
/// checks, or that it does not hold, or that it is undecided.
fn claim(id: &str, st: Status, items: u64, lit: u64, z3: u64) -> String {
    let what = what(id);
    match st {
        Status::Proved | Status::Checked => {
            format!("{what} ({items} checks: {lit} by literal arithmetic, {z3} by Z3)")
        }
        Status::Violated | Status::Warning => format!("not: {what}"),
        _ => format!("undecided: {what}"),
    }
}

/// What an enumerating obligation (the six credit obligations, `value-signal`) states.
pub fn what(id: &str) -> &'static str {
    match id {
        "credit-balance" => "every written credit cell nets exactly 0 per call",
        "op-exclusivity" => "no cell is written with both Set and AtomicAdd",
        "wait-reachable" => "every wait's threshold is reached by its cell's credits",
        "stale-credit" => "every wait on a counter is `>=`/`>` and needs a credit of its own round (in a credit window, of the writer's round K behind); many-writer counters are reset after a wait for all their credits, and no writer's next-call credit can reach that wait",
        "garbage-credit" => "every credited cell is read by some wait",
        "value-signal" => "every value cell is Set once per call (or by Sets a notify/wait chain orders) and read only after the call's last Set, before the next call's",
        _ => "early returns depend only on rank-uniform values",
    }
}
