//! Traced host runs (`collc run --trace`): the run as [`super::run_with_source`] does it,
//! with every thread recording its events ([`crate::trace`]), then the recording checked
//! against the IR.

use super::{execute, prepare, RunConfig, RunError, RunReport};
use crate::trace::{self, Conformance, TraceError};
use collc_grammar::Source;
use collc_spec::eval::EvalError;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Events each thread can record unless the caller says otherwise (56 bytes each).
pub const DEFAULT_CAPACITY: u64 = 1 << 16;

/// Why a trace could not be checked.
#[derive(Debug, Clone)]
pub enum TraceFailure {
    /// The runtime wrote no readable file.
    Read(String),
    /// The file is not a trace.
    Parse(TraceError),
    /// The IR's control flow could not be run under these parameters.
    Eval(EvalError),
}

impl std::fmt::Display for TraceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceFailure::Read(m) => write!(f, "cannot read the trace: {m}"),
            TraceFailure::Parse(e) => write!(f, "{e}"),
            TraceFailure::Eval(e) => write!(f, "cannot run the IR's control flow: {e}"),
        }
    }
}

/// A traced run: what the run found, and whether its trace conforms to the IR.
#[derive(Debug, Clone)]
pub struct TracedRun {
    /// The run (outputs, residue, status), as an untraced run reports it.
    pub report: RunReport,
    /// The conformance check of the trace.
    pub trace: Result<Conformance, TraceFailure>,
}

impl TracedRun {
    /// The run is right and its trace conforms.
    pub fn ok(&self) -> bool {
        self.report.ok() && self.trace.as_ref().is_ok_and(|c| c.conforms())
    }
}

/// A fresh file name for one run's trace.
pub(crate) fn trace_path(what: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "collc-{what}-trace-{}-{}.txt",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Generates, compiles (cached), runs with tracing on (`capacity` events per thread, 0 for
/// [`DEFAULT_CAPACITY`]) and checks both the outputs and the trace.
pub fn run_traced(
    p: &collc_spec::Validated,
    source: Option<&Source>,
    cfg: &RunConfig,
    capacity: u64,
) -> Result<TracedRun, RunError> {
    let mut prep = prepare(p, source, cfg)?;
    let file = trace_path("host");
    prep.job.trace_file = Some(file.clone());
    prep.job.trace_capacity = if capacity == 0 {
        DEFAULT_CAPACITY
    } else {
        capacity
    };
    let report = execute(p, &prep, cfg);
    let text = std::fs::read_to_string(&file);
    let _ = std::fs::remove_file(&file);
    let report = report?;
    let completed = report
        .calls_completed
        .iter()
        .all(|&c| i64::from(c) == i64::from(cfg.calls));
    let trace = text
        .map_err(|e| TraceFailure::Read(format!("{}: {e}", file.display())))
        .and_then(|t| trace::parse(&t).map_err(TraceFailure::Parse))
        .and_then(|t| {
            trace::check(p, &prep.bindings, i64::from(cfg.calls), &t, true, completed)
                .map_err(TraceFailure::Eval)
        });
    Ok(TracedRun { report, trace })
}
