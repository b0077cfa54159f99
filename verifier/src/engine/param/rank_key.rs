//! Rank keys for the progress ranking: within one level, the program points of
//! different ranks are ordered by a *key* of the rank first — a function of the actor
//! (rank, block) fixed for the whole call — and by program point only between ranks of
//! the same key. A tree released from its root needs it: a child waits for its
//! parent's credit at its first statement, and the parent sends it late in its own
//! program, so no order of program points alone ranks the wait; with the relative rank
//! `vr = (me - root + P) % P` as the key (a parent's `vr` is below its children's), the
//! parent's credit is ranked first.
//!
//! Each level has its own key. A tree barrier needs two: its gather phase (children
//! arrive before their parent) is ranked by the rank descending, and its release phase
//! (the parent before its children), one level up, by the rank ascending.
//!
//! The argument of the ranking (`README.md`, "Progress") holds for any order of
//! (call, level, key of the level, program point) that never decreases along one rank's
//! execution: levels never decrease along program order, and within one level the key is
//! one function of the actor, so program order decides between two points of one rank at
//! one level. In a state where some ranks wait forever, the waiting rank at the smallest
//! position has every credit that the ranking counts for its wait: each is sent at a
//! smaller position of its sender (a lower level; or the same level and a lower key; or
//! the same level and key and an earlier point), which is waiting at a position at least
//! as large, or done.
//!
//! The candidates are program order alone (no key), the body's top-level `let`s that
//! read the rank, then the rank itself, each ascending and then descending (relabelled
//! relative ranks, `rotate`, name a tree: the keys first, program order last). The route
//! tries one candidate for every level first, in that order, and then a key per level:
//! in each round of the ranking, a level's key is the first candidate that ranks the
//! first wait checked at that level, and the level's other waits are checked with it.

use super::extract::PEv;
use super::Ctx;
use crate::engine::sym::{CondV, Formula, Lin};
use std::collections::HashMap;

/// A rank key as its (pass A, pass B) values; `None`: program order alone.
pub(super) type Key = Option<(Lin, Lin)>;

/// The key of each level chosen so far in a round of the ranking.
pub(super) type Schedule = HashMap<i64, Key>;

/// The answers of the ranking's questions (`Ctx::reached`), by what decides them: the
/// wait, its level's key, where each statement on its signal stands relative to its level
/// (below, at, above: all that `by_level` reads of the levels), and the phases raised so
/// far (`phase.rs`: they reorder program points within a loop iteration). A wait asked
/// again in a later round or attempt whose raises left that unchanged gets the same answer.
pub(super) type Answers = HashMap<AnswerKey, Result<(), String>>;

/// What decides an answer of [`Answers`].
pub(super) type AnswerKey = (
    usize,
    Key,
    Vec<std::cmp::Ordering>,
    Vec<super::phase::Raise>,
);

fn ov() -> String {
    "arithmetic overflow".into()
}

impl Ctx<'_> {
    /// The candidate keys, in the order they are tried.
    pub(super) fn key_candidates(&self) -> Vec<Key> {
        let actor = |pass: &super::extract::Pass| {
            let mut v = vec![pass.me];
            v.extend(pass.blk);
            v
        };
        let (ma, mb) = (actor(&self.a), actor(&self.b));
        let s = &self.run.syms;
        // A function of the actor and the parameters only.
        let of_actor = |l: &Lin, own: &[u32]| {
            let d = s.deps(l);
            !d.is_empty() && d.iter().all(|x| own.contains(x))
        };
        let mut up: Vec<(Lin, Lin)> = self
            .a
            .lets
            .iter()
            .zip(self.b.lets.iter())
            .filter(|(x, y)| of_actor(x, &ma) && of_actor(y, &mb))
            .map(|(x, y)| (x.clone(), y.clone()))
            .collect();
        up.push((Lin::atom(self.a.me), Lin::atom(self.b.me)));
        up.dedup();
        let down: Vec<(Lin, Lin)> = up
            .iter()
            .filter_map(|(x, y)| Some((x.scale(-1)?, y.scale(-1)?)))
            .collect();
        up.extend(down);
        let keys = up.into_iter().map(Some);
        if self.rotation.is_some() {
            keys.chain([None]).collect()
        } else {
            [None].into_iter().chain(keys).collect()
        }
    }

    /// Whether the wait is reached with its level's key: the key chosen for the level in
    /// this round, else the first of `cands` that ranks it (then the level's key). The
    /// reason told is the first candidate's.
    pub(super) fn reached_keyed(&mut self, w: &PEv, cands: &[Key]) -> Result<(), String> {
        let lw = self.level_of_wait(w);
        if let Some(k) = self.keys.get(&lw).cloned() {
            return self.reached_once(w, lw, &k);
        }
        let mut first = None;
        for k in cands {
            self.keys.insert(lw, k.clone());
            match self.reached_once(w, lw, k) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        self.keys.remove(&lw);
        Err(first.unwrap_or_else(|| "no rank key ranks the waits".into()))
    }

    /// [`Ctx::reached`] with `k` the key of the wait's level `lw`, asked once per
    /// [`Answers`] key.
    fn reached_once(&mut self, w: &PEv, lw: i64, k: &Key) -> Result<(), String> {
        let sig = w.signal;
        let at: Vec<std::cmp::Ordering> = (self.b.events.iter())
            .filter(|e| e.signal == sig)
            .map(|e| self.level_before(e).cmp(&lw))
            .collect();
        let q = (w.span.start, k.clone(), at, self.phases.clone());
        if let Some(r) = self.answers.get(&q) {
            return r.clone();
        }
        let r = self.reached(w);
        self.answers.insert(q, r.clone());
        r
    }

    /// With a key at `level`: the conditions "the writer's (pass B) key is below the
    /// waiter's (pass A)" and "the keys are equal".
    pub(super) fn key_split(&mut self, level: i64) -> Result<Option<(CondV, CondV)>, String> {
        let Some((ka, kb)) = self.keys.get(&level).cloned().flatten() else {
            return Ok(None);
        };
        let d = kb.sub(&ka).ok_or_else(ov)?;
        let s = &mut self.run.syms;
        let less = s.formula(Formula::Ge0(
            d.scale(-1)
                .and_then(|x| x.add(&Lin::k(-1)))
                .ok_or_else(ov)?,
        ));
        let same = s.formula(Formula::Eq0(d));
        Ok(Some((less, same)))
    }
}
