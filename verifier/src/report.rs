//! The verifier's results as data. The JSON shape (serde) is the stable schema
//! documented in `verifier/README.md` (schema version [`SCHEMA`]).

use collc_grammar::{Diagnostic, Span};
use serde::Serialize;

/// Version of the JSON schema.
pub const SCHEMA: u32 = 2;

/// The obligations, in report order.
pub const OBLIGATIONS: [&str; 6] = [
    "credit-balance",
    "op-exclusivity",
    "wait-reachable",
    "stale-credit",
    "garbage-credit",
    "guard-symmetry",
];

/// How an obligation came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Shown for every parameter value of the declared domain.
    Proved,
    /// Shown within stated bounds only (bounded model checking).
    Checked,
    /// A counterexample exists (an error).
    Violated,
    /// An advisory obligation failed (e.g. garbage credits); not an error.
    Warning,
    /// Could not be decided (timeout or unsupported form); never a pass.
    Unknown,
    /// Not run (`--no-bounded`); never a pass, but not a failure either.
    Skipped,
}

/// A parameter value of a counterexample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParamValue {
    /// Name.
    pub name: String,
    /// Value.
    pub value: i64,
}

/// One statement's share of a counterexample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Contribution {
    /// The statement.
    pub span: Span,
    /// 1-based line (filled by the CLI; 0 in the library).
    pub line: usize,
    /// `body` or `epilogue`.
    pub section: String,
    /// What the statement does (`notify`, `wait`).
    pub role: String,
    /// How many times it hits the cell in one call.
    pub count: i64,
    /// Its total effect on the cell (sum of values), for notifies.
    pub total: i64,
}

/// One concrete problem.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Summary.
    pub message: String,
    /// The counterexample's parameter values (enumerated then symbolic).
    pub params: Vec<ParamValue>,
    /// The cell, e.g. `sig[1][0] on rank 0`.
    pub cell: Option<String>,
    /// The cell's net value, or the threshold, depending on the obligation.
    pub value: Option<i64>,
    /// A formula (e.g. wasted remote atomics per call).
    pub formula: Option<String>,
    /// Statements involved, with counts.
    pub contributions: Vec<Contribution>,
    /// The statement to blame.
    pub primary: Option<Span>,
    /// What to say at the primary statement.
    pub primary_label: String,
    /// Other labelled statements.
    pub labels: Vec<(Span, String)>,
    /// How to fix it.
    pub help: Option<String>,
    /// Extra explanation lines.
    pub notes: Vec<String>,
    /// Where a missing `fence;` goes: before this statement ([`Report::locate`] turns it
    /// into the help "add `fence;` before line N").
    pub fence_before: Option<Span>,
}

impl Finding {
    /// A finding with a message and nothing else.
    pub fn new(message: impl Into<String>) -> Self {
        Finding {
            message: message.into(),
            params: Vec::new(),
            cell: None,
            value: None,
            formula: None,
            contributions: Vec::new(),
            primary: None,
            primary_label: String::new(),
            labels: Vec::new(),
            help: None,
            notes: Vec::new(),
            fence_before: None,
        }
    }
}

/// The result of one obligation.
#[derive(Debug, Clone, Serialize)]
pub struct ObligationResult {
    /// Stable id, e.g. `credit-balance`.
    pub id: String,
    /// Diagnostic code, e.g. `verify::credit-balance`.
    pub code: String,
    /// Outcome.
    pub status: Status,
    /// For proved: the domain covered; for checked: the bounds.
    pub scope: Option<String>,
    /// For unknown: why.
    pub reason: Option<String>,
    /// One line on what was shown.
    pub summary: String,
    /// Counterexamples and warnings.
    pub findings: Vec<Finding>,
}

/// Counters.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// Configurations (enumerated parameter values) analysed.
    pub configurations: u64,
    /// Events (notify/wait/fence executions, summarised loops counted once).
    pub events: u64,
    /// Queries closed by literal arithmetic.
    pub literal: u64,
    /// Queries sent to Z3.
    pub z3_calls: u64,
    /// Wall-clock time.
    pub millis: u64,
    /// Of which: abstract execution.
    pub exec_millis: u64,
    /// Of which: the per-cell checks (including Z3).
    pub check_millis: u64,
}

/// The whole result of `verify`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Schema version ([`SCHEMA`]).
    pub schema: u32,
    /// The collective's name.
    pub protocol: String,
    /// How the domain was covered (which parameters were enumerated, which symbolic).
    pub method: String,
    /// One entry per obligation (simulator-backed ones are appended with `checked`).
    pub obligations: Vec<ObligationResult>,
    /// Counters.
    pub stats: Stats,
}

impl Report {
    /// Exit code: 1 any violation, 3 any unknown (and no violation), else 0.
    pub fn exit_code(&self) -> i32 {
        if self
            .obligations
            .iter()
            .any(|o| o.status == Status::Violated)
        {
            1
        } else if self.obligations.iter().any(|o| o.status == Status::Unknown) {
            3
        } else {
            0
        }
    }
    /// Fills in what needs the source text: the line of every contribution, and the
    /// help of findings that say where a `fence;` goes.
    pub fn locate(&mut self, src: &collc_grammar::Source) {
        for o in self.obligations.iter_mut() {
            for f in o.findings.iter_mut() {
                for c in f.contributions.iter_mut() {
                    c.line = src.line_col(c.span.start).0;
                }
                for n in f.notes.iter_mut() {
                    if let Some(rest) = n.strip_prefix("replay: collc sim FILE ") {
                        *n = format!("replay: collc sim {} {rest}", src.name);
                    }
                }
                if let Some(s) = f.fence_before {
                    f.help = Some(format!(
                        "add `fence;` before line {}",
                        src.line_col(s.start).0
                    ));
                }
            }
        }
    }
    /// The result of one obligation.
    pub fn get(&self, id: &str) -> Option<&ObligationResult> {
        self.obligations.iter().find(|o| o.id == id)
    }
    /// Findings and unknowns as diagnostics (labels on the offending statements).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for o in &self.obligations {
            match o.status {
                Status::Violated | Status::Warning => {
                    for f in &o.findings {
                        let mut d = if o.status == Status::Violated {
                            Diagnostic::error(&o.code, &f.message)
                        } else {
                            Diagnostic::warning(&o.code, &f.message)
                        };
                        if let Some(s) = f.primary {
                            d = d.with_primary(s, f.primary_label.clone());
                        }
                        for (s, m) in &f.labels {
                            d = d.with_label(*s, m.clone());
                        }
                        if let Some(h) = &f.help {
                            d = d.with_help(h.clone());
                        }
                        if !f.params.is_empty() {
                            let ps: Vec<String> = f
                                .params
                                .iter()
                                .map(|p| format!("{} = {}", p.name, p.value))
                                .collect();
                            d = d.with_note(format!("counterexample: {}", ps.join(", ")));
                        }
                        if let Some(c) = &f.cell {
                            match f.value {
                                Some(v) => d = d.with_note(format!("cell {c}: {v}")),
                                None => d = d.with_note(format!("cell {c}")),
                            }
                        }
                        if let Some(x) = &f.formula {
                            d = d.with_note(x.clone());
                        }
                        for c in &f.contributions {
                            let what = if c.role == "notify" {
                                format!("{} × adds {} in total", c.count, c.total)
                            } else {
                                format!("{} ×", c.count)
                            };
                            let at = if c.line > 0 {
                                format!("line {}", c.line)
                            } else {
                                format!("bytes {}..{}", c.span.start, c.span.end)
                            };
                            d = d.with_note(format!("{} {} ({}): {what}", c.role, at, c.section));
                        }
                        for n in &f.notes {
                            d = d.with_note(n.clone());
                        }
                        out.push(d);
                    }
                }
                Status::Unknown => {
                    let mut d = Diagnostic::warning(
                        &o.code,
                        format!(
                            "{} could not be decided: {}",
                            o.id,
                            o.reason.clone().unwrap_or_default()
                        ),
                    );
                    if let Some(f) = o.findings.first() {
                        if let Some(s) = f.primary {
                            d = d.with_primary(s, "here");
                        }
                    }
                    let help = if crate::bounded::OBLIGATIONS.contains(&o.id.as_str()) {
                        "this is not a pass; raise --bounded-budget-ms"
                    } else {
                        "this is not a pass; simplify the form or raise --timeout-ms"
                    };
                    out.push(d.with_help(help));
                }
                _ => {}
            }
        }
        out
    }
}
