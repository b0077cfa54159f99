//! One module per subcommand.

pub mod check;
pub mod fmt;
pub mod ir;
pub mod sim;
