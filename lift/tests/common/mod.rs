//! What the lift tests share: the shipped examples, and emitting one for a target.

use collc_backend::cpp::{self, EmitOptions, Target};
use collc_grammar::Source;
use collc_spec::ir::Protocol;
use std::path::PathBuf;

/// Every `examples/*.coll`: (name, source, protocol).
pub fn examples() -> Vec<(String, Source, Protocol)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    paths.sort();
    let out: Vec<(String, Source, Protocol)> = paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read example");
            let p = collc_spec::check(&text).protocol.expect("examples check");
            let name = path.display().to_string();
            (name.clone(), Source::new(name, text), p)
        })
        .collect();
    assert!(out.len() >= 10, "examples found: {}", out.len());
    out
}

/// The targets `collc emit` has.
pub const TARGETS: [&str; 3] = ["ascend", "host", "mpi"];

/// `collc emit --target TARGET` of an example.
pub fn emit(p: &Protocol, src: &Source, target: &str) -> String {
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
