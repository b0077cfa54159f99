//! The many-writer rule of `stale-credit` with P symbolic, its second half (README, "The
//! reuse theorem", "Several writers"): a wait `W` of the owner that observes every credit of
//! the call must also count none of the next call's, so every writer's credit to the cell
//! in call m+1 is ordered after `W` of call m. For every body credit statement (pass B, the
//! writer) that reaches `W`'s cell (pass A, `me` the owner), either the writer is the owner
//! (program order), or a one-hop chain orders them (`value_next::first_hop`: a credit of the
//! owner that a wait of the writer cannot pass without):
//!
//! - the owner sends it after `W` (later in its program, outside `W`'s loops) and the
//!   writer waits for it anywhere in its call m: its call m+1 follows that wait; or
//! - the owner sends it anywhere in its call m+1 (after `W` of call m) and the writer waits
//!   for it before the credit (earlier in its program, outside the credit's loops):
//!   `value_next::chain`, the reused value cell's "not overwritten by the next call".
//!
//! Anything not shown is an open reason, never a violation (the enumerated route decides).

use super::extract::{PEv, PKind};
use super::oblig::Side;
use super::value_next::{chain, conj, first_hop, Hops};
use super::Ctx;
use crate::engine::sym::Lin;
use collc_spec::ir::*;

fn ov() -> String {
    "arithmetic overflow".into()
}

impl Ctx<'_> {
    /// Every credit statement of `credits` (pass B) reaching the cell of wait `w` (pass A)
    /// is ordered, in the next call, after `w`.
    pub(super) fn next_credits_after(&mut self, w: &PEv, credits: &[PEv]) -> Result<(), String> {
        if self.p.blocks.is_some() {
            return Err("several blocks per rank (not ordered with each other)".into());
        }
        let me_a = Lin::atom(self.a.me);
        let me_b = Lin::atom(self.b.me);
        for c in credits {
            if c.index.len() != w.index.len() {
                return Err("a signal indexed with a varying number of coordinates".into());
            }
            let mut cvars = vec![self.b.me];
            cvars.extend(c.loops.iter().map(|l| self.b.loops[*l].atom));
            let mut eqs = vec![(c.owner.clone(), me_a.clone())];
            eqs.extend(c.index.iter().cloned().zip(w.index.iter().cloned()));
            let (mc, conds) = self.solve_all(Side::B, &cvars, &eqs, &c.guard, &cvars)?;
            let writer = super::solve::lin(&mut self.run.syms, &me_b, &mc).ok_or_else(ov)?;
            let Some(premise) = conj(&w.guard, &conds) else {
                continue;
            };
            let saved = self.stats.clone();
            let late = chain(self, c, &mc, &writer, &premise, (&[], &[]), None);
            let Err(late) = late else {
                continue;
            };
            self.stats = saved;
            self.after_wait(w, c, &mc, &writer, &premise).map_err(|now| {
                format!("a writer's credit of the next call is not shown ordered after the owner's wait for the whole call ({now}; {late})")
            })?;
        }
        Ok(())
    }

    /// The first form: a credit of the owner after `w` (pass A) that a wait of the writer
    /// (pass B, anywhere in its call) cannot pass without.
    fn after_wait(
        &mut self,
        w: &PEv,
        c: &PEv,
        mc: &super::solve::Map,
        writer: &Lin,
        premise: &crate::engine::sym::Guard,
    ) -> Result<(), String> {
        let ne = self
            .run
            .syms
            .cmp(CmpOp::Ne, writer, &Lin::atom(self.a.me))
            .ok_or_else(ov)?;
        let Some(premise) = conj(premise, &[ne]) else {
            self.stats.items += 1;
            self.stats.literal += 1;
            return Ok(());
        };
        let call = self.p.call.map(|k| self.run.syms.param(k));
        let ns: Vec<PEv> = self
            .a
            .events
            .iter()
            .filter(|n| {
                n.is_add()
                    && self.p.signals[n.signal].kind == SignalKind::Credit
                    && n.pos() > w.pos()
                    && n.loops.iter().all(|l| !w.loops.contains(l))
                    && !self.a.exclusive(n, w)
            })
            .cloned()
            .collect();
        let ws: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|v| matches!(v.kind, PKind::Wait { .. }) && !self.b.exclusive(v, c))
            .cloned()
            .collect();
        let hops = Hops {
            mx: mc,
            writer,
            premise: &premise,
            a: (&[], &[]),
            call: call.as_ref(),
            reuse: None,
        };
        let why = "no credit of the owner after the wait that the writer waits for";
        first_hop(self, &ns, &ws, &hops, why)
    }
}
