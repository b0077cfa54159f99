//! The gate policy: from a complete [`Report`], whether a kernel may be produced and
//! what is stamped into it. Exit 0 of `collc verify` and "code was produced without
//! `--allow-unverified`" mean the same thing: [`Verdict::Safe`], i.e. no obligation
//! violated and none undecided (`unknown`, or `skipped` by `--no-bounded`), and every
//! obligation that decides a range of world sizes decided the whole declared domain
//! ([`partial`]: one proved or checked for `P <= 16` only of a declared `1..=65536` leaves
//! the protocol undecided, naming the range and the fix). Warnings
//! (`garbage-credit`, ...) are advisory and never block.
//!
//! `--allow-unverified` is the only way past a violated or undecided obligation, and it
//! is stamped into what is produced ([`Gate::stamp`]). A protocol that does not validate
//! never reaches the verifier: no report, no gate, nothing produced.

use crate::report::{ObligationResult, Report, Status, WorldRange};
use collc_grammar::Diagnostic;
use serde::Serialize;

/// What the report says about the protocol as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every obligation proved or checked (warnings allowed).
    Safe,
    /// Some obligation is violated.
    Violated,
    /// None violated, but some unknown or skipped.
    Undecided,
}

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// Safe: produce, with no stamp.
    Pass,
    /// Not safe, but `--allow-unverified` was given: produce, with [`Gate::stamp`].
    Unverified,
    /// Not safe: produce nothing.
    Refuse,
}

/// One reason the protocol is not safe: a violation (one per finding) or an undecided
/// obligation.
#[derive(Debug, Clone, Serialize)]
pub struct Blocker {
    /// The obligation, e.g. `credit-balance`.
    pub obligation: String,
    /// Its diagnostic code, e.g. `verify::credit-balance`.
    pub code: String,
    /// `violated`, `unknown` or `skipped`.
    pub status: Status,
    /// 1-based line of the statement to blame (0: none, or no source given).
    pub line: usize,
    /// The finding's message, or why the obligation is undecided.
    pub message: String,
}

impl Blocker {
    /// `line 12: verify::credit-balance (violated): ...`.
    pub fn text(&self) -> String {
        let at = if self.line > 0 {
            format!("line {}: ", self.line)
        } else {
            String::new()
        };
        let status = match self.status {
            Status::Violated => "violated",
            Status::Skipped => "skipped",
            Status::Unknown => "unknown",
            _ => "part of the domain",
        };
        format!("{at}{} ({status}): {}", self.code, self.message)
    }
}

/// The gate's decision with everything a front end prints or stamps.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    /// The report's verdict.
    pub verdict: Verdict,
    /// What may be produced.
    pub decision: Decision,
    /// Whether `--allow-unverified` was given.
    pub allow_unverified: bool,
    /// Why the protocol is not safe (empty when it is).
    pub blockers: Vec<Blocker>,
    /// The lines to stamp into what is produced (the header comment of emitted code; the
    /// verdict output of a run); empty unless [`Decision::Unverified`].
    pub stamp: Vec<String>,
    /// The largest world size produced code may run with (the kernels'
    /// `kMaxSupportedRanks`): [`Report::world_limit`], or, when no obligation decided a
    /// range of world sizes, the declared domain cut at [`crate::planning::TABLE.enum_world_max`].
    pub world_limit: i64,
    /// The verifier's diagnostics behind the blockers (errors for violations, warnings
    /// for unknowns), to print with a refusal or an unverified pass.
    #[serde(skip)]
    pub diagnostics: Vec<Diagnostic>,
}

impl Gate {
    /// True if something may be produced.
    pub fn allowed(&self) -> bool {
        self.decision != Decision::Refuse
    }
    /// Violations among the blockers.
    pub fn violations(&self) -> usize {
        self.blockers
            .iter()
            .filter(|b| b.status == Status::Violated)
            .count()
    }
    /// Undecided obligations among the blockers.
    pub fn undecided(&self) -> usize {
        self.blockers.len() - self.violations()
    }
}

/// The obligations (proved, checked or warnings) that decided a range of world sizes
/// narrower than the declared domain, with that range: exit 0 means the declared domain,
/// so they leave the protocol undecided.
pub fn partial(report: &Report) -> Vec<(&ObligationResult, WorldRange)> {
    report
        .obligations
        .iter()
        .filter(|o| {
            !matches!(
                o.status,
                Status::Violated | Status::Unknown | Status::Skipped
            )
        })
        .filter_map(|o| o.world.map(|w| (o, w)))
        .filter(|(_, w)| w.lo > report.world.lo || w.hi < report.world.hi)
        .collect()
}

/// Why a [`partial`] obligation blocks: the range it decided and the fix.
fn partial_message(report: &Report, w: WorldRange) -> String {
    let d = report.world;
    format!(
        "decided for P in {}..={} only, not the declared {}..={}: narrow the declaration to `ranks P in {}..={};`, or write the protocol in a form the P-symbolic route proves",
        w.lo, w.hi, d.lo, d.hi, w.lo, w.hi
    )
}

/// The verdict of a report: violated before undecided before safe.
pub fn verdict(report: &Report) -> Verdict {
    let has = |s: Status| report.obligations.iter().any(|o| o.status == s);
    if has(Status::Violated) {
        Verdict::Violated
    } else if has(Status::Unknown) || has(Status::Skipped) || !partial(report).is_empty() {
        Verdict::Undecided
    } else {
        Verdict::Safe
    }
}

/// A violation with no finding, from its evidence: the counterexample's values, else the
/// scope it was decided over.
fn unfound(o: &ObligationResult) -> String {
    match (&o.evidence.counterexample, &o.scope) {
        (Some(c), _) => format!("counterexample at {}", c.values()),
        (None, Some(scope)) => format!("violated within {scope}"),
        (None, None) => "violated (no counterexample recorded)".to_string(),
    }
}

/// Why an obligation with no stated reason is undecided, from its evidence.
fn undecided(o: &ObligationResult) -> String {
    o.evidence
        .undecided
        .map_or("undecided", |u| u.phrase())
        .to_string()
}

/// The blockers of a report, in report order.
fn blockers(report: &Report) -> Vec<Blocker> {
    let mut out = Vec::new();
    for o in &report.obligations {
        let mk = |line: usize, message: String| Blocker {
            obligation: o.id.clone(),
            code: o.code.clone(),
            status: o.status,
            line,
            message,
        };
        match o.status {
            Status::Violated if o.findings.is_empty() => out.push(mk(0, unfound(o))),
            Status::Violated => {
                out.extend(o.findings.iter().map(|f| mk(f.line, f.message.clone())))
            }
            Status::Unknown | Status::Skipped => out.push(mk(
                o.findings.first().map_or(0, |f| f.line),
                o.reason.clone().unwrap_or_else(|| undecided(o)),
            )),
            _ => {}
        }
    }
    for (o, w) in partial(report) {
        out.push(Blocker {
            obligation: o.id.clone(),
            code: o.code.clone(),
            status: o.status,
            line: 0,
            message: partial_message(report, w),
        });
    }
    out
}

/// The gate policy: may code be produced from `report`, given whether
/// `--allow-unverified` was passed, and what is stamped into it.
pub fn gate(report: &Report, allow_unverified: bool) -> Gate {
    let verdict = verdict(report);
    let blockers = blockers(report);
    let decision = match (verdict, allow_unverified) {
        (Verdict::Safe, _) => Decision::Pass,
        (_, true) => Decision::Unverified,
        (_, false) => Decision::Refuse,
    };
    let mut stamp = Vec::new();
    if decision == Decision::Unverified {
        let violated = blockers
            .iter()
            .filter(|b| b.status == Status::Violated)
            .count();
        stamp.push(format!(
            "UNVERIFIED: produced with --allow-unverified; the verifier did not show `{}` safe ({violated} violation(s), {} undecided obligation(s)):",
            report.protocol,
            blockers.len() - violated
        ));
        stamp.extend(blockers.iter().map(|b| format!("  {}", b.text())));
    }
    let codes: Vec<&str> = blockers.iter().map(|b| b.code.as_str()).collect();
    let diagnostics = report
        .diagnostics()
        .into_iter()
        .filter(|d| codes.contains(&d.code.as_str()))
        .collect();
    let world_limit = report
        .world_limit()
        .unwrap_or_else(|| report.world.hi.min(crate::planning::TABLE.enum_world_max));
    Gate {
        verdict,
        decision,
        allow_unverified,
        world_limit,
        blockers,
        stamp,
        diagnostics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Finding, ObligationResult, Stats, SCHEMA};

    fn report(statuses: &[Status]) -> Report {
        let obligations = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut f = Finding::new(format!("finding {i}"));
                f.line = i + 1;
                ObligationResult {
                    id: format!("o{i}"),
                    code: format!("verify::o{i}"),
                    status: *s,
                    scope: None,
                    world: None,
                    reason: Some(format!("reason {i}")),
                    claim: String::new(),
                    findings: if *s == Status::Violated {
                        vec![f]
                    } else {
                        Vec::new()
                    },
                    evidence: crate::report::evidence::Evidence::none(),
                }
            })
            .collect();
        Report {
            schema: SCHEMA,
            protocol: "p".into(),
            method: Default::default(),
            world: crate::report::WorldRange { lo: 1, hi: 16 },
            obligations,
            stats: Stats::default(),
        }
    }

    #[test]
    fn the_policy_table() {
        use Status::*;
        for (statuses, verdict_, code) in [
            (vec![Proved, Checked, Warning], Verdict::Safe, 0),
            (vec![Proved, Violated, Unknown], Verdict::Violated, 1),
            (vec![Proved, Unknown], Verdict::Undecided, 3),
            (vec![Proved, Skipped], Verdict::Undecided, 3),
        ] {
            let r = report(&statuses);
            assert_eq!(verdict(&r), verdict_, "{statuses:?}");
            assert_eq!(r.exit_code(), code, "{statuses:?}");
            let refused = gate(&r, false);
            let allowed = gate(&r, true);
            if verdict_ == Verdict::Safe {
                assert_eq!(refused.decision, Decision::Pass);
                assert_eq!(allowed.decision, Decision::Pass);
                assert!(allowed.stamp.is_empty() && allowed.blockers.is_empty());
            } else {
                assert_eq!(refused.decision, Decision::Refuse);
                assert!(
                    refused.stamp.is_empty(),
                    "nothing is produced, nothing stamped"
                );
                assert_eq!(allowed.decision, Decision::Unverified);
                assert!(
                    allowed.stamp[0].starts_with("UNVERIFIED: produced with --allow-unverified")
                );
                assert_eq!(allowed.stamp.len(), 1 + allowed.blockers.len());
            }
        }
        // Exit 0 means the declared domain: an obligation decided for P <= 8 of 1..=16.
        let mut r = report(&[Proved, Checked]);
        r.obligations[1].world = Some(crate::report::WorldRange { lo: 1, hi: 8 });
        assert_eq!((verdict(&r), r.exit_code()), (Verdict::Undecided, 3));
        let g = gate(&r, true);
        assert_eq!(g.world_limit, 8);
        assert_eq!(
            g.stamp[1],
            "  verify::o1 (part of the domain): decided for P in 1..=8 only, not the declared 1..=16: narrow the declaration to `ranks P in 1..=8;`, or write the protocol in a form the P-symbolic route proves"
        );
        r.obligations[1].world = Some(crate::report::WorldRange { lo: 1, hi: 16 });
        assert_eq!(verdict(&r), Verdict::Safe);
        let g = gate(&report(&[Violated, Unknown]), true);
        assert_eq!((g.violations(), g.undecided()), (1, 1));
        assert_eq!(g.stamp[1], "  line 1: verify::o0 (violated): finding 0");
        assert_eq!(g.stamp[2], "  verify::o1 (unknown): reason 1");
    }
}
