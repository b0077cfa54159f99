//! The `value-signal` obligation (README, "The `value-signal` obligation"): per
//! configuration, every cell of an `as value` signal is
//!
//! 1. written with `Set` only (an AtomicAdd on a value signal is a violation);
//! 2. written once per call: by one actor, by one execution — or by several Sets that a
//!    notify/wait chain (or program order) orders one after another ([`SetOrder`]; the
//!    chain uses no edge of this cell's own Sets);
//! 3. read only after the write of the call: a wait that some Set of the call happens
//!    before passes on no value of an earlier Set of the call that it can still see (it
//!    reads the call's last Set); any other wait on the cell cannot pass on the value the
//!    cell holds before the call's write (0 for a `per call` signal; 0 or any value it is Set
//!    to for a `reused` one), and when the host reads the cell as an output, every Set to it
//!    is ordered before the end of the owner rank's call by a chain of notifies and waits;
//! 4. for a `reused` signal, not overwritten by the writer's next call before the read: a
//!    chain of notifies and waits orders the read (a wait's pass, or the host's read between
//!    the owner's calls) before the writer's Set of the next call.
//!
//! "Ordered by a chain" uses happens-before edges from a notify to a wait that cannot pass
//! without it: on a credit cell, a wait whose threshold exceeds what the cell can receive in
//! the call without that notify; on a value cell, a wait that passes on no value but the
//! call's Set (condition 3). Both sides must run unguarded or under the same guard and
//! outside summarised loops; anything else gives no edge (a missed edge can only report a
//! violation that the bounded `lifetimes` obligation would refute, never hide one).

use crate::engine::events::{cell_name, chain, contrib, value_of, CellEvents};
use crate::engine::exec::{Cell, EvKind, Run};
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::{union, Assign, CondV, Guard, Lin};
use crate::obligations::context::{Acc, Ctx};
use crate::report::Finding;
use collc_grammar::Span;
use collc_spec::ir::SignalKind;
use std::collections::HashMap;

/// The obligation.
pub(crate) const OBLIGATION: crate::report::Obligation = crate::report::Obligation::ValueSignal;

/// The obligation's id.
pub const ID: &str = OBLIGATION.id();

use crate::obligations::order::{Actor, Hb};

/// A read of a value cell: where the chain starts after it in the call (empty: the host's
/// read between the owner's calls), the wait's statement, and what it is (for messages).
type Read = (Vec<(Actor, u32)>, Option<Span>, String);

/// The obligation on every value cell of one configuration (all cells, not class
/// representatives: orderings depend on the other cells' events), into `acc`.
pub(crate) fn check(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let outputs = collc_spec::meaning::output_signals(ctx.p);
    let mut hb: Option<Hb> = None;
    let facts = ctx.facts;
    for (cell, evs) in facts.cells.iter() {
        if ctx.p.signals[cell.signal].kind != SignalKind::Value {
            continue;
        }
        let reused = !ctx.p.signal_per_call(cell.signal);
        let CellEvents {
            sets, waits, adds, ..
        } = CellEvents::of(run, evs);
        if let Some(&e) = adds.first() {
            if let Some(f) = add_on_value(ctx, run, cell, e, acc) {
                acc.violation = Some(f);
                return;
            }
        }
        // Several Sets: their order (and what a wait can see) comes from happens-before.
        let order = if sets.len() > 1 {
            let hb = hb.get_or_insert_with(|| Hb::new(ctx, run, acc));
            Some(SetOrder::new(run, hb, &sets, &waits))
        } else {
            None
        };
        if let Some(f) = once_per_call(ctx, run, cell, &sets, order.as_ref(), acc) {
            acc.violation = Some(f);
            return;
        }
        let mut good_waits = Vec::new();
        for &w in &waits {
            // A Set of the call happens before the wait: what the cell held before the
            // call is overwritten; the earlier Sets of the call it can see are not its value.
            let stale = match order.as_ref().and_then(|o| o.overwritten_at(w)) {
                Some(early) => earlier_set(ctx, run, cell, w, &sets, &early, acc),
                None => stale_wait(ctx, run, cell, w, &sets, reused, acc),
            };
            match stale {
                Some(f) => {
                    acc.violation = Some(f);
                    return;
                }
                None => good_waits.push(w),
            }
        }
        let host_read = outputs.contains(&cell.signal);
        if sets.is_empty() || (!host_read && !reused) || (!host_read && waits.is_empty()) {
            continue;
        }
        let hb = hb.get_or_insert_with(|| Hb::new(ctx, run, acc));
        if host_read {
            if let Some(f) = host_read_ordered(ctx, run, cell, &sets, hb) {
                acc.violation = Some(f);
                return;
            }
        }
        if reused {
            if let Some(f) = next_call_ordered(ctx, run, cell, &sets, &waits, host_read, hb) {
                acc.violation = Some(f);
                return;
            }
        }
    }
}

/// [`Ctx::prove`], counted as one check of the obligation.
fn prove(
    ctx: &mut Ctx,
    run: &mut Run,
    acc: &mut Acc,
    g: &Guard,
    frames: &[u32],
    prop: Prop,
) -> Answer {
    acc.items += 1;
    ctx.prove(run, acc, g, frames, prop)
}

fn finding(ctx: &mut Ctx, run: &Run, cell: &Cell, msg: String, a: &Assign) -> Finding {
    let mut f = Finding::new(msg);
    f.params = ctx.params(run, a);
    f.cell = Some(cell_name(ctx.p, cell));
    f
}

/// Some assignment of the configuration (for the reported parameters).
fn any(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc, g: &Guard) -> Option<Assign> {
    match prove(ctx, run, acc, g, &[], Prop::Never(g.clone())) {
        Answer::Refuted(a) => Some(a),
        _ => None,
    }
}

fn add_on_value(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    e: usize,
    acc: &mut Acc,
) -> Option<Finding> {
    let ev = run.events[e].clone();
    let a = any(ctx, run, acc, &ev.guard)?;
    let mut f = finding(
        ctx,
        run,
        cell,
        format!(
            "{} is a value signal but is written with AtomicAdd",
            cell_name(ctx.p, cell)
        ),
        &a,
    );
    f.primary = Some(ev.span);
    f.primary_label = "AtomicAdd on a value signal".into();
    f.help = Some("write value signals with `=` (Set) only; count with a credit signal (`+= 1`, reset in the epilogue)".into());
    f.notes
        .push("a value signal is never reset: added values accumulate across calls".into());
    Some(f)
}

/// The order of a cell's Sets in one call (README, "The `value-signal` obligation": several
/// Sets per call): which Set happens before which, and which Sets happen before each wait on
/// the cell, by program order or a notify/wait chain that uses no edge of the cell's own
/// Sets (those edges assume the very order in question).
struct SetOrder {
    /// `before[i][j]`: Set `i` happens before Set `j`.
    before: Vec<Vec<bool>>,
    /// Per wait event, `[i]`: Set `i` happens before it.
    at_wait: HashMap<usize, Vec<bool>>,
}

impl SetOrder {
    fn new(run: &Run, hb: &Hb, sets: &[usize], waits: &[usize]) -> SetOrder {
        let before = sets
            .iter()
            .map(|&a| {
                sets.iter()
                    .map(|&b| a != b && hb.before(run, a, b, sets))
                    .collect()
            })
            .collect();
        let at_wait = waits
            .iter()
            .map(|&w| {
                (
                    w,
                    sets.iter().map(|&a| hb.before(run, a, w, sets)).collect(),
                )
            })
            .collect();
        SetOrder { before, at_wait }
    }

    /// Sets `i` and `j` are ordered one way or the other.
    fn ordered(&self, i: usize, j: usize) -> bool {
        self.before[i][j] || self.before[j][i]
    }

    /// For a wait some Set of the call happens before: the Sets whose value it can see
    /// (none of them overwritten by a Set ordered before the wait) and that a later Set of
    /// the call follows. `None` when no Set happens before the wait.
    fn overwritten_at(&self, w: usize) -> Option<Vec<usize>> {
        let seen = self.at_wait.get(&w)?;
        if !seen.iter().any(|x| *x) {
            return None;
        }
        let n = self.before.len();
        let visible = |i: usize| !(0..n).any(|p| seen[p] && self.before[i][p]);
        let followed = |i: usize| self.before[i].iter().any(|x| *x);
        Some((0..n).filter(|i| visible(*i) && followed(*i)).collect())
    }
}

fn once_per_call(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    sets: &[usize],
    order: Option<&SetOrder>,
    acc: &mut Acc,
) -> Option<Finding> {
    // One execution of each Set (summarised loops count their iterations).
    for &s in sets {
        let ev = run.events[s].clone();
        if ev.frame.is_none() {
            continue;
        }
        let Ok(n) = contrib(run, s, &Lin::k(1)) else {
            acc.unknown(
                format!(
                    "{}: a Set's execution count cannot be closed",
                    cell_name(ctx.p, cell)
                ),
                Some(ev.span),
            );
            continue;
        };
        let Some(d) = Lin::k(1).sub(&n) else { continue };
        match prove(ctx, run, acc, &Vec::new(), &[], Prop::Ge0(d)) {
            Answer::Valid => {}
            Answer::Unknown(kind, r) => acc.undecided_at(ctx.p, cell, kind, &r, ev.span),
            Answer::Refuted(a) => {
                let k = run.syms.eval(&n, &a).unwrap_or(2);
                let mut f = finding(
                    ctx,
                    run,
                    cell,
                    format!(
                        "{} is Set {k} times in one call by one statement",
                        cell_name(ctx.p, cell)
                    ),
                    &a,
                );
                f.primary = Some(ev.span);
                f.primary_label = format!("sets the cell {k} times per call");
                f.help = Some("give each value its own cell: one Set per cell per call".into());
                f.notes.push(
                    "a reader can see any of the values, or a later one overwrite the one it read"
                        .into(),
                );
                return Some(f);
            }
        }
    }
    // Two Set events that can both run in one call.
    for (i, &s1) in sets.iter().enumerate() {
        for (j, &s2) in sets.iter().enumerate().skip(i + 1) {
            // Ordered by a chain: the reader sees them in turn (`stale_wait` checks which).
            if order.is_some_and(|o| o.ordered(i, j)) {
                continue;
            }
            let (e1, e2) = (run.events[s1].clone(), run.events[s2].clone());
            let g = union(&e1.guard, &e2.guard);
            let mut frames = chain(run, &e1);
            frames.extend(chain(run, &e2));
            match prove(ctx, run, acc, &g, &frames, Prop::Never(g.clone())) {
                Answer::Valid => {}
                Answer::Unknown(kind, r) => acc.undecided_at(ctx.p, cell, kind, &r, e2.span),
                Answer::Refuted(a) => {
                    let two = if e1.actor == e2.actor {
                        format!(
                            "rank {} Sets {} twice in one call",
                            e1.actor.0,
                            cell_name(ctx.p, cell)
                        )
                    } else {
                        format!(
                            "{} has two writers in one call: rank {} and rank {}",
                            cell_name(ctx.p, cell),
                            e1.actor.0,
                            e2.actor.0
                        )
                    };
                    let mut f = finding(ctx, run, cell, two, &a);
                    f.primary = Some(e2.span);
                    f.primary_label = format!("rank {} Sets the cell", e2.actor.0);
                    f.labels
                        .push((e1.span, format!("rank {} Sets it too", e1.actor.0)));
                    f.help = Some("one writer per value cell per call: index the signal by the writer (`sig[me] @ d = v`)".into());
                    f.notes.push(
                        "the two Sets are not ordered: the reader sees whichever lands last".into(),
                    );
                    return Some(f);
                }
            }
        }
    }
    None
}

/// The wait's condition on value `x` can hold: `Some(assignment)`, else `None`.
fn can_pass(
    ctx: &mut Ctx,
    run: &mut Run,
    acc: &mut Acc,
    w: usize,
    x: &Lin,
    when: Option<crate::engine::sym::CondId>,
) -> Result<Option<Assign>, String> {
    let mut ev = run.events[w].clone();
    if let Some(c) = when {
        ev.guard = union(&ev.guard, &vec![c]);
    }
    let EvKind::Wait { cmp, thr } = &ev.kind else {
        return Ok(None);
    };
    let c = run.syms.cmp(*cmp, x, thr).ok_or("overflow")?;
    let g = match c {
        CondV::Const(false) => return Ok(None),
        CondV::Const(true) => ev.guard.clone(),
        CondV::Sym(id) => union(&ev.guard, &vec![id]),
    };
    let frames = chain(run, &ev);
    match prove(ctx, run, acc, &g, &frames, Prop::Never(g.clone())) {
        Answer::Valid => Ok(None),
        Answer::Refuted(a) => Ok(Some(a)),
        Answer::Unknown(_, r) => Err(r),
    }
}

fn stale_wait(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    w: usize,
    sets: &[usize],
    reused: bool,
    acc: &mut Acc,
) -> Option<Finding> {
    let mut olds: Vec<(Lin, Option<usize>, Option<crate::engine::sym::CondId>)> =
        vec![(Lin::k(0), None, None)];
    if reused {
        for &s in sets {
            olds.push((value_of(&run.events[s]), Some(s), None));
        }
        // With the call index, what the cell holds when a call starts depends on the call.
        let values: Vec<Lin> = sets.iter().map(|s| value_of(&run.events[*s])).collect();
        if let Some(v) = crate::engine::call::previous_values(ctx.p, &mut run.syms, &values) {
            let mut it = sets.iter().cycle();
            olds = v
                .into_iter()
                .map(|(x, prev, g)| (x, if prev { it.next().copied() } else { None }, g))
                .collect();
        }
    }
    let span = run.events[w].span;
    for (x, from, when) in olds {
        match can_pass(ctx, run, acc, w, &x, when) {
            Ok(None) => {}
            Err(r) => acc.unknown(format!("{}: {r}", cell_name(ctx.p, cell)), Some(span)),
            Ok(Some(a)) => {
                let v = run.syms.eval(&x, &a).unwrap_or(0);
                let name = cell_name(ctx.p, cell);
                let mut f = match from {
                    None => {
                        let mut f = finding(ctx, run, cell, format!("the wait on {name} passes on the cell's value before any write of the call ({v})"), &a);
                        f.primary_label = format!("passes on {v}, the value before the call's Set");
                        f.help = Some("wait for a value the cell cannot hold before the call's Set (e.g. `>= 1` with a Set of a positive value)".into());
                        f
                    }
                    Some(s) => {
                        let mut f = finding(ctx, run, cell, format!("the wait on {name} can pass on the value {v} written in the previous call: the signal is `reused` and never reset"), &a);
                        f.primary_label = format!("passes on the previous call's {v}");
                        f.labels.push((
                            run.events[s].span,
                            format!("Sets {v}, still in the cell in the next call"),
                        ));
                        f.help = Some("synchronise with a credit signal (`+= 1`, reset `-= 1` in the epilogue), or declare the value signal `per call` if the caller hands in fresh cells for each call".into());
                        f
                    }
                };
                f.primary = Some(span);
                f.value = Some(v);
                return Some(f);
            }
        }
    }
    None
}

/// The wait `w` passes on none of the values of the `early` Sets (Sets of the call that a
/// later Set of the call follows): the finding when it can.
fn earlier_set(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    w: usize,
    sets: &[usize],
    early: &[usize],
    acc: &mut Acc,
) -> Option<Finding> {
    let span = run.events[w].span;
    for &i in early {
        let s = sets[i];
        let x = value_of(&run.events[s]);
        match can_pass(ctx, run, acc, w, &x, None) {
            Ok(None) => {}
            Err(r) => acc.unknown(format!("{}: {r}", cell_name(ctx.p, cell)), Some(span)),
            Ok(Some(a)) => {
                let v = run.syms.eval(&x, &a).unwrap_or(0);
                let name = cell_name(ctx.p, cell);
                let mut f = finding(ctx, run, cell, format!("the wait on {name} can pass on the value {v} of an earlier Set of the call, before the call's last Set"), &a);
                f.primary = Some(span);
                f.primary_label = format!("passes on {v}, which a later Set of the call replaces");
                f.labels
                    .push((run.events[s].span, format!("Sets {v} earlier in the call")));
                f.help = Some("wait for a value only the call's last Set writes (e.g. clear to 0, then Set 1, and wait for `== 1`)".into());
                f.value = Some(v);
                return Some(f);
            }
        }
    }
    None
}

fn actors_of_rank(run: &Run, r: u32) -> Vec<(Actor, u32)> {
    (0..run.blocks.max(1) as u32).map(|b| ((r, b), 0)).collect()
}

fn host_read_ordered(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    sets: &[usize],
    hb: &Hb,
) -> Option<Finding> {
    for &s in sets {
        let es = run.events[s].clone();
        if es.actor.0 == cell.owner {
            continue;
        }
        let at = hb.reach(&[(es.actor, es.seq + 1)]);
        if at.keys().any(|a| a.0 == cell.owner) {
            continue;
        }
        let a = Assign::default();
        let name = cell_name(ctx.p, cell);
        let mut f = finding(ctx, run, cell, format!("the host of rank {} reads {name} after its call, but rank {}'s Set to it is not ordered before the end of that call", cell.owner, es.actor.0), &a);
        f.primary = Some(es.span);
        f.primary_label = format!(
            "rank {} Sets the cell; nothing rank {} waits for comes after it",
            es.actor.0, cell.owner
        );
        f.help = Some(format!("after the Set, notify a credit that rank {} waits for before its call ends (e.g. `fence;` and the barrier's notify after the Set)", cell.owner));
        return Some(f);
    }
    None
}

fn next_call_ordered(
    ctx: &mut Ctx,
    run: &mut Run,
    cell: &Cell,
    sets: &[usize],
    waits: &[usize],
    host_read: bool,
    hb: &Hb,
) -> Option<Finding> {
    // Reads: (who reads, where they stand after the read in call k, its span).
    let mut reads: Vec<Read> = Vec::new();
    for &w in waits {
        let ew = &run.events[w];
        reads.push((
            vec![(ew.actor, ew.seq + 1)],
            Some(ew.span),
            format!("rank {}'s wait", ew.actor.0),
        ));
    }
    if host_read {
        reads.push((
            Vec::new(),
            None,
            format!("the host of rank {}'s read after the call", cell.owner),
        ));
    }
    for (start, span, what) in reads {
        // Call k: everything ordered after the read; each such actor's next call follows.
        let at = if start.is_empty() {
            // The host read sits between the owner's calls: its next call follows.
            hb.reach(&actors_of_rank(run, cell.owner))
        } else {
            hb.next_call(&start)
        };
        for &s in sets {
            let es = run.events[s].clone();
            if at.get(&es.actor).is_some_and(|t| *t <= es.seq) {
                continue;
            }
            let a = Assign::default();
            let name = cell_name(ctx.p, cell);
            let mut f = finding(ctx, run, cell, format!("{name} is `reused`, and rank {}'s Set of the next call is not ordered after {what}: it can overwrite the value before it is read", es.actor.0), &a);
            f.primary = Some(es.span);
            f.primary_label = format!(
                "rank {} may already Set the next call's value here",
                es.actor.0
            );
            if let Some(sp) = span {
                f.labels.push((sp, "reads the cell".into()));
            }
            f.help = Some("order the writer's next-call Set after the read by a notify/wait chain (e.g. a round in which the reader releases the writer before the Set), or declare the signal `per call`".into());
            f.notes.push(
                "a value signal lives as declared: `reused` cells are one buffer for every call"
                    .into(),
            );
            return Some(f);
        }
    }
    None
}
