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
//! its own horizon (the least fixpoint above the start: start from the first
//! failing wait of each process, and move a horizon later while it is not
//! justified). A wait at a horizon cannot pass until `T` moves, so only the
//! transitions before it count.
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
/// current cell values, as (position, cell), flattened (process `r`'s are
/// `at[start[r]..start[r + 1]]`, by position).
struct Failing {
    at: Vec<(u32, u32)>,
    start: Vec<usize>,
}

impl Failing {
    /// The position of the failing wait at index `i` of `at`, if it is one of process
    /// `r`'s; else `end` (past its last one).
    fn pos(&self, r: usize, i: usize, end: u32) -> u32 {
        if i < self.start[r + 1] {
            self.at[i].0
        } else {
            end
        }
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
    /// Per process: the transitions that are a `>=` or `>` wait, as (position, cell,
    /// comparison, threshold), by position.
    waits: Vec<Vec<(u32, u32, CmpOp, i64)>>,
    /// Per process: (position, cell) of every `+= v > 0` and `= v`, by position (the
    /// operations that may let a `>=`/`>` wait pass).
    ups: Vec<Vec<(u32, u32)>>,
    /// One more than the largest cell index in the footprints.
    ncells: usize,
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
        let mut ups = Vec::with_capacity(trans.len());
        let mut ncells = 0usize;
        for tr in &trans {
            let mut up = Vec::new();
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
                    ncells = ncells.max(op.cell as usize + 1);
                    let e = idx.entry(op.cell).or_default();
                    if matches!(op.kind, OpKind::Raise | OpKind::Set)
                        && up.last() != Some(&(pos, op.cell))
                    {
                        up.push((pos, op.cell));
                    }
                    match op.kind {
                        OpKind::Raise => e.raise.push(pos),
                        OpKind::Lower => e.lower.push(pos),
                        OpKind::Set => e.set.push(pos),
                        OpKind::Wait(cmp, k) => {
                            e.wait.push(pos);
                            if matches!(cmp, CmpOp::Ge | CmpOp::Gt) {
                                w.push((pos, op.cell, cmp, k));
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
            ups.push(up);
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
            ups,
            ncells,
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
        };
        for (r, &from) in pos.iter().enumerate() {
            f.start.push(f.at.len());
            if matches!(m.proc_status(s, r), Status::Finished | Status::Fault) {
                continue;
            }
            let w = &self.waits[r];
            let first = w.partition_point(|x| x.0 < from);
            f.at.extend(w[first..].iter().filter_map(|&(p, cell, cmp, k)| {
                let c = cell as usize;
                (!m.wait_holds(c, cmp, m.cell_value(s, c), k)).then_some((p, cell))
            }));
        }
        f.start.push(f.at.len());
        f
    }

    /// Horizons of the processes outside the set `sc.in_t` (see the module docs), into
    /// `sc.h`: the exclusive bound of the positions each can reach before the set
    /// moves. The start is each process's first failing wait from its position (its
    /// position when it has finished, or when it is in the set); a horizon moves to the
    /// next failing wait while a process outside the set can raise or set its cell
    /// before its own horizon. That is the least fixpoint of a monotone step (moving a
    /// horizon only adds raises and sets), so the order in which horizons move does
    /// not change it. The cells that some process outside the set can raise or set
    /// before its horizon are kept marked as the horizons move, and a process whose
    /// horizon waits on an unmarked cell is parked on that cell until it is marked.
    fn horizons(&self, s: &State, m: &Machine, pos: &[u32], failing: &Failing, sc: &mut Scratch) {
        let np = pos.len();
        sc.next_stamp();
        sc.work.clear();
        for (r, &at) in pos.iter().enumerate() {
            sc.wait[r] = failing.start[r];
            sc.cursor[r] = sc.first_up[r];
            sc.h[r] = if sc.in_t[r] { at } else { sc.h0[r] };
        }
        for r in 0..np {
            if !sc.in_t[r] {
                self.mark_ups(r, sc);
            }
        }
        for r in 0..np {
            if !sc.in_t[r] && !self.done(s, m, r) {
                self.park_or_queue(r, failing, sc);
            }
        }
        while let Some(r) = sc.work.pop() {
            // The cell of its horizon's wait is marked: move to the next failing wait.
            sc.wait[r] += 1;
            sc.h[r] = failing.pos(r, sc.wait[r], self.trans[r].len() as u32);
            self.mark_ups(r, sc);
            self.park_or_queue(r, failing, sc);
        }
    }

    /// True when process `r` has finished or stopped on a runtime error.
    fn done(&self, s: &State, m: &Machine, r: usize) -> bool {
        matches!(m.proc_status(s, r), Status::Finished | Status::Fault)
    }

    /// Process `r` (outside the set, its horizon at failing wait `sc.wait[r]`): queued
    /// to move on when that wait's cell is marked, else parked on the cell; nothing
    /// when its horizon is past its last failing wait.
    fn park_or_queue(&self, r: usize, failing: &Failing, sc: &mut Scratch) {
        if sc.wait[r] >= failing.start[r + 1] {
            return;
        }
        let cell = failing.at[sc.wait[r]].1 as usize;
        if sc.raised[cell] == sc.stamp {
            sc.work.push(r);
        } else {
            if sc.parked_at[cell] != sc.stamp {
                sc.parked_at[cell] = sc.stamp;
                sc.parked[cell] = u32::MAX;
            }
            sc.next_parked[r] = sc.parked[cell];
            sc.parked[cell] = r as u32;
        }
    }

    /// Marks the cells process `r` raises or sets from its last marked position up to
    /// its horizon `sc.h[r]`, queueing the processes parked on a newly marked cell.
    fn mark_ups(&self, r: usize, sc: &mut Scratch) {
        let ups = &self.ups[r];
        let mut i = sc.cursor[r];
        while let Some(&(p, cell)) = ups.get(i) {
            if p >= sc.h[r] {
                break;
            }
            let c = cell as usize;
            if sc.raised[c] != sc.stamp {
                sc.raised[c] = sc.stamp;
                if sc.parked_at[c] == sc.stamp {
                    let mut q = sc.parked[c];
                    while q != u32::MAX {
                        sc.work.push(q as usize);
                        q = sc.next_parked[q as usize];
                    }
                    sc.parked[c] = u32::MAX;
                }
            }
            i += 1;
        }
        sc.cursor[r] = i;
    }

    /// Grows the stubborn set from process `seed` into `sc.in_t`; its number of enabled
    /// processes, or `None` as soon as it has `cap` of them (the set only grows, so it
    /// cannot end with fewer).
    ///
    /// What a round adds only grows with the horizons (a longer stretch of a process
    /// outside the set only adds operations that may conflict), so with a finite `cap`
    /// a round first looks at the horizons' starts: an enabled process added there is
    /// added at the horizons too, and may end the search before they are computed.
    #[allow(clippy::too_many_arguments)]
    fn closure(
        &self,
        s: &State,
        m: &Machine,
        seed: usize,
        pos: &[u32],
        failing: &Failing,
        enabled: &[bool],
        cap: usize,
        sc: &mut Scratch,
    ) -> Option<usize> {
        let np = pos.len();
        sc.in_t.fill(false);
        sc.in_t[seed] = true;
        let mut count = 1;
        if count >= cap {
            return None;
        }
        loop {
            if cap != usize::MAX {
                for (r, &at) in pos.iter().enumerate() {
                    sc.h[r] = if sc.in_t[r] { at } else { sc.h0[r] };
                }
                sc.add.fill(false);
                let mut probe = count;
                self.grow(s, m, pos, enabled, cap, &mut probe, sc)?;
            }
            self.horizons(s, m, pos, failing, sc);
            sc.add.fill(false);
            if !self.grow(s, m, pos, enabled, cap, &mut count, sc)? {
                return Some(count);
            }
            for r in 0..np {
                sc.in_t[r] |= sc.add[r];
            }
        }
    }

    /// One round of [`Reduction::closure`] at the horizons `sc.h`: marks in `sc.add`
    /// the processes outside the set `sc.in_t` that must join it, counting the enabled
    /// ones in `count`. Whether any joins; `None` as soon as `count` reaches `cap`.
    #[allow(clippy::too_many_arguments)]
    fn grow(
        &self,
        s: &State,
        m: &Machine,
        pos: &[u32],
        enabled: &[bool],
        cap: usize,
        count: &mut usize,
        sc: &mut Scratch,
    ) -> Option<bool> {
        let round = Round {
            pos,
            h: &sc.h,
            in_t: &sc.in_t,
        };
        let mut adder = Adder {
            add: &mut sc.add,
            enabled,
            cap,
            count,
            grew: false,
        };
        for q in (0..pos.len()).filter(|q| round.in_t[*q]) {
            let room = match m.proc_status(s, q) {
                Status::Run => self.grow_from(s, m, q, &round, &mut adder),
                Status::CallDone => {
                    // Relaunched only when its rank's other blocks end the call.
                    let rank = q / self.blocks;
                    (rank * self.blocks..(rank + 1) * self.blocks).all(|r| {
                        round.in_t[r]
                            || adder.add[r]
                            || m.proc_status(s, r) != Status::Run
                            || adder.push(r)
                    })
                }
                Status::Finished | Status::Fault => true,
            };
            if !room {
                return None;
            }
        }
        Some(adder.grew)
    }

    /// The processes running process `q`'s next transition (`q` in the set) adds to
    /// the set: those whose data it conflicts with, and those dependent with its
    /// signal operations (or, when `q` is blocked, those that can enable its wait).
    /// False once the set has `cap` enabled processes.
    fn grow_from(
        &self,
        s: &State,
        m: &Machine,
        q: usize,
        round: &Round,
        adder: &mut Adder,
    ) -> bool {
        let (pos, h, in_t) = (round.pos, round.h, round.in_t);
        let Some(fp) = self.trans[q].get(pos[q] as usize) else {
            return true;
        };
        // The host step runs in this step if every other block of the
        // rank has ended the call by then: already, or (outside the set)
        // before its horizon.
        let last = fp
            .ends_call
            .is_some_and(|call| self.host_possible(q / self.blocks, call, q, pos, h));
        let (host_data, host_ops): (&[DataAcc], &[DryOp]) = if last {
            (&fp.host_data, &fp.host_ops)
        } else {
            (&[], &[])
        };
        let enabled = adder.enabled[q];
        if enabled {
            for a in fp.data.iter().chain(host_data) {
                for &r in self.procs_on_mem(a.mem) {
                    if !in_t[r]
                        && !adder.add[r]
                        && r != q
                        && self.data_conflict_in(r, a, pos, h)
                        && !adder.push(r)
                    {
                        return false;
                    }
                }
            }
        }
        // A blocked process is held by its first operation (its wait).
        let held = if enabled { usize::MAX } else { 1 };
        let np = pos.len();
        for op in fp.op.iter().chain(host_ops).take(held) {
            // A process that never touches the cell is neither dependent
            // with the operation nor enables it, except that a blocked
            // process whose next step is not a wait holds every process.
            let every = !enabled && !matches!(op.kind, OpKind::Wait(..));
            let on_cell = self.procs_on_cell(op.cell);
            let n = if every { np } else { on_cell.len() };
            for r in (0..n).map(|i| if every { i } else { on_cell[i] }) {
                if in_t[r] || adder.add[r] {
                    continue;
                }
                let hit = if enabled {
                    self.dependent_in(r, op.cell, op.kind, pos[r], h[r])
                        && !self.commutes_with_raises(s, m, op, r, pos[r], h[r])
                } else if let OpKind::Wait(cmp, _) = op.kind {
                    self.enables_in(r, op.cell, cmp, pos[r], h[r])
                } else {
                    // A blocked process whose next step is not a wait: be safe.
                    true
                };
                if hit && !adder.push(r) {
                    return false;
                }
            }
        }
        true
    }

    /// The processes whose enabled transitions are expanded in `s`: a stubborn set
    /// with the fewest enabled processes, over every enabled seed (the first such
    /// seed in process order). `enabled[p]` says whether process `p` has an enabled
    /// transition. `None` when the footprints do not cover the state (the caller
    /// then expands everything).
    ///
    /// A first pass looks for a seed whose set has a single enabled process, giving
    /// up on a seed as soon as its set has two; only when there is none does a second
    /// pass grow each seed's set, giving up as soon as it is no smaller than the best
    /// one so far. Both pick the set the plain search (every seed grown fully, the
    /// first smallest kept) picks.
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
        let mut sc = SCRATCH.with_borrow_mut(std::mem::take);
        sc.reset(np, self.ncells);
        for (r, &at) in pos.iter().enumerate() {
            sc.first_up[r] = self.ups[r].partition_point(|(p, _)| *p < at);
            sc.h0[r] = if self.done(s, m, r) {
                at
            } else {
                failing.pos(r, failing.start[r], self.trans[r].len() as u32)
            };
        }
        let seeds = || (0..np).filter(|p| enabled[*p]);
        let mut best: Option<(usize, Vec<bool>)> = None;
        for seed in seeds() {
            if self.closure(s, m, seed, &pos, &failing, enabled, 2, &mut sc) == Some(1) {
                best = Some((1, sc.in_t.clone()));
                break;
            }
        }
        if best.is_none() {
            for seed in seeds() {
                let cap = best.as_ref().map_or(usize::MAX, |(b, _)| *b);
                if let Some(n) = self.closure(s, m, seed, &pos, &failing, enabled, cap, &mut sc) {
                    best = Some((n, sc.in_t.clone()));
                }
            }
        }
        SCRATCH.with_borrow_mut(|x| *x = sc);
        best.map(|(_, t)| t)
    }
}

thread_local! {
    /// The scratch space of [`Reduction::stubborn`], kept between states.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// What one round of [`Reduction::grow`] reads: the processes' positions, their
/// horizons and the set as it stands.
struct Round<'a> {
    pos: &'a [u32],
    h: &'a [u32],
    in_t: &'a [bool],
}

/// What one round of [`Reduction::grow`] adds to the set: marks in `add`, with the
/// count of enabled processes in the set and whether any was added.
struct Adder<'a> {
    add: &'a mut Vec<bool>,
    enabled: &'a [bool],
    cap: usize,
    count: &'a mut usize,
    grew: bool,
}

impl Adder<'_> {
    /// Adds `r` to the set; false once the set has `cap` enabled processes.
    fn push(&mut self, r: usize) -> bool {
        self.add[r] = true;
        self.grew = true;
        if self.enabled[r] {
            *self.count += 1;
        }
        *self.count < self.cap
    }
}
/// The working memory of one stubborn-set computation, reused across seeds, rounds
/// and states.
#[derive(Default)]
struct Scratch {
    /// The set being grown.
    in_t: Vec<bool>,
    /// What one round adds to it.
    add: Vec<bool>,
    /// Horizons ([`Reduction::horizons`]).
    h: Vec<u32>,
    /// Per process: where its horizon starts outside the set (its first failing wait,
    /// or its position when it has finished).
    h0: Vec<u32>,
    /// Per process outside the set: the index in `Failing::at` of the wait at its horizon.
    wait: Vec<usize>,
    /// Per process: the index in its raises and sets (`Reduction::ups`) of its first
    /// one at or after its position.
    first_up: Vec<usize>,
    /// Per process: the index of its first raise or set not marked yet.
    cursor: Vec<usize>,
    /// Per cell: `stamp` when a process outside the set raises or sets it before its
    /// horizon (in the current horizon computation).
    raised: Vec<u32>,
    /// Per cell: the first process parked on it (`u32::MAX`: none), valid when
    /// `parked_at` is `stamp`; the others follow through `next_parked`.
    parked: Vec<u32>,
    parked_at: Vec<u32>,
    /// Per process: the next process parked on the same cell.
    next_parked: Vec<u32>,
    /// Processes whose horizon must move.
    work: Vec<usize>,
    stamp: u32,
}

impl Scratch {
    /// Sized for `np` processes and `ncells` cells.
    fn reset(&mut self, np: usize, ncells: usize) {
        for v in [&mut self.in_t, &mut self.add] {
            v.clear();
            v.resize(np, false);
        }
        for v in [&mut self.h, &mut self.h0, &mut self.next_parked] {
            v.clear();
            v.resize(np, 0);
        }
        for v in [&mut self.first_up, &mut self.cursor, &mut self.wait] {
            v.clear();
            v.resize(np, 0);
        }
        for v in [&mut self.raised, &mut self.parked, &mut self.parked_at] {
            if v.len() < ncells {
                v.resize(ncells, 0);
            }
        }
    }

    /// A fresh stamp: no cell is marked, no process parked.
    fn next_stamp(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.raised.fill(0);
            self.parked_at.fill(0);
            self.stamp = 1;
        }
    }
}
