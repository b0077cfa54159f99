//! The bounded obligations (`deadlock`, `stale-pass`, `data-race`, `semantics`,
//! `lifetimes`): the simulator's exhaustive bounded model checker
//! (`collc_sim::bounded::check`) run over small parameter assignments, with every
//! window and value signal living as the protocol declares it (`per call` or
//! `reused`), and mapped into the report with status `checked` (the exact bounds
//! explored completely), `violated` (a counterexample with its `collc sim` replay)
//! or `unknown` (nothing explored completely within the budget). The same
//! obligations also run in relaxed memory and, for a protocol with a monotonic signal,
//! in the simulator's wrap-around mode (`bounded/wrap.rs`). See `verifier/README.md`.

use crate::report::evidence::Evidence;
use crate::report::obligation::{self, Obligation};
use crate::report::scope::{self, bounds_text, calls_text, group_text, thousands, Covered, Scope};
use crate::report::{Finding, ObligationResult, ParamValue, Status, Trace};
use collc_sim::bounded::{self as sb, BoundedConfig, Bounds, Counterexample, GridShape};
use collc_sim::machine::WrapStart;
use collc_sim::report::{EvKind, Event};
use collc_sim::{Budget, Memory};
use collc_spec::ir::{Protocol, VarKind};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

mod wrap;

/// The bounded obligations, in report order (`collc_sim::bounded::OBLIGATIONS`).
pub const OBLIGATIONS: [&str; 5] = obligation::ids(Obligation::BOUNDED);

/// Trace events a finding shows: the first ones, then the last ones up to the failing event.
const TRACE_HEAD: usize = 6;
/// See [`TRACE_HEAD`].
const TRACE_TAIL: usize = 14;

/// The wall-clock ceiling of an untimed floor attempt ([`BoundedOptions::untimed_floor`]):
/// far beyond what its state limit takes, so only the states limit it.
const UNTIMED: Duration = Duration::from_secs(3600);

pub use crate::planning::bounded::{BoundedOptions, Probe};

/// The obligations as `skipped` (`--no-bounded`).
pub fn skipped() -> Vec<ObligationResult> {
    OBLIGATIONS
        .iter()
        .map(|id| ObligationResult {
            world: None,
            id: id.to_string(),
            code: format!("verify::{id}"),
            status: Status::Skipped,
            scope: None,
            reason: Some("--no-bounded".into()),
            claim: "not run (--no-bounded); this is not a pass".into(),
            findings: Vec::new(),
            evidence: Evidence::none(),
        })
        .collect()
}

/// The fallback levels: (tiles, calls), largest first (only the calls when no
/// parameter sizes a window).
fn levels(b: &Bounds, shape: GridShape) -> Vec<(i64, usize)> {
    let t = |x: i64| if shape.tiles { x } else { b.tiles.0 };
    let mut v = vec![(t(b.tiles.1), b.calls)];
    for l in [
        (t(b.tiles.1.min(2)), b.calls.min(2)),
        (t(b.tiles.1.min(1)), b.calls.min(2)),
    ] {
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v
}

/// What one exploration explored.
#[derive(Default)]
struct Explored {
    /// What the bounds range over (how the scope is worded).
    shape: Option<GridShape>,
    /// P -> (tiles, calls, states) explored completely.
    done: BTreeMap<i64, (i64, usize, u64)>,
    /// Attempts that did not complete: (P, tiles, calls, states, why).
    failed: Vec<(i64, i64, usize, u64, String)>,
    /// P values never attempted (time).
    untried: Vec<i64>,
    /// Smallest counterexample per obligation.
    cex: BTreeMap<String, Counterexample>,
    /// Assignments that could not be run.
    errors: Vec<String>,
    /// Targeted world sizes explored completely: P -> (tiles, calls, states).
    targeted: BTreeMap<i64, (i64, usize, u64)>,
    /// Targeted world sizes not explored completely (budget).
    targets_missed: Vec<i64>,
    /// Targeted world sizes not explored because a counterexample was found first (the
    /// verdict is decided; they make no obligation undecided).
    targets_skipped: Vec<i64>,
    /// Probes explored completely: (label, tiles, calls, states).
    probes: Vec<(String, i64, usize, u64)>,
    /// Probes not explored completely: (label, required).
    probes_missed: Vec<(String, bool)>,
    /// Where the wrap-around mode placed the calls (distinct placements), when it was on.
    wraps: Vec<WrapStart>,
}

/// How the simulator runs: the memory model, and whether in the wrap-around mode.
#[derive(Debug, Clone, Copy)]
struct Mode {
    memory: Memory,
    wrap: bool,
}

impl Mode {
    const SC: Mode = Mode {
        memory: Memory::Sc,
        wrap: false,
    };
    const RELAXED: Mode = Mode {
        memory: Memory::Relaxed,
        wrap: false,
    };
}

impl Explored {
    /// What it explored, as a scope's record ([`scope::Explored`]): the sizes explored
    /// completely grouped by bounds (`P=2..4, 1..3 tiles, 3 calls: 11,701 states,
    /// complete`), the sizes missed, the targeted sizes and probes.
    fn coverage(&self) -> scope::Explored {
        let mut complete: Vec<scope::Attempt> = Vec::new();
        for (p, (t, c, s)) in &self.done {
            match complete.last_mut() {
                Some(g) if g.tiles == *t && g.calls == *c => {
                    g.worlds.push(*p);
                    g.states += s;
                }
                _ => complete.push(scope::Attempt {
                    worlds: vec![*p],
                    tiles: *t,
                    calls: *c,
                    states: *s,
                }),
            }
        }
        let mut missing: Vec<i64> = self
            .failed
            .iter()
            .map(|f| f.0)
            .filter(|p| !self.done.contains_key(p))
            .chain(self.untried.iter().copied())
            .collect();
        missing.sort();
        missing.dedup();
        scope::Explored {
            shape: self.shape,
            complete,
            missing,
            targeted: self
                .targeted
                .iter()
                .map(|(p, (t, c, s))| scope::Attempt {
                    worlds: vec![*p],
                    tiles: *t,
                    calls: *c,
                    states: *s,
                })
                .collect(),
            targets_missed: self.targets_missed.clone(),
            targets_skipped: self.targets_skipped.clone(),
            probes: self.probes.clone(),
            probes_missed: self.probes_missed.iter().map(|m| m.0.clone()).collect(),
        }
    }

    /// Its scope in `mode` ([`scope::Run`]).
    fn scope(&self, mode: scope::Mode) -> Scope {
        Scope::of(Covered::Run(scope::Run {
            mode,
            explored: self.coverage(),
        }))
    }

    /// Why the exploration is incomplete, if it is.
    fn incomplete_reason(&self) -> Option<String> {
        let missing: Vec<i64> = self
            .failed
            .iter()
            .map(|f| f.0)
            .filter(|p| !self.done.contains_key(p))
            .chain(self.untried.iter().copied())
            .collect();
        let probes_missed: Vec<&str> = self
            .probes_missed
            .iter()
            .filter(|m| m.1)
            .map(|m| m.0.as_str())
            .collect();
        if missing.is_empty()
            && self.errors.is_empty()
            && self.targets_missed.is_empty()
            && probes_missed.is_empty()
        {
            return None;
        }
        let mut why = Vec::new();
        if !self.targets_missed.is_empty() {
            why.push(format!(
                "targeted {} not explored completely",
                group_text(&self.targets_missed)
            ));
        }
        for label in probes_missed {
            why.push(format!("targeted {label} not explored completely"));
        }
        if let Some((p, t, c, s, w)) = self
            .failed
            .iter()
            .rev()
            .find(|f| !self.done.contains_key(&f.0))
        {
            why.push(format!(
                "budget exhausted after {} states at {} ({w})",
                thousands(*s),
                bounds_text(&format!("P={p}"), self.shape, *t, *c)
            ));
        } else if !self.untried.is_empty() {
            why.push(format!(
                "time budget spent before {}",
                group_text(&self.untried)
            ));
        }
        why.extend(self.errors.iter().cloned());
        let done: Vec<i64> = self.done.keys().copied().collect();
        why.push(format!(
            "explored completely: {}",
            if done.is_empty() {
                "nothing".to_string()
            } else {
                group_text(&done)
            }
        ));
        Some(why.join("; "))
    }

    /// Checked: something explored completely and the missing P values are only larger ones.
    fn checked(&self) -> bool {
        if !self.targets_missed.is_empty() || self.probes_missed.iter().any(|m| m.1) {
            return false;
        }
        let Some(first_missing) = self
            .failed
            .iter()
            .map(|f| f.0)
            .filter(|p| !self.done.contains_key(p))
            .chain(self.untried.iter().copied())
            .min()
        else {
            return !self.done.is_empty() && self.errors.is_empty();
        };
        self.errors.is_empty()
            && !self.done.is_empty()
            && self.done.keys().all(|p| *p < first_missing)
    }
}

/// Explores `p` at the bounds of `opts` (P ascending, falling back to smaller
/// bounds when an attempt does not complete; world sizes above `opts.full_ranks`
/// start at the smallest bounds), then each of `opts.target_worlds` at the smallest
/// bounds, in `mode`, until `deadline`; the untimed floors (`opts.untimed_floor`,
/// `opts.untimed_ranks`) run past it, limited by states.
fn explore(
    p: &collc_spec::Validated,
    opts: &BoundedOptions,
    mode: Mode,
    deadline: Instant,
) -> Explored {
    let world = p.vars[p.world].name.clone();
    let mut ps: Vec<i64> = sb::param_grid(p, &opts.bounds, &BTreeMap::new())
        .iter()
        .filter_map(|g| g.get(&world).copied())
        .collect();
    ps.dedup();
    let shape = sb::grid_shape(p);
    let mut ex = Explored {
        shape: Some(shape),
        ..Explored::default()
    };
    if ps.is_empty() {
        ex.errors.push(format!(
            "no parameter assignment within the bounds ({}) satisfies the protocol's domains and requirements",
            opts.bounds.describe()
        ));
        return ex;
    }
    let lv = levels(&opts.bounds, shape);
    let smallest = lv.len() - 1;
    let mut start_level = 0;
    for (i, &pv) in ps.iter().enumerate() {
        let mut li = if pv > opts.full_ranks {
            smallest
        } else {
            start_level
        };
        while li < lv.len() {
            // Once a counterexample is found the file is violated whatever else completes:
            // the floors of `untimed_ranks` then get only the time budget like the rest.
            let untimed =
                (opts.untimed_floor && i == 0) || (pv <= opts.untimed_ranks && ex.cex.is_empty());
            if untimed && li < smallest && deadline <= Instant::now() && !opts.stopped() {
                // No time left for the larger bounds: the untimed floor still runs.
                li = smallest;
            }
            let floor = untimed && li == smallest;
            if (!floor && deadline <= Instant::now()) || opts.stopped() {
                ex.untried
                    .extend(ps[i..].iter().filter(|x| !ex.done.contains_key(x)));
                return ex;
            }
            let limit = if floor {
                Limit::States
            } else {
                Limit::Time(deadline)
            };
            let fixed = BTreeMap::from([(world.clone(), pv)]);
            let tiles = (opts.bounds.tiles.0, lv[li].0);
            match attempt(p, opts, mode, &fixed, tiles, lv[li].1, limit, &mut ex) {
                Ok(states) => {
                    ex.done.insert(pv, (lv[li].0, lv[li].1, states));
                    break;
                }
                Err(None) => break,
                Err(Some((states, why))) => {
                    ex.failed.push((pv, lv[li].0, lv[li].1, states, why));
                    li += 1;
                }
            }
        }
        start_level = li.min(smallest);
        if li >= lv.len() {
            // Even the smallest bounds do not complete at this P: larger P will not either.
            ex.untried.extend(ps[i + 1..].iter().copied());
            break;
        }
    }
    explore_targets(p, opts, mode, deadline, (&ps, &lv), &mut ex);
    for pr in &opts.probes {
        explore_probe(p, opts, mode, deadline, &ps, pr, &mut ex);
    }
    ex
}

/// Explores each of `opts.target_worlds` (in the domain, off the ladder `ps`) at the
/// smallest of the levels `lv` into `ex`, within `deadline`; after a counterexample they
/// are skipped.
fn explore_targets(
    p: &collc_spec::Validated,
    opts: &BoundedOptions,
    mode: Mode,
    deadline: Instant,
    (ps, lv): (&[i64], &[(i64, usize)]),
    ex: &mut Explored,
) {
    let world = p.vars[p.world].name.clone();
    let smallest = lv.len() - 1;
    let in_domain = |t: &i64| match p.vars[p.world].kind {
        VarKind::World { lo, hi } => (lo..=hi).contains(t),
        _ => false,
    };
    let mut targets: Vec<i64> = opts
        .target_worlds
        .iter()
        .copied()
        .filter(|t| in_domain(t) && !ps.contains(t))
        .collect();
    targets.sort_unstable();
    targets.dedup();
    for pv in targets {
        if !ex.cex.is_empty() {
            ex.targets_skipped.push(pv);
            continue;
        }
        if deadline <= Instant::now() || opts.stopped() {
            ex.targets_missed.push(pv);
            continue;
        }
        let fixed = BTreeMap::from([(world.clone(), pv)]);
        let tiles = (opts.bounds.tiles.0, lv[smallest].0);
        match attempt(
            p,
            opts,
            mode,
            &fixed,
            tiles,
            lv[smallest].1,
            Limit::Time(deadline),
            ex,
        ) {
            Ok(states) => {
                ex.targeted
                    .insert(pv, (lv[smallest].0, lv[smallest].1, states));
            }
            Err(_) => ex.targets_missed.push(pv),
        }
    }
}

/// Explores one probe (see [`BoundedOptions::probes`]) into `ex`: skipped when the ladder
/// covers it or no assignment admits its values.
fn explore_probe(
    p: &collc_spec::Validated,
    opts: &BoundedOptions,
    mode: Mode,
    deadline: Instant,
    ladder: &[i64],
    pr: &Probe,
    ex: &mut Explored,
) {
    let world = p.vars[p.world].name.clone();
    let calls = opts.bounds.calls.min(2);
    let bounds = Bounds {
        ranks: opts.bounds.ranks,
        tiles: (pr.tiles, pr.tiles),
        calls,
        small_ints: opts.bounds.small_ints,
    };
    if covered(p, opts, ladder, pr) {
        return;
    }
    let Some(fixed) = admitted(p, &bounds, &pr.fixed) else {
        return;
    };
    let label = probe_label(&world, &fixed);
    let timed = pr.required || !ex.cex.is_empty();
    if opts.stopped() || (timed && deadline <= Instant::now()) {
        ex.probes_missed.push((label, pr.required));
        return;
    }
    let limit = if timed {
        Limit::Time(deadline)
    } else {
        Limit::States
    };
    match attempt(
        p,
        opts,
        mode,
        &fixed,
        (pr.tiles, pr.tiles),
        calls,
        limit,
        ex,
    ) {
        Ok(states) => ex.probes.push((label, pr.tiles, calls, states)),
        Err(_) => ex.probes_missed.push((label, pr.required)),
    }
}

/// True when the ladder already runs every assignment of `pr`: its world size is on the
/// ladder, it has 1 tile, and every value it fixes is one the grid gives that parameter.
fn covered(p: &Protocol, opts: &BoundedOptions, ladder: &[i64], pr: &Probe) -> bool {
    let world = &p.vars[p.world].name;
    if pr.tiles > opts.bounds.tiles.0 || pr.fixed.get(world).is_none_or(|w| !ladder.contains(w)) {
        return false;
    }
    let grid = sb::param_grid(p, &opts.bounds, &BTreeMap::new());
    pr.fixed
        .iter()
        .all(|(k, v)| grid.iter().any(|g| g.get(k) == Some(v)))
}

/// `fixed` when some assignment of the grid with those values satisfies every domain and
/// `require`; else `fixed` with one more integer parameter (of at most 64 values) set to
/// the smallest value that makes one satisfy them (`require stride >= C` with C = 5 runs
/// stride = 5); `None` when neither does.
fn admitted(
    p: &Protocol,
    bounds: &Bounds,
    fixed: &BTreeMap<String, i64>,
) -> Option<BTreeMap<String, i64>> {
    if !sb::param_grid(p, bounds, fixed).is_empty() {
        return Some(fixed.clone());
    }
    for v in crate::planning::probe::plain_params(p) {
        let var = &p.vars[v];
        let VarKind::Param {
            domain: Some((lo, hi)),
        } = var.kind
        else {
            continue;
        };
        if fixed.contains_key(&var.name) || hi - lo >= 64 {
            continue;
        }
        for x in lo..=hi {
            let mut f = fixed.clone();
            f.insert(var.name.clone(), x);
            if !sb::param_grid(p, bounds, &f).is_empty() {
                return Some(f);
            }
        }
    }
    None
}

/// `P=2, C=5`: the world size first, then the other fixed values by name.
fn probe_label(world: &str, fixed: &BTreeMap<String, i64>) -> String {
    let mut parts: Vec<String> = fixed
        .get(world)
        .map(|w| format!("{world}={w}"))
        .into_iter()
        .collect();
    parts.extend(
        fixed
            .iter()
            .filter(|(k, _)| k.as_str() != world)
            .map(|(k, v)| format!("{k}={v}")),
    );
    parts.join(", ")
}

/// What limits one attempt besides its states per assignment.
#[derive(Clone, Copy)]
enum Limit {
    /// A third of the budget, and the deadline.
    Time(Instant),
    /// Only the states (and the stop flag): the floor of [`BoundedOptions::untimed_floor`]
    /// and [`BoundedOptions::untimed_ranks`].
    States,
}

/// One attempt: every assignment with the values `fixed` (the world size among them) and
/// `tiles` (a range per element count) at `calls`, within `limit`. The states explored when it completed; else the states and why not, or
/// `None` when nothing could be run (the errors are in `ex`). Counterexamples go into `ex` (per obligation the one of the smallest P, the first of equals).
#[allow(clippy::too_many_arguments)]
fn attempt(
    p: &collc_spec::Validated,
    opts: &BoundedOptions,
    mode: Mode,
    fixed: &BTreeMap<String, i64>,
    tiles: (i64, i64),
    calls: usize,
    limit: Limit,
    ex: &mut Explored,
) -> Result<u64, Option<(u64, String)>> {
    let pv = fixed.get(&p.vars[p.world].name).copied().unwrap_or(0);
    let left = match limit {
        Limit::Time(deadline) => deadline
            .saturating_duration_since(Instant::now())
            .min(opts.budget / 3),
        Limit::States => UNTIMED,
    };
    let cfg = BoundedConfig {
        bounds: Bounds {
            ranks: (pv, pv),
            tiles,
            calls,
            small_ints: opts.bounds.small_ints,
        },
        memory: mode.memory,
        per_config: Budget {
            max_states: opts.max_states,
            max_time: left,
            ..Budget::default()
        },
        total_time: left,
        fixed: fixed.clone(),
        sticky_poll: false,
        wrap: mode.wrap,
        stop: opts.stop.clone(),
    };
    let r = sb::check(p, &cfg);
    for w in r.configs.iter().filter_map(|c| c.wrap.as_ref()) {
        if !ex.wraps.contains(w) {
            ex.wraps.push(w.clone());
        }
    }
    // The smallest world size's counterexample per obligation: the ladder runs P
    // ascending, but a targeted size (time-limited) can come before a probe (states-
    // limited) at a smaller one.
    let world = &p.vars[p.world].name;
    let size = |c: &Counterexample| c.params.get(world).copied().unwrap_or(i64::MAX);
    for o in r.obligations {
        if let Some(c) = o.counterexample {
            match ex.cex.entry(o.name) {
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(c);
                }
                std::collections::btree_map::Entry::Occupied(mut e) => {
                    if size(&c) < size(e.get()) {
                        e.insert(c);
                    }
                }
            }
        }
    }
    let states: u64 = r.configs.iter().map(|c| c.states).sum();
    let complete = r.errors.is_empty()
        && !r.configs.is_empty()
        && r.configs.iter().all(|c| c.complete)
        && r.configs.len() == sb::param_grid(p, &cfg.bounds, &cfg.fixed).len();
    if complete {
        return Ok(states);
    }
    if !r.errors.is_empty() && r.configs.is_empty() {
        ex.errors.extend(r.errors);
        return Err(None);
    }
    let why = r
        .configs
        .iter()
        .find_map(|c| c.stopped.clone())
        .unwrap_or_else(|| "time budget".into());
    Err(Some((states, why)))
}

/// A counterexample as a finding: the message with its replay, the label on the
/// statement the simulator blamed (the racing access, the statement that wrote a
/// wrong output, the blocked wait), the simulator's help, and the trace.
fn finding(p: &Protocol, c: &Counterexample, file: &str) -> Finding {
    let world = &p.vars[p.world].name;
    let mut params: Vec<ParamValue> = c
        .params
        .iter()
        .map(|(k, v)| ParamValue {
            name: k.clone(),
            value: *v,
        })
        .collect();
    params.sort_by_key(|x| x.name != *world);
    let replay = format!("collc sim {file} {}", c.replay);
    let mut f = Finding::new(format!("{} (replay: {replay})", c.message));
    f.params = params;
    f.primary = c.span.or_else(|| {
        // No statement of its own: the marked trace event, else the last data movement.
        let marked = c.trace.iter().rev().find(|e| e.mark.is_some());
        marked
            .and_then(|e| e.span)
            .or_else(|| {
                c.trace
                    .iter()
                    .rev()
                    .find(|e| matches!(e.kind, EvKind::Data))
                    .and_then(|e| e.span)
            })
            .or_else(|| c.trace.iter().rev().find_map(|e| e.span))
    });
    f.primary_label = format!("{}: {}", c.code, c.message);
    f.help.clone_from(&c.help);
    f.notes.push(format!("replay: {replay}"));
    f.replay = Some(replay);
    f.notes.extend(c.notes.iter().cloned());
    f.trace = Some(Trace {
        title: format!(
            "trace ({}; {} scheduler step{} over {}, shortest found)",
            collc_sim::report::params_text(&c.params),
            c.steps,
            if c.steps == 1 { "" } else { "s" },
            calls_text(c.calls)
        ),
        ..elide(&c.trace)
    });
    f
}

/// The events a report shows: all of a short trace; of a long one the first
/// [`TRACE_HEAD`] and the last [`TRACE_TAIL`] (which end at the failing event).
fn elide(trace: &[Event]) -> Trace {
    let mut t = Trace::default();
    if trace.len() <= TRACE_HEAD + TRACE_TAIL + 1 {
        t.events = trace.to_vec();
    } else {
        t.events = trace[..TRACE_HEAD].to_vec();
        t.events
            .extend_from_slice(&trace[trace.len() - TRACE_TAIL..]);
        t.elided = trace.len() - TRACE_HEAD - TRACE_TAIL;
        t.elided_at = TRACE_HEAD;
    }
    t
}

/// Runs the bounded obligations on `p` within `opts.budget`, every window and value
/// signal living as declared: sequentially consistent, then relaxed memory, then (a
/// protocol with a monotonic signal) the wrap-around mode (`wrap.rs`). The five
/// obligations of [`OBLIGATIONS`], then, when the wrap-around mode failed past the
/// overflow horizon, an `overflow-horizon` result with those findings ([`add`] folds
/// it into the symbolic one).
pub fn check(p: &collc_spec::Validated, opts: &BoundedOptions) -> Vec<ObligationResult> {
    let deadline = Instant::now() + opts.budget;
    let sc = explore(p, opts, Mode::SC, deadline);
    let mut out: Vec<ObligationResult> = OBLIGATIONS
        .iter()
        .map(|id| obligation(p, opts, &sc, id))
        .collect();
    // The same obligations in the relaxed memory model, at the relaxed bounds.
    let ropts = opts.relaxed();
    let relaxed = explore(p, &ropts, Mode::RELAXED, Instant::now() + ropts.budget);
    for r in out.iter_mut() {
        if RELAXED.contains(&r.id.as_str()) {
            with_relaxed(p, r, &relaxed, &opts.file);
        }
    }
    if let Some(wx) = wrap::explore_wrapped(p, opts) {
        wrap::fold(p, &mut out, &wx, &opts.file);
    }
    // A checked result claims what its runs covered: its scope, set once every run is in.
    for r in out.iter_mut().filter(|r| r.status == Status::Checked) {
        r.claim = r.scope_text().unwrap_or_default();
    }
    out
}

/// One obligation's result from what was explored.
fn obligation(p: &Protocol, opts: &BoundedOptions, ex: &Explored, id: &str) -> ObligationResult {
    let mk = |status,
              scope: Option<Scope>,
              reason: Option<String>,
              claim: String,
              findings: Vec<Finding>| {
        ObligationResult {
            id: id.to_string(),
            code: format!("verify::{id}"),
            status,
            scope,
            // Sampled instances, not every world size of a range.
            world: None,
            reason,
            evidence: Evidence::of_bounded(status, &findings),
            claim,
            findings,
        }
    };
    if let Some(c) = ex.cex.get(id) {
        return mk(
            Status::Violated,
            Some(ex.scope(scope::Mode::Sc)),
            None,
            format!("counterexample at {}", sb_params(c)),
            vec![finding(p, c, &opts.file)],
        );
    }
    if ex.checked() {
        // Its claim is its scope once every run is in (`check`).
        mk(
            Status::Checked,
            Some(ex.scope(scope::Mode::Sc)),
            None,
            String::new(),
            Vec::new(),
        )
    } else {
        mk(
            Status::Unknown,
            Some(ex.scope(scope::Mode::Sc)),
            ex.incomplete_reason(),
            "nothing found, exploration incomplete".into(),
            Vec::new(),
        )
    }
}

/// The obligations that also run in the relaxed memory model.
pub const RELAXED: [&str; 4] = obligation::ids([
    Obligation::Deadlock,
    Obligation::StalePass,
    Obligation::DataRace,
    Obligation::Semantics,
]);

/// Folds the relaxed run `rx` into the sc result `r` of the same obligation: violated if
/// either is; checked only if both are (the scope states both); else unknown.
fn with_relaxed(p: &Protocol, r: &mut ObligationResult, rx: &Explored, file: &str) {
    let sc_scope = r.scope.take().unwrap_or_default();
    r.scope = Some(sc_scope.then(rx.scope(scope::Mode::Relaxed)));
    if r.status == Status::Violated {
        return;
    }
    if let Some(c) = rx.cex.get(&r.id) {
        let racy = matches!(r.id.as_str(), "data-race" | "semantics");
        let f = violated_by_extra_run(p, r, c, file, "relaxed memory");
        if racy {
            f.help = Some(
                "a window write can become visible after the notify that publishes it; the `fence` obligation names the line where `fence;` goes".into(),
            );
        }
        return;
    }
    // The relaxed run extends the sc verdict: where it did not complete (relaxed mode has
    // no partial-order reduction), the scope says exactly what it covered and the status
    // rests on the sc run.
    cut_short(r, scope::Extra::Relaxed, rx);
}

/// Adds to a checked result's scope that the extra run `x` (of kind `run`) did not
/// complete, and why, when it did not: the status rests on the runs that did.
fn cut_short(r: &mut ObligationResult, run: scope::Extra, x: &Explored) {
    if r.status == Status::Checked && !x.checked() {
        let why = x.incomplete_reason().unwrap_or_default();
        let s = r.scope.take().unwrap_or_default();
        r.scope = Some(s.with(Covered::Incomplete { run, why }));
    }
}

/// The finding of counterexample `c` of an extra run (`run`: `relaxed memory`,
/// `wrap-around mode`), which the obligation's own runs did not show: its message
/// starts `{run} only: `.
fn extra_run_finding(p: &Protocol, c: &Counterexample, file: &str, run: &str) -> Finding {
    let mut f = finding(p, c, file);
    f.message = format!("{run} only: {}", f.message);
    f
}

/// Makes `r` violated by counterexample `c` of an extra run (`run`, as for
/// [`extra_run_finding`]): its one finding, returned for the caller to add help to.
fn violated_by_extra_run<'r>(
    p: &Protocol,
    r: &'r mut ObligationResult,
    c: &Counterexample,
    file: &str,
    run: &str,
) -> &'r mut Finding {
    r.status = Status::Violated;
    r.claim = format!("{run}: counterexample at {}", sb_params(c));
    r.reason = None;
    r.findings = vec![extra_run_finding(p, c, file, run)];
    r.evidence.add(&Evidence::of_findings(&r.findings));
    &mut r.findings[0]
}

/// Adds bounded results to a report: the bounded obligations appended, an
/// `overflow-horizon` result of the wrap-around mode folded into the symbolic one.
pub fn add(report: &mut crate::report::Report, results: Vec<ObligationResult>) {
    for r in results {
        match report.obligations.iter_mut().find(|o| o.id == r.id) {
            Some(o) if r.id == wrap::HORIZON => wrap::fold_horizon(o, r),
            Some(o) => *o = r,
            None => report.obligations.push(r),
        }
    }
}

fn sb_params(c: &Counterexample) -> String {
    collc_sim::report::params_text(&c.params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(text: &str) -> collc_spec::Validated {
        collc_spec::front(&crate::Ranges, text)
            .protocol
            .expect("the case validates")
    }

    const MESH: &str = "collective c: barrier() {
        ranks P in 1..=8;
        param C: int in 1..=8;
        param stride: int in 1..=8;
        require stride >= C;
        signal s[P][stride];
        body { }
        epilogue { }
    }";

    #[test]
    fn a_probe_past_a_require_takes_the_smallest_value_that_admits_it() {
        let p = protocol(MESH);
        let b = BoundedOptions::default().bounds;
        let fixed = BTreeMap::from([("P".to_string(), 2), ("C".to_string(), 5)]);
        let got = admitted(&p, &b, &fixed).expect("stride = 5 admits C = 5");
        assert_eq!(got.get("stride"), Some(&5));
        assert_eq!(got.get("C"), Some(&5));
        // a value the grid already admits is kept as it is
        let small = BTreeMap::from([("P".to_string(), 2), ("C".to_string(), 1)]);
        assert_eq!(admitted(&p, &b, &small), Some(small));
        // no value of the other parameters admits one outside the domain
        let out = BTreeMap::from([("P".to_string(), 2), ("C".to_string(), 9)]);
        assert_eq!(admitted(&p, &b, &out), None);
    }

    #[test]
    fn a_probe_on_the_grid_is_covered_and_one_past_it_is_not() {
        let p = protocol(MESH);
        let opts = BoundedOptions::default();
        let probe = |c: i64, tiles: i64| Probe {
            fixed: BTreeMap::from([("P".to_string(), 3), ("C".to_string(), c)]),
            tiles,
            required: false,
        };
        let ladder = [2, 3, 4];
        assert!(covered(&p, &opts, &ladder, &probe(2, 1)));
        assert!(
            !covered(&p, &opts, &ladder, &probe(3, 1)),
            "C = 3 is past the grid"
        );
        assert!(!covered(&p, &opts, &ladder, &probe(2, 4)), "4 tiles");
        assert!(
            !covered(&p, &opts, &[2], &probe(2, 1)),
            "P = 3 is off the ladder"
        );
    }

    #[test]
    fn a_probe_is_labelled_world_first() {
        let f = BTreeMap::from([
            ("C".to_string(), 5),
            ("P".to_string(), 2),
            ("a".to_string(), 1),
        ]);
        assert_eq!(probe_label("P", &f), "P=2, C=5, a=1");
        let shape = Some(GridShape {
            tiles: true,
            roots: true,
        });
        assert_eq!(
            scope::probe_bounds_text("P=2", shape, 4, 2),
            "P=2, 4 tiles, 2 calls, every root"
        );
    }
}
