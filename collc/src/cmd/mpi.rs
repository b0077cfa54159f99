//! `--target mpi` of `collc emit` and `collc run`: the protocol as a C++ program over MPI-3
//! RMA (`collc_backend::mpi`), built with `mpicxx` and run with `mpirun`.
//!
//! * `collc emit --target mpi FILE [-o prog.cpp | -o prog]`: the program's source (stdout or a
//!   `.cpp`/`.cc`/`.cxx` file), or with any other output name the executable, built by `mpicxx`.
//! * `collc run --target mpi FILE -np N [--param NAME=V]... [--calls K] [--hostfile F] [--trace]`: build
//!   (cached by content hash), launch `mpirun`, read the launcher's verdict (outputs against
//!   the collective's semantics, every credit cell back at zero), report. The run is killed
//!   with every rank after `--wall-limit` seconds; each wait aborts the job after
//!   `--twait-timeout-ms` with a report naming the step.
//!
//! Both pass the verifier gate first (`cmd::gate`, as every target does); `--allow-unverified`
//! is stamped into the program's header and printed with the run's verdict. The run itself
//! is one library call, `collc_backend::mpi::run`.

use super::emit::EmitArgs;
use super::run::RunArgs;
use crate::driver::{load_or_report, Loaded};
use crate::output::{exit, Output};
use crate::render::gate::Action;
use crate::render::{self, Style};
use collc_backend::mpi::{self, build, MpiOptions, MpiRunError};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn is_source_name(path: &str) -> bool {
    [".cpp", ".cc", ".cxx", ".C", ".c++"]
        .iter()
        .any(|e| path.ends_with(e))
}

/// `collc emit --target mpi` (called by `cmd::emit` after its verifier gate).
pub fn emit(
    args: &EmitArgs,
    l: &Loaded,
    gate: collc_verifier::Gate,
    style: Style,
    out: &mut Output,
) -> i32 {
    let opts = mpi::EmitOptions {
        source: Some(&l.source),
        warning: gate.stamp,
        world_limit: Some(gate.world_limit),
    };
    let text = match mpi::emit(&l.protocol, &opts) {
        Ok(t) => t,
        Err(diags) => {
            out.diagnostics(&l.source, &diags, style);
            return exit::INPUT;
        }
    };
    if let Err(code) = super::emit::validated(args, l, &text, style, out) {
        return code;
    }
    match &args.output {
        None => {
            out.out(text);
            exit::OK
        }
        Some(path) if is_source_name(path) => {
            if let Err(e) = std::fs::write(path, &text) {
                out.err(format!("error: cannot write `{path}`: {e}"));
                return exit::USAGE;
            }
            match build::runtime_dir() {
                Ok(rt) => out.err(format!(
                    "wrote {path}; build it with: mpicxx {} -I{} {path} -o prog  (runtime headers: backend/runtime/mpi/ or {})",
                    build::CXXFLAGS.join(" "),
                    rt.display(),
                    rt.display()
                )),
                Err(_) => out.err(format!("wrote {path}; build it with: mpicxx -std=c++17 -O2 -I backend/runtime/mpi {path} -o prog")),
            }
            exit::OK
        }
        Some(path) => {
            // Any other name: the executable.
            let tc = match build::find_toolchain() {
                Ok(t) => t,
                Err(e) => {
                    out.err(format!("error: {e}"));
                    return exit::USAGE;
                }
            };
            let src = PathBuf::from(format!("{path}.cpp"));
            if let Err(e) = std::fs::write(&src, &text) {
                out.err(format!("error: cannot write `{}`: {e}", src.display()));
                return exit::USAGE;
            }
            match build::compile_to(&tc, &src, Path::new(path)) {
                Ok(cmd) => {
                    out.err(format!("built {path}: {cmd}"));
                    exit::OK
                }
                Err(e) => {
                    out.err(format!("error: {e}"));
                    exit::USAGE
                }
            }
        }
    }
}

/// `collc run --target mpi`.
pub fn run(args: &RunArgs, style: Style, out: &mut Output) -> i32 {
    let mut l = match load_or_report(&args.file, style, out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(e) = args.elem.apply(&mut l.protocol) {
        out.err(format!("error: {e}"));
        return exit::USAGE;
    }
    out.diagnostics(&l.source, &l.warnings, style);
    for (given, flag) in [(args.tsan, "--tsan"), (args.host_barrier, "--host-barrier")] {
        if given {
            out.err(format!(
                "error: {flag} is a --target host option (MPI ranks are processes)"
            ));
            return exit::USAGE;
        }
    }
    let params = match args.params.resolve(&l.protocol) {
        Ok(m) => m,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    if let Some(d) = collc_backend::calls::refusal(&l.protocol, args.calls) {
        out.diagnostics(&l.source, &[d], style);
        return exit::USAGE;
    }
    let mut opts = MpiOptions {
        source: Some(&l.source),
        warning: Vec::new(),
        params,
        calls: args.calls,
        hostfile: args.hostfile.as_ref().map(PathBuf::from),
        wait_timeout_ms: u64::from(args.twait_timeout_ms),
        deadline: Duration::from_secs(args.wall_limit.max(1)),
        // `--chaos`: the MPI runtime's jitter, a pseudo-random 0..200 us sleep before every
        // get/put/notify (the seed is the host runner's).
        env: args
            .chaos
            .map(|_| ("COLLC_MPI_JITTER_US".to_string(), "200".to_string()))
            .into_iter()
            .collect(),
        mpirun_args: args.mpirun_args.clone(),
        world_limit: None,
    };
    if let Err(e) = mpi::run::check_options(&l.protocol, &opts) {
        out.err(format!("error: {e}"));
        return exit::USAGE;
    }
    let gate = match super::gate::check(&l, &args.gate, Action::GenerateMpi, style, out) {
        Ok(g) => g,
        Err(code) => return code,
    };
    opts.warning = gate.stamp.clone();
    opts.world_limit = Some(gate.world_limit);
    let traced = if args.trace {
        mpi::run_traced(&l.protocol, &opts, args.trace_capacity.max(1))
            .map(|t| (t.report, Some(t.trace)))
    } else {
        mpi::run(&l.protocol, &opts).map(|r| (r, None))
    };
    let (report, trace) = match traced {
        Ok(r) => r,
        Err(MpiRunError::Emit(diags)) => {
            out.diagnostics(&l.source, &diags, style);
            return exit::INPUT;
        }
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    render::run::mpi(&l.source.name, &report, &gate.stamp, args.verbose, out);
    let conforms = match &trace {
        None => true,
        Some(Ok(c)) => {
            render::trace::conformance(&l.source.name, &l.protocol, &l.source, c, style, out);
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
