//! Several Sets per value cell per call, with P symbolic (README, "The `value-signal`
//! obligation": the rule of the enumerated route, `crate::obligations::value_signal`'s
//! `SetOrder`, for every world size at once).
//!
//! A value cell may be Set more than once in one call when the Sets are ordered one after
//! another: the NVSHMEM fix pattern where the reader clears its flag, acknowledges the
//! clear with a credit, and the writer Sets the flag only after it waited for that credit.
//!
//! 1. *Each statement once*: every Set statement, alone, reaches a generic cell at most
//!    once per call (counted in closed form, as [`Ctx::at_most_one`]).
//! 2. *Every two ordered*: for every two Set statements X and Y that can reach one cell in
//!    one call, one happens before the other on every execution that reaches a common
//!    cell ([`Ctx::set_before`]): both run on one rank and X precedes Y in program order
//!    outside Y's loops (or that rank is shown not to be Y's), or X's rank, after X and
//!    outside X's loops, sends a credit that Y's rank waits for before Y and outside Y's
//!    loops, and that wait cannot pass without it (the one-hop rule of `value_next.rs`,
//!    within one call: at most one positive credit per cell per call, the threshold at
//!    least 1, a monotonic threshold growing at least by the credit per call; the hop on a
//!    self-clearing cell rests on the reuse theorem). The chain uses credit signals only,
//!    never an edge of the value cell's own Sets.
//!
//! The statements ordered before another one are *followed*: the value they write is an
//! earlier value of the call. A wait that a Set of its own call precedes (its owner runs
//! that Set earlier in program order, on the wait's cell, whenever the wait runs) reads
//! the call's last Set: it must pass on no followed Set's value (condition 3 of
//! `value.rs` with these values in place of the values before the call). The ranking
//! (`value_rank.rs`) counts only the Sets that write the awaited value, and a Set that
//! does not must be ordered before every one that does. A value signal the host reads is
//! not covered (its host-read rule counts one Set per call).

use super::extract::{PEv, PKind};
use super::oblig::Side;
use super::solve;
use super::value_next::{conj, first_hop, Hops};
use super::Ctx;
use crate::engine::sym::{CondV, Lin};
use collc_spec::ir::*;

fn ov() -> String {
    "arithmetic overflow".into()
}

/// No loop of `x` encloses `y` too (loop indices of one pass or of the other: both passes
/// are copies of one program).
fn apart(x: &PEv, y: &PEv) -> bool {
    x.loops.iter().all(|l| !y.loops.contains(l))
}

impl Ctx<'_> {
    /// The Set statements (pass `side`) on value signal `s`.
    fn sets_of(&self, side: Side, s: SignalId) -> Vec<PEv> {
        let pass = match side {
            Side::A => &self.a,
            Side::B => &self.b,
        };
        pass.events
            .iter()
            .filter(|e| e.signal == s && e.is_set())
            .cloned()
            .collect()
    }

    /// Conditions 1 and 2: the span starts of the followed Set statements of `s` (ordered
    /// before another Set of the call), or why the Sets are not shown ordered.
    pub(super) fn ordered_sets(
        &mut self,
        s: SignalId,
        reuse: Option<&str>,
    ) -> Result<Vec<usize>, String> {
        if self.p.blocks.is_some() {
            return Err("several blocks per rank (not ordered with each other)".into());
        }
        if collc_spec::meaning::output_signals(self.p).contains(&s) {
            return Err("the host reads the signal (its rule counts one Set per call)".into());
        }
        let sb = self.sets_of(Side::B, s);
        let sa: Vec<PEv> = sb
            .iter()
            .map(|e| {
                self.twin_a(e)
                    .ok_or("a Set without its copy in the other pass")
            })
            .collect::<Result<_, _>>()?;
        for x in &sb {
            self.at_most_one(std::slice::from_ref(x), s)
                .map_err(|r| format!("one statement Sets a cell more than once per call ({r})"))?;
        }
        let mut followed = Vec::new();
        for i in 0..sb.len() {
            for j in i + 1..sb.len() {
                let saved = self.stats.clone();
                if self.at_most_one(&[sb[i].clone(), sb[j].clone()], s).is_ok() {
                    continue;
                }
                self.stats = saved;
                let first = match self.set_before(&sa[i], &sb[j], reuse) {
                    Ok(()) => i,
                    Err(r1) => {
                        self.set_before(&sa[j], &sb[i], reuse).map_err(|r2| {
                            format!("two Sets of one cell in one call are not shown ordered ({r1}; the other way: {r2})")
                        })?;
                        j
                    }
                };
                followed.push(sb[first].span.start);
            }
        }
        Ok(followed)
    }

    /// Set `x` (pass A) happens before every execution of Set `y` (pass B) that reaches
    /// the cell `x` writes, in the same call.
    pub(super) fn set_before(
        &mut self,
        x: &PEv,
        y: &PEv,
        reuse: Option<&str>,
    ) -> Result<(), String> {
        let saved = self.stats.clone();
        let r = self.set_before_or(x, y, reuse);
        if r.is_err() {
            self.stats = saved;
        }
        r
    }

    fn set_before_or(&mut self, x: &PEv, y: &PEv, reuse: Option<&str>) -> Result<(), String> {
        // Y's variables: it reaches the cell X writes.
        let mut yvars = vec![self.b.me];
        yvars.extend(y.loops.iter().map(|l| self.b.loops[*l].atom));
        let mut eqs = vec![(y.owner.clone(), x.owner.clone())];
        eqs.extend(y.index.iter().cloned().zip(x.index.iter().cloned()));
        let (my, conds) = self.solve_all(Side::B, &yvars, &eqs, &y.guard, &yvars)?;
        let Some(premise) = conj(&x.guard, &conds) else {
            self.stats.items += 1;
            self.stats.literal += 1;
            return Ok(());
        };
        let writer = solve::lin(&mut self.run.syms, &Lin::atom(self.b.me), &my).ok_or_else(ov)?;
        let reader = Lin::atom(self.a.me);
        // One rank: program order, else that case cannot happen.
        if !(x.pos() < y.pos() && apart(x, y)) {
            let eq = self
                .run
                .syms
                .cmp(CmpOp::Eq, &writer, &reader)
                .ok_or_else(ov)?;
            if let Some(g) = conj(&premise, &[eq]) {
                self.holds(&Vec::new(), crate::engine::smt::Prop::Never(g))
                    .map_err(|r| format!("one rank runs both Sets, not in program order ({r})"))?;
            }
        }
        let ne = self
            .run
            .syms
            .cmp(CmpOp::Ne, &writer, &reader)
            .ok_or_else(ov)?;
        let Some(premise) = conj(&premise, &[ne]) else {
            return Ok(());
        };
        let credits: Vec<PEv> = self
            .a
            .events
            .iter()
            .filter(|n| {
                n.is_add()
                    && self.p.signals[n.signal].kind == SignalKind::Credit
                    && n.pos() > x.pos()
                    && apart(x, n)
                    && !self.a.exclusive(n, x)
            })
            .cloned()
            .collect();
        let waits: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|w| {
                matches!(w.kind, PKind::Wait { .. })
                    && self.p.signals[w.signal].kind == SignalKind::Credit
                    && w.pos() < y.pos()
                    && apart(w, y)
                    && !self.b.exclusive(w, y)
            })
            .cloned()
            .collect();
        let call = self.p.call.map(|c| self.run.syms.param(c));
        let hops = Hops {
            mx: &my,
            writer: &writer,
            premise: &premise,
            a: (&[], &[]),
            call: call.as_ref(),
            reuse,
        };
        let why = "no credit after the first Set that the second Set's rank waits for before it";
        first_hop(self, &credits, &waits, &hops, why)
    }

    /// A Set of `w`'s own call precedes the value wait `w` (pass A) in its owner's program
    /// order: a Set statement before it, enclosing loops shared with it, that runs and
    /// reaches `w`'s cell whenever `w` runs.
    pub(super) fn set_precedes(&mut self, w: &PEv) -> bool {
        let sets: Vec<PEv> = self
            .sets_of(Side::A, w.signal)
            .into_iter()
            .filter(|x| x.pos() < w.pos() && x.loops.iter().all(|l| w.loops.contains(l)))
            .collect();
        for x in sets {
            let saved = self.stats.clone();
            let mut conds: Vec<CondV> = x.guard.iter().map(|c| CondV::Sym(*c)).collect();
            let same = std::iter::once((&x.owner, &w.owner)).chain(x.index.iter().zip(&w.index));
            let mut ok = x.index.len() == w.index.len();
            for (l, r) in same {
                match self.run.syms.cmp(CmpOp::Eq, l, r) {
                    Some(c) => conds.push(c),
                    None => ok = false,
                }
            }
            if ok && self.implies(&w.guard, &conds).is_ok() {
                return true;
            }
            self.stats = saved;
        }
        false
    }

    /// The values of the followed Sets (pass B) of `s`: what a wait that a Set of its call
    /// precedes must not pass on.
    pub(super) fn followed_values(
        &self,
        s: SignalId,
        followed: &[usize],
    ) -> Result<Vec<Lin>, String> {
        let mut out = Vec::new();
        for e in self.sets_of(Side::B, s) {
            if !followed.contains(&e.span.start) {
                continue;
            }
            let PKind::Notify { value, .. } = &e.kind else {
                continue;
            };
            out.push(
                value
                    .clone()
                    .ok_or("a Set value that cannot be evaluated symbolically")?,
            );
        }
        Ok(out)
    }

    /// True when some value signal has more than one Set statement (the ranking may then
    /// rest on [`Ctx::set_before`]'s hops, hence on the reuse theorem).
    pub(super) fn several_sets(&self) -> bool {
        (0..self.p.signals.len()).any(|s| {
            self.p.signals[s].kind == SignalKind::Value
                && self.sets_of(Side::A, Id::new(s)).len() > 1
        })
    }

    /// The pass-A copy of the pass-B statement `e`.
    pub(super) fn twin_a(&self, e: &PEv) -> Option<PEv> {
        self.a
            .events
            .iter()
            .find(|x| x.span == e.span && x.signal == e.signal)
            .cloned()
    }
}
