//! Hover on a signal: its rows of the per-cell credit table (`collc verify
//! --explain`), as markdown.

use crate::names::{self, Kind};
use collc_grammar::Span;

/// The hover text for the token `at` of `text`, if it names a signal.
pub fn signal_credits(text: &str, at: Span) -> Option<String> {
    let file = collc_grammar::parse(text).ok()?;
    let decls = names::decls(&file, text.len());
    let decl = names::resolve(&decls, text, at)?;
    if decl.kind != Kind::Signal {
        return None;
    }
    let mut md = format!("**signal** `{}`\n\n", decl.name);
    let Some(p) = collc_verifier::validate(text).protocol else {
        md.push_str("(the credit table needs a protocol without errors)");
        return Some(md);
    };
    match collc_verifier::table::explain(&p) {
        Err(e) => md.push_str(&format!("credit table unavailable: {e}")),
        Ok(t) => {
            md.push_str(&format!("credit table ({})\n\n", t.method));
            md.push_str(
                "| cells per call | credits/cell/call | waits (owner, in order) | reset | net |\n",
            );
            md.push_str("|---|---|---|---|---|\n");
            let rows: Vec<_> = t.rows.iter().filter(|r| r.signal == decl.name).collect();
            for r in &rows {
                md.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    cell(&r.cells),
                    cell(&r.credits),
                    cell(&r.waits),
                    cell(&r.reset),
                    cell(&r.net)
                ));
            }
            if rows.is_empty() {
                md.push_str("| 0 | | | | |\n");
            }
        }
    }
    Some(md)
}

/// A table cell's text with the characters markdown would read escaped.
fn cell(s: &str) -> String {
    let s = s.replace('|', "\\|");
    if s.is_empty() {
        " ".into()
    } else {
        format!("`{s}`")
    }
}
