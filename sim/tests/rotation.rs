//! `Protocol::with_per_call_rotation(k)`: the simulator gives a `per call` buffer `k`
//! instances and call `c` instance `c % k` (what a library that rotates `k` buffers runs), so
//! call `c + k` reusing call `c`'s buffer is checked like any other access. allgather's
//! windows are safe rotated over 2 instances but race over 1 (the same as `reused`); a push
//! broadcast whose root never waits races at any distance the run reaches.

use collc_sim::{simulate, SimConfig, Verdict};
use std::collections::BTreeMap;
use std::path::Path;

fn load(rel: &str) -> collc_spec::Validated {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("validates")
}

fn codes(p: &collc_spec::Validated, params: &[(&str, i64)], calls: usize) -> Vec<String> {
    let params: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let cfg = SimConfig {
        calls,
        ..SimConfig::default()
    };
    let r = simulate(p, &params, &cfg).expect("simulates");
    assert_ne!(r.verdict, Verdict::Incomplete, "explored completely");
    r.findings.iter().map(|f| f.code.clone()).collect()
}

#[test]
fn allgather_is_safe_rotated_over_two_instances_not_one() {
    let p = load("examples/allgather.coll");
    let params = [("P", 2), ("m", 2)];
    assert_eq!(codes(&p, &params, 4), Vec::<String>::new(), "per call");
    assert_eq!(
        codes(&p.with_per_call_rotation(2), &params, 4),
        Vec::<String>::new(),
        "rotated over 2"
    );
    let one = codes(&p.with_per_call_rotation(1), &params, 3);
    assert!(one.iter().any(|c| c == "sim::data-race"), "{one:?}");
}

#[test]
fn a_root_that_never_waits_races_at_reuse_distance_two() {
    let p = load("collc/tests/lib/push_broadcast.coll");
    let params = [("P", 2), ("n", 1), ("root", 0)];
    assert_eq!(codes(&p, &params, 3), Vec::<String>::new(), "per call");
    let two = codes(&p.with_per_call_rotation(2), &params, 3);
    assert!(two.iter().any(|c| c == "sim::data-race"), "{two:?}");
    // Two calls never reuse an instance at distance 2: nothing to find.
    assert_eq!(
        codes(&p.with_per_call_rotation(2), &params, 2),
        Vec::<String>::new()
    );
}
