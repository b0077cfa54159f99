//! Classes of identical cells: cells whose events are identical up to the names of the
//! actors (same kinds, values, guards, loops, sections, relative order, owner/remote roles)
//! get identical answers from every credit obligation, so one representative per class is
//! checked ([`representatives`]).

use crate::engine::events::{CellEvents, CellIndex};
use crate::engine::exec::{Cell, EvKind, Run, Section};
use crate::engine::sym::{Guard, Lin};
use crate::obligations::context::Rep;

/// A class so far: its representative, its events, and how many cells it holds.
type Member<'a> = (Cell, &'a [usize], u64);

/// One representative per class of `cells` (its cell of the earliest first event), in cell
/// order, with the size of its class.
pub(crate) fn representatives(run: &Run, cells: &CellIndex) -> Vec<Rep> {
    let mut classes: crate::engine::sym::FxMap<u64, Vec<Member>> = Default::default();
    let mut scratch = Scratch::default();
    for (cell, evs) in cells.by_appearance() {
        let h = sig_hash(run, cell, evs, &mut scratch);
        let bucket = classes.entry(h).or_default();
        let found = bucket.iter_mut().find(|(c, ce, _)| {
            c.signal == cell.signal && same_class(run, c, ce, cell, evs, &mut scratch)
        });
        match found {
            Some((_, _, n)) => *n += 1,
            None => bucket.push((*cell, evs, 1)),
        }
    }
    let mut reps: Vec<Rep> = classes
        .into_values()
        .flatten()
        .map(|(cell, evs, weight)| Rep {
            cell,
            ev: CellEvents::of(run, evs),
            weight,
        })
        .collect();
    reps.sort_unstable_by_key(|r| r.cell);
    reps
}

/// The actor-independent view of one event of a cell: equal views in the same order
/// (with the same pattern of actors) give equal answers from every check.
type View<'a> = (
    bool,
    u8,
    u8,
    &'a Lin,
    &'a Guard,
    Option<u32>,
    Section,
    bool,
    usize,
);

fn view<'a>(run: &'a Run, cell: &Cell, e: usize) -> View<'a> {
    let ev = &run.events[e];
    thread_local! {
        static ZERO: &'static Lin = Box::leak(Box::new(Lin::k(0)));
    }
    let (kind, op, val, remote) = match &ev.kind {
        EvKind::Notify { op, value, remote } => (0u8, *op as u8, value, *remote),
        EvKind::Wait { cmp, thr } => (1, *cmp as u8, thr, false),
        EvKind::Fence => (2, 0, ZERO.with(|z| *z), false),
    };
    (
        ev.actor.0 == cell.owner,
        kind,
        op,
        val,
        &ev.guard,
        ev.frame,
        ev.section,
        remote,
        ev.span.start,
    )
}

/// (rank, block).
type Actor = (u32, u32);

/// Buffers reused across cells: two actor lists and two patterns.
#[derive(Default)]
struct Scratch {
    seen: (Vec<Actor>, Vec<Actor>),
    pat: (Vec<u16>, Vec<u16>),
}

/// Actor pattern: for each event, the index of its actor in order of first appearance.
fn actor_pattern(run: &Run, evs: &[usize], seen: &mut Vec<Actor>, out: &mut Vec<u16>) {
    seen.clear();
    out.clear();
    for &e in evs {
        let a = run.events[e].actor;
        let i = match seen.iter().position(|x| *x == a) {
            Some(i) => i,
            None => {
                seen.push(a);
                seen.len() - 1
            }
        };
        out.push(i as u16);
    }
}

fn sig_hash(run: &Run, cell: &Cell, evs: &[usize], s: &mut Scratch) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = crate::engine::sym::Fx::default();
    cell.signal.hash(&mut h);
    evs.len().hash(&mut h);
    actor_pattern(run, evs, &mut s.seen.0, &mut s.pat.0);
    s.pat.0.hash(&mut h);
    for &e in evs {
        view(run, cell, e).hash(&mut h);
    }
    h.finish()
}

fn same_class(run: &Run, a: &Cell, ea: &[usize], b: &Cell, eb: &[usize], s: &mut Scratch) -> bool {
    if ea.len() != eb.len() {
        return false;
    }
    actor_pattern(run, ea, &mut s.seen.0, &mut s.pat.0);
    actor_pattern(run, eb, &mut s.seen.1, &mut s.pat.1);
    s.pat.0 == s.pat.1
        && ea
            .iter()
            .zip(eb)
            .all(|(x, y)| view(run, a, *x) == view(run, b, *y))
}
