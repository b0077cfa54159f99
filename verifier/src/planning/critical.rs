//! The world sizes past the enumerated domain (`1..=enum_world_max` of the planner's table) where a protocol's
//! behaviour can change: where a guard or loop bound can change which ranks do what
//! (`me < 20`, `1..min(P, 20)`, `p * 3 < 50`, `if P < 21 { fence; }`). Those are the sizes
//! around the thresholds the protocol's literals form: `t - 1 ..= t + 2` for every literal
//! `t` of a comparison or expression that also reads a rank-valued quantity (the world
//! size, a rank, or what is computed from them: [`ProtocolInfo::rank_literals`]: a literal
//! only compared with element counts, `min(n, 256)`, `8 * ceil(n / 8)`, cannot change which
//! ranks do what, and names no world size) and every sum, difference,
//! product and quotient of two of them, in the declared domain, up to the table's
//! `critical_max` ([`TABLE`]). A protocol whose literals are
//! all small (the usual 0, 1, 2) gets none and costs nothing more; a change of behaviour at
//! a size no literal names (a power of two of `me ^ d`, a literal past 256) is not looked
//! for. The enumerating obligations that cannot be proved with P symbolic (the pair-order
//! search, the `fence` obligation's enumerated route, and the credit obligations and
//! `value-signal` left `checked` by enumeration: `crate::obligations::past`) look at these sizes too.

use super::{declared_world, TABLE};
use collc_spec::info::ProtocolInfo;
use collc_spec::ir::Protocol;

/// The sizes past the enumerated domain (module documentation), ascending, once each;
/// `info` is `p`'s.
pub fn past_enumeration(p: &Protocol, info: &ProtocolInfo) -> Vec<i64> {
    let (lo, hi) = declared_world(p);
    let top = hi.min(TABLE.critical_max);
    let mut lits: Vec<i64> = info
        .rank_literals
        .iter()
        .copied()
        .filter(|t| t.abs() <= TABLE.critical_max)
        .collect();
    lits.sort_unstable();
    lits.dedup();
    let mut thresholds: Vec<i64> = lits.clone();
    for a in &lits {
        for b in &lits {
            thresholds.extend([a + b, a - b, a * b]);
            if *b != 0 {
                thresholds.push(a / b);
            }
        }
    }
    let mut extra: Vec<i64> = thresholds
        .into_iter()
        .flat_map(|t| t - 1..=t + 2)
        .filter(|w| *w > TABLE.enum_world_max && *w >= lo && *w <= top)
        .collect();
    extra.sort_unstable();
    extra.dedup();
    extra
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The protocol of a test case's text.
    pub(crate) fn protocol(text: &str) -> collc_spec::Validated {
        collc_spec::front(&crate::Ranges, text)
            .protocol
            .expect("the case validates")
    }

    fn past(p: &Protocol) -> Vec<i64> {
        past_enumeration(p, &ProtocolInfo::of(p))
    }

    const GUARDED: &str = "collective c: barrier() {
        ranks P in 1..=65536;
        signal s[1];
        body { if P < 21 { fence; } }
    }";

    #[test]
    fn a_literal_guard_names_the_sizes_around_it() {
        let w = past(&protocol(GUARDED));
        for x in [20, 21, 22, 23] {
            assert!(w.contains(&x), "{x} in {w:?}");
        }
        assert!(w
            .iter()
            .all(|x| *x > TABLE.enum_world_max && *x <= TABLE.critical_max));
        // a domain that ends below the threshold names none of them
        let small = protocol(&GUARDED.replace("65536", "16"));
        assert!(past(&small).is_empty());
    }
}
