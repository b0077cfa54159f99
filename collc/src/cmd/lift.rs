//! `collc lift FILE.cpp [-o OUT]` (`-` reads standard input): recover the `.coll` protocol
//! of a hand-written `pto::comm` host kernel (`collc_lift::lift`; the accepted C++ is in
//! docs/lift.md), printed canonically so `collc lift k.cpp | collc verify -` verifies the
//! code that runs.

use crate::driver::{read_source, LoadError};
use crate::output::{exit, Output};
use crate::render::Style;

/// Arguments of `collc lift`.
#[derive(Debug, clap::Args)]
pub struct LiftArgs {
    /// The C++ kernel (`-`: standard input).
    pub file: String,
    /// Output file (default: stdout).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<String>,
}

/// Runs `collc lift`.
pub fn run(args: &LiftArgs, style: Style, out: &mut Output) -> i32 {
    let source = match read_source(&args.file) {
        Ok(s) => s,
        Err(LoadError::Io(msg)) => {
            out.err(format!("error: {msg}"));
            return exit::USAGE;
        }
        Err(LoadError::Invalid(src, diags)) => {
            out.diagnostics(&src, &diags, style);
            return exit::INPUT;
        }
    };
    let lifted = match collc_lift::lift(&source.text) {
        Ok(l) => l,
        Err(diags) => {
            out.diagnostics(&source, &diags, style);
            return exit::INPUT;
        }
    };
    match &args.output {
        None => {
            out.out(lifted.coll);
            exit::OK
        }
        Some(path) => match std::fs::write(path, lifted.coll) {
            Ok(()) => exit::OK,
            Err(e) => {
                out.err(format!("error: cannot write `{path}`: {e}"));
                exit::USAGE
            }
        },
    }
}
