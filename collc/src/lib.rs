//! The collc command line as a library: loading files, running subcommands and
//! rendering their results. `main.rs` only parses arguments and calls in here.

pub mod cmd;
pub mod driver;
pub mod output;
pub mod render;
