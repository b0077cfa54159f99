//! How `collc verify` prints a report. By default, like cargo and clippy: a verified
//! file is one line; a file that is not verified is one line naming what failed, then one
//! diagnostic per root cause (`collc_verifier::cause`: the obligations that found the
//! same place are shown once, the others listed as "also"), without the simulator's
//! traces (the replay command shows them). `--format short`: one line per root cause,
//! `FILE:LINE:COL: error[verify::CODE]: message`. `--verbose`: per file the obligation
//! table, then every diagnostic with its trace. After several files, one summary line
//! naming the files that failed. JSON: one object per file.

use super::{to_json, JsonDiagnostic, Style};
use crate::output::Output;
use collc_grammar::{Diagnostic, Severity, Source};
use collc_verifier::cause::{primary_span, RootCause};
use collc_verifier::report::{ObligationResult, Report, Status};
use collc_verifier::Verdict;
use serde::Serialize;
use std::time::Duration;

#[derive(Serialize)]
struct JsonOut<'a> {
    file: &'a str,
    report: &'a Report,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

/// The status as the table prints it.
pub fn status_str(s: Status) -> &'static str {
    match s {
        Status::Proved => "proved",
        Status::Checked => "checked",
        Status::Violated => "violated",
        Status::Warning => "warning",
        Status::Unknown => "unknown",
        Status::Skipped => "skipped",
    }
}

/// The obligations of `report` with status `s`.
fn with_status(report: &Report, s: Status) -> Vec<&str> {
    report
        .obligations
        .iter()
        .filter(|o| o.status == s)
        .map(|o| o.id.as_str())
        .collect()
}

/// One file's line: `verified FILE: 10 proved, 4 checked`, or what failed.
pub fn status_line(report: &Report, name: &str) -> String {
    let n = |s: Status| with_status(report, s).len();
    match collc_verifier::gate::verdict(report) {
        Verdict::Safe => {
            let mut line = format!(
                "verified {name}: {} proved, {} checked",
                n(Status::Proved),
                n(Status::Checked)
            );
            if n(Status::Warning) > 0 {
                line.push_str(&format!(", {} warning(s)", n(Status::Warning)));
            }
            line
        }
        Verdict::Violated => format!(
            "violated {name}: {}",
            with_status(report, Status::Violated).join(", ")
        ),
        Verdict::Undecided => {
            let mut parts: Vec<String> = [Status::Unknown, Status::Skipped]
                .into_iter()
                .map(|s| (status_str(s), with_status(report, s)))
                .filter(|(_, ids)| !ids.is_empty())
                .map(|(s, ids)| format!("{s}: {}", ids.join(", ")))
                .collect();
            parts.extend(partial_line(report));
            format!("undecided {name}: {}", parts.join("; "))
        }
    }
}

/// The obligations decided for part of the declared world domain only, the smallest range
/// and the fix (`collc_verifier::gate::partial`), if any.
fn partial_line(report: &Report) -> Option<String> {
    let part = collc_verifier::gate::partial(report);
    let hi = part.iter().map(|(_, w)| w.hi).min()?;
    let lo = part.iter().map(|(_, w)| w.lo).max()?;
    let ids: Vec<&str> = part.iter().map(|(o, _)| o.id.as_str()).collect();
    let d = report.world;
    Some(format!(
        "decided for P in {lo}..={hi} only of the declared {}..={}: {} (narrow the declaration to `ranks P in {lo}..={hi};`, or write the protocol in a form the P-symbolic route proves)",
        d.lo,
        d.hi,
        ids.join(", ")
    ))
}

/// The report without the simulator's traces (kept with `--verbose`).
fn without_traces(report: &Report) -> Report {
    let mut r = report.clone();
    for f in r.obligations.iter_mut().flat_map(|o| o.findings.iter_mut()) {
        f.trace = None;
    }
    r
}

/// A root cause as one diagnostic: the one shown, with a note per other obligation
/// that found the same place.
pub fn with_also(c: &RootCause) -> Diagnostic {
    let mut d = c.diagnostic.clone();
    for a in &c.also {
        d = d.with_note(format!("also {}: {}", a.code, first_line(&a.message)));
    }
    d
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// One file's report, quiet: its line on stdout, then one diagnostic per root cause on
/// stderr.
pub fn quiet(report: &Report, src: &Source, style: Style, out: &mut Output) {
    out.out(status_line(report, &src.name));
    let causes = without_traces(report).root_causes();
    let diags: Vec<Diagnostic> = causes.iter().map(with_also).collect();
    out.diagnostics(src, &diags, style);
}

/// `FILE:LINE:COL: error[CODE]: message` per root cause of `diags`, the other
/// obligations of the same place after it (`also: CODE, CODE`).
pub fn short(src: &Source, diags: Vec<Diagnostic>, out: &mut Output) {
    for c in collc_verifier::cause::root_causes(diags) {
        let d = &c.diagnostic;
        let (line, col) = primary_span(d)
            .or_else(|| d.labels.first().map(|l| l.span))
            .map_or((1, 1), |s| src.line_col(s.start));
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        let mut text = format!(
            "{}:{line}:{col}: {level}[{}]: {}",
            src.name,
            d.code,
            first_line(&d.message)
        );
        if !c.also.is_empty() {
            let codes: Vec<&str> = c.also.iter().map(|a| a.code.as_str()).collect();
            text.push_str(&format!(" (also: {})", codes.join(", ")));
        }
        out.out(text);
    }
}

/// One file's report as a table on stdout, then its diagnostics on stderr (`--verbose`).
pub fn table(report: &Report, src: &Source, style: Style, out: &mut Output) {
    out.out(format!(
        "verify {}: {} ({})",
        src.name, report.protocol, report.method
    ));
    for o in &report.obligations {
        let extra = match o.status {
            Status::Unknown => format!(" — {}", o.reason.clone().unwrap_or_default()),
            Status::Violated | Status::Warning
                if collc_verifier::bounded::OBLIGATIONS.contains(&o.id.as_str()) =>
            {
                o.findings
                    .first()
                    .and_then(|x| x.notes.first())
                    .map(|n| format!(" — {n}"))
                    .unwrap_or_default()
            }
            _ => String::new(),
        };
        out.out(format!(
            "  {:<15} {:<9} {}{extra}",
            o.id,
            status_str(o.status),
            shown(o)
        ));
    }
    let s = &report.stats;
    out.out(format!(
        "  {} configurations, {} events, {} literal closes, {} Z3 calls, {} ms; bounded {} ms",
        s.configurations, s.events, s.literal, s.z3_calls, s.millis, s.bounded_millis
    ));
    out.diagnostics(src, &report.diagnostics(), style);
}

/// What a row of the table says was shown, from the obligation's data (never its prose
/// `summary`): for a violation or warning the smallest counterexample's values; the
/// bounds or domain it was decided over (`scope`), or, for a proof without one, the world
/// sizes and how they were proved ([`ObligationResult::how`]).
fn shown(o: &ObligationResult) -> String {
    let mut parts = Vec::new();
    if matches!(o.status, Status::Violated | Status::Warning) {
        if let Some(c) = &o.evidence.counterexample {
            parts.push(format!("counterexample at {}", c.values()));
        }
    }
    match (&o.scope, o.world, o.how()) {
        (Some(scope), _, _) => parts.push(scope.to_string()),
        (None, Some(w), Some(how)) => parts.push(format!("P in {}..={}, {how}", w.lo, w.hi)),
        _ => {}
    }
    parts.join("; ")
}

/// One file's report as one JSON line on stdout.
pub fn json(report: &Report, src: &Source, out: &mut Output) {
    let diags = report.diagnostics();
    let j = JsonOut {
        file: &src.name,
        report,
        diagnostics: diags.iter().map(|d| to_json(d, src)).collect(),
    };
    out.out(serde_json::to_string(&j).unwrap_or_default());
}

/// What a multi-file `collc verify` found, file by file.
#[derive(Debug, Default)]
pub struct Tally {
    /// Files whose verdict is safe (exit 0).
    pub verified: usize,
    /// Files with a violated obligation.
    pub violated: usize,
    /// Files with an undecided obligation and none violated.
    pub unknown: usize,
    /// Files that could not be read or do not validate.
    pub invalid: usize,
    /// The files not verified, each with what it is (`violated`, `unknown`, `invalid`).
    pub failed: Vec<(String, &'static str)>,
}

impl Tally {
    /// Counts one file's verdict.
    pub fn add(&mut self, file: &str, v: Verdict) {
        match v {
            Verdict::Safe => self.verified += 1,
            Verdict::Violated => {
                self.violated += 1;
                self.failed.push((file.to_string(), "violated"));
            }
            Verdict::Undecided => {
                self.unknown += 1;
                self.failed.push((file.to_string(), "unknown"));
            }
        }
    }
    /// Counts one file that could not be read or does not validate.
    pub fn add_invalid(&mut self, file: &str) {
        self.invalid += 1;
        self.failed.push((file.to_string(), "invalid"));
    }
    /// Files counted.
    pub fn files(&self) -> usize {
        self.verified + self.violated + self.unknown + self.invalid
    }
}

/// The summary line: `verify: 3 files: 1 verified, 1 violated, 1 unknown, 0 invalid
/// (4.2 s); failed: a.coll (violated), b.coll (unknown)`.
pub fn summary(t: &Tally, elapsed: Duration) -> String {
    let mut line = format!(
        "verify: {} files: {} verified, {} violated, {} unknown, {} invalid ({:.1} s)",
        t.files(),
        t.verified,
        t.violated,
        t.unknown,
        t.invalid,
        elapsed.as_secs_f64()
    );
    if !t.failed.is_empty() {
        let names: Vec<String> = t.failed.iter().map(|(f, w)| format!("{f} ({w})")).collect();
        line.push_str(&format!("; failed: {}", names.join(", ")));
    }
    line
}
