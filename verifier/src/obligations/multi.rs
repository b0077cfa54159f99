//! The many-writer reset rule, part of the `stale-credit` obligation (README, "The reuse
//! theorem"): on a credit cell that two or more actors other than its owner credit, the
//! owner's reset must come, in its program order, after a wait whose threshold is at least
//! the call's total credits to the cell, so the owner has observed every credit of the call
//! before it takes them back. Otherwise the reset runs while credits of the call are still
//! in flight (the cell goes below zero; by count those late credits only pay the reset's
//! debt), and nothing orders the owner's release of the call after the writers it did not
//! observe: the many-writer argument of the reuse theorem rests on that wait. Cells with one
//! writer (besides the owner) keep the single-writer rules of `stale_credit.rs`.

use crate::engine::events::{cell_name, chain, contrib, is_add, is_wait, value_of};
use crate::engine::exec::{Cell, EvKind, Event, Run, Section};
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::{subset, Lin};
use crate::obligations::context::{Acc, Ctx};
use crate::obligations::order::{Actor, Hb};
use crate::report::Finding;
use collc_spec::ir::CmpOp;
use std::collections::{BTreeMap, BTreeSet};

/// True when `v` is a take-back: literally non-positive and not zero.
pub(crate) fn is_reset(syms: &mut crate::engine::sym::Syms, v: &Lin) -> bool {
    match Lin::k(0).sub(v) {
        Some(neg) => !v.is_zero() && syms.nonneg(&neg),
        None => false,
    }
}

/// A wait's effective threshold (`> t` needs `t + 1`), at the last iteration of its
/// summarised loops (the largest threshold of a growing round structure). `None` for
/// non-monotone comparisons (flagged by `stale-credit` itself) or a threshold that is
/// not affine in its loop variables.
fn last_need(run: &Run, ev: usize) -> Option<Lin> {
    let EvKind::Wait { cmp, thr } = &run.events[ev].kind else {
        return None;
    };
    let mut need = match cmp {
        CmpOp::Ge => thr.clone(),
        CmpOp::Gt => thr.add(&Lin::k(1))?,
        _ => return None,
    };
    for f in chain(run, &run.events[ev]) {
        let fr = &run.frames[f as usize];
        if run.syms.nested(&need, fr.iter) {
            return None;
        }
        let last = fr.trip.add(&Lin::k(-1))?;
        need = run.syms.subst(&need, fr.iter, &last)?;
    }
    Some(need)
}

/// The rule on every credit cell of one configuration.
pub(crate) fn reset_rule(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let facts = ctx.facts;
    for rep in &facts.reps {
        let (cell, evs) = (&rep.cell, &rep.ev.all);
        if ctx.p.signals[cell.signal].kind == collc_spec::ir::SignalKind::Value {
            continue;
        }
        let mut credits: Vec<usize> = Vec::new();
        let mut resets: Vec<usize> = Vec::new();
        let mut waits: Vec<usize> = Vec::new();
        for &e in evs {
            let ev = &run.events[e];
            if is_wait(ev) {
                waits.push(e);
            } else if is_add(ev) {
                let v = value_of(ev);
                if is_reset(&mut run.syms, &v) {
                    resets.push(e);
                } else if run.events[e].section == Section::Body {
                    credits.push(e);
                }
            } else if !matches!(ev.kind, EvKind::Fence) {
                // A Set on the cell: op-exclusivity / credit-balance report it.
                credits.clear();
                break;
            }
        }
        let monotonic = ctx.p.signals[cell.signal].monotonic;
        if credits.is_empty() || waits.is_empty() || (resets.is_empty() && !monotonic) {
            continue;
        }
        // The first reset of each resetting actor (later ones come after it).
        let mut first: BTreeMap<(u32, u32), Option<usize>> = BTreeMap::new();
        for &r in &resets {
            let a = run.events[r].actor;
            let e = first.entry(a).or_insert(Some(r));
            if e.is_none_or(|e| run.events[r].seq < run.events[e].seq) {
                *e = Some(r);
            }
        }
        if monotonic && resets.is_empty() {
            // A monotonic cell is never reset; its waits read the reduced thresholds, as if
            // its owner reset it at the end of every call (README, "Monotonic signals").
            for &w in &waits {
                first.insert(run.events[w].actor, None);
            }
        }
        for (owner, r) in first {
            let writers: BTreeSet<(u32, u32)> = credits
                .iter()
                .map(|e| run.events[*e].actor)
                .filter(|a| *a != owner)
                .collect();
            if writers.len() < 2 {
                continue;
            }
            acc.items += 1;
            let case = ResetCase {
                cell,
                owner,
                r,
                credits: &credits,
                waits: &waits,
                writers: &writers,
            };
            let f = match check_reset(ctx, run, &case, acc) {
                Seen::All(w) => overtake(ctx, run, acc, cell, w, &credits, &writers),
                Seen::Partial(f) => Some(*f),
                Seen::Open => None,
            };
            if let Some(f) = f {
                if in_sequence(ctx, run, acc, &credits, &writers) {
                    continue;
                }
                acc.violation = Some(f);
                return;
            }
        }
    }
}

/// The credits a wait of `owner` at program position `seq` can have observed in the call:
/// every other actor's, and the owner's own that precede it.
fn total_before(
    run: &mut Run,
    credits: &[usize],
    owner: (u32, u32),
    seq: u32,
) -> Result<Lin, String> {
    let mut total = Lin::k(0);
    for &e in credits {
        let ev = &run.events[e];
        if ev.actor == owner && ev.seq >= seq {
            continue;
        }
        let v = value_of(ev);
        let c = contrib(run, e, &v)?;
        total = total.add(&c).ok_or("overflow")?;
    }
    Ok(total)
}

/// What the owner's waits before a reset observe of the call's credits.
enum Seen {
    /// This wait (the earliest such) observes every credit of the call.
    All(usize),
    /// None does: the finding.
    Partial(Box<Finding>),
    /// Undecided (recorded as `unknown`), or the reset never runs.
    Open,
}

/// One (cell, owner) the many-writer reset rule checks: the owner's first reset (`None`:
/// a monotonic cell's virtual reset at the end of the call), the cell's credits and waits,
/// and its writers other than the owner.
struct ResetCase<'a> {
    cell: &'a Cell,
    owner: (u32, u32),
    r: Option<usize>,
    credits: &'a [usize],
    waits: &'a [usize],
    writers: &'a BTreeSet<(u32, u32)>,
}

/// The latest wait before the reset that does not observe every credit, with its need and
/// the refuting assignment.
struct Refuted {
    wait: usize,
    need: Lin,
    a: crate::engine::sym::Assign,
}

impl ResetCase<'_> {
    /// The reset event: the owner's first reset, or a monotonic cell's virtual reset after
    /// the owner's last wait of the call, under every guard (each wait is then proved under
    /// its own). `None` when the owner does not wait.
    fn reset(&self, run: &Run) -> Option<Event> {
        if let Some(r) = self.r {
            return Some(run.events[r].clone());
        }
        let &last = self
            .waits
            .iter()
            .filter(|w| run.events[**w].actor == self.owner)
            .max_by_key(|w| run.events[**w].seq)?;
        let mut e = run.events[last].clone();
        e.seq = u32::MAX;
        e.guard = Vec::new();
        Some(e)
    }

    /// The owner's waits before the reset, latest first (the likeliest to see everything).
    fn waits_before(&self, run: &Run, reset: &Event) -> Vec<usize> {
        let mut before: Vec<usize> = self
            .waits
            .iter()
            .copied()
            .filter(|w| {
                let ev = &run.events[*w];
                ev.actor == self.owner
                    && ev.seq < reset.seq
                    && (self.r.is_none() || subset(&ev.guard, &reset.guard))
            })
            .collect();
        before.sort_by_key(|w| std::cmp::Reverse(run.events[*w].seq));
        before
    }
}

fn check_reset(ctx: &mut Ctx, run: &mut Run, c: &ResetCase, acc: &mut Acc) -> Seen {
    let Some(reset) = c.reset(run) else {
        return Seen::Open;
    };
    if reset.frame.is_some() && c.r.is_some() {
        acc.unknown(
            format!(
                "{}: several writers credit it and its reset sits in a loop kept symbolic; the many-writer reset rule needs the reset outside such loops",
                cell_name(ctx.p, c.cell)
            ),
            Some(reset.span),
        );
        return Seen::Open;
    }
    let whole = match total_before(run, c.credits, c.owner, reset.seq) {
        Ok(t) => t,
        Err(why) => {
            acc.unknown(
                format!(
                    "{}: the per-cell sum cannot be closed: {why}",
                    cell_name(ctx.p, c.cell)
                ),
                Some(reset.span),
            );
            return Seen::Open;
        }
    };
    let refuted = match observe(ctx, run, c, &reset, acc) {
        Observed::All(w) => return Seen::All(w),
        Observed::Open => return Seen::Open,
        Observed::None(refuted) => refuted,
    };
    let a = match &refuted {
        Some(x) => x.a.clone(),
        None => match ctx.prove(
            run,
            acc,
            &reset.guard,
            &[],
            Prop::Never(reset.guard.clone()),
        ) {
            Answer::Refuted(a) => a,
            _ => return Seen::Open, // the reset never runs
        },
    };
    let t = run.syms.eval(&whole, &a).unwrap_or(0);
    Seen::Partial(Box::new(reset_finding(
        ctx,
        run,
        c,
        reset.span,
        refuted.as_ref(),
        &a,
        t,
    )))
}

/// What the owner's waits before the reset observe.
enum Observed {
    /// This wait (the earliest such) observes every credit of the call.
    All(usize),
    /// None does; the latest wait's refutation, if one was refuted.
    None(Option<Refuted>),
    /// Undecided (recorded in `acc`).
    Open,
}

/// Whether a wait of the owner before the reset observes every credit of the call. The
/// latest wait's refutation is the counterexample when none does.
fn observe(ctx: &mut Ctx, run: &mut Run, c: &ResetCase, reset: &Event, acc: &mut Acc) -> Observed {
    let mut refuted: Option<Refuted> = None;
    let mut seen: Option<usize> = None;
    for w in c.waits_before(run, reset) {
        let Some(need) = last_need(run, w) else {
            continue;
        };
        let total = match total_before(run, c.credits, c.owner, run.events[w].seq) {
            Ok(t) => t,
            Err(_) => continue,
        };
        let Some(d) = need.sub(&total) else { continue };
        let frames = chain(run, &run.events[w]);
        let g = match c.r {
            Some(_) => reset.guard.clone(),
            None => run.events[w].guard.clone(),
        };
        match ctx.prove(run, acc, &g, &frames, Prop::Ge0(d)) {
            // Keep looking: the earliest such wait orders the most of the next call.
            Answer::Valid => seen = Some(w),
            Answer::Unknown(kind, why) => {
                if seen.is_some() {
                    break;
                }
                acc.undecided(
                    kind,
                    format!("{}: {why}", cell_name(ctx.p, c.cell)),
                    Some(run.events[w].span),
                );
                return Observed::Open;
            }
            Answer::Refuted(a) => {
                if refuted.is_none() {
                    refuted = Some(Refuted { wait: w, need, a });
                }
            }
        }
    }
    match seen {
        Some(w) => Observed::All(w),
        None => Observed::None(refuted),
    }
}

/// The finding of a reset that follows no wait for the whole call's `t` credits.
fn reset_finding(
    ctx: &mut Ctx,
    run: &mut Run,
    c: &ResetCase,
    reset: collc_grammar::Span,
    refuted: Option<&Refuted>,
    a: &crate::engine::sym::Assign,
    t: i64,
) -> Finding {
    let name = cell_name(ctx.p, c.cell);
    let who: Vec<String> = c
        .writers
        .iter()
        .map(|(r, b)| {
            if run.blocks > 1 {
                format!("rank {r} block {b}")
            } else {
                format!("rank {r}")
            }
        })
        .collect();
    let mut f = match refuted {
        Some(x) => {
            let k = run.syms.eval(&x.need, a).unwrap_or(0);
            let mut f = Finding::new(format!(
                "{name} is credited by {} writers, but its reset follows a wait that observes only {k} of the call's {t} credits: the owner goes on before every writer's credit of the call has arrived, and takes back credits still in flight",
                c.writers.len()
            ));
            f.value = Some(k);
            f.labels.push((
                run.events[x.wait].span,
                format!("waits for {k} of {t}: the other credits may still be in flight"),
            ));
            f
        }
        None => {
            let mut f = Finding::new(format!(
                "{name} is credited by {} writers, but its reset follows no wait on it: the owner goes on before every writer's credit of the call has arrived, and takes back credits still in flight",
                c.writers.len()
            ));
            f.value = Some(0);
            f
        }
    };
    f.params = ctx.params(run, a);
    f.cell = Some(name.clone());
    f.primary = Some(reset);
    f.primary_label = match c.r {
        Some(_) => format!("takes back all {t} credits before the owner has observed them"),
        None => format!(
            "the call ends here, before the owner has observed all {t} credits (a monotonic cell keeps them for the next call)"
        ),
    };
    let mut shown: Vec<collc_grammar::Span> = Vec::new();
    for &e in c.credits {
        let s = run.events[e].span;
        if run.events[e].actor != c.owner && !shown.contains(&s) {
            shown.push(s);
            f.labels
                .push((s, "one of several unordered writers".into()));
        }
    }
    let mut all: Vec<usize> = c.credits.to_vec();
    all.extend(c.r);
    if let Some(x) = refuted {
        all.push(x.wait);
    }
    f.contributions = ctx.contributions(run, &all, a);
    f.notes
        .push(format!("writers of {name}: {}", who.join(", ")));
    f.notes.push("with several unordered writers the credits that have arrived are not a prefix of one writer's sequence, so the single-writer argument of the reuse theorem does not apply: the many-writer argument needs the reset after a wait for the whole call's credits (a credit that lands after the reset only pays its debt, by count, but no wait has ordered the owner after its writer)".into());
    f.help = Some(format!(
        "wait for every credit of the call before the reset (`>= {t}` here, as a formula: the cell's credits per call), or give each writer its own cell"
    ));
    f
}

/// The writers' credits form one sequence across calls: a notify/wait chain orders each
/// writer's last credit of the call before the next writer's first, and the last writer's
/// last credit before the first writer's first credit of the next call. Then the arrived
/// credits are a prefix of that one sequence and the single-writer argument applies.
fn in_sequence(
    ctx: &mut Ctx,
    run: &mut Run,
    acc: &mut Acc,
    credits: &[usize],
    writers: &BTreeSet<Actor>,
) -> bool {
    let mut ends: BTreeMap<Actor, (u32, u32)> = BTreeMap::new();
    for &e in credits {
        let ev = &run.events[e];
        if !writers.contains(&ev.actor) {
            continue;
        }
        let x = ends.entry(ev.actor).or_insert((ev.seq, ev.seq));
        x.0 = x.0.min(ev.seq);
        x.1 = x.1.max(ev.seq);
    }
    let hb = Hb::new(ctx, run, acc);
    let after: BTreeMap<Actor, std::collections::HashMap<Actor, u32>> = ends
        .iter()
        .map(|(a, (_, last))| (*a, hb.reach(&[(*a, last + 1)])))
        .collect();
    let precedes = |a: &Actor, b: &Actor| after[a].get(b).is_some_and(|t| *t <= ends[b].0);
    // The order: by how many other writers each one precedes, most first.
    let mut order: Vec<Actor> = ends.keys().copied().collect();
    order.sort_by_key(|a| std::cmp::Reverse(order_count(&ends, a, &precedes)));
    if !order.windows(2).all(|w| precedes(&w[0], &w[1])) {
        return false;
    }
    let (Some(first), Some(last)) = (order.first(), order.last()) else {
        return false;
    };
    // Next call: everything ordered after the last credit runs its next call afterwards.
    let mut next: Vec<(Actor, u32)> = after[last].keys().map(|a| (*a, 0)).collect();
    next.push((*last, 0));
    hb.reach(&next)
        .get(first)
        .is_some_and(|t| *t <= ends[first].0)
}

fn order_count(
    ends: &BTreeMap<Actor, (u32, u32)>,
    a: &Actor,
    precedes: &dyn Fn(&Actor, &Actor) -> bool,
) -> usize {
    ends.keys().filter(|b| *b != a && precedes(a, b)).count()
}

/// The other direction: wait `w` of the owner observes every credit of its call, so it
/// must also count none of the next call's. Every writer's first credit to the cell in the
/// next call must be ordered after `w` by a notify/wait chain (`Hb::next_call`: through
/// this call after `w`, then the next); else a fast writer's next-call credit can stand in
/// for a slow writer's credit of this call that has not arrived yet.
fn overtake(
    ctx: &mut Ctx,
    run: &mut Run,
    acc: &mut Acc,
    cell: &Cell,
    w: usize,
    credits: &[usize],
    writers: &BTreeSet<Actor>,
) -> Option<Finding> {
    let mut first: BTreeMap<Actor, usize> = BTreeMap::new();
    for &e in credits {
        let a = run.events[e].actor;
        if !writers.contains(&a) {
            continue;
        }
        let x = first.entry(a).or_insert(e);
        if run.events[e].seq < run.events[*x].seq {
            *x = e;
        }
    }
    let ew = run.events[w].clone();
    let hb = Hb::new(ctx, run, acc);
    let start = [(ew.actor, ew.seq + 1)];
    let at = hb.next_call(&start);
    let (x, e) = first
        .into_iter()
        .find(|(x, e)| at.get(x).is_none_or(|t| *t > run.events[*e].seq))?;
    let name = cell_name(ctx.p, cell);
    if let Some(sp) = hb.unexamined_from(&start) {
        acc.unknown(
            format!(
                "{name}: several writers credit it, and whether rank {}'s credit of the next call is ordered after the owner's wait for the whole call depends on a wait in a loop kept symbolic or under another condition",
                x.0
            ),
            Some(sp),
        );
        return None;
    }
    let who = if run.blocks > 1 {
        format!("rank {} block {}", x.0, x.1)
    } else {
        format!("rank {}", x.0)
    };
    let en = run.events[e].clone();
    let mut f = Finding::new(format!(
        "{name} is credited by {} writers, and {who}'s credit of the next call is not ordered after the wait that counts this call's credits: it can arrive while another writer's credit of this call is still missing, and the wait passes counting it",
        writers.len()
    ));
    f.params = ctx.params(run, &crate::engine::sym::Assign::default());
    f.cell = Some(name.clone());
    f.primary = Some(ew.span);
    f.primary_label = "can pass on a credit of the next call".into();
    f.labels.push((
        en.span,
        format!("{who} may already send its next call's credit here"),
    ));
    f.contributions = ctx.contributions(run, &[e, w], &crate::engine::sym::Assign::default());
    let who_all: Vec<String> = writers.iter().map(|(r, _)| format!("rank {r}")).collect();
    f.notes
        .push(format!("writers of {name}: {}", who_all.join(", ")));
    f.notes.push("with several unordered writers the owner's count cannot tell calls apart: a wait for all of the call's credits is sound only if no writer's next-call credit can arrive before it passes (a notify/wait chain from after the wait to the writer's next credit, as the release of a gather/release barrier)".into());
    f.help = Some(format!(
        "order {who}'s next credit after the wait (release the writers after it, and make them wait for the release before they credit {name} again), or give each writer its own cell"
    ));
    Some(f)
}
