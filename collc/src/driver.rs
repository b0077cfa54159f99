//! Loading and checking files: the steps every subcommand shares.

use collc_grammar::{Diagnostic, Source};
use collc_spec::ir::Protocol;

/// Why a file could not be used.
#[derive(Debug)]
pub enum LoadError {
    /// It could not be read (exit code 2).
    Io(String),
    /// It was read but is not valid input (exit code 1).
    Invalid(Source, Vec<Diagnostic>),
}

/// Reads a file as UTF-8 source text.
pub fn read_source(path: &str) -> Result<Source, LoadError> {
    let bytes =
        std::fs::read(path).map_err(|e| LoadError::Io(format!("cannot read `{path}`: {e}")))?;
    if bytes.len() > collc_grammar::parse::MAX_SOURCE_BYTES {
        let d = Diagnostic::error(
            "input::too-large",
            format!(
                "file is {} bytes; the limit is {} bytes",
                bytes.len(),
                collc_grammar::parse::MAX_SOURCE_BYTES
            ),
        )
        .with_help("a .coll file describes one protocol; split generated inputs or shrink them");
        return Err(LoadError::Invalid(Source::new(path, ""), vec![d]));
    }
    match collc_grammar::decode(bytes) {
        Ok(text) => Ok(Source::new(path, text)),
        Err(d) => Err(LoadError::Invalid(Source::new(path, ""), vec![d])),
    }
}

/// A file that parsed and validated.
#[derive(Debug)]
pub struct Loaded {
    /// Its text.
    pub source: Source,
    /// The validated protocol.
    pub protocol: Protocol,
    /// Warnings from validation.
    pub warnings: Vec<Diagnostic>,
}

/// Reads, parses and validates a file.
pub fn load(path: &str) -> Result<Loaded, LoadError> {
    let source = read_source(path)?;
    let checked = collc_spec::check(&source.text);
    match checked.protocol {
        Some(protocol) => Ok(Loaded {
            source,
            protocol,
            warnings: checked.diagnostics,
        }),
        None => Err(LoadError::Invalid(source, checked.diagnostics)),
    }
}

/// Runs `f` on a thread with a large stack, so that deeply nested (but
/// accepted) input cannot overflow the main thread's stack.
pub fn with_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new().stack_size(256 << 20).spawn(f);
    match handle {
        Ok(h) => match h.join() {
            Ok(v) => v,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(_) => panic!("cannot spawn the worker thread"),
    }
}
