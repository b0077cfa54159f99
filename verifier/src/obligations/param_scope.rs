//! Every `proved` line says how it was shown (README, "What `proved` means"): `P
//! symbolic` for the whole declared domain, `by enumeration over P in LO..=HI`, or
//! `vacuous`, as its evidence ([`crate::report::evidence`]) records. [`apply_value`] puts the
//! parametric route's `value-signal` result into the report; [`finish`] gives the scope of
//! every line proved by enumeration its enumeration range (the world it was decided for)
//! and records the header's count ([`crate::report::method`]). The summaries say the same from the evidence
//! ([`crate::report::summary`]).

use crate::engine::param::Proof;
use crate::report::evidence::{Evidence, How};
use crate::report::method::Decided;
use crate::report::scope::{checks, Covered, Lead, Scope, Symbolic};
use crate::report::{Report, Status};

/// The obligations that decide a range of world sizes (the header counts them): the
/// parametric route's, `value-signal`, `fence` and `buffer-reuse`.
fn deciding(id: &str) -> bool {
    crate::engine::param::IDS.contains(&id)
        || [
            crate::obligations::value_signal::ID,
            crate::obligations::fence::ID,
            crate::obligations::reuse::ID,
        ]
        .contains(&id)
}

/// `value-signal` proved with P symbolic (on a protocol with value signals), or the
/// enumerated result annotated with why the parametric route did not close it.
pub fn apply_value(r: &Result<Proof, String>, report: &mut Report) {
    let declared = report.world;
    for ob in report.obligations.iter_mut() {
        if ob.id != crate::obligations::value_signal::ID || !ob.evidence.vacuous.is_empty() {
            continue;
        }
        match (ob.status, r) {
            (Status::Proved | Status::Checked | Status::Unknown, Ok(pr)) => {
                let before = match ob.status {
                    Status::Unknown => {
                        Covered::EnumerationUndecided(ob.reason.take().unwrap_or_default())
                    }
                    _ => Covered::CrossChecked(Box::new(ob.scope.take().unwrap_or_default())),
                };
                // The enumeration's counts of checks give way to the symbolic route's.
                let base = crate::obligations::check::what(ob.id.as_str());
                ob.status = Status::Proved;
                ob.findings.clear();
                ob.world = Some(declared);
                ob.evidence.add(&Evidence::symbolic(declared));
                ob.claim = format!("{base} ({})", checks(&pr.checks()));
                ob.scope = Some(Scope::from_parts(vec![
                    Covered::Symbolic {
                        world: declared,
                        how: Symbolic::Variables(pr.checks()),
                    },
                    before,
                ]));
            }
            (Status::Proved | Status::Checked, Err(why)) => {
                let enumerated = ob.scope.take().unwrap_or_default();
                ob.scope = Some(enumerated.with(Covered::NotSymbolic(why.clone())));
            }
            _ => {}
        }
    }
}

/// The scope phrase of every line proved by enumeration, and the header's count (after
/// every obligation is in the report). What decides is each obligation's evidence: a line
/// proved with P symbolic or vacuously already says so where it was recorded.
pub fn finish(report: &mut Report) {
    let declared = report.world;
    let mut symbolic = 0;
    let mut decided = 0;
    let mut enumerated: Vec<String> = Vec::new();
    for ob in report.obligations.iter_mut() {
        if ob.status != Status::Proved {
            if deciding(&ob.id) {
                decided += 1;
            }
            continue;
        }
        let how = ob.world.and_then(|w| ob.evidence.how(w));
        if let (Some(How::Enumerated), Some(w)) = (how, ob.world) {
            // The six credit obligations' scopes say it already (`report::apply_symbolic`).
            if !crate::obligations::param_report::SYMBOLIC.contains(&ob.id.as_str()) {
                let scope = ob.scope.take().unwrap_or_default();
                ob.scope = Some(scope.led(Lead::ByEnumerationOver(w)));
            }
        }
        if !deciding(&ob.id) {
            continue;
        }
        decided += 1;
        if matches!(how, Some(How::Symbolic | How::Vacuous)) {
            symbolic += 1;
        } else {
            enumerated.push(ob.id.clone());
        }
    }
    let over = report
        .obligations
        .iter()
        .find(|o| enumerated.contains(&o.id))
        .and_then(|o| o.world);
    report.method.decided = Some(Decided {
        symbolic,
        of: decided,
        declared,
        enumerated,
        over,
    });
}
