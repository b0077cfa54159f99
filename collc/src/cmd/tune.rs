//! `collc tune [--target mpi|host] --lib NAME FILE... -o DIR`: measure which of several
//! verified protocols of each kind is fastest per count and P on this machine (alternating
//! blocks of calls, `collc_backend::library::tune`) and build the library with that decision table
//! (`DIR/NAME.tune`, compiled in, shown in its README). Every file passes the gate first, as
//! for `collc emit --lib`. A benchmark: the table holds what this run measured.

use super::args::GateArgs;
use super::emit::TargetArg;
use crate::output::{exit, Output};
use crate::render::gate::Action;
use crate::render::Style;
use collc_backend::library::tune::{self, TuneOptions};
use collc_backend::library::LibTarget;
use std::path::Path;

/// Arguments of `collc tune`.
#[derive(Debug, clap::Args)]
pub struct TuneArgs {
    /// The protocols (two or more of at least one kind; every kind with several protocols is
    /// measured, a kind with one is packaged as it is).
    #[arg(required = true)]
    pub files: Vec<String>,
    /// The library name.
    #[arg(long, value_name = "NAME")]
    pub lib: String,
    /// The library's target: `mpi` (processes under `mpirun`) or `host` (threads).
    #[arg(long, value_enum, default_value = "mpi")]
    pub target: TargetArg,
    /// The output folder (the library, `NAME.tune`, `tune_NAME.cpp`).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: String,
    /// World sizes to measure at (one `mpirun`, or one run of P threads, each).
    #[arg(long = "np", value_delimiter = ',', default_values_t = [2u32, 4])]
    pub nps: Vec<u32>,
    /// Element counts per call.
    #[arg(long, value_delimiter = ',', default_values_t = [1024i64, 4096, 16384, 65536, 262144, 1048576, 4194304])]
    pub counts: Vec<i64>,
    /// Blocks per protocol and count (the median is taken).
    #[arg(long, default_value_t = 5)]
    pub reps: u32,
    /// Calls per block.
    #[arg(long, default_value_t = 10)]
    pub calls: u32,
    /// The verifier gate.
    #[command(flatten)]
    pub gate: GateArgs,
}

/// Runs `collc tune`.
pub fn run(args: &TuneArgs, style: Style, out: &mut Output) -> i32 {
    if args.nps.contains(&0)
        || args.counts.iter().any(|&c| c < 1)
        || args.reps == 0
        || args.calls == 0
    {
        out.err("error: --np, --counts, --reps and --calls take positive values");
        return exit::USAGE;
    }
    let (target, action) = match args.target {
        TargetArg::Mpi => (LibTarget::Mpi, Action::GenerateMpi),
        TargetArg::Host => (LibTarget::Host, Action::Emit),
        TargetArg::Ascend => {
            out.err("error: collc tune measures a --target mpi or --target host library");
            return exit::USAGE;
        }
    };
    let files: Vec<&String> = args.files.iter().collect();
    let gated = match super::lib::load_gated(&files, None, &args.gate, action, style, out) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let members = super::lib::members(&gated);
    let opts = TuneOptions {
        target,
        nps: args.nps.clone(),
        counts: args.counts.clone(),
        reps: args.reps,
        calls: args.calls,
    };
    match tune::tune(&members, &args.lib, Path::new(&args.output), &opts) {
        Ok(t) => {
            out.out(crate::render::tune::text(&t, &args.lib));
            exit::OK
        }
        Err(e) => super::lib::render_lib_error(e, &gated, style, out),
    }
}
