//! Monotonic (epoch) signals and the call index (README, "Monotonic signals").
//!
//! The reduction: a monotonic cell that receives exactly `N` credits per call, read by
//! waits whose thresholds are `a + N·call`, behaves in every call like a self-clearing
//! cell read with threshold `a` whose owner takes the `N` credits back at the end of the
//! call (the cell at the start of call `c` holds `c·N`; both sides of every wait are
//! shifted by it). So each wait event on a monotonic cell is split into `a + b·call`
//! ([`reduce`]): `b` must equal the cell's per-call net credit (checked by [`balance`],
//! part of `credit-balance`), and `a` is what `wait-reachable` and `stale-credit` then
//! check, unchanged. The overflow horizon ([`horizon`]) follows from the same `N`: the
//! cell only grows and holds `calls·N` after the last call, so it never wraps while
//! `calls·N <= 2^31 - 1`.

use crate::engine::call::{has_monotonic, CELL_MAX};
use crate::engine::events::{cell_name, contrib, is_wait, value_of, CellIndex};
use crate::engine::exec::{self, Cell, EvKind, Run};
use crate::engine::smt::{Answer, Prop};
use crate::engine::sweep::{self, Visit};
use crate::engine::sym::{cond_mentions, mentions};
use crate::engine::sym::{Atom, Lin};
use crate::obligations::context::{Acc, Ctx, Rep};
use crate::report::evidence::Evidence;
use crate::report::scope::{Covered, Scope, Symbolic};
use crate::report::{Finding, ObligationResult, Status, WorldRange};
use collc_grammar::Span;
use collc_spec::ir::{CmpOp, Protocol};
use std::collections::BTreeMap;

/// The obligation's id.
pub const ID: &str = crate::report::Obligation::OverflowHorizon.id();

/// Each monotonic cell's waits: (event, per-call threshold growth `b`).
pub(crate) type Growth = BTreeMap<Cell, Vec<(usize, Lin)>>;

/// Splits every wait threshold on a monotonic cell into `a + b·call`, leaves `a` in the
/// event and returns the `b`s. A form outside the reduction (a threshold not affine in
/// the call index, a credit or a guard that depends on it) is an `Err` with the reason.
pub(crate) fn reduce(p: &Protocol, run: &mut Run) -> Result<Growth, (String, Span)> {
    let mut out = Growth::new();
    if !has_monotonic(p) {
        return Ok(out);
    }
    let call = p.call.map(|v| run.syms.intern(Atom::Param(v)));
    for i in 0..run.events.len() {
        let Some(cell) = run.events[i].cell else {
            continue;
        };
        if !p.signals[cell.signal].monotonic {
            continue;
        }
        let span = run.events[i].span;
        if let Some(a) = call {
            if run.events[i]
                .guard
                .iter()
                .any(|c| cond_mentions(&run.syms, *c, a))
            {
                return Err((
                    "a notify or wait on a monotonic signal under a condition on `call`: \
                     its credits per call would differ between calls"
                        .into(),
                    span,
                ));
            }
        }
        match &run.events[i].kind {
            EvKind::Notify { value, .. } => {
                if call.is_some_and(|a| mentions(&run.syms, value, a)) {
                    return Err((
                        "a credit to a monotonic signal that depends on `call`: the per-call \
                         credit must be the same in every call"
                            .into(),
                        span,
                    ));
                }
            }
            EvKind::Wait { thr, .. } => {
                let (b, rest) = match call {
                    Some(a) => thr.split(a),
                    None => (0, thr.clone()),
                };
                if call.is_some_and(|a| mentions(&run.syms, &rest, a)) {
                    return Err((
                        "the threshold of a wait on a monotonic signal must be affine in the \
                         call index, `a + b * call` with `a` and `b` free of `call`"
                            .into(),
                        span,
                    ));
                }
                if let EvKind::Wait { thr, .. } = &mut run.events[i].kind {
                    *thr = rest;
                }
                out.entry(cell).or_default().push((i, Lin::k(b)));
            }
            EvKind::Fence => {}
        }
    }
    Ok(out)
}

/// The per-cell credit over one call of a monotonic cell (body notifies; the front end
/// refuses epilogue writes).
fn per_call_credit(run: &mut Run, evs: &[usize]) -> Result<Lin, (String, Span)> {
    let mut net = Lin::k(0);
    for &e in evs {
        if is_wait(&run.events[e]) || matches!(run.events[e].kind, EvKind::Fence) {
            continue;
        }
        let v = value_of(&run.events[e]);
        let c = contrib(run, e, &v).map_err(|r| (r, run.events[e].span))?;
        net = net.add(&c).ok_or_else(|| {
            (
                "overflow in the per-call credit".to_string(),
                run.events[e].span,
            )
        })?;
    }
    Ok(net)
}

/// `credit-balance` on monotonic cells: every wait's threshold grows per call by exactly
/// the cell's per-call net credit.
pub(crate) fn balance(ctx: &mut Ctx, run: &mut Run, acc: &mut Acc) {
    let facts = ctx.facts;
    for rep in &facts.reps {
        let (cell, evs) = (&rep.cell, &rep.ev.all);
        let Some(waits) = facts.growth.get(cell) else {
            continue;
        };
        acc.items += 1;
        let net = match per_call_credit(run, evs) {
            Ok(n) => n,
            Err((r, sp)) => {
                acc.unknown(
                    format!(
                        "{}: the per-call credit cannot be closed: {r}",
                        cell_name(ctx.p, cell)
                    ),
                    Some(sp),
                );
                continue;
            }
        };
        for (w, b) in waits {
            let Some(diff) = net.sub(b) else { continue };
            let ev = run.events[*w].clone();
            match ctx.prove(run, acc, &Vec::new(), &[], Prop::Eq0(diff)) {
                Answer::Valid => {}
                Answer::Unknown(kind, r) => acc.undecided_at(ctx.p, cell, kind, &r, ev.span),
                Answer::Refuted(a) => {
                    let n = run.syms.eval(&net, &a).unwrap_or(0);
                    let g = run.syms.eval(b, &a).unwrap_or(0);
                    let notifies = &rep.ev.writes;
                    let mut f = Finding::new(format!(
                        "{} is monotonic and receives {n} credit(s) per call, but this wait's threshold grows by {g} per call",
                        cell_name(ctx.p, cell)
                    ));
                    f.params = ctx.params(run, &a);
                    f.cell = Some(cell_name(ctx.p, cell));
                    f.value = Some(n);
                    f.formula = Some(format!("per-call credit {n}; threshold growth {g}"));
                    f.contributions = ctx.contributions(run, notifies, &a);
                    f.primary = Some(ev.span);
                    f.primary_label = format!("threshold grows by {g} per call; the cell by {n}");
                    for c in &f.contributions.clone() {
                        f.labels
                            .push((c.span, format!("adds {} per call ({} ×)", c.total, c.count)));
                    }
                    f.help = Some(format!(
                        "make the threshold grow by exactly the cell's {n} credit(s) per call (it grows by {g})"
                    ));
                    f.rewrite = Some(crate::report::Rewrite::ThresholdGrowth { by: n - g });
                    f.notes.push(if g > n {
                        "the threshold outruns the credits: a later call waits for credits that never come (deadlock)".into()
                    } else {
                        "the credits outrun the threshold: a later call's wait passes on an earlier call's credits".into()
                    });
                    acc.violation = Some(f);
                    return;
                }
            }
        }
    }
}

/// One monotonic cell's growth per call at one configuration (for the horizon).
struct CellGrowth {
    cell: String,
    per_call: i64,
    span: Span,
    config: Vec<(String, i64)>,
}

/// The overflow-horizon obligation, when the protocol has monotonic signals: the
/// number of calls before an int32 cell wraps, `floor((2^31 - 1) / N)` for the largest
/// per-call credit `N` of any monotonic cell, against `calls <= M;`. With `sym` (the
/// parametric route closed `credit-balance`), `N` is maximised over the whole declared
/// domain with `P` symbolic and stated as a formula `N(P)`; otherwise over the enumerated
/// configurations. Without a declaration, a `>=`/`>` wait on a wrapping counter is a
/// violation (it deadlocks or passes early once the cell wraps). A violation's value is
/// the horizon (the fix declares `calls <=` it, `crate::fix`).
pub fn horizon(
    p: &Protocol,
    sym: Option<&crate::engine::param::horizon::Horizon>,
) -> Option<ObligationResult> {
    if !has_monotonic(p) {
        return None;
    }
    let code = format!("verify::{ID}");
    let m = match measure(p, sym, &code) {
        Ok(m) => m,
        Err(r) => return Some(*r),
    };
    // A proved line says how it was shown (`scope::finish`): the maximisation with P
    // symbolic covers the declared domain, the enumerated one its configurations.
    // What a proof here showed: the maximisation with P symbolic, or the enumeration.
    let shown = match m.covered {
        Some(w) if sym.is_some() => Evidence::symbolic(w),
        Some(w) => Evidence::enumerated(w),
        None => Evidence::none(),
    };
    let fits = |status, claim: String| ObligationResult {
        id: ID.into(),
        code: code.clone(),
        status,
        scope: Some(m.scope.clone()),
        world: m.covered,
        reason: None,
        claim,
        findings: Vec::new(),
        evidence: shown.clone(),
    };
    let Some(w) = m.worst.as_ref().filter(|w| w.per_call > 0) else {
        return Some(fits(
            Status::Proved,
            "no monotonic cell receives credits: nothing can wrap".into(),
        ));
    };
    let wrap = Wrap::new(w, m.formula.clone(), &code, m.covered);
    let h = wrap.h;
    match p.calls {
        Some(c) if c.max > h => Some(wrap.violated(
            format!(
                "`calls <= {}` promises more calls than the overflow horizon: {} wraps int32 after {h} calls",
                c.max, w.cell
            ),
            c.span,
            format!("promises {} calls", c.max),
            format!("declare at most `calls <= {h};`, or make the per-call credit smaller"),
        )),
        Some(c) => Some(fits(
            if m.covered.is_some_and(|r| r.hi < exec::declared_world(p).1) {
                Status::Checked
            } else {
                Status::Proved
            },
            format!("{}; declared calls <= {} fits", wrap.formula, c.max),
        )),
        None => match m.ge_wait {
            Some(sp) => Some(wrap.violated(
                format!(
                    "no `calls <= N;` declared, yet a `>=` wait reads a monotonic counter that wraps int32 after {h} calls (then the wait blocks for ever or passes early)"
                ),
                sp,
                "compares a wrapping counter with `>=`".to_string(),
                format!("declare how many calls the protocol makes: `calls <= {h};` (or fewer)"),
            )),
            None => Some(fits(
                Status::Proved,
                format!("{}; no `>=` wait reads a monotonic cell", wrap.formula),
            )),
        },
    }
}

/// The growth per call: maximised with P symbolic (`sym`), else over the enumerated
/// configurations; the `unknown` result when the enumeration cannot measure it.
fn measure(
    p: &Protocol,
    sym: Option<&crate::engine::param::horizon::Horizon>,
    code: &str,
) -> Result<Measured, Box<ObligationResult>> {
    match sym {
        Some(h) => Ok(symbolic_growth(p, h)),
        None => match enumerated_growth(p) {
            Ok((w, ge, plan)) => Ok(Measured {
                worst: w,
                ge_wait: ge,
                covered: exec::enumerated_world(p).map(|(lo, hi)| WorldRange { lo, hi }),
                scope: plan,
                formula: None,
            }),
            Err((why, span)) => {
                let mut f = Finding::new(why.clone());
                f.primary = span;
                Err(Box::new(ObligationResult {
                    id: ID.into(),
                    code: code.to_string(),
                    status: Status::Unknown,
                    scope: None,
                    world: None,
                    reason: Some(why),
                    claim: "undecided: the calls before a monotonic cell wraps int32".into(),
                    findings: vec![f],
                    evidence: Evidence::none(),
                }))
            }
        },
    }
}

/// The largest growth per call of a monotonic cell, as measured.
struct Measured {
    worst: Option<CellGrowth>,
    /// A `>=` wait on a monotonic cell.
    ge_wait: Option<Span>,
    covered: Option<WorldRange>,
    scope: Scope,
    /// The horizon as a formula of P (the symbolic maximisation).
    formula: Option<String>,
}

/// The growth the maximisation with P symbolic found, over the declared domain.
fn symbolic_growth(p: &Protocol, h: &crate::engine::param::horizon::Horizon) -> Measured {
    let (lo, hi) = exec::declared_world(p);
    let domain = crate::engine::param::world_phrase(lo, hi);
    let at: Vec<String> = h.at.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let formula = format!(
        "horizon(P) = floor((2^31 - 1) / N(P)), N(P) <= {} credit(s) per call into a cell of `{}`; over {domain}: max N = {} (at {}), horizon = {} calls",
        h.per_call,
        h.signal,
        h.max,
        at.join(" "),
        CELL_MAX / h.max.max(1)
    );
    Measured {
        worst: Some(CellGrowth {
            cell: format!("a cell of `{}`", h.signal),
            per_call: h.max,
            span: h.span,
            config: h.at.clone(),
        }),
        ge_wait: h.ge_wait,
        covered: Some(WorldRange { lo, hi }),
        scope: Scope::of(Covered::Symbolic {
            world: WorldRange { lo, hi },
            how: Symbolic::Maximised { queries: h.z3 },
        }),
        formula: Some(formula),
    }
}

/// The worst cell's wrap: its horizon `h` in calls and the formula that states it.
struct Wrap<'a> {
    w: &'a CellGrowth,
    h: i64,
    formula: String,
    code: &'a str,
    covered: Option<WorldRange>,
}

impl<'a> Wrap<'a> {
    fn new(
        w: &'a CellGrowth,
        formula: Option<String>,
        code: &'a str,
        covered: Option<WorldRange>,
    ) -> Self {
        let h = CELL_MAX / w.per_call;
        let at: Vec<String> = w.config.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let formula = formula.unwrap_or_else(|| {
            format!(
                "horizon = floor((2^31 - 1) / N) = {h} calls, N = {} credit(s) per call into {} (at {})",
                w.per_call,
                w.cell,
                at.join(" ")
            )
        });
        Wrap {
            w,
            h,
            formula,
            code,
            covered,
        }
    }

    fn violated(
        &self,
        msg: String,
        primary: Span,
        label: String,
        help: String,
    ) -> ObligationResult {
        let w = self.w;
        let mut f = Finding::new(msg);
        f.primary = Some(primary);
        f.primary_label = label;
        if primary != w.span {
            f.labels.push((
                w.span,
                format!("{} grows by {} per call", w.cell, w.per_call),
            ));
        }
        f.formula = Some(self.formula.clone());
        f.value = Some(self.h);
        f.help = Some(help);
        f.params = w
            .config
            .iter()
            .map(|(n, v)| crate::report::ParamValue {
                name: n.clone(),
                value: *v,
            })
            .collect();
        ObligationResult {
            id: ID.into(),
            code: self.code.to_string(),
            status: Status::Violated,
            scope: None,
            world: self.covered,
            reason: None,
            claim: format!("violated: {}", self.formula),
            evidence: Evidence::of_findings(std::slice::from_ref(&f)),
            findings: vec![f],
        }
    }
}

/// The worst per-call credit over the enumerated configurations, the first `>=` wait on a
/// monotonic cell, and the plan's description.
#[allow(clippy::type_complexity)]
fn enumerated_growth(
    p: &Protocol,
) -> Result<(Option<CellGrowth>, Option<Span>, Scope), (String, Option<Span>)> {
    let mut worst: Option<CellGrowth> = None;
    let mut ge_wait: Option<Span> = None;
    let mut failed: Option<(String, Option<Span>)> = None;
    let sweep = sweep::each_run(p, None, &mut |visit| {
        let run = match visit {
            Visit::Run(_, r) => r,
            Visit::Restart => {
                (worst, ge_wait) = (None, None);
                return true;
            }
        };
        if let Err((r, sp)) = reduce(p, run) {
            failed = Some((r, Some(sp)));
            return false;
        }
        for ev in &run.events {
            if ev.cell.is_some_and(|c| p.signals[c.signal].monotonic) {
                if let EvKind::Wait {
                    cmp: CmpOp::Ge | CmpOp::Gt,
                    ..
                } = ev.kind
                {
                    ge_wait.get_or_insert(ev.span);
                }
            }
        }
        let cells = CellIndex::of(run);
        let monotonic = cells.iter().filter(|(c, _)| p.signals[c.signal].monotonic);
        for (cell, evs) in monotonic {
            let span = run.events[evs[0]].span;
            let n = match per_call_credit(run, evs) {
                Ok(n) => n,
                Err((r, sp)) => {
                    failed = Some((r, Some(sp)));
                    return false;
                }
            };
            let Some(n) = n.as_const().or_else(|| run.syms.ub(&n)) else {
                failed = Some((
                    format!(
                        "{}: the per-call credit has no upper bound",
                        cell_name(p, cell)
                    ),
                    Some(span),
                ));
                return false;
            };
            if worst.as_ref().is_none_or(|w| n > w.per_call) {
                worst = Some(CellGrowth {
                    cell: cell_name(p, cell),
                    per_call: n,
                    span,
                    config: run
                        .config
                        .iter()
                        .map(|(v, x)| (p.var_name(*v).to_string(), *x))
                        .collect(),
                });
            }
        }
        true
    });
    if let Some(f) = sweep.failure {
        return Err((f.message(), f.span()));
    }
    if let Some(f) = failed {
        return Err(f);
    }
    Ok((
        worst,
        ge_wait,
        Scope::of(Covered::Enumeration(sweep.plan.coverage(p))),
    ))
}

/// A lagged wait (LANGUAGE.md §5.7.1): the one wait of a call on a monotonic cell whose
/// reduced threshold `a` (as `>= a`; `d = a - 1`) is a multiple of the cell's constant
/// per-call credit `N > 0` in every configuration (its constant and every coefficient are),
/// so when `a <= 0` it waits for every credit of call `c - k`, `k = 1 - a / N` — an earlier
/// call's round, whole: `wait done >= call - 1` throttling a double buffer. Its first `k`
/// calls pass at once by design. What such a wait orders (a later call's write after the
/// earlier call's access) is `buffer-reuse`'s to prove, with the lag; the other symbolic
/// obligations see the reduced threshold `a <= 0` and let it order nothing.
fn lags_whole_calls(run: &mut Run, evs: &[usize], d: &Lin) -> bool {
    let Some(n) = per_call_credit(run, evs).ok().and_then(|n| n.as_const()) else {
        return false;
    };
    let Some(a) = d.add(&Lin::k(1)) else {
        return false;
    };
    n > 0 && a.c % n == 0 && a.t.iter().all(|(_, k)| k % n == 0)
}

/// `stale-credit` for the one wait of a call on a monotonic cell: its reduced threshold
/// `a` (the event's threshold after [`reduce`]) must need a credit of its own call (`a >=
/// 1`, `> a` with `a >= 0`). The cell holds every earlier call's credits when the call
/// starts, so a wait that needs none of its own passes on them (`>= call` where the
/// cell gets 1 per call). The finding, when it does not.
pub(crate) fn own_call(
    ctx: &mut Ctx,
    run: &mut Run,
    acc: &mut Acc,
    rep: &Rep,
    w: usize,
) -> Option<Finding> {
    let cell = &rep.cell;
    let ev = run.events[w].clone();
    let EvKind::Wait { cmp, thr } = &ev.kind else {
        return None;
    };
    let d = match cmp {
        CmpOp::Ge => thr.add(&Lin::k(-1))?,
        CmpOp::Gt => thr.clone(),
        _ => return None,
    };
    acc.items += 1;
    let a = match ctx.prove(run, acc, &ev.guard, &[], Prop::Ge0(d.clone())) {
        Answer::Refuted(a) => a,
        Answer::Unknown(kind, why) => {
            acc.undecided(
                kind,
                format!("{}: {why}", cell_name(ctx.p, cell)),
                Some(ev.span),
            );
            return None;
        }
        Answer::Valid => return None,
    };
    if lags_whole_calls(run, &rep.ev.all, &d) {
        acc.literal += 1;
        return None;
    }
    let name = cell_name(ctx.p, cell);
    let mut f = Finding::new(format!(
        "{name} is monotonic and this wait needs no credit of its own call: the cell still holds every earlier call's credits, so it passes on them"
    ));
    f.params = ctx.params(run, &a);
    f.cell = Some(name);
    f.value = run.syms.eval(thr, &a);
    f.primary = Some(ev.span);
    f.primary_label = "passes on an earlier call's credits".into();
    f.contributions = ctx.contributions(run, &[w], &a);
    f.help = Some("the threshold must exceed the earlier calls' credits: `a + N * call` with `a >= 1` (N the cell's credits per call)".into());
    Some(f)
}
