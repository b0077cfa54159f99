//! How `collc verify` prints a report: per file, the obligation table, then that file's
//! diagnostics (kept together in a log of both streams); after several files, one
//! summary line. JSON: one object per file.

use super::{to_json, JsonDiagnostic, Style};
use crate::output::Output;
use collc_grammar::Source;
use collc_verifier::report::{Report, Status};
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

/// One file's report as a table on stdout, then its diagnostics on stderr.
pub fn text(report: &Report, src: &Source, style: Style, out: &mut Output) {
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
            o.summary
        ));
    }
    let s = &report.stats;
    out.out(format!(
        "  {} configurations, {} events, {} literal closes, {} Z3 calls, {} ms; bounded {} ms",
        s.configurations, s.events, s.literal, s.z3_calls, s.millis, s.bounded_millis
    ));
    out.diagnostics(src, &report.diagnostics(), style);
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
}

impl Tally {
    /// Counts one file's verdict.
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Safe => self.verified += 1,
            Verdict::Violated => self.violated += 1,
            Verdict::Undecided => self.unknown += 1,
        }
    }
    /// Files counted.
    pub fn files(&self) -> usize {
        self.verified + self.violated + self.unknown + self.invalid
    }
}

/// The summary line: `verify: 3 files: 1 verified, 1 violated, 1 unknown, 0 invalid (4.2 s)`.
pub fn summary(t: &Tally, elapsed: Duration) -> String {
    format!(
        "verify: {} files: {} verified, {} violated, {} unknown, {} invalid ({:.1} s)",
        t.files(),
        t.verified,
        t.violated,
        t.unknown,
        t.invalid,
        elapsed.as_secs_f64()
    )
}
