//! Footprints for the partial-order reduction ([`crate::por`]): each
//! transition's notify or wait and window accesses, computed by one dry run,
//! and the queries on a state the reduction makes.

use super::state::{Outcome, State, Status};
use super::Machine;
use crate::code::Instr;
use collc_spec::ir::*;
use std::collections::HashMap;

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

impl Machine<'_> {
    /// Records the notify or wait at the process's pc without performing it.
    pub(super) fn dry_visible(&self, s: &mut State, p: usize, out: &mut Outcome) -> Option<DryOp> {
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
        if self.wraps(cell) {
            // A positive add may carry the int32 value past INT32_MAX and fail the wait.
            return false;
        }
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
}
