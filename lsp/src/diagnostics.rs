//! collc's [`collc_grammar::Diagnostic`] as an LSP diagnostic: the primary label's
//! range, the code, the other labels as related information, help and notes
//! appended to the message, the fixes as the diagnostic's data (what code actions
//! are made of).

use crate::position::LineIndex;
use collc_grammar::{Diagnostic, Severity};
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, Uri,
};

/// Converts one diagnostic of the document `uri` whose text `idx` indexes.
pub fn to_lsp(d: &Diagnostic, idx: &LineIndex, uri: &Uri) -> lsp_types::Diagnostic {
    let primary = d
        .labels
        .iter()
        .position(|l| l.primary)
        .or((!d.labels.is_empty()).then_some(0));
    let range = primary.map_or(Range::default(), |i| idx.range(d.labels[i].span));
    let mut message = d.message.clone();
    if let Some(l) = primary.map(|i| &d.labels[i]) {
        if !l.message.is_empty() && l.message != d.message {
            message.push_str(&format!(" ({})", l.message));
        }
    }
    if let Some(h) = &d.help {
        message.push_str(&format!("\nhelp: {h}"));
    }
    for n in &d.notes {
        message.push_str(&format!("\nnote: {n}"));
    }
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != primary)
        .map(|(_, l)| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), idx.range(l.span)),
            message: if l.message.is_empty() {
                "here".into()
            } else {
                l.message.clone()
            },
        })
        .collect();
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Note => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.code.clone())),
        source: Some("collc".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        data: crate::actions::data(d, idx),
        ..lsp_types::Diagnostic::default()
    }
}

/// One root cause (`collc_verifier::cause`) as one LSP diagnostic: the diagnostic shown,
/// with every other obligation that found the same place as related information
/// (`also CODE: message`), as `collc verify` lists them and SARIF relates them.
pub fn cause_to_lsp(
    c: &collc_verifier::cause::RootCause,
    idx: &LineIndex,
    uri: &Uri,
) -> lsp_types::Diagnostic {
    let mut out = to_lsp(&c.diagnostic, idx, uri);
    let also = c.also.iter().filter_map(|a| {
        collc_verifier::cause::primary_span(a).map(|s| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), idx.range(s)),
            message: format!("also {}: {}", a.code, a.message),
        })
    });
    let mut related = out.related_information.take().unwrap_or_default();
    related.extend(also);
    out.related_information = (!related.is_empty()).then_some(related);
    out
}

/// The front end's diagnostics of a text, and, when `verify` and the text
/// validates, the symbolic verifier's (bounded obligations skipped, so they add
/// nothing).
pub fn of_text(text: &str, verify: bool, name: &str) -> Vec<Diagnostic> {
    let checked = collc_spec::front(&collc_verifier::Ranges, text);
    let mut out = checked.diagnostics;
    if let (true, Some(p)) = (verify, &checked.protocol) {
        let source = collc_grammar::Source::new(name, text);
        let opts = collc_verifier::Options {
            source: Some(&source),
            ..collc_verifier::Options::symbolic_only()
        };
        out.extend(collc_verifier::verify(p, &opts).diagnostics());
    }
    out
}

/// The `textDocument/publishDiagnostics` notification of `found` in `text`: one LSP
/// diagnostic per root cause.
pub fn publication(
    uri: &Uri,
    text: &str,
    found: &[Diagnostic],
    version: Option<i32>,
) -> lsp_server::Notification {
    use lsp_types::notification::Notification as _;
    let idx = LineIndex::new(text);
    let diags = collc_verifier::cause::root_causes(found.to_vec())
        .iter()
        .map(|c| cause_to_lsp(c, &idx, uri))
        .collect();
    lsp_server::Notification::new(
        lsp_types::notification::PublishDiagnostics::METHOD.to_string(),
        lsp_types::PublishDiagnosticsParams::new(uri.clone(), diags, version),
    )
}
