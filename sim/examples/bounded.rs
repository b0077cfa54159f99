//! Runs the bounded obligations on .coll files and prints one line per
//! obligation: `cargo run --release -p collc-sim --example bounded -- FILE... [--calls K] [--tiles T] [--ranks HI] [--relaxed]
//! [--per-config-time S] [--max-states N] [--verbose]`.

use collc_sim::bounded::{check, BoundedConfig};
use collc_sim::Memory;

fn main() {
    let mut cfg = BoundedConfig::default();
    let mut files = Vec::new();
    let mut verbose = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> i64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} needs a number"))
        };
        match a.as_str() {
            "--calls" => cfg.bounds.calls = num("--calls") as usize,
            "--tiles" => cfg.bounds.tiles.1 = num("--tiles"),
            "--ranks" => cfg.bounds.ranks.1 = num("--ranks"),
            "--time" => cfg.total_time = std::time::Duration::from_secs(num("--time") as u64),
            "--per-config-time" => {
                cfg.per_config.max_time =
                    std::time::Duration::from_secs(num("--per-config-time") as u64)
            }
            "--max-states" => cfg.per_config.max_states = num("--max-states") as u64,
            "--verbose" => verbose = true,
            "--relaxed" => cfg.memory = Memory::Relaxed,
            _ => files.push(a),
        }
    }
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable file");
        let Some(p) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
            println!("{f}: does not validate");
            continue;
        };
        let r = check(&p, &cfg);
        let states: u64 = r.configs.iter().map(|c| c.states).sum();
        println!(
            "{f}: {} configs, {states} states, {} ms",
            r.configs.len(),
            r.elapsed_ms
        );
        if verbose {
            for c in &r.configs {
                println!(
                    "    {:<40} {:>9} states {:>7} ms {} {:?} {}",
                    collc_sim::report::params_text(&c.params),
                    c.states,
                    c.elapsed_ms,
                    if c.complete { "complete" } else { "INCOMPLETE" },
                    c.verdict,
                    c.codes.join(",")
                );
            }
        }
        for e in &r.errors {
            println!("  error: {e}");
        }
        for o in &r.obligations {
            let cex = o
                .counterexample
                .as_ref()
                .map(|c| format!(" {} [{}]: {}", c.code, c.replay, c.message))
                .unwrap_or_default();
            println!("  {:<10} {:?}{cex}", o.name, o.status);
        }
    }
}
