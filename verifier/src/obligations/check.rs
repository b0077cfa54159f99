//! The obligations, checked configuration by configuration over the events of
//! [`crate::engine::exec::run`]: per-cell closed-form sums, literal arithmetic first, Z3
//! for what literal arithmetic cannot close.

use crate::engine::exec::{self, Cell, EvKind, Event, Plan, Run, Section};
use crate::engine::smt::{Answer, Prop, Smt, Tr};
use crate::engine::sweep::{self, Visit};
use crate::engine::sym::{sum_over, union, Assign, AtomId, CondV, Guard, Lin, Printer, Syms};
use crate::report::evidence::{Evidence, Undecided};
use crate::report::*;
use collc_grammar::Span;
use collc_spec::ir::*;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};
use z3::ast::Bool;

/// Verification options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Wall-clock budget of each obligation, in milliseconds.
    pub timeout_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout_ms: crate::planning::TABLE.timeout_ms,
        }
    }
}

/// The frames around an event, innermost first.
pub fn chain(run: &Run, ev: &Event) -> Vec<u32> {
    let mut v = Vec::new();
    let mut f = ev.frame;
    while let Some(i) = f {
        v.push(i);
        f = run.frames[i as usize].parent;
    }
    v
}

/// An event's total over its summarised loops, under its guard.
pub fn contrib(run: &mut Run, ev: usize, val: &Lin) -> Result<Lin, String> {
    let mut v = val.clone();
    let ch = chain(run, &run.events[ev]);
    for f in ch {
        let fr = run.frames[f as usize].clone();
        v = sum_over(&mut run.syms, &v, fr.iter, &fr.trip)?;
    }
    let g = run.events[ev].guard.clone();
    Ok(run.syms.guarded(&g, &v))
}

pub(crate) fn value_of(ev: &Event) -> Lin {
    match &ev.kind {
        EvKind::Notify { value, .. } => value.clone(),
        _ => Lin::k(0),
    }
}

pub(crate) fn is_add(ev: &Event) -> bool {
    matches!(
        ev.kind,
        EvKind::Notify {
            op: NotifyOp::AtomicAdd,
            ..
        }
    )
}
pub(crate) fn is_set(ev: &Event) -> bool {
    matches!(
        ev.kind,
        EvKind::Notify {
            op: NotifyOp::Set,
            ..
        }
    )
}
pub(crate) fn is_wait(ev: &Event) -> bool {
    matches!(ev.kind, EvKind::Wait { .. })
}

/// `sig[1][0] on rank 0`.
pub fn cell_name(p: &Protocol, c: &Cell) -> String {
    let mut s = p.signals[c.signal].name.clone();
    for i in c.index.iter() {
        s.push_str(&format!("[{i}]"));
    }
    format!("{s} on rank {}", c.owner)
}

pub(crate) struct Acc {
    id: &'static str,
    pub(crate) violation: Option<Finding>,
    pub(crate) extra: Vec<Finding>,
    unknown: Option<(Undecided, String, Option<Span>)>,
    pub(crate) literal: u64,
    z3: u64,
    pub(crate) items: u64,
    deadline: Instant,
}

impl Acc {
    pub(crate) fn new(id: &'static str, deadline: Instant) -> Self {
        Acc {
            id,
            violation: None,
            extra: Vec::new(),
            unknown: None,
            literal: 0,
            z3: 0,
            items: 0,
            deadline,
        }
    }
    /// The limits of one Z3 query: the deterministic resource limit, and this
    /// obligation's wall-clock cap.
    pub(crate) fn limit(&self) -> crate::engine::smt::Limit {
        crate::engine::smt::Limit {
            rlimit: crate::engine::smt::QUERY_RLIMIT,
            cap: self.deadline,
        }
    }
    pub(crate) fn done(&self) -> bool {
        self.violation.is_some()
    }
    /// Undecided: a form the route does not cover (the first reason is kept).
    pub(crate) fn unknown(&mut self, reason: String, span: Option<Span>) {
        self.undecided(Undecided::Form, reason, span);
    }
    /// Undecided for `why` (the first reason is kept).
    pub(crate) fn undecided(&mut self, why: Undecided, reason: String, span: Option<Span>) {
        if self.unknown.is_none() {
            self.unknown = Some((why, reason, span));
        }
    }
    pub(crate) fn timed_out(&mut self) -> bool {
        if Instant::now() >= self.deadline {
            self.undecided(
                Undecided::Clock,
                "timeout: the obligation's time budget (--timeout-ms) was spent".into(),
                None,
            );
            true
        } else {
            false
        }
    }
}

pub(crate) struct Ctx<'a> {
    pub(crate) p: &'a Protocol,
    plan: &'a Plan,
    pub(crate) smt: &'a mut Smt,
}

impl Ctx<'_> {
    /// Literal first, then Z3.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prove(
        &mut self,
        run: &mut Run,
        acc: &mut Acc,
        guard: &Guard,
        frames: &[u32],
        prop: Prop,
    ) -> Answer {
        let lit = match &prop {
            Prop::Ge0(l) => {
                let l2 = run.syms.assume(guard, l);
                run.syms.nonneg(&l2)
            }
            Prop::Eq0(l) => run.syms.assume(guard, l).is_zero(),
            Prop::Never(_) | Prop::Equiv(..) => false,
        };
        if lit {
            acc.literal += 1;
            return Answer::Valid;
        }
        acc.z3 += 1;
        let trips: Vec<Lin> = frames
            .iter()
            .map(|f| run.frames[*f as usize].trip.clone())
            .collect();
        let g = guard.clone();
        let extra = move |tr: &mut Tr| -> Vec<Bool> {
            let mut v = vec![tr.guard(&g)];
            for t in &trips {
                v.push(tr.lin(t).ge(1));
            }
            v
        };
        self.smt.check(self.p, run, &[], &extra, &prop, acc.limit())
    }

    pub(crate) fn params(&self, run: &Run, a: &Assign) -> Vec<ParamValue> {
        let mut out: Vec<ParamValue> = run
            .config
            .iter()
            .map(|(v, x)| ParamValue {
                name: self.p.var_name(*v).to_string(),
                value: *x,
            })
            .collect();
        for v in &self.plan.symbolic {
            let value = a
                .params
                .get(v)
                .copied()
                .or_else(|| run.syms.param_bounds.get(v).map(|b| b.0))
                .unwrap_or(0);
            out.push(ParamValue {
                name: self.p.var_name(*v).to_string(),
                value,
            });
        }
        out
    }

    /// Completes an assignment: parameters and array elements absent from the query
    /// take their lowest value, iterations 0 (what the reported parameters say).
    fn complete(&self, run: &Run, a: &Assign) -> Assign {
        let mut a = a.clone();
        for v in &self.plan.symbolic {
            if !a.params.contains_key(v) {
                let lo = run.syms.param_bounds.get(v).map_or(0, |b| b.0);
                a.params.insert(*v, lo);
            }
        }
        for (id, atom) in run.syms.atoms.iter().enumerate() {
            let id = id as AtomId;
            match atom {
                crate::engine::sym::Atom::Elem(arr, _, _) if !a.atoms.contains_key(&id) => {
                    a.atoms.insert(id, self.p.arrays[*arr].domain.0);
                }
                crate::engine::sym::Atom::Iter(_) if !a.atoms.contains_key(&id) => {
                    a.atoms.insert(id, 0);
                }
                _ => {}
            }
        }
        a
    }

    pub(crate) fn contributions(
        &self,
        run: &mut Run,
        evs: &[usize],
        a: &Assign,
    ) -> Vec<Contribution> {
        let a = &self.complete(run, a);
        type Share = (Section, i64, i64, bool);
        let mut by: BTreeMap<(usize, usize, bool), Share> = BTreeMap::new();
        for &e in evs {
            let ev = &run.events[e];
            let notify = matches!(ev.kind, EvKind::Notify { .. });
            let key = (ev.span.start, ev.span.end, notify);
            let sec = ev.section;
            let val = value_of(ev);
            let cnt = contrib(run, e, &Lin::k(1))
                .ok()
                .and_then(|l| run.syms.eval(&l, a));
            let tot = contrib(run, e, &val)
                .ok()
                .and_then(|l| run.syms.eval(&l, a));
            let ent = by.entry(key).or_insert((sec, 0, 0, notify));
            ent.1 += cnt.unwrap_or(0);
            ent.2 += tot.unwrap_or(0);
        }
        by.into_iter()
            .filter(|(_, v)| v.1 != 0)
            .map(|((s, e, _), (sec, cnt, tot, notify))| Contribution {
                span: Span::new(s, e),
                line: 0,
                section: match sec {
                    Section::Body => "body".into(),
                    Section::Epilogue => "epilogue".into(),
                },
                role: if notify {
                    "notify".into()
                } else {
                    "wait".into()
                },
                count: cnt,
                total: tot,
            })
            .collect()
    }
}

/// The `verify` entry point: every obligation, with the statuses of [`Status`].
pub fn verify(p: &Protocol, opts: &Options) -> Report {
    verify_at(p, opts, None)
}

/// [`verify`] with the world size over `worlds` (`None`: the enumerated domain). Given
/// worlds, the `fence` obligation is left out (it looks at sizes of its own).
pub(crate) fn verify_at(p: &Protocol, opts: &Options, worlds: Option<&[i64]>) -> Report {
    let start = Instant::now();
    let deadline = start + Duration::from_millis(opts.timeout_ms);
    let mut smt = Smt::new();
    let fresh = || -> Vec<Acc> {
        OBLIGATIONS
            .iter()
            .chain([crate::obligations::value_signal::ID].iter())
            .map(|id| Acc::new(id, deadline))
            .collect()
    };
    let mut accs = fresh();
    let mut garbage = Garbage::default();
    let mut stats = Stats::default();
    let mut check_time = Duration::ZERO;
    let sweep = sweep::each_run(p, worlds, &mut |visit| match visit {
        Visit::Restart => {
            accs = fresh();
            garbage = Garbage::default();
            stats = Stats::default();
            true
        }
        Visit::Run(plan, run) => {
            if Instant::now() >= deadline {
                for a in accs.iter_mut() {
                    if !a.done() {
                        a.timed_out();
                    }
                }
                return false;
            }
            let t1 = Instant::now();
            stats.configurations += 1;
            stats.events += run.events.len() as u64;
            let mut ctx = Ctx {
                p,
                plan,
                smt: &mut smt,
            };
            check_run(&mut ctx, run, &mut accs, &mut garbage);
            check_time += t1.elapsed();
            !accs.iter().all(|a| a.done() || a.unknown.is_some())
        }
    });
    if let Some(f) = &sweep.failure {
        for a in accs.iter_mut() {
            if !a.done() {
                a.unknown(f.message(), f.span());
            }
        }
    }
    let plan = sweep.plan;
    let prof = (sweep.exec_time, check_time);
    stats.exec_millis = prof.0.as_millis() as u64;
    stats.check_millis = prof.1.as_millis() as u64;
    stats.z3_calls = smt.calls as u64;
    stats.literal = accs.iter().map(|a| a.literal).sum();
    let scope = plan.describe(p);
    let covered = exec::enumerated_world(p).map(|(lo, hi)| WorldRange { lo, hi });
    let declared = exec::declared_world(p);
    // Enumeration decides P up to TABLE.enum_world_max only: past that, nothing is proved.
    let capped = covered.is_some_and(|w| w.hi < declared.1);
    let checked_scope = format!("{}; {scope}", enumeration_scope(p));
    if covered.is_none() {
        for a in accs.iter_mut() {
            if !a.done() && a.unknown.is_none() {
                a.unknown(enumeration_scope(p), None);
            }
        }
    }
    let mut obligations = Vec::new();
    for a in accs {
        let code = format!("verify::{}", a.id);
        let why = a.unknown.as_ref().map(|u| u.0);
        let (status, findings, reason) = if let Some(f) = a.violation {
            let st = if a.id == "garbage-credit" {
                Status::Warning
            } else {
                Status::Violated
            };
            let mut v = vec![f];
            v.extend(a.extra);
            (st, v, None)
        } else if let Some((_, r, span)) = a.unknown {
            let mut f = Finding::new(r.clone());
            f.primary = span;
            (Status::Unknown, vec![f], Some(r))
        } else if capped {
            (Status::Checked, Vec::new(), None)
        } else {
            (Status::Proved, Vec::new(), None)
        };
        let mut findings = findings;
        if a.id == "garbage-credit" && status == Status::Warning {
            if let Some(f) = findings.first_mut() {
                f.formula = Some(format!(
                    "wasted remote atomics per call: {}",
                    garbage.formula(p)
                ));
            }
        }
        let mut summary = summary(a.id, status, a.items, a.literal, a.z3);
        if capped && status != Status::Unknown && worlds.is_none() {
            summary = format!("{summary}; {}", enumeration_scope(p));
        }
        obligations.push(ObligationResult {
            id: a.id.to_string(),
            code,
            status,
            scope: match status {
                Status::Proved => Some(scope.clone()),
                Status::Checked => Some(checked_scope.clone()),
                _ => None,
            },
            world: covered.filter(|_| status != Status::Unknown),
            evidence: match (status, why) {
                (Status::Unknown, Some(why)) => Evidence::undecided(why),
                _ => Evidence::of_enumeration(status, covered, &findings),
            },
            reason,
            summary,
            findings,
        });
    }
    if worlds.is_none() {
        obligations.push(crate::obligations::fence::check(
            p,
            &plan,
            Instant::now() + Duration::from_millis(opts.timeout_ms),
            "FILE",
        ));
    }
    stats.millis = start.elapsed().as_millis() as u64;
    Report {
        schema: SCHEMA,
        protocol: p.name.clone(),
        method: scope,
        world: WorldRange {
            lo: declared.0,
            hi: declared.1,
        },
        obligations,
        stats,
    }
}

/// What an enumeration of P covers against the declared domain:
/// `checked for P in 1..=16 by enumeration; the declared domain goes to 65536`.
pub fn enumeration_scope(p: &Protocol) -> String {
    let (lo, hi) = exec::declared_world(p);
    let w = p.var_name(p.world);
    let reach = if hi >= MAX_WORLD {
        format!("the declared domain is unbounded ({})", exec::world_text(p))
    } else {
        format!("the declared domain goes to {hi}")
    };
    match exec::enumerated_world(p) {
        Some((a, b)) => format!("checked for {w} in {a}..={b} by enumeration; {reach}"),
        None => format!(
            "the declared domain starts at {w} = {lo}, above the enumeration cap {}; no world size was enumerated",
            crate::planning::TABLE.enum_world_max
        ),
    }
}

fn summary(id: &str, st: Status, items: u64, lit: u64, z3: u64) -> String {
    let what = what(id);
    match st {
        Status::Proved | Status::Checked => {
            format!("{what} ({items} checks: {lit} by literal arithmetic, {z3} by Z3)")
        }
        Status::Violated | Status::Warning => format!("not: {what}"),
        _ => format!("undecided: {what}"),
    }
}

/// What an enumerating obligation (the six credit obligations, `value-signal`) states.
pub fn what(id: &str) -> &'static str {
    match id {
        "credit-balance" => "every written credit cell nets exactly 0 per call",
        "op-exclusivity" => "no cell is written with both Set and AtomicAdd",
        "wait-reachable" => "every wait's threshold is reached by its cell's credits",
        "stale-credit" => "every wait needs a credit of its own round (GE waits on counters); many-writer counters are reset after a wait for all their credits, and no writer's next-call credit can reach that wait",
        "garbage-credit" => "every credited cell is read by some wait",
        "value-signal" => "every value cell is Set once per call and read only after that Set, before the next call's",
        _ => "early returns depend only on rank-uniform values",
    }
}

/// Wasted remote atomics per configuration (listed when the derivation finds no
/// closed form).
#[derive(Default)]
pub struct Garbage {
    points: Vec<(Vec<(VarId, i64)>, String)>,
}

impl Garbage {
    /// The waste per call: derived symbolically with the cost walk
    /// (`crate::engine::cost::cells::waste`), or why not and the enumerated values.
    fn formula(&self, p: &Protocol) -> String {
        match crate::engine::cost::cells::waste(p) {
            Ok(x) => crate::engine::cost::show::Names { p }.formula(&x),
            Err(why) => {
                let vals: Vec<String> = self
                    .points
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
}

fn check_run(ctx: &mut Ctx, run: &mut Run, accs: &mut [Acc], garbage: &mut Garbage) {
    // Monotonic cells: thresholds `a + b·call` become `a` (the reduction of epoch.rs).
    let growth = match crate::obligations::epoch::reduce(ctx.p, run) {
        Ok(g) => g,
        Err((why, span)) => {
            for a in accs.iter_mut() {
                a.unknown(format!("unsupported form: {why}"), Some(span));
            }
            return;
        }
    };
    let (order, groups) = group_cells_flat(run);
    // Cells whose events are identical up to the names of the actors (same kinds,
    // values, guards, loops, sections, relative order, owner/remote roles) get identical
    // answers from every check below: check one representative per class.
    let mut classes: crate::engine::sym::FxMap<u64, Vec<(Cell, std::ops::Range<usize>, u64)>> =
        Default::default();
    let mut scratch = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (cell, r) in &groups {
        let evs = &order[r.clone()];
        let h = sig_hash(run, cell, evs, &mut scratch.0, &mut scratch.1);
        let bucket = classes.entry(h).or_default();
        let found = bucket.iter_mut().find(|(c, rr, _)| {
            c.signal == cell.signal
                && same_class(run, c, &order[rr.clone()], cell, evs, &mut scratch)
        });
        match found {
            Some((_, _, n)) => *n += 1,
            None => bucket.push((*cell, r.clone(), 1)),
        }
    }
    let mut reps: BTreeMap<Cell, Vec<usize>> = BTreeMap::new();
    for b in classes.values() {
        for (c, r, _) in b {
            reps.insert(*c, order[r.clone()].to_vec());
        }
    }
    let weight: HashMap<Cell, u64> = classes
        .into_values()
        .flatten()
        .map(|(c, _, n)| (c, n))
        .collect();
    let cells = reps;
    let [cb, ox, wr, st, gc, gs, vs] = accs else {
        return;
    };
    if !cb.done() && !cb.timed_out() {
        credit_balance(ctx, run, &cells, cb);
    }
    if !cb.done() && !cb.timed_out() {
        crate::obligations::epoch::balance(ctx, run, &cells, &growth, cb);
    }
    if !ox.done() && !ox.timed_out() {
        op_exclusivity(ctx, run, &cells, ox);
    }
    if !wr.done() && !wr.timed_out() {
        wait_reachable(ctx, run, &cells, wr);
    }
    if !st.done() && !st.timed_out() {
        stale_credit(ctx, run, &cells, st);
    }
    if !st.done() && !st.timed_out() {
        crate::obligations::multi::reset_rule(ctx, run, &cells, st);
    }
    if !gc.timed_out() {
        garbage_credit(ctx, run, &cells, &weight, gc, garbage);
    }
    if !gs.done() && !gs.timed_out() {
        guard_symmetry(ctx, run, gs);
    }
    if !vs.done() && !vs.timed_out() {
        // Every value cell (orderings depend on the other cells' events, so no classes).
        let values: BTreeMap<Cell, Vec<usize>> = groups
            .iter()
            .filter(|(c, _)| ctx.p.signals[c.signal].kind == SignalKind::Value)
            .map(|(c, r)| (*c, order[r.clone()].to_vec()))
            .collect();
        crate::obligations::value_signal::check(ctx, run, &values, vs);
    }
}

/// Event indices sorted by cell, and each cell's range in that order.
pub fn group_cells_flat(run: &Run) -> (Vec<usize>, Vec<(Cell, std::ops::Range<usize>)>) {
    let pack = |c: &Cell| -> Option<u128> {
        if c.signal >= 1 << 16 || c.owner >= 1 << 16 {
            return None;
        }
        let mut k: u128 = ((c.signal as u128) << 112) | ((c.owner as u128) << 96);
        for (i, x) in c.index.iter().enumerate() {
            if !(0..1 << 22).contains(x) {
                return None;
            }
            k |= (*x as u128) << (74 - 22 * i);
        }
        Some(k | c.index.len() as u128)
    };
    // Group ids by first appearance (hashing, no sort), then a counting sort.
    let mut ids: crate::engine::sym::FxMap<u128, u32> = Default::default();
    let mut cells: Vec<Cell> = Vec::new();
    let mut gid: Vec<(u32, usize)> = Vec::with_capacity(run.events.len());
    let mut slow: Vec<(Cell, usize)> = Vec::new();
    for (i, e) in run.events.iter().enumerate() {
        if let Some(c) = &e.cell {
            match pack(c) {
                Some(k) => {
                    let id = *ids.entry(k).or_insert_with(|| {
                        cells.push(*c);
                        cells.len() as u32 - 1
                    });
                    gid.push((id, i));
                }
                None => slow.push((*c, i)),
            }
        }
    }
    let mut count = vec![0usize; cells.len() + 1];
    for (g, _) in &gid {
        count[*g as usize + 1] += 1;
    }
    for k in 1..count.len() {
        count[k] += count[k - 1];
    }
    let mut order: Vec<usize> = vec![0; gid.len()];
    let mut next = count.clone();
    for (g, i) in &gid {
        order[next[*g as usize]] = *i;
        next[*g as usize] += 1;
    }
    let mut groups: Vec<(Cell, std::ops::Range<usize>)> = cells
        .iter()
        .enumerate()
        .map(|(g, c)| (*c, count[g]..count[g + 1]))
        .collect();
    slow.sort_unstable();
    let mut i = 0;
    while i < slow.len() {
        let start = order.len();
        let mut j = i;
        while j < slow.len() && slow[j].0 == slow[i].0 {
            order.push(slow[j].1);
            j += 1;
        }
        groups.push((slow[i].0, start..order.len()));
        i = j;
    }
    (order, groups)
}

/// The actor-independent view of one event of a cell: equal views in the same order
/// (with the same pattern of actors) give equal answers from every check.
fn view<'a>(
    run: &'a Run,
    cell: &Cell,
    e: usize,
) -> (
    bool,
    u8,
    u8,
    &'a Lin,
    &'a Guard,
    Option<u32>,
    Section,
    bool,
    usize,
) {
    let ev = &run.events[e];
    thread_local! {
        static ZERO: &'static Lin = Box::leak(Box::new(Lin::k(0)));
    }
    let (kind, op, val, remote) = match &ev.kind {
        EvKind::Notify { op, value, remote } => (0u8, *op as u8, value, *remote),
        EvKind::Wait { cmp, thr } => (1, *cmp as u8, thr, false),
        EvKind::Fence => (2, 0, ZERO.with(|z| *z), false),
    };
    (
        ev.actor.0 == cell.owner,
        kind,
        op,
        val,
        &ev.guard,
        ev.frame,
        ev.section,
        remote,
        ev.span.start,
    )
}

/// Actor pattern: for each event, the index of its actor in order of first appearance.
fn actor_pattern(run: &Run, evs: &[usize], seen: &mut Vec<(u32, u32)>, out: &mut Vec<u16>) {
    seen.clear();
    out.clear();
    for &e in evs {
        let a = run.events[e].actor;
        let i = match seen.iter().position(|x| *x == a) {
            Some(i) => i,
            None => {
                seen.push(a);
                seen.len() - 1
            }
        };
        out.push(i as u16);
    }
}

fn sig_hash(
    run: &Run,
    cell: &Cell,
    evs: &[usize],
    seen: &mut Vec<(u32, u32)>,
    pat: &mut Vec<u16>,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = crate::engine::sym::Fx::default();
    cell.signal.hash(&mut h);
    evs.len().hash(&mut h);
    actor_pattern(run, evs, seen, pat);
    pat.hash(&mut h);
    for &e in evs {
        view(run, cell, e).hash(&mut h);
    }
    h.finish()
}

type Scratch = (Vec<(u32, u32)>, Vec<u16>, Vec<(u32, u32)>, Vec<u16>);

fn same_class(run: &Run, a: &Cell, ea: &[usize], b: &Cell, eb: &[usize], s: &mut Scratch) -> bool {
    if ea.len() != eb.len() {
        return false;
    }
    actor_pattern(run, ea, &mut s.0, &mut s.1);
    actor_pattern(run, eb, &mut s.2, &mut s.3);
    s.1 == s.3
        && ea
            .iter()
            .zip(eb)
            .all(|(x, y)| view(run, a, *x) == view(run, b, *y))
}

fn credit_balance(ctx: &mut Ctx, run: &mut Run, cells: &BTreeMap<Cell, Vec<usize>>, acc: &mut Acc) {
    let mut cache: HashMap<Lin, bool> = HashMap::new();
    for (cell, evs) in cells {
        // Value cells are never reset; monotonic ones are checked by `epoch::balance`.
        if ctx.p.signals[cell.signal].kind == SignalKind::Value
            || ctx.p.signals[cell.signal].monotonic
        {
            continue;
        }
        let notifies: Vec<usize> = evs
            .iter()
            .copied()
            .filter(|e| !is_wait(&run.events[*e]))
            .collect();
        if notifies.is_empty() {
            continue;
        }
        let has_set = notifies.iter().any(|e| is_set(&run.events[*e]));
        let has_add = notifies.iter().any(|e| is_add(&run.events[*e]));
        acc.items += 1;
        if has_set && has_add {
            // op-exclusivity reports the mix; the cell's exit value is still checked in
            // the canonical order (bodies before epilogues, ranks in order), when no Set
            // sits in a summarised loop or under a symbolic condition.
            let mut order = notifies.clone();
            order.sort_by_key(|e| {
                let x = &run.events[*e];
                (x.section, x.actor, x.seq)
            });
            if order.iter().any(|e| {
                is_set(&run.events[*e])
                    && (run.events[*e].frame.is_some() || !run.events[*e].guard.is_empty())
            }) {
                continue;
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
                continue;
            }
            if let Answer::Refuted(a) =
                ctx.prove(run, acc, &Vec::new(), &[], Prop::Eq0(val.clone()))
            {
                let x = run.syms.eval(&val, &a).unwrap_or(0);
                let mut f = balance_finding(ctx, run, cell, &notifies, &val, x, &a);
                f.notes.push("the cell mixes Set and AtomicAdd; its exit value is taken in program order, bodies before epilogues".into());
                acc.violation = Some(f);
                return;
            }
            continue;
        }
        if has_set {
            // A credit cell written only with Set is left at the Set value.
            for &e in &notifies {
                let ev = run.events[e].clone();
                let v = value_of(&ev);
                let frames = chain(run, &ev);
                let ans = ctx.prove(run, acc, &ev.guard, &frames, Prop::Eq0(v.clone()));
                match ans {
                    Answer::Valid => {}
                    Answer::Unknown(kind, r) => acc.undecided(
                        kind,
                        format!("{}: {r}", cell_name(ctx.p, cell)),
                        Some(ev.span),
                    ),
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
                        f.primary_label =
                            format!("sets the cell to {val}; nothing takes it back to 0");
                        f.contributions = ctx.contributions(run, &notifies, &a);
                        f.help = Some("count credits with `+= 1` and take them back in the epilogue with `-= N` (AtomicAdd)".into());
                        f.notes.push("the next call's waits pass on this value at once (single-shot barrier)".into());
                        acc.violation = Some(f);
                        return;
                    }
                }
            }
            continue;
        }
        let mut net = Lin::k(0);
        let mut bad = None;
        for &e in &notifies {
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
            continue;
        }
        if net.is_zero() {
            acc.literal += 1;
            continue;
        }
        if cache.get(&net) == Some(&true) {
            continue;
        }
        let ans = ctx.prove(run, acc, &Vec::new(), &[], Prop::Eq0(net.clone()));
        match ans {
            Answer::Valid => {
                cache.insert(net, true);
            }
            Answer::Unknown(kind, r) => acc.undecided(
                kind,
                format!("{}: {r}", cell_name(ctx.p, cell)),
                notifies.first().map(|e| run.events[*e].span),
            ),
            Answer::Refuted(a) => {
                let val = run.syms.eval(&net, &a).unwrap_or(0);
                let f = balance_finding(ctx, run, cell, &notifies, &net, val, &a);
                acc.violation = Some(f);
                return;
            }
        }
    }
}

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
    if let Some(c) = epi.first() {
        f.primary = Some(c.span);
        f.primary_label = format!("takes back {} but the cell received {credits}", -reset);
        for c in epi.iter().skip(1) {
            f.labels
                .push((c.span, format!("adds {} ({} ×)", c.total, c.count)));
        }
        for c in &body {
            f.labels
                .push((c.span, format!("adds {} ({} ×)", c.total, c.count)));
        }
    } else if let Some(c) = body.first() {
        f.primary = Some(c.span);
        f.primary_label = format!("adds {} ({} ×); nothing takes it back", c.total, c.count);
        for c in body.iter().skip(1) {
            f.labels
                .push((c.span, format!("adds {} ({} ×)", c.total, c.count)));
        }
    }
    f.help = Some(if epi.is_empty() {
        format!("add an epilogue that takes the credits back: `-= {credits}` (as a formula: the cell's credits per call)")
    } else {
        "make the epilogue take back exactly the credits the cell receives in the call".to_string()
    });
    f.notes.push("a cell left non-zero makes the next call's waits pass early (or need extra credits) when the signal is reused".into());
    f
}

fn op_exclusivity(ctx: &mut Ctx, run: &mut Run, cells: &BTreeMap<Cell, Vec<usize>>, acc: &mut Acc) {
    for (cell, evs) in cells {
        let sets: Vec<usize> = evs
            .iter()
            .copied()
            .filter(|e| is_set(&run.events[*e]))
            .collect();
        let adds: Vec<usize> = evs
            .iter()
            .copied()
            .filter(|e| is_add(&run.events[*e]))
            .collect();
        acc.items += 1;
        if sets.is_empty() || adds.is_empty() {
            acc.literal += 1;
            continue;
        }
        for &s in sets.iter().take(8) {
            for &a in adds.iter().take(8) {
                let (es, ea) = (run.events[s].clone(), run.events[a].clone());
                let g = union(&es.guard, &ea.guard);
                let mut frames = chain(run, &es);
                frames.extend(chain(run, &ea));
                let ans = ctx.prove(run, acc, &g, &frames, Prop::Never(g.clone()));
                match ans {
                    Answer::Valid => {}
                    Answer::Unknown(kind, r) => acc.undecided(
                        kind,
                        format!("{}: {r}", cell_name(ctx.p, cell)),
                        Some(es.span),
                    ),
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
                        acc.violation = Some(f);
                        return;
                    }
                }
            }
        }
    }
}

fn wait_reachable(ctx: &mut Ctx, run: &mut Run, cells: &BTreeMap<Cell, Vec<usize>>, acc: &mut Acc) {
    for (cell, evs) in cells {
        let waits: Vec<usize> = evs
            .iter()
            .copied()
            .filter(|e| is_wait(&run.events[*e]))
            .collect();
        if waits.is_empty() {
            continue;
        }
        let has_set = evs.iter().any(|e| is_set(&run.events[*e]));
        if has_set || ctx.p.signals[cell.signal].kind == SignalKind::Value {
            continue; // values persist across calls; not a credit count
        }
        let adds: Vec<usize> = evs
            .iter()
            .copied()
            .filter(|e| is_add(&run.events[*e]) && run.events[*e].section == Section::Body)
            .collect();
        let mut parts: Vec<(usize, Lin)> = Vec::new();
        for &e in &adds {
            let v = value_of(&run.events[e]);
            match contrib(run, e, &v) {
                Ok(c) => parts.push((e, c)),
                Err(r) => {
                    acc.unknown(
                        format!("{}: {r}", cell_name(ctx.p, cell)),
                        Some(run.events[e].span),
                    );
                    return;
                }
            }
        }
        for &w in &waits {
            let ev = run.events[w].clone();
            // Credits that can have arrived: every other actor's, and the waiter's own
            // adds that precede the wait in its program order.
            let mut total = Lin::k(0);
            for (e, c) in &parts {
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
            let ans = ctx.prove(run, acc, &ev.guard, &frames, Prop::Ge0(d));
            match ans {
                Answer::Valid => {}
                Answer::Unknown(kind, r) => acc.undecided(
                    kind,
                    format!("{}: {r}", cell_name(ctx.p, cell)),
                    Some(ev.span),
                ),
                Answer::Refuted(a) => {
                    let k = run.syms.eval(&need, &a).unwrap_or(0);
                    let t = run.syms.eval(&total, &a).unwrap_or(0);
                    let mut f = Finding::new(format!(
                        "the wait on {} needs {k} but the cell receives only {t} credit(s) in the call: certain hang",
                        cell_name(ctx.p, cell)
                    ));
                    f.params = ctx.params(run, &a);
                    f.params.extend(rounds(ctx.p, run, &frames, &a));
                    f.cell = Some(cell_name(ctx.p, cell));
                    f.value = Some(k);
                    f.primary = Some(ev.span);
                    f.primary_label = format!("waits for {k}; at most {t} arrive");
                    let mut all = adds.clone();
                    all.push(w);
                    f.contributions = ctx.contributions(run, &all, &a);
                    for c in &f.contributions {
                        if c.role == "notify" {
                            f.labels
                                .push((c.span, format!("adds {} in total", c.total)));
                        }
                    }
                    f.help = Some(
                        "the threshold may not exceed the credits sent to the cell in this call"
                            .into(),
                    );
                    acc.violation = Some(f);
                    return;
                }
            }
        }
    }
}

/// Values of the loop variables of the frames (as parameter-like lines).
fn rounds(p: &Protocol, run: &Run, frames: &[u32], a: &Assign) -> Vec<ParamValue> {
    let mut out = Vec::new();
    for f in frames.iter().rev() {
        let fr = &run.frames[*f as usize];
        let Some(j) = a.atoms.get(&fr.iter) else {
            continue;
        };
        let lo = run.syms.eval(&fr.lo, a).unwrap_or(0);
        let step = run.syms.eval(&fr.step, a).unwrap_or(1);
        let crate::engine::sym::Atom::Iter(n) = run.syms.atoms[fr.iter as usize] else {
            continue;
        };
        let var = run.syms.loops[n as usize].var;
        out.push(ParamValue {
            name: format!("{} (loop variable)", p.var_name(var)),
            value: lo + step * j,
        });
    }
    out
}

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

struct Pairing<'a, 'b, 'c> {
    ctx: &'a mut Ctx<'b>,
    acc: &'a mut Acc,
    cell: &'c Cell,
    writers: Vec<usize>,
}

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

    /// Walks the owner's waits and the writers' notifies in lockstep. `window`: the
    /// enclosing summarised loop's per-iteration credit and iteration atom, for waits that
    /// pair with a writer round K behind (`crate::obligations::window`).
    #[allow(clippy::too_many_arguments)]
    fn align(
        &mut self,
        run: &mut Run,
        ws: &[&[Node]],
        o: &[Node],
        mut before: Lin,
        r: &Renames,
        frames: &[u32],
        window: Option<crate::obligations::window::Round>,
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
        let mut last_loop: Option<crate::obligations::window::Round> = window.clone();
        for (i, on) in o.iter().enumerate() {
            match on {
                Node::Leaf(we) => {
                    let mut leaves = Vec::new();
                    for w in ws {
                        match w.get(i) {
                            Some(Node::Leaf(_)) => leaves.push(&w[i]),
                            Some(Node::Loop(..)) => {
                                return Err("a notify loop against a single wait".into())
                            }
                            None => {}
                        }
                    }
                    let credit = self.total(run, &leaves, r)?;
                    let ev = run.events[*we].clone();
                    let EvKind::Wait { cmp, thr } = &ev.kind else {
                        continue;
                    };
                    let need = if *cmp == CmpOp::Gt {
                        thr.add(&Lin::k(1)).ok_or("overflow")?
                    } else {
                        thr.clone()
                    };
                    // The wait must need a credit of its own round: need > before.
                    let d = need
                        .sub(&before)
                        .and_then(|x| x.add(&Lin::k(-1)))
                        .ok_or("overflow")?;
                    self.acc.items += 1;
                    let g = ev.guard.clone();
                    let mut ans = self.ctx.prove(run, self.acc, &g, frames, Prop::Ge0(d));
                    if matches!(ans, Answer::Refuted(_)) {
                        // A credit window: the wait needs the credit of the writer's round
                        // K behind (a producer K chunks ahead of its consumer).
                        let lw = if i < ws.iter().map(|w| w.len()).min().unwrap_or(0) {
                            window.clone()
                        } else {
                            last_loop.clone()
                        };
                        if let Some(q) = lw.and_then(|u| u.lagged(&need, &before)) {
                            // The round it pairs with exists, or the wait needs nothing yet
                            // (the window's first K rounds: threshold <= 0).
                            if let Some((early, idle)) =
                                crate::obligations::window::early(&mut run.syms, &g, &q, &need)
                            {
                                // Undecided (a timeout) stays undecided: never a
                                // violation the window proof could not refute.
                                match self.ctx.prove(run, self.acc, &early, frames, idle) {
                                    Answer::Refuted(_) => {}
                                    other => ans = other,
                                }
                            }
                        }
                    }
                    match ans {
                        Answer::Valid => {}
                        Answer::Unknown(kind, reason) => self.acc.undecided(
                            kind,
                            format!("{}: {reason}", cell_name(self.ctx.p, self.cell)),
                            Some(ev.span),
                        ),
                        Answer::Refuted(a) => {
                            let k = run.syms.eval(&need, &a).unwrap_or(0);
                            let b = run.syms.eval(&before, &a).unwrap_or(0);
                            let mut f = Finding::new(format!(
                                "the wait on {} for {k} can pass on earlier rounds' credits: {b} have already been sent before this round's notify",
                                cell_name(self.ctx.p, self.cell)
                            ));
                            f.params = self.ctx.params(run, &a);
                            f.params.extend(rounds(self.ctx.p, run, frames, &a));
                            f.cell = Some(cell_name(self.ctx.p, self.cell));
                            f.value = Some(k);
                            f.primary = Some(ev.span);
                            f.primary_label = format!("waits for {k}, but {b} credit(s) of earlier rounds already satisfy it");
                            for c in self.writers.iter() {
                                let s = run.events[*c].span;
                                if !f.labels.iter().any(|l| l.0 == s) {
                                    f.labels.push((s, "credits accumulate here".into()));
                                }
                            }
                            f.help = Some("make the threshold grow as fast as the credits: with `+= 1` per round, wait for `>= r + 1` where r is the writer's round this wait pairs with (the same round, or K rounds behind for a producer K chunks ahead, `>= t - K + 1`)".into());
                            f.notes.push("thresholds must grow at least as fast as the credits (pypto#1829: AtomicAdd(epoch) with GE epoch)".into());
                            return Ok(Some(f));
                        }
                    }
                    before = before.add(&credit).ok_or("overflow")?;
                }
                Node::Loop(fo, okids) => {
                    let fro = run.frames[*fo as usize].clone();
                    let mut r2 = r.clone();
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
                            Node::Leaf(_) => {
                                return Err("a single notify against a wait loop".into())
                            }
                        }
                    }
                    let mut all: Vec<&Node> = Vec::new();
                    for k in &wk {
                        all.extend(k.iter());
                    }
                    let per_iter = self.total(run, &all, &r2)?;
                    let upto = sum_over(&mut run.syms, &per_iter, fro.iter, &Lin::atom(fro.iter))?;
                    let start = before.add(&upto).ok_or("overflow")?;
                    let mut fr2 = frames.to_vec();
                    fr2.insert(0, *fo);
                    let inner = crate::obligations::window::Round::inside(&per_iter, fro.iter);
                    if let Some(f) = self.align(run, &wk, okids, start, &r2, &fr2, inner)? {
                        return Ok(Some(f));
                    }
                    let whole = sum_over(&mut run.syms, &per_iter, fro.iter, &fro.trip)?;
                    before = before.add(&whole).ok_or("overflow")?;
                    last_loop = crate::obligations::window::Round::after(&per_iter, &fro.trip);
                }
            }
        }
        Ok(None)
    }
}

/// The events of `evs` that add a credit in the body that is not known to be zero or less.
fn body_credits(run: &Run, evs: &[usize]) -> Vec<usize> {
    evs.iter()
        .copied()
        .filter(|e| {
            let ev = &run.events[*e];
            is_add(ev)
                && ev.section == Section::Body
                && value_of(ev).as_const().is_none_or(|v| v > 0)
        })
        .collect()
}

fn stale_credit(ctx: &mut Ctx, run: &mut Run, cells: &BTreeMap<Cell, Vec<usize>>, acc: &mut Acc) {
    for (cell, evs) in cells {
        let adds = body_credits(run, evs);
        let waits: Vec<usize> = evs
            .iter()
            .copied()
            .filter(|e| is_wait(&run.events[*e]))
            .collect();
        let has_set = evs.iter().any(|e| is_set(&run.events[*e]));
        if waits.is_empty() || adds.is_empty() || has_set {
            continue;
        }
        // Non-monotone comparisons on a counter (every such statement is reported).
        let mut eq_found = false;
        for &w in &waits {
            let ev = run.events[w].clone();
            let EvKind::Wait { cmp, .. } = ev.kind else {
                continue;
            };
            if !matches!(cmp, CmpOp::Ge | CmpOp::Gt) {
                let a = match ctx.prove(
                    run,
                    acc,
                    &ev.guard,
                    &chain(run, &ev),
                    Prop::Never(ev.guard.clone()),
                ) {
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
                eq_found = true;
            }
        }
        if eq_found {
            continue;
        }
        // Round pairing, per owner actor.
        let mut owners: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        for &w in &waits {
            owners.entry(run.events[w].actor).or_default().push(w);
        }
        let mut writers: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
        for &e in &adds {
            writers.entry(run.events[e].actor).or_default().push(e);
        }
        for (_, ow) in owners {
            if ow.len() == 1 && run.events[ow[0]].frame.is_none() {
                // One wait per call: no earlier round of this call can satisfy it, and
                // earlier calls' credits are excluded by credit-balance (README, reuse theorem)
                // — on a monotonic cell only if it needs a credit of its own call.
                if ctx.p.signals[cell.signal].monotonic {
                    if let Some(f) = crate::obligations::epoch::own_call(ctx, run, acc, cell, ow[0])
                    {
                        acc.violation = Some(f);
                        return;
                    }
                    continue;
                }
                acc.items += 1;
                acc.literal += 1;
                continue;
            }
            // The writers' notifies share one guard; a wait may run under more conditions
            // (a window's waits start at round K), proved under its own guard.
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
                continue;
            }
            let otree = build_tree(run, &ow);
            let wtrees: Vec<Vec<Node>> = writers.values().map(|w| build_tree(run, w)).collect();
            let wrefs: Vec<&[Node]> = wtrees.iter().map(|t| t.as_slice()).collect();
            let mut pairing = Pairing {
                ctx,
                acc,
                cell,
                writers: adds.clone(),
            };
            match pairing.align(run, &wrefs, &otree, Lin::k(0), &Vec::new(), &[], None) {
                Ok(None) => {}
                Ok(Some(f)) => {
                    pairing.acc.violation = Some(f);
                    return;
                }
                Err(r) => pairing.acc.unknown(
                    format!(
                        "{}: the notifies and waits on this cell do not pair round by round ({r})",
                        cell_name(pairing.ctx.p, cell)
                    ),
                    Some(run.events[ow[0]].span),
                ),
            }
        }
    }
}

fn garbage_credit(
    ctx: &mut Ctx,
    run: &mut Run,
    cells: &BTreeMap<Cell, Vec<usize>>,
    weight: &HashMap<Cell, u64>,
    acc: &mut Acc,
    garbage: &mut Garbage,
) {
    let mut wasted = Lin::k(0);
    let mut first: Option<(Cell, Vec<usize>)> = None;
    for (cell, evs) in cells {
        let waited = evs.iter().any(|e| is_wait(&run.events[*e]));
        let credits = body_credits(run, evs);
        if credits.is_empty() {
            continue;
        }
        acc.items += 1;
        if waited {
            acc.literal += 1;
            continue;
        }
        let w = weight.get(cell).copied().unwrap_or(1) as i64;
        for &e in &credits {
            if let EvKind::Notify { remote: true, .. } = run.events[e].kind {
                if let Ok(c) = contrib(run, e, &Lin::k(1)) {
                    wasted = wasted.axpy(w, &c).unwrap_or(wasted);
                }
            }
        }
        if first.is_none() {
            first = Some((*cell, credits));
        }
    }
    let shown = Printer {
        syms: &run.syms,
        p: ctx.p,
    }
    .lin(&wasted);
    garbage.points.push((run.config.clone(), shown));
    if acc.violation.is_some() {
        return;
    }
    if let Some((cell, credits)) = first {
        let a = match ctx.smt.check(
            ctx.p,
            run,
            &[],
            &|_| Vec::new(),
            &Prop::Never(Vec::new()),
            acc.limit(),
        ) {
            Answer::Refuted(a) => a,
            _ => Assign::default(),
        };
        let mut f = Finding::new(format!(
            "credits are sent to {}, but no wait ever reads that cell",
            cell_name(ctx.p, &cell)
        ));
        f.params = ctx.params(run, &a);
        f.cell = Some(cell_name(ctx.p, &cell));
        f.contributions = ctx.contributions(run, &credits, &a);
        f.primary = Some(run.events[credits[0]].span);
        f.primary_label = "credits nobody waits for".into();
        f.help = Some(
            "notify only the ranks that wait on the cell (e.g. only the root notifies, per tile)"
                .into(),
        );
        acc.violation = Some(f);
    }
}

fn guard_symmetry(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
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
            let differ = match (c0, c1) {
                (CondV::Const(_), CondV::Const(_)) => {
                    let a = match ctx.smt.check(
                        ctx.p,
                        run,
                        &[],
                        &|_| Vec::new(),
                        &Prop::Never(Vec::new()),
                        acc.limit(),
                    ) {
                        Answer::Refuted(a) => a,
                        _ => Assign::default(),
                    };
                    Some(a)
                }
                (x, y) => {
                    let (cx, cy) = (as_cond(&mut run.syms, x), as_cond(&mut run.syms, y));
                    match ctx.prove(run, acc, &Vec::new(), &[], Prop::Equiv(cx, cy)) {
                        Answer::Valid => None,
                        Answer::Refuted(a) => Some(a),
                        Answer::Unknown(kind, reason) => {
                            acc.undecided(kind, reason, Some(span));
                            None
                        }
                    }
                }
            };
            if let Some(a) = differ {
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
