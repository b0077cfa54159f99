//! Condition 5 of `value.rs` with P symbolic: a `reused` value cell is not overwritten by
//! its writer's next call before it is read. For every read of call k — a wait (pass A,
//! the reader `me`) or, for a cell the host reads, the host of the owner between its
//! calls — and every Set (pass B, the writer) that reaches the cell read, either the
//! writer is the reader's rank (program order: its Set of call k+1 comes after its read of
//! call k), or a one-hop chain orders them: in its call k+1 (after the read) the reader
//! sends a credit to the writer, and the writer waits for that credit before the Set
//! (earlier in its program order, outside the Set's loops). The wait cannot pass without
//! the credit when its signal's every cell gets at most one positive credit execution per
//! call and
//!
//! - on a self-clearing cell, the threshold is at least 1 (`>= 1`, `> 0`): with the
//!   reuse theorem (the credit obligations, proved with P symbolic), the cell holds no
//!   credit of an earlier call when the call's wait passes;
//! - on a monotonic cell, the threshold is `a + b·call` with `a >= 1` and `b` at least the
//!   credit's literal value `v`: the writer's first c calls sent at most `c·v <= b·c`.
//!
//! The credit's loop variables are solved from "its target is the writer", the wait's from
//! "its cell is the credit's cell"; the Set's conditions (and "it reaches the cell read",
//! its variables solved where the cell determines them, universally quantified
//! otherwise) imply all of theirs (Z3). Guards and credits that read the call index are
//! not covered (the two calls differ in it). Several blocks per rank are not covered
//! (blocks of one rank are not ordered with each other). Anything not shown is an open
//! reason, never a violation.

use super::extract::{PEv, PKind};
use super::oblig::Side;
use super::solve::{self, Map};
use super::Ctx;
use crate::engine::sym::{union, AtomId, CondV, Formula, Guard, Lin};
use collc_spec::ir::*;

fn ov() -> String {
    "arithmetic overflow".into()
}

/// Adds `cs` to guard `g`; `None` when one is false.
pub(super) fn conj(g: &Guard, cs: &[CondV]) -> Option<Guard> {
    let mut out = g.clone();
    for c in cs {
        match c {
            CondV::Const(true) => {}
            CondV::Const(false) => return None,
            CondV::Sym(id) => out = union(&out, &vec![*id]),
        }
    }
    Some(out)
}

/// Condition 5 for value signal `s`, read by `waits` (pass A) and, when `host`, by the
/// host of each cell's owner.
pub(super) fn next_call(
    cx: &mut Ctx,
    s: SignalId,
    waits: &[PEv],
    host: bool,
    reuse: Option<&str>,
) -> Result<(), String> {
    if cx.p.blocks.is_some() {
        return Err("several blocks per rank (not ordered with each other)".into());
    }
    let sets: Vec<PEv> =
        cx.b.events
            .iter()
            .filter(|e| e.signal == s && e.is_set())
            .cloned()
            .collect();
    // The read is in call k, the Set in call k+1: what either reads of the call index
    // would differ between them.
    if let Some(c) =
        cx.p.call
            .map(|c| cx.run.syms.intern(crate::engine::sym::Atom::Param(c)))
    {
        let s = &cx.run.syms;
        if sets
            .iter()
            .chain(waits)
            .any(|e| e.cell_or_guard_mentions(s, c))
        {
            return Err("a Set or a read whose cell or condition reads the call index".into());
        }
    }
    let me_a = Lin::atom(cx.a.me);
    let me_b = Lin::atom(cx.b.me);
    for x in &sets {
        let mut xvars = vec![cx.b.me];
        xvars.extend(x.loops.iter().map(|l| cx.b.loops[*l].atom));
        for w in waits {
            // The Set reaches the cell the wait reads.
            let mut eqs = vec![(x.owner.clone(), me_a.clone())];
            eqs.extend(x.index.iter().cloned().zip(w.index.iter().cloned()));
            let (mx, conds) = cx.solve_all(Side::B, &xvars, &eqs, &x.guard, &xvars)?;
            let writer = solve::lin(&mut cx.run.syms, &me_b, &mx).ok_or_else(ov)?;
            let Some(premise) = conj(&w.guard, &conds) else {
                continue;
            };
            chain(cx, x, &mx, &writer, &premise, (&[], &[]), reuse)?;
        }
        if host {
            // The host of the owner reads between the owner's calls; the owner's next
            // call (pass A, `me` = the owner) follows.
            let Some(premise) = conj(&x.guard, &[]) else {
                continue;
            };
            let eq = (me_a.clone(), x.owner.clone());
            chain(
                cx,
                x,
                &Map::new(),
                &me_b,
                &premise,
                (&[cx.a.me], &[eq]),
                reuse,
            )?;
        }
    }
    Ok(())
}

/// The reader (pass A, in its next call; `avars`/`aeqs` solve its rank where it is not
/// `me` of pass A) reaches the writer `writer` before Set `x` (pass B, under `mx`).
pub(super) fn chain(
    cx: &mut Ctx,
    x: &PEv,
    mx: &Map,
    writer: &Lin,
    premise: &Guard,
    (avars, aeqs): (&[AtomId], &[(Lin, Lin)]),
    reuse: Option<&str>,
) -> Result<(), String> {
    // The writer is the reader: program order.
    let reader = match aeqs.first() {
        Some((_, r)) => r.clone(),
        None => Lin::atom(cx.a.me),
    };
    let ne = cx.run.syms.cmp(CmpOp::Ne, writer, &reader).ok_or_else(ov)?;
    let Some(premise) = conj(premise, &[ne]) else {
        cx.stats.items += 1;
        cx.stats.literal += 1;
        return Ok(());
    };
    let call = cx.p.call.map(|c| cx.run.syms.param(c));
    let credits: Vec<PEv> =
        cx.a.events
            .iter()
            .filter(|n| n.is_add() && cx.p.signals[n.signal].kind == SignalKind::Credit)
            .cloned()
            .collect();
    let waits: Vec<PEv> =
        cx.b.events
            .iter()
            .filter(|w| {
                matches!(w.kind, PKind::Wait { .. })
                    && w.pos() < x.pos()
                    && w.loops.iter().all(|l| !x.loops.contains(l))
                    && !cx.b.exclusive(w, x)
            })
            .cloned()
            .collect();
    let why = "no credit from the reader's next call that the writer waits for before the Set";
    let hops = Hops {
        mx,
        writer,
        premise: &premise,
        a: (avars, aeqs),
        call: call.as_ref(),
        reuse,
    };
    first_hop(cx, &credits, &waits, &hops, why)
}

/// What every candidate hop of one question shares (the arguments of [`hop`] but the
/// credit and the wait).
pub(super) struct Hops<'a> {
    pub mx: &'a Map,
    pub writer: &'a Lin,
    pub premise: &'a Guard,
    pub a: (&'a [AtomId], &'a [(Lin, Lin)]),
    pub call: Option<&'a Lin>,
    pub reuse: Option<&'a str>,
}

/// The first (credit, wait on its signal) pair whose [`hop`] holds, the statistics of
/// the failed attempts discarded; else the last attempt's reason (`why` when there was
/// none).
pub(super) fn first_hop(
    cx: &mut Ctx,
    credits: &[PEv],
    waits: &[PEv],
    h: &Hops,
    why: &str,
) -> Result<(), String> {
    let mut why = why.to_string();
    for n in credits {
        for w in waits.iter().filter(|w| w.signal == n.signal) {
            let saved = cx.stats.clone();
            match hop(cx, n, w, h) {
                Ok(()) => return Ok(()),
                Err(r) => {
                    cx.stats = saved;
                    why = r;
                }
            }
        }
    }
    Err(why)
}

/// One hop: credit `n` (pass A) is needed by wait `w` (pass B) of the writer.
pub(super) fn hop(cx: &mut Ctx, n: &PEv, w: &PEv, h: &Hops) -> Result<(), String> {
    let PKind::Notify { value: Some(v), .. } = &n.kind else {
        return Err("a credit whose value cannot be evaluated symbolically".into());
    };
    let PKind::Wait { cmp, thr } = &w.kind else {
        return Err("not a wait".into());
    };
    let call_atom = h.call.and_then(|c| c.t.first().map(|t| t.0));
    if let Some(c) = call_atom {
        let reads = |cx: &Ctx, g: &Guard| {
            g.iter()
                .any(|id| crate::engine::sym::cond_mentions(&cx.run.syms, *id, c))
        };
        if reads(cx, &n.guard)
            || reads(cx, &w.guard)
            || crate::engine::sym::mentions(&cx.run.syms, v, c)
        {
            return Err("a guard or credit that reads the call index".into());
        }
    }
    let (v, nidx, mut conds) = credit(cx, n, v, h.a, h.writer, &[])?;
    let Some((thr, mw)) = wait_on(cx, w, thr, nidx, h.mx, &mut conds)? else {
        return Err("the wait does not run on the writer".into());
    };
    let (a, b) = match call_atom {
        Some(c) => {
            let (b, a) = thr.split(c);
            if cx.run.syms.nested(&a, c) {
                return Err("a threshold that reads the call index other than linearly".into());
            }
            (a, b)
        }
        None => (thr, 0),
    };
    growth_fits(cx, n, w, &v, b, (h.mx, &mw), h.reuse)?;
    conds.push(cx.at_least_one(*cmp, a)?);
    cx.implies(h.premise, &conds)?;
    let cs = cx.credits_of(n.signal);
    cx.at_most_one(&cs, n.signal).map_err(|r| {
        format!(
            "a cell of `{}` may receive more than one credit per call ({r})",
            cx.p.signals[n.signal].name
        )
    })
}

/// The credit `n` of value `v` sent to the writer (with the variables `avars` and
/// equations `aeqs` of the question; loop variables in `fixed` keep their value, the
/// iteration of the access the credit follows): its value and cell index with its
/// variables solved, and the conditions (it runs, and `v >= 1`). Shared with
/// [`super::reuse_hop`].
pub(super) fn credit(
    cx: &mut Ctx,
    n: &PEv,
    v: &Lin,
    (avars, aeqs): (&[AtomId], &[(Lin, Lin)]),
    writer: &Lin,
    fixed: &[AtomId],
) -> Result<(Lin, Vec<Lin>, Vec<CondV>), String> {
    // The credit's variables: its target is the writer.
    let mut nvars: Vec<AtomId> = avars.to_vec();
    nvars.extend(
        n.loops
            .iter()
            .map(|l| cx.a.loops[*l].atom)
            .filter(|a| !fixed.contains(a)),
    );
    let mut eqs = aeqs.to_vec();
    eqs.push((n.owner.clone(), writer.clone()));
    let (mn, mut conds) = cx.solve_all(Side::A, &nvars, &eqs, &n.guard, &[])?;
    let v = solve::lin(&mut cx.run.syms, v, &mn).ok_or_else(ov)?;
    conds.push(
        cx.run
            .syms
            .formula(Formula::Ge0(v.add(&Lin::k(-1)).ok_or_else(ov)?)),
    );
    let mut nidx = Vec::new();
    for l in &n.index {
        nidx.push(solve::lin(&mut cx.run.syms, l, &mn).ok_or_else(ov)?);
    }
    Ok((v, nidx, conds))
}

/// The wait `w` of the writer (its variables solved by `mx`) on the credit's cell `nidx`:
/// its threshold `thr` with its own variables solved, and their map; its conditions join
/// `conds`. `None` when the wait does not run on the writer. Shared with
/// [`super::reuse_hop`].
pub(super) fn wait_on(
    cx: &mut Ctx,
    w: &PEv,
    thr: &Lin,
    nidx: Vec<Lin>,
    mx: &Map,
    conds: &mut Vec<CondV>,
) -> Result<Option<(Lin, Map)>, String> {
    let mut widx = Vec::new();
    for l in &w.index {
        widx.push(solve::lin(&mut cx.run.syms, l, mx).ok_or_else(ov)?);
    }
    let Some(wguard) = solve::guard(&mut cx.run.syms, &w.guard, mx).ok_or_else(ov)? else {
        return Ok(None);
    };
    let thr = solve::lin(&mut cx.run.syms, thr, mx).ok_or_else(ov)?;
    if widx.len() != nidx.len() {
        return Err("a signal indexed with a varying number of coordinates".into());
    }
    let wvars: Vec<AtomId> = w.loops.iter().map(|l| cx.b.loops[*l].atom).collect();
    let eqs: Vec<(Lin, Lin)> = widx.into_iter().zip(nidx).collect();
    let (mw, wconds) = cx.solve_all(Side::B, &wvars, &eqs, &wguard, &[])?;
    conds.extend(wconds);
    let thr = solve::lin(&mut cx.run.syms, &thr, &mw).ok_or_else(ov)?;
    Ok(Some((thr, mw)))
}

/// The threshold's growth per call `b` against the credit `v`: on a monotonic cell at
/// least the credit (the route's monotonic reduction, `epoch::reduce`, has already taken
/// the growth out of the threshold and recorded it per wait: read back from there, under
/// the maps `(mx, mw)`); on a self-clearing cell none, and no reuse question left open.
fn growth_fits(
    cx: &mut Ctx,
    n: &PEv,
    w: &PEv,
    v: &Lin,
    b: i64,
    (mx, mw): (&Map, &Map),
    reuse: Option<&str>,
) -> Result<(), String> {
    let monotonic = cx.p.signals[n.signal].monotonic;
    let b = match (monotonic, cx.growth.get(&w.span.start).cloned()) {
        (true, Some(g)) if b == 0 => {
            let g = solve::lin(&mut cx.run.syms, &g, mx).ok_or_else(ov)?;
            let g = solve::lin(&mut cx.run.syms, &g, mw).ok_or_else(ov)?;
            g.as_const().ok_or_else(|| {
                "a monotonic wait whose threshold growth is not a constant".to_string()
            })?
        }
        _ => b,
    };
    if monotonic {
        let Some(vk) = v.as_const() else {
            return Err("a credit to a monotonic cell whose value is not a constant".into());
        };
        if b < vk {
            return Err("a monotonic wait whose threshold grows slower than the credit".into());
        }
    } else if b != 0 {
        return Err("a threshold that reads the call index on a self-clearing cell".into());
    } else if let Some(r) = reuse {
        return Err(format!(
            "a wait on a self-clearing cell needs the reuse theorem, and {r}"
        ));
    }
    Ok(())
}
