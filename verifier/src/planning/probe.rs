//! Parameter values and world sizes past the bounded grid that the protocol's literals name:
//! the assignments the bounded search explores besides its ladder (`bounded::Probe`).
//!
//! The ladder tries P=2..8, 1..3 tiles per element count and the lowest two values of every
//! other integer parameter. A protocol whose behaviour changes at a value past those — a
//! guard `C > 4`, a clamp `min(C, 4)`, a loop capped at `min(P, 12)`, a ring of 3 slots
//! behind a window of 4 chunks — passes the ladder and fails at that value. The values a
//! literal names are where such changes sit, so each is run once at the ladder's smallest
//! bounds:
//!
//! - [`worlds`]: P = t + 1 and t + 2 for every literal t in 9..=16 (in the declared domain);
//! - [`tile_counts`]: t + 1 tiles for every literal t in 3..=8 (the first count at which a
//!   loop over chunks reaches index t: `t % 3`, `t < 4`), at P = 2;
//! - [`param_values`]: t and t + 1 for every literal t an integer parameter (other than an
//!   element count) is compared with (`==`, `<`, `min`, `max`, ...; through `let`s),
//!   within its domain and past the grid's lowest two values, at P = 2;
//! - [`ring_values`]: the lowest two values of a parameter that sizes a window and is an
//!   index's modulus (the slots of a ring, `ring[t % K]`), each with K + 1 tiles, at P = 2;
//! - [`ring_tiles`]: S + 1 tiles for a ring of S slots, S a literal or `const` modulus
//!   (`ring[t % 16]`) past 8, up to 64 tiles, at P = 2.
//!
//! A literal is an integer in an expression or a `const`. What is not looked for: a value
//! no literal names, a literal past these ranges (P past 16 only where `pair_order` finds an
//! unordered pair; a ring past 63 slots), two parameters both past their grid values at once, a parameter
//! compared with another parameter (`min(C, stride)`) or with a loop variable, and sizes
//! no literal names (`pow2`, products of parameters).
//!
//! The ranges (9..=16, 3..=8, the ladder's bounds, the scan to 256) are the planner's
//! table's ([`TABLE`]).

use super::TABLE;
use collc_spec::eval::{self, Env};
use collc_spec::info::{Local, ProtocolInfo};
use collc_spec::ir::{Cond, Expr, Protocol, VarId, VarKind};
use std::collections::BTreeSet;

/// The literals of `info` ([`ProtocolInfo::literals`]: every integer of the protocol's
/// top-level `let`s, `require`s, body and epilogue) and the values of the `const`s,
/// ascending, once each.
pub fn constants(p: &Protocol, info: &ProtocolInfo) -> Vec<i64> {
    let mut out = info.literals.clone();
    out.extend(p.vars.iter().filter_map(|v| match v.kind {
        VarKind::Const(c) => Some(c),
        _ => None,
    }));
    out.sort_unstable();
    out.dedup();
    out
}

/// World sizes past the ladder that a literal names: t + 1 and t + 2 for every literal t in
/// the table's `world_literals`, within the declared world domain, ascending; `info` is
/// `p`'s.
pub fn worlds(p: &Protocol, info: &ProtocolInfo) -> Vec<i64> {
    let (lo, hi) = super::declared_world(p);
    let (min, max) = TABLE.world_literals;
    let mut out: BTreeSet<i64> = constants(p, info)
        .into_iter()
        .filter(|t| (min..=max).contains(t))
        .flat_map(|t| [t + 1, t + 2])
        .collect();
    // A comparison on P changes at P = x; one on a rank or a loop variable (which the
    // world size bounds) at x is first reached at P = x + 1.
    for (v, x) in change_points(p, info) {
        let first = match p.vars[v].kind {
            VarKind::World { .. } => x,
            VarKind::Me | VarKind::Loop | VarKind::Param { domain: None } => x + 1,
            _ => continue,
        };
        out.extend([first, first + 1]);
    }
    out.into_iter()
        .filter(|w| (lo..=hi).contains(w) && (min + 1..=max + 2).contains(w))
        .collect()
}

/// Tile counts past the ladder's that a literal names: t + 1 for every literal t in
/// the ladder's largest tile count up to the table's `tile_literal_max`, ascending; none when no parameter sizes a window.
pub fn tile_counts(p: &Protocol, info: &ProtocolInfo) -> Vec<i64> {
    if !collc_sim::bounded::grid_shape(p).tiles {
        return Vec::new();
    }
    let out: BTreeSet<i64> = constants(p, info)
        .into_iter()
        .filter(|t| (TABLE.ladder.tiles.1..=TABLE.tile_literal_max).contains(t))
        .map(|t| t + 1)
        .collect();
    out.into_iter().collect()
}

/// Tile counts at which a ring of a literal number of slots wraps: S + 1 for every `%`
/// modulus S that is a literal or a `const` (`ring[t % 16]`), past the table's
/// `tile_literal_max` (smaller ones are [`tile_counts`]'s) and up to its `ring_tiles_max`,
/// ascending; none when no parameter sizes a window. A ring of S slots behind a window of
/// more than S chunks races only once it wraps, at S + 1 chunks, however large S is.
pub fn ring_tiles(p: &Protocol, info: &ProtocolInfo) -> Vec<i64> {
    if !collc_sim::bounded::grid_shape(p).tiles {
        return Vec::new();
    }
    let consts = info.moduli.iter().filter_map(|v| match p.vars[*v].kind {
        VarKind::Const(c) => Some(c),
        _ => None,
    });
    let out: BTreeSet<i64> = info
        .literal_moduli
        .iter()
        .copied()
        .chain(consts)
        .filter(|s| *s > TABLE.tile_literal_max)
        .map(|s| s + 1)
        .filter(|t| *t <= TABLE.ring_tiles_max)
        .collect();
    out.into_iter().collect()
}

/// The integer parameters with a domain that no window or tile is sized by (the grid gives
/// them their lowest values, not tiles), in declaration order.
pub fn plain_params(p: &Protocol) -> Vec<VarId> {
    let sizing = collc_sim::bounded::sizing_params(p);
    p.inputs()
        .into_iter()
        .filter(|v| {
            matches!(p.vars[*v].kind, VarKind::Param { domain: Some(_) }) && !sizing.contains(v)
        })
        .collect()
}

/// The variables `e` reads, through top-level `let`s and the statement-level `let`s of
/// `locals` (variable, value).
fn reads(p: &Protocol, locals: &[Local], e: &Expr) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    let mut stack = vec![e.clone()];
    while let Some(e) = stack.pop() {
        e.for_each_var(&mut |v| {
            if out.insert(v) {
                if let VarKind::Derived(d) = &p.vars[v].kind {
                    stack.push(d.clone());
                }
                stack.extend(locals.iter().filter(|l| l.0 == v).map(|l| l.1.clone()));
            }
        });
    }
    out
}

/// The literals of `e` (its `Int`s and the values of the `const`s it reads) when it reads
/// nothing else; `None` when it reads a parameter, a rank, a loop variable, ...
fn constant_side(p: &Protocol, e: &Expr) -> Option<Vec<i64>> {
    let mut vals = Vec::new();
    let mut ok = true;
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Int(n) => vals.push(*n),
            Expr::Var(v) => match p.vars[*v].kind {
                VarKind::Const(c) => vals.push(c),
                _ => ok = false,
            },
            Expr::Array(..) => ok = false,
            Expr::Neg(a) | Expr::Rank(a) | Expr::Log2(a) | Expr::Pow2(a) => stack.push(a),
            Expr::Bin(_, a, b) | Expr::CeilDiv(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
                stack.push(a);
                stack.push(b);
            }
        }
    }
    ok.then_some(vals)
}

/// The literals each variable is compared with: for every comparison, `min` and `max` of
/// the protocol whose one side reads the variable (through `let`s) and whose
/// other side is literals and `const`s only, that side's literals.
fn thresholds(p: &Protocol, info: &ProtocolInfo) -> Vec<(VarId, i64)> {
    let mut out = Vec::new();
    for c in &info.comparisons {
        let Cond::Cmp(_, a, b) = c else { continue };
        for (x, c) in [(a, b), (b, a)] {
            let Some(ts) = constant_side(p, c) else {
                continue;
            };
            for v in reads(p, &info.locals, x) {
                out.extend(ts.iter().map(|t| (v, *t)));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Where a comparison changes its truth as the one variable it reads varies: for every
/// comparison (and `min`/`max`) of the protocol's `let`s, body and epilogue
/// ([`ProtocolInfo::comparisons`]; not the `require`s: they bound the domain,
/// `P & (P - 1) == 0`, they change no behaviour inside it) reading
/// exactly one variable besides
/// `const`s (through `let`s) — a parameter, the world size, a rank, a loop variable — each
/// x in 1..= the table's `change_max` at which it evaluates differently than at x - 1 (`d * 3 < 40`:
/// d = 14; `min(C, 4)`: C = 5); (variable, x), ascending.
pub fn change_points(p: &Protocol, info: &ProtocolInfo) -> Vec<(VarId, i64)> {
    let locals = &info.locals;
    let mut out: BTreeSet<(VarId, i64)> = BTreeSet::new();
    for c in &info.comparisons {
        let Cond::Cmp(_, a, b) = c else { continue };
        let mut vs = reads(p, locals, a);
        vs.extend(reads(p, locals, b));
        vs.retain(|v| {
            !matches!(
                p.vars[*v].kind,
                VarKind::Const(_) | VarKind::Derived(_) | VarKind::Local
            )
        });
        let [v] = vs.into_iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        let truth = |x: i64| -> Option<bool> {
            let mut env = Env::new(p);
            env.set(v, x);
            env.set_top_level(p);
            for _ in 0..locals.len().min(8) {
                for (l, e) in locals {
                    if let Ok(y) = eval::eval(p, e, &env) {
                        env.set(*l, y);
                    }
                }
            }
            eval::eval_cond(p, c, &env).ok()
        };
        let mut prev = truth(0);
        for x in 1..=TABLE.change_max {
            let now = truth(x);
            if let (Some(a), Some(b)) = (prev, now) {
                if a != b {
                    out.insert((v, x));
                }
            }
            prev = now;
        }
    }
    out.into_iter().collect()
}

/// Slot counts of rings: every integer parameter that sizes a window or tile (so the grid
/// gives it tile multiples, clamped to its domain: the top of a small domain) and is the
/// modulus of an expression (`ring[t % K]`, also through `let`s), at the lowest
/// `small_ints` values of its domain, each with the tile count at which the ring wraps
/// (K + 1 chunks): a ring of K slots behind a window of more than K chunks races only once
/// it wraps, which the grid's largest K never does within its tiles. (parameter, value,
/// tiles), by parameter then value.
pub fn ring_values(p: &Protocol, info: &ProtocolInfo) -> Vec<(VarId, i64, i64)> {
    let sizing = collc_sim::bounded::sizing_params(p);
    let mut out = Vec::new();
    for v in info.moduli.iter().copied().filter(|v| sizing.contains(v)) {
        let VarKind::Param {
            domain: Some((lo, hi)),
        } = p.vars[v].kind
        else {
            continue;
        };
        for x in (lo.max(1)..=hi).take(TABLE.ladder.small_ints as usize) {
            out.push((v, x, x + 1));
        }
    }
    out
}

/// Values of the [`plain_params`] past the grid's (the ladder's `small_ints` lowest) that a literal
/// they are compared with names: t and t + 1 (`x > t` changes at t + 1, `x >= t`, `x != t`
/// at t), within the domain; (parameter, value), by parameter then value.
pub fn param_values(p: &Protocol, info: &ProtocolInfo) -> Vec<(VarId, i64)> {
    let plain = plain_params(p);
    let mut out: BTreeSet<(VarId, i64)> = BTreeSet::new();
    for (v, t) in thresholds(p, info) {
        let Some((lo, hi)) = plain_domain(p, &plain, v) else {
            continue;
        };
        for x in [t, t + 1] {
            if x >= lo.saturating_add(TABLE.ladder.small_ints) && x <= hi {
                out.insert((v, x));
            }
        }
    }
    for (v, x) in change_points(p, info) {
        if let Some((lo, hi)) = plain_domain(p, &plain, v) {
            if x >= lo.saturating_add(TABLE.ladder.small_ints) && x <= hi {
                out.insert((v, x));
            }
        }
    }
    out.into_iter().collect()
}

/// The declared domain of `v` when it is one of the `plain` parameters ([`plain_params`]).
pub fn plain_domain(p: &Protocol, plain: &[VarId], v: VarId) -> Option<(i64, i64)> {
    match p.vars[v].kind {
        VarKind::Param {
            domain: Some((lo, hi)),
        } if plain.contains(&v) => Some((lo, hi)),
        _ => None,
    }
}

/// The values of a parameter with domain `lo..=hi` that `pair_order` tries concretely: its
/// first ones (the table's `pinned_first`), the top of the domain, and `t - 1 ..= t + 2` for every literal t; ascending.
pub fn candidates(lo: i64, hi: i64, lits: &[i64]) -> Vec<i64> {
    let mut out: BTreeSet<i64> = (lo..=hi).take(TABLE.pinned_first).collect();
    out.insert(hi);
    for t in lits {
        out.extend((t.saturating_sub(1)..=t.saturating_add(2)).filter(|x| (lo..=hi).contains(x)));
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(text: &str) -> collc_spec::Validated {
        collc_spec::front(&crate::Ranges, text)
            .protocol
            .expect("the case validates")
    }

    fn bug(name: &str) -> collc_spec::Validated {
        let path = format!(
            "{}/../examples/bugs/{name}.coll",
            env!("CARGO_MANIFEST_DIR")
        );
        protocol(&std::fs::read_to_string(path).expect("read"))
    }

    fn example(name: &str) -> collc_spec::Validated {
        let path = format!("{}/../examples/{name}.coll", env!("CARGO_MANIFEST_DIR"));
        protocol(&std::fs::read_to_string(path).expect("read"))
    }

    // The planner's functions with the protocol's own facts.
    fn worlds(p: &Protocol) -> Vec<i64> {
        super::worlds(p, &ProtocolInfo::of(p))
    }
    fn tile_counts(p: &Protocol) -> Vec<i64> {
        super::tile_counts(p, &ProtocolInfo::of(p))
    }
    fn param_values(p: &Protocol) -> Vec<(VarId, i64)> {
        super::param_values(p, &ProtocolInfo::of(p))
    }
    fn change_points(p: &Protocol) -> Vec<(VarId, i64)> {
        super::change_points(p, &ProtocolInfo::of(p))
    }

    fn named(p: &Protocol, vs: &[(VarId, i64)]) -> Vec<(String, i64)> {
        vs.iter()
            .map(|(v, x)| (p.var_name(*v).to_string(), *x))
            .collect()
    }

    #[test]
    fn a_capped_row_loop_names_the_sizes_just_past_its_cap() {
        assert_eq!(worlds(&bug("allgather_row_cap")), vec![13, 14]);
        // 256 is past the range, 0, 1, 2 are on the ladder
        assert!(worlds(&example("allgather")).is_empty());
    }

    #[test]
    fn world_sizes_stay_in_the_declared_domain() {
        let p = protocol(
            "collective c: barrier() {
                ranks P in 1..=13;
                signal s[P];
                body { for d in 0..min(P, 12) { notify s[me] @ rank(d) += 1; } }
                epilogue { }
            }",
        );
        assert_eq!(worlds(&p), vec![13]);
    }

    #[test]
    fn a_short_ring_names_the_tile_count_past_its_slots() {
        // `ring[t % 3]` and `const K = 4`: 4 and 5 tiles
        assert_eq!(
            tile_counts(&bug("credit_window_pipeline_short_ring")),
            vec![4, 5]
        );
        // K = 2 and 256 name nothing past the ladder's 3 tiles
        assert!(tile_counts(&example("credit_window_pipeline")).is_empty());
        // a barrier sizes no window
        assert!(tile_counts(&example("barrier")).is_empty());
    }

    #[test]
    fn a_ring_of_a_literal_number_of_slots_names_the_tile_count_at_which_it_wraps() {
        let ring = |m: &str| {
            protocol(&format!(
                "collective c: broadcast(root, data) {{
                    ranks P in 1..=8;
                    param root: rank;
                    param n: int in 1..=4096;
                    const S = 20;
                    signal s[64];
                    window data: f32[n] per call;
                    body {{
                        for t in 0..n {{
                            if me != root {{ notify s[t % {m}] @ root += 1; }}
                        }}
                    }}
                    epilogue {{ }}
                }}"
            ))
        };
        let rt = |p: &Protocol| super::ring_tiles(p, &ProtocolInfo::of(p));
        // a literal modulus and a `const` one: S + 1 tiles
        assert_eq!(rt(&ring("12")), vec![13]);
        assert_eq!(rt(&ring("S")), vec![21]);
        // 8 slots are `tile_counts`'s (9 tiles); past 63 slots nothing
        assert!(rt(&ring("8")).is_empty());
        assert!(rt(&ring("64")).is_empty());
        // the shipped short ring (`t % 3`) is `tile_counts`'s
        assert!(rt(&bug("credit_window_pipeline_short_ring")).is_empty());
    }

    #[test]
    fn a_clamp_names_the_values_at_and_past_its_literal() {
        let p = bug("allreduce_mesh_block_cap");
        // `let A = min(C, 4)`; n sizes a window (tiles), so it has no values here
        assert_eq!(
            named(&p, &param_values(&p)),
            vec![("C".into(), 4), ("C".into(), 5)]
        );
        // the shipped mesh clamps with a parameter, not a literal
        let m = example("allreduce_mesh");
        assert!(
            param_values(&m).is_empty(),
            "{:?}",
            named(&m, &param_values(&m))
        );
    }

    #[test]
    fn comparisons_with_loop_variables_or_on_the_grid_name_nothing() {
        let p = protocol(
            "collective c: barrier() {
                ranks P in 1..=8;
                param G: int in 1..=8;
                param H: int in 1..=8;
                signal s[P];
                body {
                    for k in 0..G { if k > 5 { notify s[me] @ rank(0) += 0; } }
                    if H == 2 { notify s[me] @ rank(0) += 0; }
                    if H >= 7 { notify s[me] @ rank(0) += 0; }
                    if H < 9 { notify s[me] @ rank(0) += 0; }
                }
                epilogue { }
            }",
        );
        // `k > 5` reads a loop variable; H == 2 is on the grid (1, 2), H = 3 is not;
        // 9 is past the domain
        assert_eq!(
            named(&p, &param_values(&p)),
            vec![("H".into(), 3), ("H".into(), 7), ("H".into(), 8)]
        );
    }

    #[test]
    fn a_comparison_through_a_statement_let_names_its_parameter() {
        let p = protocol(
            "collective c: barrier() {
                ranks P in 1..=8;
                param L: int in 1..=8;
                signal s[P];
                body {
                    let lane = me % L;
                    if lane != 5 { notify s[me] @ rank(0) += 0; }
                }
                epilogue { }
            }",
        );
        assert_eq!(
            named(&p, &param_values(&p)),
            vec![("L".into(), 5), ("L".into(), 6)]
        );
    }

    #[test]
    fn a_comparison_changes_where_its_one_variable_crosses_it() {
        let p = protocol(
            "collective c: allgather(input, target) {
                ranks P in 1..=65536;
                require P & (P - 1) == 0;
                param m: int in 1..=1024;
                param L: int in 1..=8;
                signal sig[P];
                window input: f32[m] per call;
                window target: f32[P][m] per call;
                body {
                    for d in ranks {
                        if d * 3 < 40 { put target[me][0 .. m] @ d <- input[0 .. m]; }
                    }
                    if L * 2 < 9 { fence; }
                }
                epilogue { }
            }",
        );
        let named = named(&p, &change_points(&p));
        // d = 14 is the first rank past the cap, L = 5 the first lane count; the require
        // (powers of two) bounds the domain and is not scanned
        assert_eq!(named, vec![("L".into(), 5), ("d".into(), 14)]);
        // d = 14 is reached first at P = 15; the literal 9 names P = 10, 11
        assert_eq!(worlds(&p), vec![10, 11, 15, 16]);
        assert_eq!(named_values(&p), vec![("L".into(), 5)]);
    }

    fn named_values(p: &Protocol) -> Vec<(String, i64)> {
        named(p, &param_values(p))
    }

    #[test]
    fn candidates_are_the_first_values_the_top_and_around_the_literals() {
        assert_eq!(candidates(1, 8, &[0, 2]), vec![1, 2, 3, 4, 8]);
        assert_eq!(
            candidates(1, 64, &[20]),
            vec![1, 2, 3, 4, 19, 20, 21, 22, 64]
        );
        assert_eq!(candidates(5, 5, &[100]), vec![5]);
    }
}
