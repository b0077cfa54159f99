//! Printing recovered statements as `.coll`, remembering which C++ line each `.coll` line
//! came from. The statements' syntax is the one printer's (`collc_spec::print::Head`,
//! which also prints the IR's statements); what is the lifter's is the printing of its
//! recovered operands (expressions, cells, regions) and which names are ranks.

use crate::expr::{C, E};
use crate::model::{Move, Range, Reg, L, S};
use collc_spec::print::{span_text, Credit, Head, Style};
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
    let line = |out: &mut Out, h: Head| out.line(d, &h.text(Style::Source), at);
    match &l.s {
        S::Let { name, value } => line(out, let_head(name, value, rk)),
        S::Notify {
            signal,
            index,
            target,
            set,
            value,
        } => line(
            out,
            Head::Notify {
                cell: cell(signal, index),
                target: target.as_ref().map(|t| rk.rank(t)),
                credit: match (set, value) {
                    (true, v) => Credit::Set(v.coll()),
                    (false, E::Int(x)) if *x < 0 => Credit::Sub(x.unsigned_abs().to_string()),
                    (false, E::Neg(x)) => Credit::Sub(x.coll()),
                    (false, v) => Credit::Add(v.coll()),
                },
            },
        ),
        S::Wait {
            signal,
            index,
            cmp,
            threshold,
        } => line(
            out,
            Head::Wait {
                cell: cell(signal, index),
                cmp: cmp.to_string(),
                threshold: threshold.coll(),
            },
        ),
        S::Fence | S::Barrier | S::Dsb | S::Dcci => line(out, Head::Fence),
        S::For { var, range, body } => {
            let h = Head::For {
                var: var.clone(),
                range: range_text(var, range, rk),
            };
            out.line(d, &format!("{} {{", h.text(Style::Source)), at);
            block(out, body, d + 1, rk);
            out.line(d, "}", 0);
        }
        S::If { cond, then, els } => {
            let h = Head::If {
                cond: cond_text(cond),
                has_else: els.is_some(),
            };
            out.line(d, &format!("{} {{", h.text(Style::Source)), at);
            block(out, then, d + 1, rk);
            if let Some(e) = els {
                out.line(d, "} else {", 0);
                block(out, e, d + 1, rk);
            }
            out.line(d, "}", 0);
        }
        S::Return { cond } => line(
            out,
            Head::Return {
                cond: cond_text(cond),
            },
        ),
        S::Data { kind, dst, src } => line(out, data_head(kind, dst, src, rk)),
    }
}

/// `let NAME = v;`, typed a rank (`rank(v)`) where the name is used as one.
fn let_head(name: &str, value: &E, rk: &mut Ranks) -> Head {
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
    Head::Let {
        name: name.to_string(),
        value: v,
    }
}

/// A loop's range; a peer or rank loop's variable becomes a rank.
fn range_text(var: &str, range: &Range, rk: &mut Ranks) -> String {
    match range {
        Range::Peers => {
            rk.known.insert(var.to_string());
            "peers".into()
        }
        Range::Span(E::Int(0), E::Name(_), E::Int(1)) if rk.used.contains(var) => {
            rk.known.insert(var.to_string());
            "ranks".into()
        }
        Range::Span(lo, hi, st) => {
            let step = (*st != E::Int(1)).then(|| st.coll());
            span_text(&lo.coll(), &hi.coll(), step.as_deref(), false, false)
        }
        Range::Seq {
            lo,
            hi,
            step,
            geometric,
            rev,
        } => {
            let st = (*geometric || *step != E::Int(1)).then(|| step.coll());
            span_text(&lo.coll(), &hi.coll(), st.as_deref(), *geometric, *rev)
        }
    }
}

/// A data statement (`copy`, `get`, `put`, `reduce`).
fn data_head(kind: &Move, dst: &Reg, src: &Reg, rk: &Ranks) -> Head {
    let (dst, src) = (region(dst), region(src));
    match kind {
        Move::Copy => Head::Copy { dst, src },
        Move::Get(r) => Head::Get {
            dst,
            src,
            from: rk.rank(r),
        },
        Move::Put(r) => Head::Put {
            dst,
            to: rk.rank(r),
            src,
        },
        Move::Reduce(op, from) => Head::Reduce {
            op: op.to_string(),
            dst,
            to: None,
            src,
            from: from.as_ref().map(|r| rk.rank(r)),
        },
        Move::Accumulate(op, r) => Head::Reduce {
            op: op.to_string(),
            dst,
            to: Some(rk.rank(r)),
            src,
            from: None,
        },
    }
}

/// A condition's `.coll` text.
pub fn cond_text(c: &C) -> String {
    c.coll()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> E {
        E::Name(s.into())
    }

    fn reg(buf: &str, lo: E, len: E) -> Reg {
        Reg {
            buf: buf.into(),
            index: vec![n("me")],
            lo,
            len,
            gm: true,
        }
    }

    /// Every recovered statement prints as the `.coll` the front end reads back, through
    /// the one printer of statement heads, with the C++ line of each `.coll` line.
    #[test]
    fn every_recovered_statement_prints_as_coll() {
        let l = |s, line| L::new(s, line);
        let data = |kind| S::Data {
            kind,
            dst: reg("out", E::Int(0), n("n")),
            src: reg("data", n("a"), n("n")),
        };
        let body = vec![
            l(
                S::Let {
                    name: "q".into(),
                    value: E::Bin("+", Box::new(n("me")), Box::new(E::Int(1))),
                },
                3,
            ),
            l(
                S::Notify {
                    signal: "sig".into(),
                    index: vec![n("me")],
                    target: Some(n("q")),
                    set: false,
                    value: E::Int(-2),
                },
                4,
            ),
            l(
                S::Wait {
                    signal: "sig".into(),
                    index: vec![n("me")],
                    cmp: ">=",
                    threshold: E::Int(1),
                },
                5,
            ),
            l(
                S::For {
                    var: "p".into(),
                    range: Range::Seq {
                        lo: E::Int(1),
                        hi: n("P"),
                        step: E::Int(2),
                        geometric: true,
                        rev: true,
                    },
                    body: vec![
                        l(data(Move::Accumulate("sum", n("p"))), 7),
                        l(S::Barrier, 8),
                    ],
                },
                6,
            ),
            l(
                S::If {
                    cond: C::Cmp("==", n("me"), E::Int(0)),
                    then: vec![l(data(Move::Get(n("q"))), 10)],
                    els: Some(vec![l(data(Move::Reduce("max", None)), 12)]),
                },
                9,
            ),
            l(
                S::Return {
                    cond: C::Cmp(">", n("me"), E::Int(3)),
                },
                13,
            ),
        ];
        let mut out = Out::default();
        let mut ranks = Ranks::default();
        ranks.known.insert("me".into());
        ranks.collect(&body);
        block(&mut out, &body, 0, &mut ranks);
        let want = "\
let q = rank(me + 1);
notify sig[me] @ q -= 2;
wait sig[me] >= 1;
for p in (1..P step *2).rev() {
    reduce sum out[me][0 .. n] @ rank(p) <- data[me][a .. a + n];
    fence;
}
if me == 0 {
    get out[me][0 .. n] <- data[me][a .. a + n] @ q;
} else {
    reduce max out[me][0 .. n] <- data[me][a .. a + n];
}
return if me > 3;
";
        assert_eq!(out.text, want);
        assert_eq!(out.lines, vec![3, 4, 5, 6, 7, 8, 0, 9, 10, 0, 12, 0, 13]);
    }
}
