//! Credit windows, part of the `stale-credit` obligation (README, "Credit windows"): a wait
//! in round `j` may pair with the writer's round `j - K` instead of round `j` (a producer
//! that runs K chunks ahead of its consumer waits for the acknowledgement of chunk `j - K`).
//! The round pairing of `check.rs` first asks for a credit of the wait's own round; when that
//! is refuted, the lag `K` is the number of whole rounds of credits the threshold leaves out,
//! `K = ceil((before - need + 1) / c)` (`c` the literal credits per round; `K` may be a
//! parameter, `wait ack >= t - K + 1`, when it is a whole number of rounds), so the wait still
//! needs a credit of round `j - K`: no credit of an earlier round can satisfy it. What remains
//! to prove is that round `j - K` exists (`j - K >= 0` under the wait's guard; after the
//! loop, `trip - K >= 0`), or else that the wait needs nothing (threshold `<= 0`: the
//! window's first K rounds, which pass at once and count no credit at all).
//!
//! `K` must be the same in every round: a lag that reads a loop variable (the wait's own
//! round counter, `wait ack >= 1` leaving out `t` rounds, or `K - t + 1`) is no window. Its
//! waits pair with a round that stays put or moves back while `t` grows, so a later wait
//! passes on credits an earlier one already counted (`sim::stale-pass`); such a lag is
//! refused and the wait's own-round counterexample stands.

use crate::engine::smt::Prop;
use crate::engine::sym::{literal, union, AtomId, CondV, Guard, Lin, Syms};
use collc_spec::ir::CmpOp;

/// The round structure a wait sits in: credits per writer round and the wait's round index.
#[derive(Clone, Debug)]
pub(crate) struct Round {
    /// Credits the writers send per round (a positive literal).
    per_round: i64,
    /// The wait's round: the loop's iteration atom inside it, its trip count after it.
    index: Lin,
}

impl Round {
    /// Inside a summarised loop whose iterations each send `per_iter` credits, `off`
    /// rounds into the written loop (a piece of a split loop; else 0).
    pub(crate) fn inside(per_iter: &Lin, iter: AtomId, off: &Lin) -> Option<Round> {
        Some(Round {
            per_round: literal(per_iter).filter(|c| *c > 0)?,
            index: off.add(&Lin::atom(iter))?,
        })
    }

    /// After such a loop (a drain wait): its round index is the trip count.
    pub(crate) fn after(per_iter: &Lin, trip: &Lin) -> Option<Round> {
        Some(Round {
            per_round: literal(per_iter).filter(|c| *c > 0)?,
            index: trip.clone(),
        })
    }

    /// For a wait needing `need` after `before` credits of earlier rounds: the condition
    /// (`>= 0`) that the round it pairs with, `K` rounds behind, exists. The credits it
    /// leaves out, `m = before - need + 1`, are a positive literal (`K = ceil(m / c)`), or
    /// a formula in the parameters that is a whole number of rounds in every configuration
    /// (its constant and every coefficient multiples of `c`: `K = m / c`, a window whose
    /// `K` is a launch parameter; where it is `<= 0` the wait needs a credit of its own
    /// round or a later one, never an earlier round's). [`Lag::None`] otherwise, and
    /// [`Lag::Varies`] for a `K` that reads a loop variable (no window).
    pub(crate) fn lagged(&self, s: &Syms, need: &Lin, before: &Lin) -> Lag {
        let c = self.per_round;
        let Some(m) = before.sub(need).and_then(|x| x.add(&Lin::k(1))) else {
            return Lag::None;
        };
        let k = match literal(&m) {
            Some(m) if m <= 0 => return Lag::None,
            Some(m) => Lin::k((m + c - 1) / c),
            None if m.c % c == 0 && m.t.iter().all(|(_, x)| x % c == 0) => Lin {
                c: m.c / c,
                t: m.t.iter().map(|(a, x)| (*a, x / c)).collect(),
            },
            None => return Lag::None,
        };
        // The enumerated route's iteration atoms are its summarised loops' (ranks and
        // blocks are concrete): a `K` reading one is not the same in every round.
        if !s.deps(&k).is_empty() {
            return Lag::Varies(k);
        }
        self.index.sub(&k).map_or(Lag::None, Lag::Pairs)
    }
}

/// What a refuted round pairing's threshold leaves out.
pub(crate) enum Lag {
    /// `K` rounds, the same in every round: the index of the round the wait pairs with.
    Pairs(Lin),
    /// A number of rounds that reads a loop variable (`K`, printed in the finding).
    Varies(Lin),
    /// No whole number of rounds.
    None,
}

/// The query that closes a lagged wait: under `guard` and "round `q` does not exist"
/// (`q < 0`), the wait needs nothing (`-need >= 0`). Valid also when `q >= 0` always.
pub(crate) fn early(s: &mut Syms, guard: &Guard, q: &Lin, need: &Lin) -> Option<(Guard, Prop)> {
    let idle = Prop::Ge0(Lin::k(0).sub(need)?);
    let g = match s.cmp(CmpOp::Lt, q, &Lin::k(0))? {
        CondV::Const(false) => return Some((guard.clone(), Prop::Ge0(Lin::k(0)))),
        CondV::Const(true) => guard.clone(),
        CondV::Sym(c) => union(guard, &vec![c]),
    };
    Some((g, idle))
}
