//! The range obligations the one front end (`collc_spec::front`) runs after lowering:
//! [`Ranges`] decides them with [`crate::engine::range`] for every value of the declared
//! domains. Every command that reads a `.coll` file gets its protocol from
//! `collc_spec::front(&Ranges, text)`. The pass's budget is the planner's, in Z3 resource
//! units (`range_budget_units`), so its result does not depend on the machine's load.

use collc_grammar::{ast, Diagnostic};
use collc_spec::ir::Protocol;
use collc_spec::RangePass;

/// The Z3 range pass of the front end: an index, slice or rank that some value of the
/// domains takes out of range is an error naming those values (the protocol is refused);
/// bounds the solver cannot decide are warnings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ranges;

impl RangePass for Ranges {
    fn check(
        &self,
        p: &Protocol,
        info: &collc_spec::info::ProtocolInfo,
        file: &ast::File,
    ) -> Vec<Diagnostic> {
        crate::engine::range::check(p, info, file)
    }
}
