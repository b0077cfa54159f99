//! The range obligations the one front end (`collc_spec::front`) runs after lowering:
//! [`Ranges`] decides them with [`crate::engine::range`] for every value of the declared
//! domains. Every command that reads a `.coll` file gets its protocol from
//! `collc_spec::front(&Ranges, text)`; [`RangesWithin`] is the same pass with another
//! wall-clock cap, for a caller whose result must not depend on the machine's load (the
//! verdict golden, which raises the symbolic cap likewise).

use collc_grammar::{ast, Diagnostic};
use collc_spec::ir::Protocol;
use collc_spec::RangePass;
use std::time::Duration;

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
        RangesWithin(Duration::from_millis(
            crate::planning::TABLE.range_budget_ms,
        ))
        .check(p, info, file)
    }
}

/// [`Ranges`] with a wall-clock cap of its own instead of the planner's `range_budget_ms`.
#[derive(Debug, Clone, Copy)]
pub struct RangesWithin(pub Duration);

impl RangePass for RangesWithin {
    fn check(
        &self,
        p: &Protocol,
        info: &collc_spec::info::ProtocolInfo,
        file: &ast::File,
    ) -> Vec<Diagnostic> {
        crate::engine::range::check(p, info, file, self.0)
    }
}
