//! The `.coll` middle end: resolves names, checks types, shapes and domains,
//! and lowers the AST to the [`ir::Protocol`] every later stage consumes.
//! The one front end is [`front`]: parsing, lowering and the range obligations (supplied
//! by the verifier), giving the [`Validated`] protocol every later stage's entry takes.
//! Also holds the IR's visitor ([`visit`]), the facts one walk of it gathers ([`info`]),
//! concrete evaluation ([`eval`]), the canonical printer ([`print`]) and what every
//! collective kind must compute, written once ([`meaning`]).

pub mod eval;
mod front;
pub mod id;
pub mod info;
pub mod ir;
pub mod lower;
pub mod meaning;
pub mod params;
pub mod print;
pub mod templates;
pub mod visit;

pub use front::{front, lowered, Checked, RangePass, Validated};
