//! The obligations of the parametric route, one method each (see `mod.rs`).

use super::extract::{LoopKind, PEv, PKind, Pass};
use super::rank_key::Key;
use super::solve::{self, GLin, Map};
use super::Ctx;
use crate::engine::smt::Prop;
use crate::engine::sym::{AtomId, CondV, Formula, Guard, Lin};
use collc_spec::ir::*;
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Which pass an event belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    A,
    B,
}

/// A program point: the enclosing loops (statement, iteration value) and the position.
#[derive(Clone, Debug)]
pub(super) struct Point {
    pub(super) loops: Vec<(usize, Lin)>,
    pub(super) pos: (bool, usize),
    /// The rank's level at this point (progress only; `None`: program order alone).
    pub(super) level: Option<i64>,
    /// The phases of its items at every loop depth (progress only, `phase.rs`; empty:
    /// none).
    pub(super) phase: Vec<i64>,
}

fn ov() -> String {
    "arithmetic overflow".into()
}

fn unknown_var() -> String {
    "a loop variable outside its pass".into()
}

/// The waits on one credit signal, with their rounds and which pairs may share a cell.
struct WaitSet {
    signal: SignalId,
    waits: Vec<PEv>,
    /// Per wait, its loop of rounds (a variable the cell does not determine).
    rounds: Vec<Option<AtomId>>,
    share: Vec<Vec<bool>>,
}

impl WaitSet {
    /// The waits before wait `j` that may share its cell, in program order.
    fn before(&self, j: usize) -> impl Iterator<Item = usize> + '_ {
        (0..j).filter(move |i| self.share[*i][j])
    }
}

impl Ctx<'_> {
    pub(super) fn pass(&self, s: Side) -> &Pass {
        match s {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }

    pub(super) fn trips(&self, s: Side) -> HashMap<AtomId, Lin> {
        let pass = self.pass(s);
        let mut m = HashMap::new();
        m.insert(pass.me, self.world.clone());
        if let Some(b) = pass.blk {
            m.insert(b, self.blocks.clone());
        }
        for l in &pass.loops {
            m.insert(l.atom, l.trip.clone());
        }
        m
    }

    fn is_value(&self, s: SignalId) -> bool {
        self.p.signals[s].kind == SignalKind::Value
    }

    /// Fresh atoms for a generic cell of `s`: its owner and index.
    pub(super) fn generic_cell(&mut self, s: SignalId) -> Result<(Lin, Vec<Lin>), String> {
        let o = self.run.syms.new_iter(self.world.clone(), self.p.world);
        let mut idx = Vec::new();
        for d in self.p.signals[s].dims.clone() {
            let mut ev = crate::engine::exec::Evaluator {
                p: self.p,
                syms: &mut self.run.syms,
                env: &self.env,
                rank: None,
            };
            let dl = ev.expr(&d, self.p.signals[s].span).map_err(|_| {
                "a signal dimension that cannot be evaluated symbolically".to_string()
            })?;
            idx.push(Lin::atom(self.run.syms.new_iter(dl, self.p.world)));
        }
        let owner = match self.rotation.clone() {
            Some(c) => super::rotate::rank(&mut self.run.syms, &c, &Lin::atom(o), &self.world)
                .ok_or_else(ov)?,
            None => Lin::atom(o),
        };
        Ok((owner, idx))
    }

    /// Solves event `ev` of pass `side` for the cell `(owner, idx)`: the substitution,
    /// the guard under it (`None`: never reaches the cell) and the free variables.
    pub(super) fn reach(
        &mut self,
        side: Side,
        ev: &PEv,
        owner: &Lin,
        idx: &[Lin],
        pre: &Map,
        exclude: &[AtomId],
    ) -> Result<Option<(Map, Guard, Vec<AtomId>)>, String> {
        if ev.index.len() != idx.len() {
            return Err("a signal indexed with a varying number of coordinates".into());
        }
        let trips = self.trips(side);
        let vars: Vec<AtomId> = self
            .pass(side)
            .vars(ev)
            .into_iter()
            .filter(|x| !exclude.contains(x) && !pre.contains_key(x))
            .collect();
        let s = &mut self.run.syms;
        let mut eqs = vec![(solve::lin(s, &ev.owner, pre).ok_or_else(ov)?, owner.clone())];
        for (l, r) in ev.index.iter().zip(idx) {
            eqs.push((solve::lin(s, l, pre).ok_or_else(ov)?, r.clone()));
        }
        // Equalities on the path (`if me == root`) determine variables too; they stay in
        // the guard, where the solution makes them true.
        for c in &ev.guard {
            if let Formula::Eq0(l) = s.conds[*c as usize].clone() {
                eqs.push((solve::lin(s, &l, pre).ok_or_else(ov)?, Lin::k(0)));
            }
        }
        let pre_guard = solve::guard(s, &ev.guard, pre).ok_or_else(ov)?;
        let sol = self.solve_cell(&vars, &trips, &eqs, pre_guard)?;
        let mut map = pre.clone();
        for (k, v) in &sol.map {
            map.insert(*k, v.clone());
        }
        let s = &mut self.run.syms;
        let Some(mut g) = solve::guard(s, &ev.guard, &map).ok_or_else(ov)? else {
            return Ok(None);
        };
        // The pre-mapped variables' ranges join the solution's side conditions.
        let mut conds = sol.side;
        // A power of two the cell determines is its value on the path (next to the side
        // condition that it is one).
        for (pw, e) in &sol.pows {
            let [(pa, 1)] = pw.t.as_slice() else { continue };
            let s = &mut self.run.syms;
            let defining = s.formula(Formula::Eq0(pw.sub(e).ok_or_else(ov)?));
            let m: Map = [(*pa, e.clone())].into_iter().collect();
            let Some(ng) = solve::guard(s, &g, &m).ok_or_else(ov)? else {
                return Ok(None);
            };
            g = ng;
            for c in conds.iter_mut() {
                if let CondV::Sym(id) = *c {
                    if *c == defining {
                        *c = super::invert::is_power(s, e).ok_or_else(ov)?;
                    } else {
                        *c = solve::cond(s, id, &m).ok_or_else(ov)?;
                        *c = super::invert::below_power(s, *c, e).ok_or_else(ov)?;
                    }
                }
            }
        }
        let all = self.pass(side).vars(ev);
        for (x, v) in pre {
            if !all.contains(x) {
                continue;
            }
            let t = trips.get(x).ok_or_else(unknown_var)?;
            let t = solve::lin(&mut self.run.syms, t, &map).ok_or_else(ov)?;
            conds.extend(solve::within(&mut self.run.syms, v, &t).ok_or_else(ov)?);
        }
        for c in conds {
            match c {
                CondV::Const(true) => {}
                CondV::Const(false) => return Ok(None),
                CondV::Sym(id) => g.push(id),
            }
        }
        g.sort_unstable();
        g.dedup();
        Ok(Some((map, g, sol.free)))
    }

    fn value(&mut self, ev: &PEv, map: &Map) -> Result<Lin, String> {
        let PKind::Notify { value, .. } = &ev.kind else {
            return Ok(Lin::k(0));
        };
        let v = value
            .as_ref()
            .ok_or("a notify value that cannot be evaluated symbolically")?;
        solve::lin(&mut self.run.syms, v, map).ok_or_else(ov)
    }

    /// Sums (numeric loops) or counts (ranks, the actor) the free variables, innermost first.
    fn close(
        &mut self,
        side: Side,
        ev: &PEv,
        mut g: GLin,
        free: &[AtomId],
        map: &Map,
    ) -> Result<GLin, String> {
        let pass = self.pass(side).clone();
        let mut order: Vec<(AtomId, bool)> = ev
            .loops
            .iter()
            .rev()
            .map(|l| (pass.loops[*l].atom, pass.loops[*l].kind == LoopKind::Num))
            .collect();
        if let Some(b) = pass.blk {
            order.push((b, false));
        }
        order.push((pass.me, false));
        let trips = self.trips(side);
        for (x, num) in order {
            if !free.contains(&x) {
                continue;
            }
            let t = solve::lin(
                &mut self.run.syms,
                trips.get(&x).ok_or_else(unknown_var)?,
                map,
            )
            .ok_or_else(ov)?;
            g = if num {
                solve::sum(&mut self.run.syms, &g, x, &t)?
            } else {
                solve::count(&mut self.run.syms, &g, x, &t)?
            };
        }
        Ok(g)
    }

    /// Every execution of `ev` (pass B) that reaches the cell, summed.
    pub(super) fn total(
        &mut self,
        ev: &PEv,
        owner: &Lin,
        idx: &[Lin],
        extra: Option<CondV>,
    ) -> Result<GLin, String> {
        let mut ev = ev.clone();
        if let Some(CondV::Sym(c)) = extra {
            ev.guard = crate::engine::sym::union(&ev.guard, &vec![c]);
        }
        let Some((map, g, free)) = self.reach(Side::B, &ev, owner, idx, &Map::new(), &[])? else {
            return Ok(Vec::new());
        };
        let v = self.value(&ev, &map)?;
        self.close(Side::B, &ev, vec![(g, v)], &free, &map)
    }

    fn notifies_on(&self, s: SignalId) -> Vec<PEv> {
        self.b
            .events
            .iter()
            .filter(|e| e.signal == s && matches!(e.kind, PKind::Notify { .. }))
            .cloned()
            .collect()
    }

    pub(super) fn credit_balance(&mut self) -> Result<(), String> {
        for s in Id::range(self.p.signals.len()) {
            if self.is_value(s) {
                continue;
            }
            let evs = self.notifies_on(s);
            if evs.is_empty() {
                continue;
            }
            if evs.iter().any(|e| e.is_set()) {
                return Err(format!(
                    "`{}` is written with Set; the enumerated route decides Set-written credit cells",
                    self.p.signals[s].name
                ));
            }
            let (o, idx) = self.generic_cell(s)?;
            let mut net: GLin = Vec::new();
            for ev in &evs {
                net.extend(self.total(ev, &o, &idx, None)?);
            }
            let net = solve::flat(&mut self.run.syms, &net).ok_or_else(ov)?;
            if self.p.signals[s].monotonic {
                self.monotonic_balance(s, &o, &idx, &net)?;
                continue;
            }
            self.holds(&Vec::new(), Prop::Eq0(net)).map_err(|r| {
                format!(
                    "`{}`: the net credit per call is not shown 0 ({r})",
                    self.p.signals[s].name
                )
            })?;
        }
        Ok(())
    }

    pub(super) fn op_exclusivity(&mut self) -> Result<(), String> {
        let sets: Vec<PEv> = self
            .a
            .events
            .iter()
            .filter(|e| e.is_set())
            .cloned()
            .collect();
        for e1 in sets {
            let adds: Vec<PEv> = self
                .b
                .events
                .iter()
                .filter(|e| e.signal == e1.signal && e.is_add())
                .cloned()
                .collect();
            for e2 in adds {
                let Some((_, g2, _)) =
                    self.reach(Side::B, &e2, &e1.owner, &e1.index, &Map::new(), &[])?
                else {
                    self.stats.items += 1;
                    self.stats.literal += 1;
                    continue;
                };
                let g = crate::engine::sym::union(&e1.guard, &g2);
                self.holds(&Vec::new(), Prop::Never(g)).map_err(|r| {
                    format!(
                        "a Set and an AtomicAdd may reach one cell of `{}` ({r})",
                        self.p.signals[e1.signal].name
                    )
                })?;
            }
        }
        Ok(())
    }

    pub(super) fn point(&self, ev: &PEv, side: Side) -> Point {
        let pass = self.pass(side);
        Point {
            loops: ev
                .loops
                .iter()
                .map(|l| (pass.loops[*l].stmt, Lin::atom(pass.loops[*l].atom)))
                .collect(),
            pos: ev.pos(),
            level: None,
            phase: Vec::new(),
        }
    }

    /// The level of a statement: the highest level of a wait that can run before it
    /// (earlier in the text, not in the other branch of an `if`), so levels never
    /// decrease along an execution.
    pub(super) fn level_before(&self, ev: &PEv) -> i64 {
        self.a
            .events
            .iter()
            .filter(|w| {
                matches!(w.kind, PKind::Wait { .. })
                    && w.pos() < ev.pos()
                    && !self.a.exclusive(w, ev)
            })
            .map(|w| self.level_of_wait(w))
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// The level of a wait: its level before plus its own raise.
    pub(super) fn level_of_wait(&self, w: &PEv) -> i64 {
        self.level_before(w) + self.delta.get(&w.span.start).copied().unwrap_or(0)
    }

    /// The credits `ev` sends before a wait of level `lw`: all of them from a lower level,
    /// none from a higher one (`Break`); at one level, the ranks of a lower key first
    /// (`rank_key`), returned as `Continue` with `ev` guarded to the ranks of the same key
    /// whose program points decide.
    fn by_level(
        &mut self,
        ev: &mut PEv,
        owner: &Lin,
        idx: &[Lin],
        lw: i64,
    ) -> Result<ControlFlow<GLin, GLin>, String> {
        let ln = self.level_before(ev);
        if ln > lw {
            return Ok(ControlFlow::Break(Vec::new()));
        }
        if ln < lw {
            return Ok(ControlFlow::Break(self.total(ev, owner, idx, None)?));
        }
        let Some((less, same)) = self.key_split(lw)? else {
            return Ok(ControlFlow::Continue(Vec::new()));
        };
        let keyed = self.total(ev, owner, idx, Some(less))?;
        match same {
            CondV::Const(false) => return Ok(ControlFlow::Break(keyed)),
            CondV::Const(true) => {}
            CondV::Sym(c) => ev.guard = crate::engine::sym::union(&ev.guard, &vec![c]),
        }
        Ok(ControlFlow::Continue(keyed))
    }

    /// Credits that `ev` (pass B) sends to the cell at program points before `at`.
    pub(super) fn before(
        &mut self,
        ev: &PEv,
        owner: &Lin,
        idx: &[Lin],
        at: &Point,
    ) -> Result<GLin, String> {
        let mut ev = ev.clone();
        let keyed = match at.level {
            Some(lw) => match self.by_level(&mut ev, owner, idx, lw)? {
                ControlFlow::Break(done) => return Ok(done),
                ControlFlow::Continue(keyed) => keyed,
            },
            None => Vec::new(),
        };
        let ev = &ev;
        let Some((map, g, free)) = self.reach(Side::B, ev, owner, idx, &Map::new(), &[])? else {
            return Ok(keyed);
        };
        let v = self.value(ev, &map)?;
        let pass = self.b.clone();
        // Shared loops: the common prefix of the two loop nests.
        let mut k = 0;
        while k < ev.loops.len()
            && k < at.loops.len()
            && pass.loops[ev.loops[k]].stmt == at.loops[k].0
        {
            k += 1;
        }
        let shared: Vec<AtomId> = ev.loops[..k].iter().map(|l| pass.loops[*l].atom).collect();
        let actor: Vec<AtomId> = std::iter::once(pass.me).chain(pass.blk).collect();
        if k > 0 && actor.iter().any(|x| free.contains(x)) {
            return Err("several writers reach one cell inside a loop shared with its wait".into());
        }
        // Inner (unshared) loops first, then the actor if free (no shared loops then).
        let inner: Vec<AtomId> = free
            .iter()
            .copied()
            .filter(|x| !shared.contains(x))
            .collect();
        let mut full = self.close(Side::B, ev, vec![(g.clone(), v)], &inner, &map)?;
        let trips = self.trips(Side::B);
        // At the innermost shared loop, the items' phases first (`phase.rs`).
        let pe = if at.phase.is_empty() {
            0
        } else {
            self.phase(Side::B, ev, k)
        };
        let pa = at.phase.get(k).copied().unwrap_or(0);
        let mut lt: GLin = if (pe, ev.pos()) < (pa, at.pos) {
            full.clone()
        } else {
            Vec::new()
        };
        for lvl in (0..k).rev() {
            let b = shared[lvl];
            let a = at.loops[lvl].1.clone();
            match map.get(&b).cloned() {
                Some(e) => {
                    // b is determined by the cell: [e < a] * full + [e == a] * lt
                    let s = &mut self.run.syms;
                    let d = a.sub(&e).and_then(|x| x.add(&Lin::k(-1))).ok_or_else(ov)?;
                    let less = s.formula(Formula::Ge0(d));
                    let eq = s.formula(Formula::Eq0(a.sub(&e).ok_or_else(ov)?));
                    let mut next = solve::gand(&full, less);
                    next.extend(solve::gand(&lt, eq));
                    lt = next;
                }
                None => {
                    if pass
                        .loops
                        .iter()
                        .any(|l| l.atom == b && l.kind == LoopKind::Rank)
                    {
                        return Err("a loop over ranks shared by a notify and a wait that the cell does not determine".into());
                    }
                    let t = solve::lin(
                        &mut self.run.syms,
                        trips.get(&b).ok_or_else(unknown_var)?,
                        &map,
                    )
                    .ok_or_else(ov)?;
                    let s = &mut self.run.syms;
                    let part = solve::sum(s, &full, b, &a)?;
                    let m: Map = [(b, a.clone())].into_iter().collect();
                    let mut next = part;
                    next.extend(solve::gsubst(s, &lt, &m)?);
                    lt = next;
                    full = solve::sum(s, &full, b, &t)?;
                }
            }
        }
        lt.extend(keyed);
        Ok(lt)
    }

    /// Deadlock freedom (and with it wait-reachable): every wait's threshold is
    /// reached by the credits sent at earlier program points; only owners lower cells.
    pub(super) fn progress(&mut self) -> Result<(), String> {
        self.no_remote_decrease()?;
        let first = self.progress_ranked(false);
        if first.is_ok() || !self.phasable() {
            return first;
        }
        // With phases inside loop iterations (`phase.rs`), after the ranking without them
        // failed: what it proves stays proved, its error is the one told.
        let named = self.named.len();
        let second = self.progress_ranked(true);
        if second.is_err() {
            self.named.truncate(named);
            self.phases.clear();
            return first;
        }
        second
    }

    /// The ranking with each candidate key, with or without phases.
    fn progress_ranked(&mut self, phased: bool) -> Result<(), String> {
        self.phased = phased;
        let waits: Vec<PEv> = self
            .a
            .events
            .iter()
            .filter(|e| matches!(e.kind, PKind::Wait { .. }))
            .cloned()
            .collect();
        // One key for the whole call, each candidate in turn (`rank_key`), then a key per
        // level chosen from all of them. The error told is program order's.
        let cands = self.key_candidates();
        let uniform = cands.iter().map(|k| vec![k.clone()]);
        let mut err = None;
        for choice in uniform.chain(std::iter::once(cands.clone())) {
            let named = self.named.len();
            self.delta.clear();
            self.phases.clear();
            let r = self.ranked(&waits, &choice);
            // Only program order's counterexamples name world sizes.
            if choice != [None] {
                self.named.truncate(named);
            }
            if r.is_ok() {
                return r;
            }
            if choice == [None] {
                err = Some(r);
            }
        }
        err.unwrap_or_else(|| Err("no rank key ranks the waits".into()))
    }

    /// The ranking by (level, key of the level, program point), each level's key the
    /// first of `cands` that ranks the first wait checked at that level in a round.
    fn ranked(&mut self, waits: &[PEv], cands: &[Key]) -> Result<(), String> {
        // Rank waits by (level, program point); a straight-line wait that is not shown
        // reached is raised above every notify on its signal, and everything is checked
        // again (at most one round per straight-line wait, plus one).
        let rounds = if self.phased {
            waits.len() + 1
        } else {
            waits.iter().filter(|w| self.alone_in_loops(w)).count() + 1
        };
        let mut last = Ok(());
        for _ in 0..rounds {
            last = Ok(());
            self.keys.clear();
            let mut raised = false;
            for w in waits {
                if let Err(e) = self.reached_keyed(w, cands) {
                    if last.is_ok() {
                        last = Err(e);
                    }
                    if self.alone_in_loops(w) {
                        let top = self
                            .b
                            .events
                            .iter()
                            .filter(|n| {
                                n.signal == w.signal
                                    && (n.is_add() || self.is_value(w.signal) && n.is_set())
                            })
                            .map(|n| self.level_before(n))
                            .max()
                            .unwrap_or(0);
                        let d = top + 1 - self.level_before(w);
                        if d > self.delta.get(&w.span.start).copied().unwrap_or(0) {
                            self.delta.insert(w.span.start, d);
                            raised = true;
                        }
                    } else if self.phased && self.raise_phase(w) {
                        raised = true;
                    }
                }
            }
            if last.is_ok() || !raised {
                break;
            }
        }
        last
    }

    /// True when no other notify or wait shares a loop with `w` (a straight-line wait,
    /// or a loop of waits only, e.g. `for p in peers { wait c[p] >= 1; }`): raising its
    /// level keeps levels non-decreasing along every execution, loop back edges included.
    fn alone_in_loops(&self, w: &PEv) -> bool {
        w.loops.is_empty()
            || self
                .a
                .events
                .iter()
                .all(|e| e.span == w.span || !e.loops.iter().any(|l| w.loops.contains(l)))
    }

    /// The wait's threshold is reached by the credits sent at lower ranks (a wait on a
    /// value signal: by a Set of the awaited value, `value_rank.rs`).
    pub(super) fn reached(&mut self, w: &PEv) -> Result<(), String> {
        let mut at = self.point(w, Side::A);
        at.level = Some(self.level_of_wait(w));
        at.phase = self.phases_of(w);
        if self.is_value(w.signal) {
            return self.value_reached(w, &at);
        }
        let need = self.need(w)?;
        let credit = self.credit_before(w, &w.owner.clone(), &w.index.clone(), &at)?;
        let d = credit.sub(&need).ok_or_else(ov)?;
        self.holds(&w.guard, Prop::Ge0(d)).map_err(|r| {
            format!(
                "a wait on `{}` is not shown reached by credits sent before it ({r})",
                self.p.signals[w.signal].name
            )
        })
    }

    fn need(&mut self, w: &PEv) -> Result<Lin, String> {
        if self.is_value(w.signal) {
            return Err("a wait on a value signal".into());
        }
        if self
            .b
            .events
            .iter()
            .any(|e| e.signal == w.signal && e.is_set())
        {
            return Err("a wait on a cell written with Set".into());
        }
        let PKind::Wait { cmp, thr } = &w.kind else {
            return Err("not a wait".into());
        };
        match cmp {
            CmpOp::Ge => Ok(thr.clone()),
            CmpOp::Gt => thr.add(&Lin::k(1)).ok_or_else(ov),
            _ => Err(format!("a `{}` wait on a counter", cmp.as_str())),
        }
    }

    pub(super) fn credit_before(
        &mut self,
        w: &PEv,
        owner: &Lin,
        idx: &[Lin],
        at: &super::oblig::Point,
    ) -> Result<Lin, String> {
        let evs = self.notifies_on(w.signal);
        let mut sum: GLin = Vec::new();
        for ev in &evs {
            sum.extend(self.before(ev, owner, idx, at)?);
        }
        solve::flat(&mut self.run.syms, &sum).ok_or_else(ov)
    }

    /// Only the owner of a cell may send it a credit that can be negative.
    fn no_remote_decrease(&mut self) -> Result<(), String> {
        let evs: Vec<PEv> = self.b.events.clone();
        for ev in evs {
            let PKind::Notify { value, .. } = &ev.kind else {
                continue;
            };
            if self.is_value(ev.signal) {
                continue;
            }
            let nonneg = match value {
                Some(v) => self.run.syms.lb(v).is_some_and(|x| x >= 0),
                None => false,
            };
            if nonneg {
                continue;
            }
            let local = ev.owner == self.b.rank;
            if !local {
                let me = self.b.rank.clone();
                let d = ev.owner.sub(&me).ok_or_else(ov)?;
                let v = value.clone().unwrap_or(Lin::k(-1));
                // owner == me, or the value is not negative
                let s = &mut self.run.syms;
                let same = s.formula(Formula::Eq0(d));
                let pos = s.formula(Formula::Ge0(v));
                let ok = s.junction(false, vec![same, pos]);
                let bad = s.not(ok);
                let mut g = ev.guard.clone();
                match bad {
                    CondV::Const(false) => continue,
                    CondV::Const(true) => {
                        return Err("a rank lowers a credit cell on another rank".into())
                    }
                    CondV::Sym(id) => g.push(id),
                }
                g.sort_unstable();
                g.dedup();
                self.holds(&Vec::new(), Prop::Never(g))
                    .map_err(|r| format!("a rank may lower a credit cell on another rank ({r})"))?;
            }
        }
        Ok(())
    }

    /// Stale credits: a wait needs more than what was sent before the previous wait on
    /// its cell (the previous iteration of its loop of rounds, the previous wait
    /// statement on the same cells, or the last iteration of an earlier loop's wait),
    /// less what the waiting actor took back itself between the two (`taken_between`).
    pub(super) fn stale_credit(&mut self) -> Result<(), String> {
        for s in Id::range(self.p.signals.len()) {
            if self.is_value(s) {
                continue;
            }
            if self.b.events.iter().any(|e| e.signal == s && e.is_set()) {
                continue;
            }
            let waits: Vec<PEv> = self
                .a
                .events
                .iter()
                .filter(|e| e.signal == s && matches!(e.kind, PKind::Wait { .. }))
                .cloned()
                .collect();
            if !waits.is_empty() && self.many_writers(s)? {
                self.observes_all(s, &waits)?;
            }
            let rounds = self.rounds(s, &waits)?;
            let share = self.shares(&waits)?;
            let set = WaitSet {
                signal: s,
                waits,
                rounds,
                share,
            };
            for j in 0..set.waits.len() {
                self.stale_wait(&set, j)?;
            }
        }
        Ok(())
    }

    /// The round of each wait on signal `s`: its variable the cell does not determine.
    fn rounds(&mut self, s: SignalId, waits: &[PEv]) -> Result<Vec<Option<AtomId>>, String> {
        let mut rounds: Vec<Option<AtomId>> = Vec::new();
        for w in waits {
            let (o, idx) = self.generic_cell(s)?;
            let free = match self.reach(Side::A, w, &o, &idx, &Map::new(), &[])? {
                Some((_, _, free)) => free,
                None => Vec::new(),
            };
            match free.as_slice() {
                [] => rounds.push(None),
                [r] if self
                    .a
                    .loops
                    .iter()
                    .any(|l| l.atom == *r && l.kind == LoopKind::Num) =>
                {
                    rounds.push(Some(*r))
                }
                _ => {
                    return Err(format!(
                    "a wait on `{}` repeats over more than one loop the cell does not determine",
                    self.p.signals[s].name
                ))
                }
            }
        }
        Ok(rounds)
    }

    /// Which pairs of waits may share a cell.
    fn shares(&mut self, waits: &[PEv]) -> Result<Vec<Vec<bool>>, String> {
        let m = waits.len();
        let mut share = vec![vec![false; m]; m];
        for i in 0..m {
            for j in i + 1..m {
                let sh = self.may_share(&waits[i], &waits[j])?;
                share[i][j] = sh;
                share[j][i] = sh;
            }
        }
        Ok(share)
    }

    /// Wait `j` of the set against the wait before it on its cell.
    fn stale_wait(&mut self, set: &WaitSet, j: usize) -> Result<(), String> {
        let w = set.waits[j].clone();
        let need = self.need(&w)?;
        match set.rounds[j] {
            Some(r) => self.stale_round(set, j, &need, r),
            None => self.stale_once(set, j, &need),
        }
    }

    /// A wait repeated over its loop of rounds `r`: against the previous wait of its round
    /// (or the last of the previous round, or as a credit window), and in the first round
    /// against the last wait before the loop.
    fn stale_round(
        &mut self,
        set: &WaitSet,
        j: usize,
        need: &Lin,
        r: AtomId,
    ) -> Result<(), String> {
        let (waits, rounds) = (&set.waits, &set.rounds);
        let w = &waits[j];
        let mates: Vec<usize> = (0..waits.len())
            .filter(|i| (*i == j || set.share[*i][j]) && rounds[*i] == Some(r))
            .collect();
        let q = mates.iter().position(|x| *x == j).unwrap_or(0);
        if q > 0 {
            return self.stale_pair(w, need, &waits[mates[q - 1]], Map::new(), None);
        }
        let r1 = Lin::atom(r).add(&Lin::k(-1)).ok_or_else(ov)?;
        let later = self.run.syms.formula(Formula::Ge0(r1.clone()));
        let last = mates[mates.len() - 1];
        let pre: Map = [(r, r1)].into_iter().collect();
        if let Err(same) = self.stale_pair(w, need, &waits[last], pre, Some(later)) {
            // A producer running K rounds ahead: the wait pairs with the
            // writers' round K behind (a credit window).
            if mates.len() > 1 {
                return Err(same);
            }
            if let Err(e) = self.window_pair(w, need, r) {
                return Err(format!("{same}; as a credit window: {e}"));
            }
        }
        let outside = set.before(j).filter(|i| rounds[*i] != Some(r)).last();
        if let Some(i) = outside {
            let first = self.run.syms.formula(Formula::Eq0(Lin::atom(r)));
            let pre = self.last_iteration(rounds[i])?;
            self.stale_pair(w, need, &waits[i], pre, Some(first))?;
        }
        Ok(())
    }

    /// A wait outside any loop of rounds: against the last wait before it on its cell; the
    /// first wait of a call on a monotonic cell needs a credit of its own call (or lags by
    /// whole calls).
    fn stale_once(&mut self, set: &WaitSet, j: usize, need: &Lin) -> Result<(), String> {
        let s = set.signal;
        let w = &set.waits[j];
        if let Some(i) = set.before(j).last() {
            let pre = self.last_iteration(set.rounds[i])?;
            if let Err(e) = self.stale_pair(w, need, &set.waits[i], pre.clone(), None) {
                self.stale_unless_ran(set, j, i, need, pre).map_err(|_| e)?;
            }
        } else if self.p.signals[s].monotonic && self.lags_whole_calls(w, need) {
            // Lagging by whole calls (`>= call - 1`): every credit of an
            // earlier call, as `obligations::epoch::own_call` accepts it.
            self.stats.items += 1;
            self.stats.literal += 1;
        } else if self.p.signals[s].monotonic {
            // The first wait of a call on a monotonic cell: the cell holds
            // every earlier call's credits, so it must need one of its own.
            let d = need.add(&Lin::k(-1)).ok_or_else(ov)?;
            self.holds(&w.guard, Prop::Ge0(d)).map_err(|e| {
                format!(
                    "a wait on the monotonic `{}` is not shown to need a credit of its own call ({e})",
                    self.p.signals[s].name
                )
            })?;
        } else {
            self.stats.items += 1;
            self.stats.literal += 1;
        }
        Ok(())
    }

    /// Wait `j` after wait `i` of a loop of rounds that runs only from some round on (its
    /// conditions on the round are `r >= K`-like, `Self::runs_from_some_round`): where `i`
    /// reaches `j`'s cell in the last round, against it; where it does not, `i` reached that
    /// cell in no round, and `j` is the first wait of the call on its cell (only when no
    /// other wait comes before `i` and the cell is not monotonic: the first-wait rule of
    /// `stale_once`).
    fn stale_unless_ran(
        &mut self,
        set: &WaitSet,
        j: usize,
        i: usize,
        need: &Lin,
        pre: Map,
    ) -> Result<(), String> {
        let no = || "not a wait that runs from some round on".to_string();
        let (w, prev) = (&set.waits[j], &set.waits[i]);
        let r = set.rounds[i].ok_or_else(no)?;
        if set.before(i).next().is_some()
            || self.p.signals[set.signal].monotonic
            || !self.runs_from_some_round(prev, r)
        {
            return Err(no());
        }
        let Some((_, pg, pfree)) = self.reach_prev(w, prev, &pre)? else {
            // It never reaches the cell: the first wait of the call on it.
            self.stats.items += 1;
            self.stats.literal += 1;
            return Ok(());
        };
        if !pfree.is_empty() {
            return Err(no());
        }
        let pc = self
            .run
            .syms
            .junction(true, pg.iter().map(|c| CondV::Sym(*c)).collect());
        self.stale_pair(w, need, prev, pre, Some(pc))?;
        self.stats.items += 1;
        self.stats.literal += 1;
        Ok(())
    }

    /// True when every condition on the round `r` in `w`'s path is `a·r + c >= 0` with
    /// `a > 0` (or the negation of one with `a < 0`): once true, true in every later round,
    /// so a wait that does not run in the last round ran in none.
    fn runs_from_some_round(&self, w: &PEv, r: AtomId) -> bool {
        let s = &self.run.syms;
        w.guard.iter().all(|c| {
            if !crate::engine::sym::cond_mentions(s, *c, r) {
                return true;
            }
            let up = |l: &Lin, sign: i64| l.coeff(r) * sign > 0 && !s.nested(l, r);
            match &s.conds[*c as usize] {
                Formula::Ge0(l) => up(l, 1),
                Formula::Not(x) => matches!(&s.conds[*x as usize], Formula::Ge0(l) if up(l, -1)),
                _ => false,
            }
        })
    }

    /// The one wait of a call on a monotonic cell lags by whole calls (LANGUAGE.md §5.7.1):
    /// its threshold's growth is a constant `N > 0` (the cell's per-call credit, which
    /// `credit-balance` proves) and its reduced threshold `need` a multiple of `N` (its
    /// constant and every coefficient), so where `need <= 0` it needs every credit of an
    /// earlier call, and elsewhere one of its own.
    fn lags_whole_calls(&self, w: &PEv, need: &Lin) -> bool {
        let n = self
            .growth
            .get(&w.span.start)
            .and_then(|b| b.as_const())
            .unwrap_or(0);
        n > 0 && need.c % n == 0 && need.t.iter().all(|(_, k)| k % n == 0)
    }

    /// The positive body credits of signal `s`, as notify statements of pass B.
    fn body_credits(&mut self, s: SignalId) -> Vec<PEv> {
        let evs: Vec<PEv> = self.notifies_on(s);
        evs.into_iter()
            .filter(|e| {
                !e.epilogue
                    && e.is_add()
                    && match &e.kind {
                        PKind::Notify { value: Some(v), .. } => {
                            self.run.syms.ub(v).is_none_or(|x| x > 0)
                        }
                        _ => true,
                    }
            })
            .collect()
    }

    /// True when a cell of `s` may receive credits from more than one (rank, block)
    /// in one call: a statement whose writer the cell does not determine, or two
    /// statements whose writers differ — unless every cell is shown to receive at most
    /// one body credit per call ([`Ctx::one_credit_per_cell`]).
    fn many_writers(&mut self, s: SignalId) -> Result<bool, String> {
        let (o, idx) = self.generic_cell(s)?;
        let actor: Vec<AtomId> = std::iter::once(self.b.me).chain(self.b.blk).collect();
        let mut writer: Option<Vec<Lin>> = None;
        let mut many = false;
        for e in self.body_credits(s) {
            let Some((map, _, free)) = self.reach(Side::B, &e, &o, &idx, &Map::new(), &[])? else {
                continue;
            };
            if actor.iter().any(|x| free.contains(x)) {
                many = true;
                break;
            }
            let w: Vec<Lin> = actor.iter().filter_map(|x| map.get(x).cloned()).collect();
            match &writer {
                None => writer = Some(w),
                Some(prev) if *prev == w => {}
                Some(_) => {
                    many = true;
                    break;
                }
            }
        }
        Ok(many && !self.one_credit_per_cell(s))
    }

    /// Every cell of `s` receives at most one body credit execution per call (Z3, the
    /// executions counted at the generic cell), and no credit statement of `s` reads the
    /// call index: one writer per cell, the same in every call (statements with different
    /// writers reach different cells, like a release sent by rank 0 to the leaders and by
    /// each leader to its members), so the single-writer argument of the reuse theorem
    /// applies. Not shown (a Z3 answer other than unsat included): `false`.
    fn one_credit_per_cell(&mut self, s: SignalId) -> bool {
        let credits = self.body_credits(s);
        if let Some(c) = self
            .p
            .call
            .map(|c| self.run.syms.intern(crate::engine::sym::Atom::Param(c)))
        {
            let sy = &self.run.syms;
            let reads = |e: &PEv| {
                e.cell_or_guard_mentions(sy, c)
                    || match &e.kind {
                        PKind::Notify { value: Some(v), .. } => {
                            crate::engine::sym::mentions(sy, v, c)
                        }
                        _ => true,
                    }
            };
            if credits.iter().any(reads) {
                return false;
            }
        }
        let saved = self.stats.clone();
        let named = self.named.len();
        if self.at_most_one(&credits, s).is_ok() {
            return true;
        }
        self.stats = saved;
        self.named.truncate(named);
        false
    }

    /// Several writers, one counter: the owner resets a call's credits only after a
    /// wait that has seen every credit of the call (its threshold is at least the
    /// call's total), so it takes back no credit still in flight and has been ordered
    /// after every writer of the call. The
    /// single-writer prefix argument of the reuse theorem does not hold for unordered
    /// writers (README, "The reuse theorem").
    fn observes_all(&mut self, s: SignalId, waits: &[PEv]) -> Result<(), String> {
        let (o, idx) = self.generic_cell(s)?;
        let mut total: GLin = Vec::new();
        for e in self.body_credits(s) {
            total.extend(self.total(&e, &o, &idx, None)?);
        }
        let total = solve::flat(&mut self.run.syms, &total).ok_or_else(ov)?;
        let mut sees = Vec::new();
        let mut full: Vec<(PEv, CondV)> = Vec::new();
        for w in waits {
            let Some(wb) = self.twin(w) else {
                continue;
            };
            let Some((map, g, free)) = self.reach(Side::B, &wb, &o, &idx, &Map::new(), &[])? else {
                continue;
            };
            if !free.is_empty() {
                continue;
            }
            let need = self.need(&wb)?;
            let need = solve::lin(&mut self.run.syms, &need, &map).ok_or_else(ov)?;
            let d = need.sub(&total).ok_or_else(ov)?;
            let mut cs: Vec<CondV> = g.iter().map(|c| CondV::Sym(*c)).collect();
            cs.push(self.run.syms.formula(Formula::Ge0(d)));
            let one = self.run.syms.junction(true, cs);
            sees.push(one);
            full.push((w.clone(), one));
        }
        let sy = &mut self.run.syms;
        let credited = sy.formula(Formula::Ge0(total.add(&Lin::k(-1)).ok_or_else(ov)?));
        let any = sy.junction(false, sees);
        let none = sy.not(any);
        let bad = sy.junction(true, vec![credited, none]);
        let g = match bad {
            CondV::Const(false) => return Ok(()),
            CondV::Const(true) => {
                return Err(format!(
                    "`{}` has several writers per cell and no wait sees every credit of a call before the reset",
                    self.p.signals[s].name
                ))
            }
            CondV::Sym(id) => vec![id],
        };
        self.holds(&Vec::new(), Prop::Never(g)).map_err(|r| {
            format!(
                "`{}` has several writers per cell and no wait is shown to see every credit of a call before the reset ({r})",
                self.p.signals[s].name
            )
        })?;
        self.next_after_full(s, credited, &full)
    }

    /// The other direction: some wait that sees every credit of the call (whenever the
    /// cell is credited) has every writer's next-call credit ordered after it, so it
    /// counts none of them (`multi_next.rs`).
    fn next_after_full(
        &mut self,
        s: SignalId,
        credited: CondV,
        full: &[(PEv, CondV)],
    ) -> Result<(), String> {
        let credits = self.body_credits(s);
        let mut why = "no single wait is shown to see every credit of the call".to_string();
        for (w, one) in full {
            let sy = &mut self.run.syms;
            let miss = sy.not(*one);
            let g = match sy.junction(true, vec![credited, miss]) {
                CondV::Const(false) => Vec::new(),
                CondV::Const(true) => continue,
                CondV::Sym(id) => vec![id],
            };
            if !g.is_empty() && self.holds(&Vec::new(), Prop::Never(g)).is_err() {
                continue;
            }
            match self.next_credits_after(w, &credits) {
                Ok(()) => {
                    self.multi_chained = true;
                    return Ok(());
                }
                Err(r) => why = r,
            }
        }
        Err(format!(
            "`{}` has several writers per cell: {why}",
            self.p.signals[s].name
        ))
    }

    /// `r := trip - 1` (the last iteration of a wait's loop of rounds).
    fn last_iteration(&mut self, r: Option<AtomId>) -> Result<Map, String> {
        let Some(r) = r else {
            return Ok(Map::new());
        };
        let t = self
            .trips(Side::A)
            .get(&r)
            .cloned()
            .ok_or_else(unknown_var)?;
        Ok([(r, t.add(&Lin::k(-1)).ok_or_else(ov)?)]
            .into_iter()
            .collect())
    }

    /// The pass-B copy of a statement of pass A (both passes record every statement
    /// once, in the same order).
    fn twin(&self, ev: &PEv) -> Option<PEv> {
        let k = self.a.events.iter().position(|e| e.span == ev.span)?;
        self.b.events.get(k).cloned()
    }

    /// Whether two wait statements (pass A) may wait on one cell of one rank.
    fn may_share(&mut self, wi: &PEv, wj: &PEv) -> Result<bool, String> {
        let Some(wj_b) = self.twin(wj) else {
            return Err("a wait missing from a pass".into());
        };
        let Some((_, g, _)) = self.reach(Side::B, &wj_b, &wi.owner, &wi.index, &Map::new(), &[])?
        else {
            return Ok(false);
        };
        let q = crate::engine::sym::union(&wi.guard, &g);
        self.stats.items += 1;
        Ok(self.holds(&Vec::new(), Prop::Never(q)).is_err())
    }

    /// Where the earlier wait `prev` (pass A, the same actor as `w`, its variables mapped
    /// by `pre`) reaches `w`'s cell: the solution, its conditions and its free variables.
    fn reach_prev(
        &mut self,
        w: &PEv,
        prev: &PEv,
        pre: &Map,
    ) -> Result<Option<(Map, Guard, Vec<AtomId>)>, String> {
        let mut same: Vec<AtomId> = std::iter::once(self.a.me).chain(self.a.blk).collect();
        for (x, y) in prev.loops.iter().zip(w.loops.iter()) {
            if x != y {
                break;
            }
            if !pre.contains_key(&self.a.loops[*x].atom) {
                same.push(self.a.loops[*x].atom);
            }
        }
        self.reach(Side::A, prev, &w.owner, &w.index, pre, &same)
    }

    /// The wait `w` must need more than the credits sent before `prev` (pass A, the
    /// same actor, its variables mapped by `pre`, under the extra condition `when`):
    /// `prev` must reach `w`'s cell whenever `w` runs.
    fn stale_pair(
        &mut self,
        w: &PEv,
        need: &Lin,
        prev: &PEv,
        pre: Map,
        when: Option<CondV>,
    ) -> Result<(), String> {
        let mut g = w.guard.clone();
        match when {
            Some(CondV::Const(false)) => return Ok(()),
            Some(CondV::Sym(c)) => g.push(c),
            _ => {}
        }
        g.sort_unstable();
        g.dedup();
        let bad =
            || "consecutive waits on one cell are not shown to reach the same cells".to_string();
        let Some((pmap, pg, pfree)) = self.reach_prev(w, prev, &pre)? else {
            return Err(bad());
        };
        if !pfree.is_empty() {
            return Err(bad());
        }
        let s2 = &mut self.run.syms;
        let pc = s2.junction(true, pg.iter().map(|c| CondV::Sym(*c)).collect());
        match s2.not(pc) {
            CondV::Const(false) => {}
            CondV::Const(true) => return Err(bad()),
            CondV::Sym(id) => {
                let mut q = g.clone();
                q.push(id);
                q.sort_unstable();
                q.dedup();
                self.holds(&Vec::new(), Prop::Never(q))
                    .map_err(|e| format!("{} ({e})", bad()))?;
            }
        }
        let pass = self.a.clone();
        let at = Point {
            loops: prev
                .loops
                .iter()
                .map(|l| {
                    let a = pass.loops[*l].atom;
                    (
                        pass.loops[*l].stmt,
                        pmap.get(&a).cloned().unwrap_or(Lin::atom(a)),
                    )
                })
                .collect(),
            pos: prev.pos(),
            level: None,
            phase: Vec::new(),
        };
        let sent = self.credit_before(w, &w.owner.clone(), &w.index.clone(), &at)?;
        let taken = self.taken_between(w, &at)?;
        let sent = sent.add(&taken).ok_or_else(ov)?;
        let d = need
            .sub(&sent)
            .and_then(|x| x.add(&Lin::k(-1)))
            .ok_or_else(ov)?;
        self.holds(&g, Prop::Ge0(d)).map_err(|e| {
            format!(
                "a wait on `{}` is not shown to need a credit sent after the previous wait on its cell ({e})",
                self.p.signals[w.signal].name
            )
        })
    }

    /// What the waiting actor of `w` took back from `w`'s cell itself (its own AtomicAdds
    /// of a value `<= 0` in the body, `wait c >= 1; notify c -= 1;`: a mailbox) at program
    /// points from `prev` (the previous wait's point, of the same actor) up to `w`: `<= 0`.
    /// Sound to add to what was sent before `prev` (`stale_pair`): those take-backs come
    /// before `w` in its own actor's program order, so the cell has lost them when `w`
    /// reads it, whatever the other ranks do; without a credit sent after `prev`, the cell
    /// holds at most the credits sent before `prev` less them.
    fn taken_between(&mut self, w: &PEv, prev: &Point) -> Result<Lin, String> {
        let takes: Vec<PEv> = self
            .notifies_on(w.signal)
            .into_iter()
            .filter(|e| {
                !e.epilogue
                    && e.is_add()
                    && matches!(&e.kind, PKind::Notify { value: Some(v), .. }
                        if self.run.syms.ub(v).is_some_and(|x| x <= 0))
            })
            .collect();
        if takes.is_empty() {
            return Ok(Lin::k(0));
        }
        // The waiting actor's own: pass B's actor is pass A's.
        let mut same: Guard = Vec::new();
        let pairs = [(Some(self.a.me), Some(self.b.me)), (self.a.blk, self.b.blk)];
        for (x, y) in pairs {
            let (Some(x), Some(y)) = (x, y) else { continue };
            let d = Lin::atom(y).sub(&Lin::atom(x)).ok_or_else(ov)?;
            match self.run.syms.formula(Formula::Eq0(d)) {
                CondV::Sym(c) => same.push(c),
                CondV::Const(true) => {}
                CondV::Const(false) => return Ok(Lin::k(0)),
            }
        }
        same.sort_unstable();
        let here = self.point(w, Side::A);
        let (owner, idx) = (w.owner.clone(), w.index.clone());
        let mut sum: GLin = Vec::new();
        for t in takes {
            let mut t = t.clone();
            t.guard = crate::engine::sym::union(&t.guard, &same);
            sum.extend(self.before(&t, &owner, &idx, &here)?);
            for (g, l) in self.before(&t, &owner, &idx, prev)? {
                sum.push((g, l.scale(-1).ok_or_else(ov)?));
            }
        }
        solve::flat(&mut self.run.syms, &sum).ok_or_else(ov)
    }

    pub(super) fn garbage_credit(&mut self) -> Result<(), String> {
        let adds: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|e| e.is_add() && !self.is_value(e.signal))
            .cloned()
            .collect();
        for e in adds {
            if let PKind::Notify { value: Some(v), .. } = &e.kind {
                if self.run.syms.ub(v).is_some_and(|x| x <= 0) {
                    continue;
                }
            }
            let waits: Vec<PEv> = self
                .a
                .events
                .iter()
                .filter(|w| w.signal == e.signal && matches!(w.kind, PKind::Wait { .. }))
                .cloned()
                .collect();
            let mut hits = Vec::new();
            for w in &waits {
                let Some((map, g, free)) =
                    self.reach(Side::A, w, &e.owner, &e.index, &Map::new(), &[])?
                else {
                    continue;
                };
                let on_free = |s: &crate::engine::sym::Syms, c: &u32| {
                    free.iter().any(|x| s.citers[*c as usize].contains(x))
                };
                let mut cs: Vec<CondV> = g
                    .iter()
                    .filter(|c| !on_free(&self.run.syms, c))
                    .map(|c| CondV::Sym(*c))
                    .collect();
                let trips = self.trips(Side::A);
                for x in free {
                    if !self
                        .a
                        .loops
                        .iter()
                        .any(|l| l.atom == x && l.kind == LoopKind::Num)
                    {
                        return Err("a wait whose rank the cell does not determine".into());
                    }
                    let t = solve::lin(
                        &mut self.run.syms,
                        trips.get(&x).ok_or_else(unknown_var)?,
                        &map,
                    )
                    .ok_or_else(ov)?;
                    let on_x: Vec<u32> = g
                        .iter()
                        .copied()
                        .filter(|c| self.run.syms.citers[*c as usize].contains(&x))
                        .collect();
                    if !on_x.is_empty() {
                        let some = self.some_round(x, &on_x, &t).ok_or_else(|| {
                            "a wait under a condition on its loop variable that is not a bound `x >= e` or `x <= e`".to_string()
                        })?;
                        cs.push(some);
                    }
                    cs.push(
                        self.run
                            .syms
                            .formula(Formula::Ge0(t.add(&Lin::k(-1)).ok_or_else(ov)?)),
                    );
                }
                let c = self.run.syms.junction(true, cs);
                hits.push(c);
            }
            let s = &mut self.run.syms;
            let any = s.junction(false, hits);
            let none = s.not(any);
            let mut g = e.guard.clone();
            match none {
                CondV::Const(false) => {
                    self.stats.items += 1;
                    self.stats.literal += 1;
                    continue;
                }
                CondV::Const(true) => return Err("credits to a cell that no wait reads".into()),
                CondV::Sym(id) => g.push(id),
            }
            g.sort_unstable();
            g.dedup();
            self.holds(&Vec::new(), Prop::Never(g)).map_err(|r| {
                format!(
                    "credits of `{}` may reach a cell no wait reads ({r})",
                    self.p.signals[e.signal].name
                )
            })?;
        }
        Ok(())
    }

    /// Whether some `x` in `0..t` satisfies the conditions `cs`, each a bound on `x` with
    /// coefficient 1 or -1 (`x >= e`, `x <= e`, their negations; `e` free of `x`): every
    /// lower bound (and 0) at most every upper bound (and `t - 1`). Exact for such bounds.
    fn some_round(&mut self, x: AtomId, cs: &[u32], t: &Lin) -> Option<CondV> {
        let s = &mut self.run.syms;
        let mut lo = vec![Lin::k(0)];
        let mut hi = vec![t.add(&Lin::k(-1))?];
        for c in cs {
            let l = match &s.conds[*c as usize] {
                Formula::Ge0(l) => l.clone(),
                Formula::Not(y) => match &s.conds[*y as usize] {
                    Formula::Ge0(l) => l.scale(-1)?.add(&Lin::k(-1))?,
                    _ => return None,
                },
                _ => return None,
            };
            let (k, rest) = l.split(x);
            if s.deps(&rest).contains(&x) || s.nested(&l, x) {
                return None;
            }
            match k {
                1 => lo.push(rest.scale(-1)?),
                -1 => hi.push(rest),
                _ => return None,
            }
        }
        let mut all = Vec::new();
        for a in &lo {
            for b in &hi {
                all.push(s.cmp(CmpOp::Le, a, b)?);
            }
        }
        Some(s.junction(true, all))
    }

    pub(super) fn guard_symmetry(&mut self) -> Result<(), String> {
        let ra = self.a.returns.clone();
        let rb = self.b.returns.clone();
        if ra.len() != rb.len() {
            return Err("the passes disagree on returns".into());
        }
        for (x, y) in ra.iter().zip(rb.iter()) {
            let s = &mut self.run.syms;
            let nx = s.not(x.cond);
            let ny = s.not(y.cond);
            let l = s.junction(true, vec![x.cond, ny]);
            let r = s.junction(true, vec![nx, y.cond]);
            let differ = s.junction(false, vec![l, r]);
            let mut g: Guard = Vec::new();
            if let (Some(ba), Some(bb)) = (self.a.blk, self.b.blk) {
                let d = Lin::atom(ba).sub(&Lin::atom(bb)).ok_or_else(ov)?;
                if let CondV::Sym(c) = s.formula(Formula::Eq0(d)) {
                    g.push(c);
                }
            }
            match differ {
                CondV::Const(false) => {
                    self.stats.items += 1;
                    self.stats.literal += 1;
                    continue;
                }
                CondV::Const(true) => return Err("a return that differs between ranks".into()),
                CondV::Sym(id) => g.push(id),
            }
            g.sort_unstable();
            g.dedup();
            self.holds(&Vec::new(), Prop::Never(g))
                .map_err(|r| format!("a `return if` is not shown rank-uniform ({r})"))?;
        }
        Ok(())
    }
}
