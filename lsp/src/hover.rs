//! Hovers: on a signal, its rows of the per-cell credit table (`collc verify
//! --explain`); on a `notify`, what it does to which cell, its signal's credit rows
//! and the protocol's cost formulas per call (`collc cost`, derived symbolically by
//! `collc_verifier::cost`). Markdown.

use crate::names::{self, Kind};
use collc_grammar::ast::{Block, File, ItemKind, NotifyOpAst, Stmt, StmtKind};
use collc_grammar::Span;
use collc_spec::Validated;

/// The hover text for the token `at` of `text`: a signal's name or a `notify`.
pub fn at(text: &str, at: Span) -> Option<String> {
    let file = collc_grammar::parse(text).ok()?;
    if text.get(at.start..at.end) == Some("notify") {
        return notify(&file, text, at);
    }
    let decls = names::decls(&file, text.len());
    let decl = names::resolve(&decls, text, at)?;
    if decl.kind != Kind::Signal {
        return None;
    }
    let mut md = format!("**signal** `{}`\n\n", decl.name);
    match collc_spec::front(&collc_verifier::Ranges, text).protocol {
        None => md.push_str(NEEDS_PROTOCOL),
        Some(p) => md.push_str(&credit_rows(&p, &decl.name)),
    }
    Some(md)
}

const NEEDS_PROTOCOL: &str = "(the credit table needs a protocol without errors)";

/// The hover of the `notify` keyword at `kw`.
fn notify(file: &File, text: &str, kw: Span) -> Option<String> {
    let (stmt, epilogue) = file.items.iter().find_map(|i| match &i.kind {
        ItemKind::Body(b) => find(b, kw.start).map(|s| (s, false)),
        ItemKind::Epilogue(b) => find(b, kw.start).map(|s| (s, true)),
        _ => None,
    })?;
    let StmtKind::Notify {
        cell, target, op, ..
    } = &stmt.kind
    else {
        return None;
    };
    let written = text.get(stmt.span.start..stmt.span.end)?;
    let written = written
        .trim_start_matches("notify")
        .trim_end_matches(';')
        .trim();
    let what = match op {
        NotifyOpAst::Add | NotifyOpAst::Sub => "AtomicAdd",
        NotifyOpAst::Set => "Set",
    };
    let whose = if target.is_some() {
        "the peer's cell"
    } else {
        "this rank's cell"
    };
    let section = if epilogue { "epilogue" } else { "body" };
    let mut md = format!("**notify** `{written}`: {what} on {whose} ({section})\n\n");
    let Some(p) = collc_spec::front(&collc_verifier::Ranges, text).protocol else {
        md.push_str(NEEDS_PROTOCOL);
        return Some(md);
    };
    md.push_str(&format!("signal `{}`: ", cell.name.name));
    md.push_str(&credit_rows(&p, &cell.name.name));
    md.push('\n');
    md.push_str(&cost(&p));
    Some(md)
}

/// The statement of `b` (at any depth) that starts at `start`.
fn find(b: &Block, start: usize) -> Option<&Stmt> {
    b.stmts.iter().find_map(|s| {
        if s.span.start == start {
            return Some(s);
        }
        if !(s.span.start..s.span.end).contains(&start) {
            return None;
        }
        match &s.kind {
            StmtKind::For { body, .. } => find(body, start),
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => find(then_block, start).or_else(|| find(else_block.as_ref()?, start)),
            _ => None,
        }
    })
}

/// The signal's rows of the credit table, as a markdown table.
fn credit_rows(p: &Validated, signal: &str) -> String {
    let t = match collc_verifier::table::explain(p) {
        Err(e) => return format!("credit table unavailable: {e}\n"),
        Ok(t) => t,
    };
    let mut md = format!("credit table ({})\n\n", t.method);
    md.push_str("| cells per call | credits/cell/call | waits (owner, in order) | reset | net |\n");
    md.push_str("|---|---|---|---|---|\n");
    let rows: Vec<_> = t.rows.iter().filter(|r| r.signal == signal).collect();
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
    md
}

/// The protocol's cost per call (all ranks and blocks), as formulas.
fn cost(p: &Validated) -> String {
    match collc_verifier::cost::cost(p, &Default::default()) {
        Err(e) => format!("cost unavailable: {e}\n"),
        Ok(c) => {
            let mut md =
                String::from("cost per call (all ranks and blocks)\n\n| | formula |\n|---|---|\n");
            for r in &c.rows {
                md.push_str(&format!("| {} | {} |\n", r.what, cell(&r.formula)));
            }
            md
        }
    }
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
