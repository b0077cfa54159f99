//! `collc verify FILE... [--format text|json|sarif] [--timeout-ms MS] [--bounded-budget-ms MS]
//! [--no-bounded] [--explain]`: every obligation of each file, symbolic and bounded
//! (`collc_verifier::verify`; see `verifier/README.md`), or its credit table. Several
//! files end with one summary line.

use super::args::VerifyOptArgs;
use crate::driver::{load, LoadError};
use crate::output::{exit, Output};
use crate::render::verify::{self as show, Tally};
use crate::render::Style;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Per file one line on stdout, and when it is not verified one diagnostic per root
    /// cause on stderr (`--verbose`: the obligation table and every diagnostic).
    Text,
    /// One line per root cause on stdout: `FILE:LINE:COL: error[verify::CODE]: message`.
    Short,
    /// One JSON object per file on stdout (schema in verifier/README.md).
    Json,
    /// One SARIF 2.1.0 log for all files on stdout (code-scanning services).
    Sarif,
}

/// Arguments of `collc verify`.
#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Files to verify.
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print the per-cell credit table (credits per call, waits, reset) instead.
    #[arg(long)]
    pub explain: bool,
    /// Text: per file the table of every obligation, and every diagnostic with the
    /// simulator's trace.
    #[arg(long, short)]
    pub verbose: bool,
    /// The verifier's budgets.
    #[command(flatten)]
    pub verify: VerifyOptArgs,
}

/// Runs `verify` on every file. Exit: 2 usage/I-O, else 1 any violation or invalid
/// input, else 3 any unknown or skipped obligation, else 0.
pub fn run(args: &VerifyArgs, style: Style, out: &mut Output) -> i32 {
    let start = std::time::Instant::now();
    let mut io = false;
    let mut tally = Tally::default();
    let mut table_failed = false;
    let sarif = args.format == Format::Sarif && !args.explain;
    let mut log = crate::render::sarif::SarifLog::default();
    for f in &args.files {
        let l = match load(f) {
            Ok(l) => l,
            Err(LoadError::Io(msg)) => {
                out.err(format!("error: {msg}"));
                if sarif {
                    log.add_io_error(&msg);
                }
                io = true;
                tally.add_invalid(f);
                continue;
            }
            Err(LoadError::Invalid(src, diags)) => {
                match args.format {
                    _ if args.explain => out.diagnostics(&src, &diags, style),
                    Format::Sarif => log.add_diagnostics(&src, &diags),
                    Format::Short => show::short(&src, diags, out),
                    Format::Text | Format::Json => out.diagnostics(&src, &diags, style),
                }
                tally.add_invalid(f);
                continue;
            }
        };
        if args.explain {
            match collc_verifier::table::explain(&l.protocol) {
                Ok(t) => match args.format {
                    Format::Text | Format::Short => out.out(t.render()),
                    Format::Json | Format::Sarif => out.out(
                        serde_json::to_string(&serde_json::json!({"file": f, "table": t}))
                            .unwrap_or_default(),
                    ),
                },
                Err(e) => {
                    out.err(format!("error: {f}: cannot build the credit table: {e}"));
                    table_failed = true;
                }
            }
            continue;
        }
        let report = collc_verifier::verify(&l.protocol, &args.verify.options(&l.source));
        tally.add(f, collc_verifier::gate::verdict(&report));
        match args.format {
            Format::Text if args.verbose => show::table(&report, &l.source, style, out),
            Format::Text => show::quiet(&report, &l.source, style, out),
            Format::Short => show::short(&l.source, report.diagnostics(), out),
            Format::Json => show::json(&report, &l.source, out),
            Format::Sarif => log.add_report(&report, &l.source),
        }
    }
    let summed = matches!(args.format, Format::Text | Format::Short);
    if args.files.len() > 1 && !args.explain && summed {
        out.out(show::summary(&tally, start.elapsed()));
    }
    let code = if io {
        exit::USAGE
    } else if tally.violated > 0 || tally.invalid > 0 {
        exit::INPUT
    } else if tally.unknown > 0 || table_failed {
        exit::UNKNOWN
    } else {
        exit::OK
    };
    if sarif {
        out.out(log.render(code));
    }
    code
}
