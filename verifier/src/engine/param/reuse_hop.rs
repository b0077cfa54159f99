//! The one-hop chains of `buffer-reuse` (`reuse.rs`): the access `x` of call `c` (pass A,
//! rank `me`) is ordered before the write `w` of call `c + d` (pass B, the writer) when a
//! credit `n` of A's rank in its call `c + i` is needed by a wait `v` of the writer in its
//! call `c + i'`, with `0 <= i <= i' <= d`, `n` after `x` in program order when `i = 0`
//! and `v` before `w` when `i' = d` (outside their loops, not in the other branch of an
//! `if`). The hop takes the largest lag `i' - i` the positions allow.
//!
//! The wait cannot pass without `n` of call `c + i` when its signal's every cell receives
//! at most one positive credit execution per call (the statements that reach a generic
//! cell, counted) and nothing of `n`, `v` reads the call index except a monotonic
//! threshold (so each cell has one writer, the same every call, whose credits arrive in
//! its program order):
//!
//! - on a monotonic cell, the reduced threshold `a` (the wait is `>= a + b·call`, `b` at
//!   least every credit's constant value `m`): before `n` of call `c + i` the cell holds at
//!   most `m·(c + i)`, and the wait of call `c + i'` needs `a + b·(c + i') > m·(c + i)`,
//!   which `a + m·(i' - i) >= 1` gives;
//! - on a self-clearing cell, `a >= 1`: with the reuse theorem (the credit obligations
//!   proved with P symbolic) a wait of call `c + i'` passes only on the writer's credit of
//!   that call, which follows `n` of call `c + i <= c + i'`.
//!
//! `n`'s loop variables are solved from "its target is the writer", `v`'s from "its cell is
//! `n`'s cell"; the pair's premise (both reach one instance from two ranks) implies every
//! condition (Z3). A refuted condition makes the candidate fail; anything undecided is an
//! open reason.

use super::extract::{PAcc, PEv, PKind};
use super::reuse::placed;
use super::solve::{self, Map};
use super::value_next;
use super::Ctx;
use crate::engine::sym::{cond_mentions, mentions};
use crate::engine::sym::{AtomId, Guard, Lin};
use collc_spec::ir::*;

/// One pair to order, with the writer's variables solved (`mx`).
pub(super) struct Hop<'a> {
    /// The access of call `c` (pass A).
    pub x: &'a PAcc,
    /// The write of call `c + distance` (pass B).
    pub w: &'a PAcc,
    /// The writer's variables, solved from "it reaches the instance `x` reaches".
    pub mx: &'a Map,
    /// The writer's rank (over pass A's atoms).
    pub writer: &'a Lin,
    /// Both reach one instance from two ranks.
    pub premise: &'a Guard,
    /// The reuse distance.
    pub distance: i64,
    /// The call index.
    pub call: AtomId,
    /// Why the reuse theorem is not available with P symbolic, if it is not.
    pub reuse: Option<&'a str>,
}

/// Why one candidate failed.
enum Fail {
    /// Refuted (Z3's counterexample, or false by arithmetic).
    Refuted(String),
    /// Undecided, or a form not covered.
    Open(String),
}

fn ov() -> Fail {
    Fail::Open("arithmetic overflow".into())
}

fn classify(r: super::NotShown) -> Fail {
    match r {
        super::NotShown::Refuted(r) => Fail::Refuted(r),
        super::NotShown::Open(r) => Fail::Open(r),
    }
}

/// `Ok(Ok(()))`: a hop orders the pair; `Ok(Err(why))`: every candidate is refuted or
/// impossible by position; `Err`: a candidate could not be decided.
pub(super) fn chain(cx: &mut Ctx, h: &Hop) -> Result<Result<(), String>, String> {
    let pick = |evs: &[PEv], keep: &dyn Fn(&PEv) -> bool| -> Vec<PEv> {
        evs.iter().filter(|e| keep(e)).cloned().collect()
    };
    let p = cx.p;
    let credits = pick(&cx.a.events, &|n| {
        n.is_add() && p.signals[n.signal].kind == SignalKind::Credit
    });
    let waits = pick(&cx.b.events, &|v| matches!(v.kind, PKind::Wait { .. }));
    let mut refuted: Option<String> = None;
    let mut open: Option<String> = None;
    for n in &credits {
        for v in waits.iter().filter(|v| v.signal == n.signal) {
            // After the access in its own iteration of the loops they share: that
            // iteration's credit of call `c`.
            let fixed = same_iteration(cx, n, h.x);
            let i = if placed(&cx.a, n, h.x, true) || fixed.is_some() {
                0
            } else {
                1
            };
            let fixed = fixed.unwrap_or_default();
            let j = if placed(&cx.b, v, h.w, false) {
                h.distance
            } else {
                h.distance - 1
            };
            if i > j {
                continue;
            }
            let saved = cx.stats.clone();
            match hop(cx, h, (n, &fixed), v, j - i) {
                Ok(()) => return Ok(Ok(())),
                Err(Fail::Refuted(r)) => {
                    cx.stats = saved;
                    refuted.get_or_insert(format!(
                        "the only credits and waits that could order them, on `{}`, do not: {r}",
                        cx.p.signals[n.signal].name
                    ));
                }
                Err(Fail::Open(r)) => {
                    cx.stats = saved;
                    open.get_or_insert(r);
                }
            }
        }
    }
    if let Some(o) = open {
        return Err(o);
    }
    Ok(Err(refuted.unwrap_or_else(|| {
        "the accessing rank sends no credit after the access (or in a later call) that the writer waits for before the write".into()
    })))
}

/// The loop variables `n` (a credit of pass A) shares with the access `acc` when it runs
/// after `acc` within their iteration of those loops (not in the other branch); `None`
/// when it shares none or precedes it.
fn same_iteration(cx: &Ctx, n: &PEv, acc: &PAcc) -> Option<Vec<AtomId>> {
    let shared: Vec<AtomId> = n
        .loops
        .iter()
        .filter(|l| acc.loops.contains(l))
        .map(|l| cx.a.loops[*l].atom)
        .collect();
    (!shared.is_empty() && n.pos() > acc.pos() && !cx.a.exclusive_blocks(&n.blocks, &acc.blocks))
        .then_some(shared)
}

/// Credit `n` (pass A; its loop variables in `fixed` are the access's iteration) is
/// needed by wait `v` (pass B) of the writer, `lag` calls later.
fn hop(
    cx: &mut Ctx,
    h: &Hop,
    (n, fixed): (&PEv, &[AtomId]),
    v: &PEv,
    lag: i64,
) -> Result<(), Fail> {
    let PKind::Notify {
        value: Some(val), ..
    } = &n.kind
    else {
        return Err(Fail::Open(
            "a credit whose value cannot be evaluated symbolically".into(),
        ));
    };
    let PKind::Wait { cmp, thr } = &v.kind else {
        return Err(Fail::Open("not a wait".into()));
    };
    {
        let s = &cx.run.syms;
        let c = h.call;
        let reads = n
            .guard
            .iter()
            .chain(&v.guard)
            .any(|g| cond_mentions(s, *g, c))
            || [val, &n.owner]
                .into_iter()
                .chain(&n.index)
                .chain(&v.index)
                .any(|l| mentions(s, l, c));
        if reads {
            return Err(Fail::Open(
                "a credit or wait whose cell, condition or value reads the call index".into(),
            ));
        }
    }
    // The credit's target is the writer; the wait runs on the writer, on the credit's cell.
    let (_, nidx, mut conds) =
        value_next::credit(cx, n, val, (&[], &[]), h.writer, fixed).map_err(Fail::Open)?;
    let Some((thr, mv)) =
        value_next::wait_on(cx, v, thr, nidx, h.mx, &mut conds).map_err(Fail::Open)?
    else {
        return Err(Fail::Refuted("the wait does not run on the writer".into()));
    };
    if mentions(&cx.run.syms, &thr, h.call) {
        return Err(Fail::Open(
            "a threshold that reads the call index on a self-clearing cell".into(),
        ));
    }
    let need = if cx.p.signals[n.signal].monotonic {
        let most = largest_credit(cx, n.signal)?;
        let g = cx.growth.get(&v.span.start).cloned().unwrap_or(Lin::k(0));
        let g = solve::lin(&mut cx.run.syms, &g, h.mx).ok_or_else(ov)?;
        let g = solve::lin(&mut cx.run.syms, &g, &mv).ok_or_else(ov)?;
        let saved = cx.stats.clone();
        match whole_call(cx, h, n.signal, (*cmp, &thr, &g), &conds) {
            Ok(()) => return Ok(()),
            Err(_) => cx.stats = saved,
        }
        let Some(b) = g.as_const() else {
            return Err(Fail::Open(
                "a monotonic wait whose threshold growth is not a constant, nor shown to need every credit of its call from the cell's one sender".into(),
            ));
        };
        if b < most {
            return Err(Fail::Open(
                "a monotonic wait whose threshold grows slower than its credits".into(),
            ));
        }
        thr.add(&Lin::k(most.checked_mul(lag).ok_or_else(ov)?))
            .ok_or_else(ov)?
    } else {
        if let Some(r) = h.reuse {
            return Err(Fail::Open(format!(
                "a wait on a self-clearing cell needs the reuse theorem, and {r}"
            )));
        }
        thr
    };
    conds.push(cx.at_least_one(*cmp, need).map_err(Fail::Open)?);
    cx.implies_or(h.premise, &conds).map_err(classify)?;
    let cs = cx.credits_of(n.signal);
    cx.at_most_one_or(&cs, n.signal)
        .map_err(|r| match classify(r) {
            Fail::Refuted(r) => Fail::Refuted(format!(
                "a cell of `{}` may receive more than one credit per call ({r})",
                cx.p.signals[n.signal].name
            )),
            open => open,
        })
}

/// The largest credit any statement sends to a cell of monotonic signal `s` (each must be
/// a constant).
fn largest_credit(cx: &mut Ctx, s: SignalId) -> Result<i64, Fail> {
    let mut most = 0;
    for e in cx.credits_of(s) {
        let PKind::Notify { value: Some(v), .. } = &e.kind else {
            return Err(Fail::Open(
                "a credit whose value cannot be evaluated symbolically".into(),
            ));
        };
        let Some(k) = v.as_const() else {
            return Err(Fail::Open(
                "a credit to a monotonic cell whose value is not a constant".into(),
            ));
        };
        most = most.max(k);
    }
    Ok(most)
}

/// The wait needs every credit of its call: on a monotonic cell with one sender rank
/// (every two credit executions that reach one cell run on one rank) whose per-call credit
/// equals the threshold growth `g` (`credit-balance`, proved with P symbolic: `reuse` is
/// `None`), a wait `>= a + g·call` with `a >= g` and `a >= 1` passes in call `c'` only
/// once the cell holds `g·(c' + 1)`, every credit the sender sends in calls `0..=c'`:
/// the credit of call `c + i <= c'` among them, whatever the lag. The growth may be
/// symbolic (`T = ceil(n / CH)` credits per call, LANGUAGE.md §5.7.1).
fn whole_call(
    cx: &mut Ctx,
    h: &Hop,
    s: SignalId,
    (cmp, a, g): (CmpOp, &Lin, &Lin),
    conds: &[crate::engine::sym::CondV],
) -> Result<(), Fail> {
    if let Some(r) = h.reuse {
        return Err(Fail::Open(format!(
            "a wait that needs every credit of its call rests on the per-call balance, and {r}"
        )));
    }
    if cx.p.blocks.is_some() {
        return Err(Fail::Open("several blocks per rank send credits".into()));
    }
    let mut conds = conds.to_vec();
    conds.push(cx.at_least_one(cmp, a.clone()).map_err(Fail::Open)?);
    let over = a.sub(g).ok_or_else(ov)?;
    conds.push(cx.run.syms.formula(crate::engine::sym::Formula::Ge0(over)));
    cx.implies_or(h.premise, &conds).map_err(classify)?;
    one_sender(cx, s)
}

/// Every two credit executions (pass A and pass B) that reach one cell of `s` in a call
/// run on one rank.
fn one_sender(cx: &mut Ctx, s: SignalId) -> Result<(), Fail> {
    let ns: Vec<PEv> = cx.credits_of(s);
    for n2 in &ns {
        for n1 in
            cx.a.events
                .clone()
                .iter()
                .filter(|e| e.signal == s && e.is_add())
        {
            let vars = cx.b.vars(n2);
            let mut eqs = vec![(n2.owner.clone(), n1.owner.clone())];
            eqs.extend(n2.index.iter().cloned().zip(n1.index.iter().cloned()));
            let (m, sc) = cx
                .solve_all(super::oblig::Side::B, &vars, &eqs, &n2.guard, &vars)
                .map_err(Fail::Open)?;
            let Some(premise) = value_next::conj(&n1.guard, &sc) else {
                continue;
            };
            let me_b = Lin::atom(cx.b.me);
            let w2 = solve::lin(&mut cx.run.syms, &me_b, &m).ok_or_else(ov)?;
            let me_a = Lin::atom(cx.a.me);
            let ne = cx.run.syms.cmp(CmpOp::Ne, &w2, &me_a).ok_or_else(ov)?;
            if let Some(g) = value_next::conj(&premise, &[ne]) {
                cx.decide(&Vec::new(), crate::engine::smt::Prop::Never(g))
                    .map_err(|r| match classify(r) {
                        Fail::Refuted(r) => Fail::Refuted(format!(
                            "a cell of `{}` receives credits from two ranks ({r})",
                            cx.p.signals[s].name
                        )),
                        open => open,
                    })?;
            }
        }
    }
    Ok(())
}
