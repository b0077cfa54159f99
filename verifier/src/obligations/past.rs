//! The enumerating checks at the world sizes past the enumeration that the planner names
//! (`planning::critical`): for the obligations the enumerated route left `checked` and the
//! P-symbolic route did not prove.

use crate::obligations::check;
use crate::planning::critical::past_enumeration;
use crate::report::scope::{sizes_text, Covered};
use crate::report::{Report, Status, WorldRange};
use collc_spec::info::ProtocolInfo;

/// The enumerating checks (the six credit obligations and `value-signal`) at the sizes
/// past the enumeration, for the obligations `report` has only `checked` by enumeration
/// (the P-symbolic route did not prove them): a violation or warning there replaces the
/// status, with its counterexample; an undecided one makes the obligation `unknown`;
/// otherwise the sizes are added to the scope and the evidence.
/// `info` is `p`'s.
pub fn check_past(
    p: &collc_spec::Validated,
    info: &ProtocolInfo,
    opts: &check::Options,
    report: &mut Report,
) {
    let past = past_enumeration(p, info);
    let open = |id: &str| report.get(id).is_some_and(|o| o.status == Status::Checked);
    let ids: Vec<&str> = crate::report::OBLIGATIONS
        .iter()
        .chain([crate::obligations::value_signal::ID].iter())
        .copied()
        .filter(|id| open(id))
        .collect();
    if past.is_empty() || ids.is_empty() {
        return;
    }
    let far = check::verify_at(p, opts, Some(&past));
    let world = p.var_name(p.world).to_string();
    let sizes = format!("{world} = {}", sizes_text(&past));
    for o in report
        .obligations
        .iter_mut()
        .filter(|o| ids.contains(&o.id.as_str()))
    {
        let Some(f) = far.get(&o.id) else { continue };
        match f.status {
            Status::Violated | Status::Warning => {
                // Its summary names the counterexample's size past the enumeration
                // (`report::summary`).
                let before = std::mem::take(&mut o.evidence);
                *o = f.clone();
                o.evidence = before.join(&f.evidence);
            }
            Status::Unknown => {
                let why = format!(
                    "undecided at {sizes} (past the enumeration, where the protocol's literals can change what ranks do): {}",
                    f.reason.clone().unwrap_or_default()
                );
                o.status = Status::Unknown;
                if let Some(w) = f.evidence.undecided {
                    o.evidence
                        .add(&crate::report::evidence::Evidence::undecided(w));
                }
                o.reason = Some(why.clone());
                o.findings = f.findings.clone();
                o.claim = why;
                o.world = None;
            }
            _ => {
                // The summary names them from the evidence (`report::summary`).
                if let Some(sc) = o.scope.as_mut() {
                    sc.push(Covered::Also {
                        world: world.clone(),
                        sizes: past.clone(),
                    });
                }
                for w in &past {
                    o.evidence
                        .add(&crate::report::evidence::Evidence::enumerated(WorldRange {
                            lo: *w,
                            hi: *w,
                        }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::critical::tests::protocol;

    /// A central barrier whose peers from rank 21 on send their arrival twice, and its
    /// twin whose root also takes the second credit back.
    const RETRY: &str = "collective c: barrier() {
        ranks P in 1..=65536;
        signal arr[P];
        signal rel[1];
        body {
            if me != 0 {
                notify arr[me] @ rank(0) += 1;
                if me > 20 { notify arr[me] @ rank(0) += 1; }
                wait rel[0] >= 1;
            } else {
                for p in peers { wait arr[p] >= 1; }
                for p in peers { notify rel[0] @ p += 1; }
            }
        }
        epilogue {
            if me == 0 { for p in peers { notify arr[p] -= 1; } } else { notify rel[0] -= 1; }
            fence;
        }
    }";

    /// The enumerated route alone (no P-symbolic route), then [`check_past`].
    fn enumerated_then_past(text: &str) -> Report {
        let p = protocol(text);
        let opts = check::Options::default();
        let mut r = check::verify(&p, &opts);
        assert_eq!(
            r.get("credit-balance").map(|o| o.status),
            Some(Status::Checked)
        );
        check_past(&p, &ProtocolInfo::of(&p), &opts, &mut r);
        r
    }

    #[test]
    fn a_credit_left_past_the_enumeration_is_a_violation_there() {
        let r = enumerated_then_past(RETRY);
        let o = r.get("credit-balance").expect("obligation");
        assert_eq!(o.status, Status::Violated, "{}", o.summary());
        let at: Vec<(String, i64)> = o.findings[0]
            .params
            .iter()
            .map(|v| (v.name.clone(), v.value))
            .collect();
        assert_eq!(at, vec![("P".to_string(), 22)]);
        let s = o.summary();
        assert!(s.contains("found at P = 22 past the enumeration"), "{s}");
    }

    #[test]
    fn a_balanced_twin_is_checked_at_those_sizes_too() {
        let fixed = RETRY.replace(
            "for p in peers { notify arr[p] -= 1; }",
            "for p in peers { notify arr[p] -= 1; if p > 20 { notify arr[p] -= 1; } }",
        );
        let r = enumerated_then_past(&fixed);
        let o = r.get("credit-balance").expect("obligation");
        let s = o.summary();
        assert_eq!(o.status, Status::Checked, "{s}");
        assert!(
            s.contains("by enumeration") && s.contains("also P = 19..=22"),
            "{s}"
        );
    }
}
