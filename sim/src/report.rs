//! What a simulation reports: findings with their shortest traces, statistics
//! about the exploration, and a verdict that never claims more than was explored.

use crate::machine::Memory;
use collc_grammar::Span;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a trace event is, with the data a picture needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum EvKind {
    /// A process enters a call.
    CallStart,
    /// A process leaves a call.
    CallEnd,
    /// A notify.
    Notify {
        /// Target rank.
        to: u32,
        /// The cell.
        cell: String,
        /// Value before.
        before: i64,
        /// Value after.
        after: i64,
    },
    /// A wait passes.
    WaitPass {
        /// The cell.
        cell: String,
        /// Threshold.
        threshold: i64,
        /// The value the wait read.
        value: i64,
    },
    /// A blocked wait's poll caches a failing value and keeps re-reading it (sticky polling).
    WaitPinned {
        /// The cell.
        cell: String,
        /// Threshold.
        threshold: i64,
        /// The cached value the poll keeps reading.
        value: i64,
    },
    /// A wait that can never pass (deadlock).
    WaitBlocked {
        /// The cell.
        cell: String,
        /// Threshold.
        threshold: i64,
        /// What the cell holds.
        value: i64,
    },
    /// A data movement.
    Data,
    /// A fence.
    Fence,
    /// A buffered write becomes visible (relaxed).
    Drain,
    /// An early return.
    Return,
    /// The host stages a call's input.
    Stage,
    /// The host reads a call's output.
    Consume {
        /// Whether it was right.
        ok: bool,
    },
    /// A runtime error.
    Fault,
}

/// One event of a trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// The scheduler step it belongs to (0: the initial state).
    pub step: u32,
    /// The rank.
    pub rank: u32,
    /// The block (multicore protocols only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<u32>,
    /// The call (1-based).
    pub call: u32,
    /// The statement's source form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stmt: Option<String>,
    /// The statement's span.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// The statement's line (filled in by callers that have the source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What happened, with data.
    pub kind: EvKind,
    /// What happened, in words, with concrete values.
    pub text: String,
    /// The finding code this event exhibits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark: Option<String>,
}

/// One violation with the shortest trace found that exhibits it.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Stable code: `sim::deadlock`, `sim::stale-pass`, `sim::lost-credit`,
    /// `sim::data-race`, `sim::wrong-result`, `sim::nonzero-exit`, `sim::runtime-error`,
    /// `sim::stale-value`, `sim::uninit-read`.
    pub code: String,
    /// One line.
    pub message: String,
    /// The offending statement.
    pub span: Option<Span>,
    /// Other statements involved.
    pub related: Vec<Span>,
    /// Details (e.g. every blocked process of a deadlock).
    pub notes: Vec<String>,
    /// How to fix it, when the finding knows (e.g. a race on a `reused` window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The parameters of the run that found it.
    pub params: BTreeMap<String, i64>,
    /// Scheduler steps of the trace.
    pub steps: usize,
    /// The trace, from the initial state to the failing event.
    pub trace: Vec<Event>,
}

impl Finding {
    /// A finding without trace.
    pub fn new(code: &str, message: String, span: Option<Span>) -> Self {
        Finding {
            code: code.to_string(),
            message,
            span,
            related: Vec::new(),
            notes: Vec::new(),
            help: None,
            params: BTreeMap::new(),
            steps: 0,
            trace: Vec::new(),
        }
    }
    /// Adds a note.
    pub fn note(mut self, n: impl Into<String>) -> Self {
        self.notes.push(n.into());
        self
    }
}

/// The overall outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No violation on what was explored (see `Stats::complete`).
    Pass,
    /// At least one violation.
    Violated,
    /// No violation found, but a budget stopped the exploration before its end.
    Incomplete,
}

/// How much was explored.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// Distinct states (exhaustive) or states visited (runs).
    pub states: u64,
    /// Transitions executed.
    pub transitions: u64,
    /// Runs (schedules) executed.
    pub runs: u64,
    /// Longest path explored (scheduler steps).
    pub max_depth: u64,
    /// Instructions interpreted.
    pub instrs: u64,
    /// Wall time.
    pub elapsed_ms: u64,
    /// True when every schedule was explored (exhaustive search that ran to its end).
    pub complete: bool,
    /// True when the exhaustive search used the partial-order reduction: every
    /// schedule was covered up to reordering independent steps (which preserves
    /// every finding and every terminal state; see `sim/README.md`).
    pub reduced: bool,
    /// Why exploration stopped early, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The result of simulating one parameter assignment.
#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    /// The collective.
    pub protocol: String,
    /// Parameters (world size first).
    pub params: BTreeMap<String, i64>,
    /// Back-to-back calls through one signal buffer.
    pub calls: usize,
    /// `round-robin`, `random` or `exhaustive`.
    pub schedule: String,
    /// Memory model.
    pub memory: Memory,
    /// Sticky polling was on (relaxed only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sticky_poll: bool,
    /// The wrap-around mode's start, if it was on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrap: Option<crate::machine::WrapStart>,
    /// Verdict.
    pub verdict: Verdict,
    /// One finding per code, each with the shortest trace found.
    pub findings: Vec<Finding>,
    /// Exploration statistics.
    pub stats: Stats,
}

impl SimReport {
    /// Parameters as `P=3 root=0 n=512`.
    pub fn params_text(&self) -> String {
        params_text(&self.params)
    }

    /// The one-line verdict.
    pub fn verdict_line(&self) -> String {
        let what = format!(
            "sim {} ({}; {} call{}, {}, {})",
            self.protocol,
            self.params_text(),
            self.calls,
            if self.calls == 1 { "" } else { "s" },
            self.schedule,
            match self.memory {
                Memory::Sc => "sc",
                Memory::Relaxed if self.sticky_poll => "relaxed, sticky polling",
                Memory::Relaxed => "relaxed",
            }
        );
        let explored = if self.schedule == "exhaustive" {
            format!(
                "{} states, {} transitions, {}",
                self.stats.states,
                self.stats.transitions,
                if self.stats.complete && self.stats.reduced {
                    "exploration complete (partial-order reduced)"
                } else if self.stats.complete {
                    "exploration complete"
                } else {
                    "exploration INCOMPLETE"
                }
            )
        } else {
            format!(
                "{} run{}, {} steps, sampled schedules only (not exhaustive)",
                self.stats.runs,
                if self.stats.runs == 1 { "" } else { "s" },
                self.stats.transitions
            )
        };
        match self.verdict {
            Verdict::Pass => format!("{what}: ok — {explored}"),
            Verdict::Violated => {
                let codes: Vec<&str> = self.findings.iter().map(|f| f.code.as_str()).collect();
                format!("{what}: VIOLATED {} — {explored}", codes.join(", "))
            }
            Verdict::Incomplete => format!(
                "{what}: incomplete, no violation in what was explored — {explored}: {}",
                self.stats.stopped.as_deref().unwrap_or("budget exhausted")
            ),
        }
    }

    /// The report as text: the verdict line, then each finding with its trace.
    /// `line` maps a span to a 1-based line number when the source is known.
    pub fn to_text(&self, line: &dyn Fn(Span) -> Option<u32>) -> String {
        let mut s = self.verdict_line();
        s.push('\n');
        if let Some(w) = &self.wrap {
            s.push_str(&format!("  {}\n", w.describe()));
        }
        if let (Some(why), Verdict::Violated) = (&self.stats.stopped, self.verdict) {
            s.push_str(&format!("  (exploration stopped early: {why})\n"));
        }
        for f in &self.findings {
            s.push('\n');
            s.push_str(&format!("{}: {}\n", f.code, f.message));
            if let Some(l) = f.span.and_then(line) {
                s.push_str(&format!("  at line {l}\n"));
            }
            for n in &f.notes {
                s.push_str(&format!("  note: {n}\n"));
            }
            if let Some(h) = &f.help {
                s.push_str(&format!("  help: {h}\n"));
            }
            s.push_str(&format!(
                "  trace ({}; {} scheduler step{}, shortest found):\n",
                params_text(&f.params),
                f.steps,
                if f.steps == 1 { "" } else { "s" }
            ));
            s.push_str(&trace_text(&f.trace, line));
        }
        s
    }
}

/// Parameters as `P=3 root=0 n=512`.
pub fn params_text(p: &BTreeMap<String, i64>) -> String {
    p.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A trace as text, one event per line.
pub fn trace_text(trace: &[Event], line: &dyn Fn(Span) -> Option<u32>) -> String {
    let mut s = String::new();
    for e in trace {
        let who = match e.block {
            Some(b) => format!("r{}.b{}", e.rank, e.block.map_or(b, |x| x)),
            None => format!("r{}", e.rank),
        };
        let loc = match (e.line.or_else(|| e.span.and_then(line)), &e.stmt) {
            (Some(l), Some(st)) => format!("  [line {l}: {st}]"),
            (None, Some(st)) => format!("  [{st}]"),
            _ => String::new(),
        };
        let mark = e
            .mark
            .as_ref()
            .map(|m| format!("   <-- {m}"))
            .unwrap_or_default();
        s.push_str(&format!(
            "  {:>4}  {:<6} call {}  {}{loc}{mark}\n",
            e.step, who, e.call, e.text
        ));
    }
    s
}
