//! The one line on what an obligation's result shows (the JSON report's `summary`),
//! rendered in one place from the result's data: the claim its route made (what it states
//! and what it counted, set where the result is made) and, for a result that decided a
//! range of world sizes, how far and how that holds — from its evidence
//! ([`crate::report::evidence`]): `all P in 1..=65536, P symbolic`, `by enumeration over
//! P in 1..=8`, `vacuous`, `checked for P in 1..=16 by enumeration`, the sizes past the
//! enumeration it also covered, and a counterexample found past the enumeration. No route
//! appends its phrase to another's text, and no code reads the line back.

use crate::report::evidence::How;
use crate::report::{ObligationResult, Status, WorldRange};

/// "all P in lo..=hi", or "all P >= lo" for a domain up to `i32::MAX`.
pub fn world_phrase(lo: i64, hi: i64) -> String {
    if hi >= i64::from(i32::MAX) {
        format!("all P >= {lo}")
    } else {
        format!("all P in {lo}..={hi}")
    }
}

/// `P = 3` or `P in 1..=16`.
pub fn range(w: WorldRange) -> String {
    if w.lo == w.hi {
        format!("P = {}", w.lo)
    } else {
        format!("P in {}..={}", w.lo, w.hi)
    }
}

/// The summary of `o` (module documentation).
pub fn line(o: &ObligationResult) -> String {
    let claim = o.claim.as_str();
    let Some(w) = o.world else {
        return claim.to_string();
    };
    match o.status {
        Status::Proved | Status::Checked => shown(o, claim, w),
        Status::Violated | Status::Warning => match past_counterexample(o, w) {
            Some(at) => format!(
                "{claim}; found at {at} past the enumeration, where the protocol's literals can change what ranks do"
            ),
            None => claim.to_string(),
        },
        Status::Unknown | Status::Skipped => claim.to_string(),
    }
}

/// A proof or a check over `w`, with how it was shown.
fn shown(o: &ObligationResult, claim: &str, w: WorldRange) -> String {
    match o.evidence.how(w) {
        Some(How::Symbolic) => format!("{claim}; {}, P symbolic", world_phrase(w.lo, w.hi)),
        Some(How::Vacuous) => format!("vacuous: {claim}; {}", world_phrase(w.lo, w.hi)),
        Some(How::Enumerated) if o.status == Status::Proved => {
            format!("{claim}; by enumeration over {}{}", range(w), also(o, w))
        }
        Some(How::Enumerated) => format!(
            "{claim}; checked for {} by enumeration{}",
            range(w),
            also(o, w)
        ),
        None => claim.to_string(),
    }
}

/// The world sizes past `w` the enumeration also covered (the sizes around the thresholds
/// the protocol's literals form): `; also P = 19..=22 (...)`, or nothing.
fn also(o: &ObligationResult, w: WorldRange) -> String {
    let parts: Vec<String> = o
        .evidence
        .enumerated
        .ranges()
        .iter()
        .filter(|r| r.hi > w.hi)
        .map(|r| {
            let lo = r.lo.max(w.hi + 1);
            match r.hi - lo {
                0 => lo.to_string(),
                1 => format!("{lo}, {}", r.hi),
                _ => format!("{lo}..={}", r.hi),
            }
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "; also P = {} (the sizes around the thresholds its literals form)",
        parts.join(", ")
    )
}

/// The world size of the counterexample when it lies past `w` (found at the sizes past
/// the enumeration): `P = 19`.
fn past_counterexample(o: &ObligationResult, w: WorldRange) -> Option<String> {
    let c = o.evidence.counterexample.as_ref()?;
    let world = c.params.first()?;
    (world.value > w.hi).then(|| format!("{} = {}", world.name, world.value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::evidence::{Evidence, Worlds};
    use crate::report::ParamValue;

    fn result(status: Status, world: Option<WorldRange>, evidence: Evidence) -> ObligationResult {
        ObligationResult {
            id: "credit-balance".into(),
            code: "verify::credit-balance".into(),
            status,
            scope: None,
            world,
            reason: None,
            claim: "every written credit cell nets exactly 0 per call".into(),
            findings: Vec::new(),
            evidence,
        }
    }

    const W: WorldRange = WorldRange { lo: 1, hi: 16 };

    #[test]
    fn the_line_says_how_the_evidence_shows_it() {
        let all = WorldRange { lo: 1, hi: 65536 };
        let s = line(&result(Status::Proved, Some(all), Evidence::symbolic(all)));
        assert!(s.ends_with("; all P in 1..=65536, P symbolic"), "{s}");
        let s = line(&result(Status::Proved, Some(W), Evidence::enumerated(W)));
        assert!(s.ends_with("; by enumeration over P in 1..=16"), "{s}");
        let s = line(&result(Status::Proved, Some(W), Evidence::vacuous(W)));
        assert!(s.starts_with("vacuous: every written"), "{s}");
        let s = line(&result(Status::Checked, Some(W), Evidence::enumerated(W)));
        assert!(
            s.ends_with("; checked for P in 1..=16 by enumeration"),
            "{s}"
        );
        // Evidence that does not cover the world range states no scope.
        let s = line(&result(Status::Proved, Some(all), Evidence::enumerated(W)));
        assert_eq!(s, "every written credit cell nets exactly 0 per call");
    }

    #[test]
    fn the_sizes_past_the_enumeration_come_from_the_evidence() {
        let mut e = Evidence::enumerated(W);
        for w in [17, 19, 20, 22, 23, 24] {
            e.add(&Evidence::enumerated(WorldRange { lo: w, hi: w }));
        }
        let want = [(1, 17), (19, 20), (22, 24)]
            .into_iter()
            .fold(Worlds::none(), |a, (lo, hi)| {
                a.union(&Worlds::range(lo, hi))
            });
        assert_eq!(e.enumerated, want);
        let s = line(&result(Status::Checked, Some(W), e));
        assert!(
            s.contains("; also P = 17, 19, 20, 22..=24 (the sizes"),
            "{s}"
        );
    }

    #[test]
    fn a_counterexample_past_the_enumeration_is_named() {
        let at = |v| {
            Evidence::counterexample(
                vec![ParamValue {
                    name: "P".into(),
                    value: v,
                }],
                None,
            )
        };
        let s = line(&result(Status::Violated, Some(W), at(19)));
        assert!(s.contains("; found at P = 19 past the enumeration"), "{s}");
        let s = line(&result(Status::Violated, Some(W), at(3)));
        assert!(!s.contains("past the enumeration"), "{s}");
    }
}
