//! The planner: every choice of world sizes, parameter values and budgets the verifier
//! makes, from one table of constants ([`TABLE`]).
//!
//! - the enumerated world sizes ([`enumerated_world`]: the declared domain cut at
//!   `enum_world_max`), and which parameters may be enumerated at all (`enum_limit`,
//!   `config_limit`);
//! - the critical sizes past the enumeration that the protocol's literals form
//!   ([`critical`]), looked at by the enumerated checks, the `fence` obligation and the
//!   pair-order search ([`pair_order_worlds`]);
//! - the bounded search's ladder, relaxed ladder and wrap-around bounds, and its budgets
//!   ([`bounded`]);
//! - what the bounded search explores besides its ladder ([`targets`]): the world sizes
//!   the symbolic analyses name, the critical sizes, and the values past the grid that a
//!   literal names ([`probe`]);
//! - the relaxed check of the `fence` obligation ([`TABLE`]'s `fence_*`).
//!
//! Callers ask the planner; none keeps a size, a value or a budget of its own.

pub mod bounded;
pub mod critical;
pub mod probe;

use bounded::Probe;
use collc_sim::bounded::Bounds;
use collc_spec::info::ProtocolInfo;
use collc_spec::ir::{Protocol, VarKind};
use std::collections::BTreeMap;

/// The one table of the planner's constants (see [`TABLE`]).
#[derive(Debug, Clone)]
pub struct Table {
    /// The largest world size any enumerating component covers: P runs over
    /// `lo..=min(hi, enum_world_max)` of the declared domain, and what is decided that way
    /// holds for those P only (a domain going further gets `checked`, with the bound
    /// stated).
    pub enum_world_max: i64,
    /// Parameters with at most this many values may be enumerated.
    pub enum_limit: i64,
    /// At most this many configurations are enumerated.
    pub config_limit: u64,
    /// The largest world size looked at past the enumerated domain ([`critical`]).
    pub critical_max: i64,
    /// The literals t whose neighbours P = t + 1, t + 2 the bounded search probes
    /// ([`probe::worlds`]).
    pub world_literals: (i64, i64),
    /// The largest literal t whose next tile count t + 1 is probed ([`probe::tile_counts`]).
    pub tile_literal_max: i64,
    /// The largest tile count probed for a ring of a literal number of slots
    /// ([`probe::ring_tiles`]).
    pub ring_tiles_max: i64,
    /// The largest value [`probe::change_points`] scans a variable to.
    pub change_max: i64,
    /// The first values of a parameter's domain the pair-order search pins it to
    /// ([`probe::candidates`]).
    pub pinned_first: usize,
    /// The sc ladder of the bounded search: the largest bounds; smaller ones are tried when
    /// these do not complete.
    pub ladder: Bounds,
    /// World sizes up to which the ladder starts at its full tiles and calls.
    pub full_ranks: i64,
    /// World sizes whose smallest bounds `collc verify` explores whatever the wall clock
    /// says (P=2..8), limited by `bounded_max_states` per assignment.
    pub untimed_ranks: i64,
    /// The relaxed-memory ladder.
    pub relaxed: Bounds,
    /// Distinct states per assignment of a relaxed run.
    pub relaxed_max_states: u64,
    /// The relaxed runs get the budget divided by this.
    pub relaxed_budget_share: u32,
    /// The wrap-around bounds (protocols with a monotonic signal): at least 4 calls keep
    /// calls before and after the wrap in the window.
    pub wrap: Bounds,
    /// Distinct states per assignment of a wrap-around run.
    pub wrap_max_states: u64,
    /// The wrap-around run gets the budget divided by this.
    pub wrap_budget_share: u32,
    /// Bounds of the relaxed check that decides the `fence` obligation's suspect pairs.
    pub fence_relaxed: Bounds,
    /// Distinct states per assignment of that check.
    pub fence_relaxed_max_states: u64,
    /// Wall time of that check, in milliseconds.
    pub fence_relaxed_budget_ms: u64,
    /// The wall-clock safety cap (`--timeout-ms`) of each symbolic obligation of the
    /// enumerated route and of the parametric route as a whole. Each Z3 query is limited
    /// by Z3's deterministic resource limit, not by the clock, so the verdict does not
    /// depend on the machine's load unless this cap is hit, and then the report says so.
    pub timeout_ms: u64,
    /// `collc verify`'s wall-clock budget of the bounded obligations per file
    /// (`--bounded-budget-ms`).
    pub bounded_budget_ms: u64,
    /// The library's default bounded budget (`BoundedOptions::default`).
    pub library_bounded_budget_ms: u64,
    /// Distinct states per parameter assignment (`--bounded-max-states`).
    pub bounded_max_states: u64,
    /// The index-range check's budget per protocol, in Z3 resource units: the sum over its
    /// queries of what each spent (`rlimit count`) plus `range_query_units`. Past it the
    /// bounds left are reported as not checked. Units, not wall time, so which bounds are
    /// checked does not depend on the machine's load.
    pub range_budget_units: u64,
    /// What each range query is charged besides the units Z3 counts: building and
    /// asserting it (about 1 ms of CPU, the time Z3 takes for some 1,600 units).
    pub range_query_units: u64,
}

/// The planner's constants.
pub const TABLE: Table = Table {
    enum_world_max: 16,
    enum_limit: 64,
    config_limit: 500_000,
    critical_max: 256,
    world_literals: (9, 16),
    tile_literal_max: 8,
    ring_tiles_max: 64,
    change_max: 256,
    pinned_first: 4,
    ladder: Bounds {
        ranks: (2, 8),
        tiles: (1, 3),
        calls: 3,
        small_ints: 2,
    },
    full_ranks: 4,
    untimed_ranks: 8,
    relaxed: Bounds {
        ranks: (2, 3),
        tiles: (1, 2),
        calls: 2,
        small_ints: 1,
    },
    relaxed_max_states: 150_000,
    relaxed_budget_share: 2,
    wrap: Bounds {
        ranks: (2, 4),
        tiles: (1, 1),
        calls: 4,
        small_ints: 1,
    },
    wrap_max_states: 100_000,
    wrap_budget_share: 4,
    fence_relaxed: Bounds {
        ranks: (2, 3),
        tiles: (1, 1),
        calls: 2,
        small_ints: 2,
    },
    fence_relaxed_max_states: 5_000,
    fence_relaxed_budget_ms: 3_000,
    timeout_ms: 60_000,
    bounded_budget_ms: 8_000,
    library_bounded_budget_ms: 2_500,
    bounded_max_states: 200_000,
    range_budget_units: 20_000_000,
    range_query_units: 2_000,
};

/// The declared world-size domain.
pub fn declared_world(p: &Protocol) -> (i64, i64) {
    match p.vars[p.world].kind {
        VarKind::World { lo, hi } => (lo, hi),
        _ => (1, 1),
    }
}

/// The world sizes an enumeration covers: the declared domain cut at the table's
/// `enum_world_max` (`None` when the domain starts above it).
pub fn enumerated_world(p: &Protocol) -> Option<(i64, i64)> {
    let (lo, hi) = declared_world(p);
    let hi = hi.min(TABLE.enum_world_max);
    (lo <= hi).then_some((lo, hi))
}

/// The world sizes of [`enumerated_world`], ascending (none when it enumerates none).
pub fn enumerated_worlds(p: &Protocol) -> Vec<i64> {
    enumerated_world(p).map_or(Vec::new(), |(lo, hi)| (lo..=hi).collect())
}

/// The world sizes the pair-order search looks at: the enumerated domain ascending, then
/// the critical sizes past it; `info` is `p`'s.
pub fn pair_order_worlds(p: &Protocol, info: &ProtocolInfo) -> Vec<i64> {
    let mut out = enumerated_worlds(p);
    out.extend(critical::past_enumeration(p, info));
    out
}

/// What the symbolic half found that the bounded search should look at.
#[derive(Debug, Default)]
pub struct Named {
    /// World sizes a refuted question of the parametric route names.
    pub refuted: Vec<i64>,
    /// World sizes a warning's counterexample names.
    pub warned: Vec<i64>,
    /// The first configuration at which the pair-order search found two ranks the
    /// collective's meaning orders with no notify -> wait chain between them.
    pub unordered: Option<BTreeMap<String, i64>>,
}

/// What the bounded search explores besides its ladder: `(target world sizes, probes)`.
///
/// Target world sizes (each at the smallest bounds): where Z3 refuted a question of the
/// parametric route; where a warning's counterexample names one (a warning refutes a
/// question the verdict does not count, and what it hides may break the collective only at
/// that size); the world size of an unordered pair when that is all it names; and the
/// critical sizes past the enumeration, as far as the simulator runs (a data bug such as
/// `for d in 0..min(P, 20)` breaks no credit or order, only the result). Probes: an
/// unordered pair that also names parameter values (required), then the values past the
/// grid that the protocol's literals name ([`literal_probes`]).
/// `info` is `p`'s.
pub fn targets(p: &Protocol, info: &ProtocolInfo, named: Named) -> (Vec<i64>, Vec<Probe>) {
    let world = &p.vars[p.world].name;
    let mut probes = Vec::new();
    let mut unordered_world = Vec::new();
    if let Some(found) = named.unordered {
        match found.get(world) {
            Some(w) if found.len() == 1 => unordered_world.push(*w),
            _ => probes.push(Probe {
                fixed: found,
                tiles: 1,
                required: true,
            }),
        }
    }
    let past: Vec<i64> = critical::past_enumeration(p, info)
        .into_iter()
        .filter(|w| *w <= collc_sim::code::MAX_WORLD)
        .collect();
    let mut worlds: Vec<i64> = Vec::new();
    for w in named
        .refuted
        .iter()
        .chain(&named.warned)
        .chain(&unordered_world)
        .chain(&past)
    {
        if !worlds.contains(w) {
            worlds.push(*w);
        }
    }
    probes.extend(literal_probes(p, info));
    (worlds, probes)
}

/// The assignments past the bounded grid that the protocol's literals name (`probe.rs`):
/// world sizes just past a literal of the table's `world_literals`, then at the smallest
/// world size of the ladder (P = 2 when the domain has it) tile counts just past a literal
/// up to `tile_literal_max` and those at which a ring of a literal number of slots wraps
/// ([`probe::ring_tiles`]), then each integer parameter at the values at and past the
/// literals it is compared with, then the slot counts of rings ([`probe::ring_values`]).
fn literal_probes(p: &Protocol, info: &ProtocolInfo) -> Vec<Probe> {
    let world = p.vars[p.world].name.clone();
    let (lo, hi) = declared_world(p);
    let small = lo.max(TABLE.ladder.ranks.0);
    let at = |fixed: &[(String, i64)], tiles| Probe {
        fixed: fixed.iter().cloned().collect(),
        tiles,
        required: false,
    };
    let mut out: Vec<Probe> = probe::worlds(p, info)
        .into_iter()
        .map(|w| at(&[(world.clone(), w)], 1))
        .collect();
    if small > hi {
        return out;
    }
    let mut tiles = probe::tile_counts(p, info);
    tiles.extend(probe::ring_tiles(p, info));
    out.extend(tiles.into_iter().map(|t| at(&[(world.clone(), small)], t)));
    out.extend(
        probe::param_values(p, info)
            .into_iter()
            .map(|(v, x)| at(&[(world.clone(), small), (p.var_name(v).to_string(), x)], 1)),
    );
    out.extend(
        probe::ring_values(p, info)
            .into_iter()
            .map(|(v, x, tiles)| {
                at(
                    &[(world.clone(), small), (p.var_name(v).to_string(), x)],
                    tiles,
                )
            }),
    );
    out
}
