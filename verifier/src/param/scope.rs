//! Every `proved` line says how it was shown (README, "What `proved` means"): `P
//! symbolic` for the whole declared domain, `by enumeration over P in LO..=HI`, or
//! `vacuous`. [`apply_value`] puts the parametric route's `value-signal` result into the
//! report; [`finish`] gives every proved line that has no such phrase yet its enumeration
//! range (the world it was decided for) and writes the header's count.

use super::{world_phrase, Proof};
use crate::report::{Report, Status, WorldRange};

/// The obligations that decide a range of world sizes (the header counts them): the
/// parametric route's, `value-signal`, `fence` and `buffer-reuse`.
fn deciding(id: &str) -> bool {
    super::IDS.contains(&id)
        || [crate::value_signal::ID, crate::fence::ID, crate::reuse::ID].contains(&id)
}

/// The phrases that state a proved line's scope.
const PHRASES: [&str; 3] = ["P symbolic", "by enumeration", "vacuous"];

fn has_phrase(s: &str) -> bool {
    PHRASES.iter().any(|x| s.contains(x))
}

/// How a `proved` obligation was shown: `P symbolic`, `by enumeration` or `vacuous`
/// (`None` for other statuses).
pub fn how(o: &crate::report::ObligationResult) -> Option<&'static str> {
    if o.status != Status::Proved {
        return None;
    }
    PHRASES.into_iter().find(|x| o.summary.contains(x))
}

/// A summary without its trailing count of checks (` (N checks: ...)`).
pub fn strip_counts(s: &str) -> &str {
    match s.rfind(" (") {
        Some(i)
            if s[i + 2..].starts_with(|c: char| c.is_ascii_digit())
                && s[i..].contains(" checks: ") =>
        {
            &s[..i]
        }
        _ => s,
    }
}

/// `P in lo..=hi`.
fn range(w: &WorldRange) -> String {
    if w.lo == w.hi {
        format!("P = {}", w.lo)
    } else {
        format!("P in {}..={}", w.lo, w.hi)
    }
}

/// `value-signal` proved with P symbolic (on a protocol with value signals), or the
/// enumerated result annotated with why the parametric route did not close it.
pub fn apply_value(r: &Result<Proof, String>, report: &mut Report) {
    let declared = report.world;
    for ob in report.obligations.iter_mut() {
        if ob.id != crate::value_signal::ID || ob.summary.contains("vacuous") {
            continue;
        }
        match (ob.status, r) {
            (Status::Proved | Status::Checked | Status::Unknown, Ok(pr)) => {
                let domain = world_phrase(declared.lo, declared.hi);
                let before = match ob.status {
                    Status::Unknown => format!(
                        "the enumerated route did not decide it: {}",
                        ob.reason.take().unwrap_or_default()
                    ),
                    _ => format!(
                        "cross-checked by enumeration ({})",
                        ob.scope.take().unwrap_or_default()
                    ),
                };
                // The enumeration's counts of checks give way to the symbolic route's.
                let base = ob
                    .summary
                    .split("; checked for")
                    .next()
                    .unwrap_or_default()
                    .replacen("undecided: ", "", 1);
                let base = strip_counts(&base);
                ob.status = Status::Proved;
                ob.findings.clear();
                ob.world = Some(declared);
                ob.summary = format!(
                    "{base} ({} checks: {} by literal arithmetic, {} by Z3); {domain}, P symbolic",
                    pr.items, pr.literal, pr.z3
                );
                ob.scope = Some(format!(
                    "{domain}, P symbolic (ranks, blocks and loop variables symbolic; {} checks: {} by literal arithmetic, {} by Z3); {before}",
                    pr.items, pr.literal, pr.z3
                ));
            }
            (Status::Proved | Status::Checked, Err(why)) => {
                let enumerated = ob.scope.take().unwrap_or_default();
                ob.scope = Some(format!("{enumerated}; not proved with P symbolic: {why}"));
            }
            _ => {}
        }
    }
}

/// The scope phrase of every proved line, and the header's count (after every obligation
/// is in the report).
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
        let scope = ob.scope.clone().unwrap_or_default();
        if !has_phrase(&ob.summary) {
            if scope.contains("every value of the declared domains") {
                // Decided by Z3 with P symbolic (the front end's range obligations).
                ob.summary = format!(
                    "{}; {}, P symbolic",
                    ob.summary,
                    world_phrase(declared.lo, declared.hi)
                );
            } else if let Some(w) = ob.world {
                let phrase = format!("by enumeration over {}", range(&w));
                ob.summary = format!("{}; {phrase}", ob.summary);
                if !scope.contains("by enumeration") {
                    ob.scope = Some(format!("{phrase}: {scope}"));
                }
            }
        }
        if !deciding(&ob.id) {
            continue;
        }
        decided += 1;
        if ob.summary.contains("P symbolic") || ob.summary.contains("vacuous") {
            symbolic += 1;
        } else {
            enumerated.push(ob.id.clone());
        }
    }
    let mut m = format!(
        "{}; P symbolic: {symbolic} of {decided} obligations proved for {}",
        report.method,
        world_phrase(declared.lo, declared.hi)
    );
    if !enumerated.is_empty() {
        let w = report
            .obligations
            .iter()
            .find(|o| enumerated.contains(&o.id))
            .and_then(|o| o.world)
            .map_or(String::new(), |w| format!(" over {}", range(&w)));
        m.push_str(&format!(
            ", proved by enumeration{w}: {}",
            enumerated.join(", ")
        ));
    }
    report.method = m;
}
