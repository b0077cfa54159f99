//! The `guard-symmetry` obligation: early returns depend only on rank-uniform values, so
//! every rank returns together (a rank that returns early never sends its credits). Two
//! ranks' executions of one `return` must have equivalent conditions.

use crate::engine::exec::Run;
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::{Assign, CondV, Lin, Syms};
use crate::obligations::context::{Acc, Ctx};
use crate::report::{Finding, Obligation};
use collc_grammar::Span;
use std::collections::BTreeMap;

/// The obligation.
pub(crate) const OBLIGATION: Obligation = Obligation::GuardSymmetry;

/// The obligation on one configuration, into `acc`.
pub(crate) fn check(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    type Seen = Vec<(u32, CondV, Span)>;
    let mut by: BTreeMap<(usize, u32), Seen> = BTreeMap::new();
    for r in &run.returns {
        by.entry((r.span.start, r.actor.1))
            .or_default()
            .push((r.actor.0, r.cond, r.span));
    }
    for (_, v) in by {
        acc.items += 1;
        let (r0, c0, span) = v[0];
        for &(r1, c1, _) in &v[1..] {
            if c0 == c1 {
                continue;
            }
            if let Some(a) = differ(ctx, run, acc, (c0, c1), span) {
                let b0 = eval_condv(&run.syms, c0, &a);
                let (ret, stay) = if b0 == Some(true) { (r0, r1) } else { (r1, r0) };
                let mut f = Finding::new(format!(
                    "an early return depends on the rank: rank {ret} returns, rank {stay} does not"
                ));
                f.params = ctx.params(run, &a);
                f.primary = Some(span);
                f.primary_label = "reads a rank-local value".into();
                f.help = Some("guards may read only rank-uniform values (P, parameters, constants, top-level lets, the block index), so every rank returns together".into());
                f.notes.push(
                    "a rank that returns early never sends its credits: its peers hang".into(),
                );
                acc.violation = Some(f);
                return;
            }
        }
    }
}

/// An assignment under which the two conditions differ, if any (two different constants
/// differ under any).
fn differ(
    ctx: &mut Ctx,
    run: &mut Run,
    acc: &mut Acc,
    (c0, c1): (CondV, CondV),
    span: Span,
) -> Option<Assign> {
    if let (CondV::Const(_), CondV::Const(_)) = (c0, c1) {
        return Some(ctx.any(run, acc));
    }
    let (cx, cy) = (as_cond(&mut run.syms, c0), as_cond(&mut run.syms, c1));
    match ctx.prove(run, acc, &Vec::new(), &[], Prop::Equiv(cx, cy)) {
        Answer::Valid => None,
        Answer::Refuted(a) => Some(a),
        Answer::Unknown(kind, reason) => {
            acc.undecided(kind, reason, Some(span));
            None
        }
    }
}

fn as_cond(s: &mut Syms, c: CondV) -> crate::engine::sym::CondId {
    match c {
        CondV::Sym(id) => id,
        CondV::Const(b) => {
            let l = Lin::k(if b { 0 } else { -1 });
            // Interned without simplification: a literal formula.
            s.formula_raw(crate::engine::sym::Formula::Ge0(l))
        }
    }
}

fn eval_condv(s: &Syms, c: CondV, a: &Assign) -> Option<bool> {
    match c {
        CondV::Const(b) => Some(b),
        CondV::Sym(id) => s.eval_cond(id, a),
    }
}
