//! The `wait-reachable` obligation: every wait's threshold is reached by the credits its
//! cell can receive in the call (every other actor's body credits, and the waiter's own
//! that precede the wait); otherwise the wait hangs for certain. Cells written with Set
//! and value cells hold values, not credit counts: they are left out.

use crate::engine::events::{cell_name, chain, contrib, value_of};
use crate::engine::exec::{EvKind, Run, Section};
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::{Assign, Lin};
use crate::obligations::context::{Acc, Ctx, Rep};
use crate::report::{Finding, Obligation};
use collc_spec::ir::{CmpOp, SignalKind};

/// The obligation.
pub(crate) const OBLIGATION: Obligation = Obligation::WaitReachable;

/// The obligation on one configuration, into `acc`.
pub(crate) fn check(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let facts = ctx.facts;
    for rep in &facts.reps {
        if rep.ev.waits.is_empty() {
            continue;
        }
        if !rep.ev.sets.is_empty() || ctx.p.signals[rep.cell.signal].kind == SignalKind::Value {
            continue; // values persist across calls; not a credit count
        }
        let Some(parts) = credits(ctx, run, rep, acc) else {
            return;
        };
        if let Some(f) = waits(ctx, run, rep, &parts, acc) {
            acc.violation = Some(f);
            return;
        }
    }
}

/// Each body AtomicAdd's total over the call; `None` (undecided) when one has no closed
/// form.
fn credits(ctx: &mut Ctx, run: &mut Run, rep: &Rep, acc: &mut Acc) -> Option<Vec<(usize, Lin)>> {
    let mut parts = Vec::new();
    for &e in &rep.ev.adds {
        if run.events[e].section != Section::Body {
            continue;
        }
        let v = value_of(&run.events[e]);
        match contrib(run, e, &v) {
            Ok(c) => parts.push((e, c)),
            Err(r) => {
                acc.unknown(
                    format!("{}: {r}", cell_name(ctx.p, &rep.cell)),
                    Some(run.events[e].span),
                );
                return None;
            }
        }
    }
    Some(parts)
}

/// Every wait of the cell against the credits that can have arrived before it.
fn waits(
    ctx: &mut Ctx,
    run: &mut Run,
    rep: &Rep,
    parts: &[(usize, Lin)],
    acc: &mut Acc,
) -> Option<Finding> {
    for &w in &rep.ev.waits {
        let ev = run.events[w].clone();
        // Credits that can have arrived: every other actor's, and the waiter's own adds
        // that precede the wait in its program order.
        let mut total = Lin::k(0);
        for (e, c) in parts {
            let x = &run.events[*e];
            if x.actor != ev.actor || x.seq < ev.seq {
                total = total.add(c).unwrap_or(total);
            }
        }
        let EvKind::Wait { cmp, thr } = &ev.kind else {
            continue;
        };
        let need = match cmp {
            CmpOp::Ge | CmpOp::Eq => thr.clone(),
            CmpOp::Gt => thr.add(&Lin::k(1)).unwrap_or(thr.clone()),
            _ => continue,
        };
        acc.items += 1;
        let Some(d) = total.sub(&need) else { continue };
        let frames = chain(run, &ev);
        match ctx.prove(run, acc, &ev.guard, &frames, Prop::Ge0(d)) {
            Answer::Valid => {}
            Answer::Unknown(kind, r) => acc.undecided_at(ctx.p, &rep.cell, kind, &r, ev.span),
            Answer::Refuted(a) => {
                let hang = Hang {
                    rep,
                    parts,
                    wait: w,
                    frames: &frames,
                };
                return Some(hang.finding(ctx, run, &need, &total, &a));
            }
        }
    }
    None
}

/// A wait that cannot be reached.
struct Hang<'a> {
    rep: &'a Rep,
    parts: &'a [(usize, Lin)],
    wait: usize,
    frames: &'a [u32],
}

impl Hang<'_> {
    fn finding(
        &self,
        ctx: &mut Ctx,
        run: &mut Run,
        need: &Lin,
        total: &Lin,
        a: &Assign,
    ) -> Finding {
        let cell = &self.rep.cell;
        let k = run.syms.eval(need, a).unwrap_or(0);
        let t = run.syms.eval(total, a).unwrap_or(0);
        let mut f = Finding::new(format!(
            "the wait on {} needs {k} but the cell receives only {t} credit(s) in the call: certain hang",
            cell_name(ctx.p, cell)
        ));
        f.params = ctx.params(run, a);
        f.params.extend(ctx.rounds(run, self.frames, a));
        f.cell = Some(cell_name(ctx.p, cell));
        f.value = Some(k);
        f.primary = Some(run.events[self.wait].span);
        f.primary_label = format!("waits for {k}; at most {t} arrive");
        let mut all: Vec<usize> = self.parts.iter().map(|(e, _)| *e).collect();
        all.push(self.wait);
        f.contributions = ctx.contributions(run, &all, a);
        for c in &f.contributions {
            if c.role == "notify" {
                f.labels
                    .push((c.span, format!("adds {} in total", c.total)));
            }
        }
        f.help =
            Some("the threshold may not exceed the credits sent to the cell in this call".into());
        f
    }
}
