//! What an obligation's result covered, as data: P symbolic over a domain (and how the
//! route closed it), the enumeration's plan and where it stops, the world sizes past it,
//! the bounds of a bounded run with its memory model or wrap-around windows, and the
//! notes of routes that gave way to another. The obligations set these records where
//! they decide; a route that adds to another's result adds a part ([`Scope::push`],
//! [`Scope::then`]) or wraps it ([`Covered::CrossChecked`]), never edits its text. The
//! one rendering is [`Scope`]'s `Display` (the report's `scope` string, the CLI's table,
//! SARIF, the verdict goldens); no code reads that text back.

use crate::report::summary::{range, world_phrase};
use crate::report::WorldRange;
use collc_sim::bounded::GridShape;
use collc_sim::machine::WrapStart;
use serde::Serialize;
use std::fmt;

/// What one result covered: an optional lead (`by enumeration`), then its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    lead: Option<Lead>,
    parts: Vec<Covered>,
}

/// A phrase that heads the whole scope (`LEAD: PART; PART`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// Proved by the enumerated route (the P-symbolic route did not close it).
    ByEnumeration,
    /// Proved by enumerating every world size of the range.
    ByEnumerationOver(WorldRange),
}

/// One thing a route covered (or why another route did not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Covered {
    /// The enumerated route's plan: which parameters it enumerated over what, the ranks
    /// and blocks, which stayed symbolic.
    Enumeration(Enumeration),
    /// How far the enumeration of P goes against the declared domain (a capped one).
    Capped(Cap),
    /// World sizes past the enumeration also enumerated (the sizes around the thresholds
    /// the protocol's literals form).
    Also {
        /// The world-size parameter's name.
        world: String,
        /// The sizes, ascending.
        sizes: Vec<i64>,
    },
    /// Proved with P symbolic for every size of `world`, and how.
    Symbolic {
        /// The world sizes (the declared domain).
        world: WorldRange,
        /// What the route held symbolic and counted.
        how: Symbolic,
    },
    /// Vacuous over `world`: the protocol declares no value signal.
    NoValueSignals {
        /// The world sizes (the declared domain).
        world: WorldRange,
    },
    /// The enumerated route's result, under a proof with P symbolic.
    CrossChecked(Box<Scope>),
    /// The enumerated route left it undecided, for this reason.
    EnumerationUndecided(String),
    /// The P-symbolic route did not prove it, for this reason.
    NotSymbolic(String),
    /// The front end's range pass: every value of the declared domains.
    RangePass,
    /// A bounded run of the simulator.
    Run(Run),
    /// The bounded run that a proof of `deadlock` with P symbolic rests beside.
    BoundedRun(Box<BoundedRun>),
    /// `fence`: the pairs no other process observes, over the enumeration.
    FencePrivate {
        /// Unfenced access/notify pairs observed by no other process.
        private: usize,
        /// Configurations analysed.
        configs: u64,
    },
    /// `fence`: configurations analysed.
    FenceConfigs(u64),
    /// `fence`: the relaxed run for the remote reads in flight, and whether it replays one.
    FenceReads {
        /// It replays a read in flight.
        shown: bool,
        /// The run.
        run: FenceRun,
    },
    /// `fence`: the unfenced writes were decided by the same relaxed run.
    FenceSameRun,
    /// `fence`: the pairs another process may observe, decided by the relaxed run.
    FenceSuspects {
        /// How many.
        pairs: usize,
        /// The run.
        run: FenceRun,
    },
    /// `fence`: a relaxed run.
    FenceRun(FenceRun),
    /// An extra bounded run (relaxed memory, the wrap-around mode) that did not complete,
    /// and why: the result rests on the runs that did.
    Incomplete {
        /// Which run.
        run: Extra,
        /// Why (the run's budget, errors or missed probes).
        why: String,
    },
    /// The wrap-around run's failure of this obligation is past the overflow horizon (the
    /// `overflow-horizon` result reports it).
    PastHorizon,
}

/// The extra bounded runs beside the sequentially consistent one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// Relaxed memory.
    Relaxed,
    /// The wrap-around mode.
    Wrap,
}

/// What the P-symbolic route held symbolic and counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Symbolic {
    /// Ranks, blocks and loop variables symbolic.
    Variables(Checks),
    /// Ranks, loop variables and the call index symbolic (`buffer-reuse`).
    CallIndex(Checks),
    /// Waits ranked by program point (`deadlock`).
    Ranking(Checks),
    /// The per-call credit maximised by Z3 (`overflow-horizon`).
    Maximised {
        /// Z3 queries.
        queries: u64,
    },
    /// `fence`: no unfenced pair on any path.
    NoPair,
    /// `fence`: every unfenced pair is pending only at notifies nothing waits on.
    Unwaited {
        /// The pairs.
        pairs: usize,
        /// The signals of those notifies.
        signals: Vec<String>,
    },
}

/// A route's counts of checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checks {
    /// Checks.
    pub items: u64,
    /// Closed by literal arithmetic.
    pub literal: u64,
    /// Sent to Z3.
    pub z3: u64,
}

/// The enumerated route's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enumeration {
    /// Each enumerated parameter and what it ranges over.
    pub vars: Vec<(String, Over)>,
    /// The block variable and its count, when the protocol has blocks.
    pub blocks: Option<(String, String)>,
    /// The parameters kept symbolic.
    pub symbolic: Vec<String>,
}

/// What an enumerated parameter ranges over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Over {
    /// The world size: the sizes enumerated (none past the cap), and where the
    /// enumeration stops when it stops below the declared domain.
    World {
        /// The enumerated sizes.
        range: Option<(i64, i64)>,
        /// The cap and the declared domain's text, when capped.
        capped: Option<(i64, String)>,
    },
    /// A parameter's domain.
    Domain(i64, i64),
    /// A rank: `0..P`.
    Ranks(String),
}

/// How far the enumeration of P goes against the declared domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cap {
    /// The world-size parameter's name.
    pub world: String,
    /// The enumerated sizes (none when the domain starts above the cap).
    pub enumerated: Option<(i64, i64)>,
    /// The declared domain's smallest size.
    pub lo: i64,
    /// How far the declared domain goes.
    pub reach: Reach,
    /// The planner's enumeration cap.
    pub cap: i64,
}

/// How far a declared domain goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Up to this size.
    To(i64),
    /// Unbounded; its text (`P >= 1`).
    Unbounded(String),
}

/// A bounded run of the simulator: its mode and what it explored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// Sequentially consistent, relaxed memory, or the wrap-around mode.
    pub mode: Mode,
    /// What it explored.
    pub explored: Explored,
}

/// How a bounded run ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Sequentially consistent.
    Sc,
    /// Relaxed memory.
    Relaxed,
    /// The wrap-around mode, with where its windows started.
    Wrap(Vec<WrapStart>),
}

/// What a bounded run explored: complete attempts by bounds, the sizes it missed, the
/// targeted sizes and probes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explored {
    /// What the bounds range over (how they are worded).
    pub shape: Option<GridShape>,
    /// World sizes explored completely, grouped by bounds.
    pub complete: Vec<Attempt>,
    /// World sizes not explored completely (budget).
    pub missing: Vec<i64>,
    /// Targeted world sizes explored completely.
    pub targeted: Vec<Attempt>,
    /// Targeted world sizes not explored completely (budget).
    pub targets_missed: Vec<i64>,
    /// Targeted world sizes left because a counterexample was found first.
    pub targets_skipped: Vec<i64>,
    /// Probes explored completely: (label, tiles, calls, states).
    pub probes: Vec<(String, i64, usize, u64)>,
    /// Probes not explored completely.
    pub probes_missed: Vec<String>,
}

/// World sizes explored completely at one bound: (sizes, tiles, calls, states).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The world sizes.
    pub worlds: Vec<i64>,
    /// Tiles bound.
    pub tiles: i64,
    /// Calls.
    pub calls: usize,
    /// Distinct states, summed over the sizes.
    pub states: u64,
}

/// The bounded run beside a proof of `deadlock`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundedRun {
    /// Checked within its scope.
    Checked(Scope),
    /// Not run (`--no-bounded`).
    Skipped,
    /// Undecided, with its reason when it has one.
    Undecided(Option<String>),
}

/// The `fence` obligation's relaxed bounded run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceRun {
    /// It found a relaxed-only race or wrong result at this world size.
    Found(i64),
    /// Its attempts, P ascending, with fresh windows per call.
    Explored(Vec<FenceAttempt>),
}

/// One world size of the `fence` obligation's relaxed run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenceAttempt {
    /// Explored completely: (P, tiles, states) at two calls.
    Complete(i64, i64, u64),
    /// Not explored completely (budget).
    Budget(i64),
}

impl Scope {
    /// A scope of one part.
    pub fn of(c: Covered) -> Self {
        Scope {
            lead: None,
            parts: vec![c],
        }
    }
    /// A scope of these parts.
    pub fn from_parts(parts: Vec<Covered>) -> Self {
        Scope { lead: None, parts }
    }
    /// Adds a part.
    pub fn push(&mut self, c: Covered) {
        self.parts.push(c);
    }
    /// This scope, then `c`.
    pub fn with(mut self, c: Covered) -> Self {
        self.push(c);
        self
    }
    /// This scope's parts, then `other`'s (its lead, if any, is this one's when this has
    /// none).
    pub fn then(mut self, other: Scope) -> Self {
        self.lead = self.lead.or(other.lead);
        self.parts.extend(other.parts);
        self
    }
    /// Heads the scope with `lead`.
    pub fn led(mut self, lead: Lead) -> Self {
        self.lead = Some(lead);
        self
    }
    /// The parts.
    pub fn parts(&self) -> &[Covered] {
        &self.parts
    }
}

impl fmt::Display for Scope {
    /// The one rendering of a scope (module documentation).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.lead {
            Some(Lead::ByEnumeration) => write!(f, "by enumeration: ")?,
            Some(Lead::ByEnumerationOver(w)) => write!(f, "by enumeration over {}: ", range(w))?,
            None => {}
        }
        for (i, c) in self.parts.iter().enumerate() {
            if i > 0 {
                write!(f, "; ")?;
            }
            write!(f, "{}", covered(c))?;
        }
        Ok(())
    }
}

impl Serialize for Scope {
    /// As its text (the report's JSON `scope` string).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One part's text.
fn covered(c: &Covered) -> String {
    match c {
        Covered::Enumeration(e) => enumeration(e),
        Covered::Capped(c) => capped(c),
        Covered::Also { world, sizes } => format!(
            "also {world} = {} (the sizes around the thresholds its literals form)",
            sizes_text(sizes)
        ),
        Covered::Symbolic { world, how } => {
            format!("{}, P symbolic{}", world_phrase(world.lo, world.hi), symbolic(how))
        }
        Covered::NoValueSignals { world } => format!(
            "{}: the protocol declares no `as value` signal",
            world_phrase(world.lo, world.hi)
        ),
        Covered::CrossChecked(s) => format!("cross-checked by enumeration ({s})"),
        Covered::EnumerationUndecided(why) => {
            format!("the enumerated route did not decide it: {why}")
        }
        Covered::NotSymbolic(why) => format!("not proved with P symbolic: {why}"),
        Covered::RangePass => "every value of the declared domains, by inspection or Z3".into(),
        Covered::Run(r) => run(r),
        Covered::BoundedRun(b) => match &**b {
            BoundedRun::Checked(s) => format!("bounded run: {s}"),
            BoundedRun::Skipped => "bounded run: skipped (--no-bounded)".into(),
            BoundedRun::Undecided(None) => "bounded run: undecided".into(),
            BoundedRun::Undecided(Some(r)) => format!("bounded run: undecided ({r})"),
        },
        Covered::FencePrivate { private, configs } => format!(
            "{private} unfenced access/notify pair(s) observed by no other process, {configs} configurations"
        ),
        Covered::FenceConfigs(n) => format!("{n} configurations"),
        Covered::FenceReads { shown, run } => format!(
            "{}: {}",
            if *shown {
                "the relaxed simulator replays a read in flight"
            } else {
                "no relaxed run shows a read in flight"
            },
            fence_run(run)
        ),
        Covered::FenceSameRun => "unfenced writes: the same run".into(),
        Covered::FenceSuspects { pairs, run } => format!(
            "{pairs} pair(s) that another process may observe (no element regions in the symbolic analysis) checked by the simulator: {}",
            fence_run(run)
        ),
        Covered::FenceRun(r) => fence_run(r),
        Covered::Incomplete { run, why } => format!(
            "{} incomplete: {why}",
            match run {
                Extra::Relaxed => "relaxed memory",
                Extra::Wrap => WRAP_RUN,
            }
        ),
        Covered::PastHorizon => {
            format!("its failure in the {WRAP_RUN} is past the overflow horizon: overflow-horizon")
        }
    }
}

/// `(ranks, blocks and loop variables symbolic; 12 checks: ...)` and the like, after `P
/// symbolic`.
fn symbolic(how: &Symbolic) -> String {
    match how {
        Symbolic::Variables(c) => {
            format!(" (ranks, blocks and loop variables symbolic; {})", checks(c))
        }
        Symbolic::CallIndex(c) => format!(
            " and every call index (ranks, loop variables and the call index symbolic; {})",
            checks(c)
        ),
        Symbolic::Ranking(c) => format!(
            ": waits ranked by program point ({}), with credit-balance and op-exclusivity (and value-signal for waits on value signals)",
            checks(c)
        ),
        Symbolic::Maximised { queries } => format!(
            ": N maximised over every cell, P and parameter by Z3 ({queries} queries)"
        ),
        Symbolic::NoPair => ": no window write or remote read is pending at any notify that can release a wait, on any path of any rank and block (conditions both ways, loops to a fixpoint)".into(),
        Symbolic::Unwaited { pairs, signals } => format!(
            ": every window write or remote read pending at a notify that can release a wait, on any path of any rank and block (conditions both ways, loops to a fixpoint), is pending only at notifies of {} that no statement waits on, so they release no process: {pairs} unfenced access/notify pair(s), all private",
            signals.join(", ")
        ),
    }
}

/// `12 checks: 3 by literal arithmetic, 9 by Z3`.
pub fn checks(c: &Checks) -> String {
    format!(
        "{} checks: {} by literal arithmetic, {} by Z3",
        c.items, c.literal, c.z3
    )
}

/// `enumerated: P over 1..=8, root over 0..P; symbolic: n`.
fn enumeration(e: &Enumeration) -> String {
    let parts: Vec<String> = e
        .vars
        .iter()
        .map(|(name, over)| {
            let d = match over {
                Over::World {
                    range: Some((lo, hi)),
                    capped: Some((cap, declared)),
                } => format!("{lo}..={hi} (enumeration stops at {cap}; declared: {declared})"),
                Over::World {
                    range: Some((lo, hi)),
                    capped: None,
                } => format!("{lo}..={hi}"),
                Over::World {
                    range: None,
                    capped,
                } => {
                    let (cap, declared) = capped.clone().unwrap_or_default();
                    format!("nothing (enumeration stops at {cap}; declared: {declared})")
                }
                Over::Domain(lo, hi) => format!("{lo}..={hi}"),
                Over::Ranks(world) => format!("0..{world}"),
            };
            format!("{name} over {d}")
        })
        .collect();
    let mut s = format!("enumerated: {}", parts.join(", "));
    if let Some((var, count)) = &e.blocks {
        s.push_str(&format!("; every rank and block `{var}` in 0..{count}"));
    }
    if e.symbolic.is_empty() {
        s.push_str("; no symbolic parameters");
    } else {
        s.push_str(&format!("; symbolic: {}", e.symbolic.join(", ")));
    }
    s
}

/// `checked for P in 1..=16 by enumeration; the declared domain goes to 65536`.
fn capped(c: &Cap) -> String {
    let reach = match &c.reach {
        Reach::Unbounded(text) => format!("the declared domain is unbounded ({text})"),
        Reach::To(hi) => format!("the declared domain goes to {hi}"),
    };
    match c.enumerated {
        Some((a, b)) => format!(
            "checked for {} in {a}..={b} by enumeration; {reach}",
            c.world
        ),
        None => format!(
            "the declared domain starts at {} = {}, above the enumeration cap {}; no world size was enumerated",
            c.world, c.lo, c.cap
        ),
    }
}

/// `19..=22, 24` from ascending sizes.
pub fn sizes_text(sizes: &[i64]) -> String {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for w in sizes {
        match runs.last_mut() {
            Some((_, b)) if *b + 1 == *w => *b = *w,
            _ => runs.push((*w, *w)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|(a, b)| match b - a {
            0 => a.to_string(),
            1 => format!("{a}, {b}"),
            _ => format!("{a}..={b}"),
        })
        .collect();
    parts.join(", ")
}

/// A bounded run: `P=2..4, 1..3 tiles, 3 calls: 11,701 states, complete; ...`, after
/// `relaxed memory: ` or `wrap-around mode (WINDOWS): ` for those modes.
fn run(r: &Run) -> String {
    let e = explored(&r.explored);
    match &r.mode {
        Mode::Sc => e,
        Mode::Relaxed => format!("relaxed memory: {e}"),
        Mode::Wrap(ws) => format!("{WRAP_RUN} ({}): {e}", windows(ws)),
    }
}

/// The wrap-around run, as findings and summaries name it.
pub const WRAP_RUN: &str = "wrap-around mode";

/// What a bounded run explored (`P=2..4, 1..3 tiles, 3 calls: 11,701 states, complete;
/// P=5 not explored (budget)`).
fn explored(x: &Explored) -> String {
    let mut parts: Vec<String> = x
        .complete
        .iter()
        .map(|a| {
            format!(
                "{}: {} states, complete",
                bounds_text(&group_text(&a.worlds), x.shape, a.tiles, a.calls),
                thousands(a.states)
            )
        })
        .collect();
    if !x.missing.is_empty() {
        parts.push(format!("{} not explored (budget)", group_text(&x.missing)));
    }
    for a in &x.targeted {
        parts.push(format!(
            "targeted {}: {} states, complete",
            bounds_text(&group_text(&a.worlds), x.shape, a.tiles, a.calls),
            thousands(a.states)
        ));
    }
    if !x.targets_missed.is_empty() {
        parts.push(format!(
            "targeted {} not explored (budget)",
            group_text(&x.targets_missed)
        ));
    }
    if !x.targets_skipped.is_empty() {
        parts.push(format!(
            "targeted {} not explored (a counterexample was found first)",
            group_text(&x.targets_skipped)
        ));
    }
    for (label, t, c, s) in &x.probes {
        parts.push(format!(
            "targeted {}: {} states, complete",
            probe_bounds_text(label, x.shape, *t, *c),
            thousands(*s)
        ));
    }
    for label in &x.probes_missed {
        parts.push(format!("targeted {label} not explored completely"));
    }
    parts.join("; ")
}

/// Where the wrap-around windows start: `the last declared calls, from call index
/// 99,999,996; horizon 2,147,483,647 calls`, or the calls around the one that carries a
/// cell past `INT32_MAX`.
pub fn windows(ws: &[WrapStart]) -> String {
    let mut parts: Vec<String> = ws
        .iter()
        .map(|w| match (w.crosses, w.horizon) {
            (true, Some(h)) => format!(
                "from call index {}, around call index {} that carries a cell past INT32_MAX",
                thousands(w.first_call as u64),
                thousands(h as u64)
            ),
            (false, Some(h)) => format!(
                "the last declared calls, from call index {}; horizon {} calls",
                thousands(w.first_call as u64),
                thousands(h as u64)
            ),
            (_, None) => format!(
                "from call index {}; no monotonic cell receives credits",
                thousands(w.first_call as u64)
            ),
        })
        .collect();
    parts.dedup();
    if parts.is_empty() {
        "not started".into()
    } else {
        parts.join(" | ")
    }
}

/// `relaxed memory, fresh windows per call: P=2, 1 tile, 2 calls: 310 states, complete`.
fn fence_run(r: &FenceRun) -> String {
    match r {
        FenceRun::Found(w) => format!("relaxed memory, P={w}"),
        FenceRun::Explored(attempts) => {
            let parts: Vec<String> = attempts
                .iter()
                .map(|a| match a {
                    FenceAttempt::Complete(w, t, states) => format!(
                        "P={w}, {}, 2 calls: {states} states, complete",
                        if *t > 1 {
                            format!("1..{t} tiles")
                        } else {
                            "1 tile".to_string()
                        }
                    ),
                    FenceAttempt::Budget(w) => format!("P={w} not explored completely (budget)"),
                })
                .collect();
            format!(
                "relaxed memory, fresh windows per call: {}",
                if parts.is_empty() {
                    "nothing explored".to_string()
                } else {
                    parts.join("; ")
                }
            )
        }
    }
}

/// The tile bound in words, when the protocol has a parameter that sizes a window.
fn tiles_text(shape: Option<GridShape>, t: i64) -> Option<String> {
    match shape {
        Some(s) if !s.tiles => None,
        _ if t <= 1 => Some("1 tile".into()),
        _ => Some(format!("1..{t} tiles")),
    }
}

/// `P=2, 1..3 tiles, 3 calls` (the parts the protocol has).
pub fn bounds_text(ps: &str, shape: Option<GridShape>, t: i64, c: usize) -> String {
    let mut parts = vec![ps.to_string()];
    parts.extend(tiles_text(shape, t));
    parts.push(calls_text(c));
    if shape.is_some_and(|s| s.roots) {
        parts.push("every root".into());
    }
    parts.join(", ")
}

/// `P=2, C=5, 4 tiles, 2 calls` (the parts the protocol has).
pub fn probe_bounds_text(label: &str, shape: Option<GridShape>, t: i64, c: usize) -> String {
    let mut parts = vec![label.to_string()];
    match shape {
        Some(s) if !s.tiles => {}
        _ if t == 1 => parts.push("1 tile".into()),
        _ => parts.push(format!("{t} tiles")),
    }
    parts.push(calls_text(c));
    if shape.is_some_and(|s| s.roots) {
        parts.push("every root".into());
    }
    parts.join(", ")
}

/// `1 call`, `3 calls`.
pub fn calls_text(c: usize) -> String {
    format!("{c} call{}", if c == 1 { "" } else { "s" })
}

/// `P=3`, `P=2..5` or `P=2,4,8`.
pub fn group_text(ps: &[i64]) -> String {
    match ps {
        [] => String::new(),
        [p] => format!("P={p}"),
        [a, .., b] if (b - a) as usize + 1 == ps.len() => format!("P={a}..{b}"),
        _ => format!(
            "P={}",
            ps.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// `11,701`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_sizes_are_joined() {
        assert_eq!(
            sizes_text(&[19, 20, 21, 22, 40, 41, 60]),
            "19..=22, 40, 41, 60"
        );
    }
}
