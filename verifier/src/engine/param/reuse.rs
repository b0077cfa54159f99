//! `buffer-reuse` with P and the call index symbolic (README, "Buffer reuse across
//! calls"): in a protocol that reads the call index, a `reused` window instance — a whole
//! window, or the part `scratch[call % k]` of one — is written by a later call only after
//! every access of an earlier call by another process is done.
//!
//! Two data passes ([`super::extract::pass_data`]) give every window access of a generic
//! actor A (the access `x` of call `c`) and B (the write `w`). For each pair on one
//! window, the coordinates that do not read `call` are solved for B's variables (the
//! writer meets the instance A accesses); the *reuse distance* `d` is the smallest
//! `d >= 1` for which `w` of call `c + d` can reach the instance `x` reached in call `c`
//! (the coordinates that read `call` shifted by `d`, a Z3 satisfiability question per `d`,
//! up to [`DMAX`]). The pair is ordered when the writer is the accessing rank (program
//! order), or by one credit hop ([`super::reuse_hop`]): a credit of A's rank in its call
//! `c + i` (after `x` when `i = 0`) that the writer's wait of call `c + i'` needs
//! (before `w` when `i' = d`), `0 <= i <= i' <= d`. Writes of later calls `c + d' > c + d`
//! follow the writer's wait of call `c + i'` in program order too.
//!
//! A pair that no such chain orders is a violation only when a schedule is certain
//! ([`witnessed`]): the accessing rank notifies nothing after the access in its call, and
//! no wait runs on the writer between the start of its call `c + 1` and the write. Then
//! every other process can end call `c` while the accessing rank stops just before its
//! access, and the writer runs on to the write. Otherwise (a longer chain through other
//! ranks may order the pair) and for forms the route does not cover, the obligation is open.

use super::extract::{PAcc, PKind};
use super::oblig::Side;
use super::reuse_hop::Hop;
use super::solve;
use super::value_next::conj;
use super::{Ctx, Outcome, Proof};
use crate::engine::smt::Prop;
use crate::engine::sym::{cond_mentions, mentions, subst_deep};
use crate::engine::sym::{union, AtomId, Guard, Lin};
use collc_grammar::Span;
use collc_spec::ir::*;
use std::time::{Duration, Instant};

/// The largest reuse distance searched; a part not reached again within it is given this
/// distance plus one (a chain for a smaller distance orders every larger one too).
pub const DMAX: i64 = 16;

/// The credit obligations a hop on a self-clearing cell relies on (the reuse theorem).
const NEEDS: [&str; 3] = ["credit-balance", "op-exclusivity", "stale-credit"];

/// A pair of accesses no chain orders.
#[derive(Clone, Debug)]
pub struct Unordered {
    /// The window.
    pub window: String,
    /// The access of call `c`.
    pub access: Span,
    /// Whether that access is a write.
    pub access_writes: bool,
    /// The write of call `c + distance`.
    pub write: Span,
    /// The reuse distance.
    pub distance: i64,
    /// A world size at which the two reach one instance from two ranks (Z3's model).
    pub world: Option<i64>,
    /// Why the candidates failed.
    pub why: String,
}

/// What the route showed.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Every pair ordered, for every P and call index.
    Proved {
        /// Checks made.
        proof: Proof,
        /// Pairs of accesses (access, write) on one window.
        pairs: usize,
        /// Per window, the smallest reuse distance found (`DMAX + 1`: none within it; 0:
        /// only the accessing rank writes what it accesses).
        distances: Vec<(String, i64)>,
    },
    /// A pair no chain of the covered forms orders.
    Unordered(Unordered),
    /// A form the route does not cover.
    Open(String),
    /// The wall-clock cap passed before the route finished (why it stopped).
    Capped(String),
}

/// `buffer-reuse` for the whole declared domain, or `None` when the protocol does not read
/// the call index or has no `reused` window.
pub fn prove(p: &Protocol, credits: &Outcome, budget: Duration) -> Option<Verdict> {
    p.call?;
    if Id::range(p.windows.len()).all(|w| p.window_per_call(w)) {
        return None;
    }
    let deadline = Instant::now() + budget;
    Some(match run(p, credits, deadline) {
        Ok(v) => v,
        Err(why) if Instant::now() >= deadline => Verdict::Capped(why),
        Err(why) => Verdict::Open(why),
    })
}

fn ov() -> String {
    "arithmetic overflow".into()
}

fn run(p: &Protocol, credits: &Outcome, deadline: Instant) -> Result<Verdict, String> {
    if p.blocks.is_some() {
        return Err(
            "several blocks per rank (blocks of one rank are not ordered with each other)".into(),
        );
    }
    let mut cx = Ctx::new(p, deadline)?;
    let mut a = super::extract::pass_data(p, &mut cx.run.syms, &cx.env, &cx.world, &cx.blocks)
        .map_err(|(m, _)| m)?;
    let mut b = super::extract::pass_data(p, &mut cx.run.syms, &cx.env, &cx.world, &cx.blocks)
        .map_err(|(m, _)| m)?;
    super::epoch::reduce(p, &mut cx.run.syms, &mut a)?;
    cx.growth = super::epoch::reduce(p, &mut cx.run.syms, &mut b)?;
    cx.a = a;
    cx.b = b;
    let reuse = NEEDS.iter().find_map(|dep| {
        credits
            .open(dep)
            .map(|why| format!("{dep} is not proved with P symbolic ({why})"))
    });
    let call = super::epoch::call_atom(p, &mut cx.run.syms).ok_or("no call index")?;
    let xs: Vec<PAcc> =
        cx.a.accesses
            .iter()
            .filter(|x| !p.window_per_call(x.window))
            .cloned()
            .collect();
    let ws: Vec<PAcc> = cx.b.accesses.iter().filter(|w| w.write).cloned().collect();
    let mut pairs = 0;
    let mut distances: Vec<(String, i64)> = Vec::new();
    for x in &xs {
        for w in ws.iter().filter(|w| w.window == x.window) {
            pairs += 1;
            let d = match pair(&mut cx, x, w, call, reuse.as_deref())? {
                Ok(d) => d,
                Err(u) => return Ok(Verdict::Unordered(u)),
            };
            let name = p.windows[x.window].name.clone();
            // The smallest positive distance (0: only the accessing rank writes).
            match distances.iter_mut().find(|(n, _)| *n == name) {
                Some(e) if d > 0 && (e.1 == 0 || d < e.1) => e.1 = d,
                Some(_) => {}
                None => distances.push((name, d)),
            }
        }
    }
    Ok(Verdict::Proved {
        proof: cx.stats.clone(),
        pairs,
        distances,
    })
}

/// Whether a statement's rank, condition or loops read the call index.
fn reads_call(cx: &Ctx, acc: &PAcc, side: Side, call: AtomId) -> bool {
    let s = &cx.run.syms;
    let pass = match side {
        Side::A => &cx.a,
        Side::B => &cx.b,
    };
    acc.guard.iter().any(|g| cond_mentions(s, *g, call))
        || mentions(s, &acc.owner, call)
        || acc
            .loops
            .iter()
            .any(|l| mentions(s, &pass.loops[*l].trip, call))
}

/// One pair: `Ok(Ok(d))` ordered at reuse distance `d` (0: never reached from two ranks),
/// `Ok(Err(_))` unordered, `Err` a form not covered.
fn pair(
    cx: &mut Ctx,
    x: &PAcc,
    w: &PAcc,
    call: AtomId,
    reuse: Option<&str>,
) -> Result<Result<i64, Unordered>, String> {
    if reads_call(cx, x, Side::A, call) || reads_call(cx, w, Side::B, call) {
        return Err(
            "a window access whose rank, condition or loop bounds read the call index".into(),
        );
    }
    if x.index.len() != w.index.len() {
        return Err("a window indexed with a varying number of coordinates".into());
    }
    // The coordinates that do not read the call index: the writer meets the instance.
    let mut eqs = vec![(w.owner.clone(), x.owner.clone())];
    let mut parity = Vec::new();
    for (wi, xi) in w.index.iter().zip(&x.index) {
        if mentions(&cx.run.syms, wi, call) || mentions(&cx.run.syms, xi, call) {
            parity.push((wi.clone(), xi.clone()));
        } else {
            eqs.push((wi.clone(), xi.clone()));
        }
    }
    let mut wvars = vec![cx.b.me];
    wvars.extend(w.loops.iter().map(|l| cx.b.loops[*l].atom));
    let (mx, conds) = cx.solve_all(Side::B, &wvars, &eqs, &w.guard, &wvars)?;
    let writer = solve::lin(&mut cx.run.syms, &Lin::atom(cx.b.me), &mx).ok_or_else(ov)?;
    let reader = Lin::atom(cx.a.me);
    let ne = cx
        .run
        .syms
        .cmp(CmpOp::Ne, &writer, &reader)
        .ok_or_else(ov)?;
    let Some(premise) = conj(&x.guard, &conds).and_then(|g| conj(&g, &[ne])) else {
        // Only the accessing rank itself writes the instance: program order.
        cx.stats.items += 1;
        cx.stats.literal += 1;
        return Ok(Ok(0));
    };
    // Two ranks reach one instance at all (else only the accessing rank writes it).
    let before = cx.named.len();
    let meets = cx.holds(&Vec::new(), Prop::Never(premise.clone()));
    let world = cx.named.get(before).copied();
    cx.named.truncate(before);
    if meets.is_ok() {
        return Ok(Ok(0));
    }
    if parity.is_empty() {
        return finish(cx, x, w, &mx, &writer, &premise, 1, world, call, reuse);
    }
    // The reuse distance: the smallest d at which the write reaches the instance again.
    let c = Lin::atom(call);
    let last = Lin::k(crate::engine::call::call_bounds(cx.p).1);
    let mut found: Option<(i64, Option<i64>)> = None;
    for d in 1..=DMAX {
        let shifted = c.add(&Lin::k(d)).ok_or_else(ov)?;
        let mut meet = vec![cx.run.syms.cmp(CmpOp::Le, &shifted, &last).ok_or_else(ov)?];
        for (wi, xi) in &parity {
            let wi = subst_deep(&mut cx.run.syms, wi, call, &shifted).ok_or_else(ov)?;
            let wi = solve::lin(&mut cx.run.syms, &wi, &mx).ok_or_else(ov)?;
            meet.push(cx.run.syms.cmp(CmpOp::Eq, &wi, xi).ok_or_else(ov)?);
        }
        let Some(g) = conj(&premise, &meet) else {
            cx.stats.items += 1;
            cx.stats.literal += 1;
            continue;
        };
        let before = cx.named.len();
        let rr = cx.holds(&Vec::new(), Prop::Never(g));
        match rr {
            Ok(()) => continue,
            Err(_) => {
                let world = cx.named.get(before).copied();
                cx.named.truncate(before);
                found = Some((d, world));
                break;
            }
        }
    }
    let (d, world) = found.unwrap_or((DMAX + 1, None));
    finish(cx, x, w, &mx, &writer, &premise, d, world, call, reuse)
}

/// The pair at reuse distance `d` (`world`: a P at which it meets from two ranks).
#[allow(clippy::too_many_arguments)]
fn finish(
    cx: &mut Ctx,
    x: &PAcc,
    w: &PAcc,
    mx: &solve::Map,
    writer: &Lin,
    premise: &Guard,
    d: i64,
    world: Option<i64>,
    call: AtomId,
    reuse: Option<&str>,
) -> Result<Result<i64, Unordered>, String> {
    let hop = Hop {
        x,
        w,
        mx,
        writer,
        premise,
        distance: d,
        call,
        reuse,
    };
    let why = match super::reuse_hop::chain(cx, &hop)? {
        Ok(()) => return Ok(Ok(d)),
        Err(why) => why,
    };
    let window = cx.p.windows[x.window].name.clone();
    if world.is_none() || !witnessed(cx, x, w, mx, premise, d)? {
        return Err(format!(
            "a chain through other ranks: no chain of program order or one credit hop orders a write of `{window}` of call c + {d} after another rank's access of call c ({why}), and the writer waits before that write, so whether a longer chain orders them is not decided"
        ));
    }
    Ok(Err(Unordered {
        window,
        access: x.span,
        access_writes: x.write,
        write: w.span,
        distance: d,
        world,
        why,
    }))
}

/// Whether a schedule runs the write of call `c + d` before the access of call `c`: the
/// accessing rank notifies nothing that is waited on after the access in its call (so every other process
/// can end call `c` without it), and no wait runs on the writer from the start of its call
/// `c + 1` up to the write (for `d = 1` the waits before the write; else every wait).
fn witnessed(
    cx: &mut Ctx,
    x: &PAcc,
    w: &PAcc,
    mx: &solve::Map,
    premise: &Guard,
    d: i64,
) -> Result<bool, String> {
    // A notify of a signal nothing waits on releases no one.
    let waited = |s: SignalId| {
        cx.a.events
            .iter()
            .any(|v| v.signal == s && matches!(v.kind, PKind::Wait { .. }))
    };
    let notifies_after = cx.a.events.iter().any(|n| {
        matches!(n.kind, PKind::Notify { .. })
            && waited(n.signal)
            && (n.pos() > x.pos() || n.loops.iter().any(|l| x.loops.contains(l)))
    });
    if notifies_after {
        return Ok(false);
    }
    let waits: Vec<super::extract::PEv> =
        cx.b.events
            .iter()
            .filter(|v| matches!(v.kind, PKind::Wait { .. }))
            .filter(|v| d > 1 || v.pos() < w.pos() || v.loops.iter().any(|l| w.loops.contains(l)))
            .cloned()
            .collect();
    for v in waits {
        // The wait does not run on the writer: its condition, on the writer's values, is
        // false wherever the pair meets.
        let Some(g) = solve::guard(&mut cx.run.syms, &v.guard, mx).ok_or_else(ov)? else {
            cx.stats.items += 1;
            cx.stats.literal += 1;
            continue;
        };
        let both = union(premise, &g);
        let before = cx.named.len();
        let r = cx.holds(&Vec::new(), Prop::Never(both));
        cx.named.truncate(before);
        if r.is_err() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `e` (a credit of pass A, or a wait of pass B) runs after (`after`) or before
/// the access `acc` of the same pass, outside its loops and not in the other branch.
pub(super) fn placed(
    pass: &super::extract::Pass,
    e: &super::extract::PEv,
    acc: &PAcc,
    after: bool,
) -> bool {
    let order = if after {
        e.pos() > acc.pos()
    } else {
        e.pos() < acc.pos()
    };
    order
        && e.loops.iter().all(|l| !acc.loops.contains(l))
        && !pass.exclusive_blocks(&e.blocks, &acc.blocks)
}
