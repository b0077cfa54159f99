//! Times the exhaustive search of one instance (for profiling the explorer):
//! `cargo run --release -p collc-sim --example explore -- FILE NAME=V... [--calls K]
//! [--no-reduction] [--relaxed] [--repeat N]`. Prints the state and transition counts
//! and the best time of the repeats, in states per second.

use collc_sim::{simulate, Memory, SimConfig};
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let mut cfg = SimConfig::default();
    let mut params = BTreeMap::new();
    let mut file = None;
    let mut repeat = 1;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} needs a number"))
        };
        match a.as_str() {
            "--calls" => cfg.calls = num("--calls"),
            "--repeat" => repeat = num("--repeat").max(1),
            "--no-reduction" => cfg.reduce = false,
            "--relaxed" => cfg.memory = Memory::Relaxed,
            _ => match a.split_once('=') {
                Some((k, v)) => {
                    params.insert(k.to_string(), v.parse::<i64>().expect("NAME=integer"));
                }
                None => file = Some(a),
            },
        }
    }
    let file = file.expect("a .coll file");
    let text = std::fs::read_to_string(&file).expect("readable file");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("the file validates");
    let mut best = f64::MAX;
    let mut states = 0;
    for _ in 0..repeat {
        let t = Instant::now();
        let r = simulate(&p, &params, &cfg).expect("the parameters are accepted");
        let dt = t.elapsed().as_secs_f64();
        best = best.min(dt);
        states = r.stats.states;
        println!(
            "{file}: {:?}, {} states, {} transitions, {}, {:.1} ms",
            r.verdict,
            r.stats.states,
            r.stats.transitions,
            if r.stats.complete {
                "complete"
            } else {
                "INCOMPLETE"
            },
            dt * 1e3
        );
    }
    println!(
        "best of {repeat}: {:.1} ms, {:.0} states/s",
        best * 1e3,
        states as f64 / best
    );
}
