//! The world sizes at which some rank's exit certainly cannot be ordered after another
//! rank's entry: the world sizes the bounded search explores besides its ladder.
//!
//! Every collective's meaning needs such orders: a barrier's rank leaves only after every
//! rank entered; an allreduce, reduce_scatter, allgather or all_to_all rank's output holds
//! every rank's input of the call; a broadcast's rank holds the root's. The only thing that
//! orders two ranks is a notify → wait chain (LANGUAGE.md §13.5). This module
//! over-approximates the chains of one enumerated configuration: a notify that can add
//! credit (an AtomicAdd not known to be `<= 0`, or a Set) may release every wait on its
//! cell, whatever the guards, thresholds and calls; a process released by any of its waits
//! may go on to every notify it has, in this call or the next. A rank `s` that no chain from
//! rank `r` can reach is then unordered with `r` in every run, and a schedule that runs `s`
//! through its call before `r` enters it breaks the collective: the simulator, run at that
//! world size, shows it. The answer only chooses world sizes to explore; the verdict is the
//! simulator's.
//!
//! The world sizes looked at: the enumerated domain (`1..=ENUM_WORLD_MAX`), then the sizes
//! past it where a guard or loop bound of the protocol can change which ranks do what
//! ([`critical::past_enumeration`]).

use crate::critical;
use crate::exec::{self, Cell, Run};
use crate::sweep::{self, Visit};
use crate::sym::FxMap;
use collc_spec::ir::{NotifyOp, Protocol, Semantics};
use std::time::Instant;

/// The first world size of [`worlds`] (the enumerated domain ascending, then the critical
/// sizes past it) at which some pair of ranks the collective's meaning orders has no
/// notify → wait chain; `None` when there is none, or when the configurations cannot be
/// executed (the obligations then say why) or `deadline` passes first.
pub fn first_unordered_world(p: &Protocol, deadline: Instant) -> Option<i64> {
    let worlds = worlds(p);
    let mut found = None;
    let sweep = sweep::each_run(p, Some(&worlds), &mut |visit| match visit {
        _ if Instant::now() >= deadline => false,
        Visit::Restart => true,
        Visit::Run(_, run) => {
            if ordered(p, run) {
                return true;
            }
            found = Some(run.world);
            false
        }
    });
    // A configuration that cannot be executed: the obligations say why.
    found.filter(|_| sweep.failure.is_none())
}

/// True when every pair `(r, s)` the meaning orders has a possible chain in `run`.
fn ordered(p: &Protocol, run: &Run) -> bool {
    let world = run.world;
    if world < 2 {
        return true;
    }
    let sources: Vec<u32> = match &p.semantics {
        Semantics::Broadcast { root, .. } => match run.config.iter().find(|(v, _)| v == root) {
            Some((_, r)) => vec![*r as u32],
            None => return true,
        },
        _ => (0..world as u32).collect(),
    };
    // The notifies of each actor, and the waits on each cell.
    let mut notifies: FxMap<(u32, u32), Vec<Cell>> = Default::default();
    let mut waits: FxMap<Cell, Vec<(u32, u32)>> = Default::default();
    for ev in &run.events {
        let Some(cell) = ev.cell else { continue };
        match &ev.kind {
            exec::EvKind::Notify { op, value, .. } => {
                let releases = match op {
                    NotifyOp::Set => true,
                    NotifyOp::AtomicAdd => value.as_const().is_none_or(|v| v > 0),
                };
                if releases {
                    notifies.entry(ev.actor).or_default().push(cell);
                }
            }
            exec::EvKind::Wait { .. } => waits.entry(cell).or_default().push(ev.actor),
            exec::EvKind::Fence => {}
        }
    }
    for r in sources {
        let mut reached: Vec<bool> = vec![false; world as usize];
        reached[r as usize] = true;
        let mut fired: std::collections::HashSet<(u32, u32)> = Default::default();
        let mut work: Vec<(u32, u32)> = notifies.keys().filter(|a| a.0 == r).copied().collect();
        while let Some(a) = work.pop() {
            if !fired.insert(a) {
                continue;
            }
            for cell in notifies.get(&a).map_or(&[][..], |v| v.as_slice()) {
                for w in waits.get(cell).map_or(&[][..], |v| v.as_slice()) {
                    reached[w.0 as usize] = true;
                    if !fired.contains(w) {
                        work.push(*w);
                    }
                }
            }
        }
        if reached.iter().any(|x| !x) {
            return false;
        }
    }
    true
}

/// The world sizes looked at, in order (module documentation): the enumerated domain,
/// then [`critical::past_enumeration`].
fn worlds(p: &Protocol) -> Vec<i64> {
    let mut out: Vec<i64> =
        exec::enumerated_world(p).map_or(Vec::new(), |(a, b)| (a..=b).collect());
    out.extend(critical::past_enumeration(p));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::critical::tests::protocol;
    use crate::critical::CRITICAL_MAX;

    const CAPPED: &str = "collective c: barrier() {
        ranks P in 1..=65536;
        signal arr[P];
        signal rel[1];
        body {
            if me != 0 {
                notify arr[me] @ rank(0) += 1;
                if me * 2 < 41 { wait rel[0] >= 1; }
            } else {
                for p in peers { wait arr[p] >= 1; }
                for p in peers { if p * 2 < 41 { notify rel[0] @ p += 1; } }
            }
        }
        epilogue {
            if me == 0 { for p in peers { notify arr[p] -= 1; } }
            else if me * 2 < 41 { notify rel[0] -= 1; }
            fence;
        }
    }";

    #[test]
    fn sizes_past_the_enumeration_come_from_the_literals() {
        let w = worlds(&protocol(CAPPED));
        assert_eq!(&w[..16], &(1..=16).collect::<Vec<_>>()[..]);
        // 41 / 2 = 20 and 41 - 2 = 39, 41 +- 1, 41 * 2 = 82, ...: around each
        for x in [19, 20, 21, 22, 38, 39, 40, 41, 42, 43, 81, 82, 83, 84] {
            assert!(w.contains(&x), "{x} in {w:?}");
        }
        assert!(w.iter().all(|x| *x <= CRITICAL_MAX));
        assert!(w.windows(2).skip(16).all(|p| p[0] < p[1]), "{w:?}");
    }

    #[test]
    fn small_literals_add_no_size() {
        let barrier = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/barrier.coll"
        ))
        .expect("read");
        assert_eq!(worlds(&protocol(&barrier)), (1..=16).collect::<Vec<_>>());
    }

    #[test]
    fn the_capped_barrier_is_unordered_first_at_22() {
        let far = Instant::now() + std::time::Duration::from_secs(120);
        assert_eq!(first_unordered_world(&protocol(CAPPED), far), Some(22));
        // the same barrier with the cap removed is ordered at every size looked at
        let fixed = CAPPED
            .replace("me * 2 < 41", "me >= 1")
            .replace("p * 2 < 41", "p >= 1");
        assert_eq!(first_unordered_world(&protocol(&fixed), far), None);
    }
}
