//! `collc-lsp`: the language server of `.coll` files (`collc lsp`). Over stdio or
//! any [`lsp_server::Connection`]: the front end's diagnostics on every change, the
//! symbolic verifier's on save, formatting (`collc fmt`'s canonical text), the
//! document outline, go to definition and find references for every declared name,
//! and a hover on a signal showing its per-cell credit table (`collc verify --explain`).

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
