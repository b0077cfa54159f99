//! Run generated kernels on CPU threads: emit the `pto::comm` C++, compile it with the system
//! C++ compiler into a shared library (cached by content hash), run P rank threads for K
//! back-to-back calls through one signal buffer with distinct payloads (a `per call` window
//! or value signal gets a fresh buffer per call, see [`crate::layout`]), and check the
//! outputs against the collective's meaning (`collc_spec::meaning`) and every credit cell
//! back at zero.
//!
//! ```no_run
//! # fn demo(p: &collc_spec::Validated) {
//! use collc_backend::host::{run, RunConfig};
//! let mut cfg = RunConfig::default();
//! cfg.params.insert("P".into(), 4);
//! cfg.params.insert("n".into(), 1000);
//! let report = run(p, &cfg).expect("kernel built and ran");
//! assert!(report.ok(), "{}", report.summary());
//! # }
//! ```
//!
//! Two executions: [`Exec::InProcess`] loads the library into this process (libloading) —
//! what Rust host programs and benches use; [`Exec::Subprocess`] runs the C++ runner
//! (`collc/host_runner.cpp`) and kills it after a wall-clock limit, so even a kernel that
//! spins outside a TWAIT cannot hang the caller; ThreadSanitizer builds ([`Build::Tsan`])
//! always use it (the sanitizer runtime must be in the executable).

pub mod compile;
pub mod ffi;
pub mod job;
pub mod pypto;
pub mod traced;

pub use compile::{Build, CompileError};
pub use job::{ExecError, Job, Outcome};
pub use traced::{run_traced, TraceFailure, TracedRun};

use crate::cpp::{self, EmitOptions, Target};
use crate::oracle::{self, Check, Plan};
use collc_grammar::{Diagnostic, Source};
use collc_spec::eval::{bind, Bindings};
use collc_spec::ir::Protocol;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How to execute the compiled kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exec {
    /// `dlopen` into this process.
    InProcess,
    /// The C++ runner subprocess (killed after the wall-clock limit).
    Subprocess,
}

/// A host run's configuration.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Parameter values by name, including the world size (e.g. `P`).
    pub params: BTreeMap<String, i64>,
    /// Back-to-back calls through one signal buffer.
    pub calls: u32,
    /// Barrier of all rank threads between calls (hides cross-call skew; an experiment aid:
    /// no test harness sets it, the lifetimes are what make back-to-back calls safe).
    pub host_barrier: bool,
    /// Random sleeps/yields at every notify and after every wait (seed).
    pub chaos: Option<u64>,
    /// TWAIT deadline in ms (0: `COLLC_TWAIT_TIMEOUT_MS` or 10 s).
    pub twait_timeout_ms: u32,
    /// Build configuration.
    pub build: Build,
    /// Execution.
    pub exec: Exec,
    /// Wall-clock limit of a subprocess run.
    pub wall_limit: Duration,
    /// The verdict's world limit (`collc_verifier::Gate::world_limit`): the kernel's
    /// `kMaxSupportedRanks`, and a larger world size is refused before anything runs.
    /// `None`: the declared domain's upper bound.
    pub world_limit: Option<i64>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            params: BTreeMap::new(),
            calls: 3,
            host_barrier: false,
            chaos: None,
            twait_timeout_ms: 0,
            build: Build::Opt,
            exec: Exec::InProcess,
            wall_limit: Duration::from_secs(120),
            world_limit: None,
        }
    }
}

/// Why a host run could not produce a report.
#[derive(Debug, Clone)]
pub enum RunError {
    /// Parameters missing, unknown, out of domain, or a `require` fails.
    Params(String),
    /// The C++ generator refused the protocol.
    Emit(Vec<Diagnostic>),
    /// Compilation failed (or no compiler).
    Compile(CompileError),
    /// The kernel could not be executed (load failure, runner crash, hang, TSan report).
    Exec(ExecError),
    /// An invalid configuration.
    Config(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Params(m) | RunError::Config(m) => f.write_str(m),
            RunError::Emit(d) => {
                let msgs: Vec<String> = d
                    .iter()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .collect();
                write!(f, "cannot generate C++: {}", msgs.join("; "))
            }
            RunError::Compile(e) => write!(f, "{e}"),
            RunError::Exec(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// What a host run found.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The launcher's status (`CollcStatus`: 0 ok, 2 deadlock/timeout, 3 kernel error,
    /// 4 signal residue, ...).
    pub status: i32,
    /// The launcher's message.
    pub message: String,
    /// Calls completed per rank.
    pub calls_completed: Vec<i32>,
    /// Credit cells not back at zero after the run.
    pub nonzero_cells: u64,
    /// Wall time of the run (launcher), ns.
    pub elapsed_ns: f64,
    /// The output check.
    pub check: Check,
    /// The kernel library.
    pub library: PathBuf,
    /// The command that compiled it.
    pub compile_command: String,
    /// True if the library came from the cache.
    pub cached: bool,
    /// P, C, K.
    pub shape: (i64, i64, u32),
}

impl RunReport {
    /// True if the run completed, every output was right and every cell is back at zero.
    pub fn ok(&self) -> bool {
        self.status == 0 && self.check.wrong == 0 && self.check.missing == 0
    }
    /// The status name.
    pub fn status_name(&self) -> &'static str {
        match self.status {
            0 => "ok",
            1 => "invalid run config",
            2 => "deadlock (TWAIT timeout)",
            3 => "kernel error",
            4 => "signal residue",
            5 => "system error",
            _ => "unknown status",
        }
    }
    /// What failed: the status when the run did not complete, else what the output check
    /// found (a completed run with wrong or missing outputs is not "ok").
    fn failure_name(&self) -> &'static str {
        match (self.status, self.check.wrong, self.check.missing) {
            (0, 0, m) if m > 0 => "missing output element(s)",
            (0, _, _) => "wrong output",
            _ => self.status_name(),
        }
    }
    /// A few lines for humans.
    pub fn summary(&self) -> String {
        let (p, c, k) = self.shape;
        let mut s = if self.ok() {
            format!(
                "ok: P={p} x {c} block(s), {k} call(s): {} output element(s) right, every credit cell back at 0 ({:.1} us/call)",
                self.check.compared,
                self.elapsed_ns / 1e3 / f64::from(k.max(1))
            )
        } else {
            format!(
                "FAILED: P={p} x {c} block(s), {k} call(s): {}",
                self.failure_name()
            )
        };
        if self.status != 0 {
            s.push('\n');
            s.push_str(&self.message);
        }
        if self.check.wrong > 0 {
            s.push_str(&format!(
                "\n{} wrong output element(s) of {} compared; first:",
                self.check.wrong, self.check.compared
            ));
            for f in &self.check.first {
                s.push_str("\n  ");
                s.push_str(f);
            }
        }
        if self.check.missing > 0 && self.status == 0 {
            s.push_str(&format!(
                "\n{} (call, rank) output(s) were never collected",
                self.check.missing
            ));
        }
        s
    }
}

/// A kernel compiled and ready to run, with its job and oracle plan.
pub struct Prepared {
    /// The bound parameters.
    pub bindings: Bindings,
    /// The job (staged payloads).
    pub job: Job,
    /// What to check.
    pub plan: Plan,
    /// The compiled library.
    pub built: compile::Built,
}

/// Binds, emits, compiles (cached) and builds the job.
pub fn prepare(
    p: &collc_spec::Validated,
    source: Option<&Source>,
    cfg: &RunConfig,
) -> Result<Prepared, RunError> {
    prepare_with(p, cfg, &|_| {
        cpp::emit(
            p,
            Target::Host,
            &EmitOptions {
                source,
                warning: Vec::new(),
                world_limit: cfg.world_limit,
            },
        )
        .map_err(RunError::Emit)
    })
}

/// As [`prepare`], with the library's C++ source made by `text` from the bound parameters
/// (a kernel with the collc host ABI, e.g. [`crate::cpp::pypto::cpu_shim`] around a
/// pypto-ABI kernel).
pub fn prepare_with(
    p: &Protocol,
    cfg: &RunConfig,
    text: &dyn Fn(&Bindings) -> Result<String, RunError>,
) -> Result<Prepared, RunError> {
    if cfg.build == Build::Tsan && cfg.exec == Exec::InProcess {
        return Err(RunError::Config(
            "ThreadSanitizer builds run in the subprocess runner (the sanitizer runtime must be in the executable)".into(),
        ));
    }
    let (bindings, job, plan) = job_of(p, cfg)?;
    let text = text(&bindings)?;
    let built = compile::library(&text, cfg.build).map_err(RunError::Compile)?;
    Ok(Prepared {
        bindings,
        job,
        plan,
        built,
    })
}

/// Binds the parameters (world and block counts within the CPU launcher's) and builds the
/// job (staged payloads, flags of `cfg`) and the oracle's plan: everything of a run but the
/// kernel.
pub fn job_of(p: &Protocol, cfg: &RunConfig) -> Result<(Bindings, Job, Plan), RunError> {
    let bindings = bind(p, &cfg.params).map_err(|e| RunError::Params(e.to_string()))?;
    crate::ranks::check_run_world(
        p,
        bindings.world,
        cfg.world_limit,
        "CPU launcher",
        crate::ranks::HOST_MAX_RANKS,
    )
    .map_err(RunError::Params)?;
    if !(1..=64).contains(&bindings.blocks) {
        return Err(RunError::Params(format!(
            "{} blocks per rank; the CPU launcher runs 1..=64",
            bindings.blocks
        )));
    }
    let (mut job, plan) =
        oracle::build_job(p, &bindings, cfg.calls as usize).map_err(RunError::Params)?;
    if cfg.host_barrier {
        job.flags |= job::FLAG_HOST_BARRIER;
    }
    if let Some(seed) = cfg.chaos {
        job.flags |= job::FLAG_CHAOS;
        job.chaos_seed = seed;
        job.chaos_max_us = 200;
    }
    job.twait_timeout_ms = cfg.twait_timeout_ms;
    Ok((bindings, job, plan))
}

/// Executes a prepared run and checks it.
pub fn execute(p: &Protocol, prep: &Prepared, cfg: &RunConfig) -> Result<RunReport, RunError> {
    let out = match cfg.exec {
        Exec::InProcess => job::execute_in_process(&prep.built.path, &prep.job),
        Exec::Subprocess => {
            let runner = compile::runner(cfg.build).map_err(RunError::Compile)?;
            job::execute_subprocess(&runner.path, &prep.built.path, &prep.job, cfg.wall_limit)
        }
    }
    .map_err(RunError::Exec)?;
    Ok(report_of(p, prep, cfg.calls, out))
}

/// Checks a run's outcome against the collective's semantics: the report.
pub fn report_of(p: &Protocol, prep: &Prepared, calls: u32, out: Outcome) -> RunReport {
    let check = oracle::check(p, &prep.bindings, &prep.plan, &prep.job, &out);
    RunReport {
        status: out.status,
        message: out.message,
        calls_completed: out.calls_completed,
        nonzero_cells: out.nonzero_cells,
        elapsed_ns: out.elapsed_ns,
        check,
        library: prep.built.path.clone(),
        compile_command: prep.built.command.clone(),
        cached: prep.built.cached,
        shape: (prep.bindings.world, prep.bindings.blocks, calls),
    }
}

/// Generates, compiles (cached), runs and checks a protocol on CPU threads.
pub fn run(p: &collc_spec::Validated, cfg: &RunConfig) -> Result<RunReport, RunError> {
    run_with_source(p, None, cfg)
}

/// As [`run`], with the source text for `.coll` line comments in the generated C++.
pub fn run_with_source(
    p: &collc_spec::Validated,
    source: Option<&Source>,
    cfg: &RunConfig,
) -> Result<RunReport, RunError> {
    let prep = prepare(p, source, cfg)?;
    execute(p, &prep, cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(status: i32, wrong: u64, missing: u64) -> RunReport {
        RunReport {
            status,
            message: String::from("launcher message"),
            calls_completed: vec![3, 3],
            nonzero_cells: 0,
            elapsed_ns: 1e3,
            check: Check {
                compared: 8,
                wrong,
                first: Vec::new(),
                missing,
            },
            library: PathBuf::new(),
            compile_command: String::new(),
            cached: false,
            shape: (2, 1, 3),
        }
    }

    #[test]
    fn a_completed_run_with_wrong_outputs_does_not_read_ok() {
        let s = report(0, 2, 0).summary();
        assert!(
            s.starts_with("FAILED: P=2 x 1 block(s), 3 call(s): wrong output"),
            "{s}"
        );
        let s = report(0, 0, 1).summary();
        assert!(
            s.starts_with("FAILED: P=2 x 1 block(s), 3 call(s): missing output"),
            "{s}"
        );
        let s = report(2, 0, 0).summary();
        assert!(
            s.starts_with("FAILED: P=2 x 1 block(s), 3 call(s): deadlock"),
            "{s}"
        );
        assert!(report(0, 0, 0).summary().starts_with("ok: "));
    }
}
