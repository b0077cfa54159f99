//! The `op-exclusivity` obligation: no cell is written with both Set and AtomicAdd in one
//! call (a Set can land after a fast peer's next-call AtomicAdd and erase it). A pair of a
//! Set and an AtomicAdd on one cell violates it unless their guards cannot both hold.

use crate::engine::events::{cell_name, chain};
use crate::engine::exec::Run;
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::union;
use crate::obligations::context::{Acc, Ctx, Rep};
use crate::report::{Finding, Obligation};

/// The obligation.
pub(crate) const OBLIGATION: Obligation = Obligation::OpExclusivity;

/// How many Sets and AtomicAdds of one cell are paired (each side's first ones).
const PAIRS: usize = 8;

/// The obligation on one configuration, into `acc`.
pub(crate) fn check(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let facts = ctx.facts;
    for rep in &facts.reps {
        acc.items += 1;
        if rep.ev.sets.is_empty() || rep.ev.adds.is_empty() {
            acc.literal += 1;
            continue;
        }
        if let Some(f) = cell(ctx, run, rep, acc) {
            acc.violation = Some(f);
            return;
        }
    }
}

/// One cell with both: the first pair that can run together, as a finding.
fn cell(ctx: &mut Ctx, run: &mut Run, rep: &Rep, acc: &mut Acc) -> Option<Finding> {
    let (cell, sets, adds) = (&rep.cell, &rep.ev.sets, &rep.ev.adds);
    for &s in sets.iter().take(PAIRS) {
        for &a in adds.iter().take(PAIRS) {
            let (es, ea) = (run.events[s].clone(), run.events[a].clone());
            let g = union(&es.guard, &ea.guard);
            let mut frames = chain(run, &es);
            frames.extend(chain(run, &ea));
            match ctx.prove(run, acc, &g, &frames, Prop::Never(g.clone())) {
                Answer::Valid => {}
                Answer::Unknown(kind, r) => acc.undecided_at(ctx.p, cell, kind, &r, es.span),
                Answer::Refuted(asg) => {
                    let mut f = Finding::new(format!(
                        "{} is written with both Set and AtomicAdd",
                        cell_name(ctx.p, cell)
                    ));
                    f.params = ctx.params(run, &asg);
                    f.cell = Some(cell_name(ctx.p, cell));
                    f.primary = Some(es.span);
                    f.primary_label = "Set on a cell that is also AtomicAdd-ed".into();
                    f.labels
                        .push((ea.span, "AtomicAdd on the same cell".into()));
                    let all: Vec<usize> = sets.iter().chain(adds.iter()).copied().collect();
                    f.contributions = ctx.contributions(run, &all, &asg);
                    f.help = Some("use AtomicAdd everywhere on credit cells (`+= 1` in the body, `-= N` in the epilogue); keep Set for separate `as value` signals".into());
                    f.notes.push("a Set can land after a fast peer's next-call AtomicAdd and erase it: that peer's credit is lost and the waiter hangs".into());
                    return Some(f);
                }
            }
        }
    }
    None
}
