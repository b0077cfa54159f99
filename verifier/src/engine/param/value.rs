//! `value-signal` with P symbolic (README, "The parametric route", value signals): the
//! conditions of `crate::obligations::value_signal` for every world size at once, over the two generic
//! actors of the route (`P`, `me`, the block and every loop variable symbolic).
//!
//! For every `as value` signal:
//!
//! 1. *Set only*: no AtomicAdd statement on it.
//! 2. *One write per cell per call*: at a generic cell `(o, i)`, the executions of every
//!    Set statement that reach it, solved for the writer and counted in closed form (as
//!    `credit-balance` sums credits), are at most 1 — or several Sets ordered one after
//!    another by program order or a one-hop credit chain (`value_order.rs`).
//! 3. *Read after the write*: no wait on it passes on a value the cell holds before the
//!    call's Set — 0, and for a `reused` signal any value a Set writes (with the call index,
//!    the previous call's value, `value[call := call - 1]`; the call index is one opaque
//!    atom shared by every rank). With several ordered Sets, a wait that a Set of its call
//!    precedes in its owner's program order passes on no value of a Set ordered before
//!    another (it reads the call's last Set).
//! 4. *Host reads* (`meaning::output_signals`): every Set whose writer is not the owner is
//!    followed, in the writer's program order, by a credit notify whose cell the owner
//!    waits on with a threshold of at least 1, on a credit signal whose every cell receives
//!    at most one positive credit per call (so the wait cannot pass without it): the Set is
//!    ordered before the end of the owner's call. The notify's loop variables are solved
//!    from "its target is the owner", the wait's from "its cell is the notify's cell", and
//!    the conditions of both are implied by the Set's (Z3).
//! 5. *Not overwritten by the next call* (`reused` signals that are read): see
//!    `value_next.rs`.
//!
//! The credit edges of (4) rest on the reuse theorem (a wait never passes on credits of an
//! earlier call), so `credit-balance`, `op-exclusivity` and `stale-credit` must be proved
//! with P symbolic too. Anything not shown is an open reason, never a violation: the
//! enumerated route decides the obligation then, and the report says so.

use super::extract::{PEv, PKind};
use super::oblig::Side;
use super::solve::{self, GLin, Map};
use super::{Ctx, Outcome, Proof};
use crate::engine::smt::Prop;
use crate::engine::sym::{union, AtomId, CondV, Formula, Guard, Lin};
use collc_spec::ir::*;
use std::time::{Duration, Instant};

/// The credit obligations the host-read edges rely on.
const NEEDS: [&str; 3] = ["credit-balance", "op-exclusivity", "stale-credit"];

/// `value-signal` for the whole declared domain, or why not. `credits` is the route's
/// outcome for the credit obligations.
pub fn prove(p: &Protocol, credits: &Outcome, budget: Duration) -> Result<Proof, String> {
    let values: Vec<SignalId> = Id::range(p.signals.len())
        .filter(|s| p.signals[*s].kind == SignalKind::Value)
        .collect();
    if values.is_empty() {
        return Err("the protocol declares no value signal".into());
    }
    let mut cx = Ctx::new(p, Instant::now() + budget)?;
    for s in values {
        cx.value_signal(s, credits)?;
    }
    Ok(cx.stats.clone())
}

fn ov() -> String {
    "arithmetic overflow".into()
}

impl Ctx<'_> {
    fn value_signal(&mut self, s: SignalId, credits: &Outcome) -> Result<(), String> {
        let name = self.p.signals[s].name.clone();
        let on = |e: &&PEv| e.signal == s;
        if self.a.events.iter().filter(on).any(|e| e.is_add()) {
            return Err(format!("an AtomicAdd on value signal `{name}`"));
        }
        // Orderings through waits on self-clearing cells rest on the reuse theorem.
        let reuse = NEEDS.iter().find_map(|dep| {
            credits
                .open(dep)
                .map(|why| format!("{dep} is not proved with P symbolic ({why})"))
        });
        let followed = match self.once_per_call(s) {
            Ok(()) => Vec::new(),
            Err(one) => self.ordered_sets(s, reuse.as_deref()).map_err(|r| {
                format!("one Set per cell of `{name}` per call: {one}; several, ordered: {r}")
            })?,
        };
        let reused = !self.p.signal_per_call(s);
        let waits: Vec<PEv> = self
            .a
            .events
            .iter()
            .filter(on)
            .filter(|e| matches!(e.kind, PKind::Wait { .. }))
            .cloned()
            .collect();
        for w in &waits {
            self.not_before_set(s, w, reused, &followed)
                .map_err(|r| format!("a wait on `{name}` may pass before the call's Set: {r}"))?;
        }
        let host = collc_spec::meaning::output_signals(self.p).contains(&s);
        if !(host || reused && !waits.is_empty()) {
            return Ok(());
        }
        if host {
            let sets: Vec<PEv> = self
                .a
                .events
                .iter()
                .filter(on)
                .filter(|e| e.is_set())
                .cloned()
                .collect();
            for x in &sets {
                self.host_ordered(x, reuse.as_deref()).map_err(|r| {
                    format!("the host reads `{name}` after the owner's call, and a Set to it is not shown ordered before that: {r}")
                })?;
            }
        }
        if reused {
            super::value_next::next_call(self, s, &waits, host, reuse.as_deref())
                .map_err(|r| format!("`{name}` is `reused`, and a Set of the next call is not shown ordered after the read: {r}"))?;
        }
        Ok(())
    }

    /// The Set (or positive AtomicAdd, `adds`) statements' executions reaching a generic
    /// cell of `s`, counted, are at most 1.
    pub(super) fn at_most_one(&mut self, evs: &[PEv], s: SignalId) -> Result<(), String> {
        self.at_most_one_or(evs, s).map_err(super::NotShown::text)
    }

    /// [`Ctx::at_most_one`], with why not as data (refuted or open).
    pub(super) fn at_most_one_or(
        &mut self,
        evs: &[PEv],
        s: SignalId,
    ) -> Result<(), super::NotShown> {
        let open = super::NotShown::Open;
        let (o, i) = self.generic_cell(s).map_err(open)?;
        let mut sum: GLin = Vec::new();
        for e in evs {
            let mut one = e.clone();
            one.kind = PKind::Notify {
                op: NotifyOp::Set,
                value: Some(Lin::k(1)),
            };
            sum.extend(self.total(&one, &o, &i, None).map_err(open)?);
        }
        let n = solve::flat(&mut self.run.syms, &sum).ok_or_else(|| open(ov()))?;
        let d = Lin::k(1).sub(&n).ok_or_else(|| open(ov()))?;
        self.decide(&Vec::new(), Prop::Ge0(d))
    }

    fn once_per_call(&mut self, s: SignalId) -> Result<(), String> {
        let sets: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|e| e.signal == s && e.is_set())
            .cloned()
            .collect();
        self.at_most_one(&sets, s)
    }

    /// Condition 3 for wait `w` (pass A); `followed`: the Sets of `s` ordered before
    /// another Set of the call (`value_order.rs`).
    fn not_before_set(
        &mut self,
        s: SignalId,
        w: &PEv,
        reused: bool,
        followed: &[usize],
    ) -> Result<(), String> {
        let PKind::Wait { cmp, thr } = w.kind.clone() else {
            return Ok(());
        };
        let mut olds: Vec<(Lin, Option<CondV>)> = vec![(Lin::k(0), None)];
        if !followed.is_empty() && self.set_precedes(w) {
            // A Set of the call precedes the wait: it reads the call's last Set.
            olds = self
                .followed_values(s, followed)?
                .into_iter()
                .map(|v| (v, None))
                .collect();
        } else if reused {
            let mut values = Vec::new();
            for e in self.b.events.iter().filter(|e| e.signal == s && e.is_set()) {
                let PKind::Notify { value, .. } = &e.kind else {
                    continue;
                };
                values.push(
                    value
                        .clone()
                        .ok_or("a Set value that cannot be evaluated symbolically")?,
                );
            }
            match crate::engine::call::previous_values(self.p, &mut self.run.syms, &values) {
                Some(v) => {
                    olds = v
                        .into_iter()
                        .map(|(x, _, g)| (x, g.map(CondV::Sym)))
                        .collect()
                }
                None => olds.extend(values.into_iter().map(|v| (v, None))),
            }
        }
        for (x, when) in olds {
            let c = self.run.syms.cmp(cmp, &x, &thr).ok_or_else(ov)?;
            let mut g = w.guard.clone();
            for k in [Some(c), when].into_iter().flatten() {
                match k {
                    CondV::Const(true) => {}
                    CondV::Const(false) => {
                        g.clear();
                        break;
                    }
                    CondV::Sym(id) => g = union(&g, &vec![id]),
                }
            }
            if matches!(c, CondV::Const(false)) || matches!(when, Some(CondV::Const(false))) {
                self.stats.items += 1;
                self.stats.literal += 1;
                continue;
            }
            self.holds(&Vec::new(), Prop::Never(g))?;
        }
        Ok(())
    }

    /// Solves `eqs` for `vars` of pass `side`; every variable but `free_ok` must be solved.
    pub(super) fn solve_all(
        &mut self,
        side: Side,
        vars: &[AtomId],
        eqs: &[(Lin, Lin)],
        guard: &Guard,
        free_ok: &[AtomId],
    ) -> Result<(Map, Vec<CondV>), String> {
        let trips = self.trips(side);
        let mut eqs = eqs.to_vec();
        for c in guard {
            if let Formula::Eq0(l) = self.run.syms.conds[*c as usize].clone() {
                eqs.push((l, Lin::k(0)));
            }
        }
        let sol = solve::solve(
            &mut self.run.syms,
            vars,
            &trips,
            &eqs,
            super::invert::Mode::Exact,
        )
        .ok_or_else(ov)?;
        if sol.free.iter().any(|x| !free_ok.contains(x)) {
            return Err("a loop variable the chain does not determine".into());
        }
        let mut conds = sol.side;
        match solve::guard(&mut self.run.syms, guard, &sol.map).ok_or_else(ov)? {
            None => conds.push(CondV::Const(false)),
            Some(g) => conds.extend(g.into_iter().map(CondV::Sym)),
        }
        Ok((sol.map, conds))
    }

    /// `premise` implies every condition of `conds` (each closed separately).
    pub(super) fn implies(&mut self, premise: &Guard, conds: &[CondV]) -> Result<(), String> {
        self.implies_or(premise, conds)
            .map_err(super::NotShown::text)
    }

    /// [`Ctx::implies`], with why not as data (refuted or open).
    pub(super) fn implies_or(
        &mut self,
        premise: &Guard,
        conds: &[CondV],
    ) -> Result<(), super::NotShown> {
        for c in conds {
            match *c {
                CondV::Const(true) => {
                    self.stats.items += 1;
                    self.stats.literal += 1;
                }
                CondV::Const(false) => {
                    self.decide(&Vec::new(), Prop::Never(premise.clone()))?;
                }
                CondV::Sym(id) => {
                    if premise.contains(&id) {
                        self.stats.items += 1;
                        self.stats.literal += 1;
                        continue;
                    }
                    let n = self.run.syms.not(CondV::Sym(id));
                    let g = match n {
                        CondV::Sym(nid) => union(premise, &vec![nid]),
                        CondV::Const(_) => premise.clone(),
                    };
                    self.decide(&Vec::new(), Prop::Never(g))?;
                }
            }
        }
        Ok(())
    }

    /// The statements (pass B) that may raise a cell of signal `c`: AtomicAdds and Sets
    /// of a value not known to be `<= 0`.
    pub(super) fn credits_of(&mut self, c: SignalId) -> Vec<PEv> {
        let evs: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|e| e.signal == c && matches!(e.kind, PKind::Notify { .. }))
            .cloned()
            .collect();
        evs.into_iter()
            .filter(|e| {
                let PKind::Notify { value: Some(v), .. } = &e.kind else {
                    return true;
                };
                let Some(neg) = v.scale(-1) else { return true };
                !self.run.syms.nonneg(&neg)
            })
            .collect()
    }

    /// Condition 4 for Set `x` (pass A): ordered before the end of its owner's call.
    fn host_ordered(&mut self, x: &PEv, reuse: Option<&str>) -> Result<(), String> {
        let me = Lin::atom(self.a.me);
        let ne = self.run.syms.cmp(CmpOp::Ne, &me, &x.owner).ok_or_else(ov)?;
        let premise = match ne {
            CondV::Const(false) => {
                self.stats.items += 1;
                self.stats.literal += 1;
                return Ok(());
            }
            CondV::Const(true) => x.guard.clone(),
            CondV::Sym(id) => union(&x.guard, &vec![id]),
        };
        let notifies: Vec<PEv> = self
            .a
            .events
            .iter()
            .filter(|n| {
                n.is_add()
                    && self.p.signals[n.signal].kind == SignalKind::Credit
                    && !self.p.signals[n.signal].monotonic
                    && n.pos() > x.pos()
                    && n.loops.iter().all(|l| !x.loops.contains(l))
                    && !self.a.exclusive(n, x)
            })
            .cloned()
            .collect();
        let mut why = "no credit notify after the Set".to_string();
        if let (Some(r), false) = (reuse, notifies.is_empty()) {
            return Err(format!(
                "the chain's credit waits need the reuse theorem, and {r}"
            ));
        }
        for n in notifies {
            let saved = self.stats.clone();
            match self.edge_to_owner(x, &n, &premise) {
                Ok(()) => return Ok(()),
                Err(r) => {
                    self.stats = saved;
                    why = r;
                }
            }
        }
        Err(why)
    }

    /// Notify `n` (pass A, after Set `x`) reaches a cell its owner, the Set's owner, waits
    /// on with a threshold that needs it.
    fn edge_to_owner(&mut self, x: &PEv, n: &PEv, premise: &Guard) -> Result<(), String> {
        let PKind::Notify { value: Some(v), .. } = &n.kind else {
            return Err("a notify value that cannot be evaluated symbolically".into());
        };
        let v = v.clone();
        let nvars: Vec<AtomId> = n.loops.iter().map(|l| self.a.loops[*l].atom).collect();
        let (mn, mut conds) = self.solve_all(
            Side::A,
            &nvars,
            &[(n.owner.clone(), x.owner.clone())],
            &n.guard,
            &[],
        )?;
        let v = solve::lin(&mut self.run.syms, &v, &mn).ok_or_else(ov)?;
        let pos = self
            .run
            .syms
            .formula(Formula::Ge0(v.add(&Lin::k(-1)).ok_or_else(ov)?));
        conds.push(pos);
        let mut nidx = Vec::new();
        for l in &n.index {
            nidx.push(solve::lin(&mut self.run.syms, l, &mn).ok_or_else(ov)?);
        }
        let waits: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|w| w.signal == n.signal && matches!(w.kind, PKind::Wait { .. }))
            .cloned()
            .collect();
        let mut why = "its owner has no wait on the notified cell".to_string();
        for w in waits {
            let saved = self.stats.clone();
            let r = self.wait_needs(&w, x, &nidx, premise, &conds);
            match r {
                Ok(()) => {
                    // The wait cannot pass without the notify: one positive credit per cell.
                    let credits = self.credits_of(n.signal);
                    return self.at_most_one(&credits, n.signal).map_err(|r| {
                        format!(
                            "a cell of `{}` may receive more than one credit per call ({r})",
                            self.p.signals[n.signal].name
                        )
                    });
                }
                Err(r) => {
                    self.stats = saved;
                    why = r;
                }
            }
        }
        Err(why)
    }

    fn wait_needs(
        &mut self,
        w: &PEv,
        x: &PEv,
        nidx: &[Lin],
        premise: &Guard,
        nconds: &[CondV],
    ) -> Result<(), String> {
        let PKind::Wait { cmp, thr } = w.kind.clone() else {
            return Err("not a wait".into());
        };
        if w.index.len() != nidx.len() {
            return Err("a signal indexed with a varying number of coordinates".into());
        }
        let mut vars = vec![self.b.me];
        vars.extend(self.b.blk);
        vars.extend(w.loops.iter().map(|l| self.b.loops[*l].atom));
        let mut eqs = vec![(Lin::atom(self.b.me), x.owner.clone())];
        eqs.extend(w.index.iter().cloned().zip(nidx.iter().cloned()));
        let free: Vec<AtomId> = self.b.blk.into_iter().collect();
        let (mw, mut conds) = self.solve_all(Side::B, &vars, &eqs, &w.guard, &free)?;
        if let Some(b) = self.b.blk {
            if !mw.contains_key(&b) && conds.iter().any(|c| self.mentions(*c, b)) {
                return Err("a wait whose block the chain does not determine".into());
            }
        }
        let thr = solve::lin(&mut self.run.syms, &thr, &mw).ok_or_else(ov)?;
        conds.push(self.at_least_one(cmp, thr)?);
        conds.extend(nconds.iter().copied());
        self.implies(premise, &conds)
    }

    /// The wait `cmp thr` cannot pass on 0: `thr >= 1` for `>=`, `thr >= 0` for `>`.
    pub(super) fn at_least_one(&mut self, cmp: CmpOp, thr: Lin) -> Result<CondV, String> {
        let need = match cmp {
            CmpOp::Ge => thr.add(&Lin::k(-1)),
            CmpOp::Gt => Some(thr),
            _ => return Err("a wait that is not `>=` or `>`".into()),
        }
        .ok_or_else(ov)?;
        Ok(self.run.syms.formula(Formula::Ge0(need)))
    }

    pub(super) fn mentions(&self, c: CondV, a: AtomId) -> bool {
        match c {
            CondV::Const(_) => false,
            CondV::Sym(id) => self.run.syms.citers[id as usize].contains(&a),
        }
    }
}
