//! The verdicts of the last range check, kept for the next one in the same
//! context: a language server validates on every keystroke, and an edit leaves
//! most obligations, and what they read, unchanged. The context is everything a
//! query reads besides the obligation itself (the variables with their kinds and
//! domains, the statement `let`s and loop ranges, `require`s, blocks, host arrays),
//! printed without source spans; an obligation's key is its goal and path
//! conditions, as within one check. Undecided verdicts (a timeout on a loaded
//! machine) and bounds left unchecked are not kept.

use super::encode::Defs;
use super::obligation::Verdict;
use collc_spec::ir::Protocol;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

type Verdicts = HashMap<String, Option<Verdict>>;

/// At most this many verdicts are kept.
const MAX_KEPT: usize = 10_000;

static LAST: Mutex<Option<(String, Verdicts)>> = Mutex::new(None);

/// The context of `p`'s range queries, spans left out.
pub(super) fn context(p: &Protocol, defs: &Defs) -> String {
    let vars: Vec<_> = p.vars.iter().map(|v| (&v.name, &v.kind, &v.ty)).collect();
    let lets: BTreeMap<_, _> = defs.lets.iter().collect();
    let loops: BTreeMap<_, _> = defs.loops.iter().collect();
    let arrays: Vec<_> = p.arrays.iter().map(|a| format!("{a:?}")).collect();
    let printed = format!(
        "{vars:?}|{:?}|{:?}|{lets:?}|{loops:?}|{:?}|{:?}|{arrays:?}",
        p.world, p.me, p.requires, p.blocks
    );
    without_spans(&printed)
}

/// `text` with every `Span { start: .., end: .. }` left out.
fn without_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("Span {") {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        match rest.find('}') {
            Some(j) => rest = &rest[j + 1..],
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// The verdicts kept for `context` (none when the last check had another).
pub(super) fn take(context: &str) -> Verdicts {
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    match last.take() {
        Some((c, v)) if c == context => v,
        _ => Verdicts::new(),
    }
}

/// Keeps the decided verdicts of a check for the next one.
pub(super) fn keep(context: String, mut verdicts: Verdicts) {
    verdicts.retain(|_, v| !matches!(v, Some(Verdict::Undecided { .. } | Verdict::Unchecked)));
    if verdicts.len() > MAX_KEPT {
        return;
    }
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    *last = Some((context, verdicts));
}

#[cfg(test)]
mod tests {
    #[test]
    fn spans_are_left_out() {
        let t =
            "Var { name: \"n\", span: Span { start: 3, end: 4 } }, x: Span { start: 9, end: 1 }";
        assert_eq!(super::without_spans(t), "Var { name: \"n\", span:  }, x: ");
        // An unterminated span is kept as written.
        assert_eq!(super::without_spans("a Span { b"), "a Span { b");
    }
}
