//! One module per subcommand.

pub mod args;
pub mod check;
pub mod cost;
pub mod emit;
pub mod fmt;
pub mod gate;
pub mod ir;
pub mod lib;
pub mod lift;
pub mod lsp;
pub mod mpi;
pub mod new;
pub mod opt;
pub mod run;
pub mod sim;
pub mod tune;
pub mod verify;
