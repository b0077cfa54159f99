//! The put-versus-get passes of `collc opt`: one rank's data moved to every other rank by
//! pulls or by pushes.
//!
//! * `put`: every `if me != R { get D <- S @ R; }` (each rank but R reads S from R) becomes
//!   `if me == R { for reader in peers { put D' @ reader <- S'; } }` (R writes S into every
//!   other rank's D), `me` in the regions renamed to the loop variable. Refused when D is
//!   used on a reading rank by another statement (a data dependency: with a put the data
//!   lands when R's next fence completes, not where the get stood), when R or the regions
//!   depend on `me` through a `let`, and where no such get exists.
//! * `get`: the inverse, every `if me == R { for p in peers { put D @ p <- S; } }` becomes
//!   `if me != R { get D' <- S' @ R; }`, `p` renamed to `me`. Refused when R writes S after
//!   the put (a data dependency: a reader's get may run after that write and read the new
//!   data), when R or the regions depend on `me` through a `let`, and where no such put exists.
//!
//! The rewritten statement keeps its place; the synchronisation around it is unchanged and
//! the result goes through the caller's gate, which decides whether the protocol's rounds
//! still order every transfer (a pushed tile must land before its reader is released; a
//! pulled source must stay put until every reader has finished).

use super::line;
use collc_grammar::ast::{
    Block, CmpOp, CondKind, Expr, ExprKind, File, LoopRange, Region, Stmt, StmtKind,
};

/// Which way the data moves after the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// The writer pushes (`put`).
    Put,
    /// The readers pull (`get`).
    Get,
}

/// One leaf statement, with the ranks it runs on as far as `me == R` / `me != R` guards say.
struct Leaf<'a> {
    stmt: &'a Stmt,
    /// (`true` for `me == X`, X as written) of every enclosing branch.
    guards: Vec<(bool, String)>,
}

fn span_text(text: &str, s: collc_grammar::Span) -> &str {
    text[s.start..s.end].trim()
}

fn is_me(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(n) if n.name == "me")
}

/// `me == X` or `me != X` (either side): (equal, X as written).
fn me_guard(text: &str, c: &collc_grammar::ast::Cond) -> Option<(bool, String)> {
    let CondKind::Cmp(op, a, b) = &c.kind else {
        return None;
    };
    let eq = match op {
        CmpOp::Eq => true,
        CmpOp::Ne => false,
        _ => return None,
    };
    let other = match (is_me(a), is_me(b)) {
        (true, false) => b,
        (false, true) => a,
        _ => return None,
    };
    Some((eq, span_text(text, other.span).to_string()))
}

fn leaves<'a>(text: &str, b: &'a Block, guards: &[(bool, String)], out: &mut Vec<Leaf<'a>>) {
    for s in &b.stmts {
        match &s.kind {
            StmtKind::For { body, .. } => leaves(text, body, guards, out),
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let g = me_guard(text, cond);
                let mut inner = guards.to_vec();
                inner.extend(g.clone());
                leaves(text, then_block, &inner, out);
                if let Some(e) = else_block {
                    let mut inner = guards.to_vec();
                    inner.extend(g.map(|(eq, x)| (!eq, x)));
                    leaves(text, e, &inner, out);
                }
            }
            _ => out.push(Leaf {
                stmt: s,
                guards: guards.to_vec(),
            }),
        }
    }
}

/// Every `if` of the protocol and every leaf statement.
fn walk<'a>(text: &str, file: &'a File) -> (Vec<&'a Stmt>, Vec<Leaf<'a>>) {
    let (mut all_ifs, mut all_leaves) = (Vec::new(), Vec::new());
    for b in file.code() {
        b.each_stmt(&mut |s| {
            if matches!(s.kind, StmtKind::If { .. }) {
                all_ifs.push(s);
            }
        });
        leaves(text, b, &[], &mut all_leaves);
    }
    (all_ifs, all_leaves)
}

/// A transfer of one of the two shapes.
struct Transfer<'a> {
    /// The whole `if`.
    stmt: &'a Stmt,
    /// The rank that owns the data, as written.
    root: String,
    dst: &'a Region,
    src: &'a Region,
    /// The put form's loop variable.
    var: Option<String>,
}

fn only(b: &Block) -> Option<&Stmt> {
    match b.stmts.as_slice() {
        [s] => Some(s),
        _ => None,
    }
}

/// `if me != R { get D <- S @ R; }` (`Way::Put` looks for it) or `if me == R { for p in
/// peers { put D @ p <- S; } }` (`Way::Get`).
fn transfer<'a>(text: &str, s: &'a Stmt, way: Way) -> Option<Transfer<'a>> {
    let StmtKind::If {
        cond,
        then_block,
        else_block: None,
    } = &s.kind
    else {
        return None;
    };
    let (eq, root) = me_guard(text, cond)?;
    match (way, &only(then_block)?.kind) {
        (Way::Put, StmtKind::Get { dst, src, from })
            if !eq && span_text(text, from.span) == root =>
        {
            Some(Transfer {
                stmt: s,
                root,
                dst,
                src,
                var: None,
            })
        }
        (
            Way::Get,
            StmtKind::For {
                var,
                range: LoopRange::Peers(_),
                body,
            },
        ) if eq => match &only(body)?.kind {
            StmtKind::Put { dst, to, src } if matches!(&to.kind, ExprKind::Name(n) if n.name == var.name) => {
                Some(Transfer {
                    stmt: s,
                    root,
                    dst,
                    src,
                    var: Some(var.name.clone()),
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// `text` with the word `from` renamed to `to`.
fn rename(text: &str, from: &str, to: &str) -> String {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = String::new();
    let mut last = 0;
    for (i, _) in text.match_indices(from) {
        let j = i + from.len();
        if (i == 0 || !word(b[i - 1])) && (j >= b.len() || !word(b[j])) {
            out.push_str(&text[last..i]);
            out.push_str(to);
            last = j;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// The statement-level `let`s whose value depends on `me` (directly or through another).
fn me_lets(text: &str, leaves: &[Leaf]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for l in leaves {
        if let StmtKind::Let { name, value } = &l.stmt.kind {
            let v = span_text(text, value.span);
            if super::names(v, "me") || out.iter().any(|(n, _)| super::names(v, n)) {
                out.push((name.name.clone(), line(text, l.stmt.span.start)));
            }
        }
    }
    out
}

/// The local regions a leaf reads or writes, and the one it writes locally.
fn regions(s: &Stmt) -> (Vec<&Region>, Option<&Region>) {
    match &s.kind {
        StmtKind::Copy { dst, src } => (vec![dst, src], Some(dst)),
        StmtKind::Get { dst, src, .. } => (vec![dst, src], Some(dst)),
        StmtKind::Put { dst, src, .. } => (vec![dst, src], None),
        StmtKind::Reduce { dst, src, to, .. } => (vec![dst, src], to.is_none().then_some(dst)),
        _ => (Vec::new(), None),
    }
}

/// The reason `t` cannot be rewritten, if any.
fn refused(text: &str, t: &Transfer, leaves: &[Leaf], way: Way) -> Option<String> {
    let at = line(text, t.stmt.span.start);
    let written = |r: &Region| span_text(text, r.span).to_string();
    let mentioned = [t.root.clone(), written(t.dst), written(t.src)];
    for (n, l) in me_lets(text, leaves) {
        if mentioned.iter().any(|m| super::names(m, &n)) {
            return Some(format!(
                "the transfer at line {at} names `{n}`, which depends on `me` (line {l}): on the other side of the transfer it would have another value"
            ));
        }
    }
    if super::names(&t.root, "me") {
        return Some(format!(
            "the rank that owns the data at line {at} (`{}`) depends on `me`",
            t.root
        ));
    }
    let (window, is_root, after) = match way {
        Way::Put => (&t.dst.name.name, true, 0),
        Way::Get => (&t.src.name.name, false, t.stmt.span.end),
    };
    let blocker = leaves.iter().find(|l| {
        let s = l.stmt.span;
        let (uses, writes) = regions(l.stmt);
        s.start >= after
            && !(t.stmt.span.start <= s.start && s.end <= t.stmt.span.end)
            && !l.guards.contains(&(is_root, t.root.clone()))
            && match way {
                Way::Put => uses.iter().any(|r| &r.name.name == window),
                Way::Get => writes.is_some_and(|r| &r.name.name == window),
            }
    })?;
    let bl = line(text, blocker.stmt.span.start);
    Some(match way {
        Way::Put => format!(
            "line {bl} uses `{window}` on a rank that reads it at line {at} (a data dependency): with a put the data lands when `{}`'s next fence completes, not where the get stands",
            t.root
        ),
        Way::Get => format!(
            "line {bl} writes `{window}` on `{}` after the put at line {at} (a data dependency): a reader's get may run after that write and read the new data",
            t.root
        ),
    })
}

/// The statement that replaces `t`, indented like it.
fn rewritten(text: &str, t: &Transfer, way: Way, ind: &str) -> String {
    let (d, s) = (span_text(text, t.dst.span), span_text(text, t.src.span));
    match way {
        Way::Put => {
            let mut v = "reader".to_string();
            while super::names(text, &v) {
                v.push('_');
            }
            let (d, s) = (rename(d, "me", &v), rename(s, "me", &v));
            format!(
                "if me == {r} {{\n{ind}    for {v} in peers {{\n{ind}        put {d} @ {v} <- {s};\n{ind}    }}\n{ind}}}",
                r = t.root
            )
        }
        Way::Get => {
            let p = t.var.as_deref().unwrap_or("p");
            let (d, s) = (rename(d, p, "me"), rename(s, p, "me"));
            format!(
                "if me != {r} {{\n{ind}    get {d} <- {s} @ {r};\n{ind}}}",
                r = t.root
            )
        }
    }
}

/// `put` or `get`: every transfer of the other shape rewritten, or the reason.
pub fn transfers(text: &str, file: &File, way: Way) -> Result<(String, String), String> {
    let (ifs, leaves) = walk(text, file);
    let found: Vec<Transfer> = ifs.iter().filter_map(|s| transfer(text, s, way)).collect();
    if found.is_empty() {
        return Err(match way {
            Way::Put => "no transfer to push: the pass rewrites `if me != R { get D <- S @ R; }`",
            Way::Get => "no transfer to pull: the pass rewrites `if me == R { for p in peers { put D @ p <- S; } }`",
        }
        .to_string());
    }
    if let Some(why) = found.iter().find_map(|t| refused(text, t, &leaves, way)) {
        return Err(why);
    }
    let mut out = text.to_string();
    let mut lines = Vec::new();
    for t in found.iter().rev() {
        let start = t.stmt.span.start;
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let ind: String = text[line_start..start]
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        out.replace_range(start..t.stmt.span.end, &rewritten(text, t, way, &ind));
        lines.push(line(text, start).to_string());
    }
    lines.reverse();
    let (name, what) = match way {
        Way::Put => ("put", "the gets from the owner became puts by the owner"),
        Way::Get => ("get", "the owner's puts became gets by the readers"),
    };
    Ok((out, format!("{name}: {what} (line {})", lines.join(", "))))
}
