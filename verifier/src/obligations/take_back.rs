//! The owner's own take-backs, part of the `stale-credit` obligation: a counting semaphore
//! (a mailbox) whose waiter takes the credit it consumed back itself, in the call
//! (`wait sem >= 1; notify sem -= 1;` in a loop: MSCCL++'s device semaphores count the
//! same in a local expected count). Every take-back the owner runs before a wait, in its
//! program order, has left the cell by the time the wait reads it, so the credits of
//! earlier rounds that can still satisfy the wait are the writers' minus those take-backs:
//! the round pairing of `stale_credit.rs` compares the wait's need with that net sum.

use crate::engine::events::{chain, value_of};
use crate::engine::exec::{EvKind, Run, Section};
use crate::engine::sym::{sum_over, Lin};
use crate::obligations::context::Rep;

/// The owner's take-backs on the cell of `rep`: AtomicAdds of a literal `<= 0` in the body
/// by `owner`, the actor that waits (the credits of the call leave them out).
pub(crate) fn of(run: &Run, rep: &Rep, owner: (u32, u32)) -> Vec<usize> {
    rep.ev
        .adds
        .iter()
        .copied()
        .filter(|e| {
            let ev = &run.events[*e];
            ev.actor == owner
                && ev.section == Section::Body
                && matches!(ev.kind, EvKind::Notify { .. })
                && value_of(ev).as_const().is_some_and(|v| v <= 0)
        })
        .collect()
}

/// What the take-backs `takes` (of the waiting actor) have removed from the cell before
/// wait `we` runs, in the owner's iteration atoms (`<= 0`): over the loops around both, the
/// iterations before the wait's, and in the wait's own iteration those before it.
pub(crate) fn before(run: &mut Run, takes: &[usize], we: usize) -> Result<Lin, String> {
    let w = run.events[we].clone();
    let cw = chain(run, &w);
    let mut out = Lin::k(0);
    for &t in takes {
        let ev = run.events[t].clone();
        let ct = chain(run, &ev);
        // The loops around both: the common outermost frames (chains are innermost first).
        let shared = cw
            .iter()
            .rev()
            .zip(ct.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let v = value_of(&ev);
        let mut level = run.syms.guarded(&ev.guard, &v);
        // Its own loops, whole: one pass of the innermost shared loop's body.
        for f in &ct[..ct.len() - shared] {
            let fr = run.frames[*f as usize].clone();
            level = sum_over(&mut run.syms, &level, fr.iter, &fr.trip)?;
        }
        let mut total = if ev.seq < w.seq {
            level.clone()
        } else {
            Lin::k(0)
        };
        for f in &cw[cw.len() - shared..] {
            let fr = run.frames[*f as usize].clone();
            let earlier = sum_over(&mut run.syms, &level, fr.iter, &Lin::atom(fr.iter))?;
            total = total.add(&earlier).ok_or("overflow")?;
            level = sum_over(&mut run.syms, &level, fr.iter, &fr.trip)?;
        }
        out = out.add(&total).ok_or("overflow")?;
    }
    Ok(out)
}
