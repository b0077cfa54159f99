//! `collc fmt [--check] FILE...`: canonical formatting, in place; `-` reads standard
//! input and prints the formatted text to standard output.

use crate::driver::{load, LoadError};
use crate::output::{exit, Output};
use crate::render::Style;

/// Formats files in place (`-`: standard input to standard output), or with `check`
/// only reports which would change (`-` is named `<stdin>`).
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
        if f == "-" && !check {
            // Standard input: the formatted text goes to stdout, as rustfmt and gofmt do.
            out.out(formatted);
            continue;
        }
        if *formatted == *l.source.text {
            continue;
        }
        if check {
            out.out(format!("would reformat {}", l.source.name));
            code = code.max(exit::INPUT);
        } else if let Err(e) = replace_file(f, &formatted) {
            out.err(format!("error: cannot write `{f}`: {e}"));
            code = code.max(exit::USAGE);
        } else {
            out.out(format!("formatted {f}"));
        }
    }
    code
}

/// Replaces a file's contents atomically: writes a sibling temporary file with
/// the same permissions, then renames it over the original, so an interrupted
/// `fmt` never leaves a truncated file.
fn replace_file(path: &str, text: &str) -> std::io::Result<()> {
    let target = std::path::Path::new(path);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = target.with_file_name(format!(".{name}.collc-fmt-{}", std::process::id()));
    let result = (|| {
        std::fs::write(&tmp, text)?;
        if let Ok(meta) = std::fs::metadata(target) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
