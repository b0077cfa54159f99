//! Root causes: one mistake in a protocol often breaks several obligations at the
//! same statement (a missing reset leaves a credit behind — `credit-balance` — and the
//! bounded run then ends with the cell not zero — `deadlock`). The findings whose
//! primary label marks the same span are one root cause: the most severe, first found,
//! is shown, the others are listed with it as "also". Findings without a primary span
//! are each their own cause. What the terminal, `--format short`, SARIF and the
//! language server show is this grouping, made here once, from the spans (data), not
//! from the findings' text.

use crate::report::Report;
use collc_grammar::{Diagnostic, Severity, Span};

/// One root cause: the diagnostic shown, and the other obligations' diagnostics of the
/// same place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootCause {
    /// The diagnostic shown (the most severe of the group, the first found among equals).
    pub diagnostic: Diagnostic,
    /// The other diagnostics of the same place, in the order they were found.
    pub also: Vec<Diagnostic>,
}

/// The span a diagnostic points at: its first primary label's.
pub fn primary_span(d: &Diagnostic) -> Option<Span> {
    d.labels.iter().find(|l| l.primary).map(|l| l.span)
}

fn rank(s: Severity) -> u8 {
    match s {
        Severity::Error => 2,
        Severity::Warning => 1,
        Severity::Note => 0,
    }
}

/// Groups diagnostics by the span they point at, in the order each place is first
/// found; every diagnostic is in exactly one group.
pub fn root_causes(diags: Vec<Diagnostic>) -> Vec<RootCause> {
    let mut groups: Vec<(Option<Span>, Vec<Diagnostic>)> = Vec::new();
    for d in diags {
        let at = primary_span(&d);
        match groups.iter_mut().find(|(s, _)| at.is_some() && *s == at) {
            Some((_, g)) => g.push(d),
            None => groups.push((at, vec![d])),
        }
    }
    groups
        .into_iter()
        .map(|(_, mut g)| {
            let top = g.iter().map(|d| rank(d.severity)).max().unwrap_or(0);
            let i = g.iter().position(|d| rank(d.severity) == top).unwrap_or(0);
            let diagnostic = g.remove(i);
            RootCause {
                diagnostic,
                also: g,
            }
        })
        .collect()
}

impl Report {
    /// The report's diagnostics ([`Report::diagnostics`]) grouped into root causes.
    pub fn root_causes(&self) -> Vec<RootCause> {
        root_causes(self.diagnostics())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(code: &str, sev: Severity, span: Option<(usize, usize)>) -> Diagnostic {
        let d = match sev {
            Severity::Error => Diagnostic::error(code, code),
            _ => Diagnostic::warning(code, code),
        };
        match span {
            Some((a, b)) => d.with_primary(Span::new(a, b), ""),
            None => d,
        }
    }

    #[test]
    fn findings_at_one_span_are_one_cause_shown_by_the_most_severe() {
        let got = root_causes(vec![
            at("w", Severity::Warning, Some((1, 5))),
            at("a", Severity::Error, Some((1, 5))),
            at("b", Severity::Error, Some((7, 9))),
            at("c", Severity::Error, Some((1, 5))),
            at("n1", Severity::Error, None),
            at("n2", Severity::Error, None),
        ]);
        let shown: Vec<(&str, Vec<&str>)> = got
            .iter()
            .map(|c| {
                (
                    c.diagnostic.code.as_str(),
                    c.also.iter().map(|d| d.code.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("a", vec!["w", "c"]),
                ("b", vec![]),
                ("n1", vec![]),
                ("n2", vec![])
            ]
        );
    }

    #[test]
    fn a_different_span_on_the_same_line_is_another_cause() {
        let got = root_causes(vec![
            at("a", Severity::Error, Some((1, 5))),
            at("b", Severity::Error, Some((1, 6))),
        ]);
        assert_eq!(got.len(), 2);
    }
}
