//! The verdicts of the last range check, kept for the next one in the same
//! context: a language server validates on every keystroke, and an edit leaves
//! most obligations, and what they read, unchanged. The context is everything a
//! query reads besides the obligation itself (the variables with their kinds and
//! domains, the statement `let`s and loop ranges, `require`s, blocks, host arrays),
//! without source spans; an obligation's key is its goal and path conditions, as
//! within one check ([`super::solve::Key`]). Each verdict is kept with the Z3 resource
//! units it cost, which the next check charges against its budget as if it had asked the
//! query again: a check decides the same bounds, and leaves the same unchecked, whether or
//! not verdicts were kept.

use super::encode::Defs;
use super::solve::{Decided, Key};
use collc_spec::ir::{Blocks, Cond, Expr, Protocol, Range, Ty, VarId, VarKind};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

type Verdicts = HashMap<Key, Decided>;

/// At most this many verdicts are kept.
const MAX_KEPT: usize = 10_000;

static LAST: Mutex<Option<(Context, Verdicts)>> = Mutex::new(None);

/// What a protocol's range queries read besides their obligations, spans left out.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Context {
    /// Each variable's name, kind (with its domain or value) and type.
    vars: Vec<(String, VarKind, Ty)>,
    world: VarId,
    me: VarId,
    lets: BTreeMap<VarId, Expr>,
    loops: BTreeMap<VarId, Range>,
    requires: Vec<Cond>,
    blocks: Option<Blocks>,
    /// Each host array's name, dimensions and value domain.
    arrays: Vec<(String, Vec<Expr>, (i64, i64))>,
}

/// The context of `p`'s range queries.
pub(super) fn context(p: &Protocol, defs: &Defs) -> Context {
    Context {
        vars: p
            .vars
            .iter()
            .map(|v| (v.name.clone(), v.kind.clone(), v.ty))
            .collect(),
        world: p.world,
        me: p.me,
        lets: defs.lets.iter().map(|(v, e)| (*v, e.clone())).collect(),
        loops: defs.loops.iter().map(|(v, r)| (*v, r.clone())).collect(),
        requires: p.requires.iter().map(|r| r.cond.clone()).collect(),
        blocks: p.blocks.clone(),
        arrays: p
            .arrays
            .iter()
            .map(|a| (a.name.clone(), a.dims.clone(), a.domain))
            .collect(),
    }
}

/// The verdicts kept for `context` (none when the last check had another).
pub(super) fn take(context: &Context) -> Verdicts {
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    match last.take() {
        Some((c, v)) if c == *context => v,
        _ => Verdicts::new(),
    }
}

/// Keeps the verdicts of a check for the next one.
pub(super) fn keep(context: Context, verdicts: Verdicts) {
    if verdicts.len() > MAX_KEPT {
        return;
    }
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    *last = Some((context, verdicts));
}

#[cfg(test)]
mod tests {
    use super::context;
    use crate::engine::range::encode::Defs;
    use collc_grammar::Span;

    /// Moving a declaration (its spans change, nothing else) keeps the context; a domain
    /// changed does not.
    #[test]
    fn spans_are_left_out() {
        let src = include_str!("../../../../examples/all_to_all_v.coll");
        let p = collc_spec::lowered(src).protocol.expect("a valid example");
        assert!(!p.arrays.is_empty());
        let defs = Defs::default();
        let mut moved = p.clone();
        for a in &mut moved.arrays {
            a.span = Span::new(a.span.start + 7, a.span.end + 7);
        }
        for r in &mut moved.requires {
            r.span = Span::new(r.span.start + 7, r.span.end + 7);
        }
        assert_eq!(context(&p, &defs), context(&moved, &defs));
        let mut other = p.clone();
        other.arrays[0].domain = (0, 4);
        assert_ne!(context(&p, &defs), context(&other, &defs));
    }
}
