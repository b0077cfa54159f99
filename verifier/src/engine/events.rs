//! Reading the events of one configuration ([`crate::engine::exec::run`]): their kinds,
//! their totals over summarised loops, and the events of each cell ([`CellIndex`], the one
//! grouping the obligations, the credit table and the happens-before order share).

use crate::engine::exec::{Cell, EvKind, Event, Run, Section};
use crate::engine::sym::{sum_over, Lin};
use collc_spec::ir::{NotifyOp, Protocol};
use std::ops::Range;

/// The frames around an event, innermost first.
pub fn chain(run: &Run, ev: &Event) -> Vec<u32> {
    let mut v = Vec::new();
    let mut f = ev.frame;
    while let Some(i) = f {
        v.push(i);
        f = run.frames[i as usize].parent;
    }
    v
}

/// An event's total over its summarised loops, under its guard.
pub fn contrib(run: &mut Run, ev: usize, val: &Lin) -> Result<Lin, String> {
    let mut v = val.clone();
    let ch = chain(run, &run.events[ev]);
    for f in ch {
        let fr = run.frames[f as usize].clone();
        v = sum_over(&mut run.syms, &v, fr.iter, &fr.trip)?;
    }
    let g = run.events[ev].guard.clone();
    Ok(run.syms.guarded(&g, &v))
}

/// A notify's value (0 for a wait or a fence).
pub(crate) fn value_of(ev: &Event) -> Lin {
    match &ev.kind {
        EvKind::Notify { value, .. } => value.clone(),
        _ => Lin::k(0),
    }
}

/// An AtomicAdd notify.
pub(crate) fn is_add(ev: &Event) -> bool {
    matches!(
        ev.kind,
        EvKind::Notify {
            op: NotifyOp::AtomicAdd,
            ..
        }
    )
}

/// A Set notify.
pub(crate) fn is_set(ev: &Event) -> bool {
    matches!(
        ev.kind,
        EvKind::Notify {
            op: NotifyOp::Set,
            ..
        }
    )
}

/// A wait.
pub(crate) fn is_wait(ev: &Event) -> bool {
    matches!(ev.kind, EvKind::Wait { .. })
}

/// `sig[1][0] on rank 0`.
pub fn cell_name(p: &Protocol, c: &Cell) -> String {
    let mut s = p.signals[c.signal].name.clone();
    for i in c.index.iter() {
        s.push_str(&format!("[{i}]"));
    }
    format!("{s} on rank {}", c.owner)
}

/// The events of a cell by kind, each list in event order.
#[derive(Debug, Clone, Default)]
pub(crate) struct CellEvents {
    /// Every event on the cell.
    pub(crate) all: Vec<usize>,
    /// Its Set notifies.
    pub(crate) sets: Vec<usize>,
    /// Its AtomicAdd notifies.
    pub(crate) adds: Vec<usize>,
    /// Its waits.
    pub(crate) waits: Vec<usize>,
    /// Every event but the waits (what the cell receives).
    pub(crate) writes: Vec<usize>,
    /// The AtomicAdds of the body not known to be zero or less: the credits of the call.
    pub(crate) credits: Vec<usize>,
}

impl CellEvents {
    /// The events `evs` of one cell, by kind.
    pub(crate) fn of(run: &Run, evs: &[usize]) -> CellEvents {
        let mut out = CellEvents {
            all: evs.to_vec(),
            ..CellEvents::default()
        };
        for &e in evs {
            let ev = &run.events[e];
            if is_wait(ev) {
                out.waits.push(e);
                continue;
            }
            out.writes.push(e);
            if is_set(ev) {
                out.sets.push(e);
            } else if is_add(ev) {
                out.adds.push(e);
                if ev.section == Section::Body && value_of(ev).as_const().is_none_or(|v| v > 0) {
                    out.credits.push(e);
                }
            }
        }
        out
    }
}

/// The events of a configuration grouped by cell, each cell's events in event order.
#[derive(Debug, Clone, Default)]
pub struct CellIndex {
    /// Event indices, cell by cell.
    order: Vec<usize>,
    /// Each cell's range in `order`, cells in order of their first event.
    groups: Vec<(Cell, Range<usize>)>,
    /// The positions in `groups` in cell order.
    sorted: Vec<u32>,
}

impl CellIndex {
    /// The grouping of `run`'s events (events without a cell, the fences, are left out).
    pub fn of(run: &Run) -> CellIndex {
        let (order, groups) = group_flat(run);
        let mut sorted: Vec<u32> = (0..groups.len() as u32).collect();
        sorted.sort_unstable_by(|a, b| groups[*a as usize].0.cmp(&groups[*b as usize].0));
        CellIndex {
            order,
            groups,
            sorted,
        }
    }

    /// Every cell with its events, cells in order.
    pub fn iter(&self) -> impl Iterator<Item = (&Cell, &[usize])> + '_ {
        self.sorted.iter().map(|g| self.group(*g as usize))
    }

    /// Every cell with its events, cells in the order of their first event.
    pub fn by_appearance(&self) -> impl Iterator<Item = (&Cell, &[usize])> + '_ {
        (0..self.groups.len()).map(|g| self.group(g))
    }

    fn group(&self, g: usize) -> (&Cell, &[usize]) {
        let (c, r) = &self.groups[g];
        (c, &self.order[r.clone()])
    }
}

/// Event indices by cell (cells in order of first appearance), and each cell's range in
/// that order: a packed key hashed and a counting sort for the common cells, a sort for the
/// rest.
fn group_flat(run: &Run) -> (Vec<usize>, Vec<(Cell, Range<usize>)>) {
    // Group ids by first appearance (hashing, no sort), then a counting sort.
    let mut ids: crate::engine::sym::FxMap<u128, u32> = Default::default();
    let mut cells: Vec<Cell> = Vec::new();
    let mut gid: Vec<(u32, usize)> = Vec::with_capacity(run.events.len());
    let mut slow: Vec<(Cell, usize)> = Vec::new();
    for (i, e) in run.events.iter().enumerate() {
        if let Some(c) = &e.cell {
            match pack(c) {
                Some(k) => {
                    let id = *ids.entry(k).or_insert_with(|| {
                        cells.push(*c);
                        cells.len() as u32 - 1
                    });
                    gid.push((id, i));
                }
                None => slow.push((*c, i)),
            }
        }
    }
    let mut count = vec![0usize; cells.len() + 1];
    for (g, _) in &gid {
        count[*g as usize + 1] += 1;
    }
    for k in 1..count.len() {
        count[k] += count[k - 1];
    }
    let mut order: Vec<usize> = vec![0; gid.len()];
    let mut next = count.clone();
    for (g, i) in &gid {
        order[next[*g as usize]] = *i;
        next[*g as usize] += 1;
    }
    let mut groups: Vec<(Cell, Range<usize>)> = cells
        .iter()
        .enumerate()
        .map(|(g, c)| (*c, count[g]..count[g + 1]))
        .collect();
    slow.sort_unstable();
    let mut i = 0;
    while i < slow.len() {
        let start = order.len();
        let mut j = i;
        while j < slow.len() && slow[j].0 == slow[i].0 {
            order.push(slow[j].1);
            j += 1;
        }
        groups.push((slow[i].0, start..order.len()));
        i = j;
    }
    (order, groups)
}

/// A cell as one 128-bit key, when its signal, owner and coordinates are small enough.
fn pack(c: &Cell) -> Option<u128> {
    if c.signal.index() >= 1 << 16 || c.owner >= 1 << 16 {
        return None;
    }
    let mut k: u128 = ((c.signal.index() as u128) << 112) | ((c.owner as u128) << 96);
    for (i, x) in c.index.iter().enumerate() {
        if !(0..1 << 22).contains(x) {
            return None;
        }
        k |= (*x as u128) << (74 - 22 * i);
    }
    Some(k | c.index.len() as u128)
}
