//! The verifier's one entry point: a protocol and [`Options`] in, the complete
//! [`Report`] out — the symbolic obligations (`check.rs`), then the bounded ones
//! (`bounded.rs`, or `skipped`), with line numbers when the source is given.
//! Every consumer (`collc verify`, the gate of `collc emit`/`collc run`, benches,
//! tests) calls [`verify`]; what may be produced from the report is [`crate::gate`].

use crate::bounded::{self, BoundedOptions};
use crate::check;
use crate::report::Report;
use collc_grammar::Source;
use collc_spec::ir::Protocol;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Default wall-clock safety cap (`--timeout-ms`) of each symbolic obligation of the
/// enumerated route and of the parametric route as a whole. Each Z3 query is limited by
/// Z3's deterministic resource limit ([`crate::smt::QUERY_RLIMIT`]), not by the clock, so
/// the verdict does not depend on the machine's load unless this cap is hit — and then
/// the report says so (a `timeout` reason naming `--timeout-ms`).
pub const TIMEOUT_MS: u64 = 60_000;
/// Default wall-clock budget of the bounded obligations per file (`--bounded-budget-ms`).
pub const BOUNDED_BUDGET_MS: u64 = 8_000;
/// Default distinct states per parameter assignment (`--bounded-max-states`).
pub const BOUNDED_MAX_STATES: u64 = 200_000;
/// World sizes whose smallest bounds (1 tile, 2 calls) the bounded search explores
/// whatever the wall clock says, limited by [`BOUNDED_MAX_STATES`] per assignment
/// (`BoundedOptions::untimed_ranks`): P=2..8 reached whatever the machine's load.
pub const BOUNDED_UNTIMED_RANKS: i64 = 8;

/// What to verify and within which budgets.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// The symbolic obligations' options.
    pub symbolic: check::Options,
    /// The bounded obligations' options; `None` skips them (`--no-bounded`), which the
    /// gate counts as undecided.
    pub bounded: Option<BoundedOptions>,
    /// The protocol's source: fills the line numbers of findings and contributions and
    /// names the file in the bounded findings' replay commands.
    pub source: Option<&'a Source>,
}

impl Default for Options<'_> {
    /// What `collc verify` does without flags (and what the gate of `emit`/`run` runs).
    fn default() -> Self {
        Options {
            symbolic: check::Options {
                timeout_ms: TIMEOUT_MS,
            },
            bounded: Some(BoundedOptions {
                budget: Duration::from_millis(BOUNDED_BUDGET_MS),
                max_states: BOUNDED_MAX_STATES,
                untimed_ranks: BOUNDED_UNTIMED_RANKS,
                ..BoundedOptions::default()
            }),
            source: None,
        }
    }
}

impl<'a> Options<'a> {
    /// The default options with the source given.
    pub fn for_source(source: &'a Source) -> Self {
        Options {
            source: Some(source),
            ..Options::default()
        }
    }
    /// The symbolic obligations only (the bounded ones `skipped`): what tests of the
    /// symbolic half use.
    pub fn symbolic_only() -> Self {
        Options {
            bounded: None,
            ..Options::default()
        }
    }
}

/// Verifies `p`: every obligation — symbolic, the index ranges, then bounded — as one
/// report.
pub fn verify(p: &Protocol, opts: &Options) -> Report {
    let param = crate::param::prove(p, Duration::from_millis(opts.symbolic.timeout_ms));
    let mut report = check::verify(p, &opts.symbolic);
    crate::param::report::apply_symbolic(&param, &mut report);
    crate::param::report::apply_vacuous_value_signal(p, &mut report);
    let value =
        crate::param::value::prove(p, &param, Duration::from_millis(opts.symbolic.timeout_ms));
    crate::param::scope::apply_value(&value, &mut report);
    crate::critical::check_past(p, &opts.symbolic, &mut report);
    report.stats.param_millis = param.millis;
    report
        .obligations
        .extend(crate::epoch::horizon(p, param.horizon.as_ref()));
    report.obligations.extend(crate::reuse::check(
        p,
        &param,
        Duration::from_millis(opts.symbolic.timeout_ms),
    ));
    report
        .obligations
        .push(crate::range_obligation::check(p, opts.source));
    match &opts.bounded {
        None => report.obligations.extend(bounded::skipped()),
        Some(b) => {
            let t0 = Instant::now();
            let mut b = b.clone();
            if let Some(src) = opts.source {
                b.file = src.name.clone();
            }
            // Where Z3 refuted a question of the parametric route (a world size it names),
            // the simulator looks too (the targeted runs ignore sizes already explored).
            // So does it where a warning names one: a warning refutes a question the
            // verdict does not count (credits nobody waits for), and what it hides — a
            // rank whose notify orders nothing — may break the collective only at that
            // size, past the ladder's world sizes.
            // And where no notify -> wait chain can order a pair of ranks the collective's
            // meaning orders (`pair_order`): the run there shows the broken order; when the
            // search names parameter values besides the world size, the run has them too.
            let unordered = crate::pair_order::first_unordered(
                p,
                Instant::now() + Duration::from_millis(opts.symbolic.timeout_ms),
            );
            let world = &p.vars[p.world].name;
            let mut unordered_world = Vec::new();
            if let Some(found) = unordered {
                match found.get(world) {
                    Some(w) if found.len() == 1 => unordered_world.push(*w),
                    _ => b.probes.push(bounded::Probe {
                        fixed: found,
                        tiles: 1,
                        required: true,
                    }),
                }
            }
            // And at the sizes past the enumeration where the protocol's literals can
            // change what ranks do (`critical`), as far as the simulator runs: a data bug
            // there (`for d in 0..min(P, 20)`) breaks no credit or order, only the result.
            let past: Vec<i64> = crate::critical::past_enumeration(p)
                .into_iter()
                .filter(|w| *w <= collc_sim::code::MAX_WORLD)
                .collect();
            for w in param
                .named_worlds
                .iter()
                .chain(&warned_worlds(p, &report))
                .chain(&unordered_world)
                .chain(&past)
            {
                if !b.target_worlds.contains(w) {
                    b.target_worlds.push(*w);
                }
            }
            // Values past the grid that the protocol's literals name (`probe`).
            b.probes.extend(literal_probes(p));
            bounded::add(&mut report, bounded::check(p, &b));
            report.stats.bounded_millis = t0.elapsed().as_millis() as u64;
        }
    }
    crate::param::report::apply_deadlock(&param, &mut report);
    crate::param::scope::finish(&mut report);
    if let Some(src) = opts.source {
        report.locate(src);
        crate::fix::attach(&mut report, src);
    }
    report
}

/// The assignments past the bounded grid that the protocol's literals name (`probe.rs`):
/// world sizes just past a literal in 9..=16, then at the smallest world size of the
/// ladder (P = 2 when the domain has it) tile counts just past a literal in 3..=8, then
/// each integer parameter at the values at and past the literals it is compared with.
fn literal_probes(p: &Protocol) -> Vec<bounded::Probe> {
    let world = p.vars[p.world].name.clone();
    let (lo, hi) = crate::exec::declared_world(p);
    let small = lo.max(2);
    let mut out: Vec<bounded::Probe> = crate::probe::worlds(p)
        .into_iter()
        .map(|w| bounded::Probe {
            fixed: BTreeMap::from([(world.clone(), w)]),
            tiles: 1,
            required: false,
        })
        .collect();
    if small > hi {
        return out;
    }
    out.extend(
        crate::probe::tile_counts(p)
            .into_iter()
            .map(|t| bounded::Probe {
                fixed: BTreeMap::from([(world.clone(), small)]),
                tiles: t,
                required: false,
            }),
    );
    out.extend(
        crate::probe::param_values(p)
            .into_iter()
            .map(|(v, x)| bounded::Probe {
                fixed: BTreeMap::from([(world.clone(), small), (p.var_name(v).to_string(), x)]),
                tiles: 1,
                required: false,
            }),
    );
    out
}

/// The world sizes named by the counterexamples of `report`'s warnings (ascending, once
/// each).
fn warned_worlds(p: &Protocol, report: &Report) -> Vec<i64> {
    let world = &p.vars[p.world].name;
    let mut out: Vec<i64> = report
        .obligations
        .iter()
        .filter(|o| o.status == crate::report::Status::Warning)
        .flat_map(|o| &o.findings)
        .flat_map(|f| &f.params)
        .filter(|v| &v.name == world)
        .map(|v| v.value)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
