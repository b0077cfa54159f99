//! The range obligations the one front end (`collc_spec::front`) runs after lowering:
//! [`Ranges`] decides them with [`crate::engine::range`] for every value of the declared
//! domains. Every command that reads a `.coll` file gets its protocol from
//! `collc_spec::front(&Ranges, text)`.

use collc_grammar::{ast, Diagnostic};
use collc_spec::ir::Protocol;

/// The Z3 range pass of the front end: an index, slice or rank that some value of the
/// domains takes out of range is an error naming those values (the protocol is refused);
/// bounds the solver cannot decide are warnings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ranges;

impl collc_spec::RangePass for Ranges {
    fn check(
        &self,
        p: &Protocol,
        info: &collc_spec::info::ProtocolInfo,
        file: &ast::File,
    ) -> Vec<Diagnostic> {
        crate::engine::range::check(p, info, file)
    }
}
