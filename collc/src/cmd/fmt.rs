//! `collc fmt [--check] FILE...`: canonical formatting.

use crate::driver::{load, LoadError};
use crate::output::{exit, Output};
use crate::render::Style;

/// Formats files in place, or with `check` only reports which would change.
pub fn run(files: &[String], check: bool, style: Style, out: &mut Output) -> i32 {
    let mut code = exit::OK;
    for f in files {
        let l = match load(f) {
            Ok(l) => l,
            Err(LoadError::Io(msg)) => {
                out.err(format!("error: {msg}"));
                code = code.max(exit::USAGE);
                continue;
            }
            Err(LoadError::Invalid(src, diags)) => {
                out.diagnostics(&src, &diags, style);
                out.err(format!(
                    "error: `{f}` was not formatted because it has errors"
                ));
                code = code.max(exit::INPUT);
                continue;
            }
        };
        let formatted = collc_spec::print::format_with_source(&l.protocol, &l.source.text);
        if *formatted == *l.source.text {
            continue;
        }
        if check {
            out.out(format!("would reformat {f}"));
            code = code.max(exit::INPUT);
        } else if let Err(e) = std::fs::write(f, formatted) {
            out.err(format!("error: cannot write `{f}`: {e}"));
            code = code.max(exit::USAGE);
        } else {
            out.out(format!("formatted {f}"));
        }
    }
    code
}
