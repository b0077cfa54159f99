//! Traced MPI runs (`collc run --target mpi --trace`): the run as [`super::run`] does it,
//! each rank recording its events (`collc_mpi.hpp` "Tracing", file named by env
//! `COLLC_MPI_TRACE_FILE`, one file per rank), then the recording checked against the IR
//! ([`crate::trace`]; a rank is one thread that runs its blocks in turn).

use super::run::{run, MpiOptions, MpiReport, MpiRunError};
use crate::host::traced::{trace_path, TraceFailure, DEFAULT_CAPACITY};
use crate::layout::Abi;
use crate::trace::{self, Conformance, Trace};
use collc_spec::eval::bind;

/// A traced MPI run: the launcher's verdict, and whether the trace conforms to the IR.
#[derive(Debug, Clone)]
pub struct MpiTraced {
    /// The run.
    pub report: MpiReport,
    /// The conformance check of the ranks' traces.
    pub trace: Result<Conformance, TraceFailure>,
}

impl MpiTraced {
    /// The run is right and its trace conforms.
    pub fn ok(&self) -> bool {
        self.report.ok() && self.trace.as_ref().is_ok_and(|c| c.conforms())
    }
}

/// Runs `p` over MPI with tracing on (`capacity` events per rank, 0 for the default) and
/// checks the trace.
pub fn run_traced(
    p: &collc_spec::Validated,
    opts: &MpiOptions,
    capacity: u64,
) -> Result<MpiTraced, MpiRunError> {
    let file = trace_path("mpi");
    let mut o = opts.clone();
    let cap = if capacity == 0 {
        DEFAULT_CAPACITY
    } else {
        capacity
    };
    o.env
        .push(("COLLC_MPI_TRACE_FILE".into(), file.display().to_string()));
    o.env
        .push(("COLLC_MPI_TRACE_CAPACITY".into(), cap.to_string()));
    let report = run(p, &o)?;
    let b = bind(p, &opts.params).map_err(|e| MpiRunError::Params(e.to_string()))?;
    let abi = Abi::of(p);
    let resolve = |name: &str| {
        abi.buffers
            .iter()
            .position(|x| x.name == name)
            .map(|i| i as i64)
    };
    let mut all = Trace::default();
    let mut failure = None;
    for r in 0..b.world {
        let path = format!("{}.rank{r}", file.display());
        match std::fs::read_to_string(&path) {
            Ok(text) => match trace::parse_with(&text, &resolve) {
                Ok(t) => all.threads.extend(t.threads),
                Err(e) => failure = Some(TraceFailure::Parse(e)),
            },
            // A job that aborted (a wait timeout elsewhere) leaves some ranks without a
            // file: their events are unknown, not wrong.
            Err(e) if report.outcome.json.is_some() => {
                failure = Some(TraceFailure::Read(format!("{path}: {e}")))
            }
            Err(_) => {}
        }
        let _ = std::fs::remove_file(&path);
    }
    // The launcher printed its report only after every rank finished every call.
    let completed = report.outcome.json.is_some();
    let trace = match failure {
        Some(f) => Err(f),
        None => trace::check(p, &b, i64::from(opts.calls), &all, false, completed)
            .map_err(TraceFailure::Eval),
    };
    Ok(MpiTraced { report, trace })
}
