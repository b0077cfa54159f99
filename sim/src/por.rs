//! Partial-order reduction by stubborn sets (sequentially consistent mode).
//!
//! Every process runs a fixed sequence of transitions: control flow depends only
//! on parameters, loop variables and host arrays, never on cell values or data,
//! so one run in which every wait passes at once records each process's
//! *footprint* ([`Machine::footprints`]): for each of its transitions, the cells it
//! notifies or waits on and how. In a state, a process's position in its
//! footprint is [`crate::machine::Proc::steps`].
//!
//! Two transitions of different processes are *dependent* when they touch a
//! common cell, except two positive adds (they commute: values add, credit units
//! are kept in a canonical order, release clocks join) and two waits (a wait
//! changes only its own process and its own counted marks), or when they access
//! overlapping elements of one window instance and one of them writes. Two
//! further pairs commute in a state where a condition holds, checked there
//! ([`Machine::lower_precedes`]): a `-= v`, or a `>=`/`>` wait on a credit cell,
//! and a later positive add, when the units the first consumes or counts are
//! already in the cell and older than any unit the adder can still add (units
//! are consumed and counted oldest first; a wait acquires the clocks of the
//! units it counts). Swapping independent transitions leaves the same state, so
//! every finding (stale pass, lost credit, data race, wrong result, barrier
//! order, deadlock, nonzero exit) is a property of the Mazurkiewicz trace.
//!
//! In each state the explorer expands only the enabled transitions of a set `T`
//! of processes such that (Valmari's stubborn-set conditions):
//! - no process outside `T` can, before some process of `T` moves, execute a
//!   transition dependent with the next transition of an enabled process in `T`;
//! - no process outside `T` can, before some process of `T` moves, enable the
//!   next transition of a blocked process in `T`;
//! - `T` has an enabled process.
//!
//! What a process `r` outside `T` can do before `T` moves is bounded by its
//! *horizon*: the first of its future waits (`>=` or `>`) that fails on the
//! current cell value while no process outside `T` can raise that cell before
//! its own horizon (a greatest fixpoint: start from the first failing wait of
//! each process, and move a horizon later while it is not justified). A wait at a
//! horizon cannot pass until `T` moves, so only the transitions before it count.
//!
//! The state graph is acyclic (every transition advances a process, and every
//! process runs finitely many), so no cycle proviso is needed: every terminal
//! state (deadlock or the end of the last call) of the full graph is reached, and
//! every execution of the full graph has an equivalent one (the same
//! transitions, dependent ones in the same order) in the reduced graph, which
//! therefore meets every finding the full graph meets.

use crate::machine::{DataAcc, DryOp, Footprint, Machine, OpKind, State, Status};
use collc_spec::ir::CmpOp;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for small integer keys (cell and window indices): one multiply.
#[derive(Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | *b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = (x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type IndexMap<V> = HashMap<u32, V, BuildHasherDefault<IndexHasher>>;

/// Positions (transition indices) at which one process touches one cell, by kind.
#[derive(Debug, Default)]
struct CellOps {
    raise: Vec<u32>,
    lower: Vec<u32>,
    set: Vec<u32>,
    wait: Vec<u32>,
}

/// True when the sorted list has an element in `lo..hi`.
fn any_in(v: &[u32], lo: u32, hi: u32) -> bool {
    let i = v.partition_point(|x| *x < lo);
    i < v.len() && v[i] < hi
}

/// Per state: every process's `>=`/`>` waits from its position on that fail on the
/// current cell values, flattened (process `r`'s are `at[start[r]..start[r + 1]]`).
struct Failing {
    at: Vec<u32>,
    start: Vec<usize>,
    /// Each process's footprint length (what [`Failing::next`] returns past its last).
    end: Vec<u32>,
}

impl Failing {
    /// The first failing wait of process `r` at or after `from` (at or after its
    /// position), or the footprint's length if none.
    fn next(&self, r: usize, from: u32) -> u32 {
        let w = &self.at[self.start[r]..self.start[r + 1]];
        let i = w.partition_point(|x| *x < from);
        w.get(i).copied().unwrap_or(self.end[r])
    }
}

/// The footprints of every process and the indexes the stubborn-set computation needs.
pub struct Reduction {
    trans: Vec<Vec<Footprint>>,
    cells: Vec<IndexMap<CellOps>>,
    /// Per process: window instance -> (position, access), by position.
    data: Vec<IndexMap<Vec<(u32, DataAcc)>>>,
    /// Per process: window instance -> (position, call, access) of the host step
    /// its call-ending steps may run.
    host: Vec<IndexMap<Vec<(u32, u16, DataAcc)>>>,
    /// Per process: the position of the step ending each call.
    ends: Vec<Vec<u32>>,
    /// Positions of transitions that are a `>=` or `>` wait, per process.
    waits: Vec<Vec<u32>>,
    /// Per cell: the processes whose footprints touch it (ascending); a process not
    /// listed is never dependent with, nor enables, an operation on the cell.
    cell_procs: IndexMap<Vec<usize>>,
    /// Per window instance: the processes whose footprints (or host steps) access it.
    mem_procs: IndexMap<Vec<usize>>,
    blocks: usize,
}

impl Reduction {
    /// Computes the footprints (one run of at most `max_ops` transitions, ending
    /// by `deadline`); `None` when the run is too long (the search then expands
    /// every enabled transition, within its own budgets).
    pub fn new(m: &Machine, max_ops: u64, deadline: std::time::Instant) -> Option<Reduction> {
        let trans = m.footprints(max_ops, deadline)?;
        let mut cells = Vec::with_capacity(trans.len());
        let mut waits = Vec::with_capacity(trans.len());
        let mut data = Vec::with_capacity(trans.len());
        let mut host = Vec::with_capacity(trans.len());
        let mut ends = Vec::with_capacity(trans.len());
        for tr in &trans {
            let mut idx: IndexMap<CellOps> = IndexMap::default();
            let mut dx: IndexMap<Vec<(u32, DataAcc)>> = IndexMap::default();
            let mut hx: IndexMap<Vec<(u32, u16, DataAcc)>> = IndexMap::default();
            let mut call_ends: Vec<u32> = Vec::new();
            let mut w = Vec::new();
            for (pos, fp) in tr.iter().enumerate() {
                let pos = pos as u32;
                for a in &fp.data {
                    dx.entry(a.mem).or_default().push((pos, *a));
                }
                if let Some(call) = fp.ends_call {
                    for a in &fp.host_data {
                        hx.entry(a.mem).or_default().push((pos, call, *a));
                    }
                    if call_ends.len() <= call as usize {
                        call_ends.resize(call as usize + 1, u32::MAX);
                    }
                    call_ends[call as usize] = pos;
                }
                for op in fp.op.iter().chain(&fp.host_ops) {
                    let e = idx.entry(op.cell).or_default();
                    match op.kind {
                        OpKind::Raise => e.raise.push(pos),
                        OpKind::Lower => e.lower.push(pos),
                        OpKind::Set => e.set.push(pos),
                        OpKind::Wait(cmp, _) => {
                            e.wait.push(pos);
                            if matches!(cmp, CmpOp::Ge | CmpOp::Gt) {
                                w.push(pos);
                            }
                        }
                    }
                }
            }
            for e in idx.values_mut() {
                e.raise.dedup();
                e.lower.dedup();
                e.set.dedup();
                e.wait.dedup();
            }
            cells.push(idx);
            waits.push(w);
            data.push(dx);
            host.push(hx);
            ends.push(call_ends);
        }
        let mut cell_procs: IndexMap<Vec<usize>> = IndexMap::default();
        for (r, idx) in cells.iter().enumerate() {
            for cell in idx.keys() {
                cell_procs.entry(*cell).or_default().push(r);
            }
        }
        let mut mem_procs: IndexMap<Vec<usize>> = IndexMap::default();
        for (r, (dx, hx)) in data.iter().zip(&host).enumerate() {
            for mem in dx.keys().chain(hx.keys()) {
                let v = mem_procs.entry(*mem).or_default();
                if v.last() != Some(&r) {
                    v.push(r);
                }
            }
        }
        Some(Reduction {
            trans,
            cells,
            data,
            host,
            ends,
            waits,
            cell_procs,
            mem_procs,
            blocks: m.blocks(),
        })
    }

    /// Does process `r`, before its horizon, access window memory conflicting with
    /// `a` (overlapping elements of the same window instance, one a write)? Its
    /// host steps count only where every block of its rank can end that call
    /// before its own horizon (`h[b]` is a block's horizon, its position if in the set).
    fn data_conflict_in(&self, r: usize, a: &DataAcc, pos: &[u32], h: &[u32]) -> bool {
        let (lo, hi) = (pos[r], h[r]);
        let clash = |b: &DataAcc| (a.write || b.write) && b.lo < a.hi && a.lo < b.hi;
        if let Some(v) = self.data[r].get(&a.mem) {
            let start = v.partition_point(|(p, _)| *p < lo);
            if v[start..]
                .iter()
                .take_while(|(p, _)| *p < hi)
                .any(|(_, b)| clash(b))
            {
                return true;
            }
        }
        let Some(v) = self.host[r].get(&a.mem) else {
            return false;
        };
        let rank = r / self.blocks;
        let start = v.partition_point(|(p, _, _)| *p < lo);
        v[start..]
            .iter()
            .take_while(|(p, _, _)| *p < hi)
            .any(|(_, call, b)| clash(b) && self.host_possible(rank, *call, r, pos, h))
    }

    /// Can the host step ending `call` on `rank` run in the call-ending step of
    /// block `who` before the stubborn set moves? Every other block of the rank
    /// must have ended that call already or be able to end it before its horizon
    /// (`h[b]` is a block's horizon; for a block in the set, its position).
    fn host_possible(&self, rank: usize, call: u16, who: usize, pos: &[u32], h: &[u32]) -> bool {
        (rank * self.blocks..(rank + 1) * self.blocks)
            .filter(|b| *b != who)
            .all(|b| {
                self.ends[b]
                    .get(call as usize)
                    .is_none_or(|e| *e < h[b].max(pos[b]))
            })
    }

    /// The processes whose footprints touch `cell`.
    fn procs_on_cell(&self, cell: u32) -> &[usize] {
        self.cell_procs.get(&cell).map_or(&[], Vec::as_slice)
    }

    /// The processes whose footprints or host steps access window instance `mem`.
    fn procs_on_mem(&self, mem: u32) -> &[usize] {
        self.mem_procs.get(&mem).map_or(&[], Vec::as_slice)
    }

    /// Does process `r` touch `cell`, in positions `lo..hi`, in a way dependent with `kind`?
    fn dependent_in(&self, r: usize, cell: u32, kind: OpKind, lo: u32, hi: u32) -> bool {
        let Some(c) = self.cells[r].get(&cell) else {
            return false;
        };
        let writes = any_in(&c.lower, lo, hi) || any_in(&c.set, lo, hi);
        match kind {
            OpKind::Raise => writes || any_in(&c.wait, lo, hi),
            OpKind::Wait(..) => writes || any_in(&c.raise, lo, hi),
            OpKind::Lower | OpKind::Set => {
                writes || any_in(&c.raise, lo, hi) || any_in(&c.wait, lo, hi)
            }
        }
    }

    /// A `-=`, or a `>=`/`>` wait on a credit cell, commutes with the positive adds
    /// of process `r` in positions `lo..hi` when `r` does nothing else there that
    /// conflicts (another `-=` or a `Set`; for a `-=` also a wait), and the credit
    /// units it consumes or counts are already in the cell and older than any unit
    /// `r` can add. Units are consumed and counted oldest first, so either order
    /// touches the same units; a wait acquires the clocks of the units it counts,
    /// so it acquires the same clocks too.
    fn commutes_with_raises(
        &self,
        s: &State,
        m: &Machine,
        op: &DryOp,
        r: usize,
        lo: u32,
        hi: u32,
    ) -> bool {
        let need = match op.kind {
            OpKind::Lower => -op.amount,
            OpKind::Wait(CmpOp::Ge, k) if m.is_credit_cell(op.cell as usize) => k,
            OpKind::Wait(CmpOp::Gt, k) if m.is_credit_cell(op.cell as usize) => k + 1,
            _ => return false,
        };
        let Some(c) = self.cells[r].get(&op.cell) else {
            return true;
        };
        let writes = any_in(&c.lower, lo, hi) || any_in(&c.set, lo, hi);
        let conflict = match op.kind {
            OpKind::Lower => writes || any_in(&c.wait, lo, hi),
            _ => writes,
        };
        !conflict && m.lower_precedes(s, op.cell as usize, need, r)
    }

    /// Can process `r`, in positions `lo..hi`, change `cell` so that a wait with `cmp` may pass?
    fn enables_in(&self, r: usize, cell: u32, cmp: CmpOp, lo: u32, hi: u32) -> bool {
        let Some(c) = self.cells[r].get(&cell) else {
            return false;
        };
        match cmp {
            CmpOp::Ge | CmpOp::Gt => any_in(&c.raise, lo, hi) || any_in(&c.set, lo, hi),
            _ => any_in(&c.raise, lo, hi) || any_in(&c.set, lo, hi) || any_in(&c.lower, lo, hi),
        }
    }

    /// The `>=`/`>` waits of every process from its position `pos[r]` on that fail on
    /// the current values of their cells (none for a process that has finished).
    fn failing_waits(&self, s: &State, m: &Machine, pos: &[u32]) -> Failing {
        let np = pos.len();
        let mut f = Failing {
            at: Vec::new(),
            start: Vec::with_capacity(np + 1),
            end: self.trans.iter().map(|t| t.len() as u32).collect(),
        };
        for (r, &from) in pos.iter().enumerate() {
            f.start.push(f.at.len());
            if matches!(m.proc_status(s, r), Status::Finished | Status::Fault) {
                continue;
            }
            let w = &self.waits[r];
            let first = w.partition_point(|x| *x < from);
            f.at.extend(w[first..].iter().copied().filter(|&p| {
                matches!(
                    &self.trans[r][p as usize].op,
                    Some(DryOp {
                        cell,
                        kind: OpKind::Wait(cmp, k),
                        ..
                    }) if !m.wait_holds(*cell as usize, *cmp, m.cell_value(s, *cell as usize), *k)
                )
            }));
        }
        f.start.push(f.at.len());
        f
    }

    /// Horizons of the processes outside `t` (see the module docs): the
    /// exclusive bound of the positions each can reach before `t` moves.
    /// The start is each process's first failing wait from its position (its position
    /// when it has finished).
    fn horizons(
        &self,
        s: &State,
        m: &Machine,
        in_t: &[bool],
        pos: &[u32],
        failing: &Failing,
    ) -> Vec<u32> {
        let np = pos.len();
        let mut h: Vec<u32> = (0..np)
            .map(|r| {
                if in_t[r] {
                    pos[r]
                } else {
                    match m.proc_status(s, r) {
                        Status::Finished | Status::Fault => pos[r],
                        _ => failing.next(r, pos[r]),
                    }
                }
            })
            .collect();
        loop {
            let mut changed = false;
            for r in 0..np {
                if in_t[r] || (h[r] as usize) >= self.trans[r].len() || h[r] < pos[r] {
                    continue;
                }
                if matches!(m.proc_status(s, r), Status::Finished | Status::Fault) {
                    continue;
                }
                let Some(DryOp {
                    cell,
                    kind: OpKind::Wait(cmp, _),
                    ..
                }) = self.trans[r][h[r] as usize].op
                else {
                    continue;
                };
                let justified = self
                    .procs_on_cell(cell)
                    .iter()
                    .filter(|q| !in_t[**q])
                    .all(|&q| !self.enables_in(q, cell, cmp, pos[q], h[q].max(pos[q])));
                if !justified {
                    h[r] = failing.next(r, h[r] + 1);
                    changed = true;
                }
            }
            if !changed {
                return h;
            }
        }
    }

    /// The processes of the stubborn set grown from process `seed`.
    fn closure(
        &self,
        s: &State,
        m: &Machine,
        seed: usize,
        pos: &[u32],
        failing: &Failing,
        enabled: &[bool],
    ) -> Vec<bool> {
        let np = pos.len();
        let mut in_t = vec![false; np];
        in_t[seed] = true;
        loop {
            let h = self.horizons(s, m, &in_t, pos, failing);
            let mut add = vec![false; np];
            for q in (0..np).filter(|q| in_t[*q]) {
                match m.proc_status(s, q) {
                    Status::Run => {
                        let Some(fp) = self.trans[q].get(pos[q] as usize) else {
                            continue;
                        };
                        // The host step runs in this step if every other block of the
                        // rank has ended the call by then: already, or (outside the set)
                        // before its horizon.
                        let last = fp.ends_call.is_some_and(|call| {
                            self.host_possible(q / self.blocks, call, q, pos, &h)
                        });
                        let (host_data, host_ops): (&[DataAcc], &[DryOp]) = if last {
                            (&fp.host_data, &fp.host_ops)
                        } else {
                            (&[], &[])
                        };
                        if enabled[q] {
                            for a in fp.data.iter().chain(host_data) {
                                for &r in self.procs_on_mem(a.mem) {
                                    if !in_t[r]
                                        && !add[r]
                                        && r != q
                                        && self.data_conflict_in(r, a, pos, &h)
                                    {
                                        add[r] = true;
                                    }
                                }
                            }
                        }
                        // A blocked process is held by its first operation (its wait).
                        let held = if enabled[q] { usize::MAX } else { 1 };
                        for op in fp.op.iter().chain(host_ops).take(held) {
                            // A process that never touches the cell is neither dependent
                            // with the operation nor enables it, except that a blocked
                            // process whose next step is not a wait holds every process.
                            let every = !enabled[q] && !matches!(op.kind, OpKind::Wait(..));
                            let all: Vec<usize>;
                            let rs: &[usize] = if every {
                                all = (0..np).collect();
                                &all
                            } else {
                                self.procs_on_cell(op.cell)
                            };
                            for &r in rs {
                                if in_t[r] || add[r] {
                                    continue;
                                }
                                let hit = if enabled[q] {
                                    self.dependent_in(r, op.cell, op.kind, pos[r], h[r])
                                        && !self.commutes_with_raises(s, m, op, r, pos[r], h[r])
                                } else if let OpKind::Wait(cmp, _) = op.kind {
                                    self.enables_in(r, op.cell, cmp, pos[r], h[r])
                                } else {
                                    // A blocked process whose next step is not a wait: be safe.
                                    true
                                };
                                if hit {
                                    add[r] = true;
                                }
                            }
                        }
                    }
                    Status::CallDone => {
                        // Relaunched only when its rank's other blocks end the call.
                        let rank = q / self.blocks;
                        for r in rank * self.blocks..(rank + 1) * self.blocks {
                            if !in_t[r] && m.proc_status(s, r) == Status::Run {
                                add[r] = true;
                            }
                        }
                    }
                    Status::Finished | Status::Fault => {}
                }
            }
            if !add.iter().any(|a| *a) {
                return in_t;
            }
            for r in 0..np {
                in_t[r] |= add[r];
            }
        }
    }

    /// The processes whose enabled transitions are expanded in `s`: a stubborn set
    /// with the fewest enabled processes, over every enabled seed. `enabled[p]`
    /// says whether process `p` has an enabled transition. `None` when the
    /// footprints do not cover the state (the caller then expands everything).
    pub fn stubborn(&self, s: &State, m: &Machine, enabled: &[bool]) -> Option<Vec<bool>> {
        let np = enabled.len();
        let pos: Vec<u32> = (0..np).map(|p| s.procs[p].steps).collect();
        let covered = pos
            .iter()
            .zip(&self.trans)
            .enumerate()
            .all(|(p, (at, tr))| m.proc_status(s, p) != Status::Run || (*at as usize) < tr.len());
        if !covered {
            return None;
        }
        let failing = self.failing_waits(s, m, &pos);
        let mut best: Option<(usize, Vec<bool>)> = None;
        for seed in (0..np).filter(|p| enabled[*p]) {
            let t = self.closure(s, m, seed, &pos, &failing, enabled);
            let n = (0..np).filter(|p| t[*p] && enabled[*p]).count();
            if best.as_ref().is_none_or(|(b, _)| n < *b) {
                let done = n == 1;
                best = Some((n, t));
                if done {
                    break;
                }
            }
        }
        best.map(|(_, t)| t)
    }
}
