//! The verifier gate of every command that produces code (`collc emit`, every target;
//! `collc run`, host and MPI): one library call for the report
//! (`collc_verifier::verify`), the library's policy (`collc_verifier::gate`), and the
//! rendering (`render::gate`).

use super::args::GateArgs;
use crate::driver::Loaded;
use crate::output::{exit, Output};
use crate::render::{self, gate::Action, Style};
use collc_verifier::Gate;

/// Verifies `l` and applies the gate: the gate when something may be produced (its
/// `stamp` goes into the output), else `Err(exit code)` after printing the refusal.
pub fn check(
    l: &Loaded,
    args: &GateArgs,
    action: Action,
    style: Style,
    out: &mut Output,
) -> Result<Gate, i32> {
    let report = collc_verifier::verify(&l.protocol, &args.verify.options(&l.source));
    let g = collc_verifier::gate(&report, args.allow_unverified);
    render::gate::decision(&g, &l.source, action, style, out);
    if g.allowed() {
        Ok(g)
    } else {
        Err(exit::INPUT)
    }
}
