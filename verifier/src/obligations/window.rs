//! Credit windows, part of the `stale-credit` obligation (README, "Credit windows"): a wait
//! in round `j` may pair with the writer's round `j - K` instead of round `j` (a producer
//! that runs K chunks ahead of its consumer waits for the acknowledgement of chunk `j - K`).
//! The round pairing of `check.rs` first asks for a credit of the wait's own round; when that
//! is refuted, the lag `K` is the number of whole rounds of credits the threshold leaves out,
//! `K = ceil((before - need + 1) / c)` (`c` the literal credits per round), so the wait still
//! needs a credit of round `j - K`: no credit of an earlier round can satisfy it. What remains
//! to prove is that round `j - K` exists (`j - K >= 0` under the wait's guard; after the
//! loop, `trip - K >= 0`), or else that the wait needs nothing (threshold `<= 0`: the
//! window's first K rounds, which pass at once and count no credit at all).

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
    /// Inside a summarised loop whose iterations each send `per_iter` credits.
    pub(crate) fn inside(per_iter: &Lin, iter: AtomId) -> Option<Round> {
        Some(Round {
            per_round: literal(per_iter).filter(|c| *c > 0)?,
            index: Lin::atom(iter),
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
    /// (`>= 0`) that the round it pairs with, `K` rounds behind, exists. `None` when the
    /// credits it leaves out are not a positive literal (no constant window).
    pub(crate) fn lagged(&self, need: &Lin, before: &Lin) -> Option<Lin> {
        let m = literal(&before.sub(need)?.add(&Lin::k(1))?)?;
        if m <= 0 {
            return None;
        }
        let k = (m + self.per_round - 1) / self.per_round;
        self.index.add(&Lin::k(-k))
    }
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
