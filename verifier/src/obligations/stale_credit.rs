//! The `stale-credit` obligation on the enumerated route, per configuration. It looks at
//! counters: cells that receive AtomicAdd credits and are waited on, and that no statement
//! Sets (a cell with a Set is `op-exclusivity`'s and `value-signal`'s). On each:
//!
//! 1. *Monotone comparisons*: a wait on it whose comparison is not `>=` or `>` (`==`,
//!    `!=`, `<`, `<=`) and that can run is a violation; every such statement is reported,
//!    and the cell's rounds are then not paired.
//! 2. *One wait per call*: an owner with a single wait outside loops kept symbolic is not
//!    paired here. On a self-clearing cell earlier calls' credits are excluded by
//!    `credit-balance` (README, "The reuse theorem"); on a monotonic cell the wait's reduced
//!    threshold must need a credit of its own call (`crate::obligations::epoch::own_call`),
//!    or lag by whole calls (`wait done >= call - 1`).
//! 3. *Round pairing*: otherwise the owner's waits and its writers' notifies are walked in
//!    lockstep as trees of summarised loops ([`Pairing`]; loops pair when they have the same
//!    statement and trip count). Each wait's need (`> t` needs `t + 1`) must exceed the
//!    credits the writers send in every round before its own, i.e. need a credit of its own
//!    round. When that is refuted inside (or just after) a loop whose rounds each send a
//!    positive literal number of credits, the wait may instead need the credit of the
//!    writer's round `K` behind, `K` a literal or a parameter that is a whole number of
//!    rounds (a credit window, `crate::obligations::window`), whose first `K` rounds need
//!    nothing (threshold `<= 0`). Waits after the writers' last round (a drain) pair with
//!    the rounds before them. What the owner took back itself before the wait (`wait s >=
//!    1; notify s -= 1;`, a mailbox: `crate::obligations::take_back`) is not on the cell
//!    any more and is subtracted from the earlier rounds' credits. Only the lower bound is
//!    checked here: that the credits do reach the threshold is `wait-reachable`'s.
//! 4. *Many writers* (`crate::obligations::multi`): on a cell two or more actors besides
//!    its owner credit, the owner's reset comes after a wait for all of the call's credits,
//!    and every writer's first credit of the next call is ordered after that wait by a
//!    notify/wait chain, unless the writers' credits form one sequence across calls.
//!
//! Notifies and waits under different symbolic conditions, loop structures that do not pair
//! round by round, and undecided queries leave the obligation `unknown`, never violated.
//! The parametric route (P symbolic, `crate::engine::param`) states the rule differently:
//! a wait needs more than what was sent before the previous wait on its cell, less what
//! the waiting actor took back itself between the two (the same take-backs, counted the
//! same way: they precede the wait in its own program order).

use crate::engine::events::{cell_name, chain, value_of};
use crate::engine::exec::{Cell, EvKind, Run};
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::{
    cond_mentions, subst_deep, sum_over, union, AtomId, CondV, Guard, Lin, Syms,
};
use crate::obligations::context::{Acc, Ctx, Rep};
use crate::obligations::window::{Lag, Round};
use crate::report::{Finding, Obligation};
use collc_spec::ir::CmpOp;
use std::collections::BTreeMap;

/// The obligation.
pub(crate) const OBLIGATION: Obligation = Obligation::StaleCredit;

/// The obligation on one configuration, into `acc`.
pub(crate) fn check(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    rounds(ctx, run, acc);
    if acc.open() {
        crate::obligations::multi::reset_rule(ctx, run, acc);
    }
}

/// Every counter's waits against its writers' rounds.
fn rounds(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let facts = ctx.facts;
    for rep in &facts.reps {
        let (adds, waits) = (&rep.ev.credits, &rep.ev.waits);
        if waits.is_empty() || adds.is_empty() || !rep.ev.sets.is_empty() {
            continue;
        }
        // Non-monotone comparisons on a counter (every such statement is reported).
        if exact_waits(ctx, run, rep, acc) {
            continue;
        }
        // Round pairing, per owner actor.
        let mut owners: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        for &w in waits {
            owners.entry(run.events[w].actor).or_default().push(w);
        }
        for (_, ow) in owners {
            if let Some(f) = owner(ctx, run, rep, &ow, acc) {
                acc.violation = Some(f);
                return;
            }
        }
    }
}

/// Reports every `==`/`<=`/... wait on a counter that can run; true when there is one.
fn exact_waits(ctx: &mut Ctx, run: &mut Run, rep: &Rep, acc: &mut Acc) -> bool {
    let cell = &rep.cell;
    let mut found = false;
    for &w in &rep.ev.waits {
        let ev = run.events[w].clone();
        let EvKind::Wait { cmp, .. } = ev.kind else {
            continue;
        };
        if matches!(cmp, CmpOp::Ge | CmpOp::Gt) {
            continue;
        }
        let frames = chain(run, &ev);
        let a = match ctx.prove(run, acc, &ev.guard, &frames, Prop::Never(ev.guard.clone())) {
            Answer::Refuted(a) => a,
            _ => continue,
        };
        let mut f = Finding::new(format!(
            "a `{}` wait on {}, a counter that receives AtomicAdd credits",
            cmp.as_str(),
            cell_name(ctx.p, cell)
        ));
        f.params = ctx.params(run, &a);
        f.cell = Some(cell_name(ctx.p, cell));
        f.primary = Some(ev.span);
        f.primary_label = format!("`{}` on a counter", cmp.as_str());
        f.help = Some("wait with `>=`: a fast writer can push the counter past the exact value before this rank polls".into());
        f.rewrite = Some(crate::report::Rewrite::WaitAtLeast);
        if !acc
            .extra
            .iter()
            .chain(acc.violation.iter())
            .any(|x| x.primary == f.primary)
        {
            if acc.violation.is_none() {
                acc.violation = Some(f);
            } else {
                acc.extra.push(f);
            }
        }
        found = true;
    }
    found
}

/// The waits `ow` of one owner actor against the writers' rounds: the finding of a wait
/// that passes on an earlier round's credits.
fn owner(ctx: &mut Ctx, run: &mut Run, rep: &Rep, ow: &[usize], acc: &mut Acc) -> Option<Finding> {
    let (cell, adds) = (&rep.cell, &rep.ev.credits);
    if ow.len() == 1 && run.events[ow[0]].frame.is_none() {
        // One wait per call: no earlier round of this call can satisfy it, and earlier
        // calls' credits are excluded by credit-balance (README, reuse theorem) — on a
        // monotonic cell only if it needs a credit of its own call.
        if ctx.p.signals[cell.signal].monotonic {
            return crate::obligations::epoch::own_call(ctx, run, acc, rep, ow[0]);
        }
        acc.items += 1;
        acc.literal += 1;
        return None;
    }
    // The writers' notifies share one guard; a wait may run under more conditions (a
    // window's waits start at round K), proved under its own guard.
    let g = adds.first().map_or_else(
        || run.events[ow[0]].guard.clone(),
        |e| run.events[*e].guard.clone(),
    );
    let same = adds.iter().all(|e| run.events[*e].guard == g)
        && ow
            .iter()
            .all(|e| crate::engine::sym::subset(&g, &run.events[*e].guard));
    if !same {
        acc.unknown(
            format!("{}: its notifies and waits run under different symbolic conditions; rounds cannot be paired", cell_name(ctx.p, cell)),
            Some(run.events[ow[0]].span),
        );
        return None;
    }
    let mut writers: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    for &e in adds {
        writers.entry(run.events[e].actor).or_default().push(e);
    }
    let mut otree = build_tree(run, ow);
    let mut wtrees: Vec<Vec<Node>> = writers.values().map(|w| build_tree(run, w)).collect();
    for w in &wtrees {
        otree = pad(run, &otree, w);
    }
    for w in &mut wtrees {
        *w = pad(run, w, &otree);
    }
    let wrefs: Vec<&[Node]> = wtrees.iter().map(|t| t.as_slice()).collect();
    let takes = crate::obligations::take_back::of(run, rep, run.events[ow[0]].actor);
    let mut pairing = Pairing {
        ctx,
        acc,
        cell,
        writers: adds,
        takes,
    };
    let top = Level {
        before: Lin::k(0),
        renames: &Vec::new(),
        frames: &[],
        window: None,
    };
    match pairing.align(run, &wrefs, &otree, top) {
        Ok(found) => found,
        Err(r) => {
            pairing.acc.unknown(
                format!(
                    "{}: the notifies and waits on this cell do not pair round by round ({r})",
                    cell_name(pairing.ctx.p, cell)
                ),
                Some(run.events[ow[0]].span),
            );
            None
        }
    }
}

/// A cell's events of one actor as a tree of summarised loops.
#[derive(Clone, Debug)]
enum Node {
    Leaf(usize),
    Loop(u32, Vec<Node>),
}

fn build_tree(run: &Run, evs: &[usize]) -> Vec<Node> {
    fn insert(nodes: &mut Vec<Node>, ch: &[u32], ev: usize) {
        let Some((&f, rest)) = ch.split_first() else {
            nodes.push(Node::Leaf(ev));
            return;
        };
        if let Some(Node::Loop(g, kids)) = nodes.last_mut() {
            if *g == f {
                insert(kids, rest, ev);
                return;
            }
        }
        let mut kids = Vec::new();
        insert(&mut kids, rest, ev);
        nodes.push(Node::Loop(f, kids));
    }
    let mut root = Vec::new();
    for &e in evs {
        let mut ch = chain(run, &run.events[e]);
        ch.reverse();
        insert(&mut root, &ch, e);
    }
    root
}

/// `x` with an empty loop for every piece of a split loop that `y` runs and `x` does not
/// (a sender that waits only from round K on: no wait in the piece before it), at the
/// same level, so that the two walk the same pieces. Pieces are the same frames on every
/// actor, numbered in program order.
fn pad(run: &Run, x: &[Node], y: &[Node]) -> Vec<Node> {
    let piece = |n: Option<&Node>| match n {
        Some(Node::Loop(f, _)) => Some((*f, run.frames[*f as usize].span)),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < x.len() {
        match (piece(x.get(i)), piece(y.get(j))) {
            (Some((fx, sx)), Some((fy, sy))) if sx == sy && fy < fx => {
                out.push(Node::Loop(fy, Vec::new()));
                j += 1;
                continue;
            }
            (Some((fx, sx)), Some((fy, sy))) if sx == sy && fx < fy => {
                out.push(x[i].clone());
                i += 1;
                continue;
            }
            _ => {}
        }
        out.push(x[i].clone());
        i += 1;
        j += 1;
    }
    // Pieces after x's last node, of the loop x's last loop belongs to.
    let last = x.iter().rev().find_map(|n| piece(Some(n)));
    while let (Some((fy, sy)), Some((fl, sl))) = (piece(y.get(j)), last) {
        if sy != sl || fy < fl {
            break;
        }
        out.push(Node::Loop(fy, Vec::new()));
        j += 1;
    }
    out
}

/// The round pairing of one cell's waits of one owner with its writers' notifies.
struct Pairing<'a, 'b, 'c> {
    ctx: &'a mut Ctx<'b>,
    acc: &'a mut Acc,
    cell: &'c Cell,
    writers: &'c [usize],
    /// The owner's own take-backs on the cell (`crate::obligations::take_back`).
    takes: Vec<usize>,
}

/// Writer loop iteration atoms renamed to the owner's.
type Renames = Vec<(AtomId, AtomId)>;

fn rename(s: &Syms, v: &Lin, r: &Renames) -> Result<Lin, String> {
    let mut v = v.clone();
    for (from, to) in r {
        if s.nested(&v, *from) {
            return Err("a value is not affine in its loop variable".into());
        }
        v = s.subst(&v, *from, &Lin::atom(*to)).ok_or("overflow")?;
    }
    Ok(v)
}

/// Where the lockstep walk is: the credits sent before this level, the iteration renames,
/// the summarised loops around it (innermost first), and the enclosing loop's round for
/// waits that pair with a writer round K behind (`crate::obligations::window`).
struct Level<'x> {
    before: Lin,
    renames: &'x Renames,
    frames: &'x [u32],
    window: Option<Round>,
}

/// What one wait of the walk gave.
enum Step {
    /// Not a wait: nothing sent is counted.
    Skip,
    /// It needs a credit of its own round (or is undecided).
    Holds,
    /// It passes on an earlier round's credits.
    Stale(Box<Finding>),
}

/// What one loop of the walk gave.
enum Descent {
    Stale(Box<Finding>),
    /// The loop's whole credit, and the round a drain wait after it sits in.
    Done(Lin, Option<Round>),
}

impl Pairing<'_, '_, '_> {
    /// Credits of one pass over `nodes` (inner loops summed), in owner iteration atoms.
    fn total(&mut self, run: &mut Run, nodes: &[&Node], r: &Renames) -> Result<Lin, String> {
        let mut out = Lin::k(0);
        for n in nodes {
            match n {
                Node::Leaf(e) => {
                    let v = rename(&run.syms, &value_of(&run.events[*e]), r)?;
                    let g = run.events[*e].guard.clone();
                    let gv = run.syms.guarded(&g, &v);
                    out = out.add(&gv).ok_or("overflow")?;
                }
                Node::Loop(f, kids) => {
                    let kids: Vec<&Node> = kids.iter().collect();
                    let inner = self.total(run, &kids, r)?;
                    let fr = run.frames[*f as usize].clone();
                    let s = sum_over(&mut run.syms, &inner, fr.iter, &fr.trip)?;
                    out = out.add(&s).ok_or("overflow")?;
                }
            }
        }
        Ok(out)
    }

    /// Walks the owner's waits `o` and the writers' notifies `ws` in lockstep.
    fn align(
        &mut self,
        run: &mut Run,
        ws: &[&[Node]],
        o: &[Node],
        lv: Level,
    ) -> Result<Option<Finding>, String> {
        for w in ws {
            // Trailing waits with no notify round of their own (a drain after the last
            // round) pair with the rounds before them.
            let trailing =
                o.len() > w.len() && o[w.len()..].iter().all(|n| matches!(n, Node::Leaf(_)));
            if w.len() != o.len() && !trailing {
                return Err(format!(
                    "{} notify round(s) against {} wait round(s); give every wait round its notify round in the same loop structure",
                    w.len(),
                    o.len()
                ));
            }
        }
        let shortest = ws.iter().map(|w| w.len()).min().unwrap_or(0);
        let mut before = lv.before.clone();
        let mut last_loop: Option<Round> = lv.window.clone();
        for (i, on) in o.iter().enumerate() {
            match on {
                Node::Leaf(we) => {
                    let leaves = leaves_at(ws, i)?;
                    let credit = self.total(run, &leaves, lv.renames)?;
                    let window = if i < shortest {
                        lv.window.clone()
                    } else {
                        last_loop.clone()
                    };
                    match self.wait(run, *we, &before, window, lv.frames)? {
                        Step::Skip => continue,
                        Step::Stale(f) => return Ok(Some(*f)),
                        Step::Holds => {}
                    }
                    before = before.add(&credit).ok_or("overflow")?;
                }
                Node::Loop(fo, okids) => {
                    match self.descend(run, ws, i, (*fo, okids), &before, &lv)? {
                        Descent::Stale(f) => return Ok(Some(*f)),
                        Descent::Done(whole, after) => {
                            before = before.add(&whole).ok_or("overflow")?;
                            last_loop = after;
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    /// One wait against the credits sent `before` its round: it must need a credit of its
    /// own round, or of the writer's round K behind (`window`).
    fn wait(
        &mut self,
        run: &mut Run,
        we: usize,
        before: &Lin,
        window: Option<Round>,
        frames: &[u32],
    ) -> Result<Step, String> {
        let ev = run.events[we].clone();
        let EvKind::Wait { cmp, thr } = &ev.kind else {
            return Ok(Step::Skip);
        };
        let need = if *cmp == CmpOp::Gt {
            thr.add(&Lin::k(1)).ok_or("overflow")?
        } else {
            thr.clone()
        };
        // Less what the owner took back itself before the wait (a mailbox).
        let net;
        let before = if self.takes.is_empty() {
            before
        } else {
            let taken = crate::obligations::take_back::before(run, &self.takes, we)?;
            net = before.add(&taken).ok_or("overflow")?;
            &net
        };
        // The wait must need a credit of its own round: need > before.
        let d = need
            .sub(before)
            .and_then(|x| x.add(&Lin::k(-1)))
            .ok_or("overflow")?;
        self.acc.items += 1;
        let g = ev.guard.clone();
        let mut ans = self.ctx.prove(run, self.acc, &g, frames, Prop::Ge0(d));
        let mut varies = None;
        if matches!(ans, Answer::Refuted(_)) {
            // A credit window: the wait needs the credit of the writer's round K behind (a
            // producer K chunks ahead of its consumer).
            match window.map_or(Lag::None, |u| u.lagged(&run.syms, &need, before)) {
                Lag::Pairs(q) => {
                    // The round it pairs with exists, or the wait needs nothing yet (the
                    // window's first K rounds: threshold <= 0).
                    if let Some((early, idle)) =
                        crate::obligations::window::early(&mut run.syms, &g, &q, &need)
                    {
                        // Undecided (a timeout) stays undecided: never a violation the
                        // window proof could not refute.
                        match self.ctx.prove(run, self.acc, &early, frames, idle) {
                            Answer::Refuted(_) => {}
                            other => ans = other,
                        }
                    }
                }
                Lag::Varies(k) => {
                    // The witness: a round that asks for no more than the round before.
                    let again = self.repeat(run, &g, &need, frames);
                    if let Some((a, _)) = &again {
                        ans = Answer::Refuted(a.clone());
                    }
                    varies = Some((k, again.map(|x| x.1)));
                }
                Lag::None => {}
            }
        }
        match ans {
            Answer::Valid => Ok(Step::Holds),
            Answer::Unknown(kind, reason) => {
                self.acc.undecided(
                    kind,
                    format!("{}: {reason}", cell_name(self.ctx.p, self.cell)),
                    Some(ev.span),
                );
                Ok(Step::Holds)
            }
            Answer::Refuted(a) => {
                let k = run.syms.eval(&need, &a).unwrap_or(0);
                let b = run.syms.eval(before, &a).unwrap_or(0);
                let mut f = self.stale(run, &ev, (k, b), frames, &a);
                if let Some((lag, prev)) = varies {
                    let lag = crate::engine::sym::Printer {
                        syms: &run.syms,
                        p: self.ctx.p,
                    }
                    .lin(&lag);
                    f.notes.push(format!("the threshold leaves out `{lag}` rounds of credits, a number that changes with the loop's round: not a credit window, whose K is the same in every round (a constant or a parameter, `>= t - K + 1`)"));
                    if let Some(prev) = prev.and_then(|l| run.syms.eval(&l, &a)) {
                        f.notes.push(format!("the wait of the round before needed {prev}: this one needs no credit that wait did not already count"));
                    }
                }
                Ok(Step::Stale(Box::new(f)))
            }
        }
    }

    /// For a lag that changes with the round: a round `i >= 1` of the innermost loop whose
    /// wait needs a credit (`need(i) >= 1`) but no more than the wait of round `i - 1`
    /// needed, so it passes on what that wait counted (`sim::stale-pass`); with round
    /// `i - 1`'s need. `None` when there is none or the question is not this simple.
    fn repeat(
        &mut self,
        run: &mut Run,
        g: &Guard,
        need: &Lin,
        frames: &[u32],
    ) -> Option<(crate::engine::sym::Assign, Lin)> {
        let it = run.frames[*frames.first()? as usize].iter;
        if g.iter().any(|c| cond_mentions(&run.syms, *c, it)) {
            return None;
        }
        let s = &mut run.syms;
        let prev = subst_deep(s, need, it, &Lin::atom(it).add(&Lin::k(-1))?)?;
        let mut g2 = g.clone();
        for c in [
            s.cmp(CmpOp::Ge, &Lin::atom(it), &Lin::k(1))?,
            s.cmp(CmpOp::Ge, need, &Lin::k(1))?,
        ] {
            match c {
                CondV::Sym(id) => g2 = union(&g2, &vec![id]),
                CondV::Const(false) => return None,
                CondV::Const(true) => {}
            }
        }
        let d = need.sub(&prev)?.add(&Lin::k(-1))?;
        match self.ctx.prove(run, self.acc, &g2, frames, Prop::Ge0(d)) {
            Answer::Refuted(a) => Some((a, prev)),
            _ => None,
        }
    }

    /// The finding of a wait for `k` that `b` credits of earlier rounds satisfy.
    fn stale(
        &mut self,
        run: &mut Run,
        ev: &crate::engine::exec::Event,
        (k, b): (i64, i64),
        frames: &[u32],
        a: &crate::engine::sym::Assign,
    ) -> Finding {
        let mut f = Finding::new(format!(
            "the wait on {} for {k} can pass on earlier rounds' credits: {b} have already been sent before this round's notify",
            cell_name(self.ctx.p, self.cell)
        ));
        f.params = self.ctx.params(run, a);
        f.params.extend(self.ctx.rounds(run, frames, a));
        f.cell = Some(cell_name(self.ctx.p, self.cell));
        f.value = Some(k);
        f.primary = Some(ev.span);
        f.primary_label =
            format!("waits for {k}, but {b} credit(s) of earlier rounds already satisfy it");
        for c in self.writers.iter() {
            let s = run.events[*c].span;
            if !f.labels.iter().any(|l| l.0 == s) {
                f.labels.push((s, "credits accumulate here".into()));
            }
        }
        f.help = Some("make the threshold grow as fast as the credits: with `+= 1` per round, wait for `>= r + 1` where r is the writer's round this wait pairs with (the same round, or K rounds behind for a producer K chunks ahead, `>= t - K + 1`)".into());
        f.notes.push("thresholds must grow at least as fast as the credits (pypto#1829: AtomicAdd(epoch) with GE epoch)".into());
        f
    }

    /// The owner's summarised loop `fo` (children `okids`) at position `i`, against the
    /// writers' loops at the same position: walked once per iteration, symbolically.
    fn descend(
        &mut self,
        run: &mut Run,
        ws: &[&[Node]],
        i: usize,
        (fo, okids): (u32, &[Node]),
        before: &Lin,
        lv: &Level,
    ) -> Result<Descent, String> {
        let fro = run.frames[fo as usize].clone();
        let mut r2 = lv.renames.clone();
        let mut wk: Vec<&[Node]> = Vec::new();
        for w in ws {
            match &w[i] {
                Node::Loop(fw, kids) => {
                    let frw = &run.frames[*fw as usize];
                    if frw.span != fro.span || frw.trip != fro.trip {
                        return Err("notify and wait loops differ".into());
                    }
                    r2.push((frw.iter, fro.iter));
                    wk.push(kids);
                }
                Node::Leaf(_) => return Err("a single notify against a wait loop".into()),
            }
        }
        let all: Vec<&Node> = wk.iter().flat_map(|k| k.iter()).collect();
        let per_iter = self.total(run, &all, &r2)?;
        let upto = sum_over(&mut run.syms, &per_iter, fro.iter, &Lin::atom(fro.iter))?;
        let start = before.add(&upto).ok_or("overflow")?;
        let mut fr2 = lv.frames.to_vec();
        fr2.insert(0, fo);
        let inner = Level {
            before: start,
            renames: &r2,
            frames: &fr2,
            window: Round::inside(&per_iter, fro.iter, &fro.off),
        };
        // A piece of a split loop in which the owner does not wait only adds its credits.
        if !okids.is_empty() {
            if let Some(f) = self.align(run, &wk, okids, inner)? {
                return Ok(Descent::Stale(Box::new(f)));
            }
        }
        let whole = sum_over(&mut run.syms, &per_iter, fro.iter, &fro.trip)?;
        let end = fro.off.add(&fro.trip).ok_or("overflow")?;
        Ok(Descent::Done(whole, Round::after(&per_iter, &end)))
    }
}

/// The writers' leaves at position `i` (a writer loop there cannot pair with one wait).
fn leaves_at<'n>(ws: &[&'n [Node]], i: usize) -> Result<Vec<&'n Node>, String> {
    let mut leaves = Vec::new();
    for w in ws {
        match w.get(i) {
            Some(Node::Leaf(_)) => leaves.push(&w[i]),
            Some(Node::Loop(..)) => return Err("a notify loop against a single wait".into()),
            None => {}
        }
    }
    Ok(leaves)
}
