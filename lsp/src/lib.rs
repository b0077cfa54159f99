//! `collc-lsp`: the language server of `.coll` files (`collc lsp`). Over stdio or
//! any [`lsp_server::Connection`]: the front end's diagnostics on every change, the
//! symbolic verifier's on save (on a worker thread), bounded checks on request with
//! progress and cancellation ([`check`]), quick fixes from the fixes diagnostics
//! carry ([`actions`]), formatting (`collc fmt`'s canonical text), the document
//! outline, go to definition and find references for every declared name, and
//! hovers: a signal's per-cell credit table (`collc verify --explain`), a notify's
//! cell and the cost formulas (`collc cost`).

pub mod actions;
pub mod check;
pub mod diagnostics;
pub mod hover;
pub mod names;
pub mod position;
pub mod server;
pub mod symbols;

pub use server::{serve, End};

/// Serves one client over stdin/stdout; returns the process exit code (0 after
/// `shutdown` then `exit`, 1 otherwise).
pub fn run_stdio() -> i32 {
    let (conn, io) = lsp_server::Connection::stdio();
    let end = serve(&conn);
    drop(conn);
    let io_ok = io.join().is_ok();
    match end {
        End::Clean if io_ok => 0,
        _ => 1,
    }
}
