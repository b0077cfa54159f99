//! The signal passes of `collc opt`: removal of waits that another wait already implies
//! (`implied-waits`) and aggregation of notifies (`aggregate-notifies`). Both rewrite the
//! source: a removed statement becomes a comment saying why (line numbers stay), and the
//! result goes through the caller's gate like any other protocol.
//!
//! * `implied-waits`, within one block (the statements of one body, loop or branch):
//!   - `wait C >= a;` directly followed by `wait C >= b;` (same cell and target as written,
//!     literal a <= b): the first goes (when the second is satisfied, so was the first at
//!     that instant, and nothing runs between them);
//!   - `wait C >= a;` and later `wait C >= b;` with a >= b: the later one goes, unless a
//!     statement between them, or any remote notify of the protocol, may lower the signal
//!     (a `-=` or `=` notify, or `+=` of anything but a non-negative literal): then the
//!     cell may have dropped below b, and the pair is refused with that statement's line.
//! * `aggregate-notifies`, within one block: `notify C @ T += a;` and a later `notify C @
//!   T += b;` (same cell and target, literals) become one `notify C @ T += a + b;` at the
//!   place of the second, unless a wait or an early return lies between them (delaying the
//!   first notify past a wait could deadlock a peer that waits for it first; past a return
//!   it could be lost): refused with that statement's line.

use super::line;
use collc_grammar::ast::{Block, CellRef, CmpOp, ExprKind, File, NotifyOpAst, Stmt, StmtKind};

/// Every statement list of the protocol (body, epilogue, loop bodies, branches).
fn blocks(file: &File) -> Vec<&Block> {
    let mut out = Vec::new();
    file.code().for_each(|b| b.each_block(&mut |x| out.push(x)));
    out
}

/// A cell and its target as written (`ack[q] @ p`, `ack[q] @ ` for the own rank): two
/// statements name the same cell when their keys are equal.
fn cell_key(text: &str, cell: &CellRef, target: Option<&collc_grammar::ast::Expr>) -> String {
    let t = target.map_or("", |t| &text[t.span.start..t.span.end]);
    format!("{} @ {t}", &text[cell.span.start..cell.span.end])
}

fn literal(e: &collc_grammar::ast::Expr) -> Option<i64> {
    match e.kind {
        ExprKind::Int(v) => Some(v),
        _ => None,
    }
}

/// A wait `>=` with a literal threshold: (cell and target as written, signal, threshold).
fn ge_wait<'a>(text: &'a str, s: &'a Stmt) -> Option<(String, &'a str, i64)> {
    match &s.kind {
        StmtKind::Wait {
            cell,
            target,
            cmp: CmpOp::Ge,
            threshold,
        } => Some((
            cell_key(text, cell, target.as_ref()),
            cell.name.name.as_str(),
            literal(threshold)?,
        )),
        _ => None,
    }
}

/// Whether `s` may lower signal `sig` (a notify of it that is not `+=` of a non-negative literal).
fn lowers(s: &Stmt, sig: &str) -> bool {
    matches!(&s.kind, StmtKind::Notify { cell, op, value, .. }
        if cell.name.name == sig && !(*op == NotifyOpAst::Add && literal(value).is_some_and(|v| v >= 0)))
}

/// One rewrite: the statement span to comment out, why, and an optional replacement of
/// another span (start, end, text).
struct Edit {
    remove: (usize, usize),
    note: String,
    replace: Option<(usize, usize, String)>,
}

/// The first implied wait, or the reason none is (the first pair refused, else none found).
fn implied_wait(text: &str, file: &File) -> Result<Edit, String> {
    let remote_lowering = |sig: &str| {
        blocks(file)
            .iter()
            .flat_map(|b| b.stmts.iter())
            .find(|s| {
                matches!(
                    &s.kind,
                    StmtKind::Notify {
                        target: Some(_),
                        ..
                    }
                ) && lowers(s, sig)
            })
            .map(|s| line(text, s.span.start))
    };
    let mut refused: Option<String> = None;
    for b in blocks(file) {
        for (i, si) in b.stmts.iter().enumerate() {
            let Some((key, sig, a)) = ge_wait(text, si) else {
                continue;
            };
            for (j, sj) in b.stmts.iter().enumerate().skip(i + 1) {
                let Some((k2, _, bth)) = ge_wait(text, sj) else {
                    continue;
                };
                if k2 != key {
                    continue;
                }
                let (li, lj) = (line(text, si.span.start), line(text, sj.span.start));
                if j == i + 1 && a <= bth {
                    return Ok(Edit {
                        remove: (si.span.start, si.span.end),
                        note: format!(
                            "implied by the wait after it (line {lj}: threshold {bth} >= {a})"
                        ),
                        replace: None,
                    });
                }
                if a < bth {
                    continue;
                }
                let between = b.stmts[i + 1..j]
                    .iter()
                    .find(|s| s.any_nested(&|x| lowers(x, sig)));
                let why = match (between, remote_lowering(sig)) {
                    (Some(s), _) => format!("line {} may lower `{sig}` between them", line(text, s.span.start)),
                    (None, Some(l)) => format!("the remote notify at line {l} may lower `{sig}` while this rank waits"),
                    (None, None) => {
                        return Ok(Edit {
                            remove: (sj.span.start, sj.span.end),
                            note: format!("implied by the wait at line {li} (threshold {a} >= {bth}; nothing lowers `{sig}` in between)"),
                            replace: None,
                        })
                    }
                };
                refused.get_or_insert(format!(
                    "the wait at line {lj} is not implied by the one at line {li}: {why}"
                ));
            }
        }
    }
    Err(refused.unwrap_or_else(|| {
        "no wait is implied by another (two `wait C >= literal` of the same cell and target in one block)".to_string()
    }))
}

/// A `+=` notify with a literal: (cell and target as written, amount, span of the amount).
fn add_notify<'a>(text: &'a str, s: &'a Stmt) -> Option<(String, i64, (usize, usize))> {
    match &s.kind {
        StmtKind::Notify {
            cell,
            target,
            op: NotifyOpAst::Add,
            value,
        } => Some((
            cell_key(text, cell, target.as_ref()),
            literal(value)?,
            (value.span.start, value.span.end),
        )),
        _ => None,
    }
}

/// The first pair of notifies to aggregate, or the reason none is.
fn aggregated(text: &str, file: &File) -> Result<Edit, String> {
    let mut refused: Option<String> = None;
    for b in blocks(file) {
        for (i, si) in b.stmts.iter().enumerate() {
            let Some((key, a, _)) = add_notify(text, si) else {
                continue;
            };
            let Some((j, (_, bv, vspan))) = b
                .stmts
                .iter()
                .enumerate()
                .skip(i + 1)
                .find_map(|(j, s)| add_notify(text, s).filter(|n| n.0 == key).map(|n| (j, n)))
            else {
                continue;
            };
            let (li, lj) = (line(text, si.span.start), line(text, b.stmts[j].span.start));
            let blocker = b.stmts[i + 1..j].iter().find(|s| {
                s.any_nested(&|x| matches!(x.kind, StmtKind::Wait { .. } | StmtKind::Return { .. }))
            });
            if let Some(s) = blocker {
                refused.get_or_insert(format!(
                    "the notifies at lines {li} and {lj} are separated by a wait or an early return (line {}): delaying the first past it could deadlock a peer that waits for it, or lose it",
                    line(text, s.span.start)
                ));
                continue;
            }
            return Ok(Edit {
                remove: (si.span.start, si.span.end),
                note: format!("aggregated into the notify at line {lj} (+= {a} + {bv})"),
                replace: Some((vspan.0, vspan.1, format!("{}", a + bv))),
            });
        }
    }
    Err(refused.unwrap_or_else(|| {
        "no two notifies of the same cell and target (`+=` a literal) in one block".to_string()
    }))
}

/// The text with `e` applied: the removed statement becomes `// opt: ...` (the rest of its
/// line kept), the replacement written.
fn edit(text: &str, pass: &str, e: &Edit) -> String {
    let (s, t) = e.remove;
    let stmt = text[s..t].trim();
    let comment = format!("// {pass}: `{stmt}` removed: {}", e.note);
    let rest_of_line = text[t..].split('\n').next().unwrap_or("");
    let removed = if rest_of_line.trim().is_empty() || rest_of_line.trim_start().starts_with("//") {
        comment
    } else {
        String::new()
    };
    let mut spans = vec![(s, t, removed)];
    if let Some(r) = &e.replace {
        spans.push(r.clone());
    }
    spans.sort_by_key(|x| std::cmp::Reverse(x.0));
    let mut out = text.to_string();
    for (a, b, new) in spans {
        out.replace_range(a..b, &new);
    }
    out
}

/// `implied-waits`: every implied wait removed, one at a time (the text re-read after each).
pub fn implied_waits(text: &str) -> Result<(String, String), String> {
    repeat(text, "implied-waits", implied_wait)
}

/// `aggregate-notifies`: every aggregable pair merged, one at a time.
pub fn aggregate_notifies(text: &str) -> Result<(String, String), String> {
    repeat(text, "aggregate-notifies", aggregated)
}

fn repeat(
    text: &str,
    pass: &str,
    find: fn(&str, &File) -> Result<Edit, String>,
) -> Result<(String, String), String> {
    let mut out = text.to_string();
    let mut notes = Vec::new();
    loop {
        let file =
            collc_grammar::parse(&out).map_err(|_| "the protocol does not parse".to_string())?;
        match find(&out, &file) {
            Ok(e) => {
                notes.push(format!(
                    "line {}: `{}` ({})",
                    line(&out, e.remove.0),
                    out[e.remove.0..e.remove.1].trim(),
                    e.note
                ));
                out = edit(&out, pass, &e);
            }
            Err(reason) if notes.is_empty() => return Err(reason),
            Err(_) => break,
        }
    }
    Ok((out, format!("{pass}: {}", notes.join("; "))))
}
