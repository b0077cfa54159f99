//! The front end's range obligations as one obligation of the report, `index-range`,
//! so that the verdict (and the gate) see a bound the solver could not decide: the
//! front end (`crate::validate`) refuses an index, slice or rank some value of the
//! domains takes out of range, but only warns (`domain::range-unproved`) for a bound
//! it could not decide — and a warning must not let `collc verify` exit 0.

use crate::report::{Finding, ObligationResult, Status};
use collc_grammar::{Severity, Source};
use collc_spec::ir::Protocol;

/// The obligation's id.
pub const ID: &str = crate::report::Obligation::IndexRange.id();

/// Decides every index, slice and `@` rank of `p` for the whole declared domain
/// (`crate::engine::range`): `proved`, `violated` (a bound some value breaks: only reachable
/// by a library caller that lowered without validating) or `unknown` naming the forms.
/// The AST is the source's when given, else the canonical print of `p` (print → parse
/// → lower is the identity on the IR), whose spans are then not the file's.
pub fn check(
    p: &Protocol,
    info: &collc_spec::info::ProtocolInfo,
    source: Option<&Source>,
) -> ObligationResult {
    let printed;
    let text = match source {
        Some(s) => &*s.text,
        None => {
            printed = collc_spec::print::print(p);
            printed.as_str()
        }
    };
    let declared = crate::report::WorldRange {
        lo: crate::engine::exec::declared_world(p).0,
        hi: crate::engine::exec::declared_world(p).1,
    };
    let mk =
        |status, scope: Option<&str>, reason: Option<String>, claim: String| ObligationResult {
            id: ID.into(),
            code: format!("verify::{ID}"),
            status,
            scope: scope.map(str::to_string),
            // Decided over the whole declared domain (Z3 with P symbolic).
            world: (status == Status::Proved).then_some(declared),
            reason,
            claim,
            findings: Vec::new(),
            // Decided for every value of the declared domains, P symbolic, by Z3.
            evidence: if status == Status::Proved {
                crate::report::evidence::Evidence::symbolic(declared)
            } else {
                crate::report::evidence::Evidence::none()
            },
        };
    let file = match collc_grammar::parse(text) {
        Ok(f) => f,
        Err(_) => {
            return mk(
                Status::Unknown,
                None,
                Some("the source given with the protocol does not parse".into()),
                "not decided".into(),
            )
        }
    };
    let diags = crate::engine::range::check(p, info, &file);
    let spans = source.is_some();
    let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
    if !errors.is_empty() {
        let mut r = mk(
            Status::Violated,
            Some(SCOPE),
            None,
            format!("{} bound(s) leave their range", errors.len()),
        );
        r.findings = errors
            .iter()
            .map(|d| {
                let mut f = Finding::new(d.message.clone());
                if spans {
                    f.primary = d.primary_span();
                }
                f.primary_label = d.message.clone();
                f.help = d.help.clone();
                f
            })
            .collect();
        // The values that break each bound are in its message (the front end's).
        r.evidence = crate::report::evidence::Evidence::of_findings(&r.findings);
        return r;
    }
    let unproved: Vec<String> = diags
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
            Some(SCOPE),
            Some(format!("unsupported form: {}", unproved.join("; "))),
            format!("{} bound(s) not decided", unproved.len()),
        );
    }
    mk(
        Status::Proved,
        Some(SCOPE),
        None,
        format!("every index, slice and `@` rank in range ({SCOPE})"),
    )
}

const SCOPE: &str = "every value of the declared domains, by inspection or Z3";
