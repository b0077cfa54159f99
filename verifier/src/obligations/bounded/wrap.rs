//! The bounded obligations in the simulator's wrap-around mode (`collc sim --wrap`,
//! `sim/README.md`): for a protocol with a monotonic signal, every small assignment runs
//! the last calls the protocol may make before a monotonic cell leaves int32 (or, when it
//! may run the call that carries a cell past `INT32_MAX`, the calls around that one),
//! with int32 arithmetic. Each bounded line states the run (its window, P, calls, states,
//! complete or not), as it states the relaxed-memory run.
//!
//! Where a failure goes: within the horizon (the window ends at the last declared call)
//! cells never wrap, so a failure there is the obligation its code names (`stale-pass`
//! for a wait passing on an earlier call's credits, `deadlock`, `semantics`, ...); in a
//! window that crosses `INT32_MAX` a failure the obligation's own runs did not find is
//! the overflow's: an `overflow-horizon` finding, whose value is the horizon the fix
//! declares. A failure the first calls show too stays with its obligation.

use super::{
    cut_short, explore, extra_run_finding, sb_params, violated_by_extra_run, BoundedOptions,
    Explored, Mode,
};
use crate::report::scope::{self, windows, Covered, WRAP_RUN as RUN};
use crate::report::{ObligationResult, Status};
use collc_sim::Memory;
use collc_spec::ir::Protocol;
use std::time::Instant;

/// The symbolic obligation a failure past the horizon belongs to.
pub(super) const HORIZON: &str = crate::report::Obligation::OverflowHorizon.id();

/// The wrap-around run of `p` at `opts.wrap_bounds` within its share of the budget
/// (`BoundedOptions::wrapped`), or
/// `None` when `p` has no monotonic signal.
pub(super) fn explore_wrapped(
    p: &collc_spec::Validated,
    opts: &BoundedOptions,
) -> Option<Explored> {
    if !p.signals.iter().any(|s| s.monotonic) {
        return None;
    }
    let wopts = opts.wrapped();
    let mode = Mode {
        memory: Memory::Sc,
        wrap: true,
    };
    Some(explore(p, &wopts, mode, Instant::now() + wopts.budget))
}

/// Folds the wrap-around run `wx` into the bounded results `out` (module docs): each
/// scope states the run; a failure within the horizon violates its obligation (unless an
/// earlier run already did); failures past it are pushed as one `overflow-horizon` result.
pub(super) fn fold(p: &Protocol, out: &mut Vec<ObligationResult>, wx: &Explored, file: &str) {
    let scope = wx.scope(scope::Mode::Wrap(wx.wraps.clone()));
    let mut past = Vec::new();
    let mut first_at = None;
    for r in out.iter_mut() {
        r.scope = Some(r.scope.take().unwrap_or_default().then(scope.clone()));
        if r.status == Status::Violated {
            continue;
        }
        cut_short(r, scope::Extra::Wrap, wx);
        if let Some(c) = wx.cex.get(&r.id) {
            match &c.wrap {
                Some(w) if w.crosses => {
                    let mut f = extra_run_finding(p, c, file, RUN);
                    f.value = w.horizon;
                    f.help = w
                        .horizon
                        .map(|h| format!("declare at most `calls <= {h};` (the overflow horizon)"));
                    f.notes.push(format!(
                        "past the overflow horizon: {}",
                        windows(std::slice::from_ref(w))
                    ));
                    first_at.get_or_insert_with(|| sb_params(c));
                    past.push(f);
                    if r.status == Status::Checked {
                        let s = r.scope.take().unwrap_or_default();
                        r.scope = Some(s.with(Covered::PastHorizon));
                    }
                }
                _ => {
                    violated_by_extra_run(p, r, c, file, RUN);
                }
            }
        }
    }
    let Some(at) = first_at else {
        return;
    };
    let claim = format!("{RUN}: counterexample at {at} past the overflow horizon");
    out.push(ObligationResult {
        id: HORIZON.into(),
        code: format!("verify::{HORIZON}"),
        status: Status::Violated,
        scope: Some(scope),
        world: None,
        reason: None,
        claim,
        evidence: crate::report::evidence::Evidence::of_findings(&past),
        findings: past,
    });
}

/// Folds the wrap-around run's `overflow-horizon` result `r` into the symbolic one `o`:
/// violated, with the symbolic finding (if any) first, then the run's.
pub(super) fn fold_horizon(o: &mut ObligationResult, r: ObligationResult) {
    if o.status != Status::Violated {
        o.status = Status::Violated;
        o.claim = r.claim;
        o.reason = None;
        o.world = None;
        o.findings.clear();
    }
    o.scope = Some(match o.scope.take() {
        Some(s) => s.then(r.scope.unwrap_or_default()),
        None => r.scope.unwrap_or_default(),
    });
    o.findings.extend(r.findings);
    o.evidence.add(&r.evidence);
}
