//! The same collective written self-clearing and with epoch (monotonic) signals, side by
//! side in `collc cost`'s counts per call: the epoch version keeps every remote atomic and
//! every wait and drops the local resets and the epilogue's fence. The table in
//! `docs/disciplines.md` is these numbers.

use collc_verifier::cost::cost;
use std::collections::BTreeMap;

fn protocol(path: &str) -> collc_spec::Validated {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).expect("read .coll");
    let c = collc_spec::front(&collc_verifier::Ranges, &text);
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
        let (fc, fe) = (formulas(clearing), formulas(epoch));
        assert_eq!(fc[0], fe[0], "remote atomics: {clearing} vs {epoch}");
        assert_eq!(fc[2], fe[2], "waits: {clearing} vs {epoch}");
        assert_eq!(fe[1], "0", "{epoch} has no local notify");
        for world in [2, 3, 4, 5, 8, 12, 16] {
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

/// The derived formulas (remote atomics, local notifies, waits, fences).
fn formulas(path: &str) -> Vec<String> {
    let p = protocol(path);
    let r = cost(&p, &BTreeMap::new()).expect("cost");
    r.rows.into_iter().map(|r| r.formula).collect()
}

#[test]
fn the_doc_table_is_the_derived_formulas() {
    let doc = format!("{}/../docs/disciplines.md", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(doc).expect("read docs/disciplines.md");
    let mut rows = 0;
    for line in text
        .lines()
        .filter(|l| l.starts_with('|') && l.contains(".coll`"))
    {
        let cells: Vec<&str> = line
            .split('|')
            .map(|c| c.trim().trim_matches('`'))
            .filter(|c| !c.is_empty())
            .collect();
        let (file, shown) = (cells[2], &cells[3..7]);
        assert_eq!(formulas(file), shown, "{file}");
        rows += 1;
    }
    assert_eq!(rows, 2 * PAIRS.len());
}
