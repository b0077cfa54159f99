//! Cross-checks the stubborn-set reduction against the full search: on every
//! example and bug fixture, at every small parameter assignment the full search
//! finishes within its budget, both searches must meet exactly the same terminal
//! states (fingerprints of every state where no process can move, deadlocked or
//! finished, windows and access records included) and report the same finding
//! codes — for each protocol as declared and with every window and value signal
//! declared the other way (`per call` ↔ `reused`), so both lifetimes are covered.

mod common;

use collc_sim::bounded::{param_grid, Bounds};
use collc_sim::explore::terminal_states;
use collc_sim::{Budget, Schedule, SimConfig};
use collc_spec::ir::Lifetime;
use std::collections::BTreeSet;
use std::time::Duration;

fn config(reduce: bool) -> SimConfig {
    SimConfig {
        calls: 2,
        schedule: Schedule::Exhaustive,
        budget: Budget {
            max_states: 60_000,
            max_time: Duration::from_secs(20),
            ..Budget::default()
        },
        reduce,
        ..SimConfig::default()
    }
}

#[test]
fn reduction_keeps_every_terminal_state_and_finding() {
    let files = common::coll_files(&["examples", "examples/bugs", "examples/outside_model"]);
    assert!(files.len() > 40, "found only {} .coll files", files.len());
    let bounds = Bounds {
        ranks: (2, 3),
        tiles: (1, 2),
        calls: 2,
        small_ints: 2,
    };
    let mut compared = 0;
    let mut with_findings = 0;
    let mut racy = 0;
    let mut fewer_states = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable fixture");
        let Some(declared) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
            continue;
        };
        // The other contract: every window and value signal flipped.
        let flipped = if declared
            .windows
            .iter()
            .any(|w| w.lifetime == Some(Lifetime::PerCall))
        {
            declared.with_every_lifetime(Lifetime::Reused)
        } else {
            declared.with_every_lifetime(Lifetime::PerCall)
        };
        for params in param_grid(&declared, &bounds, &Default::default()) {
            for (lifetimes, p) in [("declared", &declared), ("flipped", &flipped)] {
                let Ok((full, full_t)) = terminal_states(p, &params, &config(false)) else {
                    continue;
                };
                if !full.stats.complete {
                    continue;
                }
                let (red, red_t) = terminal_states(p, &params, &config(true))
                    .expect("the reduced search starts when the full one does");
                let what = format!("{} {params:?} lifetimes {lifetimes}", f.display());
                assert!(red.stats.complete, "{what}: reduced search incomplete");
                let codes = |r: &collc_sim::SimReport| -> BTreeSet<String> {
                    r.findings.iter().map(|f| f.code.clone()).collect()
                };
                assert_eq!(codes(&full), codes(&red), "{what}: findings differ");
                assert_eq!(full_t, red_t, "{what}: terminal states differ");
                assert!(red.stats.states <= full.stats.states, "{what}: more states");
                compared += 1;
                with_findings += usize::from(!full.findings.is_empty());
                racy += usize::from(codes(&full).contains("sim::data-race"));
                fewer_states += usize::from(red.stats.states < full.stats.states);
            }
        }
    }
    // The comparison must have had something to compare.
    assert!(compared >= 100, "only {compared} assignments compared");
    assert!(with_findings >= 20, "only {with_findings} with findings");
    assert!(racy >= 20, "only {racy} with a data race");
    assert!(
        fewer_states >= compared / 2,
        "reduction rarely reduces: {fewer_states}/{compared}"
    );
    eprintln!("{compared} assignments compared, {with_findings} with findings ({racy} racy), {fewer_states} reduced");
}
