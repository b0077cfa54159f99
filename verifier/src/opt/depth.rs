//! The pipelining-depth pass of `collc opt` (`depth=D`): a credit window of K slots
//! deepened to D. It applies where the protocol declares its window as a constant,
//! `const K = E;`, and uses it the way a slot ring does: a wait whose threshold lags by K
//! (`wait ack[q] >= t - K + 1`: slot `t % K` is free once chunk `t - K` is drained) and a
//! buffer indexed `% K` (`ring[t % K]`) whose slot dimension is `K`. The pass rewrites the
//! constant to `const K = D;`, so the writer runs up to D chunks ahead and every buffer
//! sized by `K` holds D slots. It is refused, with the reason, where the protocol has no
//! such window, where the window is a launch parameter (nothing to rewrite), where the
//! window is written with literals (its memory is fixed), where a slot ring is indexed by
//! a literal modulus while the wait lags by `K` (deepening the lag alone would let the
//! writer overwrite a slot its reader has not drained), or where a `require`, a domain or
//! a signal's shape names `K`. The result goes through the caller's gate like any other
//! protocol.

use super::line;
use collc_grammar::ast::{
    BinOp, Expr, ExprKind, File, ItemKind, LoopRange, Region, Stmt, StmtKind,
};

/// The deepest window `depth=D` writes.
pub const MAX_DEPTH: i64 = 64;

/// The expressions of `s` itself (not conditions, not its nested statements').
fn stmt_exprs<'a>(s: &'a Stmt, out: &mut Vec<&'a Expr>) {
    let region = |r: &'a Region, out: &mut Vec<&'a Expr>| {
        out.extend(r.index.iter());
        out.extend(r.lo.iter().chain(r.hi.iter()));
    };
    match &s.kind {
        StmtKind::Let { value, .. } => out.push(value),
        StmtKind::Notify {
            cell,
            target,
            value,
            ..
        } => {
            out.extend(cell.index.iter().chain(target.iter()));
            out.push(value);
        }
        StmtKind::Wait {
            cell,
            target,
            threshold,
            ..
        } => {
            out.extend(cell.index.iter().chain(target.iter()));
            out.push(threshold);
        }
        StmtKind::Copy { dst, src } => {
            region(dst, out);
            region(src, out);
        }
        StmtKind::Get { dst, src, from } => {
            region(dst, out);
            region(src, out);
            out.push(from);
        }
        StmtKind::Put { dst, to, src } => {
            region(dst, out);
            region(src, out);
            out.push(to);
        }
        StmtKind::Reduce {
            dst, src, from, to, ..
        } => {
            region(dst, out);
            region(src, out);
            out.extend(from.iter().chain(to.iter()));
        }
        StmtKind::For { range, .. } => {
            if let LoopRange::Span { lo, hi, step, .. } = range {
                out.extend([lo, hi].into_iter().chain(step.iter()));
            }
        }
        StmtKind::If { .. } | StmtKind::Fence | StmtKind::Return { .. } => {}
    }
}

/// Whether `e` or a subexpression satisfies `f`.
fn any_sub(e: &Expr, f: &dyn Fn(&Expr) -> bool) -> bool {
    f(e) || match &e.kind {
        ExprKind::Neg(a) | ExprKind::Paren(a) => any_sub(a, f),
        ExprKind::Bin(_, a, b) => any_sub(a, f) || any_sub(b, f),
        ExprKind::Call(_, args) | ExprKind::Indexed(_, args) => args.iter().any(|a| any_sub(a, f)),
        ExprKind::Int(_) | ExprKind::Name(_) => false,
    }
}

/// `x - R` (or `x % R`) with R the name or literal satisfying `rhs`.
fn bin_with(e: &Expr, op: BinOp, rhs: &dyn Fn(&Expr) -> bool) -> bool {
    any_sub(
        e,
        &|x| matches!(&x.kind, ExprKind::Bin(o, _, r) if *o == op && rhs(r)),
    )
}

fn is_name(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Name(n) if n.name == name)
}

fn is_int(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Int(_))
}

/// The protocol's statements and waits, flattened.
struct Body<'a> {
    exprs: Vec<&'a Expr>,
    waits: Vec<&'a Stmt>,
}

fn body(file: &File) -> Body<'_> {
    let mut out = Body {
        exprs: Vec::new(),
        waits: Vec::new(),
    };
    for b in file.code() {
        b.each_stmt(&mut |s| stmt_exprs(s, &mut out.exprs));
        b.each_stmt(&mut |s| {
            if matches!(s.kind, StmtKind::Wait { .. }) {
                out.waits.push(s);
            }
        });
    }
    out
}

fn threshold(s: &Stmt) -> Option<&Expr> {
    match &s.kind {
        StmtKind::Wait { threshold, .. } => Some(threshold),
        _ => None,
    }
}

/// The first name `e` subtracts (`t - K + 1`: `K`).
fn lag_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Bin(BinOp::Sub, a, r) => match &r.kind {
            ExprKind::Name(n) => Some(&n.name),
            _ => lag_name(a).or_else(|| lag_name(r)),
        },
        ExprKind::Bin(_, a, b) => lag_name(a).or_else(|| lag_name(b)),
        ExprKind::Neg(a) | ExprKind::Paren(a) => lag_name(a),
        ExprKind::Call(_, args) | ExprKind::Indexed(_, args) => args.iter().find_map(lag_name),
        ExprKind::Int(_) | ExprKind::Name(_) => None,
    }
}

/// How a name is declared at the top level.
enum Decl<'a> {
    Const(&'a Expr),
    Param,
    Derived,
}

fn declared<'a>(file: &'a File, name: &str) -> Option<Decl<'a>> {
    file.items.iter().find_map(|i| match &i.kind {
        ItemKind::Const { name: n, value } if n.name == name => Some(Decl::Const(value)),
        ItemKind::Param { name: n, .. } if n.name == name => Some(Decl::Param),
        ItemKind::Let { name: n, .. } if n.name == name => Some(Decl::Derived),
        _ => None,
    })
}

/// `depth=D`: the window constant rewritten to D, or the reason it is not.
pub fn depth(text: &str, file: &File, d: i64) -> Result<(String, String), String> {
    let b = body(file);
    // The waits that lag by a top-level name; a constant first.
    let mut lags: Vec<(&str, &Stmt, Decl)> = b
        .waits
        .iter()
        .filter_map(|w| {
            let n = lag_name(threshold(w)?)?;
            Some((n, *w, declared(file, n)?))
        })
        .collect();
    lags.sort_by_key(|(_, _, d)| match d {
        Decl::Const(_) => 0,
        Decl::Param => 1,
        Decl::Derived => 2,
    });
    let Some((k, wait, decl)) = lags.into_iter().next() else {
        return Err(no_window(text, &b));
    };
    let wl = line(text, wait.span.start);
    let value = match decl {
        Decl::Const(v) => v,
        Decl::Param => {
            return Err(format!(
                "the credit window `{k}` (the wait at line {wl} lags by it) is a launch parameter: choose its depth at launch (`--param {k}=D`); there is nothing to rewrite"
            ))
        }
        Decl::Derived => {
            return Err(format!(
                "the credit window `{k}` (the wait at line {wl} lags by it) is derived by a `let`, not a constant: the pass rewrites `const {k} = E;`"
            ))
        }
    };
    ring(text, file, &b, k, wl)?;
    super::fixed_by(text, file, k, "deepening the window")?;
    let old = text[value.span.start..value.span.end].trim().to_string();
    if !is_int(value) {
        return Err(format!(
            "`const {k} = {old};` is not a literal: the pass writes the depth as a number"
        ));
    }
    if old == d.to_string() {
        return Err(format!("the window `{k}` is already {d} deep"));
    }
    let out = format!(
        "{}{d}{}",
        &text[..value.span.start],
        &text[value.span.end..]
    );
    let change = format!(
        "depth={d}: `const {k} = {old};` became `const {k} = {d};` (the credit window of the wait at line {wl}: up to {d} chunks in flight; every {k}-slot buffer holds {d} slots)"
    );
    Ok((out, change))
}

/// The slot ring of window `k`: some index `% k`, a buffer sized by `k`, no ring indexed by
/// a literal modulus.
fn ring(text: &str, file: &File, b: &Body, k: &str, wl: usize) -> Result<(), String> {
    let literal_ring = b.exprs.iter().find(|e| bin_with(e, BinOp::Mod, &is_int));
    if !b
        .exprs
        .iter()
        .any(|e| bin_with(e, BinOp::Mod, &|r| is_name(r, k)))
    {
        return Err(match literal_ring {
            Some(e) => format!(
                "the wait at line {wl} lags by `{k}` but the slot ring is indexed by a literal modulus (`{}`, line {}): deepening `{k}` would let the writer refill a slot before its reader has drained it",
                text[e.span.start..e.span.end].trim(),
                line(text, e.span.start)
            ),
            None => format!(
                "the wait at line {wl} lags by `{k}` but no buffer is indexed `% {k}` (a slot ring): there is no window memory to deepen"
            ),
        });
    }
    let sized = file.items.iter().any(|i| match &i.kind {
        ItemKind::Window { dims, .. } | ItemKind::Tile { dims, .. } => {
            dims.iter().any(|e| any_sub(e, &|x| is_name(x, k)))
        }
        _ => false,
    });
    if !sized {
        return Err(format!(
            "no window or tile is sized by `{k}`: the ring's memory is fixed, and deepening `{k}` would index past it"
        ));
    }
    Ok(())
}

/// The reason a protocol without a constant window is refused.
fn no_window(text: &str, b: &Body) -> String {
    let literal_lag = b
        .waits
        .iter()
        .find(|w| threshold(w).is_some_and(|t| bin_with(t, BinOp::Sub, &is_int)));
    let literal_ring = b.exprs.iter().find(|e| bin_with(e, BinOp::Mod, &is_int));
    match (literal_lag, literal_ring) {
        (Some(w), Some(r)) => format!(
            "the credit window is written with literals (the wait at line {}, the slot index `{}` at line {}): its memory is fixed; declare the depth as a constant (`const K = ...;`, the lag `- K`, the index `% K`, the buffer `[K]`) to deepen it",
            line(text, w.span.start),
            text[r.span.start..r.span.end].trim(),
            line(text, r.span.start)
        ),
        _ => "the protocol has no credit window (a wait whose threshold lags by a constant K, `wait ack >= t - K + 1`, over a slot ring indexed `% K`)".to_string(),
    }
}
