//! `cargo run -p collc-backend --example sweep -- FILE...`: emit, compile and run every file
//! at P=2 and P=4 with default parameters (development aid).

use collc_backend::host::{run_with_source, RunConfig};
use collc_backend::testing::default_params;
use collc_grammar::Source;

fn main() {
    for file in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&file).expect("readable");
        let src = Source::new(file.clone(), text.clone());
        let Some(p) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
            println!("{file}: does not check");
            continue;
        };
        for world in [2, 4] {
            let Some(params) = default_params(&p, world) else {
                println!("{file} P={world}: no parameters bind");
                continue;
            };
            let cfg = RunConfig {
                params: params.clone(),
                twait_timeout_ms: 2000,
                ..RunConfig::default()
            };
            match run_with_source(&p, Some(&src), &cfg) {
                Ok(r) => println!(
                    "{file} {params:?}: {}",
                    r.summary().lines().take(3).collect::<Vec<_>>().join(" | ")
                ),
                Err(e) => println!(
                    "{file} {params:?}: ERROR {}",
                    e.to_string()
                        .lines()
                        .take(12)
                        .collect::<Vec<_>>()
                        .join("\n    ")
                ),
            }
        }
    }
}
