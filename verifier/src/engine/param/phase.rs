//! Phases of the progress ranking inside one iteration of a loop: a round trip within a
//! round. A root that sends chunk `t` and then, in the same round, waits for the peers'
//! acknowledgement of it (`notify full @ q += 1; wait ack[q] >= 1;` in the root's branch,
//! `wait full >= 1; ...; notify ack @ root += 1;` in the peers') is not ranked by program
//! points: the peer's acknowledgement comes later in the text than the root's wait, and
//! raising the wait a level (`oblig.rs`, `ranked`) is sound only for a wait alone in its
//! loops, since a level is compared before the loop's iteration.
//!
//! A *phase* is compared after it. In the body of a loop at depth `k`, every *item* (a
//! statement of that body, looking into `if` branches but not into loops: a nested loop is
//! one item) has a phase, 0 unless raised: the largest raise of an item at or before it in
//! the text, in the same body, not in the other branch of an `if`. Two program points that
//! share the loops `L1..Lk` (the same statements, compared iteration by iteration) and
//! whose iterations of them are equal are ordered by (phase of their items in `Lk`'s body,
//! textual position) instead of the textual position alone; points that share no loop are
//! ordered as before. This is a lexicographic order of the sequences (position of the item
//! in the body, iteration of `L1`, (phase, position) of the item in `L1`'s body, iteration
//! of `L2`, ...), so a total preorder, and it never decreases along one rank's execution:
//! within one iteration of `Lk` the rank runs the items of one path in textual order, and
//! along one path phases never decrease (an item before another on a path is in no other
//! branch of an `if` than it, nor is any raised item before it that is on the path of the
//! first); a nested loop is one item, so its own iterations keep its phase; the next
//! iteration of `Lk` is later by the iteration, whatever the phases. So the argument of the
//! ranking (`rank_key.rs`, `README.md` "Progress") holds unchanged with the order (call,
//! level, key of the level, program point with phases), whatever raises are chosen: the
//! raises are a search for a ranking, and each candidate is checked in full.
//!
//! The search: a wait that is not shown reached, inside a loop and not alone in its loops,
//! has its item raised, in the body of the outermost loop it shares with a positive credit
//! of its signal, above the phases of those credits' items there. It is tried only after
//! the ranking without phases failed, so what that ranking proved stays proved.

use super::extract::{PEv, PKind};
use super::oblig::Side;
use super::Ctx;

/// One raised item: in the body of the loops `body` (their statements, outermost first;
/// the depth is its length), the item that starts at `item`, with the block path of the
/// wait that raised it (for the `if` branches), to `phase`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Raise {
    body: Vec<usize>,
    item: usize,
    blocks: Vec<u32>,
    phase: i64,
}

impl Ctx<'_> {
    /// The statements of the first `k` loops around `ev` (of pass `side`).
    fn body_of(&self, side: Side, ev: &PEv, k: usize) -> Vec<usize> {
        let pass = self.pass(side);
        ev.loops
            .iter()
            .take(k)
            .map(|l| pass.loops[*l].stmt)
            .collect()
    }

    /// Where `ev`'s item in the body of its `k`-th loop starts: the loop at depth `k + 1`
    /// around it, or the statement itself.
    fn item_of(&self, side: Side, ev: &PEv, k: usize) -> usize {
        match ev.loops.get(k) {
            Some(l) => self.pass(side).loops[*l].stmt,
            None => ev.span.start,
        }
    }

    /// The phase of `ev`'s item in the body of its `k`-th loop (0 at the top level).
    pub(super) fn phase(&self, side: Side, ev: &PEv, k: usize) -> i64 {
        if k == 0 || k > ev.loops.len() || self.phases.is_empty() {
            return 0;
        }
        let body = self.body_of(side, ev, k);
        let item = self.item_of(side, ev, k);
        self.phases
            .iter()
            .filter(|r| r.body == body)
            .filter(|r| {
                r.item == item || r.item < item && !self.a.exclusive_blocks(&r.blocks, &ev.blocks)
            })
            .map(|r| r.phase)
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// The phases of a wait's items, at every depth (0 at the top level).
    pub(super) fn phases_of(&self, w: &PEv) -> Vec<i64> {
        (0..=w.loops.len())
            .map(|k| self.phase(Side::A, w, k))
            .collect()
    }

    /// Raises the item of wait `w` (not shown reached) above the positive credits of its
    /// signal that share a loop with it, in the body of the outermost loop one shares;
    /// true when a phase changed.
    pub(super) fn raise_phase(&mut self, w: &PEv) -> bool {
        let credits: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|n| n.signal == w.signal && (n.is_add() || n.is_set()))
            .filter(|n| match &n.kind {
                PKind::Notify { value: Some(v), .. } => {
                    n.is_set() || self.run.syms.ub(v).is_none_or(|x| x > 0)
                }
                _ => true,
            })
            .cloned()
            .collect();
        let shared = |c: &PEv| {
            let mine = self.body_of(Side::A, w, w.loops.len());
            let theirs = self.body_of(Side::B, c, c.loops.len());
            mine.iter().zip(&theirs).take_while(|(x, y)| x == y).count()
        };
        let Some(k) = credits.iter().map(shared).filter(|k| *k >= 1).min() else {
            return false;
        };
        let top = credits
            .iter()
            .filter(|c| shared(c) == k)
            .map(|c| self.phase(Side::B, c, k))
            .max()
            .unwrap_or(0);
        if self.phase(Side::A, w, k) > top {
            return false;
        }
        let raise = Raise {
            body: self.body_of(Side::A, w, k),
            item: self.item_of(Side::A, w, k),
            blocks: w.blocks.clone(),
            phase: top + 1,
        };
        self.phases
            .retain(|r| !(r.body == raise.body && r.item == raise.item));
        self.phases.push(raise);
        true
    }

    /// Whether some wait could be raised by [`Ctx::raise_phase`]: one inside a loop that a
    /// credit of its signal shares.
    pub(super) fn phasable(&self) -> bool {
        self.a.events.iter().any(|w| {
            matches!(w.kind, PKind::Wait { .. })
                && !w.loops.is_empty()
                && self.b.events.iter().any(|n| {
                    n.signal == w.signal
                        && matches!(n.kind, PKind::Notify { .. })
                        && n.loops.first().map(|l| self.b.loops[*l].stmt)
                            == w.loops.first().map(|l| self.a.loops[*l].stmt)
                })
        })
    }
}
