//! Names and descriptions for findings and the trace: processes, cells,
//! statements and credit units, and recording trace events.

use super::state::{Cell, Outcome, ACCUM, CONSUME, STAGE};
use super::{fmt_call, Machine};
use crate::code::Instr;
use crate::report::{EvKind, Event};
use std::fmt::Write as _;

impl Machine<'_> {
    /// A process's name: `rank 1` or `rank 1 block 0`.
    pub fn proc_name(&self, proc: usize) -> String {
        let (r, b) = self.who(proc);
        if self.code.blocks > 1 {
            format!("rank {r} block {b}")
        } else {
            format!("rank {r}")
        }
    }

    pub(super) fn cell_name(&self, idx: usize) -> String {
        let cpr = self.code.cells_per_rank.max(1);
        let world = self.code.world.max(1);
        let (inst, rank, local) = (idx / cpr / world, (idx / cpr) % world, idx % cpr);
        let sig = self.signal_of(local);
        let mut rem = local - self.code.signal_base[sig.index()];
        let dims = &self.code.signal_dims[sig.index()];
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

    pub(super) fn stmt_desc(&self, what: u32) -> String {
        match what {
            STAGE => "staging of its input".to_string(),
            CONSUME => "read of its output after the call".to_string(),
            s => format!("`{}`", self.code.stmts[(s & !ACCUM) as usize].text),
        }
    }

    pub(super) fn stmt_span(&self, what: u32) -> Option<collc_grammar::Span> {
        self.code
            .stmts
            .get((what & !ACCUM) as usize)
            .map(|s| s.span)
    }

    pub(super) fn units_desc(&self, c: &Cell) -> String {
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

    pub(super) fn instr_stmt(&self, pc: u32) -> Option<u32> {
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

    pub(super) fn event(
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

    pub(super) fn mark_last(&self, out: &mut Outcome, code: &str) {
        if let Some(ev) = &mut out.events {
            if let Some(e) = ev.last_mut() {
                if e.mark.is_none() {
                    e.mark = Some(code.to_string());
                }
            }
        }
    }
}
