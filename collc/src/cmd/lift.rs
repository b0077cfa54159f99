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
    /// Declarations the C++ does not state, one `.coll` declaration a line (`collective
    /// NAME: KIND(ARGS)`, `signal ...;`, `window ...;`, `param NAME: ...;`, `calls <= N;`):
    /// pypto's kernels read their buffers' shapes at run time (docs/lift.md).
    #[arg(long = "decls", value_name = "FILE")]
    pub decls: Option<String>,
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
    let decls = match &args.decls {
        None => String::new(),
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => {
                out.err(format!("error: cannot read `{p}`: {e}"));
                return exit::USAGE;
            }
        },
    };
    let lifted = match collc_lift::lift_with(&source.text, &decls) {
        Ok(l) => l,
        Err(diags) => {
            out.diagnostics(&source, &diags, style);
            return exit::INPUT;
        }
    };
    let mut text = lifted.coll;
    if let Some(lines) = &lifted.lines {
        // The source map `collc verify` renders diagnostics through (render::SOURCE_MAP).
        let file = if args.file == "-" {
            "<stdin>"
        } else {
            &args.file
        };
        let nums: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let file: String = file.split_whitespace().collect::<Vec<_>>().join("_");
        text.push_str(&format!(
            "{}{file} {}\n",
            crate::render::SOURCE_MAP,
            nums.join(" ")
        ));
    }
    match &args.output {
        None => {
            out.out(text);
            exit::OK
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
