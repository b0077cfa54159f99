//! The world sizes at which some rank's exit certainly cannot be ordered after another
//! rank's entry: the world sizes the bounded search explores besides its ladder.
//!
//! Every collective's meaning needs such orders: a barrier's rank leaves only after every
//! rank entered; an allreduce, reduce_scatter, allgather or all_to_all rank's output holds
//! every rank's input of the call; a broadcast's or scatter's rank holds the root's, a
//! reduce's or gather's root every rank's. The only thing that orders two ranks is a
//! notify → wait chain (LANGUAGE.md §13.5). This module
//! over-approximates the chains of one enumerated configuration: a notify that can add
//! credit (an AtomicAdd not known to be `<= 0`, or a Set) may release every wait on its
//! cell, whatever the guards, thresholds and calls; a process released by any of its waits
//! may go on to every notify it has, in this call or the next. A rank `s` that no chain from
//! rank `r` can reach is then unordered with `r` in every run, and a schedule that runs `s`
//! through its call before `r` enters it breaks the collective: the simulator, run at that
//! world size, shows it. The answer only chooses world sizes to explore; the verdict is the
//! simulator's.
//!
//! The world sizes looked at: the enumerated domain (`1..=TABLE.enum_world_max`), then the sizes
//! past it where a guard or loop bound of the protocol can change which ranks do what
//! (`planning::pair_order_worlds`).

use crate::engine::exec::{self, Cell, Plan, Run};
use crate::engine::sweep::{self, Visit};
use crate::engine::sym::FxMap;
use crate::planning::{self, probe};
use collc_spec::info::ProtocolInfo;
use collc_spec::ir::{NotifyOp, Protocol, Semantics, VarKind};
use std::collections::BTreeMap;
use std::time::Instant;

/// The first configuration of `planning::pair_order_worlds` (the enumerated domain ascending, then the
/// critical sizes past it) at which some pair of ranks the collective's meaning orders has
/// no notify → wait chain, as the values of the world size and of the integer parameters
/// the run had concrete (rank parameters left out: the bounded search tries every root);
/// when there is none, the same search with each integer parameter the sweep keeps symbolic
/// pinned to each of its [`probe::candidates`] in turn, over the enumerated domain (a guard
/// such as `lane != 2` on a symbolic parameter is not evaluated by the over-approximation, a
/// concrete one is). `None` when nothing is unordered, when the configurations cannot be
/// executed (the obligations then say why) or `deadline` passes first.
/// `info` is `p`'s.
pub fn first_unordered(
    p: &Protocol,
    info: &ProtocolInfo,
    deadline: Instant,
) -> Option<BTreeMap<String, i64>> {
    if let Some(found) = search(
        p,
        &planning::pair_order_worlds(p, info),
        Plan::initial(p),
        deadline,
    ) {
        return Some(found);
    }
    let lits = &info.literals;
    let changes = probe::change_points(p, info);
    let plain = probe::plain_params(p);
    let enumerated: Vec<i64> = exec::enumerated_worlds(p);
    for v in Plan::initial(p).symbolic {
        let Some((lo, hi)) = probe::plain_domain(p, &plain, v) else {
            continue;
        };
        let mut xs = probe::candidates(lo, hi, lits);
        xs.extend(changes.iter().filter(|c| c.0 == v).map(|c| c.1));
        xs.retain(|x| (lo..=hi).contains(x));
        xs.sort_unstable();
        xs.dedup();
        for x in xs {
            if Instant::now() >= deadline {
                return None;
            }
            let mut q = p.clone();
            q.vars[v].kind = VarKind::Param {
                domain: Some((x, x)),
            };
            let mut plan = Plan::initial(&q);
            if plan.promote(&q, &[v]).is_err() {
                continue;
            }
            if let Some(found) = search(&q, &enumerated, plan, deadline) {
                return Some(found);
            }
        }
    }
    None
}

/// The first unordered configuration of the sweep over `worlds` from `plan` (see
/// [`first_unordered`]).
fn search(
    p: &Protocol,
    worlds: &[i64],
    plan: Plan,
    deadline: Instant,
) -> Option<BTreeMap<String, i64>> {
    let mut found = None;
    let sweep = sweep::each_run_from(p, Some(worlds), plan, &mut |visit| match visit {
        _ if Instant::now() >= deadline => false,
        Visit::Restart => true,
        Visit::Run(_, run) => {
            if ordered(p, run) {
                return true;
            }
            let values = run
                .config
                .iter()
                .filter(|(v, _)| match p.vars[*v].kind {
                    VarKind::World { .. } => true,
                    VarKind::Param { domain } => domain.is_some(),
                    _ => false,
                })
                .map(|(v, x)| (p.var_name(*v).to_string(), *x))
                .collect();
            found = Some(values);
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
    let everyone: Vec<u32> = (0..world as u32).collect();
    let root = match p.semantics.root() {
        Some(root) => match run.config.iter().find(|(v, _)| *v == root) {
            Some((_, r)) => Some(*r as u32),
            None => return true,
        },
        None => None,
    };
    // Who must reach whom: from the root (broadcast, scatter), to the root (reduce,
    // gather), every rank to every rank (the others).
    let (sources, sinks) = match (&p.semantics, root) {
        (Semantics::Broadcast { .. } | Semantics::Scatter { .. }, Some(r)) => (vec![r], everyone),
        (Semantics::Reduce { .. } | Semantics::Gather { .. }, Some(r)) => (everyone, vec![r]),
        _ => (everyone.clone(), everyone),
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
        if sinks.iter().any(|s| !reached[*s as usize]) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::critical::tests::protocol;
    use crate::planning::TABLE;

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

    fn worlds(p: &Protocol) -> Vec<i64> {
        planning::pair_order_worlds(p, &ProtocolInfo::of(p))
    }

    fn first_unordered(p: &Protocol, deadline: Instant) -> Option<BTreeMap<String, i64>> {
        super::first_unordered(p, &ProtocolInfo::of(p), deadline)
    }

    #[test]
    fn sizes_past_the_enumeration_come_from_the_literals() {
        let w = worlds(&protocol(CAPPED));
        assert_eq!(&w[..16], &(1..=16).collect::<Vec<_>>()[..]);
        // 41 / 2 = 20 and 41 - 2 = 39, 41 +- 1, 41 * 2 = 82, ...: around each
        for x in [19, 20, 21, 22, 38, 39, 40, 41, 42, 43, 81, 82, 83, 84] {
            assert!(w.contains(&x), "{x} in {w:?}");
        }
        assert!(w.iter().all(|x| *x <= TABLE.critical_max));
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
    fn a_skipped_lane_is_unordered_first_at_its_parameter_value() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/bugs/lane_barrier_skips_lane2.coll"
        ))
        .expect("read");
        let far = Instant::now() + std::time::Duration::from_secs(120);
        let found = first_unordered(&protocol(&text), far).expect("unordered");
        let want: BTreeMap<String, i64> = [("P".to_string(), 3), ("L".to_string(), 3)].into();
        assert_eq!(found, want);
        // with the lane kept, every L and P looked at is ordered
        let fixed = text.replace("% L != 2", "% L != L");
        assert_eq!(first_unordered(&protocol(&fixed), far), None);
    }

    /// A guard on a parameter the initial plan keeps symbolic (it picks no cell, target or
    /// loop): found at the first value that drops the release, with that value named.
    #[test]
    fn a_symbolic_parameter_is_tried_at_its_candidates() {
        let text = "collective c: barrier() {
            ranks P in 1..=8;
            param D: int in 1..=8;
            signal arr[P];
            signal rel[1];
            body {
                if me != 0 {
                    notify arr[me] @ rank(0) += 1;
                    if D < 4 { wait rel[0] >= 1; }
                } else {
                    for p in peers { wait arr[p] >= 1; }
                    if D < 4 { for p in peers { notify rel[0] @ p += 1; } }
                }
            }
            epilogue {
                if me == 0 { for p in peers { notify arr[p] -= 1; } }
                else if D < 4 { notify rel[0] -= 1; }
            }
        }";
        let p = protocol(text);
        let d = collc_spec::ir::VarId::new(p.vars.iter().position(|v| v.name == "D").expect("D"));
        assert!(Plan::initial(&p).symbolic.contains(&d), "D starts symbolic");
        let far = Instant::now() + std::time::Duration::from_secs(120);
        let found = first_unordered(&p, far).expect("unordered");
        let want: BTreeMap<String, i64> = [("P".to_string(), 2), ("D".to_string(), 4)].into();
        assert_eq!(found, want);
    }

    #[test]
    fn the_capped_barrier_is_unordered_first_at_22() {
        let far = Instant::now() + std::time::Duration::from_secs(120);
        let found = first_unordered(&protocol(CAPPED), far).expect("unordered");
        assert_eq!(found.get("P"), Some(&22));
        // the same barrier with the cap removed is ordered at every size looked at
        let fixed = CAPPED
            .replace("me * 2 < 41", "me >= 1")
            .replace("p * 2 < 41", "p >= 1");
        assert_eq!(first_unordered(&protocol(&fixed), far), None);
    }
}
