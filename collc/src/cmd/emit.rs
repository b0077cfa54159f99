//! `collc emit --target ascend|host|mpi FILE [-o OUT] [--abi pypto] [--allow-unverified]`: generate the kernel.
//!
//! `--abi pypto` (Ascend only): the kernel takes the args block of pypto's host collective
//! builtin for the collective (`collc_backend::cpp::pypto`); a protocol without one is
//! refused with `backend::pypto-abi`. With `-o NAME.cpp.in` it is pypto's template of that
//! kernel (`collc_backend::cpp::pypto::emit_template`: pypto's placeholders, self-contained).
//!
//! Ascend and host emit the same `pto::comm` C++ source (one source, two builds). With
//! `--target host` and an output ending in `.so`, the source is also compiled with the system
//! C++ compiler (`$CXX`, else `g++`) into a shared library with the CPU runtime's launcher.
//! `--target mpi` is `cmd::mpi::emit`; `--lib NAME FILE... -o DIR` (host or MPI) is
//! `cmd::lib::emit`.
//!
//! The verifier gate (`cmd::gate`, every target): a protocol the verifier does not show
//! safe (an obligation violated, unknown or skipped) is refused with the verifier's
//! diagnostics unless `--allow-unverified` is given, which stamps the reasons into the
//! output's header comment.

use super::args::ElemArg;
use super::args::GateArgs;
use crate::driver::load_or_report;
use crate::output::{exit, Output};
use crate::render::gate::Action;
use crate::render::Style;
use collc_backend::cpp::{self, EmitOptions, Target};

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
    /// The element type (`--elem`).
    #[command(flatten)]
    pub elem: ElemArg,
    /// Output file (default: stdout). For `--target host`, a name ending in `.so` builds the
    /// shared library (kernel + launcher) instead of writing the source.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<String>,
    /// The kernel's args block: `collc` (default; collc/host_launch.hpp) or `pypto` (the
    /// entry and args of pypto's host collective builtin, `--target ascend` only;
    /// docs/pypto-abi.md). With `-o NAME.cpp.in`, pypto's template of the builtin's kernel
    /// (its placeholders `{{dtype_cpp}}`, `{{root_cpp}}`, ...; self-contained).
    #[arg(long, value_enum, default_value_t = AbiArg::Collc)]
    pub abi: AbiArg,
    /// The verifier gate.
    #[command(flatten)]
    pub gate: GateArgs,
    /// Static translation validation: recover the protocol from the generated C++ and
    /// check it equals the IR (docs/lift.md); a mismatch is an error and nothing is written.
    #[arg(long)]
    pub validate: bool,
    /// Package the protocol(s) as a library `libNAME.so` + `NAME.h` (+ pkg-config, CMake,
    /// README) in the folder `-o DIR` (`--target host` or `mpi`). See `cmd::lib`.
    #[arg(long, value_name = "NAME")]
    pub lib: Option<String>,
    /// With `--lib` (`--target mpi`): the decision table of the kinds given several
    /// protocols (`KIND P COUNT PROTOCOL` lines, as `collc tune` writes to `DIR/NAME.tune`);
    /// without it a call runs the first protocol of its kind that can serve it.
    #[arg(long, value_name = "FILE", requires = "lib")]
    pub table: Option<String>,
    /// Build `libcollc_pmpi.so` in `-o DIR` (`--target mpi`): MPI's profiling interface
    /// answering MPI_Barrier, MPI_Allreduce and MPI_Bcast calls in the protocols' domains,
    /// everything else passed through (run programs unchanged with `LD_PRELOAD`). See
    /// `cmd::lib`.
    #[arg(long)]
    pub pmpi: bool,
    /// More protocols for `--lib` or `--pmpi` (one collective each, one function per kind).
    #[arg(value_name = "MORE")]
    pub more: Vec<String>,
}

/// With `--validate`, checks the generated `text` performs `l`'s protocol
/// (`collc_lift::validate`); on a mismatch reports it and returns the exit code.
pub fn validated(
    args: &EmitArgs,
    l: &crate::driver::Loaded,
    text: &str,
    style: Style,
    out: &mut Output,
) -> Result<(), i32> {
    if !args.validate {
        return Ok(());
    }
    match collc_lift::validate(&l.protocol, text, Some(&l.source)) {
        Ok(v) => {
            out.err(format!(
                "validated: the generated code performs the protocol ({} statements, docs/lift.md)",
                v.statements
            ));
            Ok(())
        }
        Err(diags) => {
            out.diagnostics(&l.source, &diags, style);
            Err(exit::INPUT)
        }
    }
}

/// The args-block ABI of an emitted kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AbiArg {
    /// collc's own (buffers, scalars, CommContext*).
    Collc,
    /// pypto's host collective builtins (ChipTensor* per tensor, nranks, CommContext*).
    Pypto,
}

/// Runs `collc emit`.
pub fn run(args: &EmitArgs, style: Style, out: &mut Output) -> i32 {
    if args.lib.is_some() || args.pmpi || !args.more.is_empty() {
        return super::lib::emit(args, style, out);
    }
    if args.abi == AbiArg::Pypto && args.target != TargetArg::Ascend {
        out.err("error: `--abi pypto` is an Ascend kernel ABI: use it with `--target ascend`");
        return exit::USAGE;
    }
    let mut l = match load_or_report(&args.file, style, out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(e) = args.elem.apply(&mut l.protocol) {
        out.err(format!("error: {e}"));
        return exit::USAGE;
    }
    out.diagnostics(&l.source, &l.warnings, style);
    let action = match args.target {
        TargetArg::Mpi => Action::GenerateMpi,
        _ => Action::Emit,
    };
    let gate = match super::gate::check(&l, &args.gate, action, style, out) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let target = match args.target {
        TargetArg::Ascend => Target::Ascend,
        TargetArg::Host => Target::Host,
        TargetArg::Mpi => return super::mpi::emit(args, &l, gate, style, out),
    };
    let opts = EmitOptions {
        source: Some(&l.source),
        warning: gate.stamp,
        world_limit: Some(gate.world_limit),
    };
    let template = args
        .output
        .as_deref()
        .is_some_and(|o| o.ends_with(".cpp.in"));
    let emitted = match args.abi {
        AbiArg::Pypto if template => cpp::pypto::emit_template(&l.protocol, &opts),
        AbiArg::Pypto => cpp::pypto::emit(&l.protocol, &opts),
        AbiArg::Collc => cpp::emit(&l.protocol, target, &opts),
    };
    let text = match emitted {
        Ok(t) => t,
        Err(diags) => {
            out.diagnostics(&l.source, &diags, style);
            return exit::INPUT;
        }
    };
    if let Err(code) = validated(args, &l, &text, style, out) {
        return code;
    }
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
