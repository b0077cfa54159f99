//! `collc emit --target ascend|host FILE [-o OUT] [--allow-unverified]`: generate the kernel.
//!
//! Both targets emit the same `pto::comm` C++ source (one source, two builds). With
//! `--target host` and an output ending in `.so`, the source is also compiled with the system
//! C++ compiler (`$CXX`, else `g++`) into a shared library with the CPU runtime's launcher.
//!
//! The verifier gate: a protocol the verifier rejects (any obligation violated) is refused
//! with the verifier's diagnostics unless `--allow-unverified` is given, which stamps a
//! warning into the output.

use crate::driver::{load, LoadError};
use crate::output::{exit, Output};
use crate::render::Style;
use collc_backend::cpp::{self, EmitOptions, Target};
use collc_grammar::Diagnostic;
use collc_spec::ir::Protocol;

/// The code-generation target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TargetArg {
    /// Ascend `pto::comm` C++.
    Ascend,
    /// The same C++ for CPU threads (collc's runtime); `-o lib.so` compiles it.
    Host,
    /// A C++ program over MPI-3 RMA (`-o x.cpp`: the source; other `-o` names: the
    /// executable, built with mpicxx). See `cmd::mpi`.
    Mpi,
}

/// Arguments of `collc emit`.
#[derive(Debug, clap::Args)]
pub struct EmitArgs {
    /// The protocol.
    pub file: String,
    /// What to generate.
    #[arg(long, value_enum)]
    pub target: TargetArg,
    /// Output file (default: stdout). For `--target host`, a name ending in `.so` builds the
    /// shared library (kernel + launcher) instead of writing the source.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<String>,
    /// Emit even if the verifier rejects the protocol (stamps a warning into the output).
    #[arg(long)]
    pub allow_unverified: bool,
}

/// What the verifier gate decided.
#[derive(Debug)]
pub enum Gate {
    /// No obligation violated (lines: anything undecided, to stamp as a warning).
    Pass(Vec<String>),
    /// Some obligation is violated: the verifier's diagnostics.
    Rejected(Vec<Diagnostic>),
}

/// The verifier gate: runs `collc_verifier::verify` and says whether code may be emitted.
pub fn verify_gate(p: &Protocol) -> Gate {
    let report = collc_verifier::verify(p, &collc_verifier::Options::default());
    let violated = report
        .obligations
        .iter()
        .any(|o| o.status == collc_verifier::Status::Violated);
    if violated {
        let diags: Vec<Diagnostic> = report
            .diagnostics()
            .into_iter()
            .filter(|d| d.is_error())
            .collect();
        return Gate::Rejected(diags);
    }
    let unknown: Vec<String> = report
        .obligations
        .iter()
        .filter(|o| o.status == collc_verifier::Status::Unknown)
        .map(|o| {
            format!(
                "verifier could not decide `{}`: {}",
                o.id,
                o.reason.clone().unwrap_or_else(|| "unknown".into())
            )
        })
        .collect();
    Gate::Pass(unknown)
}

/// How a command that generates code talks about the verifier gate.
pub(crate) struct GateWording {
    /// The refusal, e.g. "refusing to emit `f.coll`".
    pub refuse: String,
    /// What `--allow-unverified` lets the user do, e.g. "emit anyway".
    pub anyway: &'static str,
    /// Present participle for the warning, e.g. "emitting".
    pub doing: &'static str,
    /// Past participle for the stamp, e.g. "emitted".
    pub done: &'static str,
}

/// Runs the verifier gate for a code-generating command: prints its findings and returns
/// the warning lines to stamp into the output, or `Err(exit code)` when the protocol is
/// rejected and `--allow-unverified` was not given.
pub(crate) fn apply_gate(
    l: &crate::driver::Loaded,
    file: &str,
    allow_unverified: bool,
    wording: &GateWording,
    style: Style,
    out: &mut Output,
) -> Result<Vec<String>, i32> {
    let mut warning = Vec::new();
    match verify_gate(&l.protocol) {
        Gate::Pass(undecided) => {
            for u in &undecided {
                out.err(format!("warning: {u}"));
            }
            warning.extend(undecided);
        }
        Gate::Rejected(diags) => {
            out.diagnostics(&l.source, &diags, style);
            if !allow_unverified {
                out.err(format!(
                    "error: {}: the verifier rejects it ({} violation(s) above); \
                     fix the protocol, or pass --allow-unverified to {}",
                    wording.refuse,
                    diags.len(),
                    wording.anyway
                ));
                return Err(exit::INPUT);
            }
            out.err(format!(
                "warning: {} a protocol the verifier rejects (--allow-unverified)",
                wording.doing
            ));
            warning.push(format!(
                "UNVERIFIED: {} with --allow-unverified; the verifier rejects this protocol ({} violation(s)):",
                wording.done,
                diags.len()
            ));
            for d in &diags {
                let at = d
                    .primary_span()
                    .map(|s| format!("{file}:{}: ", l.source.line_col(s.start).0))
                    .unwrap_or_default();
                warning.push(format!("  {at}{}: {}", d.code, d.message));
            }
        }
    }
    Ok(warning)
}

/// Runs `collc emit`.
pub fn run(args: &EmitArgs, style: Style, out: &mut Output) -> i32 {
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

    let wording = GateWording {
        refuse: format!("refusing to emit `{}`", args.file),
        anyway: "emit anyway",
        doing: "emitting",
        done: "emitted",
    };
    let warning = match apply_gate(&l, &args.file, args.allow_unverified, &wording, style, out) {
        Ok(w) => w,
        Err(code) => return code,
    };

    let target = match args.target {
        TargetArg::Ascend => Target::Ascend,
        TargetArg::Host => Target::Host,
        TargetArg::Mpi => return super::mpi::emit(args, &l, warning, style, out),
    };
    let opts = EmitOptions {
        source: Some(&l.source),
        warning,
    };
    let text = match cpp::emit(&l.protocol, target, &opts) {
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
        Some(path) if target == Target::Host && path.ends_with(".so") => {
            match collc_backend::host::compile::build_library(
                &text,
                path,
                collc_backend::host::compile::Build::Opt,
            ) {
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
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => exit::OK,
            Err(e) => {
                out.err(format!("error: cannot write `{path}`: {e}"));
                exit::USAGE
            }
        },
    }
}
