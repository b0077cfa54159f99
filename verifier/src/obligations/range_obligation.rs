//! The front end's range obligations as one obligation of the report, `index-range`,
//! so that the verdict (and the gate) see a bound the solver could not decide: the
//! front end (`collc_spec::front` with `crate::validate::Ranges`) refuses an index,
//! slice or rank some value of the domains takes out of range, but only warns
//! (`domain::range-unproved`) for a bound it could not decide — and a warning must not
//! let `collc verify` exit 0. The pass ran once, in the front end; its result is kept in
//! the [`Validated`] protocol and rendered here.

use crate::report::evidence::Evidence;
use crate::report::scope::{Covered, Scope};
use crate::report::{ObligationResult, Status, WorldRange};
use collc_grammar::Severity;
use collc_spec::Validated;

/// The obligation's id.
pub const ID: &str = crate::report::Obligation::IndexRange.id();

/// Every index, slice and `@` rank of `p` as the front end's range pass decided them for
/// the whole declared domain ([`Validated::ranges`]): `proved`, or `unknown` naming the
/// forms it could not decide (a bound some value breaks never reaches here: the front end
/// refused the protocol).
pub fn check(p: &Validated) -> ObligationResult {
    let (lo, hi) = crate::planning::declared_world(p);
    let declared = WorldRange { lo, hi };
    let mk = |status, reason: Option<String>, claim: String| ObligationResult {
        id: ID.into(),
        code: format!("verify::{ID}"),
        status,
        scope: Some(Scope::of(Covered::RangePass)),
        // Decided over the whole declared domain (Z3 with P symbolic).
        world: (status == Status::Proved).then_some(declared),
        reason,
        claim,
        findings: Vec::new(),
        // Decided for every value of the declared domains, P symbolic, by Z3.
        evidence: if status == Status::Proved {
            Evidence::symbolic(declared)
        } else {
            Evidence::none()
        },
    };
    let unproved: Vec<String> = p
        .ranges()
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| match &d.help {
            Some(h) => format!("{} ({h})", d.message),
            None => d.message.clone(),
        })
        .collect();
    if !unproved.is_empty() {
        return mk(
            Status::Unknown,
            Some(format!("unsupported form: {}", unproved.join("; "))),
            format!("{} bound(s) not decided", unproved.len()),
        );
    }
    mk(
        Status::Proved,
        None,
        format!(
            "every index, slice and `@` rank in range ({})",
            Scope::of(Covered::RangePass)
        ),
    )
}
