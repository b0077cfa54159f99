//! The `collc` command.

use clap::{Parser, Subcommand};
use collc::cmd;
use collc::output::Output;
use collc::render::Style;
use std::io::IsTerminal;

/// Declare, prove and compile the synchronisation protocols of collective kernels.
#[derive(Parser, Debug)]
#[command(name = "collc", version, about)]
struct Cli {
    /// Colour in diagnostics: auto, always or never.
    #[arg(long, global = true, default_value = "auto")]
    color: ColorChoice,
    /// Width of rendered diagnostics (columns).
    #[arg(long, global = true, default_value_t = 100)]
    width: usize,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and validate .coll files.
    Check {
        /// Files to check.
        #[arg(required = true)]
        files: Vec<String>,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value = "text")]
        format: cmd::check::Format,
    },
    /// Format .coll files canonically, in place (`-`: standard input to standard output).
    Fmt {
        /// Only report files that would change (exit 1 if any).
        #[arg(long)]
        check: bool,
        /// Files to format (`-`: standard input).
        #[arg(required = true)]
        files: Vec<String>,
    },
    /// Print the validated protocol IR.
    Ir {
        /// The file.
        file: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: cmd::ir::Format,
    },
    /// Write a verified starting protocol of a collective kind (`NAME.coll`, or `-o -`).
    New(cmd::new::NewArgs),
    /// Run a protocol in the simulator (every schedule by default), with rank skew
    /// across back-to-back calls; replays a verifier counterexample given its parameters.
    Sim(cmd::sim::SimArgs),
    /// Prove the protocol's obligations with Z3 (credit balance, op exclusivity, wait
    /// reachability, stale and garbage credits, guard symmetry); `--explain` prints the
    /// per-cell credit table.
    Verify(cmd::verify::VerifyArgs),
    /// Remote atomics, notifies, waits and fences per call, as formulas and evaluated.
    Cost(cmd::cost::CostArgs),
    /// A verified transformation (`--pass coalesce=K`, `implied-waits`, `aggregate-notifies`,
    /// `depth=D`, `put`, `get`): writes readable `.coll` with a header of what changed and the
    /// cost before and after, after the verifier's gate.
    Opt(cmd::opt::OptArgs),
    /// Generate the kernel C++ (`--target ascend|host`; host with `-o x.so` also compiles it).
    Emit(cmd::emit::EmitArgs),
    /// Measure which of several protocols of one kind is fastest per count and P on this
    /// machine (MPI) and build the library with that decision table.
    Tune(cmd::tune::TuneArgs),
    /// Recover the `.coll` protocol of a hand-written pto::comm kernel (`-`: stdin).
    Lift(cmd::lift::LiftArgs),
    /// Compile the host kernel, run P rank threads for K calls, check semantics and signals.
    Run(cmd::run::RunArgs),
    /// The language server, over stdin/stdout (what an editor starts).
    Lsp,
}

fn main() {
    // `collc run --target mpi -np 4` (mpirun's spelling) is `--np 4`.
    let cli =
        Cli::parse_from(std::env::args_os().map(|a| if a == "-np" { "--np".into() } else { a }));
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let style = Style {
        color,
        width: cli.width,
    };
    let (code, out) = collc::driver::with_big_stack(move || {
        let mut out = Output::default();
        let code = match cli.command {
            Command::Check { files, format } => cmd::check::run(&files, format, style, &mut out),
            Command::Fmt { check, files } => cmd::fmt::run(&files, check, style, &mut out),
            Command::Ir { file, format } => cmd::ir::run(&file, format, style, &mut out),
            Command::Sim(args) => cmd::sim::run(&args, style, &mut out),
            Command::New(args) => cmd::new::run(&args, &mut out),
            Command::Verify(args) => cmd::verify::run(&args, style, &mut out),
            Command::Cost(args) => cmd::cost::run(&args, style, &mut out),
            Command::Opt(args) => cmd::opt::run(&args, style, &mut out),
            Command::Emit(args) => cmd::emit::run(&args, style, &mut out),
            Command::Tune(args) => cmd::tune::run(&args, style, &mut out),
            Command::Run(args) => cmd::run::run(&args, style, &mut out),
            Command::Lift(args) => cmd::lift::run(&args, style, &mut out),
            Command::Lsp => cmd::lsp::run(),
        };
        (code, out)
    });
    out.flush_to_process();
    std::process::exit(code);
}
