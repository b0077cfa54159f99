//! The `garbage-credit` obligation (a warning): every credited cell is read by some wait.
//! Credits nobody waits for are remote atomics wasted every call; the warning states how
//! many per call ([`formula`]).

use crate::engine::events::{cell_name, contrib};
use crate::engine::exec::{Cell, EvKind, Run};
use crate::engine::sym::{Lin, Printer};
use crate::obligations::context::{Acc, Ctx};
use crate::report::{Finding, Obligation};
use collc_spec::ir::Protocol;

/// The obligation.
pub(crate) const OBLIGATION: Obligation = Obligation::GarbageCredit;

/// The obligation on one configuration, into `acc`; also records the configuration's
/// wasted remote atomics in `acc.points` (after a finding too).
pub(crate) fn check(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let mut wasted = Lin::k(0);
    let mut first: Option<(Cell, &[usize])> = None;
    let facts = ctx.facts;
    for rep in &facts.reps {
        let credits = &rep.ev.credits;
        if credits.is_empty() {
            continue;
        }
        acc.items += 1;
        if !rep.ev.waits.is_empty() {
            acc.literal += 1;
            continue;
        }
        for &e in credits {
            if let EvKind::Notify { remote: true, .. } = run.events[e].kind {
                if let Ok(c) = contrib(run, e, &Lin::k(1)) {
                    wasted = wasted.axpy(rep.weight as i64, &c).unwrap_or(wasted);
                }
            }
        }
        if first.is_none() {
            first = Some((rep.cell, credits));
        }
    }
    let shown = Printer {
        syms: &run.syms,
        p: ctx.p,
    }
    .lin(&wasted);
    acc.points.push((run.config.clone(), shown));
    if acc.violation.is_some() {
        return;
    }
    if let Some((cell, credits)) = first {
        let a = ctx.any(run, acc);
        let mut f = Finding::new(format!(
            "credits are sent to {}, but no wait ever reads that cell",
            cell_name(ctx.p, &cell)
        ));
        f.params = ctx.params(run, &a);
        f.cell = Some(cell_name(ctx.p, &cell));
        f.contributions = ctx.contributions(run, credits, &a);
        f.primary = Some(run.events[credits[0]].span);
        f.primary_label = "credits nobody waits for".into();
        f.help = Some(
            "notify only the ranks that wait on the cell (e.g. only the root notifies, per tile)"
                .into(),
        );
        acc.violation = Some(f);
    }
}

/// The waste per call: derived symbolically with the cost walk
/// (`crate::engine::cost::cells::waste`), or why not and the values `points` enumerated.
pub(crate) fn formula(
    p: &Protocol,
    points: &[(Vec<(collc_spec::ir::VarId, i64)>, String)],
) -> String {
    match crate::engine::cost::cells::waste(p) {
        Ok(x) => crate::engine::cost::show::Names { p }.formula(&x),
        Err(why) => {
            let vals: Vec<String> = points
                .iter()
                .map(|(cfg, w)| {
                    let at: Vec<String> = cfg
                        .iter()
                        .map(|(v, x)| format!("{}={x}", p.var_name(*v)))
                        .collect();
                    format!("{}: {w}", at.join(","))
                })
                .collect();
            format!("no closed form ({why}); enumerated: {}", vals.join("; "))
        }
    }
}
