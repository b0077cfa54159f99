//! The MPI pipeline as one call, next to [`crate::host::run`]: bind the parameters, emit
//! the program (with the caller's stamp), build it (cached), launch it under `mpirun`
//! and return the launcher's verdict. The verifier gate is the caller's (the backend
//! does not depend on the verifier): `collc run --target mpi` runs it first.

use super::build::{self, Built, MpiError};
use super::launch::{self, LaunchConfig, Outcome};
use super::EmitOptions;
use collc_grammar::{Diagnostic, Source};
use collc_spec::eval::bind;
use collc_spec::ir::Protocol;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone)]
pub struct MpiOptions<'a> {
    /// The source (for `.coll` line comments in the program), if available.
    pub source: Option<&'a Source>,
    /// Lines stamped into the program's header (the gate's `--allow-unverified` stamp).
    pub warning: Vec<String>,
    /// Parameter values by name, the world size (the process count) included.
    pub params: BTreeMap<String, i64>,
    /// Back-to-back calls through one signal window.
    pub calls: u32,
    /// An Open MPI hostfile (a cluster run); `None`: this machine.
    pub hostfile: Option<PathBuf>,
    /// The ranks' wait deadline in ms (0: the runtime's default).
    pub wait_timeout_ms: u64,
    /// Wall-clock deadline of the whole `mpirun`.
    pub deadline: Duration,
    /// More environment for the ranks (e.g. `COLLC_MPI_JITTER_US`).
    pub env: Vec<(String, String)>,
    /// Extra `mpirun` arguments.
    pub mpirun_args: Vec<String>,
    /// The verdict's world limit (see `crate::host::RunConfig::world_limit`).
    pub world_limit: Option<i64>,
}

impl Default for MpiOptions<'_> {
    fn default() -> Self {
        let l = LaunchConfig::default();
        MpiOptions {
            source: None,
            warning: Vec::new(),
            params: BTreeMap::new(),
            calls: l.calls,
            hostfile: l.hostfile,
            wait_timeout_ms: l.wait_timeout_ms,
            deadline: l.deadline,
            env: l.env,
            mpirun_args: l.mpirun_args,
            world_limit: None,
        }
    }
}

/// Why no run happened.
#[derive(Debug, Clone)]
pub enum MpiRunError {
    /// Parameters missing, unknown, out of domain, or a `require` fails; or a bad option.
    Params(String),
    /// The generator refused the protocol.
    Emit(Vec<Diagnostic>),
    /// Tools missing, compile failure, `mpirun` could not start.
    Mpi(MpiError),
}

impl std::fmt::Display for MpiRunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MpiRunError::Params(m) => f.write_str(m),
            MpiRunError::Emit(d) => {
                let m: Vec<String> = d
                    .iter()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .collect();
                write!(f, "cannot generate the MPI program: {}", m.join("; "))
            }
            MpiRunError::Mpi(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for MpiRunError {}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct MpiReport {
    /// The program that ran.
    pub built: Built,
    /// The launcher's verdict and everything `mpirun` said.
    pub outcome: Outcome,
}

impl MpiReport {
    /// True if every output was right, every credit cell back at zero and no process of
    /// the job survived.
    pub fn ok(&self) -> bool {
        self.outcome.ok() && self.outcome.leftover == 0
    }
}

/// Checks what can be checked before anything is built: at least one call, the process
/// count given, the parameters bind (domains, `require`s), the hostfile exists. Returns
/// the process count.
pub fn check_options(p: &Protocol, opts: &MpiOptions) -> Result<i64, MpiRunError> {
    if opts.calls == 0 {
        return Err(MpiRunError::Params("--calls must be at least 1".into()));
    }
    let world = &p.vars[p.world].name;
    let Some(&np) = opts.params.get(world) else {
        return Err(MpiRunError::Params(format!(
            "how many processes? pass -np N (the world size {world} of `{}`)",
            opts.source.map_or(p.name.as_str(), |s| s.name.as_str())
        )));
    };
    bind(p, &opts.params).map_err(|e| MpiRunError::Params(e.to_string()))?;
    crate::ranks::check_run_world(
        p,
        np,
        opts.world_limit,
        "MPI runner",
        crate::ranks::MPI_MAX_RANKS,
    )
    .map_err(MpiRunError::Params)?;
    if let Some(h) = &opts.hostfile {
        if !h.is_file() {
            return Err(MpiRunError::Params(format!(
                "hostfile `{}` not found",
                h.display()
            )));
        }
    }
    Ok(np)
}

/// Binds, emits, builds (cached) and launches `p` over MPI; the verdict is in the report.
pub fn run(p: &collc_spec::Validated, opts: &MpiOptions) -> Result<MpiReport, MpiRunError> {
    let np = check_options(p, opts)?;
    let mut params = opts.params.clone();
    params.remove(&p.vars[p.world].name);
    let np = u32::try_from(np).unwrap_or(0);
    // The collective's meaning for this run (staged inputs, expected outputs).
    let oracle = super::table(p, &params, np, opts.calls).map_err(MpiRunError::Params)?;
    let text = super::emit(
        p,
        &EmitOptions {
            source: opts.source,
            warning: opts.warning.clone(),
            world_limit: opts.world_limit,
        },
    )
    .map_err(MpiRunError::Emit)?;
    let tc = build::find_toolchain().map_err(MpiRunError::Mpi)?;
    let built = build::build(&tc, &text).map_err(MpiRunError::Mpi)?;
    let cfg = LaunchConfig {
        np,
        calls: opts.calls,
        params,
        hostfile: opts.hostfile.clone(),
        wait_timeout_ms: opts.wait_timeout_ms,
        deadline: opts.deadline,
        env: opts.env.clone(),
        mpirun_args: opts.mpirun_args.clone(),
        skew_us: 0,
        oracle: Some(oracle),
    };
    let outcome = launch::launch(&tc, &built.binary, &cfg).map_err(MpiRunError::Mpi)?;
    Ok(MpiReport { built, outcome })
}
