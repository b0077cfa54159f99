//! Printing recovered statements as `.coll`, remembering which C++ line each `.coll` line
//! came from.

use crate::expr::{C, E};
use crate::model::{Move, Range, Reg, L, S};
use std::collections::BTreeSet;

/// `.coll` text being built, with its line map.
#[derive(Debug, Default)]
pub struct Out {
    /// The text.
    pub text: String,
    /// For each `.coll` line (0-based), the C++ line it came from (0: none).
    pub lines: Vec<usize>,
}

impl Out {
    /// Appends a line.
    pub fn line(&mut self, depth: usize, s: &str, cpp: usize) {
        self.text.push_str(&"    ".repeat(depth));
        self.text.push_str(s);
        self.text.push('\n');
        self.lines.push(cpp);
    }
}

/// Which names are ranks.
#[derive(Debug, Default, Clone)]
pub struct Ranks {
    /// Names typed as ranks (`me`, rank params, peer/rank loop variables, rank lets).
    pub known: BTreeSet<String>,
    /// Names used where a rank is required (targets, `@`).
    pub used: BTreeSet<String>,
}

impl Ranks {
    /// Collects the names used as ranks in `b`.
    pub fn collect(&mut self, b: &[L]) {
        for l in b {
            match &l.s {
                S::Notify {
                    target: Some(E::Name(n)),
                    ..
                } => {
                    self.used.insert(n.clone());
                }
                S::Data {
                    kind:
                        Move::Get(E::Name(n))
                        | Move::Put(E::Name(n))
                        | Move::Reduce(_, Some(E::Name(n)))
                        | Move::Accumulate(_, E::Name(n)),
                    ..
                } => {
                    self.used.insert(n.clone());
                }
                S::For { body, .. } => self.collect(body),
                S::If { then, els, .. } => {
                    self.collect(then);
                    if let Some(e) = els {
                        self.collect(e);
                    }
                }
                _ => {}
            }
        }
    }

    fn rank(&self, e: &E) -> String {
        match e {
            E::Name(n) if self.known.contains(n) => n.clone(),
            E::Rank(_) => e.coll(),
            e => format!("rank({})", e.coll()),
        }
    }
}

fn cell(signal: &str, index: &[E]) -> String {
    let idx: Vec<String> = index.iter().map(|x| format!("[{}]", x.coll())).collect();
    format!("{signal}{}", idx.concat())
}

fn region(r: &Reg) -> String {
    let idx: Vec<String> = r.index.iter().map(|x| format!("[{}]", x.coll())).collect();
    let hi = match (&r.lo, &r.len) {
        (E::Int(0), len) => len.clone(),
        (lo, E::Bin("-", hi, l2)) if **l2 == *lo => (**hi).clone(),
        (lo, len) => E::Bin("+", Box::new(lo.clone()), Box::new(len.clone())),
    };
    format!(
        "{}{}[{} .. {}]",
        r.buf,
        idx.concat(),
        r.lo.coll(),
        hi.coll()
    )
}

/// Prints a statement list at `depth`.
pub fn block(out: &mut Out, b: &[L], depth: usize, ranks: &mut Ranks) {
    for l in b {
        stmt(out, l, depth, ranks);
    }
}

fn stmt(out: &mut Out, l: &L, d: usize, rk: &mut Ranks) {
    let at = l.line;
    match &l.s {
        S::Let { name, value } => out.line(d, &let_text(name, value, rk), at),
        S::Notify {
            signal,
            index,
            target,
            set,
            value,
        } => {
            let t = target
                .as_ref()
                .map(|t| format!(" @ {}", rk.rank(t)))
                .unwrap_or_default();
            let (op, v) = match (set, value) {
                (true, v) => ("=", v.coll()),
                (false, E::Int(x)) if *x < 0 => ("-=", x.unsigned_abs().to_string()),
                (false, E::Neg(x)) => ("-=", x.coll()),
                (false, v) => ("+=", v.coll()),
            };
            out.line(
                d,
                &format!("notify {}{t} {op} {v};", cell(signal, index)),
                at,
            );
        }
        S::Wait {
            signal,
            index,
            cmp,
            threshold,
        } => {
            out.line(
                d,
                &format!("wait {} {cmp} {};", cell(signal, index), threshold.coll()),
                at,
            );
        }
        S::Fence | S::Barrier => out.line(d, "fence;", at),
        S::Dsb | S::Dcci => out.line(d, "fence;", at),
        S::For { var, range, body } => {
            out.line(d, &for_head(var, range, rk), at);
            block(out, body, d + 1, rk);
            out.line(d, "}", 0);
        }
        S::If { cond, then, els } => {
            out.line(d, &format!("if {} {{", cond_text(cond)), at);
            block(out, then, d + 1, rk);
            if let Some(e) = els {
                out.line(d, "} else {", 0);
                block(out, e, d + 1, rk);
            }
            out.line(d, "}", 0);
        }
        S::Return { cond } => out.line(d, &format!("return if {};", cond_text(cond)), at),
        S::Data { kind, dst, src } => out.line(d, &data_text(kind, dst, src, rk), at),
    }
}

/// `let NAME = v;`, typed a rank (`rank(v)`) where the name is used as one.
fn let_text(name: &str, value: &E, rk: &mut Ranks) -> String {
    let v = if rk.used.contains(name) {
        let is_rank = matches!(value, E::Name(n) if rk.known.contains(n));
        rk.known.insert(name.to_string());
        if is_rank {
            value.coll()
        } else {
            format!("rank({})", value.coll())
        }
    } else {
        value.coll()
    };
    format!("let {name} = {v};")
}

/// A loop's head, `for VAR in RANGE {`; a peer or rank loop's variable becomes a rank.
fn for_head(var: &str, range: &Range, rk: &mut Ranks) -> String {
    match range {
        Range::Peers => {
            rk.known.insert(var.to_string());
            format!("for {var} in peers {{")
        }
        Range::Span(E::Int(0), E::Name(_), E::Int(1)) if rk.used.contains(var) => {
            rk.known.insert(var.to_string());
            format!("for {var} in ranks {{")
        }
        Range::Span(lo, hi, E::Int(1)) => {
            format!("for {var} in {}..{} {{", lo.coll(), hi.coll())
        }
        Range::Span(lo, hi, st) => {
            format!(
                "for {var} in {}..{} step {} {{",
                lo.coll(),
                hi.coll(),
                st.coll()
            )
        }
        Range::Seq {
            lo,
            hi,
            step,
            geometric,
            rev,
        } => {
            let st = match (geometric, step) {
                (true, s) => format!(" step *{}", s.coll()),
                (false, E::Int(1)) => String::new(),
                (false, s) => format!(" step {}", s.coll()),
            };
            let r = format!("{}..{}{st}", lo.coll(), hi.coll());
            if *rev {
                format!("for {var} in ({r}).rev() {{")
            } else {
                format!("for {var} in {r} {{")
            }
        }
    }
}

/// A data statement (`copy`, `get`, `put`, `reduce`).
fn data_text(kind: &Move, dst: &Reg, src: &Reg, rk: &Ranks) -> String {
    match kind {
        Move::Copy => format!("copy {} <- {};", region(dst), region(src)),
        Move::Get(r) => format!("get {} <- {} @ {};", region(dst), region(src), rk.rank(r)),
        Move::Put(r) => format!("put {} @ {} <- {};", region(dst), rk.rank(r), region(src)),
        Move::Reduce(op, None) => {
            format!("reduce {op} {} <- {};", region(dst), region(src))
        }
        Move::Reduce(op, Some(r)) => {
            format!(
                "reduce {op} {} <- {} @ {};",
                region(dst),
                region(src),
                rk.rank(r)
            )
        }
        Move::Accumulate(op, r) => {
            format!(
                "reduce {op} {} @ {} <- {};",
                region(dst),
                rk.rank(r),
                region(src)
            )
        }
    }
}

/// A condition's `.coll` text.
pub fn cond_text(c: &C) -> String {
    c.coll()
}
