//! What the lift tests share: the shipped examples, and emitting one for a target.

use collc_backend::cpp::{self, EmitOptions, Target};
use collc_grammar::Source;
use collc_spec::Validated;
use std::path::PathBuf;

/// Every `examples/*.coll`: (name, source, protocol).
pub fn examples() -> Vec<(String, Source, Validated)> {
    corpus("../examples")
}

/// Every `.coll` file directly in `dir` (relative to `lift/`) that checks: (name, source,
/// protocol).
pub fn corpus(dir: &str) -> Vec<(String, Source, Validated)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    let out: Vec<(String, Source, Validated)> = collc_backend::testing::coll_files(&dir)
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).expect("read example");
            let p = collc_spec::front(&collc_verifier::Ranges, &text).protocol?;
            let name = path.display().to_string();
            Some((name.clone(), Source::new(name, text), p))
        })
        .collect();
    assert!(out.len() >= 10, "examples found: {}", out.len());
    out
}

/// The targets `collc emit` has.
pub const TARGETS: [&str; 3] = ["ascend", "host", "mpi"];

/// `collc emit --target TARGET` of an example.
pub fn emit(p: &Validated, src: &Source, target: &str) -> String {
    let opts = EmitOptions {
        source: Some(src),
        ..EmitOptions::default()
    };
    match target {
        "ascend" => cpp::emit(p, Target::Ascend, &opts).expect("emit ascend"),
        "host" => cpp::emit(p, Target::Host, &opts).expect("emit host"),
        _ => {
            let o = collc_backend::mpi::EmitOptions {
                source: Some(src),
                ..collc_backend::mpi::EmitOptions::default()
            };
            collc_backend::mpi::emit(p, &o).expect("emit mpi")
        }
    }
}
