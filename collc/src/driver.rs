//! Loading and checking files: the steps every subcommand shares.

use collc_grammar::{Diagnostic, Source};
use collc_spec::Validated;

/// Why a file could not be used.
#[derive(Debug)]
pub enum LoadError {
    /// It could not be read (exit code 2).
    Io(String),
    /// It was read but is not valid input (exit code 1).
    Invalid(Source, Vec<Diagnostic>),
}

/// Reads a file as UTF-8 source text. Reads at most one byte more than
/// [`collc_grammar::parse::MAX_SOURCE_BYTES`], so an endless or huge input
/// (`/dev/zero`, a log) is refused without being loaded.
/// The path `-` is standard input (named `<stdin>`).
pub fn read_source(path: &str) -> Result<Source, LoadError> {
    use std::io::Read as _;
    let limit = collc_grammar::parse::MAX_SOURCE_BYTES;
    let io = |e: std::io::Error| LoadError::Io(format!("cannot read `{path}`: {e}"));
    let mut bytes = Vec::new();
    let (reader, path): (Box<dyn std::io::Read>, &str) = if path == "-" {
        (Box::new(std::io::stdin()), "<stdin>")
    } else {
        (Box::new(std::fs::File::open(path).map_err(io)?), path)
    };
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > limit {
        let size = std::fs::metadata(path)
            .ok()
            .map(|m| m.len())
            .filter(|n| *n > limit as u64)
            .map_or_else(|| "more than".to_string(), |n| format!("{n} bytes,"));
        let d = Diagnostic::error(
            "input::too-large",
            format!("file is {size} over the limit of {limit} bytes"),
        )
        .with_help("a .coll file describes one protocol; split generated inputs or shrink them");
        return Err(LoadError::Invalid(Source::new(path, ""), vec![d]));
    }
    // The diagnostic for invalid UTF-8 points into the lossily decoded text.
    let lossy = std::str::from_utf8(&bytes)
        .is_err()
        .then(|| String::from_utf8_lossy(&bytes).into_owned());
    match collc_grammar::decode(bytes) {
        Ok(text) => Ok(Source::new(path, text)),
        Err(d) => Err(LoadError::Invalid(
            Source::new(path, lossy.unwrap_or_default()),
            vec![d],
        )),
    }
}

/// A file that parsed and validated.
#[derive(Debug)]
pub struct Loaded {
    /// Its text.
    pub source: Source,
    /// The protocol, validated by the front end.
    pub protocol: Validated,
    /// Warnings from validation.
    pub warnings: Vec<Diagnostic>,
}

/// Reads a file and runs the front end on it (`collc_spec::front` with the verifier's
/// range pass).
pub fn load(path: &str) -> Result<Loaded, LoadError> {
    let source = read_source(path)?;
    let checked = collc_spec::front(&collc_verifier::Ranges, &source.text);
    match checked.protocol {
        Some(protocol) => Ok(Loaded {
            source,
            protocol,
            warnings: checked.diagnostics,
        }),
        None => Err(LoadError::Invalid(source, checked.diagnostics)),
    }
}

/// Loads a file for a subcommand that needs a valid protocol: on failure,
/// reports the problem to `out` (an I/O message, or the rendered diagnostics)
/// and returns the exit code to end with (2 or 1).
pub fn load_or_report(
    path: &str,
    style: crate::render::Style,
    out: &mut crate::output::Output,
) -> Result<Loaded, i32> {
    match load(path) {
        Ok(l) => Ok(l),
        Err(LoadError::Io(msg)) => {
            out.err(format!("error: {msg}"));
            Err(crate::output::exit::USAGE)
        }
        Err(LoadError::Invalid(src, diags)) => {
            out.diagnostics(&src, &diags, style);
            Err(crate::output::exit::INPUT)
        }
    }
}

/// Runs `f` on a thread with a large stack, so that deeply nested (but
/// accepted) input cannot overflow the main thread's stack. Where no such
/// thread can be had (a tight `ulimit -v`), runs `f` on the current thread:
/// the front end bounds its own recursion, so that is a safe fallback.
pub fn with_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    let theirs = std::sync::Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let f = theirs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .expect("the closure runs once");
            f()
        });
    match spawned {
        Ok(h) => match h.join() {
            Ok(v) => v,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(_) => {
            let f = slot
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .expect("the thread never started, so the closure is still here");
            f()
        }
    }
}
