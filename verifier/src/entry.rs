//! The verifier's one entry point: a protocol and [`Options`] in, the complete
//! [`Report`] out — the symbolic obligations (`check.rs`), then the bounded ones
//! (`bounded.rs`, or `skipped`), with line numbers when the source is given.
//! Every consumer (`collc verify`, the gate of `collc emit`/`collc run`, benches,
//! tests) calls [`verify`]; what may be produced from the report is [`crate::report::gate`].

use crate::obligations::bounded::{self, BoundedOptions};
use crate::obligations::check;
use crate::planning::{self, TABLE};
use crate::report::Report;
use collc_grammar::Source;
use std::time::{Duration, Instant};

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
                timeout_ms: TABLE.timeout_ms,
            },
            bounded: Some(BoundedOptions::cli()),
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
/// report. A protocol with an `op` parameter is verified once, at its strictest listed
/// operator ([`Protocol::for_verification`]).
pub fn verify(p: &collc_spec::Validated, opts: &Options) -> Report {
    let strict = p.for_verification();
    let p = &strict;
    let info = p.info();
    let param = crate::engine::param::prove(p, Duration::from_millis(opts.symbolic.timeout_ms));
    let mut report = check::verify(p, &opts.symbolic);
    crate::obligations::param_report::apply_symbolic(&param, &mut report);
    crate::obligations::param_report::apply_vacuous_value_signal(p, &mut report);
    let value = crate::engine::param::value::prove(
        p,
        &param,
        Duration::from_millis(opts.symbolic.timeout_ms),
    );
    crate::obligations::param_scope::apply_value(&value, &mut report);
    crate::obligations::past::check_past(p, info, &opts.symbolic, &mut report);
    report.stats.param_millis = param.millis;
    report
        .obligations
        .extend(crate::obligations::epoch::horizon(
            p,
            param.horizon.as_ref(),
        ));
    report.obligations.extend(crate::obligations::reuse::check(
        p,
        &param,
        Duration::from_millis(opts.symbolic.timeout_ms),
    ));
    report
        .obligations
        .push(crate::obligations::range_obligation::check(p));
    match &opts.bounded {
        None => report.obligations.extend(bounded::skipped()),
        Some(b) => {
            let t0 = Instant::now();
            let mut b = b.clone();
            if let Some(src) = opts.source {
                b.file = src.name.clone();
            }
            // The pair-order search's answer only chooses where to look; what the bounded
            // search explores besides its ladder is the planner's.
            let unordered = crate::engine::pair_order::first_unordered(
                p,
                info,
                Instant::now() + Duration::from_millis(opts.symbolic.timeout_ms),
            );
            let named = planning::Named {
                refuted: param.named_worlds.clone(),
                warned: report.warned_values(&p.vars[p.world].name),
                unordered,
            };
            let (worlds, probes) = planning::targets(p, info, named);
            for w in worlds {
                if !b.target_worlds.contains(&w) {
                    b.target_worlds.push(w);
                }
            }
            b.probes.extend(probes);
            bounded::add(&mut report, bounded::check(p, &b));
            report.stats.bounded_millis = t0.elapsed().as_millis() as u64;
        }
    }
    crate::obligations::param_report::apply_deadlock(&param, &mut report);
    crate::obligations::param_scope::finish(&mut report);
    if let Some(src) = opts.source {
        report.locate(src);
        crate::fix::attach(&mut report, src);
    }
    report
}
