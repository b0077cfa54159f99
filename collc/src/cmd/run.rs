//! `collc run FILE -P N [--param NAME=V]... [--calls K] [--trace]`: generate the host kernel, compile it
//! (cached by content hash), run it on P rank threads for K back-to-back calls through one
//! signal buffer with distinct payloads, and check the outputs against the collective's
//! semantics and every credit cell back at zero.
//!
//! The verifier gate comes first (`cmd::gate`): a protocol the verifier does not show safe
//! is not run unless `--allow-unverified`, whose stamp is printed with the verdict.
//!
//! `--trace` records every thread's events and checks them against the IR
//! (`collc_backend::trace`; rendered by `render::trace`).
//!
//! The run happens in the C++ runner subprocess, killed after `--wall-limit` seconds, so a
//! hung rank thread can never hang `collc` (nor leave threads behind in it).

use super::args::{ElemArg, GateArgs, ParamArgs};
use crate::driver::load_or_report;
use crate::output::{exit, Output};
use crate::render::gate::Action;
use crate::render::{self, Style};
use collc_backend::host::{self, Build, Exec, RunConfig, RunError, RunReport, TraceFailure};
use collc_backend::pto_sim::Roots;
use collc_backend::trace::Conformance;
use std::time::Duration;

/// The execution target of `collc run` (more targets, e.g. MPI, join later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RunTarget {
    /// CPU threads in one process (collc's pto::comm runtime).
    Host,
    /// One process per rank over MPI-3 RMA, via mpicxx and mpirun (see `cmd::mpi`).
    Mpi,
    /// The Ascend kernel built against the real pto-isa and simpler headers (PTO_ISA_ROOT,
    /// SIMPLER_ROOT) in pto-isa's CPU simulation, on CPU threads (see `run_pto_sim`).
    PtoIsa,
}

/// Arguments of `collc run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The protocol.
    pub file: String,
    /// Where to run.
    #[arg(long, value_enum, default_value = "host")]
    pub target: RunTarget,
    /// Parameter values (`-P N`, `--param NAME=V`).
    #[command(flatten)]
    pub params: ParamArgs,
    /// The element type (`--elem`).
    #[command(flatten)]
    pub elem: ElemArg,
    /// Back-to-back calls through one signal buffer.
    #[arg(long, default_value_t = 3)]
    pub calls: u32,
    /// Barrier of all ranks between calls (hides cross-call skew; for protocols with a known
    /// cross-call hazard).
    #[arg(long)]
    pub host_barrier: bool,
    /// Random sleeps/yields at every notify and after every wait, with this seed.
    #[arg(long, value_name = "SEED")]
    pub chaos: Option<u64>,
    /// Build with ThreadSanitizer (-fsanitize=thread) and fail on any report.
    #[arg(long)]
    pub tsan: bool,
    /// TWAIT deadline in milliseconds (a protocol deadlock fails loudly after it).
    #[arg(long, default_value_t = 10_000)]
    pub twait_timeout_ms: u32,
    /// Kill the run after this many seconds (a rank thread hanging outside a TWAIT).
    #[arg(long, default_value_t = 120)]
    pub wall_limit: u64,
    /// Print the generated library's path and compile command.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// `--target mpi`: an Open MPI hostfile (run across machines); default: this machine.
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<String>,
    /// `--target mpi`: an extra mpirun argument (repeatable), e.g. `--mpirun-arg=--mca
    /// --mpirun-arg=osc --mpirun-arg=rdma`.
    #[arg(long = "mpirun-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub mpirun_args: Vec<String>,
    /// Record every thread's notify / wait / fence / get / put events and check the trace
    /// against the IR (each thread's event sequence, and a schedule the semantics allows).
    #[arg(long)]
    pub trace: bool,
    /// `--trace`: events each thread can record; a trace that overflows is reported.
    #[arg(long, value_name = "N", default_value_t = 65536)]
    pub trace_capacity: u64,
    /// The verifier gate.
    #[command(flatten)]
    pub gate: GateArgs,
}

/// Runs `collc run`.
pub fn run(args: &RunArgs, style: Style, out: &mut Output) -> i32 {
    if args.target == RunTarget::Mpi {
        return super::mpi::run(args, style, out);
    }
    let roots = match args.target {
        RunTarget::PtoIsa => match pto_sim_roots(args) {
            Ok(r) => Some(r),
            Err(e) => {
                out.err(format!("error: {e}"));
                return exit::USAGE;
            }
        },
        _ => None,
    };
    let mut l = match load_or_report(&args.file, style, out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(e) = args.elem.apply(&mut l.protocol) {
        out.err(format!("error: {e}"));
        return exit::USAGE;
    }
    out.diagnostics(&l.source, &l.warnings, style);
    let params = match args.params.resolve(&l.protocol) {
        Ok(p) => p,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    if args.calls == 0 {
        out.err("error: --calls must be at least 1");
        return exit::USAGE;
    }
    if let Some(d) = collc_backend::calls::refusal(&l.protocol, args.calls) {
        out.diagnostics(&l.source, &[d], style);
        return exit::USAGE;
    }
    let gate = match super::gate::check(&l, &args.gate, Action::Run, style, out) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let cfg = RunConfig {
        params,
        calls: args.calls,
        host_barrier: args.host_barrier,
        chaos: args.chaos,
        twait_timeout_ms: args.twait_timeout_ms,
        build: if args.tsan { Build::Tsan } else { Build::Opt },
        exec: Exec::Subprocess,
        wall_limit: Duration::from_secs(args.wall_limit.max(1)),
        world_limit: Some(gate.world_limit),
    };
    if let Some(roots) = roots {
        let result = collc_backend::pto_sim::run(&l.protocol, Some(&l.source), &cfg, &roots)
            .map(|r| (r, None));
        return finish(args, &l, result, &gate.stamp, style, out);
    }
    let result = if args.trace {
        host::run_traced(
            &l.protocol,
            Some(&l.source),
            &cfg,
            args.trace_capacity.max(1),
        )
        .map(|t| (t.report, Some(t.trace)))
    } else {
        host::run_with_source(&l.protocol, Some(&l.source), &cfg).map(|r| (r, None))
    };
    finish(args, &l, result, &gate.stamp, style, out)
}

/// `--target pto-isa`: the real sources from the environment, and no flag it cannot honour.
fn pto_sim_roots(args: &RunArgs) -> Result<Roots, String> {
    let refused = [
        (args.trace, "--trace"),
        (args.chaos.is_some(), "--chaos"),
        (args.tsan, "--tsan"),
        (args.twait_timeout_ms != 10_000, "--twait-timeout-ms"),
        (args.hostfile.is_some(), "--hostfile"),
        (!args.mpirun_args.is_empty(), "--mpirun-arg"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag));
    if let Some(flag) = refused {
        return Err(format!(
            "{flag} does not apply to --target pto-isa (pto-isa's own TNOTIFY and TWAIT run; a wait that never holds ends at --wall-limit)"
        ));
    }
    Roots::from_env().map_err(|e| format!("collc run --target pto-isa needs the real sources: {e}"))
}

/// A run's report and, when traced, its trace's conformance.
type Ran = Result<(RunReport, Option<Result<Conformance, TraceFailure>>), RunError>;

/// Renders a run's result; the exit code.
fn finish(
    args: &RunArgs,
    l: &crate::driver::Loaded,
    result: Ran,
    stamp: &[String],
    style: Style,
    out: &mut Output,
) -> i32 {
    match result {
        Ok((report, trace)) => {
            render::run::host(&l.source.name, &report, stamp, args.verbose, out);
            let conforms = match &trace {
                None => true,
                Some(Ok(c)) => {
                    let f = &l.source.name;
                    render::trace::conformance(f, &l.protocol, &l.source, c, style, out);
                    c.conforms()
                }
                Some(Err(e)) => {
                    out.err(format!("error: collc run {}: {e}", l.source.name));
                    false
                }
            };
            if report.ok() && conforms {
                exit::OK
            } else {
                exit::INPUT
            }
        }
        Err(RunError::Params(m)) | Err(RunError::Config(m)) => {
            out.err(format!("error: {m}"));
            exit::USAGE
        }
        Err(RunError::Emit(diags)) => {
            out.diagnostics(&l.source, &diags, style);
            exit::INPUT
        }
        Err(RunError::Compile(e)) => {
            out.err(format!("error: {e}"));
            exit::USAGE
        }
        Err(RunError::Exec(e)) => {
            out.err(format!("error: collc run {}: {e}", l.source.name));
            exit::INPUT
        }
    }
}
