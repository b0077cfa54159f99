//! The `credit-balance` obligation: every written credit cell nets exactly 0 per call. A
//! cell written with AtomicAdd only: its credits and its reset, summed in closed form,
//! cancel; one written with Set only: every Set writes 0; one mixing both: its exit value,
//! in program order with bodies before epilogues, is 0. Monotonic cells are checked by
//! [`crate::obligations::epoch::balance`], value cells not at all.

use crate::engine::events::{cell_name, chain, contrib, is_set, value_of};
use crate::engine::exec::{Cell, Run};
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::{Assign, Lin, Printer};
use crate::obligations::context::{Acc, Ctx};
use crate::report::{Contribution, Finding, Obligation};
use collc_spec::ir::SignalKind;
use std::collections::HashMap;

/// The obligation.
pub(crate) const OBLIGATION: Obligation = Obligation::CreditBalance;

/// The obligation on one configuration, into `acc`.
pub(crate) fn check(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    credits(ctx, run, acc);
    if acc.open() {
        crate::obligations::epoch::balance(ctx, run, acc);
    }
}

/// Every non-monotonic credit cell.
fn credits(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let mut cache: HashMap<Lin, bool> = HashMap::new();
    let facts = ctx.facts;
    for rep in &facts.reps {
        let cell = &rep.cell;
        let notifies = &rep.ev.writes;
        // Value cells are never reset; monotonic ones are checked by `epoch::balance`.
        if ctx.p.signals[cell.signal].kind == SignalKind::Value
            || ctx.p.signals[cell.signal].monotonic
            || notifies.is_empty()
        {
            continue;
        }
        let (has_set, has_add) = (!rep.ev.sets.is_empty(), !rep.ev.adds.is_empty());
        acc.items += 1;
        let stop = if has_set && has_add {
            mixed(ctx, run, cell, notifies, acc)
        } else if has_set {
            set_only(ctx, run, cell, notifies, acc)
        } else {
            add_only(ctx, run, cell, notifies, &mut cache, acc)
        };
        if stop {
            return;
        }
    }
}

/// A cell mixing Set and AtomicAdd: op-exclusivity reports the mix; the cell's exit value
/// is still checked in the canonical order (bodies before epilogues, ranks in order), when
/// no Set sits in a summarised loop or under a symbolic condition. True on a violation.
fn mixed(ctx: &mut Ctx, run: &mut Run, cell: &Cell, notifies: &[usize], acc: &mut Acc) -> bool {
    let mut order = notifies.to_vec();
    order.sort_by_key(|e| {
        let x = &run.events[*e];
        (x.section, x.actor, x.seq)
    });
    if order.iter().any(|e| {
        is_set(&run.events[*e])
            && (run.events[*e].frame.is_some() || !run.events[*e].guard.is_empty())
    }) {
        return false;
    }
    let mut val = Lin::k(0);
    for &e in &order {
        let v = value_of(&run.events[e]);
        if is_set(&run.events[e]) {
            val = v;
        } else if let Ok(c) = contrib(run, e, &v) {
            val = val.add(&c).unwrap_or(val);
        }
    }
    if val.is_zero() {
        acc.literal += 1;
        return false;
    }
    if let Answer::Refuted(a) = ctx.prove(run, acc, &Vec::new(), &[], Prop::Eq0(val.clone())) {
        let x = run.syms.eval(&val, &a).unwrap_or(0);
        let mut f = balance_finding(ctx, run, cell, notifies, &val, x, &a);
        f.notes.push("the cell mixes Set and AtomicAdd; its exit value is taken in program order, bodies before epilogues".into());
        acc.violation = Some(f);
        return true;
    }
    false
}

/// A credit cell written only with Set is left at the Set value. True on a violation.
fn set_only(ctx: &mut Ctx, run: &mut Run, cell: &Cell, notifies: &[usize], acc: &mut Acc) -> bool {
    for &e in notifies {
        let ev = run.events[e].clone();
        let v = value_of(&ev);
        let frames = chain(run, &ev);
        let ans = ctx.prove(run, acc, &ev.guard, &frames, Prop::Eq0(v.clone()));
        match ans {
            Answer::Valid => {}
            Answer::Unknown(kind, r) => acc.undecided_at(ctx.p, cell, kind, &r, ev.span),
            Answer::Refuted(a) => {
                let val = run.syms.eval(&v, &a).unwrap_or(0);
                let mut f = Finding::new(format!(
                    "{} is a credit cell but is written with Set({val}): it is left at {val} after the call",
                    cell_name(ctx.p, cell)
                ));
                f.params = ctx.params(run, &a);
                f.cell = Some(cell_name(ctx.p, cell));
                f.value = Some(val);
                f.primary = Some(ev.span);
                f.primary_label = format!("sets the cell to {val}; nothing takes it back to 0");
                f.contributions = ctx.contributions(run, notifies, &a);
                f.help = Some("count credits with `+= 1` and take them back in the epilogue with `-= N` (AtomicAdd)".into());
                f.notes.push(
                    "the next call's waits pass on this value at once (single-shot barrier)".into(),
                );
                acc.violation = Some(f);
                return true;
            }
        }
    }
    false
}

/// A cell written with AtomicAdd only: its net credit per call, summed in closed form, is
/// 0 (`cache`: nets already proved 0 on this configuration). True on a violation.
fn add_only(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    notifies: &[usize],
    cache: &mut HashMap<Lin, bool>,
    acc: &mut Acc,
) -> bool {
    let mut net = Lin::k(0);
    let mut bad = None;
    for &e in notifies {
        let v = value_of(&run.events[e]);
        match contrib(run, e, &v) {
            Ok(c) => net = net.add(&c).unwrap_or(net),
            Err(r) => bad = Some((r, run.events[e].span)),
        }
    }
    if let Some((r, sp)) = bad {
        acc.unknown(
            format!(
                "{}: the per-cell sum cannot be closed: {r}",
                cell_name(ctx.p, cell)
            ),
            Some(sp),
        );
        return false;
    }
    if net.is_zero() {
        acc.literal += 1;
        return false;
    }
    if cache.get(&net) == Some(&true) {
        return false;
    }
    match ctx.prove(run, acc, &Vec::new(), &[], Prop::Eq0(net.clone())) {
        Answer::Valid => {
            cache.insert(net, true);
            false
        }
        Answer::Unknown(kind, r) => {
            acc.undecided(
                kind,
                format!("{}: {r}", cell_name(ctx.p, cell)),
                notifies.first().map(|e| run.events[*e].span),
            );
            false
        }
        Answer::Refuted(a) => {
            let val = run.syms.eval(&net, &a).unwrap_or(0);
            acc.violation = Some(balance_finding(ctx, run, cell, notifies, &net, val, &a));
            true
        }
    }
}

/// The finding of a cell left at `val` (`net`: its net credit per call).
fn balance_finding(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    notifies: &[usize],
    net: &Lin,
    val: i64,
    a: &Assign,
) -> Finding {
    let pr = Printer {
        syms: &run.syms,
        p: ctx.p,
    };
    let formula = pr.lin(net);
    let mut f = Finding::new(format!(
        "{} is left at {val} after one call: its credits and its reset do not cancel",
        cell_name(ctx.p, cell)
    ));
    f.params = ctx.params(run, a);
    f.cell = Some(cell_name(ctx.p, cell));
    f.value = Some(val);
    f.formula = Some(format!("net credit per call: {formula}"));
    f.contributions = ctx.contributions(run, notifies, a);
    let epi: Vec<&Contribution> = f
        .contributions
        .iter()
        .filter(|c| c.section == "epilogue")
        .collect();
    let body: Vec<&Contribution> = f
        .contributions
        .iter()
        .filter(|c| c.section == "body")
        .collect();
    let credits: i64 = body.iter().map(|c| c.total).sum();
    let reset: i64 = epi.iter().map(|c| c.total).sum();
    let mut labels = Vec::new();
    let mut primary = None;
    if let Some(c) = epi.first() {
        primary = Some((
            c.span,
            format!("takes back {} but the cell received {credits}", -reset),
        ));
        for c in epi.iter().skip(1).chain(&body) {
            labels.push((c.span, format!("adds {} ({} ×)", c.total, c.count)));
        }
    } else if let Some(c) = body.first() {
        primary = Some((
            c.span,
            format!("adds {} ({} ×); nothing takes it back", c.total, c.count),
        ));
        for c in body.iter().skip(1) {
            labels.push((c.span, format!("adds {} ({} ×)", c.total, c.count)));
        }
    }
    if let Some((span, label)) = primary {
        f.primary = Some(span);
        f.primary_label = label;
    }
    f.labels.extend(labels);
    f.help = Some(if epi.is_empty() {
        format!("add an epilogue that takes the credits back: `-= {credits}` (as a formula: the cell's credits per call)")
    } else {
        "make the epilogue take back exactly the credits the cell receives in the call".to_string()
    });
    f.notes.push("a cell left non-zero makes the next call's waits pass early (or need extra credits) when the signal is reused".into());
    f
}
