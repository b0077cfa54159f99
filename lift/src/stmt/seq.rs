//! collc's counted loops over a power-of-two or reversed range (`Range::Seq` of the IR):
//!
//! ```cpp
//! {
//!     const int64_t collc_v_lo = LO;
//!     const int64_t collc_v_step = S;
//!     const int64_t collc_v_n = collc_seq_len(collc_v_lo, HI, collc_v_step, GEOMETRIC);
//!     for (int64_t collc_v_j = 0; collc_v_j < collc_v_n; ++collc_v_j) {
//!         const int64_t v = collc_seq_at(collc_v_lo, collc_v_step, GEOMETRIC, J);
//!         ...
//!     }
//! }
//! ```
//!
//! with `J` = `collc_v_j` (ascending) or `collc_v_n - 1 - collc_v_j` (reversed).

use super::{Reader, R};
use crate::cpp::{all_kids, call, field, line, text, unsupported};
use crate::expr::{strip, E};
use crate::model::{Range, L, S};
use tree_sitter::Node;

/// The values of a `collc_seq_len` count: lo, hi, step, geometric.
#[derive(Debug, Clone)]
pub(super) struct SeqLen {
    lo: E,
    hi: E,
    step: E,
    geometric: bool,
}

fn flag(n: Node, src: &str) -> Option<bool> {
    match text(strip(n, src), src) {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

impl Reader<'_> {
    /// `const int64_t collc_v_n = collc_seq_len(lo, hi, step, geometric);`: recorded under
    /// its name (`Ok(false)` when `value` is no such call).
    pub(super) fn seq_len(&mut self, name: &str, value: Node) -> R<bool> {
        let src = self.src;
        let Some((f, args)) = call(strip(value, src), src) else {
            return Ok(false);
        };
        if f != "collc_seq_len" {
            return Ok(false);
        }
        let [lo, hi, step, g] = args.as_slice() else {
            return Err(self.bad(value, "a collc_seq_len with other than 4 arguments"));
        };
        let geometric = flag(*g, src)
            .ok_or_else(|| self.bad(*g, "a collc_seq_len whose kind is not `true`/`false`"))?;
        let s = SeqLen {
            lo: self.e(*lo)?,
            hi: self.e(*hi)?,
            step: self.e(*step)?,
            geometric,
        };
        self.seqs.insert(name.to_string(), s);
        Ok(true)
    }

    /// A loop over the index of a `collc_seq_len` count (`None`: the loop is no such index).
    pub(super) fn seq_loop(&mut self, n: Node) -> R<Option<L>> {
        let src = self.src;
        let bad = |what: &str| unsupported(n, src, what);
        let compact = |x: Option<Node>| x.map(|x| text(x, src).replace([' ', '(', ')'], ""));
        let Some(cnd) = field(n, "condition").map(|c| strip(c, src)) else {
            return Ok(None);
        };
        let Some(count) = field(cnd, "right").map(|r| text(strip(r, src), src).to_string()) else {
            return Ok(None);
        };
        let Some(q) = self.seqs.get(&count).cloned() else {
            return Ok(None);
        };
        let j = compact(field(cnd, "left")).unwrap_or_default();
        let init = compact(field(n, "initializer")).unwrap_or_default();
        let init = init.trim_end_matches(';');
        let upd = compact(field(n, "update")).unwrap_or_default();
        if field(cnd, "operator").map(|o| text(o, src)) != Some("<")
            || init != format!("int64_t{j}=0")
            || upd != format!("++{j}")
        {
            return Err(bad(
                "a loop over a collc_seq_len count that is not `for (j = 0; j < n; ++j)`",
            ));
        }
        let body = field(n, "body").ok_or_else(|| bad("a loop body"))?;
        let mut items = all_kids(body);
        items.retain(|k| k.kind() != "comment");
        let first = items
            .first()
            .copied()
            .filter(|d| d.kind() == "declaration")
            .ok_or_else(|| bad("a counted loop without its `collc_seq_at` variable"))?;
        let decl = field(first, "declarator")
            .filter(|d| d.kind() == "init_declarator")
            .ok_or_else(|| self.bad(first, "a loop variable"))?;
        let var = field(decl, "declarator")
            .map(|v| text(v, src).to_string())
            .ok_or_else(|| self.bad(first, "a loop variable"))?;
        let value = field(decl, "value").ok_or_else(|| self.bad(first, "a loop variable"))?;
        let at = call(strip(value, src), src).filter(|(f, _)| f == "collc_seq_at");
        let Some((_, [lo, step, g, idx])) = at.as_ref().map(|(f, a)| (f, a.as_slice())) else {
            return Err(self.bad(
                first,
                "a counted loop variable that is not `collc_seq_at(..)`",
            ));
        };
        let rev = match compact(Some(*idx)) {
            Some(x) if x == j => false,
            Some(x) if x == format!("{count}-1-{j}") => true,
            _ => return Err(self.bad(*idx, "a sequence index other than `j` or `n - 1 - j`")),
        };
        if self.e(*lo)? != q.lo || self.e(*step)? != q.step || flag(*g, src) != Some(q.geometric) {
            return Err(self.bad(value, "a `collc_seq_at` that does not match its count"));
        }
        let saved = (self.scope.clone(), self.cells.clone(), self.ptrs.clone());
        self.scope.bind(&var);
        let mut out = Vec::new();
        self.list(&items[1..], &mut out)?;
        (self.scope, self.cells, self.ptrs) = saved;
        let range = Range::Seq {
            lo: q.lo,
            hi: q.hi,
            step: q.step,
            geometric: q.geometric,
            rev,
        };
        Ok(Some(L::new(
            S::For {
                var,
                range,
                body: out,
            },
            line(n),
        )))
    }
}
