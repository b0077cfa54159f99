//! `collc check FILE...`: parse and validate.

use crate::driver::{load, LoadError};
use crate::output::{exit, Output};
use crate::render::{self, Style};

/// Output format for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human-readable reports.
    Text,
    /// One JSON object per line per diagnostic (an unreadable file is one too,
    /// with code `input::unreadable`).
    Json,
}

/// Checks every file; reports all diagnostics of all files.
pub fn run(files: &[String], format: Format, style: Style, out: &mut Output) -> i32 {
    let mut code = exit::OK;
    let mut ok = 0;
    for f in files {
        match load(f) {
            Ok(l) => {
                emit(&l.source, &l.warnings, format, style, out);
                ok += 1;
            }
            Err(LoadError::Io(msg)) => {
                match format {
                    Format::Text => out.err(format!("error: {msg}")),
                    // Machines read stdout only: the unreadable file is a record too.
                    Format::Json => {
                        let d = collc_grammar::Diagnostic::error("input::unreadable", msg);
                        let src = collc_grammar::Source::new(f.as_str(), "");
                        emit(&src, &[d], format, style, out);
                    }
                }
                code = code.max(exit::USAGE);
            }
            Err(LoadError::Invalid(src, diags)) => {
                emit(&src, &diags, format, style, out);
                if code == exit::OK {
                    code = exit::INPUT;
                }
            }
        }
    }
    if format == Format::Text {
        out.err(format!(
            "checked {} file(s): {} ok, {} with errors",
            files.len(),
            ok,
            files.len() - ok
        ));
    }
    code
}

fn emit(
    src: &collc_grammar::Source,
    diags: &[collc_grammar::Diagnostic],
    format: Format,
    style: Style,
    out: &mut Output,
) {
    match format {
        Format::Text => out.diagnostics(src, diags, style),
        Format::Json => {
            for d in diags {
                let j = render::to_json(d, src);
                out.out(serde_json::to_string(&j).unwrap_or_default());
            }
        }
    }
}
