//! `--target mpi` of `collc emit` and `collc run`: the protocol as a C++ program over MPI-3
//! RMA (`collc_backend::mpi`), built with `mpicxx` and run with `mpirun`.
//!
//! * `collc emit --target mpi FILE [-o prog.cpp | -o prog]`: the program's source (stdout or a
//!   `.cpp`/`.cc`/`.cxx` file), or with any other output name the executable, built by `mpicxx`.
//! * `collc run --target mpi FILE -np N [--param NAME=V]... [--calls K] [--hostfile F]`: build
//!   (cached by content hash), launch `mpirun`, read the launcher's verdict (outputs against
//!   the collective's semantics, every credit cell back at zero), report. The run is killed
//!   with every rank after `--wall-limit` seconds; each wait aborts the job after
//!   `--twait-timeout-ms` with a report naming the step.
//!
//! Both refuse a protocol the verifier rejects (the gate of `collc emit`) unless
//! `--allow-unverified` is given.

use super::emit::{apply_gate, EmitArgs, GateWording};
use super::run::RunArgs;
use crate::driver::{load, LoadError, Loaded};
use crate::output::{exit, Output};
use crate::render::Style;
use collc_backend::mpi::{self, build, launch};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs the verifier gate; `Err(code)` if the protocol must not be generated.
fn gate(
    l: &Loaded,
    file: &str,
    allow_unverified: bool,
    style: Style,
    out: &mut Output,
) -> Result<Vec<String>, i32> {
    let wording = GateWording {
        refuse: format!("refusing to generate `{file}` for MPI"),
        anyway: "generate and run it anyway",
        doing: "generating",
        done: "generated",
    };
    apply_gate(l, file, allow_unverified, &wording, style, out)
}

fn is_source_name(path: &str) -> bool {
    [".cpp", ".cc", ".cxx", ".C", ".c++"]
        .iter()
        .any(|e| path.ends_with(e))
}

/// `collc emit --target mpi` (called by `cmd::emit` after its verifier gate).
pub fn emit(
    args: &EmitArgs,
    l: &Loaded,
    warning: Vec<String>,
    style: Style,
    out: &mut Output,
) -> i32 {
    let opts = mpi::EmitOptions {
        source: Some(&l.source),
        warning,
    };
    let text = match mpi::emit(&l.protocol, &opts) {
        Ok(t) => t,
        Err(diags) => {
            out.diagnostics(&l.source, &diags, style);
            return exit::INPUT;
        }
    };
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

fn parse_params(args: &RunArgs) -> Result<BTreeMap<String, i64>, String> {
    let mut m = BTreeMap::new();
    for kv in &args.params {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--param `{kv}`: expected NAME=VALUE"))?;
        let v: i64 = v
            .trim()
            .parse()
            .map_err(|_| format!("--param `{kv}`: `{v}` is not an integer"))?;
        m.insert(k.trim().to_string(), v);
    }
    Ok(m)
}

/// `collc run --target mpi`.
pub fn run(args: &RunArgs, style: Style, out: &mut Output) -> i32 {
    let l = match load(&args.file) {
        Ok(l) => l,
        Err(LoadError::Io(msg)) => {
            out.err(format!("error: {msg}"));
            return exit::USAGE;
        }
        Err(LoadError::Invalid(src, diags)) => {
            out.diagnostics(&src, &diags, style);
            return exit::INPUT;
        }
    };
    out.diagnostics(&l.source, &l.warnings, style);
    let p = &l.protocol;
    for (given, flag) in [(args.tsan, "--tsan"), (args.host_barrier, "--host-barrier")] {
        if given {
            out.err(format!(
                "error: {flag} is a --target host option (MPI ranks are processes)"
            ));
            return exit::USAGE;
        }
    }
    if args.calls == 0 {
        out.err("error: --calls must be at least 1");
        return exit::USAGE;
    }
    // World size: -np / -P / --param P=N (one of them, consistent).
    let world = p.vars[p.world].name.clone();
    let mut params = match parse_params(args) {
        Ok(m) => m,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    let np = match (args.ranks, params.get(&world).copied()) {
        (Some(a), Some(b)) if a != b => {
            out.err(format!("error: -np {a} contradicts --param {world}={b}"));
            return exit::USAGE;
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => {
            out.err(format!(
                "error: how many processes? pass -np N (the world size {world} of `{}`)",
                args.file
            ));
            return exit::USAGE;
        }
    };
    params.insert(world.clone(), np);
    if let Err(e) = collc_spec::eval::bind(p, &params) {
        out.err(format!("error: {e}"));
        return exit::USAGE;
    }
    params.remove(&world);
    let np = u32::try_from(np).unwrap_or(0);
    // The collective's meaning for this run (staged inputs, expected outputs).
    let oracle = match mpi::table(p, &params, np, args.calls) {
        Ok(t) => t,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };

    let warning = match gate(&l, &args.file, args.allow_unverified, style, out) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let text = match mpi::emit(
        p,
        &mpi::EmitOptions {
            source: Some(&l.source),
            warning,
        },
    ) {
        Ok(t) => t,
        Err(diags) => {
            out.diagnostics(&l.source, &diags, style);
            return exit::INPUT;
        }
    };
    let tc = match build::find_toolchain() {
        Ok(t) => t,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    let built = match build::build(&tc, &text) {
        Ok(b) => b,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    if args.verbose {
        out.err(format!(
            "program {} ({}): {}",
            built.binary.display(),
            if built.cached { "cached" } else { "built" },
            built.command
        ));
    }
    let mut env = Vec::new();
    if let Some(seed) = args.chaos {
        // The MPI runtime's jitter: a pseudo-random 0..200 us sleep before every get/put/notify.
        env.push(("COLLC_MPI_JITTER_US".to_string(), "200".to_string()));
        let _ = seed;
    }
    let cfg = launch::LaunchConfig {
        np,
        calls: args.calls,
        params,
        hostfile: args.hostfile.as_ref().map(PathBuf::from),
        wait_timeout_ms: u64::from(args.twait_timeout_ms),
        deadline: Duration::from_secs(args.wall_limit.max(1)),
        env,
        mpirun_args: args.mpirun_args.clone(),
        skew_us: 0,
        oracle: Some(oracle),
    };
    if let Some(h) = &cfg.hostfile {
        if !h.is_file() {
            out.err(format!("error: hostfile `{}` not found", h.display()));
            return exit::USAGE;
        }
    }
    let outcome = match launch::launch(&tc, &built.binary, &cfg) {
        Ok(o) => o,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    if args.verbose {
        out.err(format!("command: {}", outcome.command));
    }
    let line = format!(
        "collc run --target mpi {}: {} [{:.1} s]",
        args.file,
        outcome.summary(),
        outcome.elapsed.as_secs_f64()
    );
    let mut code = if outcome.ok() { exit::OK } else { exit::INPUT };
    if outcome.ok() {
        out.out(line);
    } else {
        out.err(line);
        for f in outcome.findings(12) {
            out.err(format!("  {f}"));
        }
        if outcome.json.is_none() && outcome.findings(1).is_empty() {
            let tail: Vec<&str> = outcome.stderr.lines().rev().take(15).collect();
            for l in tail.into_iter().rev() {
                out.err(format!("  | {l}"));
            }
        }
        out.err(format!("  command: {}", outcome.command));
    }
    if outcome.leftover > 0 {
        out.err(format!(
            "error: {} process(es) of the job survived SIGKILL (session {})",
            outcome.leftover, outcome.command
        ));
        code = exit::INPUT;
    } else if outcome.orphans_killed > 0 {
        out.err(format!(
            "warning: {} orphaned process(es) of the job were still running after mpirun exited; killed",
            outcome.orphans_killed
        ));
    }
    code
}
