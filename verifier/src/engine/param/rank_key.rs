//! Rank keys for the progress ranking: within one level, the program points of
//! different ranks are ordered by a *key* of the rank first — a function of the actor
//! (rank, block) fixed for the whole call — and by program point only between ranks of
//! the same key. A tree released from its root needs it: a child waits for its
//! parent's credit at its first statement, and the parent sends it late in its own
//! program, so no order of program points alone ranks the wait; with the relative rank
//! `vr = (me - root + P) % P` as the key (a parent's `vr` is below its children's), the
//! parent's credit is ranked first.
//!
//! The argument of the ranking (`README.md`, "Progress") holds for any order of
//! (call, level, key, program point) that never decreases along one rank's execution:
//! levels never decrease along program order and the key is constant, so it does. In a
//! state where some ranks wait forever, the waiting rank at the smallest position has
//! every credit that the ranking counts for its wait: each is sent at a smaller position
//! of its sender, which is waiting at a position at least as large, or done.
//!
//! The candidates are the body's top-level `let`s that read the rank, then the rank
//! itself, each ascending and then descending; the first that proves every wait wins.

use super::Ctx;
use crate::engine::sym::{CondV, Formula, Lin};

fn ov() -> String {
    "arithmetic overflow".into()
}

impl Ctx<'_> {
    /// The candidate keys, as (pass A, pass B) values.
    pub(super) fn key_candidates(&self) -> Vec<(Lin, Lin)> {
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
        up
    }

    /// With a key: the conditions "the writer's (pass B) key is below the waiter's (pass
    /// A)" and "the keys are equal".
    pub(super) fn key_split(&mut self) -> Result<Option<(CondV, CondV)>, String> {
        let Some((ka, kb)) = self.key.clone() else {
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
