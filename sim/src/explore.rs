//! Schedulers: deterministic round-robin, seeded random runs, and exhaustive
//! breadth-first search with state hashing (so the first trace found for each
//! violation is a shortest one), all under a budget.

use crate::code::Code;
pub use crate::fingerprint::fingerprint;
use crate::fingerprint::mix;
use crate::machine::{Action, Limits, Machine, Memory, Outcome, State, StepMemo, WrapStart};
use crate::por::Reduction;
use crate::report::{EvKind, Finding, SimReport, Stats, Verdict};
use crate::visited::Visited;
use collc_spec::ir::Protocol;
use collc_spec::Validated;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A cooperative stop request, shared with another thread: once it is set, a running
/// search stops within [`STOP_POLL`] states (exhaustive) or steps (runs) and reports
/// itself incomplete, as a spent budget does.
pub type StopFlag = Arc<AtomicBool>;

/// How often (states expanded, or steps of a run) a search looks at its stop flag and
/// its clock.
pub const STOP_POLL: u64 = 256;

/// How schedules are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// One run; at each step the next process after the last one that moved.
    RoundRobin,
    /// `runs` runs; run i picks uniformly among enabled actions with seed `seed + i`.
    Random {
        /// First seed.
        seed: u64,
        /// Number of runs.
        runs: u64,
    },
    /// Every schedule, breadth-first, with state hashing.
    Exhaustive,
}

impl Schedule {
    /// The name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Schedule::RoundRobin => "round-robin",
            Schedule::Random { .. } => "random",
            Schedule::Exhaustive => "exhaustive",
        }
    }
}

/// Limits on one simulation.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Budget {
    /// Distinct states (exhaustive) before stopping.
    pub max_states: u64,
    /// Scheduler steps of one run (round-robin, random); also the most iterations one
    /// nest of loops may run (refused before it starts).
    pub max_steps: u64,
    /// Wall time.
    pub max_time: Duration,
    /// Iterations of any one loop.
    pub max_trip: i64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_states: 2_000_000,
            max_steps: 10_000_000,
            max_time: Duration::from_secs(120),
            max_trip: 1 << 20,
        }
    }
}

/// A simulation configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SimConfig {
    /// Back-to-back calls through one signal buffer.
    pub calls: usize,
    /// Memory model.
    pub memory: Memory,
    /// Scheduler.
    pub schedule: Schedule,
    /// Budget.
    pub budget: Budget,
    /// Partial-order reduction (sound; off only to cross-check it).
    pub reduce: bool,
    /// Sticky polling (relaxed only): a blocked wait may cache its failing value and keep
    /// re-reading it (see the crate README, "Memory modes").
    #[serde(default)]
    pub sticky_poll: bool,
    /// Stops the search when set (see [`StopFlag`]); none: only the budget stops it.
    #[serde(skip)]
    pub stop: Option<StopFlag>,
    /// Wrap-around mode: the calls are the last the protocol may run before a monotonic
    /// cell leaves int32 (or the ones around the call that carries it past `INT32_MAX`),
    /// with every cell at its value then and int32 arithmetic (`sim/README.md`).
    #[serde(default)]
    pub wrap: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            calls: 3,
            memory: Memory::Sc,
            schedule: Schedule::Exhaustive,
            budget: Budget::default(),
            reduce: true,
            sticky_poll: false,
            stop: None,
            wrap: false,
        }
    }
}

/// Why a simulation could not start.
#[derive(Debug, Clone)]
pub enum SimError {
    /// The parameters are not acceptable (unknown, missing, outside the domain, a `require` fails).
    Params(String),
    /// The protocol cannot be instantiated with these parameters.
    Instantiate(String),
    /// A run that should complete did not (a fault, or a wait that never passes).
    Incomplete(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Params(m) | SimError::Instantiate(m) | SimError::Incomplete(m) => {
                f.write_str(m)
            }
        }
    }
}

/// The machine for a compiled protocol under a configuration, and where the wrap-around
/// mode placed its calls.
fn machine<'a>(
    p: &'a Protocol,
    code: Code,
    cfg: &SimConfig,
) -> Result<(Machine<'a>, Option<WrapStart>), SimError> {
    let mut m = Machine::new(
        p,
        code,
        cfg.calls,
        cfg.memory,
        Limits {
            max_trip: cfg.budget.max_trip,
            max_nest: cfg.budget.max_steps,
        },
    );
    m.sticky_poll = cfg.sticky_poll;
    let wrap = if cfg.wrap {
        Some(m.start_wrapped().map_err(SimError::Instantiate)?)
    } else {
        None
    };
    Ok((m, wrap))
}

/// Simulates a protocol (validated by the front end) for one parameter assignment.
pub fn simulate(
    p: &Validated,
    params: &BTreeMap<String, i64>,
    cfg: &SimConfig,
) -> Result<SimReport, SimError> {
    simulate_inner(p, params, cfg, false).map(|(r, _)| r)
}

fn simulate_inner(
    p: &Protocol,
    params: &BTreeMap<String, i64>,
    cfg: &SimConfig,
    collect_terminals: bool,
) -> Result<(SimReport, Option<BTreeSet<u128>>), SimError> {
    let b = collc_spec::eval::bind(p, params).map_err(|e| SimError::Params(e.to_string()))?;
    if cfg.calls == 0 || cfg.calls > 1000 {
        return Err(SimError::Params(format!(
            "--calls {} is outside 1..=1000",
            cfg.calls
        )));
    }
    let code = Code::compile(p, &b).map_err(|e| SimError::Instantiate(e.0))?;
    let (m, wrap) = machine(p, code, cfg)?;
    let mut full = BTreeMap::new();
    for v in p.inputs() {
        if let Some(x) = b.env.get(v) {
            full.insert(p.vars[v].name.clone(), x);
        }
    }
    let start = Instant::now();
    let por = (cfg.reduce && cfg.memory == Memory::Sc && cfg.schedule == Schedule::Exhaustive)
        .then(|| Reduction::new(&m, cfg.budget.max_steps, start + cfg.budget.max_time))
        .flatten();
    let mut ex = Explorer {
        m: &m,
        params: full.clone(),
        found: BTreeMap::new(),
        stats: Stats::default(),
        start,
        budget: cfg.budget,
        por,
        terminals: collect_terminals.then(BTreeSet::new),
        stop: cfg.stop.clone(),
    };
    match cfg.schedule {
        Schedule::Exhaustive => ex.bfs(),
        Schedule::RoundRobin => ex.runs(None, 1),
        Schedule::Random { seed, runs } => ex.runs(Some(seed), runs.max(1)),
    }
    ex.stats.elapsed_ms = ex.start.elapsed().as_millis() as u64;
    ex.stats.reduced = ex.por.is_some();
    let findings: Vec<Finding> = ex.found.into_values().collect();
    let verdict = if !findings.is_empty() {
        Verdict::Violated
    } else if ex.stats.stopped.is_some() {
        Verdict::Incomplete
    } else {
        Verdict::Pass
    };
    Ok((
        SimReport {
            protocol: p.name.clone(),
            params: full,
            calls: cfg.calls,
            schedule: cfg.schedule.name().to_string(),
            memory: cfg.memory,
            sticky_poll: m.sticky(),
            wrap,
            verdict,
            findings,
            stats: ex.stats,
        },
        ex.terminals,
    ))
}

struct Explorer<'m, 'a> {
    m: &'m Machine<'a>,
    params: BTreeMap<String, i64>,
    found: BTreeMap<String, Finding>,
    stats: Stats,
    start: Instant,
    budget: Budget,
    /// Stubborn-set reduction (exhaustive search in SC mode).
    por: Option<Reduction>,
    /// Fingerprints of the terminal states met (collected only when asked for).
    terminals: Option<BTreeSet<u128>>,
    /// The cooperative stop request.
    stop: Option<StopFlag>,
}

/// The breadth-first search's state. The states are numbered in the order they are
/// met, so the queue is the numbers from the next one to expand to `seen.len()`: a
/// state is expanded from its parts' numbers (`Visited::load`) into `cur`, and its
/// successors are made in two reused states, `cur` itself (the last successor) and
/// a scratch copy of it (the others), so the search allocates no state.
struct Frontier {
    /// Per state: (parent, action, depth).
    nodes: Vec<(u32, Action, u32)>,
    seen: Visited,
    cur: State,
    scratch: Option<State>,
    memo: StepMemo,
}

/// The actions leading from the initial state to state `i`.
fn path_to(nodes: &[(u32, Action, u32)], mut i: u32) -> Vec<Action> {
    let mut v = Vec::new();
    while i != 0 {
        v.push(nodes[i as usize].1);
        i = nodes[i as usize].0;
    }
    v.reverse();
    v
}
/// A tiny deterministic PRNG (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

impl Explorer<'_, '_> {
    fn out_of_time(&self) -> bool {
        self.start.elapsed() > self.budget.max_time
    }

    fn stop_requested(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Why the search must stop now (looked at every [`STOP_POLL`] states or steps).
    fn interrupted(&self, progress: impl FnOnce() -> String) -> Option<String> {
        if self.stop_requested() {
            Some(format!("stopped on request {}", progress()))
        } else if self.out_of_time() {
            Some(format!(
                "time budget of {:.0?} exhausted {}",
                self.budget.max_time,
                progress()
            ))
        } else {
            None
        }
    }

    /// Records the findings of a transition reached by `path` (if their code is new,
    /// or the trace is shorter than the one kept).
    fn record(&mut self, findings: Vec<Finding>, path: &dyn Fn() -> Vec<Action>, terminal: bool) {
        let mut actions: Option<Vec<Action>> = None;
        for f in findings {
            let actions = actions.get_or_insert_with(path);
            if self
                .found
                .get(&f.code)
                .is_some_and(|old| old.steps <= actions.len())
            {
                continue;
            }
            let mut f = self.trace(actions, terminal, &f.code).unwrap_or(f);
            f.params = self.params.clone();
            f.steps = actions.len();
            self.found.insert(f.code.clone(), f);
        }
    }

    /// Replays a path with tracing on and returns the finding of `code` it
    /// exhibits, with the trace cut after the marked event.
    fn trace(&self, actions: &[Action], terminal: bool, code: &str) -> Option<Finding> {
        let mut out = Outcome {
            events: Some(Vec::new()),
            ..Outcome::default()
        };
        let mut s = self.m.initial(&mut out);
        let mut events = out.events.take().unwrap_or_default();
        let mut finding = out.findings.into_iter().find(|f| f.code == code);
        for (i, a) in actions.iter().enumerate() {
            let mut o = Outcome {
                events: Some(Vec::new()),
                ..Outcome::default()
            };
            self.m.step(&mut s, *a, &mut o);
            let mut ev = o.events.take().unwrap_or_default();
            for e in ev.iter_mut() {
                e.step = i as u32 + 1;
            }
            events.extend(ev);
            if i + 1 == actions.len() {
                finding = o.findings.into_iter().find(|f| f.code == code).or(finding);
            }
        }
        if terminal {
            let mut o = Outcome {
                events: Some(Vec::new()),
                ..Outcome::default()
            };
            self.m.terminal(&s, &mut o);
            let mut ev = o.events.take().unwrap_or_default();
            for e in ev.iter_mut() {
                e.step = actions.len() as u32;
            }
            events.extend(ev);
            finding = o.findings.into_iter().find(|f| f.code == code).or(finding);
        }
        let mut f = finding?;
        if let Some(cut) = events.iter().rposition(|e| e.mark.as_deref() == Some(code)) {
            events.truncate(cut + 1);
        }
        f.trace = events;
        Some(f)
    }

    /// The enabled actions to expand: those of a stubborn set when the reduction is on.
    fn reduce(&self, s: &State, en: Vec<Action>) -> Vec<Action> {
        let Some(r) = &self.por else {
            return en;
        };
        if en.len() <= 1 {
            return en;
        }
        let mut enabled = vec![false; self.m.nprocs()];
        for a in &en {
            if let Action::Run(p) = a {
                enabled[*p as usize] = true;
            }
        }
        match r.stubborn(s, self.m, &enabled) {
            Some(t) => en
                .into_iter()
                .filter(|a| matches!(a, Action::Run(p) if t[*p as usize]))
                .collect(),
            None => en,
        }
    }

    fn bfs(&mut self) {
        let mut out = Outcome::default();
        let mut s0 = self.m.initial(&mut out);
        self.m.canonicalize(&mut s0);
        self.stats.instrs += out.instrs;
        self.record(out.findings, &Vec::new, false);
        if let Some(stop) = out.stop {
            self.stats.stopped = Some(stop);
            return;
        }
        let mut seen = Visited::new(&s0);
        seen.insert(&mut s0);
        let mut f = Frontier {
            nodes: vec![(u32::MAX, Action::Run(0), 0)],
            seen,
            cur: s0,
            scratch: None,
            memo: StepMemo::new(),
        };
        let mut polls = 0u64;
        let mut node = 0u32;
        while (node as usize) < f.seen.len() {
            polls += 1;
            if polls.is_multiple_of(STOP_POLL) {
                let why = self.interrupted(|| {
                    format!(
                        "with {} states seen and {} still queued",
                        f.seen.len(),
                        f.seen.len() - node as usize
                    )
                });
                if why.is_some() {
                    self.stats.stopped = why;
                    break;
                }
            }
            if node != 0 {
                f.seen.load(node, &mut f.cur);
            }
            let this = node;
            node += 1;
            if self.visit(&mut f, this) && f.seen.len() as u64 >= self.budget.max_states {
                self.stats.stopped = Some(format!(
                    "state budget of {} exhausted ({} states still queued)",
                    self.budget.max_states,
                    f.seen.len() - node as usize
                ));
                break;
            }
        }
        self.stats.states = f.seen.len() as u64;
        self.stats.runs = 0;
        self.stats.complete = self.stats.stopped.is_none();
    }

    /// Expands state number `this` (loaded into `f.cur`): a terminal state is checked;
    /// otherwise its successors are made, their findings recorded and the new ones
    /// queued. True when it made successors (the state budget is checked after those).
    fn visit(&mut self, f: &mut Frontier, this: u32) -> bool {
        let s = &f.cur;
        if self.m.faulted(s) {
            return false;
        }
        let en = self.m.enabled(s);
        if self.m.stuck(&en) {
            if let Some(t) = self.terminals.as_mut() {
                t.insert(self.m.fingerprint(s));
            }
            let mut o = Outcome::default();
            self.m.terminal(s, &mut o);
            if !o.findings.is_empty() {
                self.record(o.findings, &|| path_to(&f.nodes, this), true);
            }
            return false;
        }
        let en = self.reduce(s, en);
        let depth = f.nodes[this as usize].2;
        // The last successor takes `cur` itself (it is loaded again for the next
        // state); the others copy it (sharing its parts until a step writes one)
        // into the scratch state's vectors.
        let last = en.len().saturating_sub(1);
        for (i, a) in en.into_iter().enumerate() {
            let t = if i == last {
                &mut f.cur
            } else {
                let t = f.scratch.get_or_insert_with(|| f.cur.clone());
                t.clone_from(&f.cur);
                t
            };
            let mut o = Outcome::default();
            f.memo.step(self.m, t, a, &mut o);
            self.stats.transitions += 1;
            self.stats.instrs += o.instrs;
            if let Some(stop) = o.stop {
                self.stats.stopped.get_or_insert(stop);
                continue;
            }
            if !o.findings.is_empty() {
                let nodes = &f.nodes;
                self.record(
                    o.findings,
                    &|| {
                        let mut v = path_to(nodes, this);
                        v.push(a);
                        v
                    },
                    false,
                );
            }
            self.m.canonicalize(t);
            if let Some(idx) = f.seen.insert(t) {
                debug_assert_eq!(idx as usize, f.nodes.len());
                f.nodes.push((this, a, depth + 1));
                self.stats.max_depth = self.stats.max_depth.max(depth as u64 + 1);
            }
        }
        true
    }

    fn runs(&mut self, seed: Option<u64>, runs: u64) {
        let mut stopped = None;
        for r in 0..runs {
            if let Some(why) = self.interrupted(|| format!("after {r} of {runs} runs")) {
                stopped = Some(why);
                break;
            }
            let mut rng = seed.map(|s| Rng(s.wrapping_add(r)));
            let mut out = Outcome::default();
            let mut s = self.m.initial(&mut out);
            self.stats.instrs += out.instrs;
            self.record(out.findings, &Vec::new, false);
            if let Some(stop) = out.stop {
                stopped = Some(stop);
                break;
            }
            let mut path: Vec<Action> = Vec::new();
            let mut last = 0usize;
            self.stats.runs += 1;
            loop {
                if self.m.faulted(&s) {
                    break;
                }
                let en = self.m.enabled(&s);
                if self.m.stuck(&en) {
                    let mut o = Outcome::default();
                    self.m.terminal(&s, &mut o);
                    self.record(o.findings, &|| path.clone(), true);
                    break;
                }
                if path.len() as u64 >= self.budget.max_steps {
                    stopped = Some(format!(
                        "step budget of {} exhausted in run {} before the protocol finished",
                        self.budget.max_steps,
                        r + 1
                    ));
                    break;
                }
                if path.len().is_multiple_of(STOP_POLL as usize) {
                    if let Some(why) = self.interrupted(|| format!("in run {}", r + 1)) {
                        stopped = Some(why);
                        break;
                    }
                }
                let a = match &mut rng {
                    Some(g) => en[g.below(en.len())],
                    None => round_robin(&en, &mut last, self.m.nprocs()),
                };
                let mut o = Outcome::default();
                self.m.step(&mut s, a, &mut o);
                path.push(a);
                self.stats.transitions += 1;
                self.stats.states += 1;
                self.stats.instrs += o.instrs;
                if let Some(stop) = o.stop {
                    stopped = Some(stop);
                    break;
                }
                if !o.findings.is_empty() {
                    self.record(o.findings, &|| path.clone(), false);
                }
            }
            self.stats.max_depth = self.stats.max_depth.max(path.len() as u64);
            if stopped.is_some() {
                break;
            }
        }
        self.stats.stopped = stopped;
        self.stats.complete = false;
    }
}

/// Exhaustive search that also returns the fingerprints of every terminal state
/// it met (every process finished, or no process can move). With the partial-order
/// reduction on, these must be exactly the terminal states of the full search: the
/// cross-check the tests run.
pub fn terminal_states(
    p: &Validated,
    params: &BTreeMap<String, i64>,
    cfg: &SimConfig,
) -> Result<(SimReport, BTreeSet<u128>), SimError> {
    simulate_inner(p, params, cfg, true).map(|(r, t)| (r, t.unwrap_or_default()))
}

/// The events of one round-robin run (for a picture of a passing protocol).
pub fn sample_trace(
    p: &Validated,
    params: &BTreeMap<String, i64>,
    cfg: &SimConfig,
) -> Result<Vec<crate::report::Event>, SimError> {
    let b = collc_spec::eval::bind(p, params).map_err(|e| SimError::Params(e.to_string()))?;
    let code = Code::compile(p, &b).map_err(|e| SimError::Instantiate(e.0))?;
    let (m, _) = machine(p, code, cfg)?;
    let mut out = Outcome {
        events: Some(Vec::new()),
        ..Outcome::default()
    };
    let mut s = m.initial(&mut out);
    let mut events = out.events.take().unwrap_or_default();
    let n = m.nprocs();
    let mut last = 0usize;
    let mut step = 0u32;
    while (step as u64) < cfg.budget.max_steps.min(100_000) && !m.faulted(&s) && out.stop.is_none()
    {
        let en = m.enabled(&s);
        if m.stuck(&en) {
            break;
        }
        let pick = round_robin(&en, &mut last, n);
        step += 1;
        let mut o = Outcome {
            events: Some(Vec::new()),
            ..Outcome::default()
        };
        m.step(&mut s, pick, &mut o);
        for mut e in o.events.take().unwrap_or_default() {
            e.step = step;
            events.push(e);
        }
        out.stop = o.stop;
    }
    Ok(events)
}

/// The events of one call, scheduled round-robin.
pub fn call_trace(
    p: &Validated,
    params: &BTreeMap<String, i64>,
) -> Result<Vec<crate::report::Event>, SimError> {
    let cfg = SimConfig {
        calls: 1,
        schedule: Schedule::RoundRobin,
        ..SimConfig::default()
    };
    sample_trace(p, params, &cfg)
}

/// What one round-robin call executes, in the kinds of `collc cost`: remote atomics
/// (notifies to another rank), local notifies, passing waits and fences, every rank and
/// block together. A run that faults or blocks is [`SimError::Incomplete`].
pub fn call_counts(p: &Validated, params: &BTreeMap<String, i64>) -> Result<[i64; 4], SimError> {
    let mut out = [0i64; 4];
    for e in call_trace(p, params)? {
        match e.kind {
            EvKind::Notify { to, .. } if to != e.rank => out[0] += 1,
            EvKind::Notify { .. } => out[1] += 1,
            EvKind::WaitPass { .. } => out[2] += 1,
            EvKind::Fence => out[3] += 1,
            EvKind::Fault | EvKind::WaitBlocked { .. } => {
                return Err(SimError::Incomplete(format!("{}: {}", p.name, e.text)))
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Round-robin over processes: the first enabled action of the process after `last`.
fn round_robin(en: &[Action], last: &mut usize, n: usize) -> Action {
    let key = |a: &Action| match a {
        Action::Run(p) | Action::Stale(p) | Action::Drain(p) | Action::Pin(p) => *p as usize,
    };
    let pick = (1..=n)
        .map(|d| (*last + d) % n)
        .find_map(|q| en.iter().find(|a| key(a) == q).copied())
        .unwrap_or(en[0]);
    *last = key(&pick);
    pick
}
