//! `collc ir FILE [--format text|json]`: print the validated IR.

use crate::driver::load_or_report;
use crate::output::{exit, Output};
use crate::render::Style;

/// IR output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Canonical `.coll` text (parses back to the same IR).
    Text,
    /// The IR as JSON (serde).
    Json,
}

/// Prints the IR of one file.
pub fn run(file: &str, format: Format, style: Style, out: &mut Output) -> i32 {
    let l = match load_or_report(file, style, out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    match format {
        Format::Text => out.out(collc_spec::print::print(&l.protocol)),
        Format::Json => match serde_json::to_string_pretty(&l.protocol) {
            Ok(s) => out.out(s),
            Err(e) => {
                out.err(format!("error: cannot serialise the IR: {e}"));
                return exit::USAGE;
            }
        },
    }
    exit::OK
}
