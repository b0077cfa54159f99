//! Code actions: a diagnostic's fixes ([`collc_grammar::Fix`], defined where the
//! diagnostic is made) travel in the LSP diagnostic's `data` as ready text edits;
//! `textDocument/codeAction` turns the data of the diagnostics the client sends
//! back into quick fixes. Nothing here derives a fix.

use crate::position::LineIndex;
use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, TextEdit, Uri, WorkspaceEdit};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One fix as it travels in a diagnostic's `data`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FixData {
    /// The action's title.
    pub title: String,
    /// The edits, in LSP ranges of the diagnosed text.
    pub edits: Vec<TextEdit>,
}

/// The `data` of a diagnostic: `{ "fixes": [...] }`, none without fixes.
pub fn data(d: &collc_grammar::Diagnostic, idx: &LineIndex) -> Option<serde_json::Value> {
    if d.fixes.is_empty() {
        return None;
    }
    let fixes: Vec<FixData> = d
        .fixes
        .iter()
        .map(|f| FixData {
            title: f.title.clone(),
            edits: f
                .edits
                .iter()
                .map(|e| TextEdit::new(idx.range(e.span), e.text.clone()))
                .collect(),
        })
        .collect();
    Some(serde_json::json!({ "fixes": fixes }))
}

/// The quick fixes of the diagnostics of `params` (their `data`).
pub fn quick_fixes(params: &lsp_types::CodeActionParams) -> Vec<CodeActionOrCommand> {
    let uri: &Uri = &params.text_document.uri;
    let mut out = Vec::new();
    for d in &params.context.diagnostics {
        let Some(fixes) = d.data.as_ref().and_then(|v| v.get("fixes")) else {
            continue;
        };
        let Ok(fixes) = serde_json::from_value::<Vec<FixData>>(fixes.clone()) else {
            continue;
        };
        for f in fixes {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: f.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), f.edits)])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
    }
    out
}
