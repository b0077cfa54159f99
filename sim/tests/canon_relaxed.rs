//! Relaxed-memory searches of every example and bug fixture in a debug build. There
//! canonicalisation checks every state it takes to be canonical without looking at all of
//! it (a successor whose step wrote no window, `still_canonical` in
//! `sim/src/machine/canon.rs`) against the full renumbering, and panics on a difference;
//! `por_crosscheck.rs` covers the sequentially consistent searches the same way. Release
//! builds compile the check out, so this test exists only in debug builds.
#![cfg(debug_assertions)]

mod common;

use collc_sim::bounded::{param_grid, Bounds};
use collc_sim::{simulate, Budget, Memory, SimConfig};
use std::time::Duration;

#[test]
fn relaxed_searches_keep_canonical_forms() {
    let files = common::coll_files(&["examples", "examples/bugs"]);
    assert!(files.len() > 40, "found only {} .coll files", files.len());
    let bounds = Bounds {
        ranks: (2, 3),
        tiles: (1, 2),
        calls: 2,
        small_ints: 1,
    };
    let cfg = SimConfig {
        calls: 2,
        memory: Memory::Relaxed,
        reduce: false,
        budget: Budget {
            max_states: 10_000,
            max_time: Duration::from_secs(60),
            ..Budget::default()
        },
        ..SimConfig::default()
    };
    let (mut searches, mut states) = (0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable fixture");
        let Some(p) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
            continue;
        };
        for params in param_grid(&p, &bounds, &Default::default()) {
            let Ok(r) = simulate(&p, &params, &cfg) else {
                continue;
            };
            searches += 1;
            states += r.stats.states;
        }
    }
    // The check must have had states to check.
    assert!(searches >= 40, "only {searches} searches");
    assert!(states >= 200_000, "only {states} states");
    eprintln!("{searches} relaxed searches, {states} states");
}
