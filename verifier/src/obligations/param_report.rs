//! What the parametric route changes in a [`Report`]: the scope of each symbolic
//! obligation says whether it was proved for the whole declared world-size domain
//! with `P` symbolic or by enumeration (and why not symbolically), and `deadlock`
//! becomes `proved` when the ranking argument closes (a bounded counterexample
//! still wins: it is a violation).

use crate::engine::param::Outcome;
use crate::report::evidence::Evidence;
use crate::report::scope::{checks, BoundedRun, Covered, Lead, Scope, Symbolic};
use crate::report::{Report, Status, WorldRange};

/// The symbolic obligations (the first six of the report).
pub const SYMBOLIC: [&str; 6] = crate::report::OBLIGATIONS;

/// The part a proof with P symbolic of `id` covered, if the route proved it.
fn proved_scope(out: &Outcome, id: &str) -> Option<Covered> {
    let pr = out.proof(id)?;
    Some(Covered::Symbolic {
        world: WorldRange {
            lo: out.world.0,
            hi: out.world.1,
        },
        how: Symbolic::Variables(pr.checks()),
    })
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
                let counts = out.proof(&ob.id).map(|p| p.checks()).unwrap_or_default();
                ob.claim = format!("{base} ({})", checks(&counts));
                let enumerated = ob.scope.take().unwrap_or_default();
                ob.scope = Some(Scope::of(s).with(Covered::CrossChecked(Box::new(enumerated))));
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
                ob.scope = Some(Scope::of(s).with(Covered::EnumerationUndecided(why)));
                ob.findings.clear();
                ob.world = Some(declared);
                ob.evidence.add(&Evidence::symbolic(declared));
            }
            (Status::Proved, None) => {
                // The summary says `by enumeration over ...` from the evidence.
                let enumerated = ob.scope.take().unwrap_or_default();
                let why = out.open(&ob.id).unwrap_or("not attempted");
                ob.scope = Some(
                    enumerated
                        .led(Lead::ByEnumeration)
                        .with(Covered::NotSymbolic(why.to_string())),
                );
            }
            (Status::Checked, None) => {
                let enumerated = ob.scope.take().unwrap_or_default();
                let why = out.open(&ob.id).unwrap_or("not attempted");
                ob.scope = Some(enumerated.with(Covered::NotSymbolic(why.to_string())));
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
            ob.scope = Some(Scope::of(Covered::NoValueSignals {
                world: WorldRange { lo, hi },
            }));
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
            Status::Checked => BoundedRun::Checked(ob.scope.clone().unwrap_or_default()),
            Status::Skipped => BoundedRun::Skipped,
            _ => BoundedRun::Undecided(ob.reason.clone()),
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
        ob.scope = Some(Scope::from_parts(vec![
            Covered::Symbolic {
                world: declared,
                how: Symbolic::Ranking(pr.checks()),
            },
            Covered::BoundedRun(Box::new(bounded)),
        ]));
    }
}
