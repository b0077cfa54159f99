//! The operational semantics: one state of the whole system (every process's
//! continuation, every cell with its credit provenance, every window with its
//! data provenance and access history), the actions enabled in it, and what
//! each action does. Both the simulator's schedulers and the bounded model
//! checker drive this one machine.
//!
//! See the crate documentation for the model; the comments here say how it is
//! implemented.

use crate::code::{CExpr, CRegion, Code, Ctx, Instr, LoopKind};
use crate::report::{EvKind, Event, Finding};
use crate::value::{relocate, zip, Contrib, Piece, Segs, Val, INITIAL};
use collc_spec::ir::*;
use collc_spec::meaning;
use std::collections::HashMap;
use std::fmt::Write as _;

mod lifetime;

/// Memory model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Memory {
    /// Sequentially consistent: every access is visible to all at once.
    Sc,
    /// Window writes are buffered until a fence (a notify may overtake them), and
    /// cell reads may return a stale cached value until invalidated.
    Relaxed,
}

/// A vector clock, one entry per process.
pub type Clock = Vec<u32>;

fn join(a: &mut Clock, b: &Clock) {
    for (x, y) in a.iter_mut().zip(b) {
        if *y > *x {
            *x = *y;
        }
    }
}

/// One credit unit in a cell: who added how much, in which call, from which statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unit {
    /// The writer's call (0-based).
    pub call: u16,
    /// The writing process.
    pub writer: u16,
    /// The writer's notify counter within the call (orders its units).
    pub seq: u32,
    /// The notify statement.
    pub stmt: u32,
    /// Credits (negative: a debt left by an over-subtraction).
    pub amount: i64,
    /// Processes whose passing waits counted this unit (bit per process).
    pub counted: u128,
    /// The writer's vector clock at the notify: what a wait counting this unit acquires.
    pub clock: Clock,
}

impl Unit {
    fn key(&self) -> (u16, u16, u32) {
        (self.call, self.writer, self.seq)
    }
}

/// Who last wrote a value signal's cell (`as value`): its provenance, as credit
/// units are for counters. A read that observes a value of another call is a
/// `sim::stale-value`; a `per call` cell read before its call wrote it is a
/// `sim::uninit-read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The writer's call (0-based).
    pub call: u16,
    /// The writing process.
    pub writer: u16,
    /// The notify statement.
    pub stmt: u32,
}

/// An earlier version of a cell (relaxed mode keeps the ones a cache may still hold).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OldCell {
    version: u32,
    value: i64,
    units: Vec<Unit>,
    clock: Clock,
    origin: Option<Origin>,
}

/// A signal cell.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cell {
    /// Current value.
    pub value: i64,
    /// Credit units (sorted by call, writer, sequence); empty for value signals.
    pub units: Vec<Unit>,
    /// Release clock: the join of every write since the last `Set`.
    pub clock: Clock,
    /// Number of writes so far.
    pub version: u32,
    /// Value signals: the last write (none before the first write to this instance).
    pub origin: Option<Origin>,
    history: Vec<OldCell>,
}

/// One recorded window access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Acc {
    /// The process.
    pub proc: u16,
    /// Its epoch (own clock entry) at the access.
    pub epoch: u32,
    /// Its call.
    pub call: u16,
    /// The statement, or [`STAGE`] / [`CONSUME`].
    pub what: u32,
}

/// `Acc::what` of the host staging the next call's input.
pub const STAGE: u32 = u32::MAX;
/// `Acc::what` of the host reading a call's output.
pub const CONSUME: u32 = u32::MAX - 1;

/// Access history of a run of elements (FastTrack style: last write, reads since).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AccRec {
    write: Option<Acc>,
    reads: Vec<Acc>,
}

impl Piece for AccRec {
    fn shifted(&self, _: i64) -> Self {
        self.clone()
    }
}

/// A window on one rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WinMem {
    /// Contents.
    pub vals: Segs<Val>,
    acc: Segs<AccRec>,
}

/// A process's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Running its call.
    Run,
    /// Finished its call; waits for the other blocks of its rank.
    CallDone,
    /// Finished every call.
    Finished,
    /// Stopped by a runtime error.
    Fault,
}

/// A window write not yet visible (relaxed mode).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pending {
    rank: u16,
    win: u16,
    lo: u64,
    pieces: Vec<(u64, Val)>,
    stmt: u32,
}

/// One process: a block of a rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Proc {
    /// Lifecycle.
    pub status: Status,
    /// Program counter into [`Code::instrs`].
    pub pc: u32,
    /// Current call (0-based).
    pub call: u16,
    slots: Vec<i64>,
    /// Vector clock.
    pub clock: Clock,
    /// A notify released the current epoch: the next recorded access or entry starts a new one.
    bump: bool,
    seq: u32,
    /// Own epoch at the entry of each call.
    tiles: Vec<Segs<Val>>,
    pending: Vec<Pending>,
    /// Cached cells (relaxed): (cell index, oldest version a read may return).
    cache: Vec<(u32, u32)>,
    /// Scheduler transitions this process has taken (over all calls): its position in
    /// the footprint the partial-order reduction computes ([`crate::por`]). A function
    /// of the rest of its local state, so it never splits states.
    pub steps: u32,
    /// Barrier semantics: the epoch at which this process entered each call (0: not
    /// yet, or no longer needed by any check).
    entries: Vec<u32>,
    /// Sticky polling (relaxed + `sticky_poll`): the failing value a poll of the pending
    /// wait cached and keeps re-reading; the wait can then never pass.
    pin: Option<i64>,
}

/// The whole system.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct State {
    /// Processes, rank-major (`rank * blocks + block`).
    pub procs: Vec<Proc>,
    /// Cells, rank-major.
    pub cells: Vec<Cell>,
    /// Windows, rank-major (`rank * windows + w`).
    pub mem: Vec<WinMem>,
}

/// An action of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Action {
    /// Run process `p` to its next notify or wait (its pending wait reads the current value).
    Run(u16),
    /// Process `p`'s pending wait passes on the oldest stale value its cache may return (relaxed).
    Stale(u16),
    /// The oldest buffered window write of process `p` becomes visible (relaxed).
    Drain(u16),
    /// Process `p`'s blocked wait polls, caches the current (failing) value and from then on
    /// re-reads only that cached line (relaxed with sticky polling).
    Pin(u16),
}

/// How a transition touches a cell (its footprint, for the partial-order reduction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// `+= v` with v > 0.
    Raise,
    /// `-= v` (or `+= v` with v <= 0).
    Lower,
    /// `= v`.
    Set,
    /// A wait with its comparison and threshold.
    Wait(CmpOp, i64),
}

/// One notify or wait of a transition: the cell and how it is touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DryOp {
    /// Cell index (rank-major).
    pub cell: u32,
    /// The operation.
    pub kind: OpKind,
    /// The notify's value (0 for a wait).
    pub amount: i64,
}

/// One transition's footprint: its notify or wait, and its window accesses.
#[derive(Debug, Clone, Default)]
pub struct Footprint {
    /// The notify or wait the step starts with (none if it faulted there).
    pub op: Option<DryOp>,
    /// Window accesses of the data movement.
    pub data: Vec<DataAcc>,
    /// A call-ending step: what the host step does if this block ends the call
    /// last (window accesses, and cells the host reads as never-blocking waits).
    pub host_data: Vec<DataAcc>,
    /// See `host_data`.
    pub host_ops: Vec<DryOp>,
    /// The call this step ends, if it ends one.
    pub ends_call: Option<u16>,
}

/// What a step produced besides the new state.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Violations found during the step.
    pub findings: Vec<Finding>,
    /// Trace events (only when tracing).
    pub events: Option<Vec<Event>>,
    /// Set when a budget stops the run.
    pub stop: Option<String>,
    /// Instructions executed.
    pub instrs: u64,
    /// Window accesses made (recorded only when asked for: the footprint run).
    pub accesses: Option<Vec<DataAcc>>,
    /// Index into `accesses` where a host step (end of a rank's call) began.
    pub host_from: Option<usize>,
    /// Cells the host read (recorded with `accesses`): all_to_all_v's received counts.
    pub cell_reads: Vec<u32>,
}

/// One window access of a transition (its data footprint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataAcc {
    /// Window instance (index into the state's windows: rank, window, call instance).
    pub mem: u32,
    /// First element.
    pub lo: u64,
    /// One past the last element.
    pub hi: u64,
    /// A write (else a read).
    pub write: bool,
}

/// Limits that keep one run finite.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most iterations one loop may run.
    pub max_trip: i64,
    /// The most iterations a nest of loops may run (product of the trips).
    pub max_nest: u64,
}

/// The machine: a compiled protocol, its run configuration and its static data.
pub struct Machine<'a> {
    /// The protocol.
    pub p: &'a Protocol,
    /// Its compiled form.
    pub code: Code,
    /// Back-to-back calls.
    pub calls: usize,
    /// Memory model.
    pub memory: Memory,
    /// Loop limits.
    pub limits: Limits,
    /// Sticky polling (relaxed only): a blocked wait's poll may cache the failing value and
    /// keep re-reading it, since the process cannot invalidate the line while blocked.
    pub sticky_poll: bool,
    /// Host arrays: `arrays[call][rank][array]`, flattened.
    arrays: Vec<Vec<Vec<Vec<i64>>>>,
    nwin: usize,
    /// Instances of each window per rank: the calls if some window is `per call`, else 1
    /// (a `reused` window always uses instance 0).
    win_inst: usize,
    /// Instances of the signal buffer: the calls if some value signal is `per call`, else 1
    /// (credit and `reused` signals always use instance 0).
    cell_inst: usize,
}

/// One expected piece of a rank's output: (window, lo, hi, value relative to lo, or `None`
/// for elements read but not compared).
type Expected = (WindowId, u64, u64, Option<Val>);

struct Loc {
    rank: usize,
    buf: BufferRef,
    lo: u64,
    hi: u64,
}

fn fmt_call(c: u16) -> usize {
    c as usize + 1
}

impl<'a> Machine<'a> {
    /// Builds a machine.
    pub fn new(p: &'a Protocol, code: Code, calls: usize, memory: Memory, limits: Limits) -> Self {
        let mut arrays = Vec::new();
        for call in 0..calls {
            let mut per_rank = Vec::new();
            for r in 0..code.world {
                let mut per_arr = Vec::new();
                for (a, arr) in p.arrays.iter().enumerate() {
                    let n: i64 = code.array_dims[a].iter().product();
                    let (lo, hi) = arr.domain;
                    let span = (hi - lo + 1).max(1);
                    per_arr.push(
                        (0..n)
                            .map(|i| lo + (r as i64 + i + call as i64).rem_euclid(span))
                            .collect(),
                    );
                }
                per_rank.push(per_arr);
            }
            arrays.push(per_rank);
        }
        let nwin = p.windows.len();
        let per_call_win = (0..nwin).any(|w| p.window_per_call(w));
        let per_call_sig = (0..p.signals.len()).any(|s| p.signal_per_call(s));
        Machine {
            p,
            code,
            calls,
            memory,
            limits,
            sticky_poll: false,
            arrays,
            nwin,
            win_inst: if per_call_win { calls.max(1) } else { 1 },
            cell_inst: if per_call_sig { calls.max(1) } else { 1 },
        }
    }

    /// Index into `State::mem` of rank `rank`'s window `w` as used in `call`: a `per
    /// call` window has an instance per call, a `reused` one is one buffer for every call.
    fn mi(&self, rank: usize, w: usize, call: u16) -> usize {
        let inst = if self.p.window_per_call(w) {
            call as usize
        } else {
            0
        };
        (rank * self.nwin + w) * self.win_inst + inst
    }

    /// The rank and window of an index into `State::mem`.
    fn mem_owner(&self, m: usize) -> (usize, WindowId) {
        let per_rank = (self.nwin * self.win_inst).max(1);
        (m / per_rank, (m / self.win_inst.max(1)) % self.nwin.max(1))
    }

    /// Number of processes.
    pub fn nprocs(&self) -> usize {
        self.code.nprocs()
    }

    /// Rank and block of a process.
    pub fn who(&self, proc: usize) -> (usize, usize) {
        (proc / self.code.blocks, proc % self.code.blocks)
    }

    /// A process's name: `rank 1` or `rank 1 block 0`.
    pub fn proc_name(&self, proc: usize) -> String {
        let (r, b) = self.who(proc);
        if self.code.blocks > 1 {
            format!("rank {r} block {b}")
        } else {
            format!("rank {r}")
        }
    }

    fn cell_name(&self, idx: usize) -> String {
        let cpr = self.code.cells_per_rank.max(1);
        let world = self.code.world.max(1);
        let (inst, rank, local) = (idx / cpr / world, (idx / cpr) % world, idx % cpr);
        let sig = self
            .code
            .signal_base
            .iter()
            .rposition(|b| *b <= local)
            .unwrap_or(0);
        let mut rem = local - self.code.signal_base[sig];
        let dims = &self.code.signal_dims[sig];
        let mut idxs = vec![0; dims.len()];
        for k in (0..dims.len()).rev() {
            let d = dims[k].max(1) as usize;
            idxs[k] = rem % d;
            rem /= d;
        }
        let mut s = format!("rank {rank}'s {}", self.p.signals[sig].name);
        for i in idxs {
            let _ = write!(s, "[{i}]");
        }
        if self.p.signal_per_call(sig) {
            let _ = write!(s, " (call {}'s instance)", inst + 1);
        }
        s
    }

    fn stmt_desc(&self, what: u32) -> String {
        match what {
            STAGE => "staging of its input".to_string(),
            CONSUME => "read of its output after the call".to_string(),
            s => format!("`{}`", self.code.stmts[s as usize].text),
        }
    }

    fn stmt_span(&self, what: u32) -> Option<collc_grammar::Span> {
        self.code.stmts.get(what as usize).map(|s| s.span)
    }

    fn is_credit(&self, cell: usize) -> bool {
        let local = cell % self.code.cells_per_rank.max(1);
        let sig = self
            .code
            .signal_base
            .iter()
            .rposition(|b| *b <= local)
            .unwrap_or(0);
        self.p.signals.get(sig).map(|s| s.kind) == Some(SignalKind::Credit)
    }

    // ---------------------------------------------------------------- setup

    /// The initial state (call 1's inputs staged, every process run to its first notify or wait).
    pub fn initial(&self, out: &mut Outcome) -> State {
        let np = self.nprocs();
        let procs = (0..np)
            .map(|_| Proc {
                status: Status::Run,
                pc: 0,
                call: 0,
                slots: vec![0; self.code.nslots],
                clock: vec![0; np],
                bump: false,
                seq: 0,
                tiles: Vec::new(),
                pending: Vec::new(),
                cache: Vec::new(),
                steps: 0,
                entries: Vec::new(),
                pin: None,
            })
            .collect();
        let cells = (0..self.code.world * self.code.cells_per_rank * self.cell_inst)
            .map(|_| Cell {
                value: 0,
                units: Vec::new(),
                clock: vec![0; np],
                version: 0,
                origin: None,
                history: Vec::new(),
            })
            .collect();
        let mut mem = Vec::new();
        for r in 0..self.code.world {
            for w in 0..self.nwin * self.win_inst {
                let len = self.code.window_len(w / self.win_inst);
                mem.push(WinMem {
                    vals: Segs::filled(
                        len,
                        Val::one(Contrib {
                            rank: r as u16,
                            win: INITIAL,
                            call: 0,
                            shift: 0,
                        }),
                    ),
                    acc: Segs::filled(len, AccRec::default()),
                });
            }
        }
        let mut s = State { procs, cells, mem };
        for r in 0..self.code.world {
            let clock = vec![0; np];
            self.stage(&mut s, r, 0, out);
            for b in 0..self.code.blocks {
                self.start_call(&mut s, r * self.code.blocks + b, 0, &clock, out);
            }
        }
        for p in 0..np {
            self.run_invisible(&mut s, p, out);
        }
        s
    }

    fn start_call(&self, s: &mut State, p: usize, call: u16, clock: &Clock, out: &mut Outcome) {
        let (r, b) = self.who(p);
        let pr = &mut s.procs[p];
        pr.status = Status::Run;
        pr.pc = 0;
        pr.call = call;
        pr.slots.iter_mut().for_each(|x| *x = 0);
        pr.slots[self.code.me_slot as usize] = r as i64;
        if let Some(bs) = self.code.blk_slot {
            pr.slots[bs as usize] = b as i64;
        }
        pr.clock = clock.clone();
        pr.seq = 0;
        if matches!(self.p.semantics, Semantics::Barrier) && call > 0 {
            // The entry is an event of its own (a fresh epoch), so that a peer's exit
            // can be checked to be ordered after it.
            pr.bump = true;
            let e = Self::epoch(pr, p);
            if pr.entries.len() <= call as usize {
                pr.entries.resize(call as usize + 1, 0);
            }
            pr.entries[call as usize] = e;
        }
        pr.tiles = (0..self.p.tiles.len())
            .map(|t| Segs::filled(self.code.tile_len(t), Val::garbage(r, call as usize)))
            .collect();
        self.event(out, p, call, None, || {
            (EvKind::CallStart, format!("enters call {}", fmt_call(call)))
        });
    }

    // ------------------------------------------------------------ enabling

    /// Index into `State::cells` of a cell of rank `rank`'s signal, as used in
    /// `call`: a `per call` value signal (data, like pypto's separately allocated
    /// `recv_counts` buffer) has an instance per call; credit signals and `reused`
    /// value signals are the one reused signal buffer.
    fn cell_index(
        &self,
        rank: usize,
        signal: SignalId,
        index: &[CExpr],
        ctx: &Ctx,
        call: u16,
    ) -> Result<usize, String> {
        let dims = &self.code.signal_dims[signal];
        let mut flat = 0usize;
        for (k, x) in index.iter().enumerate() {
            let i = ctx.eval(x)?;
            let d = dims[k];
            if i < 0 || i >= d {
                return Err(format!(
                    "index {i} is outside `{}`'s dimension {k} of size {d}",
                    self.p.signals[signal].name
                ));
            }
            flat = flat * d as usize + i as usize;
        }
        Ok(self.cell_at(rank, signal, flat, call))
    }

    fn cell_at(&self, rank: usize, signal: SignalId, flat: usize, call: u16) -> usize {
        let inst = if self.p.signal_per_call(signal) {
            call as usize
        } else {
            0
        };
        (inst * self.code.world + rank) * self.code.cells_per_rank
            + self.code.signal_base[signal]
            + flat
    }

    fn ctx<'s>(&'s self, s: &'s State, p: usize) -> Ctx<'s> {
        let pr = &s.procs[p];
        let (r, _) = self.who(p);
        let call = (pr.call as usize).min(self.calls.saturating_sub(1));
        Ctx {
            slots: &pr.slots,
            arrays: &self.arrays[call][r],
            array_dims: &self.code.array_dims,
        }
    }

    /// The wait a running process is blocked at or about to pass: (cell, cmp, threshold).
    fn pending_wait(&self, s: &State, p: usize) -> Option<Result<(usize, CmpOp, i64), String>> {
        let pr = &s.procs[p];
        if pr.status != Status::Run {
            return None;
        }
        if let Instr::Wait {
            signal,
            index,
            cmp,
            threshold,
            ..
        } = &self.code.instrs[pr.pc as usize]
        {
            let ctx = self.ctx(s, p);
            let (r, _) = self.who(p);
            Some((|| {
                let c = self.cell_index(r, *signal, index, &ctx, s.procs[p].call)?;
                let k = ctx.eval(threshold)?;
                Ok((c, *cmp, k))
            })())
        } else {
            None
        }
    }

    fn cached_floor(&self, s: &State, p: usize, cell: usize) -> Option<u32> {
        s.procs[p]
            .cache
            .iter()
            .find(|(c, _)| *c as usize == cell)
            .map(|x| x.1)
    }

    /// The oldest cached stale version (not the current one) a wait may pass on.
    fn stale_choice(&self, s: &State, p: usize, cell: usize, cmp: CmpOp, k: i64) -> Option<usize> {
        let floor = self.cached_floor(s, p, cell)?;
        let c = &s.cells[cell];
        c.history
            .iter()
            .position(|h| h.version >= floor && cmp.holds(h.value, k) && h.value != c.value)
    }

    /// Every enabled action, in a fixed order.
    pub fn enabled(&self, s: &State) -> Vec<Action> {
        let mut v = Vec::new();
        for p in 0..s.procs.len() {
            if s.procs[p].status != Status::Run {
                continue;
            }
            match self.pending_wait(s, p) {
                None => v.push(Action::Run(p as u16)),
                Some(Err(_)) => v.push(Action::Run(p as u16)),
                Some(Ok((cell, cmp, k))) => {
                    if s.procs[p].pin.is_some() {
                        // The poll re-reads its cached failing value: nothing can move it.
                        continue;
                    }
                    if cmp.holds(s.cells[cell].value, k) {
                        v.push(Action::Run(p as u16));
                    } else if self.sticky() {
                        v.push(Action::Pin(p as u16));
                    }
                    if self.memory == Memory::Relaxed
                        && self.stale_choice(s, p, cell, cmp, k).is_some()
                    {
                        v.push(Action::Stale(p as u16));
                    }
                }
            }
        }
        // Pinning matters only if some cell may still change: when no process can run,
        // the state is a deadlock as it stands.
        if !v
            .iter()
            .any(|a| matches!(a, Action::Run(_) | Action::Stale(_)))
        {
            v.retain(|a| !matches!(a, Action::Pin(_)));
        }
        if self.memory == Memory::Relaxed {
            for (p, pr) in s.procs.iter().enumerate() {
                if !pr.pending.is_empty() {
                    v.push(Action::Drain(p as u16));
                }
            }
        }
        v
    }

    /// Sticky polling is in effect (it needs the relaxed model's caches).
    pub fn sticky(&self) -> bool {
        self.sticky_poll && self.memory == Memory::Relaxed
    }

    /// True when every process finished every call.
    pub fn all_finished(&self, s: &State) -> bool {
        s.procs.iter().all(|p| p.status == Status::Finished)
    }

    /// True when some process stopped on a runtime error.
    pub fn faulted(&self, s: &State) -> bool {
        s.procs.iter().any(|p| p.status == Status::Fault)
    }

    /// True when no process can move (only buffered writes may still drain).
    pub fn stuck(&self, enabled: &[Action]) -> bool {
        !enabled.iter().any(|a| !matches!(a, Action::Drain(_)))
    }

    /// Checks a terminal state: a deadlock if some process has not finished, else
    /// every credit cell must be zero.
    pub fn terminal(&self, s: &State, out: &mut Outcome) {
        if self.faulted(s) {
            return;
        }
        if !self.all_finished(s) {
            let mut lines = Vec::new();
            let mut span = None;
            let mut pinned_any = false;
            for p in 0..s.procs.len() {
                let pr = &s.procs[p];
                match self.pending_wait(s, p) {
                    Some(Ok((cell, cmp, k))) => {
                        let c = &s.cells[cell];
                        let stmt = self.instr_stmt(pr.pc);
                        span = span.or(stmt.and_then(|x| self.stmt_span(x)));
                        let held = match pr.pin {
                            Some(v) => {
                                pinned_any = true;
                                format!(
                                    "; it is blocked on a stale cached value {v} (sticky polling: the poll keeps re-reading its cached line), the cell itself holds {}",
                                    c.value
                                )
                            }
                            None => format!("; the cell holds {}", c.value),
                        };
                        lines.push(format!(
                            "{} (call {}) waits at {} for {} {} {k}{held}{}",
                            self.proc_name(p),
                            fmt_call(pr.call),
                            stmt.map(|x| self.stmt_desc(x)).unwrap_or_default(),
                            self.cell_name(cell),
                            cmp.as_str(),
                            self.units_desc(c)
                        ));
                        self.event(out, p, pr.call, stmt, || {
                            (
                                EvKind::WaitBlocked {
                                    cell: self.cell_name(cell),
                                    threshold: k,
                                    value: c.value,
                                },
                                match pr.pin {
                                    Some(v) => format!(
                                        "blocked forever: {} {} {k}, re-reads a stale cached {v} (the cell holds {})",
                                        self.cell_name(cell),
                                        cmp.as_str(),
                                        c.value
                                    ),
                                    None => format!(
                                        "blocked forever: {} {} {k}, holds {}",
                                        self.cell_name(cell),
                                        cmp.as_str(),
                                        c.value
                                    ),
                                },
                            )
                        });
                    }
                    _ => {
                        let what = match pr.status {
                            Status::Finished => "has finished every call".to_string(),
                            Status::CallDone => format!(
                                "finished call {} and waits for its rank's other blocks",
                                fmt_call(pr.call)
                            ),
                            _ => "is stopped".to_string(),
                        };
                        lines.push(format!("{} {what}", self.proc_name(p)));
                    }
                }
            }
            let mut f = Finding::new(
                "sim::deadlock",
                if pinned_any {
                    "deadlock: every live process waits for a cell that can no longer change, or is blocked on a stale cached value it cannot invalidate while it polls"
                } else {
                    "deadlock: every live process waits for a cell that can no longer change"
                }
                .to_string(),
                span,
            );
            f.notes = lines;
            self.mark_last(out, "sim::deadlock");
            out.findings.push(f);
            return;
        }
        let mut bad = Vec::new();
        let mut span = None;
        for (i, c) in s.cells.iter().enumerate() {
            if c.value != 0 && self.is_credit(i) {
                if let Some(u) = c.units.first() {
                    span = span.or(self.stmt_span(u.stmt));
                }
                bad.push(format!(
                    "{} = {}{}",
                    self.cell_name(i),
                    c.value,
                    self.units_desc(c)
                ));
            }
        }
        if !bad.is_empty() {
            let mut f = Finding::new(
                "sim::nonzero-exit",
                format!(
                    "after {} call(s) {} credit cell(s) are not zero; the next call would start from stale credits",
                    self.calls,
                    bad.len()
                ),
                span,
            );
            f.notes = bad;
            out.findings.push(f);
        }
    }

    fn units_desc(&self, c: &Cell) -> String {
        if c.units.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = c
            .units
            .iter()
            .map(|u| {
                format!(
                    "{} {:+} from {} (call {}, `{}`)",
                    if u.amount >= 0 { "credit" } else { "debt" },
                    u.amount,
                    self.proc_name(u.writer as usize),
                    fmt_call(u.call),
                    self.code.stmts[u.stmt as usize].text
                )
            })
            .collect();
        format!(" [{}]", parts.join("; "))
    }

    fn instr_stmt(&self, pc: u32) -> Option<u32> {
        match &self.code.instrs.get(pc as usize)? {
            Instr::Notify { stmt, .. }
            | Instr::Wait { stmt, .. }
            | Instr::Copy { stmt, .. }
            | Instr::Get { stmt, .. }
            | Instr::Put { stmt, .. }
            | Instr::Reduce { stmt, .. }
            | Instr::Fence { stmt }
            | Instr::LoopInit { stmt, .. }
            | Instr::Return { stmt, .. } => Some(*stmt),
            _ => None,
        }
    }

    // -------------------------------------------------------------- stepping

    /// Performs one action.
    pub fn step(&self, s: &mut State, a: Action, out: &mut Outcome) {
        match a {
            Action::Run(p) => {
                self.run_step(s, p as usize, false, out);
            }
            Action::Stale(p) => {
                let p = p as usize;
                s.procs[p].steps += 1;
                self.exec_visible(s, p, Some(()), out);
                self.run_invisible(s, p, out);
            }
            Action::Drain(p) => {
                self.drain_one(s, p as usize, out);
            }
            Action::Pin(p) => self.pin(s, p as usize, out),
        }
    }

    /// One `Run` transition of process `p`: its notify or wait, then its local
    /// instructions up to the next notify or wait. With `dry` the notify or wait
    /// has no effect (a wait always passes): it is only recorded and returned,
    /// which is how [`Machine::footprints`] learns each process's sequence of
    /// transitions.
    fn run_step(&self, s: &mut State, p: usize, dry: bool, out: &mut Outcome) -> Option<DryOp> {
        s.procs[p].steps += 1;
        let op = if dry {
            self.dry_visible(s, p, out)
        } else {
            self.exec_visible(s, p, None, out);
            None
        };
        self.run_invisible(s, p, out);
        op
    }

    /// Records the notify or wait at the process's pc without performing it.
    fn dry_visible(&self, s: &mut State, p: usize, out: &mut Outcome) -> Option<DryOp> {
        let pc = s.procs[p].pc as usize;
        let op = match &self.code.instrs[pc] {
            Instr::Notify { op, stmt, .. } => match self.notify_args(s, p) {
                Ok((_, cell, v)) => DryOp {
                    cell: cell as u32,
                    amount: v,
                    kind: match op {
                        NotifyOp::AtomicAdd if v > 0 => OpKind::Raise,
                        NotifyOp::AtomicAdd => OpKind::Lower,
                        NotifyOp::Set => OpKind::Set,
                    },
                },
                Err(m) => {
                    self.fault(s, p, Some(*stmt), m, out);
                    return None;
                }
            },
            Instr::Wait { stmt, .. } => match self.pending_wait(s, p) {
                Some(Ok((cell, cmp, k))) => DryOp {
                    cell: cell as u32,
                    amount: 0,
                    kind: OpKind::Wait(cmp, k),
                },
                Some(Err(m)) => {
                    self.fault(s, p, Some(*stmt), m, out);
                    return None;
                }
                None => return None,
            },
            _ => return None,
        };
        s.procs[p].pc += 1;
        s.procs[p].bump = true;
        Some(op)
    }

    /// Sticky polling: the blocked wait of `p` caches the cell's current (failing) value
    /// and keeps re-reading it.
    fn pin(&self, s: &mut State, p: usize, out: &mut Outcome) {
        let Some(Ok((cell, cmp, k))) = self.pending_wait(s, p) else {
            return;
        };
        let value = s.cells[cell].value;
        let pr = &mut s.procs[p];
        pr.pin = Some(value);
        let call = pr.call;
        let stmt = self.instr_stmt(pr.pc);
        self.event(out, p, call, stmt, || {
            (
                EvKind::WaitPinned {
                    cell: self.cell_name(cell),
                    threshold: k,
                    value,
                },
                format!(
                    "{} {} {k} polls and caches {value}; the poll keeps re-reading the cached line (sticky polling)",
                    self.cell_name(cell),
                    cmp.as_str()
                ),
            )
        });
    }

    /// Every process's sequence of `Run` transitions, each as the cells it
    /// touches and how and the window regions it reads and writes, over all
    /// calls. Control flow never depends on cell values or data, so this sequence
    /// is the same in every schedule: one run in which every wait passes at once
    /// gives it. The host step that ends a rank's call (reading its output,
    /// staging the next input, running its blocks up to their first notify or
    /// wait) runs in the transition of whichever block ends the call last, so its
    /// accesses are added to the call-ending transition of every block of the
    /// rank. `None` when that run would take more than `max_ops` transitions, runs
    /// past `deadline`, or stops on a budget.
    pub fn footprints(
        &self,
        max_ops: u64,
        deadline: std::time::Instant,
    ) -> Option<Vec<Vec<Footprint>>> {
        let mut out = Outcome::default();
        let mut s = self.initial(&mut out);
        if out.stop.is_some() {
            return None;
        }
        let np = self.nprocs();
        let bl = self.code.blocks;
        let mut trans: Vec<Vec<Footprint>> = vec![Vec::new(); np];
        // (rank, call) -> the host step's window accesses and cell reads;
        // (process, call-ending transition, call) for every block.
        let mut host: HashMap<(usize, u16), (Vec<DataAcc>, Vec<DryOp>)> = HashMap::new();
        let mut ends: Vec<(usize, usize, u16)> = Vec::new();
        let mut total = 0u64;
        loop {
            let mut moved = false;
            for (p, tr) in trans.iter_mut().enumerate() {
                if s.procs[p].status != Status::Run {
                    continue;
                }
                let call = s.procs[p].call;
                let mut o = Outcome {
                    accesses: Some(Vec::new()),
                    ..Outcome::default()
                };
                let op = self.run_step(&mut s, p, true, &mut o);
                if o.stop.is_some() {
                    return None;
                }
                total += 1;
                if total > max_ops
                    || (total.is_multiple_of(4096) && std::time::Instant::now() > deadline)
                {
                    return None;
                }
                let mut data = o.accesses.unwrap_or_default();
                if let Some(from) = o.host_from {
                    // The host's reads of cells count as reads that never block.
                    let reads = o.cell_reads.iter().map(|c| DryOp {
                        cell: *c,
                        amount: 0,
                        kind: OpKind::Wait(CmpOp::Ge, i64::MIN),
                    });
                    host.insert((p / bl, call), (data.split_off(from), reads.collect()));
                }
                let ends_call = s.procs[p].status != Status::Run || s.procs[p].call != call;
                if ends_call {
                    ends.push((p, tr.len(), call));
                }
                tr.push(Footprint {
                    op,
                    data,
                    ends_call: ends_call.then_some(call),
                    ..Footprint::default()
                });
                moved = true;
            }
            if !moved {
                break;
            }
        }
        for (p, i, call) in ends {
            if let Some((acc, reads)) = host.get(&(p / bl, call)) {
                trans[p][i].host_data.clone_from(acc);
                trans[p][i].host_ops.clone_from(reads);
            }
        }
        Some(trans)
    }

    /// Whether a process is running, has ended its call and waits for its rank's
    /// other blocks, is done, or stopped on a runtime error.
    pub fn proc_status(&self, s: &State, p: usize) -> Status {
        s.procs[p].status
    }

    /// The value of a cell.
    pub fn cell_value(&self, s: &State, cell: usize) -> i64 {
        s.cells[cell].value
    }

    /// True for a credit signal's cell (value signals carry no credit units).
    pub fn is_credit_cell(&self, cell: usize) -> bool {
        self.is_credit(cell)
    }

    /// Would `-= amount` on `cell` (or a wait needing `amount` credits) consume
    /// (count) the same credit units whether or not
    /// process `r` adds a positive credit to it first? True when the cell's positive
    /// units cover the amount and every unit it would consume sorts before any unit
    /// `r` can still add (units are consumed oldest first, and `r`'s future units
    /// carry its current call and notify counter or later ones).
    pub fn lower_precedes(&self, s: &State, cell: usize, amount: i64, r: usize) -> bool {
        let pr = &s.procs[r];
        let bound = (pr.call, r as u16, pr.seq);
        let mut need = amount;
        for u in &s.cells[cell].units {
            if need <= 0 {
                break;
            }
            if u.amount > 0 {
                if u.key() >= bound {
                    return false;
                }
                need -= u.amount;
            }
        }
        need <= 0
    }

    /// Blocks per rank.
    pub fn blocks(&self) -> usize {
        self.code.blocks
    }

    /// The process's epoch for a recorded event, starting a new one after a release.
    fn epoch(pr: &mut Proc, p: usize) -> u32 {
        if pr.bump {
            pr.clock[p] += 1;
            pr.bump = false;
        }
        pr.clock[p]
    }

    fn fault(&self, s: &mut State, p: usize, stmt: Option<u32>, msg: String, out: &mut Outcome) {
        let pr = &mut s.procs[p];
        pr.status = Status::Fault;
        let call = pr.call;
        let f = Finding::new(
            "sim::runtime-error",
            format!("{} (call {}): {msg}", self.proc_name(p), fmt_call(call)),
            stmt.and_then(|x| self.stmt_span(x)),
        );
        self.event(out, p, call, stmt, || (EvKind::Fault, msg));
        self.mark_last(out, "sim::runtime-error");
        out.findings.push(f);
    }

    /// Executes the notify or wait at the process's pc.
    fn exec_visible(&self, s: &mut State, p: usize, stale: Option<()>, out: &mut Outcome) {
        let pc = s.procs[p].pc as usize;
        match &self.code.instrs[pc] {
            Instr::Notify { op, stmt, .. } => {
                let res = self.notify_args(s, p);
                match res {
                    Ok((to, cell, v)) => self.notify(s, p, to, cell, *op, v, *stmt, out),
                    Err(m) => {
                        self.fault(s, p, Some(*stmt), m, out);
                        return;
                    }
                }
                s.procs[p].pc += 1;
            }
            Instr::Wait { stmt, .. } => {
                let stmt = *stmt;
                match self.pending_wait(s, p) {
                    Some(Ok((cell, cmp, k))) => {
                        self.wait_pass(s, p, cell, cmp, k, stmt, stale.is_some(), out);
                        s.procs[p].pc += 1;
                    }
                    Some(Err(m)) => self.fault(s, p, Some(stmt), m, out),
                    None => {}
                }
            }
            _ => {}
        }
    }

    /// The target rank, cell and value of the notify at the process's pc.
    fn notify_args(&self, s: &State, p: usize) -> Result<(usize, usize, i64), String> {
        let Instr::Notify {
            signal,
            index,
            target,
            value,
            ..
        } = &self.code.instrs[s.procs[p].pc as usize]
        else {
            return Err("internal: no notify at the program counter".to_string());
        };
        let (r, _) = self.who(p);
        let ctx = self.ctx(s, p);
        let to = match target {
            Some(t) => self.rank(ctx.eval(t)?)?,
            None => r,
        };
        let cell = self.cell_index(to, *signal, index, &ctx, s.procs[p].call)?;
        let v = ctx.eval(value)?;
        if v < i32::MIN as i64 || v > i32::MAX as i64 {
            return Err(format!("notify value {v} does not fit an int32 cell"));
        }
        Ok((to, cell, v))
    }

    fn rank(&self, x: i64) -> Result<usize, String> {
        if x < 0 || x as usize >= self.code.world {
            Err(format!("rank {x} is outside 0..{}", self.code.world))
        } else {
            Ok(x as usize)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        s: &mut State,
        p: usize,
        to: usize,
        cell: usize,
        op: NotifyOp,
        v: i64,
        stmt: u32,
        out: &mut Outcome,
    ) {
        let credit = self.is_credit(cell);
        let call = s.procs[p].call;
        let seq = s.procs[p].seq;
        let keep_history = self.memory == Memory::Relaxed
            && s.procs
                .iter()
                .any(|q| q.cache.iter().any(|(c, _)| *c as usize == cell));
        let before = s.cells[cell].value;
        let after = match op {
            NotifyOp::AtomicAdd => before.checked_add(v),
            NotifyOp::Set => Some(v),
        };
        let Some(after) = after.filter(|a| *a >= i32::MIN as i64 && *a <= i32::MAX as i64) else {
            self.fault(
                s,
                p,
                Some(stmt),
                format!("{} overflows int32", self.cell_name(cell)),
                out,
            );
            return;
        };
        if keep_history {
            let c = &s.cells[cell];
            let old = OldCell {
                version: c.version,
                value: c.value,
                units: c.units.clone(),
                clock: c.clock.clone(),
                origin: c.origin,
            };
            s.cells[cell].history.push(old);
        }
        let mut lost = Vec::new();
        {
            let pclock = s.procs[p].clock.clone();
            let c = &mut s.cells[cell];
            c.value = after;
            if self.memory == Memory::Relaxed {
                c.version += 1;
            }
            match op {
                NotifyOp::AtomicAdd => join(&mut c.clock, &pclock),
                NotifyOp::Set => c.clock = pclock.clone(),
            }
            if !credit {
                c.origin = Some(Origin {
                    call,
                    writer: p as u16,
                    stmt,
                });
            }
            if credit {
                let unit = |amount| Unit {
                    call,
                    writer: p as u16,
                    seq,
                    stmt,
                    amount,
                    counted: 0,
                    clock: pclock.clone(),
                };
                match op {
                    NotifyOp::AtomicAdd if v > 0 => insert_unit(&mut c.units, unit(v)),
                    NotifyOp::AtomicAdd => {
                        let mut need = -v;
                        let mut i = 0;
                        while need > 0 && i < c.units.len() {
                            if c.units[i].amount > 0 {
                                let take = c.units[i].amount.min(need);
                                c.units[i].amount -= take;
                                need -= take;
                                if c.units[i].amount == 0 {
                                    c.units.remove(i);
                                    continue;
                                }
                            }
                            i += 1;
                        }
                        if need > 0 {
                            insert_unit(&mut c.units, unit(-need));
                        }
                    }
                    NotifyOp::Set => {
                        for u in c.units.drain(..) {
                            if u.amount > 0 && (u.call > call || (u.call == call && u.counted == 0))
                            {
                                lost.push(u);
                            }
                        }
                        if v != 0 {
                            c.units.push(unit(v));
                        }
                    }
                }
            }
        }
        let pr = &mut s.procs[p];
        pr.seq += 1;
        pr.bump = true;
        if self.memory == Memory::Relaxed {
            let ver = s.cells[cell].version;
            if let Some(e) = s.procs[p]
                .cache
                .iter_mut()
                .find(|(c, _)| *c as usize == cell)
            {
                e.1 = ver;
            }
            self.prune_history(s, cell);
        }
        let opstr = match op {
            NotifyOp::Set => format!("= {v}"),
            NotifyOp::AtomicAdd if v < 0 => format!("-= {}", -v),
            NotifyOp::AtomicAdd => format!("+= {v}"),
        };
        self.event(out, p, call, Some(stmt), || {
            (
                EvKind::Notify {
                    to: to as u32,
                    cell: self.cell_name(cell),
                    before,
                    after,
                },
                format!("{} {opstr}: {before} -> {after}", self.cell_name(cell)),
            )
        });
        if !lost.is_empty() {
            let what: Vec<String> = lost
                .iter()
                .map(|u| {
                    format!(
                        "{}'s credit {:+} of call {} (`{}`)",
                        self.proc_name(u.writer as usize),
                        u.amount,
                        fmt_call(u.call),
                        self.code.stmts[u.stmt as usize].text
                    )
                })
                .collect();
            let f = Finding::new(
                "sim::lost-credit",
                format!(
                    "{} (call {}) sets {} to {v} and erases {} no wait has counted yet",
                    self.proc_name(p),
                    fmt_call(call),
                    self.cell_name(cell),
                    what.join(" and ")
                ),
                self.stmt_span(stmt),
            )
            .note("a credit erased by `Set` is never sent again, so the wait that needs it can hang; reset with `-= N` (AtomicAdd), which commutes with early credits");
            self.mark_last(out, "sim::lost-credit");
            out.findings.push(f);
        }
    }

    fn prune_history(&self, s: &mut State, cell: usize) {
        let min_floor = s
            .procs
            .iter()
            .flat_map(|q| q.cache.iter())
            .filter(|(c, _)| *c as usize == cell)
            .map(|x| x.1)
            .min();
        let c = &mut s.cells[cell];
        match min_floor {
            None => c.history.clear(),
            Some(f) => c.history.retain(|h| h.version >= f),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn wait_pass(
        &self,
        s: &mut State,
        p: usize,
        cell: usize,
        cmp: CmpOp,
        k: i64,
        stmt: u32,
        stale: bool,
        out: &mut Outcome,
    ) {
        let call = s.procs[p].call;
        let (value, units, clock, version, origin) = if stale {
            let c = &s.cells[cell];
            match self.stale_choice(s, p, cell, cmp, k) {
                Some(i) => {
                    let h = &c.history[i];
                    (
                        h.value,
                        h.units.clone(),
                        h.clock.clone(),
                        h.version,
                        h.origin,
                    )
                }
                None => (
                    c.value,
                    c.units.clone(),
                    c.clock.clone(),
                    c.version,
                    c.origin,
                ),
            }
        } else {
            let c = &s.cells[cell];
            (
                c.value,
                c.units.clone(),
                c.clock.clone(),
                c.version,
                c.origin,
            )
        };
        // Credit provenance: the shortest prefix (oldest call first) reaching the threshold.
        let need = match cmp {
            CmpOp::Ge | CmpOp::Eq => Some(k),
            CmpOp::Gt => Some(k + 1),
            _ => None,
        };
        let mut stale_findings = Vec::new();
        // What the wait acquires: on a credit cell, the clocks of the credit units it
        // counts (the notifies it synchronises with); otherwise the cell's release clock.
        let mut acquired: Option<Clock> = None;
        if let (true, Some(need)) = (self.is_credit(cell), need) {
            let mut acq = vec![0; s.procs.len()];
            if need > 0 {
                let mut sum = 0i64;
                let mut prefix = Vec::new();
                for u in &units {
                    sum += u.amount;
                    prefix.push(u);
                    if sum >= need {
                        break;
                    }
                }
                let bit = 1u128 << (p % 128);
                let foreign: Vec<&&Unit> = prefix
                    .iter()
                    .filter(|u| u.amount > 0 && u.call != call)
                    .collect();
                let fresh = prefix.iter().any(|u| u.amount > 0 && u.counted & bit == 0);
                let wait_desc = || {
                    format!(
                        "{} (call {}) passed `{}` ({} {} {k}, value {value}{})",
                        self.proc_name(p),
                        fmt_call(call),
                        self.code.stmts[stmt as usize].text,
                        self.cell_name(cell),
                        cmp.as_str(),
                        if stale {
                            ", read from a stale cached line"
                        } else {
                            ""
                        }
                    )
                };
                if !foreign.is_empty() {
                    let what: Vec<String> = foreign
                        .iter()
                        .map(|u| {
                            format!(
                                "{}'s credit {:+} of call {} (`{}`)",
                                self.proc_name(u.writer as usize),
                                u.amount,
                                fmt_call(u.call),
                                self.code.stmts[u.stmt as usize].text
                            )
                        })
                        .collect();
                    let f = Finding::new(
                        "sim::stale-pass",
                        format!("{} by counting {}", wait_desc(), what.join(" and ")),
                        self.stmt_span(stmt),
                    )
                    .note("credits of another call satisfied this wait: the signal was not back at zero between calls, or a fast peer's next-call credit was counted");
                    stale_findings.push(f);
                } else if !fresh {
                    let f = Finding::new(
                        "sim::stale-pass",
                        format!("{} without any new credit: every credit it counted was already counted by an earlier wait of this process", wait_desc()),
                        self.stmt_span(stmt),
                    )
                    .note("the threshold grows slower than the credits, so this wait synchronises nothing (e.g. `+= epoch` with `>= epoch`)");
                    stale_findings.push(f);
                }
                for u in &prefix {
                    join(&mut acq, &u.clock);
                }
                // Both lists are sorted by key (`insert_unit`), so one merge walk marks the
                // counted units: linear, not (units × prefix) per wait (cubic in the tiles
                // of a per-tile barrier).
                let counted_keys: Vec<_> = prefix.iter().map(|u| u.key()).collect();
                debug_assert!(counted_keys.is_sorted());
                let c = &mut s.cells[cell];
                let mut j = 0;
                for u in c.units.iter_mut() {
                    while j < counted_keys.len() && counted_keys[j] < u.key() {
                        j += 1;
                    }
                    if j == counted_keys.len() {
                        break;
                    }
                    if counted_keys[j] == u.key() {
                        u.counted |= bit;
                    }
                }
            }
            acquired = Some(acq);
        }
        join(&mut s.procs[p].clock, acquired.as_ref().unwrap_or(&clock));
        if self.memory == Memory::Relaxed {
            let pr = &mut s.procs[p];
            match pr.cache.iter_mut().find(|(c, _)| *c as usize == cell) {
                Some(e) => e.1 = version,
                None => {
                    pr.cache.push((cell as u32, version));
                    pr.cache.sort();
                }
            }
            self.prune_history(s, cell);
        }
        let cur = s.cells[cell].value;
        self.event(out, p, call, Some(stmt), || {
            (
                EvKind::WaitPass {
                    cell: self.cell_name(cell),
                    threshold: k,
                    value,
                },
                format!(
                    "{} {} {k} passes: value {value}{}{}",
                    self.cell_name(cell),
                    cmp.as_str(),
                    if stale {
                        format!(" (stale; the cell holds {cur})")
                    } else {
                        String::new()
                    },
                    self.units_desc(&s.cells[cell])
                ),
            )
        });
        for f in stale_findings {
            self.mark_last(out, "sim::stale-pass");
            out.findings.push(f);
        }
        if !self.is_credit(cell) {
            let reader = format!(
                "{} (call {}) passes `{}` on",
                self.proc_name(p),
                fmt_call(call),
                self.code.stmts[stmt as usize].text
            );
            self.observe_value(cell, value, origin, call, &reader, Some(stmt), out);
        }
    }

    /// Runs local instructions until the next notify, wait or the end of the call.
    fn run_invisible(&self, s: &mut State, p: usize, out: &mut Outcome) {
        loop {
            if s.procs[p].status != Status::Run {
                return;
            }
            let pc = s.procs[p].pc as usize;
            out.instrs += 1;
            match &self.code.instrs[pc] {
                Instr::Notify { .. } | Instr::Wait { .. } => return,
                Instr::Let { slot, value } => {
                    match self.ctx(s, p).eval(value) {
                        Ok(v) => s.procs[p].slots[*slot as usize] = v,
                        Err(m) => return self.fault(s, p, None, m, out),
                    }
                    s.procs[p].pc += 1;
                }
                Instr::Kill { slots } => {
                    for x in slots {
                        s.procs[p].slots[*x as usize] = 0;
                    }
                    s.procs[p].pc += 1;
                }
                Instr::LoopInit {
                    var,
                    hi,
                    step,
                    kind,
                    exit,
                    stmt,
                    outer,
                } => {
                    let (r, _) = self.who(p);
                    let world = self.code.world as i64;
                    let ctx = self.ctx(s, p);
                    let res: Result<(i64, i64, i64), String> = match kind {
                        LoopKind::Peers => Ok((if r == 0 { 1 } else { 0 }, world, 1)),
                        LoopKind::Ranks => Ok((0, world, 1)),
                        LoopKind::Span { lo, hi, step } => (|| {
                            let st = ctx.eval(step)?;
                            if st <= 0 {
                                return Err(format!("loop step {st} is not positive"));
                            }
                            Ok((ctx.eval(lo)?, ctx.eval(hi)?, st))
                        })(),
                    };
                    let (first, h, st) = match res {
                        Ok(x) => x,
                        Err(m) => return self.fault(s, p, Some(*stmt), m, out),
                    };
                    let trip = if h > first {
                        (h - first + st - 1) / st
                    } else {
                        0
                    };
                    if trip > self.limits.max_trip {
                        out.stop = Some(format!(
                            "`{}` would run {trip} iterations on {} (limit {} per loop): the protocol is too large for these parameters; choose smaller ones",
                            self.code.stmts[*stmt as usize].text,
                            self.proc_name(p),
                            self.limits.max_trip
                        ));
                        s.procs[p].status = Status::Fault;
                        return;
                    }
                    // The whole nest: this loop's trip times the iterations the enclosing
                    // loops have left (their full trips the first time this loop is reached).
                    let nest = outer.iter().fold(trip.max(1) as i128, |acc, &(v, hv, sv)| {
                        let pr = &s.procs[p];
                        let (v, hv, sv) = (
                            pr.slots[v as usize] as i128,
                            pr.slots[hv as usize] as i128,
                            (pr.slots[sv as usize] as i128).max(1),
                        );
                        acc * ((hv - v + sv - 1) / sv).max(1)
                    });
                    if !outer.is_empty() && trip > 0 && nest > self.limits.max_nest as i128 {
                        out.stop = Some(format!(
                            "`{}` nested in {} enclosing loop(s) would run {nest} iterations on {} (limit {} for a loop nest, --max-steps): the protocol is too large for these parameters; choose smaller ones",
                            self.code.stmts[*stmt as usize].text,
                            outer.len(),
                            self.proc_name(p),
                            self.limits.max_nest
                        ));
                        s.procs[p].status = Status::Fault;
                        return;
                    }
                    let pr = &mut s.procs[p];
                    if first < h {
                        pr.slots[*var as usize] = first;
                        pr.slots[*hi as usize] = h;
                        pr.slots[*step as usize] = st;
                        pr.pc += 1;
                    } else {
                        pr.pc = *exit;
                    }
                }
                Instr::LoopNext {
                    var,
                    hi,
                    step,
                    peers,
                    body,
                } => {
                    let (r, _) = self.who(p);
                    let pr = &mut s.procs[p];
                    let mut v = pr.slots[*var as usize] + pr.slots[*step as usize];
                    if *peers && v == r as i64 {
                        v += 1;
                    }
                    if v < pr.slots[*hi as usize] {
                        pr.slots[*var as usize] = v;
                        pr.pc = *body;
                    } else {
                        pr.pc += 1;
                    }
                }
                Instr::JumpIfNot { cond, target } => match self.ctx(s, p).cond(cond) {
                    Ok(true) => s.procs[p].pc += 1,
                    Ok(false) => s.procs[p].pc = *target,
                    Err(m) => return self.fault(s, p, None, m, out),
                },
                Instr::Jump { target } => s.procs[p].pc = *target,
                Instr::Return { cond, stmt } => match self.ctx(s, p).cond(cond) {
                    Ok(true) => {
                        let call = s.procs[p].call;
                        self.event(out, p, call, Some(*stmt), || {
                            (
                                EvKind::Return,
                                "returns early (skips the rest of the call and the epilogue)"
                                    .into(),
                            )
                        });
                        self.end_call(s, p, out);
                        return;
                    }
                    Ok(false) => s.procs[p].pc += 1,
                    Err(m) => return self.fault(s, p, Some(*stmt), m, out),
                },
                Instr::EndBody => s.procs[p].pc += 1,
                Instr::EndCall => {
                    self.end_call(s, p, out);
                    return;
                }
                Instr::Fence { stmt } => {
                    let stmt = *stmt;
                    if self.memory == Memory::Relaxed {
                        while !s.procs[p].pending.is_empty() {
                            self.drain_one(s, p, out);
                        }
                        s.procs[p].cache.clear();
                        let cells: Vec<usize> = (0..s.cells.len())
                            .filter(|c| !s.cells[*c].history.is_empty())
                            .collect();
                        for c in cells {
                            self.prune_history(s, c);
                        }
                    }
                    let call = s.procs[p].call;
                    self.event(out, p, call, Some(stmt), || (EvKind::Fence, "fence".into()));
                    s.procs[p].pc += 1;
                }
                Instr::Copy { dst, src, stmt } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    if let Err(m) = self.data_op(s, p, dst, r, src, r, None, stmt, "copy", out) {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    s.procs[p].pc += 1;
                }
                Instr::Get {
                    dst,
                    src,
                    from,
                    stmt,
                } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    let res = self.ctx(s, p).eval(from).and_then(|x| self.rank(x));
                    let res = res
                        .and_then(|f| self.data_op(s, p, dst, r, src, f, None, stmt, "get", out));
                    if let Err(m) = res {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    s.procs[p].pc += 1;
                }
                Instr::Put { dst, to, src, stmt } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    let res = self.ctx(s, p).eval(to).and_then(|x| self.rank(x));
                    let res = res
                        .and_then(|t| self.data_op(s, p, dst, t, src, r, None, stmt, "put", out));
                    if let Err(m) = res {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    s.procs[p].pc += 1;
                }
                Instr::Reduce {
                    op,
                    dst,
                    src,
                    from,
                    stmt,
                } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    let res = match from {
                        Some(f) => self.ctx(s, p).eval(f).and_then(|x| self.rank(x)),
                        None => Ok(r),
                    };
                    let res = res.and_then(|f| {
                        self.data_op(s, p, dst, r, src, f, Some(*op), stmt, "reduce", out)
                    });
                    if let Err(m) = res {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    s.procs[p].pc += 1;
                }
            }
        }
    }

    fn region(&self, s: &State, p: usize, reg: &CRegion, rank: usize) -> Result<Loc, String> {
        let ctx = self.ctx(s, p);
        let dims = match reg.buffer {
            BufferRef::Window(w) => &self.code.window_dims[w],
            BufferRef::Tile(t) => &self.code.tile_dims[t],
        };
        let name = self.p.buffer_name(reg.buffer);
        let mut row = 0i64;
        for (k, x) in reg.index.iter().enumerate() {
            let i = ctx.eval(x)?;
            if i < 0 || i >= dims[k] {
                return Err(format!(
                    "index {i} is outside `{name}`'s dimension {k} of size {}",
                    dims[k]
                ));
            }
            row = row * dims[k] + i;
        }
        let last = *dims.last().unwrap_or(&0);
        let (lo, hi) = (ctx.eval(&reg.lo)?, ctx.eval(&reg.hi)?);
        if lo < 0 || hi < lo || hi > last {
            return Err(format!(
                "slice {lo} .. {hi} of `{name}` is outside 0 .. {last}"
            ));
        }
        Ok(Loc {
            rank,
            buf: reg.buffer,
            lo: (row * last + lo) as u64,
            hi: (row * last + hi) as u64,
        })
    }

    fn loc_desc(&self, l: &Loc) -> String {
        let name = self.p.buffer_name(l.buf);
        match l.buf {
            BufferRef::Window(_) => format!("rank {}'s {name}[{}..{}]", l.rank, l.lo, l.hi),
            BufferRef::Tile(_) => format!("{name}[{}..{}]", l.lo, l.hi),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn data_op(
        &self,
        s: &mut State,
        p: usize,
        dst: &CRegion,
        dst_rank: usize,
        src: &CRegion,
        src_rank: usize,
        op: Option<ReduceOp>,
        stmt: u32,
        name: &str,
        out: &mut Outcome,
    ) -> Result<(), String> {
        let d = self.region(s, p, dst, dst_rank)?;
        let sr = self.region(s, p, src, src_rank)?;
        if d.hi - d.lo != sr.hi - sr.lo {
            return Err(format!(
                "`{name}` moves {} elements into a region of {}",
                sr.hi - sr.lo,
                d.hi - d.lo
            ));
        }
        let call = s.procs[p].call;
        self.event(out, p, call, Some(stmt), || {
            (
                EvKind::Data,
                format!("{name} {} <- {}", self.loc_desc(&d), self.loc_desc(&sr)),
            )
        });
        let pieces = self.read(s, p, &sr, stmt, out);
        let mut pieces = relocate(pieces, sr.lo, d.lo);
        if let Some(op) = op {
            let cur = self.read(s, p, &d, stmt, out);
            let idem = matches!(op, ReduceOp::Max | ReduceOp::Min);
            pieces = zip(&cur, &pieces)
                .into_iter()
                .map(|(n, a, b)| (n, a.combine(&b, idem)))
                .collect();
        }
        self.write(s, p, &d, pieces, stmt, out);
        Ok(())
    }

    fn read(
        &self,
        s: &mut State,
        p: usize,
        l: &Loc,
        stmt: u32,
        out: &mut Outcome,
    ) -> Vec<(u64, Val)> {
        match l.buf {
            BufferRef::Tile(t) => s.procs[p].tiles[t].read(l.lo, l.hi),
            BufferRef::Window(w) => {
                if self.memory == Memory::Relaxed {
                    // A process sees its own buffered writes: make those it reads visible first.
                    let last = s.procs[p].pending.iter().rposition(|x| {
                        x.rank as usize == l.rank
                            && x.win as usize == w
                            && x.lo < l.hi
                            && x.lo + x.pieces.iter().map(|y| y.0).sum::<u64>() > l.lo
                    });
                    if let Some(last) = last {
                        for _ in 0..=last {
                            self.drain_one(s, p, out);
                        }
                    }
                }
                let acc = Acc {
                    proc: p as u16,
                    epoch: Self::epoch(&mut s.procs[p], p),
                    call: s.procs[p].call,
                    what: stmt,
                };
                let clock = s.procs[p].clock.clone();
                let m = self.mi(l.rank, w, s.procs[p].call);
                self.check_fresh_read(s, p, l, stmt, out);
                self.access(s, m, l.lo, l.hi, acc, false, &clock, out);
                s.mem[m].vals.read(l.lo, l.hi)
            }
        }
    }

    fn write(
        &self,
        s: &mut State,
        p: usize,
        l: &Loc,
        pieces: Vec<(u64, Val)>,
        stmt: u32,
        out: &mut Outcome,
    ) {
        match l.buf {
            BufferRef::Tile(t) => s.procs[p].tiles[t].write(l.lo, &pieces),
            BufferRef::Window(w) => {
                if self.memory == Memory::Relaxed {
                    s.procs[p].pending.push(Pending {
                        rank: l.rank as u16,
                        win: w as u16,
                        lo: l.lo,
                        pieces,
                        stmt,
                    });
                } else {
                    self.apply_write(s, p, l.rank, w, l.lo, pieces, stmt, out);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_write(
        &self,
        s: &mut State,
        p: usize,
        rank: usize,
        w: usize,
        lo: u64,
        pieces: Vec<(u64, Val)>,
        stmt: u32,
        out: &mut Outcome,
    ) {
        let hi = lo + pieces.iter().map(|x| x.0).sum::<u64>();
        let acc = Acc {
            proc: p as u16,
            epoch: Self::epoch(&mut s.procs[p], p),
            call: s.procs[p].call,
            what: stmt,
        };
        let clock = s.procs[p].clock.clone();
        let m = self.mi(rank, w, s.procs[p].call);
        self.access(s, m, lo, hi, acc, true, &clock, out);
        s.mem[m].vals.write(lo, &pieces);
    }

    fn drain_one(&self, s: &mut State, p: usize, out: &mut Outcome) {
        if s.procs[p].pending.is_empty() {
            return;
        }
        let w = s.procs[p].pending.remove(0);
        let call = s.procs[p].call;
        let n: u64 = w.pieces.iter().map(|x| x.0).sum();
        self.event(out, p, call, Some(w.stmt), || {
            (
                EvKind::Drain,
                format!(
                    "buffered write to rank {}'s {}[{}..{}] becomes visible",
                    w.rank,
                    self.p.windows[w.win as usize].name,
                    w.lo,
                    w.lo + n
                ),
            )
        });
        self.apply_write(
            s,
            p,
            w.rank as usize,
            w.win as usize,
            w.lo,
            w.pieces,
            w.stmt,
            out,
        );
    }

    /// Race check and access recording over `lo..hi` of window memory `m`.
    #[allow(clippy::too_many_arguments)]
    fn access(
        &self,
        s: &mut State,
        m: usize,
        lo: u64,
        hi: u64,
        acc: Acc,
        write: bool,
        clock: &Clock,
        out: &mut Outcome,
    ) {
        if let Some(v) = out.accesses.as_mut() {
            v.push(DataAcc {
                mem: m as u32,
                lo,
                hi,
                write,
            });
        }
        let mut race: Option<(Acc, bool, u64, u64)> = None;
        let mut pos = lo;
        for (n, rec) in s.mem[m].acc.read(lo, hi) {
            if race.is_none() {
                let unordered = |o: &Acc| o.proc != acc.proc && clock[o.proc as usize] < o.epoch;
                if let Some(w) = rec.write.filter(unordered) {
                    race = Some((w, true, pos, pos + n));
                } else if write {
                    if let Some(r) = rec.reads.iter().find(|r| unordered(r)) {
                        race = Some((*r, false, pos, pos + n));
                    }
                }
            }
            pos += n;
        }
        s.mem[m].acc.update(lo, hi, |rec| {
            if write {
                rec.write = Some(acc);
                rec.reads.clear();
            } else {
                match rec.reads.iter_mut().find(|r| r.proc == acc.proc) {
                    Some(r) => *r = acc,
                    None => {
                        rec.reads.push(acc);
                        rec.reads.sort();
                    }
                }
            }
        });
        if let Some((other, other_write, a, b)) = race {
            let (rank, w) = self.mem_owner(m);
            let win = &self.p.windows[w].name;
            let desc = |x: &Acc, is_write: bool| {
                format!(
                    "{}'s {} ({}, call {})",
                    self.proc_name(x.proc as usize),
                    self.stmt_desc(x.what),
                    if is_write { "write" } else { "read" },
                    fmt_call(x.call)
                )
            };
            let msg = format!(
                "data race on rank {rank}'s {win}[{a}..{b}]: {} is not ordered after {} by any notify -> wait chain",
                desc(&acc, write),
                desc(&other, other_write)
            );
            let span = self.stmt_span(acc.what).or(self.stmt_span(other.what));
            let mut f = Finding::new("sim::data-race", msg, span);
            if let Some(sp) = self.stmt_span(other.what) {
                f.related.push(sp);
            }
            f.help = self.race_help(w, (acc.call, other.call));
            if acc.what == STAGE || other.what == STAGE {
                f.notes.push("the owner rewrites this window with the next call's payload while a peer may still access this call's data".into());
            } else if acc.what == CONSUME || other.what == CONSUME {
                f.notes.push("a fast peer writes the next call's data into this window before its owner has consumed this call's result".into());
            }
            self.mark_last(out, "sim::data-race");
            out.findings.push(f);
        }
    }

    // ------------------------------------------------------------ call ends

    fn end_call(&self, s: &mut State, p: usize, out: &mut Outcome) {
        if self.memory == Memory::Relaxed {
            while !s.procs[p].pending.is_empty() {
                self.drain_one(s, p, out);
            }
        }
        let call = s.procs[p].call;
        self.event(out, p, call, None, || {
            (EvKind::CallEnd, format!("leaves call {}", fmt_call(call)))
        });
        if matches!(self.p.semantics, Semantics::Barrier) {
            // Checked against happens-before: every process of another rank must have
            // entered this call, and its entry must be ordered before this exit by a
            // notify -> wait chain (blocks of one rank enter together, launched by
            // their host). A property of the partial order, so every schedule of one
            // Mazurkiewicz trace agrees (the partial-order reduction relies on it).
            let (me, _) = self.who(p);
            let bl = self.code.blocks;
            for q in 0..s.procs.len() {
                if q / bl == me {
                    continue;
                }
                let qp = &s.procs[q];
                let entered = call == 0
                    || (qp.call >= call
                        && qp.entries.get(call as usize).copied().unwrap_or(0) != 0
                        && s.procs[p].clock[q] >= qp.entries[call as usize]);
                let entered_late = qp.call >= call;
                if !entered {
                    let f = Finding::new(
                        "sim::wrong-result",
                        if entered_late {
                            format!(
                                "barrier broken: {} leaves call {} although {}'s entry into it is not ordered before the exit by any notify -> wait chain",
                                self.proc_name(p),
                                fmt_call(call),
                                self.proc_name(q)
                            )
                        } else {
                            format!(
                                "barrier broken: {} leaves call {} before {} has entered it",
                                self.proc_name(p),
                                fmt_call(call),
                                self.proc_name(q)
                            )
                        },
                        None,
                    );
                    self.mark_last(out, "sim::wrong-result");
                    out.findings.push(f);
                    break;
                }
            }
        }
        s.procs[p].status = Status::CallDone;
        let (r, _) = self.who(p);
        let bl = self.code.blocks;
        if (0..bl).all(|b| s.procs[r * bl + b].status == Status::CallDone) {
            self.host_step(s, r, call, out);
        }
    }

    /// The host between two calls of rank `r`: reads (checks) the output of
    /// `call`, stages the next call's input, and launches every block again.
    fn host_step(&self, s: &mut State, r: usize, call: u16, out: &mut Outcome) {
        if let Some(v) = out.accesses.as_ref() {
            out.host_from = Some(v.len());
        }
        let bl = self.code.blocks;
        let b0 = r * bl;
        let mut j = s.procs[b0].clock.clone();
        for b in 1..bl {
            let c = s.procs[b0 + b].clock.clone();
            join(&mut j, &c);
        }
        s.procs[b0].clock = j.clone();
        self.consume(s, r, call, out);
        self.observe_outputs(s, r, call, out);
        let next = call + 1;
        if (next as usize) < self.calls {
            self.stage(s, r, next, out);
            let j = s.procs[b0].clock.clone();
            for b in 0..bl {
                self.start_call(s, b0 + b, next, &j, out);
            }
            for b in 0..bl {
                self.run_invisible(s, b0 + b, out);
            }
        } else {
            for b in 0..bl {
                s.procs[b0 + b].status = Status::Finished;
            }
        }
    }

    /// The sizes the collective's meaning ([`collc_spec::meaning`]) is evaluated at.
    fn shape(&self) -> meaning::Shape {
        let product = |d: &Vec<i64>| d.iter().product::<i64>().max(0) as u64;
        meaning::Shape {
            world: self.code.world,
            root: self.code.root.unwrap_or(0),
            window_len: (0..self.p.windows.len())
                .map(|w| self.code.window_len(w))
                .collect(),
            window_row: self
                .code
                .window_dims
                .iter()
                .map(|d| d.last().copied().unwrap_or(1).max(1) as u64)
                .collect(),
            signal_len: self.code.signal_dims.iter().map(product).collect(),
            array_len: self.code.array_dims.iter().map(product).collect(),
        }
    }

    /// Windows staged with a call's input on rank `r` (the meaning's inputs).
    fn staged(&self, r: usize) -> Vec<WindowId> {
        meaning::inputs(self.p, &self.shape(), r)
    }

    /// Stages rank `r`'s input of `call`, as a write of its block 0 (whose clock is the rank's).
    fn stage(&self, s: &mut State, r: usize, call: u16, out: &mut Outcome) {
        let b0 = r * self.code.blocks;
        for w in self.staged(r) {
            let len = self.code.window_len(w);
            let v = Val::one(Contrib {
                rank: r as u16,
                win: w as u16,
                call,
                shift: 0,
            });
            let acc = Acc {
                proc: b0 as u16,
                epoch: Self::epoch(&mut s.procs[b0], b0),
                call,
                what: STAGE,
            };
            let clock = &s.procs[b0].clock.clone();
            let m = self.mi(r, w, call);
            self.event(out, b0, call, None, || {
                (
                    EvKind::Stage,
                    format!(
                        "host stages call {}'s input into {}[0..{len}]",
                        fmt_call(call),
                        self.p.windows[w].name
                    ),
                )
            });
            self.access(s, m, 0, len, acc, true, clock, out);
            s.mem[m].vals = Segs::filled(len, v);
        }
    }

    /// Rank `r`'s outputs of `call` by the collective's meaning ([`collc_spec::meaning`]).
    fn meaning(&self, r: usize, call: u16) -> Result<meaning::RankOutputs, String> {
        let arrays = |q: usize, a: ArrayId, i: u64| -> Option<i64> {
            self.arrays
                .get(call as usize)?
                .get(q)?
                .get(a)?
                .get(i as usize)
                .copied()
        };
        match meaning::outputs(self.p, &self.shape(), &arrays).map_err(|e| e.0)? {
            meaning::Meaning::Data(mut per_rank) if r < per_rank.len() => {
                Ok(per_rank.swap_remove(r))
            }
            _ => Ok(meaning::RankOutputs::default()),
        }
    }

    /// Expected output of rank `r` for a call: (window, lo, hi, provenance of element `e` as
    /// the input element `e + shift` of each contribution). A `None` value is read (for race
    /// detection) but not compared: the rows of an all_to_all_v block past the count its
    /// sender published are don't-care.
    fn expected(&self, r: usize, call: u16) -> Result<Vec<Expected>, String> {
        let out = self.meaning(r, call)?;
        Ok(out
            .segments
            .into_iter()
            .map(|seg| {
                let want = seg.want.map(|w| {
                    Val(w
                        .sources
                        .iter()
                        .map(|src| Contrib {
                            rank: src.rank as u16,
                            win: src.window as u16,
                            call,
                            shift: src.offset,
                        })
                        .collect())
                });
                (seg.window, seg.lo, seg.hi, want)
            })
            .collect())
    }

    /// The block layout of an all_to_all_v protocol's `target` (and `input`).
    fn a2av_layout(&self) -> Result<meaning::Blocks, String> {
        meaning::a2av_blocks(self.p, &self.shape()).map_err(|e| e.0)
    }

    /// Checks rank `r`'s value-signal outputs (all_to_all_v's receive counts) after `call`:
    /// one message per wrong cell.
    fn a2av_counts(
        &self,
        s: &State,
        r: usize,
        call: u16,
        out: &mut Outcome,
    ) -> Result<Vec<String>, String> {
        let want = self.meaning(r, call)?;
        if want.cells.is_empty() {
            return Ok(Vec::new());
        }
        let lay = self.a2av_layout()?;
        let mut bad = Vec::new();
        for cell in &want.cells {
            let (j, sig) = (cell.index as usize, cell.signal);
            let c = self.cell_at(r, sig, j, call);
            if out.accesses.is_some() {
                out.cell_reads.push(c as u32);
            }
            let got = s.cells.get(c).map(|c| c.value).ok_or_else(|| {
                format!(
                    "all_to_all_v: rank {r} has no cell `{}[{j}]`",
                    self.p.signals[sig].name
                )
            })?;
            if got != cell.value {
                let (arr, sent) = cell.sent;
                bad.push(format!(
                    "wrong result: rank {r}'s {}[{j}] after call {} holds {got}; rank {} sent {} row{} (min of its {}[{r}] = {sent} and the {} rows per block)",
                    self.p.signals[sig].name,
                    fmt_call(call),
                    cell.from,
                    cell.value,
                    if cell.value == 1 { "" } else { "s" },
                    self.p.arrays[arr].name,
                    lay.rows
                ));
            }
        }
        Ok(bad)
    }

    fn consume(&self, s: &mut State, r: usize, call: u16, out: &mut Outcome) {
        let b0 = r * self.code.blocks;
        let exp = match self.expected(r, call) {
            Ok(e) => e,
            Err(m) => {
                out.findings
                    .push(Finding::new("sim::runtime-error", m, None));
                return;
            }
        };
        if matches!(self.p.semantics, Semantics::Barrier) {
            return;
        }
        let a2av = match &self.p.semantics {
            Semantics::AllToAllV { .. } => match self.a2av_layout() {
                Ok(l) => Some(l),
                Err(m) => {
                    out.findings
                        .push(Finding::new("sim::runtime-error", m, None));
                    return;
                }
            },
            _ => None,
        };
        self.event(out, b0, call, None, || {
            (
                EvKind::Consume { ok: true },
                format!("host reads call {}'s output", fmt_call(call)),
            )
        });
        let mut bad: Vec<String> = Vec::new();
        let mut hint = (None, None);
        for (w, lo, hi, want) in &exp {
            let l = Loc {
                rank: r,
                buf: BufferRef::Window(*w),
                lo: *lo,
                hi: *hi,
            };
            let got = self.read(s, b0, &l, CONSUME, out);
            let mut pos = *lo;
            for (n, v) in got {
                if let Some(want) = want {
                    if bad.is_empty() && v != *want {
                        hint = self.wrong_result_hint(s, r, *w, pos, pos + n, call, &v);
                        let mut msg = self.mismatch(r, *w, pos, pos + n, &v, want, call);
                        if let Some(lay) = &a2av {
                            let j = pos / lay.block;
                            let (a, b) = (pos % lay.block, (pos + n - 1) % lay.block);
                            let sent = (*hi - j * lay.block) / lay.row;
                            let _ = write!(
                                msg,
                                " (block {j}, row{} {}; rank {j} sent {sent} row{} of its block {r})",
                                if a / lay.row == b / lay.row { "" } else { "s" },
                                if a / lay.row == b / lay.row {
                                    format!("{}", a / lay.row)
                                } else {
                                    format!("{}..={}", a / lay.row, b / lay.row)
                                },
                                if sent == 1 { "" } else { "s" },
                            );
                        }
                        bad.push(msg);
                    }
                }
                pos += n;
            }
        }
        match self.a2av_counts(s, r, call, out) {
            Ok(m) => bad.extend(m.into_iter().take(1)),
            Err(m) => out
                .findings
                .push(Finding::new("sim::runtime-error", m, None)),
        }
        if !bad.is_empty() {
            self.event(out, b0, call, None, || {
                (
                    EvKind::Consume { ok: false },
                    format!("call {}'s output is wrong", fmt_call(call)),
                )
            });
            self.mark_last(out, "sim::wrong-result");
            for msg in bad {
                let mut f = Finding::new("sim::wrong-result", msg, hint.0);
                f.help.clone_from(&hint.1);
                out.findings.push(f);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mismatch(
        &self,
        r: usize,
        w: WindowId,
        lo: u64,
        hi: u64,
        got: &Val,
        want: &Val,
        call: u16,
    ) -> String {
        let ts = self.code.tile_size.max(1) as u64;
        let tiles = if (hi - 1) / ts == lo / ts {
            format!(" (tile {})", lo / ts)
        } else {
            format!(" (tiles {}..={})", lo / ts, (hi - 1) / ts)
        };
        let mut missing = want.0.clone();
        let mut extra = Vec::new();
        for c in &got.0 {
            if let Some(i) = missing.iter().position(|m| m == c) {
                missing.remove(i);
            } else {
                extra.push(*c);
            }
        }
        let desc = |c: &Contrib| -> String {
            match c.win {
                crate::value::GARBAGE => format!(
                    "uninitialised scratch of rank {} (call {})",
                    c.rank,
                    fmt_call(c.call)
                ),
                INITIAL => format!(
                    "rank {}'s window content from before the first call",
                    c.rank
                ),
                w => {
                    let a = lo as i64 + c.shift;
                    format!(
                        "rank {}'s contribution of call {} ({}[{}..{}])",
                        c.rank,
                        fmt_call(c.call),
                        self.p.windows[w as usize].name,
                        a,
                        a + (hi - lo) as i64
                    )
                }
            }
        };
        let mut msg = format!(
            "wrong result: rank {r}'s output {}[{lo}..{hi}]{tiles} after call {}",
            self.p.windows[w].name,
            fmt_call(call)
        );
        if !missing.is_empty() {
            let m: Vec<String> = missing.iter().map(desc).collect();
            let _ = write!(msg, " lacks {}", m.join(", "));
        }
        if !extra.is_empty() {
            let e: Vec<String> = extra.iter().map(desc).collect();
            let _ = write!(
                msg,
                "{} holds {}",
                if missing.is_empty() { "" } else { ";" },
                e.join(", ")
            );
        }
        msg
    }

    // ---------------------------------------------------------------- events

    fn event(
        &self,
        out: &mut Outcome,
        p: usize,
        call: u16,
        stmt: Option<u32>,
        what: impl FnOnce() -> (EvKind, String),
    ) {
        if let Some(ev) = &mut out.events {
            let (kind, text) = what();
            let (rank, block) = self.who(p);
            ev.push(Event {
                step: 0,
                rank: rank as u32,
                block: (self.code.blocks > 1).then_some(block as u32),
                call: fmt_call(call) as u32,
                stmt: stmt.map(|x| self.code.stmts[x as usize].text.clone()),
                span: stmt.map(|x| self.code.stmts[x as usize].span),
                line: None,
                kind,
                text,
                mark: None,
            });
        }
    }

    fn mark_last(&self, out: &mut Outcome, code: &str) {
        if let Some(ev) = &mut out.events {
            if let Some(e) = ev.last_mut() {
                if e.mark.is_none() {
                    e.mark = Some(code.to_string());
                }
            }
        }
    }
}

fn insert_unit(units: &mut Vec<Unit>, u: Unit) {
    let i = units.partition_point(|x| x.key() <= u.key());
    units.insert(i, u);
}

impl Machine<'_> {
    /// Renumbers every epoch of every process to its rank among the epochs of
    /// that process still recorded in the state (its current epoch, epochs of
    /// recorded window accesses, call-entry epochs still to be checked). Every
    /// comparison the race and barrier checks make is between a clock entry
    /// and a recorded epoch, and the renumbering preserves all of those, so
    /// states that differ only in absolute epoch values become one state.
    pub fn canonicalize(&self, s: &mut State) {
        let np = s.procs.len();
        // A process's current epoch is still to be recorded unless a release ended it.
        let mut sets: Vec<Vec<u32>> = (0..np)
            .map(|q| {
                if s.procs[q].bump {
                    Vec::new()
                } else {
                    vec![s.procs[q].clock[q]]
                }
            })
            .collect();
        // Call-entry epochs are needed while some process may still leave that call.
        let live = s
            .procs
            .iter()
            .map(|q| match q.status {
                Status::Run => q.call as usize,
                Status::CallDone => q.call as usize + 1,
                Status::Finished | Status::Fault => usize::MAX,
            })
            .min()
            .unwrap_or(usize::MAX);
        for (q, pr) in s.procs.iter_mut().enumerate() {
            for (c, e) in pr.entries.iter_mut().enumerate() {
                if c < live {
                    *e = 0;
                } else if *e != 0 {
                    sets[q].push(*e);
                }
            }
        }
        for m in &s.mem {
            for (_, rec) in &m.acc.segs {
                for a in rec.write.iter().chain(rec.reads.iter()) {
                    sets[a.proc as usize].push(a.epoch);
                }
            }
        }
        for v in sets.iter_mut() {
            v.sort_unstable();
            v.dedup();
        }
        let f = |q: usize, v: u32| sets[q].partition_point(|e| *e <= v) as u32;
        let fix = |c: &mut Clock| {
            for (q, x) in c.iter_mut().enumerate() {
                *x = f(q, *x);
            }
        };
        for pr in s.procs.iter_mut() {
            fix(&mut pr.clock);
        }
        for (q, pr) in s.procs.iter_mut().enumerate() {
            for e in pr.entries.iter_mut().filter(|e| **e != 0) {
                *e = f(q, *e);
            }
        }
        for c in s.cells.iter_mut() {
            fix(&mut c.clock);
            for u in c.units.iter_mut() {
                fix(&mut u.clock);
            }
            for h in c.history.iter_mut() {
                fix(&mut h.clock);
                for u in h.units.iter_mut() {
                    fix(&mut u.clock);
                }
            }
        }
        for m in s.mem.iter_mut() {
            for (_, rec) in m.acc.segs.iter_mut() {
                if let Some(w) = rec.write.as_mut() {
                    w.epoch = f(w.proc as usize, w.epoch);
                }
                for r in rec.reads.iter_mut() {
                    r.epoch = f(r.proc as usize, r.epoch);
                }
            }
            m.acc.normalize();
        }
    }
}
