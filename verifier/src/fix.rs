//! Machine-applicable fixes of findings, as source edits ([`collc_grammar::Fix`]):
//! `fence;` where the fence obligation says it goes, the epilogue reset a credit
//! signal lacks, `-= N` for a `= 0` reset of a credit cell, `calls <= H;` at the
//! overflow horizon `H` of a monotonic signal, and the edits findings carry as data
//! ([`Rewrite`], `fix/rewrite.rs`: a monotonic threshold's growth, `==` as `>=` on a
//! counter). Each reset is
//! derived from the body's waits: the last wait the owner makes on a cell reads
//! the call's credits, so the epilogue takes back that threshold, in the loops that
//! select the cell. When that derivation does not apply (a wait under a branch, a
//! threshold naming a variable the epilogue cannot see), or when the symbolic
//! verifier still finds the obligation violated on the edited text, no fix is
//! offered.

use crate::report::Finding;
use collc_grammar::ast::{Block, File, ItemKind, LoopRange, NotifyOpAst, Stmt, StmtKind};
use collc_grammar::{Edit, Fix, Source, Span};
use std::collections::BTreeSet;

mod rewrite;
pub use crate::report::Rewrite;

/// The fix of a finding of obligation `id`, if one can be derived.
pub fn of_finding(id: &str, f: &Finding, file: &File, text: &str) -> Option<Fix> {
    if let Some(before) = f.fence_before {
        return Some(fence_before(text, before));
    }
    if let Some(r) = f.rewrite {
        return rewrite::fix(r, file, text, f.primary?);
    }
    match id {
        "op-exclusivity" => set_to_sub(file, text, f.primary?),
        "overflow-horizon" => declare_calls(file, text, f.value?),
        "credit-balance" if f.contributions.iter().all(|c| c.section != "epilogue") => {
            missing_resets(file, text)
        }
        _ => None,
    }
}

/// Fills in the fixes of a report's findings from the protocol's source.
pub fn attach(report: &mut crate::Report, src: &Source) {
    let Ok(file) = collc_grammar::parse(&src.text) else {
        return;
    };
    for o in &mut report.obligations {
        for f in &mut o.findings {
            f.fix = of_finding(&o.id, f, &file, &src.text)
                .filter(|x| f.fence_before.is_some() || holds_after(&o.id, x, &src.text));
            if f.fix.is_none() {
                if let Some(h) = unfixed_help(&o.id, f) {
                    f.help = Some(h);
                }
            }
        }
    }
}

/// The help of a finding whose help proposes an edit that could not be derived (or that
/// the verifier does not accept on the edited text): the rule, no specific edit.
fn unfixed_help(id: &str, f: &Finding) -> Option<String> {
    if let Some(r) = f.rewrite {
        return Some(r.unfixed_help());
    }
    match id {
        "credit-balance" if f.contributions.iter().all(|c| c.section != "epilogue") => Some(
            "the cell's net credit per call must be 0: what the body adds, the epilogue takes back (no reset could be derived that the verifier accepts)".into(),
        ),
        "overflow-horizon" => Some(
            "the protocol may make more calls than the overflow horizon allows: a monotonic cell wraps int32 before its last call".into(),
        ),
        "op-exclusivity" => Some(
            "a credit cell is written by AtomicAdd only (`+=`/`-=`); Set belongs to separate `as value` signals".into(),
        ),
        _ => None,
    }
}

/// Whether the symbolic obligation `id` is no longer violated once `fix` is
/// applied: a derived reset is offered only when the verifier accepts it.
fn holds_after(id: &str, fix: &Fix, text: &str) -> bool {
    let Some(p) = fix
        .apply(text)
        .and_then(|t| collc_spec::front(&crate::Ranges, &t).protocol)
    else {
        return false;
    };
    let report = crate::verify(&p, &crate::Options::symbolic_only());
    report
        .get(id)
        .is_some_and(|o| o.status != crate::Status::Violated)
}

/// `calls <= h;` for the overflow horizon `h` (the finding's value): the declared bound
/// lowered to it, or a declaration added after the `ranks` line when there is none.
fn declare_calls(file: &File, text: &str, h: i64) -> Option<Fix> {
    let title = format!("declare `calls <= {h};` (the overflow horizon)");
    if let Some(bound) = file.items.iter().find_map(|it| match &it.kind {
        ItemKind::Calls(e) => Some(e.span),
        _ => None,
    }) {
        return Some(Fix::replace(title, bound, h.to_string()));
    }
    let ranks = file
        .items
        .iter()
        .find(|it| matches!(it.kind, ItemKind::Ranks { .. }))?;
    let line_end = text.get(ranks.span.end..)?.find('\n')? + ranks.span.end + 1;
    let indent = indent_of(text, ranks.span.start);
    Some(Fix::replace(
        title,
        Span::new(line_end, line_end),
        format!("{indent}calls <= {h};\n"),
    ))
}

/// Inserts `fence;` on its own line before the statement at `before`.
fn fence_before(text: &str, before: Span) -> Fix {
    let indent = indent_of(text, before.start);
    Fix::replace(
        "add `fence;` before this notify",
        Span::new(before.start, before.start),
        format!("fence;\n{indent}"),
    )
}

/// The whitespace between the start of `at`'s line and `at`.
fn indent_of(text: &str, at: usize) -> String {
    let start = line_start(text, at);
    text.get(start..at)
        .unwrap_or("")
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect()
}

fn line_start(text: &str, at: usize) -> usize {
    text.get(..at)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// One epilogue reset: `lets`, then `loops { notify target -= amount; }`.
struct Reset {
    signal: String,
    loops: Vec<String>,
    target: String,
    amount: String,
    lets: Vec<String>,
}

impl Reset {
    fn lines(&self, indent: &str, out: &mut Vec<String>) {
        let mut pad = indent.to_string();
        for l in &self.loops {
            out.push(format!("{pad}{l} {{"));
            pad.push_str("    ");
        }
        out.push(format!("{pad}notify {} -= {};", self.target, self.amount));
        for _ in &self.loops {
            pad.truncate(pad.len() - 4);
            out.push(format!("{pad}}}"));
        }
    }
}

/// An enclosing `for` of a wait.
#[derive(Clone)]
struct Loop {
    var: String,
    header: String,
    /// The loop variable's last value, for `lo..hi` without a step.
    last: Option<String>,
}

/// A body wait `>=` on a signal, with what encloses it.
struct WaitSite {
    signal: String,
    loops: Vec<Loop>,
    target: String,
    threshold: String,
    under_if: bool,
}

/// What the body declares and waits on.
#[derive(Default)]
struct BodyFacts {
    waits: Vec<WaitSite>,
    /// `let`s directly in the body: (name, statement text), in order.
    top_lets: Vec<(String, String)>,
    /// `let`s inside loops and branches (not visible to the epilogue).
    inner_lets: BTreeSet<String>,
    /// Signals AtomicAdd-ed in the body.
    credited: BTreeSet<String>,
    /// Signals Set in the body.
    set: BTreeSet<String>,
}

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn slice(text: &str, s: Span) -> &str {
    text.get(s.start..s.end).unwrap_or("")
}

/// The identifiers of a piece of source.
fn idents(s: &str) -> BTreeSet<String> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .map(String::from)
        .collect()
}

/// Replaces the identifier `var` in `s` with `by`.
fn substitute(s: &str, var: &str, by: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        out.push_str(if word == var { by } else { &word });
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

impl BodyFacts {
    fn of(file: &File, text: &str) -> Option<BodyFacts> {
        let body = body(file)?;
        let mut facts = BodyFacts::default();
        for s in &body.stmts {
            if let StmtKind::Let { name, .. } = &s.kind {
                facts
                    .top_lets
                    .push((name.name.clone(), words(slice(text, s.span))));
            }
        }
        facts.walk(body, text, &mut Vec::new(), false, true);
        Some(facts)
    }

    fn walk(&mut self, b: &Block, text: &str, loops: &mut Vec<Loop>, under_if: bool, top: bool) {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::Let { name, .. } if !top => {
                    self.inner_lets.insert(name.name.clone());
                }
                StmtKind::Notify { cell, op, .. } if *op != NotifyOpAst::Set => {
                    self.credited.insert(cell.name.name.clone());
                }
                StmtKind::Notify { cell, .. } => {
                    self.set.insert(cell.name.name.clone());
                }
                StmtKind::Wait {
                    cell,
                    target: None,
                    cmp: collc_grammar::ast::CmpOp::Ge,
                    threshold,
                } => self.waits.push(WaitSite {
                    signal: cell.name.name.clone(),
                    loops: loops.clone(),
                    target: words(slice(text, cell.span)),
                    threshold: words(slice(text, threshold.span)),
                    under_if,
                }),
                StmtKind::For { var, range, body } => {
                    let last = match range {
                        LoopRange::Span { hi, step: None, .. } => {
                            Some(format!("({} - 1)", words(slice(text, hi.span))))
                        }
                        _ => None,
                    };
                    loops.push(Loop {
                        var: var.name.clone(),
                        header: words(slice(text, Span::new(s.span.start, body.span.start))),
                        last,
                    });
                    self.walk(body, text, loops, under_if, false);
                    loops.pop();
                }
                StmtKind::If {
                    then_block,
                    else_block,
                    ..
                } => {
                    self.walk(then_block, text, loops, true, false);
                    if let Some(e) = else_block {
                        self.walk(e, text, loops, true, false);
                    }
                }
                _ => {}
            }
        }
    }

    /// The resets of `signal`: one per distinct waited cell expression, from the
    /// last wait on it; `None` when one cannot be derived.
    fn resets(&self, signal: &str) -> Option<Vec<Reset>> {
        let mut last: Vec<&WaitSite> = Vec::new();
        for w in self.waits.iter().filter(|w| w.signal == signal) {
            last.retain(|x| x.target != w.target);
            last.push(w);
        }
        if last.is_empty() {
            return None;
        }
        last.iter().map(|w| self.reset(w)).collect()
    }

    fn reset(&self, w: &WaitSite) -> Option<Reset> {
        if w.under_if {
            return None;
        }
        let in_target = idents(&w.target);
        let mut amount = w.threshold.clone();
        let mut loops = Vec::new();
        for l in &w.loops {
            if in_target.contains(&l.var) {
                loops.push(l.header.clone());
            } else if idents(&amount).contains(&l.var) {
                // The last wait runs in the loop's last iteration.
                amount = substitute(&amount, &l.var, l.last.as_deref()?);
            }
        }
        let used: BTreeSet<String> = idents(&amount)
            .into_iter()
            .chain(in_target)
            .chain(loops.iter().flat_map(|h| idents(h)))
            .collect();
        if used.iter().any(|u| self.inner_lets.contains(u)) {
            return None;
        }
        Some(Reset {
            signal: w.signal.clone(),
            loops,
            target: w.target.clone(),
            amount,
            lets: self.lets_for(&used),
        })
    }

    /// The body-level `let`s that `used` needs (transitively), in source order.
    fn lets_for(&self, used: &BTreeSet<String>) -> Vec<String> {
        let mut need = used.clone();
        let mut out = Vec::new();
        for (name, stmt) in self.top_lets.iter().rev() {
            if need.contains(name) {
                need.extend(idents(stmt));
                out.push(stmt.clone());
            }
        }
        out.reverse();
        out
    }
}

/// Adds the resets of every credit signal the epilogue does not touch: a new
/// epilogue after the body, or statements before the existing epilogue's final
/// `fence;` (or its closing brace).
fn missing_resets(file: &File, text: &str) -> Option<Fix> {
    let facts = BodyFacts::of(file, text)?;
    let epilogue = file.items.iter().find_map(|i| match &i.kind {
        ItemKind::Epilogue(b) => Some(b),
        _ => None,
    });
    let mut reset_there = BTreeSet::new();
    if let Some(e) = epilogue {
        notified(e, &mut reset_there);
    }
    // A reset taking back the waits' thresholds assumes AtomicAdd-only cells: on a cell the
    // body also Sets, a fast peer's next-call Set lands between the owner's waits and its
    // reset, which then drives the cell below zero and the next call's wait hangs
    // (examples/bugs/incore_reduce_scatter_set1_mixed.coll). The op-exclusivity finding
    // on that cell comes first; no reset is offered.
    if facts.credited.iter().any(|s| facts.set.contains(s)) {
        return None;
    }
    let mut resets = Vec::new();
    for s in facts.credited.iter().filter(|s| !reset_there.contains(*s)) {
        resets.extend(facts.resets(s)?);
    }
    if resets.is_empty() {
        return None;
    }
    let mut lets: Vec<String> = Vec::new();
    for l in resets.iter().flat_map(|r| r.lets.iter()) {
        if !lets.contains(l) {
            lets.push(l.clone());
        }
    }
    let inner = "        ";
    let mut lines: Vec<String> = lets.iter().map(|l| format!("{inner}{l}")).collect();
    for r in &resets {
        r.lines(inner, &mut lines);
    }
    let names: Vec<&str> = resets.iter().map(|r| r.signal.as_str()).collect();
    let mut names = names;
    names.dedup();
    let title = format!(
        "take back the credits of `{}` in the epilogue",
        names.join("`, `")
    );
    let edit = match epilogue {
        None => {
            let body = body(file)?;
            Edit {
                span: Span::new(body.span.end, body.span.end),
                text: format!(
                    "\n\n    epilogue {{\n{}\n{inner}fence;\n    }}",
                    lines.join("\n")
                ),
            }
        }
        Some(e) => {
            let at = match e.stmts.last() {
                Some(Stmt {
                    kind: StmtKind::Fence,
                    span,
                }) => line_start(text, span.start),
                _ => line_start(text, e.span.end.saturating_sub(1)),
            };
            Edit {
                span: Span::new(at, at),
                text: format!("{}\n", lines.join("\n")),
            }
        }
    };
    Some(Fix {
        title,
        edits: vec![edit],
    })
}

/// The signals notified in a block.
fn notified(b: &Block, out: &mut BTreeSet<String>) {
    b.each_stmt(&mut |s| {
        if let StmtKind::Notify { cell, .. } = &s.kind {
            out.insert(cell.name.name.clone());
        }
    });
}

/// `notify c = 0;` in the epilogue becomes `notify c -= N;`, N the threshold of
/// the body's last wait on the same cell expression in the same loops.
fn set_to_sub(file: &File, text: &str, set: Span) -> Option<Fix> {
    let facts = BodyFacts::of(file, text)?;
    let epilogue = file.items.iter().find_map(|i| match &i.kind {
        ItemKind::Epilogue(b) => Some(b),
        _ => None,
    })?;
    let (stmt, loops) = find_stmt(epilogue, set, text, &mut Vec::new())?;
    let StmtKind::Notify {
        cell,
        target: None,
        op: NotifyOpAst::Set,
        value,
    } = &stmt.kind
    else {
        return None;
    };
    if words(slice(text, value.span)) != "0" {
        return None;
    }
    let target = words(slice(text, cell.span));
    let reset = facts
        .resets(&cell.name.name)?
        .into_iter()
        .find(|r| r.target == target && r.loops == loops && r.lets.is_empty())?;
    Some(Fix::replace(
        format!("reset with AtomicAdd: `-= {}`", reset.amount),
        stmt.span,
        format!("notify {target} -= {};", reset.amount),
    ))
}

/// The protocol's body.
fn body(file: &File) -> Option<&Block> {
    file.items.iter().find_map(|i| match &i.kind {
        ItemKind::Body(b) => Some(b),
        _ => None,
    })
}

/// The statement at `span` in `b` and the headers of the loops around it.
fn find_stmt<'b>(
    b: &'b Block,
    span: Span,
    text: &str,
    loops: &mut Vec<String>,
) -> Option<(&'b Stmt, Vec<String>)> {
    for s in &b.stmts {
        if s.span == span {
            return Some((s, loops.clone()));
        }
        if s.span.start > span.start || s.span.end < span.end {
            continue;
        }
        match &s.kind {
            StmtKind::For { body, .. } => {
                loops.push(words(slice(text, Span::new(s.span.start, body.span.start))));
                let found = find_stmt(body, span, text, loops);
                loops.pop();
                return found;
            }
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                return find_stmt(then_block, span, text, loops).or_else(|| {
                    else_block
                        .as_ref()
                        .and_then(|e| find_stmt(e, span, text, loops))
                });
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_replaces_whole_identifiers_only() {
        assert_eq!(substitute("t + tt + 1", "t", "(T - 1)"), "(T - 1) + tt + 1");
        assert_eq!(
            idents("sig[s - 1][p]"),
            ["p", "s", "sig"].map(String::from).into()
        );
    }

    #[test]
    fn fixes_apply_their_edits() {
        let f = Fix::replace("x", Span::new(2, 3), "YY");
        assert_eq!(f.apply("abcd").as_deref(), Some("abYYd"));
        let bad = Fix::replace("x", Span::new(3, 9), "");
        assert_eq!(bad.apply("abcd"), None);
    }
}
