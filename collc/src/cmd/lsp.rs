//! `collc lsp`: the language server over stdin/stdout (the `collc-lsp` crate).

/// Serves one editor until it exits; the exit code is 0 after a clean shutdown.
pub fn run() -> i32 {
    collc_lsp::run_stdio()
}
