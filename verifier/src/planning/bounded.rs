//! The plan of the bounded search: its budgets, its ladder of bounds (sc, relaxed,
//! wrap-around), and the assignments it explores besides the ladder. The numbers are the
//! table's ([`TABLE`]); what to explore past the ladder is chosen in `super::targets`.

use super::TABLE;
use collc_sim::bounded::Bounds;
use collc_sim::StopFlag;
use std::collections::BTreeMap;
use std::time::Duration;

/// Options of the bounded obligations.
#[derive(Debug, Clone)]
pub struct BoundedOptions {
    /// Wall time for the whole file (every fallback).
    pub budget: Duration,
    /// Distinct states per parameter assignment before an attempt is abandoned.
    pub max_states: u64,
    /// The file name used in replay commands.
    pub file: String,
    /// The largest bounds; smaller ones are tried when these do not complete.
    pub bounds: Bounds,
    /// The largest bounds of the relaxed-memory runs (no partial-order reduction there).
    pub relaxed_bounds: Bounds,
    /// Distinct states per parameter assignment of a relaxed run.
    pub relaxed_max_states: u64,
    /// The largest bounds of the wrap-around run (protocols with a monotonic signal):
    /// at least 4 calls keep calls before and after the wrap in the window.
    pub wrap_bounds: Bounds,
    /// Distinct states per parameter assignment of a wrap-around run.
    pub wrap_max_states: u64,
    /// World sizes up to which the ladder starts at the full tiles and calls of `bounds`;
    /// larger world sizes of `bounds.ranks` start at its smallest rung (1 tile, 2 calls).
    pub full_ranks: i64,
    /// World sizes explored in addition to `bounds.ranks` (a P the symbolic analysis
    /// names), each at the smallest bounds (1 tile, 2 calls, every root), after the
    /// ladder, stated in the scope as `targeted P=...`. Values outside the protocol's
    /// world domain or already in `bounds.ranks` are ignored; one that is not explored
    /// completely leaves the obligation `unknown`. The relaxed runs do not take them.
    pub target_worlds: Vec<i64>,
    /// Assignments explored after `target_worlds` (a value past the grid that a literal
    /// names, `crate::probe`; an unordered pair's parameter values, `crate::engine::pair_order`),
    /// each at 2 calls and its tiles, the parameters it does not fix over the grid's values,
    /// stated in the scope as `targeted P=2, C=5, ...`. One the grid already covers, or
    /// whose fixed values no domain or `require` admits, is skipped. The relaxed runs do not
    /// take them.
    pub probes: Vec<Probe>,
    /// Stops the check when set (a cancelled editor request): the running search stops
    /// within a few hundred states, as if the budget were spent.
    pub stop: Option<StopFlag>,
    /// The floor of the ladder — the smallest world size at the smallest bounds — is
    /// explored up to `max_states` states per assignment whatever the wall clock says
    /// (only the stop flag ends it earlier), so whether it completes does not depend on
    /// the machine's load. The relaxed runs set it (`check`): their smallest instance is
    /// limited by states, not time.
    pub untimed_floor: bool,
    /// Every world size of `bounds.ranks` up to this one is explored at the smallest
    /// bounds (1 tile, 2 calls) up to `max_states` states per assignment whatever the
    /// wall clock says (only the stop flag ends it earlier), also once the time budget
    /// is spent (the larger bounds it did not reach are skipped), so how far the ladder
    /// reaches does not depend on the machine's load — until a counterexample is found
    /// (the verdict is then `violated` whatever else completes). Default 0 (every attempt within
    /// the time budget); `collc verify` sets the table's `untimed_ranks`
    /// (8: the sc ladder's P=2..8). The relaxed and wrap-around runs do not take it.
    pub untimed_ranks: i64,
}

/// An assignment the bounded search explores besides its ladder
/// ([`BoundedOptions::probes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The parameters it fixes, the world size among them.
    pub fixed: BTreeMap<String, i64>,
    /// Tiles per element count (1: the ladder's smallest bounds).
    pub tiles: i64,
    /// Named by an analysis that certainly expects a failure there (`pair_order`): run
    /// within the time budget, and one not explored completely leaves the obligations
    /// `unknown`, like a target world. Otherwise (a value a literal names) it is limited
    /// by states only, like the ladder's floor, while no counterexample is found, so whether
    /// it completes does not depend on the load; one that does not complete is stated in
    /// the scope and changes no status.
    pub required: bool,
}

impl BoundedOptions {
    /// True once the stop flag is set.
    pub(crate) fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl Default for BoundedOptions {
    /// The library's defaults (a 2.5 s budget, nothing explored untimed past the floor);
    /// `collc verify`'s are [`BoundedOptions::cli`].
    fn default() -> Self {
        BoundedOptions {
            budget: Duration::from_millis(TABLE.library_bounded_budget_ms),
            max_states: TABLE.bounded_max_states,
            file: "FILE".into(),
            bounds: TABLE.ladder,
            relaxed_bounds: TABLE.relaxed,
            relaxed_max_states: TABLE.relaxed_max_states,
            wrap_bounds: TABLE.wrap,
            wrap_max_states: TABLE.wrap_max_states,
            full_ranks: TABLE.full_ranks,
            target_worlds: Vec::new(),
            probes: Vec::new(),
            stop: None,
            untimed_floor: false,
            untimed_ranks: 0,
        }
    }
}

impl BoundedOptions {
    /// What `collc verify` (and the gate of `emit`/`run`) runs without flags: the
    /// command line's budget, and P up to the table's `untimed_ranks` at the floor
    /// whatever the clock says.
    pub fn cli() -> Self {
        BoundedOptions {
            budget: Duration::from_millis(TABLE.bounded_budget_ms),
            max_states: TABLE.bounded_max_states,
            untimed_ranks: TABLE.untimed_ranks,
            ..BoundedOptions::default()
        }
    }

    /// The relaxed-memory run of these options: its own bounds and states, a share of
    /// the budget, no targets or probes, the floor limited by states only.
    pub(crate) fn relaxed(&self) -> Self {
        BoundedOptions {
            bounds: self.relaxed_bounds.clone(),
            target_worlds: Vec::new(),
            probes: Vec::new(),
            max_states: self.relaxed_max_states,
            budget: self.budget / TABLE.relaxed_budget_share,
            untimed_floor: true,
            untimed_ranks: 0,
            ..self.clone()
        }
    }

    /// The wrap-around run of these options: its own bounds and states, a share of the
    /// budget, no targets or probes.
    pub(crate) fn wrapped(&self) -> Self {
        BoundedOptions {
            bounds: self.wrap_bounds.clone(),
            target_worlds: Vec::new(),
            probes: Vec::new(),
            max_states: self.wrap_max_states,
            budget: self.budget / TABLE.wrap_budget_share,
            untimed_floor: false,
            untimed_ranks: 0,
            ..self.clone()
        }
    }
}
