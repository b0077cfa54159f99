//! Happens-before inside one call, from the events of the abstract execution: program
//! order, plus an edge from a notify to every wait that cannot pass without it (README,
//! "The `value-signal` obligation": on a credit cell with one writer besides the waiter, a
//! `>=`/`>` wait whose threshold exceeds every other credit the cell can receive before it; on a value cell any wait on the Set's
//! cell). Both events outside loops kept symbolic and under the same guard, else no edge:
//! a missing edge only makes an ordering question fail, never succeed.

use crate::engine::events::{contrib, is_add, is_set, value_of, CellEvents};
use crate::engine::exec::{Cell, EvKind, Run};
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::Lin;
use crate::obligations::context::{Acc, Ctx};
use collc_grammar::Span;
use collc_spec::ir::{CmpOp, SignalKind};
use std::collections::HashMap;

/// (rank, block).
pub(crate) type Actor = (u32, u32);

/// Happens-before edges of one configuration: for each notify, the (actor, first program
/// position after the wait) of every wait that cannot pass without it.
pub(crate) struct Hb {
    /// Per actor, its notifies as (seq, event), in program order.
    notifies: HashMap<Actor, Vec<(u32, usize)>>,
    /// Per notify event, the waits it releases: (actor, seq + 1).
    edges: HashMap<usize, Vec<(Actor, u32)>>,
    /// Per notify event, a wait on its cell that may need it but was not examined (one of
    /// the two in a loop kept symbolic, or under another guard): an ordering question that
    /// fails may then be one this analysis cannot decide.
    pub(crate) unexamined: HashMap<usize, Span>,
}

impl Hb {
    pub(crate) fn new(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) -> Hb {
        let facts = ctx.facts;
        let mut notifies: HashMap<Actor, Vec<(u32, usize)>> = HashMap::new();
        let mut edges: HashMap<usize, Vec<(Actor, u32)>> = HashMap::new();
        let mut unexamined = HashMap::new();
        for (cell, evs) in facts.cells.iter() {
            let value = ctx.p.signals[cell.signal].kind == SignalKind::Value;
            let mut ns: Vec<usize> = Vec::new();
            for &e in evs {
                let ev = &run.events[e];
                let v = value_of(ev);
                if is_set(ev)
                    || (is_add(ev) && !crate::obligations::multi::is_reset(&mut run.syms, &v))
                {
                    ns.push(e);
                }
            }
            for &n in &ns {
                notifies
                    .entry(run.events[n].actor)
                    .or_default()
                    .push((run.events[n].seq, n));
            }
            let ws = CellEvents::of(run, evs).waits;
            for &w in &ws {
                for &n in &ns {
                    let (en, ew) = (&run.events[n], &run.events[w]);
                    if en.actor == ew.actor {
                        continue;
                    }
                    if en.frame.is_some() || ew.frame.is_some() || en.guard != ew.guard {
                        unexamined.entry(n).or_insert(ew.span);
                        continue;
                    }
                    let ok = if value {
                        // Condition 3 holds for this wait (else the obligation already failed):
                        // it passes only on a Set of the call.
                        is_set(en)
                    } else {
                        needs(ctx, run, acc, *cell, w, n, &ns)
                    };
                    if ok {
                        let ew = &run.events[w];
                        edges.entry(n).or_default().push((ew.actor, ew.seq + 1));
                    }
                }
            }
        }
        for v in notifies.values_mut() {
            v.sort_unstable();
        }
        Hb {
            notifies,
            edges,
            unexamined,
        }
    }

    /// Every actor reached from `start` (actor, first ordered position) within one call:
    /// the first program position of each that is ordered after the start.
    pub(crate) fn reach(&self, start: &[(Actor, u32)]) -> HashMap<Actor, u32> {
        self.reach_avoiding(start, &[])
    }

    /// [`Hb::reach`] without the edges of the notifies `avoid` (the writes of a cell whose
    /// own ordering is in question: its edges rest on what is being asked).
    pub(crate) fn reach_avoiding(
        &self,
        start: &[(Actor, u32)],
        avoid: &[usize],
    ) -> HashMap<Actor, u32> {
        let mut at: HashMap<Actor, u32> = HashMap::new();
        let mut work: Vec<(Actor, u32)> = Vec::new();
        for &(a, s) in start {
            if at.get(&a).is_none_or(|x| s < *x) {
                at.insert(a, s);
                work.push((a, s));
            }
        }
        while let Some((a, s)) = work.pop() {
            if at.get(&a).is_some_and(|x| *x < s) {
                continue;
            }
            let Some(ns) = self.notifies.get(&a) else {
                continue;
            };
            for &(seq, n) in ns {
                if seq < s || avoid.contains(&n) {
                    continue;
                }
                for &(b, t) in self.edges.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
                    if at.get(&b).is_none_or(|x| t < *x) {
                        at.insert(b, t);
                        work.push((b, t));
                    }
                }
            }
        }
        at
    }

    /// Event `a` happens before event `b` within one call: program order (both outside
    /// loops kept symbolic), or a chain of notifies and waits from after `a` to before `b`
    /// that uses no edge of the notifies `avoid`.
    pub(crate) fn before(&self, run: &Run, a: usize, b: usize, avoid: &[usize]) -> bool {
        let (ea, eb) = (&run.events[a], &run.events[b]);
        if ea.actor == eb.actor {
            return ea.frame.is_none() && eb.frame.is_none() && ea.seq < eb.seq;
        }
        self.reach_avoiding(&[(ea.actor, ea.seq + 1)], avoid)
            .get(&eb.actor)
            .is_some_and(|t| *t <= eb.seq)
    }

    /// Every actor's first program position in the *next* call that is ordered after
    /// `start` (actor, first ordered position) of this call: everything reached within
    /// this call, and each start actor, runs its next call afterwards, from position 0;
    /// then the edges of that call. The cross-call ordering of README, "The `value-signal`
    /// obligation" (condition 4) and of the many-writer rule of `stale-credit`.
    pub(crate) fn next_call(&self, start: &[(Actor, u32)]) -> HashMap<Actor, u32> {
        self.reach(&self.next_starts(start))
    }

    /// The starts of [`Hb::next_call`]: every actor reached from `start` in this call (and
    /// each start actor), at position 0 of its next call.
    fn next_starts(&self, start: &[(Actor, u32)]) -> Vec<(Actor, u32)> {
        let mut next: Vec<(Actor, u32)> = self.reach(start).into_keys().map(|a| (a, 0)).collect();
        next.extend(start.iter().map(|(a, _)| (*a, 0)));
        next
    }

    /// A wait not examined for an edge from a notify that the actors of
    /// [`Hb::next_call`]`(start)` execute: where the ordering may exist unseen.
    pub(crate) fn unexamined_from(&self, start: &[(Actor, u32)]) -> Option<Span> {
        let mut reached: Vec<Actor> = self.next_call(start).into_keys().collect();
        reached.extend(self.next_starts(start).into_iter().map(|(a, _)| a));
        reached
            .iter()
            .filter_map(|a| self.notifies.get(a))
            .flatten()
            .find_map(|(_, n)| self.unexamined.get(n).copied())
    }
}

/// The credit wait `w` cannot pass without notify `n`: its threshold exceeds every other
/// credit the cell can receive before it.
fn needs(
    ctx: &mut Ctx,
    run: &mut Run,
    acc: &mut Acc,
    _cell: Cell,
    w: usize,
    n: usize,
    ns: &[usize],
) -> bool {
    let ew = run.events[w].clone();
    let EvKind::Wait { cmp, thr } = &ew.kind else {
        return false;
    };
    // One writer besides the waiter: its credits arrive in its program order, so a later
    // call's credit of the same writer cannot stand in for this one. With several writers
    // another writer's next-call credit could, so there is no edge.
    let writer = run.events[n].actor;
    if ns.iter().any(|m| {
        let a = run.events[*m].actor;
        is_add(&run.events[*m]) && a != writer && a != ew.actor
    }) {
        return false;
    }
    let need = match cmp {
        CmpOp::Ge => thr.clone(),
        CmpOp::Gt => match thr.add(&Lin::k(1)) {
            Some(x) => x,
            None => return false,
        },
        _ => return false,
    };
    let mut others = Lin::k(0);
    for &m in ns {
        let em = &run.events[m];
        if m == n || !is_add(em) || (em.actor == ew.actor && em.seq > ew.seq) {
            continue;
        }
        let v = value_of(em);
        match contrib(run, m, &v).ok().and_then(|c| others.add(&c)) {
            Some(o) => others = o,
            None => return false,
        }
    }
    let Some(d) = need.sub(&others).and_then(|x| x.add(&Lin::k(-1))) else {
        return false;
    };
    matches!(
        {
            acc.items += 1;
            ctx.prove(run, acc, &ew.guard, &[], Prop::Ge0(d))
        },
        Answer::Valid
    )
}
