//! The `.coll` front end: the pest grammar, the parser to an AST with spans, and
//! the [`Diagnostic`] data type every later stage reports with.

pub mod ast;
pub mod diag;
pub mod outline;
pub mod parse;
pub mod suggest;
mod syntax;

pub use diag::{Diagnostic, Edit, Fix, Label, Severity, Source, Span};
pub use parse::{comments, decode, parse};
pub use syntax::MAX_SYNTAX_ERRORS;
