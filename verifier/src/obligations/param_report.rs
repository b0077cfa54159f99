//! What the parametric route changes in a [`Report`]: the scope of each symbolic
//! obligation says whether it was proved for the whole declared world-size domain
//! with `P` symbolic or by enumeration (and why not symbolically), and `deadlock`
//! becomes `proved` when the ranking argument closes (a bounded counterexample
//! still wins: it is a violation).

use crate::engine::param::Outcome;
use crate::report::evidence::Evidence;
use crate::report::{Report, Status, WorldRange};

/// The symbolic obligations (the first six of the report).
pub const SYMBOLIC: [&str; 6] = crate::report::OBLIGATIONS;

fn proved_scope(out: &Outcome, id: &str) -> Option<String> {
    let pr = out.proof(id)?;
    Some(format!(
        "{}, P symbolic (ranks, blocks and loop variables symbolic; {} checks: {} by literal arithmetic, {} by Z3)",
        out.domain(),
        pr.items,
        pr.literal,
        pr.z3
    ))
}

/// Rewrites the scopes of the symbolic obligations (after the enumerated route).
pub fn apply_symbolic(out: &Outcome, report: &mut Report) {
    let declared = WorldRange {
        lo: out.world.0,
        hi: out.world.1,
    };
    for ob in report.obligations.iter_mut() {
        if !SYMBOLIC.contains(&ob.id.as_str()) {
            continue;
        }
        match (ob.status, proved_scope(out, &ob.id)) {
            (Status::Proved | Status::Checked, Some(s)) => {
                // Checked: enumeration stopped at its cap; the symbolic proof covers the
                // whole domain, cross-checked by enumeration up to the cap.
                // The enumeration's counts of checks give way to this route's.
                let base = crate::obligations::check::what(&ob.id);
                let pr = out
                    .proof(&ob.id)
                    .map_or((0, 0, 0), |p| (p.items, p.literal, p.z3));
                ob.claim = format!(
                    "{base} ({} checks: {} by literal arithmetic, {} by Z3)",
                    pr.0, pr.1, pr.2
                );
                let enumerated = ob.scope.take().unwrap_or_default();
                ob.scope = Some(format!("{s}; cross-checked by enumeration ({enumerated})"));
                ob.status = Status::Proved;
                ob.world = Some(declared);
                ob.evidence.add(&Evidence::symbolic(declared));
            }
            (Status::Unknown, Some(s)) => {
                // The enumerated route could not decide (a form it does not cover, or a
                // domain beyond its enumeration); the symbolic proof covers the domain.
                let why = ob.reason.take().unwrap_or_default();
                ob.status = Status::Proved;
                ob.claim = crate::obligations::check::what(&ob.id).to_string();
                ob.scope = Some(format!(
                    "{s}; the enumerated route did not decide it: {why}"
                ));
                ob.findings.clear();
                ob.world = Some(declared);
                ob.evidence.add(&Evidence::symbolic(declared));
            }
            (Status::Proved, None) => {
                // The summary says `by enumeration over ...` from the evidence.
                let enumerated = ob.scope.take().unwrap_or_default();
                let why = out.open(&ob.id).unwrap_or("not attempted");
                ob.scope = Some(format!(
                    "by enumeration: {enumerated}; not proved with P symbolic: {why}"
                ));
            }
            (Status::Checked, None) => {
                let enumerated = ob.scope.take().unwrap_or_default();
                let why = out.open(&ob.id).unwrap_or("not attempted");
                ob.scope = Some(format!("{enumerated}; not proved with P symbolic: {why}"));
            }
            _ => {}
        }
    }
}

/// `value-signal` on a protocol without `as value` signals holds vacuously for every
/// world size: proved for the declared domain, not only up to the enumeration cap.
pub fn apply_vacuous_value_signal(p: &collc_spec::ir::Protocol, report: &mut Report) {
    let none = p
        .signals
        .iter()
        .all(|s| s.kind != collc_spec::ir::SignalKind::Value);
    if !none {
        return;
    }
    let (lo, hi) = crate::engine::exec::declared_world(p);
    for ob in report.obligations.iter_mut() {
        // Vacuous: true whatever the enumeration reached (even if its budget ran out).
        if ob.id == crate::obligations::value_signal::ID
            && matches!(
                ob.status,
                Status::Proved | Status::Checked | Status::Unknown
            )
        {
            ob.reason = None;
            ob.findings.clear();
            ob.status = Status::Proved;
            ob.world = Some(WorldRange { lo, hi });
            ob.evidence.add(&Evidence::vacuous(WorldRange { lo, hi }));
            ob.claim = "no value signals (`as value`), nothing to order".into();
            ob.scope = Some(format!(
                "{}: the protocol declares no `as value` signal",
                crate::engine::param::world_phrase(lo, hi)
            ));
        }
    }
}

/// `deadlock`: proved for the whole domain when the ranking argument closes and no
/// bounded run found a violation.
pub fn apply_deadlock(out: &Outcome, report: &mut Report) {
    let Some(pr) = out.proof("deadlock") else {
        return;
    };
    for ob in report.obligations.iter_mut() {
        if ob.id != "deadlock" || ob.status == Status::Violated {
            continue;
        }
        let bounded = match ob.status {
            Status::Checked => ob.scope.clone().unwrap_or_default(),
            Status::Skipped => "skipped (--no-bounded)".to_string(),
            _ => ob
                .reason
                .clone()
                .map_or("undecided".to_string(), |r| format!("undecided ({r})")),
        };
        ob.status = Status::Proved;
        ob.reason = None;
        ob.findings.clear();
        let declared = WorldRange {
            lo: out.world.0,
            hi: out.world.1,
        };
        ob.world = Some(declared);
        ob.evidence.add(&Evidence::symbolic(declared));
        ob.claim = "no reachable state where no process can move: every wait is reached by credits (on a value signal: the Set of the awaited value) sent at earlier program points".into();
        ob.scope = Some(format!(
            "{}, P symbolic: waits ranked by program point ({} checks: {} by literal arithmetic, {} by Z3), with credit-balance and op-exclusivity (and value-signal for waits on value signals); bounded run: {bounded}",
            out.domain(),
            pr.items,
            pr.literal,
            pr.z3
        ));
    }
}
