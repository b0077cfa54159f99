//! Bounded checks on request (`collc/check`, or the command `collc.check`): the
//! symbolic obligations, then the simulator's bounded obligations one world size at
//! a time, on a worker thread. Each stage is reported with `$/progress`
//! (begin/report/end). A `$/cancelRequest` is answered at once by the server loop
//! (`RequestCancelled`) and sets the job's stop flag, which the simulator's explorer
//! reads every few hundred states: a running bounded search stops at once, and the
//! worker, which reads the job's state before every stage, stops there (each bounded
//! stage has its share of the budget). The diagnostics
//! found are published (unless the document changed meanwhile) and the request
//! answers with the verdict and every obligation's status.

use crate::diagnostics;
use collc_sim::StopFlag;
use collc_verifier::bounded::{self, BoundedOptions};
use collc_verifier::{ObligationResult, Report, Status};
use lsp_server::{Message, Notification, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::{
    notification, NumberOrString, ProgressParams, ProgressParamsValue, Uri, WorkDoneProgress,
    WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use serde::Deserialize;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The custom request.
pub const METHOD: &str = "collc/check";
/// The same as a `workspace/executeCommand` command (argument: the document's URI).
pub const COMMAND: &str = "collc.check";
/// World sizes checked by default (from the domain's lower end, at least 2).
pub const MAX_RANKS: i64 = 8;

/// The parameters of `collc/check`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Params {
    /// The document.
    pub text_document: lsp_types::TextDocumentIdentifier,
    /// Wall-clock budget of the bounded stages together (default: `collc verify`'s).
    #[serde(default)]
    pub budget_ms: Option<u64>,
    /// The largest world size checked (default [`MAX_RANKS`]).
    #[serde(default)]
    pub max_ranks: Option<i64>,
    /// The client's progress token.
    #[serde(default)]
    pub work_done_token: Option<NumberOrString>,
}

/// One check to run.
pub struct Job {
    /// The request it answers.
    pub id: RequestId,
    /// The document, its text and version when the request came.
    pub uri: Uri,
    pub text: String,
    pub version: Option<i32>,
    /// The progress token, if the client gave one or accepted one.
    pub token: Option<NumberOrString>,
    pub budget: Duration,
    pub max_ranks: i64,
    /// [`State`]: running, cancelled (the loop answered), or answered by the worker.
    pub state: Arc<AtomicU8>,
    /// Set with the cancellation: stops the bounded search mid-way.
    pub stop: StopFlag,
    /// The document's edit counter, and its value when the request came.
    pub edits: Arc<AtomicU64>,
    pub edits_then: u64,
}

/// What the server loop keeps of a running job: its state and its stop flag.
pub struct Handle {
    /// [`Job::state`].
    pub state: Arc<AtomicU8>,
    /// [`Job::stop`].
    pub stop: StopFlag,
}

/// A job's state, shared by the server loop and the worker: whoever moves it off
/// `RUNNING` first answers the request.
pub struct State;

impl State {
    /// Still running.
    pub const RUNNING: u8 = 0;
    /// Cancelled: the server loop answered `RequestCancelled`.
    pub const CANCELLED: u8 = 1;
    /// Finished: the worker answered.
    pub const DONE: u8 = 2;

    /// Moves `s` from running to `to`; true when this call did.
    pub fn claim(s: &AtomicU8, to: u8) -> bool {
        s.compare_exchange(Self::RUNNING, to, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}

/// Where a job's messages go.
pub type Out = crossbeam_channel::Sender<Message>;

impl Job {
    fn progress(&self, out: &Out, value: WorkDoneProgress) {
        if let Some(token) = &self.token {
            let params = ProgressParams {
                token: token.clone(),
                value: ProgressParamsValue::WorkDone(value),
            };
            let _ = out
                .send(Notification::new(notification::Progress::METHOD.to_string(), params).into());
        }
    }

    fn end(&self, out: &Out, message: &str) {
        self.progress(
            out,
            WorkDoneProgress::End(WorkDoneProgressEnd {
                message: Some(message.into()),
            }),
        );
    }

    /// Runs the job to its end or its cancellation, sending the progress, the
    /// diagnostics and the answer.
    pub fn run(self, out: &Out) {
        match self.stages(out) {
            Some(v) if State::claim(&self.state, State::DONE) => {
                self.end(out, "done");
                let _ = out.send(Response::new_ok(self.id.clone(), v).into());
            }
            _ => self.end(out, "cancelled"),
        }
    }

    fn cancelled(&self) -> bool {
        self.state.load(Ordering::SeqCst) == State::CANCELLED
    }

    /// The stages; `None` when cancelled.
    fn stages(&self, out: &Out) -> Option<serde_json::Value> {
        self.progress(
            out,
            WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "collc check".into(),
                cancellable: Some(true),
                message: Some("front end".into()),
                percentage: Some(0),
            }),
        );
        let checked = collc_spec::front(&collc_verifier::Ranges, &self.text);
        let Some(p) = checked.protocol else {
            self.publish(out, &checked.diagnostics);
            return Some(serde_json::json!({ "verdict": "invalid", "obligations": [] }));
        };
        if self.cancelled() {
            return None;
        }
        self.report(out, "symbolic obligations", 0, 1);
        let source = collc_grammar::Source::new(self.uri.as_str(), self.text.as_str());
        let opts = collc_verifier::Options {
            source: Some(&source),
            ..collc_verifier::Options::symbolic_only()
        };
        let mut report = collc_verifier::verify(&p, &opts);
        let lo = report.world.lo.max(2);
        let worlds: Vec<i64> = (lo..=report.world.hi.min(self.max_ranks)).collect();
        let total = 1 + worlds.len() as u32;
        let share = self.budget / (worlds.len().max(1) as u32);
        let mut bounded: Vec<ObligationResult> = Vec::new();
        for (i, pv) in worlds.iter().enumerate() {
            if self.cancelled() {
                return None;
            }
            self.report(out, &format!("bounded, P = {pv}"), 1 + i as u32, total);
            let defaults = BoundedOptions::default();
            let b = BoundedOptions {
                budget: share,
                file: self.uri.as_str().to_string(),
                bounds: collc_sim::bounded::Bounds {
                    ranks: (*pv, *pv),
                    ..defaults.bounds.clone()
                },
                relaxed_bounds: collc_sim::bounded::Bounds {
                    ranks: (*pv, *pv),
                    ..defaults.relaxed_bounds.clone()
                },
                wrap_bounds: collc_sim::bounded::Bounds {
                    ranks: (*pv, *pv),
                    ..defaults.wrap_bounds.clone()
                },
                stop: Some(Arc::clone(&self.stop)),
                ..defaults
            };
            merge(&mut bounded, bounded::check(&p, &b));
        }
        if self.cancelled() {
            return None;
        }
        let symbolic = report.obligations.clone();
        bounded::add(&mut report, bounded);
        keep_proofs(&mut report, &symbolic);
        report.locate(&source);
        collc_verifier::fix::attach(&mut report, &source);
        let mut diags = checked.diagnostics;
        diags.extend(report.diagnostics());
        self.publish(out, &diags);
        Some(summary(&report, &worlds))
    }

    fn report(&self, out: &Out, what: &str, done: u32, total: u32) {
        self.progress(
            out,
            WorkDoneProgress::Report(WorkDoneProgressReport {
                cancellable: Some(true),
                message: Some(what.into()),
                percentage: Some(done * 100 / total.max(1)),
            }),
        );
    }

    fn publish(&self, out: &Out, found: &[collc_grammar::Diagnostic]) {
        if self.edits.load(Ordering::SeqCst) == self.edits_then {
            let n = diagnostics::publication(&self.uri, &self.text, found, self.version);
            let _ = out.send(n.into());
        }
    }
}

/// After the bounded results are added, what the symbolic half proved for every world
/// size stands unless a bounded run violated it — the rule `collc_verifier::verify`
/// applies (the P-symbolic deadlock proof is applied after the bounded runs), so
/// `collc/check` and `collc verify` give an obligation the same status. (Adding the
/// bounded results alone replaced the deadlock proof with the bounded search's
/// `unknown`: the check said "undecided" where `collc verify` said "proved".)
fn keep_proofs(report: &mut Report, symbolic: &[ObligationResult]) {
    for o in report.obligations.iter_mut() {
        if o.status == Status::Violated {
            continue;
        }
        if let Some(s) = symbolic
            .iter()
            .find(|s| s.id == o.id && s.status == Status::Proved)
        {
            *o = s.clone();
        }
    }
}

/// Folds one world size's bounded results into those so far: per obligation the
/// first violation, else the first undecided result, else the latest.
fn merge(acc: &mut Vec<ObligationResult>, next: Vec<ObligationResult>) {
    let rank = |s: Status| match s {
        Status::Violated => 3,
        Status::Warning => 2,
        Status::Unknown | Status::Skipped => 1,
        Status::Proved | Status::Checked => 0,
    };
    for r in next {
        match acc.iter_mut().find(|o| o.id == r.id) {
            None => acc.push(r),
            Some(o) if rank(r.status) > rank(o.status) => *o = r,
            Some(o) if rank(o.status) == 0 => *o = r,
            Some(_) => {}
        }
    }
}

/// The answer: the verdict, the world sizes explored, each obligation's status.
fn summary(report: &Report, worlds: &[i64]) -> serde_json::Value {
    let verdict = match collc_verifier::gate::verdict(report) {
        collc_verifier::Verdict::Safe => "safe",
        collc_verifier::Verdict::Violated => "violated",
        collc_verifier::Verdict::Undecided => "undecided",
    };
    let obligations: Vec<serde_json::Value> = report
        .obligations
        .iter()
        .map(|o| serde_json::json!({ "id": o.id, "status": o.status }))
        .collect();
    serde_json::json!({ "verdict": verdict, "worlds": worlds, "obligations": obligations })
}
