//! The verifier's results as data. The JSON shape (serde) is the stable schema
//! documented in `verifier/README.md` (schema version [`SCHEMA`]).

pub mod cause;
pub mod evidence;
pub mod gate;
pub mod method;
pub mod obligation;
mod rewrite;
pub mod scope;
pub mod summary;

pub use obligation::{Obligation, Route};
pub use rewrite::Rewrite;

use collc_grammar::{Diagnostic, Source, Span};
use serde::ser::SerializeStruct;
use serde::Serialize;

/// Version of the JSON schema.
pub const SCHEMA: u32 = 3;

/// The six credit obligations, in report order.
pub const OBLIGATIONS: [&str; 6] = obligation::ids(Obligation::CREDIT);

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
    /// 1-based line of `primary` (filled by [`crate::verify`] when the source is given; 0
    /// otherwise).
    pub line: usize,
    /// What to say at the primary statement.
    pub primary_label: String,
    /// Other labelled statements.
    pub labels: Vec<(Span, String)>,
    /// How to fix it.
    pub help: Option<String>,
    /// Extra explanation lines.
    pub notes: Vec<String>,
    /// A bounded counterexample's trace (null for the symbolic obligations).
    pub trace: Option<Trace>,
    /// Where a missing `fence;` goes: before this statement ([`Report::locate`] turns it
    /// into the help "add `fence;` before line N").
    pub fence_before: Option<Span>,
    /// The edit that fixes it, when one can be derived ([`crate::fix`]; filled by
    /// [`crate::verify`] when the source is given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<collc_grammar::Fix>,
    /// The `collc sim` command that replays a bounded counterexample (`FILE` until
    /// [`Report::locate`] names the file).
    #[serde(skip)]
    pub replay: Option<String>,
    /// The edit the help proposes, as data, decided where the finding is made;
    /// [`crate::fix`] turns it into the source edits of `fix`.
    #[serde(skip)]
    pub rewrite: Option<crate::report::Rewrite>,
}

/// A bounded counterexample's trace: the simulator's events, rendered as
/// `collc sim` renders its traces (numbered steps, `[line N: statement]`, the
/// failing event marked with its finding code).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Trace {
    /// `trace (P=2 root=0 n=256; 14 scheduler steps over 3 calls, shortest found)`.
    pub title: String,
    /// The events shown: every one of a short trace, else the first and the last ones.
    pub events: Vec<collc_sim::report::Event>,
    /// Events left out (between `events[elided_at - 1]` and `events[elided_at]`).
    pub elided: usize,
    /// See `elided`.
    pub elided_at: usize,
}

impl Trace {
    /// The trace as text, one event per line (the lines the CLI filled in, if any).
    pub fn text(&self) -> String {
        let none = |_| None;
        let (head, tail) = self.events.split_at(self.elided_at.min(self.events.len()));
        let mut s = format!("{}:\n", self.title);
        s.push_str(&collc_sim::report::trace_text(head, &none));
        if self.elided > 0 {
            s.push_str(&format!(
                "  ... {} more event{} (replay for all) ...\n",
                self.elided,
                if self.elided == 1 { "" } else { "s" }
            ));
        }
        s.push_str(&collc_sim::report::trace_text(tail, &none));
        s.trim_end().to_string()
    }
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
            line: 0,
            primary_label: String::new(),
            labels: Vec::new(),
            help: None,
            notes: Vec::new(),
            trace: None,
            fence_before: None,
            fix: None,
            replay: None,
            rewrite: None,
        }
    }
}

/// World sizes `lo..=hi` (inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WorldRange {
    /// Smallest.
    pub lo: i64,
    /// Largest.
    pub hi: i64,
}

/// The result of one obligation. Its JSON form has, besides the fields, the `summary`
/// line rendered from them ([`ObligationResult::summary`]).
#[derive(Debug, Clone)]
pub struct ObligationResult {
    /// Stable id, e.g. `credit-balance`.
    pub id: String,
    /// Diagnostic code, e.g. `verify::credit-balance`.
    pub code: String,
    /// Outcome.
    pub status: Status,
    /// For proved: the domain covered; for checked: the bounds (as data, rendered by its
    /// `Display`: [`crate::report::scope`]).
    pub scope: Option<scope::Scope>,
    /// The world sizes its status was decided for, every value of each: the declared
    /// domain for a proof over it, the enumerated `lo..=min(hi, TABLE.enum_world_max)` for an
    /// enumeration. `None` when it decided no range of world sizes (a bounded search
    /// sampling a few small instances, or an undecided obligation).
    pub world: Option<WorldRange>,
    /// For unknown: why.
    pub reason: Option<String>,
    /// What the route that decided it claims, in its words: what it states and what it
    /// counted (`every written credit cell nets exactly 0 per call (12 checks: ...)`),
    /// set where the result is made. How far and how that holds is the evidence's, which
    /// [`ObligationResult::summary`] adds.
    pub claim: String,
    /// Counterexamples and warnings.
    pub findings: Vec<Finding>,
    /// What the routes showed, as data ([`crate::report::evidence`]): the world sizes proved with
    /// P symbolic, by enumeration or vacuously, a complete bounded search, the
    /// counterexample. What reads how something was proved reads this.
    pub evidence: crate::report::evidence::Evidence,
}

impl Report {
    /// The values of the parameter `name` that the counterexamples of the warnings name
    /// (ascending, once each).
    pub fn warned_values(&self, name: &str) -> Vec<i64> {
        let mut out: Vec<i64> = self
            .obligations
            .iter()
            .filter(|o| o.status == Status::Warning)
            .flat_map(|o| &o.findings)
            .flat_map(|f| &f.params)
            .filter(|v| v.name == name)
            .map(|v| v.value)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl Serialize for ObligationResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("ObligationResult", 9)?;
        o.serialize_field("id", &self.id)?;
        o.serialize_field("code", &self.code)?;
        o.serialize_field("status", &self.status)?;
        o.serialize_field("scope", &self.scope)?;
        o.serialize_field("world", &self.world)?;
        o.serialize_field("reason", &self.reason)?;
        o.serialize_field("summary", &self.summary())?;
        o.serialize_field("findings", &self.findings)?;
        o.serialize_field("evidence", &self.evidence)?;
        o.end()
    }
}

impl ObligationResult {
    /// One line on what was shown: the claim, and how far and how it holds from the
    /// evidence ([`summary::line`], the one place it is rendered).
    pub fn summary(&self) -> String {
        summary::line(self)
    }
    /// The scope's text ([`scope::Scope`]'s one rendering), if it has one.
    pub fn scope_text(&self) -> Option<String> {
        self.scope.as_ref().map(ToString::to_string)
    }
    /// How a `proved` obligation was shown, from its evidence: `P symbolic`, `by
    /// enumeration` or `vacuous` (`None` for other statuses).
    pub fn how(&self) -> Option<&'static str> {
        if self.status != Status::Proved {
            return None;
        }
        self.evidence.how(self.world?).map(evidence::How::phrase)
    }
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
    /// Wall-clock time of the symbolic obligations.
    pub millis: u64,
    /// Wall-clock time of the bounded obligations (0 when skipped).
    pub bounded_millis: u64,
    /// Of which: abstract execution.
    pub exec_millis: u64,
    /// Of which: the per-cell checks (including Z3).
    pub check_millis: u64,
    /// Wall-clock time of the parametric route (P symbolic, `src/engine/param/`).
    pub param_millis: u64,
}

/// The whole result of `verify`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Schema version ([`SCHEMA`]).
    pub schema: u32,
    /// The collective's name.
    pub protocol: String,
    /// How the domain was covered (which parameters were enumerated, which symbolic, and
    /// how many deciding obligations were proved with P symbolic).
    pub method: method::Method,
    /// The declared world-size domain (`hi` = `collc_spec::ir::MAX_WORLD` for `P >= LO`).
    pub world: WorldRange,
    /// One entry per obligation (simulator-backed ones are appended with `checked`).
    pub obligations: Vec<ObligationResult>,
    /// Counters.
    pub stats: Stats,
}

impl Report {
    /// Exit code of `collc verify`: 1 violated, 3 undecided (unknown or skipped), else 0
    /// (the verdict of [`crate::report::gate::verdict`]).
    pub fn exit_code(&self) -> i32 {
        match crate::report::gate::verdict(self) {
            crate::report::gate::Verdict::Safe => 0,
            crate::report::gate::Verdict::Violated => 1,
            crate::report::gate::Verdict::Undecided => 3,
        }
    }
    /// Fills in what needs the source text: the 1-based lines of findings, contributions
    /// and trace events, the file name in replay commands, and the help of findings that
    /// say where a `fence;` goes.
    pub fn locate(&mut self, src: &Source) {
        let named = |r: &mut Option<String>| {
            if let Some(rest) = r.as_deref().and_then(|x| x.strip_prefix("collc sim FILE ")) {
                *r = Some(format!("collc sim {} {rest}", src.name));
            }
        };
        for o in &mut self.obligations {
            if let Some(c) = o.evidence.counterexample.as_mut() {
                named(&mut c.replay);
            }
            for f in &mut o.findings {
                f.line = f.primary.map_or(0, |s| src.line_col(s.start).0);
                for c in &mut f.contributions {
                    c.line = src.line_col(c.span.start).0;
                }
                for e in f.trace.iter_mut().flat_map(|t| t.events.iter_mut()) {
                    e.line = e.span.map(|s| src.line_col(s.start).0 as u32);
                }
                named(&mut f.replay);
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
    /// The largest world size the report's verdict covers: the declared `hi` when every
    /// obligation that decided a range of world sizes ([`ObligationResult::world`]) decided
    /// it for the whole declared domain, else the smallest `hi` among them (the
    /// enumeration cap, `planning::TABLE.enum_world_max`, for an enumerated obligation). `None`
    /// when no obligation decided a range (e.g. every one undecided). Code generators
    /// take it as the kernels' rank limit.
    pub fn world_limit(&self) -> Option<i64> {
        self.obligations
            .iter()
            .filter_map(|o| o.world)
            .map(|w| w.hi)
            .min()
            .map(|h| h.min(self.world.hi))
    }
    /// The result of one obligation.
    pub fn get(&self, id: &str) -> Option<&ObligationResult> {
        self.obligations.iter().find(|o| o.id == id)
    }
    /// What replays the refusal of the violated obligation `o`, or why no run does
    /// (`None` when `o` is not violated): its own counterexample's replay, else the first
    /// violated bounded obligation of its class ([`Obligation::shown_by`]) with a replay.
    pub fn witness(&self, o: &ObligationResult) -> Option<evidence::Witness> {
        use evidence::{NotReplayed, Witness};
        if o.status != Status::Violated {
            return None;
        }
        if let Some(command) = o
            .evidence
            .counterexample
            .as_ref()
            .and_then(|c| c.replay.clone())
        {
            return Some(Witness::Replay { command });
        }
        let class = Obligation::from_id(&o.id).map_or(&[][..], |x| x.shown_by());
        let of_class: Vec<&ObligationResult> =
            class.iter().filter_map(|x| self.get(x.id())).collect();
        let shown = of_class.iter().find_map(|b| {
            let c = b.evidence.counterexample.as_ref()?;
            (b.status == Status::Violated).then_some(Witness::Shown {
                obligation: b.id.clone(),
                params: c.params.clone(),
                command: c.replay.clone()?,
            })
        });
        let ran = of_class.iter().any(|b| b.status != Status::Skipped);
        Some(shown.unwrap_or(Witness::NotReplayed {
            reason: if ran {
                NotReplayed::NotShown
            } else {
                NotReplayed::NoBounded
            },
        }))
    }
    /// Findings and unknowns as diagnostics (labels on the offending statements).
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for o in &self.obligations {
            match o.status {
                Status::Violated | Status::Warning => {
                    let w = self.witness(o).as_ref().and_then(|w| witness_note(o, w));
                    out.extend(o.findings.iter().map(|f| match &w {
                        Some(n) => finding_diagnostic(o, f).with_note(n.clone()),
                        None => finding_diagnostic(o, f),
                    }));
                }
                Status::Unknown => out.push(undecided_diagnostic(o)),
                _ => {}
            }
        }
        out
    }
}

/// The diagnostic of one finding of a violated obligation (or a warning).
fn finding_diagnostic(o: &ObligationResult, f: &Finding) -> Diagnostic {
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
    if let Some(x) = &f.fix {
        d = d.with_fix(x.clone());
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
    if let Some(t) = &f.trace {
        d = d.with_note(t.text());
    }
    d
}

/// The note of a symbolic obligation's witness (a bounded one's finding carries its own
/// trace and replay; so does a symbolic one whose counterexample has a replay).
fn witness_note(o: &ObligationResult, w: &evidence::Witness) -> Option<String> {
    use evidence::{NotReplayed, Witness};
    let class = || {
        let ids: Vec<&str> = Obligation::from_id(&o.id)
            .map_or(&[][..], |x| x.shown_by())
            .iter()
            .map(|x| x.id())
            .collect();
        ids.join(", ")
    };
    if Obligation::from_id(&o.id).is_none_or(|x| x.route() == Route::Bounded) {
        return None;
    }
    match w {
        Witness::Replay { .. } => None,
        Witness::Shown {
            obligation,
            params,
            command,
        } => {
            let at: Vec<String> = params
                .iter()
                .map(|p| format!("{} = {}", p.name, p.value))
                .collect();
            Some(format!(
                "witness: verify::{obligation} at {} shows it (replay: {command})",
                at.join(", ")
            ))
        }
        Witness::NotReplayed {
            reason: NotReplayed::NoBounded,
        } => Some(format!(
            "no witness: the bounded obligations did not run (--no-bounded), so no run of its class ({}) was tried",
            class()
        )),
        Witness::NotReplayed {
            reason: NotReplayed::NotShown,
        } => Some(format!(
            "no witness: the bounded search shows no violation of its class ({}) within its scopes: this symbolic finding lies past them, or no schedule of the simulator reaches it there",
            class()
        )),
    }
}

/// The diagnostic of an undecided obligation: its reason, and what would decide it (from
/// its route and its evidence's [`evidence::Undecided`]).
fn undecided_diagnostic(o: &ObligationResult) -> Diagnostic {
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
    let bounded = Obligation::from_id(&o.id).is_some_and(|x| x.route() == Route::Bounded);
    let help = match o.evidence.undecided {
        _ if bounded => "this is not a pass; raise --bounded-budget-ms",
        Some(evidence::Undecided::Clock) => "this is not a pass; raise --timeout-ms",
        Some(evidence::Undecided::Resources) => "this is not a pass; Z3 could not decide the form within its resource limit: split or simplify it",
        Some(evidence::Undecided::Form) | None => "this is not a pass; rewrite the form as the reason says",
    };
    d.with_help(help)
}
