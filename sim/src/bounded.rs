//! Bounded model checking for the verifier: every small parameter assignment
//! (world sizes, element counts giving a few tiles, every root), each explored
//! exhaustively over back-to-back calls, summarised per obligation with the
//! bounds, the states explored, whether exploration was complete, and the
//! smallest counterexample found.

use crate::explore::{simulate, Budget, Schedule, SimConfig, StopFlag};
use crate::machine::{Memory, WrapStart};
use crate::report::{Event, Finding, SimReport, Verdict};
use collc_grammar::Span;
use collc_spec::ir::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The small bounds of a bounded check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bounds {
    /// World sizes, inclusive (intersected with the protocol's domain).
    pub ranks: (i64, i64),
    /// Tiles per element-count parameter, inclusive.
    pub tiles: (i64, i64),
    /// Back-to-back calls.
    pub calls: usize,
    /// Values tried for other integer parameters: the lowest this many of the domain.
    pub small_ints: i64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            ranks: (2, 4),
            tiles: (1, 3),
            calls: 3,
            small_ints: 2,
        }
    }
}

impl Bounds {
    /// The bounds in words.
    pub fn describe(&self) -> String {
        format!(
            "P in {}..={}, {}..={} tiles per element count, {} back-to-back calls, every root",
            self.ranks.0, self.ranks.1, self.tiles.0, self.tiles.1, self.calls
        )
    }
}

/// What to check and with what budget.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BoundedConfig {
    /// The bounds.
    pub bounds: Bounds,
    /// Memory model.
    pub memory: Memory,
    /// Budget of each parameter assignment (states, time).
    pub per_config: Budget,
    /// Wall time for the whole check; assignments not started in time are reported as unexplored.
    pub total_time: Duration,
    /// Parameters fixed by the user (the rest range over the bounds).
    pub fixed: BTreeMap<String, i64>,
    /// Sticky polling (relaxed only; see [`SimConfig::sticky_poll`]).
    #[serde(default)]
    pub sticky_poll: bool,
    /// Wrap-around mode (see [`SimConfig::wrap`]): each assignment runs the last calls
    /// before a monotonic cell leaves int32; replays say `--wrap`.
    #[serde(default)]
    pub wrap: bool,
    /// Stops the check when set: the running search stops within a few hundred
    /// states and the assignments not started are reported as unexplored.
    #[serde(skip)]
    pub stop: Option<StopFlag>,
}

impl Default for BoundedConfig {
    fn default() -> Self {
        BoundedConfig {
            bounds: Bounds::default(),
            memory: Memory::Sc,
            per_config: Budget {
                max_states: 1_000_000,
                max_time: Duration::from_secs(30),
                ..Budget::default()
            },
            total_time: Duration::from_secs(120),
            fixed: BTreeMap::new(),
            sticky_poll: false,
            wrap: false,
            stop: None,
        }
    }
}

/// Status of one obligation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// No violation, every assignment explored completely.
    Checked,
    /// A counterexample was found.
    Violated,
    /// No violation found, but some assignment was not explored completely.
    Incomplete,
}

/// A counterexample that `collc sim` replays.
#[derive(Debug, Clone, Serialize)]
pub struct Counterexample {
    /// Finding code.
    pub code: String,
    /// One line.
    pub message: String,
    /// The offending statement.
    pub span: Option<Span>,
    /// Details.
    pub notes: Vec<String>,
    /// How to fix it, when the finding knows.
    pub help: Option<String>,
    /// Parameters.
    pub params: BTreeMap<String, i64>,
    /// Calls.
    pub calls: usize,
    /// The arguments that replay it: `--param P=3 --param n=512 --calls 3 --memory sc`.
    pub replay: String,
    /// Scheduler steps of the trace.
    pub steps: usize,
    /// The shortest trace found.
    pub trace: Vec<Event>,
    /// Where the wrap-around mode placed the calls, when it was on.
    pub wrap: Option<WrapStart>,
}

/// One obligation's result.
#[derive(Debug, Clone, Serialize)]
pub struct Obligation {
    /// `deadlock`, `stale-pass`, `data-race`, `semantics` or `lifetimes`.
    pub name: String,
    /// The finding codes it covers.
    pub codes: Vec<String>,
    /// Status.
    pub status: Status,
    /// The bounds, in words.
    pub bounds: String,
    /// Parameter assignments explored.
    pub configs: usize,
    /// Of those, explored completely.
    pub configs_complete: usize,
    /// Assignments in the bounds that were not explored (time budget).
    pub configs_skipped: usize,
    /// Distinct states explored, summed over assignments.
    pub states: u64,
    /// True when every assignment in the bounds was explored completely.
    pub complete: bool,
    /// The smallest counterexample found.
    pub counterexample: Option<Counterexample>,
}

/// One parameter assignment's exploration.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigResult {
    /// Parameters.
    pub params: BTreeMap<String, i64>,
    /// Verdict.
    pub verdict: Verdict,
    /// Finding codes.
    pub codes: Vec<String>,
    /// Distinct states.
    pub states: u64,
    /// Explored completely.
    pub complete: bool,
    /// Why not, if not.
    pub stopped: Option<String>,
    /// Wall time.
    pub elapsed_ms: u64,
    /// Where the wrap-around mode placed the calls, when it was on.
    pub wrap: Option<WrapStart>,
}

/// The result of [`check`].
#[derive(Debug, Clone, Serialize)]
pub struct BoundedReport {
    /// The collective.
    pub protocol: String,
    /// Bounds.
    pub bounds: Bounds,
    /// Memory model.
    pub memory: Memory,
    /// Per obligation.
    pub obligations: Vec<Obligation>,
    /// Per parameter assignment.
    pub configs: Vec<ConfigResult>,
    /// Assignments that could not be run, with the reason.
    pub errors: Vec<String>,
    /// Wall time.
    pub elapsed_ms: u64,
}

/// The obligations and the finding codes each covers.
pub const OBLIGATIONS: [(&str, &[&str]); 5] = [
    (
        "deadlock",
        &["sim::deadlock", "sim::lost-credit", "sim::nonzero-exit"],
    ),
    ("stale-pass", &["sim::stale-pass"]),
    ("data-race", &["sim::data-race"]),
    ("semantics", &["sim::wrong-result", "sim::runtime-error"]),
    ("lifetimes", &["sim::stale-value", "sim::uninit-read"]),
];

/// The values a parameter takes, given the values chosen for earlier ones.
type Choices<'a> = Box<dyn Fn(&BTreeMap<String, i64>) -> Vec<i64> + 'a>;

/// Variables whose value sizes a window or tile (directly or through top-level lets): the
/// element counts the grid gives in tiles.
pub fn sizing_params(p: &Protocol) -> Vec<VarId> {
    let mut out = Vec::new();
    let visit = |e: &Expr, out: &mut Vec<VarId>| {
        let mut stack = vec![e.clone()];
        while let Some(e) = stack.pop() {
            e.for_each_var(&mut |v| {
                if !out.contains(&v) {
                    out.push(v);
                    if let VarKind::Derived(d) = &p.vars[v].kind {
                        stack.push(d.clone());
                    }
                }
            });
        }
    };
    for b in p.windows.iter().chain(p.tiles.iter()) {
        for d in &b.dims {
            visit(d, &mut out);
        }
    }
    out
}

/// What the bounds of [`param_grid`] range over for a protocol: whether some
/// parameter sizes a window or tile (so the tile bound applies), and whether it
/// has rank parameters (so every root is tried). Lets a report word its bounds
/// for what the protocol has (no "tiles" for a barrier).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridShape {
    /// Some parameter with a domain sizes a window or tile.
    pub tiles: bool,
    /// Some parameter is a rank.
    pub roots: bool,
}

/// The [`GridShape`] of a protocol.
pub fn grid_shape(p: &Protocol) -> GridShape {
    let sizing = sizing_params(p);
    let mut g = GridShape {
        tiles: false,
        roots: false,
    };
    for v in p.inputs() {
        match &p.vars[v].kind {
            VarKind::Param { domain: None } => g.roots = true,
            VarKind::Param { domain: Some(_) } if sizing.contains(&v) => g.tiles = true,
            _ => {}
        }
    }
    g
}

/// Small parameter assignments for a bounded run: world sizes in the bounds,
/// element-count parameters (those that size a window) giving the bounded
/// numbers of tiles, rank parameters over every rank, other integer
/// parameters over the lowest values of their domain; `fixed` values win.
/// Only assignments that satisfy every domain and `require` are returned,
/// smallest first.
pub fn param_grid(
    p: &Protocol,
    bounds: &Bounds,
    fixed: &BTreeMap<String, i64>,
) -> Vec<BTreeMap<String, i64>> {
    let tile = p
        .vars
        .iter()
        .find_map(|v| match v.kind {
            VarKind::Const(c) if v.name.eq_ignore_ascii_case("tile") && c > 0 => Some(c),
            _ => None,
        })
        .unwrap_or(256);
    let sizing = sizing_params(p);
    let mut grid: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new()];
    for v in p.inputs() {
        let var = &p.vars[v];
        let name = var.name.clone();
        let choices: Choices = if let Some(x) = fixed.get(&name) {
            let x = *x;
            Box::new(move |_| vec![x])
        } else {
            match &var.kind {
                VarKind::World { lo, hi } => {
                    let (a, b) = ((*lo).max(bounds.ranks.0), (*hi).min(bounds.ranks.1));
                    let v: Vec<i64> = if a <= b {
                        (a..=b).collect()
                    } else {
                        vec![(*lo).max((*hi).min(bounds.ranks.0))]
                    };
                    Box::new(move |_| v.clone())
                }
                VarKind::Param { domain: None } => {
                    let world = p.vars[p.world].name.clone();
                    Box::new(move |m| (0..*m.get(&world).unwrap_or(&1)).collect())
                }
                VarKind::Param {
                    domain: Some((lo, hi)),
                } => {
                    let (lo, hi) = (*lo, *hi);
                    let v: Vec<i64> = if sizing.contains(&v) {
                        let mut xs: Vec<i64> = (bounds.tiles.0..=bounds.tiles.1)
                            .map(|t| (t * tile).clamp(lo, hi))
                            .collect();
                        xs.dedup();
                        xs
                    } else {
                        (lo..=hi).take(bounds.small_ints.max(1) as usize).collect()
                    };
                    Box::new(move |_| v.clone())
                }
                _ => continue,
            }
        };
        let mut next = Vec::new();
        for g in &grid {
            for x in choices(g) {
                let mut g2 = g.clone();
                g2.insert(name.clone(), x);
                next.push(g2);
            }
        }
        grid = next;
    }
    let sizing_names: Vec<String> = sizing
        .iter()
        .filter(|v| matches!(p.vars[**v].kind, VarKind::Param { domain: Some(_) }))
        .map(|v| p.vars[*v].name.clone())
        .filter(|n| !fixed.contains_key(n))
        .collect();
    let mut grid: Vec<BTreeMap<String, i64>> = grid
        .into_iter()
        .filter_map(|g| fit_tiles(p, g, &sizing_names, tile))
        .collect();
    let world = p.vars[p.world].name.clone();
    grid.sort_by_key(|g| {
        (
            g.get(&world).copied().unwrap_or(0),
            g.values().copied().collect::<Vec<_>>(),
        )
    });
    grid.dedup();
    grid
}

/// An assignment that satisfies every domain and `require`, or `None`. When `g` does
/// not, and a parameter that sizes a window holds `t * tile` (t tiles), the largest value
/// that still gives t tiles (`(t - 1) * tile + 1 ..= t * tile`) and satisfies them is
/// taken instead: `n % P == 0` at P=3 runs with n=255 (1 tile), 510 and 768, not only 768.
fn fit_tiles(
    p: &Protocol,
    mut g: BTreeMap<String, i64>,
    sizing: &[String],
    tile: i64,
) -> Option<BTreeMap<String, i64>> {
    if collc_spec::eval::bind(p, &g).is_ok() {
        return Some(g);
    }
    for name in sizing {
        let Some(x) = g.get(name).copied() else {
            continue;
        };
        if x <= 0 || x % tile != 0 {
            continue;
        }
        for y in (x - tile + 1..x).rev() {
            g.insert(name.clone(), y);
            if collc_spec::eval::bind(p, &g).is_ok() {
                return Some(g);
            }
        }
        g.insert(name.clone(), x);
    }
    None
}

/// Runs the bounded obligations: every assignment of [`param_grid`], each
/// explored exhaustively for `bounds.calls` back-to-back calls.
pub fn check(p: &collc_spec::Validated, cfg: &BoundedConfig) -> BoundedReport {
    let start = Instant::now();
    let grid = param_grid(p, &cfg.bounds, &cfg.fixed);
    let mut configs = Vec::new();
    let mut errors = Vec::new();
    let mut cex: BTreeMap<&str, Counterexample> = BTreeMap::new();
    let mut skipped = 0usize;
    if grid.is_empty() {
        errors.push(format!(
            "no parameter assignment within the bounds ({}) satisfies the protocol's domains and requirements",
            cfg.bounds.describe()
        ));
    }
    for g in &grid {
        let left = cfg.total_time.saturating_sub(start.elapsed());
        let stopped = cfg
            .stop
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed));
        if left.is_zero() || stopped {
            skipped += 1;
            continue;
        }
        match simulate(p, g, &sim_config(cfg, left)) {
            Ok(r) => {
                for f in &r.findings {
                    keep_counterexample(p, cfg, &r, f, &mut cex);
                }
                configs.push(ConfigResult {
                    params: r.params.clone(),
                    verdict: r.verdict,
                    codes: r.findings.iter().map(|f| f.code.clone()).collect(),
                    states: r.stats.states,
                    complete: r.stats.complete,
                    stopped: r.stats.stopped.clone(),
                    elapsed_ms: r.stats.elapsed_ms,
                    wrap: r.wrap.clone(),
                });
            }
            Err(e) => errors.push(format!("{}: {e}", crate::report::params_text(g))),
        }
    }
    let complete_all = skipped == 0 && errors.is_empty() && configs.iter().all(|c| c.complete);
    let obligations = OBLIGATIONS
        .iter()
        .map(|(name, codes)| {
            let c = cex.remove(name);
            Obligation {
                name: name.to_string(),
                codes: codes.iter().map(|s| s.to_string()).collect(),
                status: if c.is_some() {
                    Status::Violated
                } else if complete_all && !configs.is_empty() {
                    Status::Checked
                } else {
                    Status::Incomplete
                },
                bounds: cfg.bounds.describe(),
                configs: configs.len(),
                configs_complete: configs.iter().filter(|c| c.complete).count(),
                configs_skipped: skipped,
                states: configs.iter().map(|c| c.states).sum(),
                complete: complete_all,
                counterexample: c,
            }
        })
        .collect();
    BoundedReport {
        protocol: p.name.clone(),
        bounds: cfg.bounds.clone(),
        memory: cfg.memory,
        obligations,
        configs,
        errors,
        elapsed_ms: start.elapsed().as_millis() as u64,
    }
}

/// The exhaustive simulation of one assignment, with `left` of the total time.
fn sim_config(cfg: &BoundedConfig, left: Duration) -> SimConfig {
    SimConfig {
        calls: cfg.bounds.calls,
        memory: cfg.memory,
        schedule: Schedule::Exhaustive,
        budget: Budget {
            max_time: cfg.per_config.max_time.min(left),
            ..cfg.per_config
        },
        reduce: true,
        sticky_poll: cfg.sticky_poll,
        stop: cfg.stop.clone(),
        wrap: cfg.wrap,
    }
}

/// Keeps finding `f` of simulation `r` as its obligation's counterexample when it
/// is the first, or smaller (world size, then steps) than the one kept.
fn keep_counterexample(
    p: &Protocol,
    cfg: &BoundedConfig,
    r: &SimReport,
    f: &Finding,
    cex: &mut BTreeMap<&str, Counterexample>,
) {
    let (ob, _) = OBLIGATIONS
        .iter()
        .find(|(_, codes)| codes.contains(&f.code.as_str()))
        .copied()
        .unwrap_or(OBLIGATIONS[3]);
    let better = cex.get(ob).is_none_or(|old| {
        (world_of(p, &old.params), old.steps) > (world_of(p, &f.params), f.steps)
    });
    if !better {
        return;
    }
    cex.insert(
        ob,
        Counterexample {
            code: f.code.clone(),
            message: f.message.clone(),
            span: f.span,
            notes: f.notes.clone(),
            help: f.help.clone(),
            params: f.params.clone(),
            calls: cfg.bounds.calls,
            replay: replay_args(cfg, f),
            steps: f.steps,
            trace: f.trace.clone(),
            wrap: r.wrap.clone(),
        },
    );
}

/// The `collc sim` arguments that replay finding `f`.
fn replay_args(cfg: &BoundedConfig, f: &Finding) -> String {
    f.params
        .iter()
        .map(|(k, v)| format!("--param {k}={v}"))
        .chain([
            format!("--calls {}", cfg.bounds.calls),
            format!(
                "--memory {}",
                match cfg.memory {
                    Memory::Sc => "sc",
                    Memory::Relaxed if cfg.sticky_poll => "relaxed --sticky-poll",
                    Memory::Relaxed => "relaxed",
                }
            ),
        ])
        .chain(cfg.wrap.then(|| "--wrap".to_string()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn world_of(p: &Protocol, params: &BTreeMap<String, i64>) -> i64 {
    params.get(&p.vars[p.world].name).copied().unwrap_or(0)
}
