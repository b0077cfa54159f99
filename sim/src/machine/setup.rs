//! Building the machine and its initial state: the instances of windows and
//! signal cells (one per call for `per call` buffers), the index of a cell or a
//! window instance in the state, and a process's evaluation context.

use super::state::{
    AccRec, Cell, Limits, Memory, Numbers, Outcome, Proc, State, Status, Tiles, WinMem,
};
use super::Machine;
use crate::code::{CExpr, Code, Ctx};
use crate::fingerprint::FpCache;
use crate::value::{Contrib, Segs, Val, INITIAL};
use collc_spec::ir::*;
use std::rc::Rc;

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
        let per_call_win = Id::range(nwin).any(|w| p.window_per_call(w));
        let per_call_sig = Id::range(p.signals.len()).any(|s| p.signal_per_call(s));
        Machine {
            p,
            code,
            calls,
            memory,
            limits,
            sticky_poll: false,
            first_call: 0,
            wrap: None,
            arrays,
            nwin,
            win_inst: if per_call_win { instances(p, calls) } else { 1 },
            cell_inst: if per_call_sig { instances(p, calls) } else { 1 },
            meanings: Default::default(),
            clocks: Default::default(),
            mono_credit: Default::default(),
            mono_busy: Default::default(),
        }
    }

    /// Index into `State::mem` of rank `rank`'s window `w` as used in `call`: a `per
    /// call` window has an instance per call (`call % k` when the protocol rotates `k`
    /// instances), a `reused` one is one buffer for every call.
    pub(super) fn mi(&self, rank: usize, w: WindowId, call: u16) -> usize {
        let inst = if self.p.window_per_call(w) {
            call as usize % self.win_inst.max(1)
        } else {
            0
        };
        (rank * self.nwin + w.index()) * self.win_inst + inst
    }

    /// The rank and window of an index into `State::mem`.
    pub(super) fn mem_owner(&self, m: usize) -> (usize, WindowId) {
        let per_rank = (self.nwin * self.win_inst).max(1);
        (
            m / per_rank,
            Id::new((m / self.win_inst.max(1)) % self.nwin.max(1)),
        )
    }

    /// Number of processes.
    pub fn nprocs(&self) -> usize {
        self.code.nprocs()
    }

    /// Rank and block of a process.
    pub fn who(&self, proc: usize) -> (usize, usize) {
        (proc / self.code.blocks, proc % self.code.blocks)
    }

    pub(super) fn is_credit(&self, cell: usize) -> bool {
        self.p
            .signals
            .get(self.signal_of(cell).index())
            .map(|s| s.kind)
            == Some(SignalKind::Credit)
    }

    /// Whether a cell belongs to a `monotonic` (epoch) signal: never reset, so it is
    /// not expected to be zero at exit and holds every earlier call's credits.
    pub(super) fn is_monotonic(&self, cell: usize) -> bool {
        self.p
            .signals
            .get(self.signal_of(cell).index())
            .is_some_and(|s| s.monotonic)
    }

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
                tiles: Tiles::default(),
                pending: Vec::new(),
                cache: Vec::new(),
                steps: 0,
                entries: Vec::new(),
                pin: None,
                fp: FpCache::default(),
                wait: Default::default(),
            })
            .collect();
        let cells = (0..self.code.world * self.code.cells_per_rank * self.cell_inst)
            .map(|_| {
                Rc::new(Cell {
                    value: 0,
                    units: Vec::new(),
                    clock: vec![0; np],
                    version: 0,
                    origin: None,
                    history: Vec::new(),
                    fp: FpCache::default(),
                })
            })
            .collect();
        let mut mem = Vec::new();
        for r in 0..self.code.world {
            for w in 0..self.nwin * self.win_inst {
                let len = self.code.window_len(Id::new(w / self.win_inst));
                mem.push(Rc::new(WinMem {
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
                    fp: FpCache::default(),
                    epochs: Default::default(),
                }));
            }
        }
        let mut s = State {
            procs,
            cells,
            mem: mem.into_iter().collect(),
            numbers: Numbers::default(),
        };
        self.seed_cells(&mut s);
        // Nothing orders the ranks' first calls: each host's staging and each process's
        // first accesses get an epoch of their own, which no other rank knows until a
        // notify -> wait chain carries it (as in every later call). With all epochs 0 they
        // were ordered before everything, as if a barrier preceded call 1.
        for r in 0..self.code.world {
            let b0 = r * self.code.blocks;
            s.procs[b0].bump = true;
            self.stage(&mut s, r, 0, out);
            let clock = s.procs[b0].clock.clone();
            for b in 0..self.code.blocks {
                self.start_call(&mut s, b0 + b, 0, &clock, out);
                s.procs[b0 + b].bump = true;
            }
        }
        for p in 0..np {
            self.run_invisible(&mut s, p, out);
        }
        s
    }

    /// Index into `State::cells` of a cell of rank `rank`'s signal, as used in
    /// `call`: a `per call` value signal (data, like pypto's separately allocated
    /// `recv_counts` buffer) has an instance per call; credit signals and `reused`
    /// value signals are the one reused signal buffer.
    pub(super) fn cell_index(
        &self,
        rank: usize,
        signal: SignalId,
        index: &[CExpr],
        ctx: &Ctx,
        call: u16,
    ) -> Result<usize, String> {
        let dims = &self.code.signal_dims[signal.index()];
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

    pub(super) fn cell_at(&self, rank: usize, signal: SignalId, flat: usize, call: u16) -> usize {
        let inst = if self.p.signal_per_call(signal) {
            call as usize % self.cell_inst.max(1)
        } else {
            0
        };
        (inst * self.code.world + rank) * self.code.cells_per_rank
            + self.code.signal_base[signal.index()]
            + flat
    }

    pub(super) fn ctx<'s>(&'s self, s: &'s State, p: usize) -> Ctx<'s> {
        let pr = &s.procs[p];
        let (r, _) = self.who(p);
        let call = (pr.call as usize).min(self.calls.saturating_sub(1));
        Ctx {
            slots: &pr.slots,
            arrays: &self.arrays[call][r],
            array_dims: &self.code.array_dims,
        }
    }
}

/// Instances of each `per call` buffer in a run of `calls` calls: one per call, or the
/// protocol's rotation `k` (call `c` uses instance `c % k`, so call `c + k` reuses call `c`'s).
fn instances(p: &Protocol, calls: usize) -> usize {
    let per_call = calls.max(1);
    p.per_call_rotation
        .map_or(per_call, |k| per_call.min(k.max(1) as usize))
}
