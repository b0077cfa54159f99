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

use crate::exec::{self, Cell, Plan, Run, Stop};
use crate::sym::FxMap;
use collc_spec::ir::{NotifyOp, Protocol, Semantics};
use std::time::Instant;

/// The smallest world size of the enumerated domain (P ascending, up to
/// `ENUM_WORLD_MAX`) at which some pair of ranks the collective's meaning orders has no
/// notify → wait chain; `None` when there is none, or when the configurations cannot be
/// executed (the obligations then say why) or `deadline` passes first.
pub fn first_unordered_world(p: &Protocol, deadline: Instant) -> Option<i64> {
    let mut plan = Plan::initial(p);
    for _ in 0..8 {
        let mut found = None;
        let mut need = None;
        if plan.count(p) > exec::CONFIG_LIMIT {
            return None;
        }
        exec::configs(p, &plan, &mut |cfg| match exec::run(p, cfg) {
            _ if Instant::now() >= deadline => false,
            Ok(Some(run)) => {
                if !ordered(p, &run) {
                    found = Some(run.world);
                    return false;
                }
                true
            }
            Ok(None) => true,
            Err(Stop::Need(vars, ..)) => {
                need = Some(vars);
                false
            }
            Err(_) => false,
        });
        match need {
            Some(vars) if found.is_none() => {
                if plan.promote(p, &vars).is_err() {
                    return None;
                }
            }
            _ => return found,
        }
    }
    None
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
