//! The same collective written self-clearing and with epoch (monotonic) signals, side by
//! side in `collc cost`'s counts per call: the epoch version keeps every remote atomic and
//! every wait and drops the local resets and the epilogue's fence. The table in
//! `docs/disciplines.md` is these numbers.

use collc_verifier::cost::cost;
use std::collections::BTreeMap;

fn protocol(path: &str) -> collc_spec::ir::Protocol {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).expect("read .coll");
    let c = collc_verifier::validate(&text);
    c.protocol
        .unwrap_or_else(|| panic!("{path}: {:?}", c.diagnostics))
}

/// (remote atomics, local notifies, waits, fences) per call at P (and n = 1000).
fn counts(path: &str, world: i64) -> [i64; 4] {
    let p = protocol(path);
    let mut given = BTreeMap::from([(p.var_name(p.world).to_string(), world)]);
    if p.vars.iter().any(|v| v.name == "n") {
        given.insert("n".to_string(), 1000);
    }
    let r = cost(&p, &given).expect("cost");
    let mut out = [0; 4];
    for (i, row) in r.rows.iter().enumerate() {
        out[i] = row
            .value
            .unwrap_or_else(|| panic!("{path}: {} has no value", row.what));
    }
    out
}

/// Pairs of (self-clearing, epoch) files of one collective.
const PAIRS: [(&str, &str); 2] = [
    (
        "verifier/tests/disciplines/centralized_self_clearing.coll",
        "examples/sense_reversing_barrier.coll",
    ),
    (
        "verifier/tests/disciplines/allpairs_self_clearing.coll",
        "examples/epoch_allreduce.coll",
    ),
];

#[test]
fn epoch_signals_drop_the_resets_and_keep_the_atomics_and_waits() {
    for (clearing, epoch) in PAIRS {
        for world in [2, 4, 8, 16] {
            let c = counts(clearing, world);
            let e = counts(epoch, world);
            eprintln!("P={world}: {clearing} {c:?} | {epoch} {e:?}");
            assert_eq!(
                c[0], e[0],
                "remote atomics at P={world}: {clearing} vs {epoch}"
            );
            assert_eq!(c[2], e[2], "waits at P={world}: {clearing} vs {epoch}");
            assert!(c[1] > 0, "{clearing} resets its cells locally");
            assert_eq!(e[1], 0, "{epoch} has no local notify (nothing is reset)");
            assert!(e[3] < c[3], "{epoch} drops the epilogue's fence");
        }
    }
}
