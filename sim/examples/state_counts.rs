//! Prints, for every `.coll` file given and every small parameter assignment, the
//! exhaustive search's verdict, states, transitions and finding codes in three modes
//! (sc reduced, sc full, relaxed): an oracle for changes to the explorer that must
//! not change what it explores. Compare two builds' outputs with `diff`:
//! `cargo run --release -p collc-sim --example state_counts -- examples/*.coll > a.txt`.

use collc_sim::bounded::{param_grid, Bounds};
use collc_sim::{simulate, Budget, Memory, SimConfig};
use std::time::Duration;

fn main() {
    let bounds = Bounds {
        ranks: (2, 3),
        tiles: (1, 2),
        calls: 2,
        small_ints: 1,
    };
    for file in std::env::args().skip(1) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Some(p) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
            continue;
        };
        for params in param_grid(&p, &bounds, &Default::default()) {
            for (mode, reduce, memory, max_states) in [
                ("sc-reduced", true, Memory::Sc, 200_000),
                ("sc-full", false, Memory::Sc, 60_000),
                ("relaxed", false, Memory::Relaxed, 30_000),
            ] {
                let cfg = SimConfig {
                    calls: 2,
                    memory,
                    reduce,
                    budget: Budget {
                        max_states,
                        max_time: Duration::from_secs(3600),
                        ..Budget::default()
                    },
                    ..SimConfig::default()
                };
                let line = match simulate(&p, &params, &cfg) {
                    Ok(r) => format!(
                        "{:?} states={} transitions={} complete={} depth={} findings={:?}",
                        r.verdict,
                        r.stats.states,
                        r.stats.transitions,
                        r.stats.complete,
                        r.stats.max_depth,
                        r.findings
                            .iter()
                            .map(|f| (f.code.as_str(), f.steps, f.message.as_str()))
                            .collect::<Vec<_>>()
                    ),
                    Err(e) => format!("error {e}"),
                };
                println!("{file} {params:?} {mode}: {line}");
            }
        }
    }
}
