//! `calls <= N` is part of the verified domain: `collc run` (host and `--target mpi`) refuses
//! more back-to-back calls than the protocol declares, before building anything, with an
//! error at the declaration (exit 2, like a parameter outside its domain).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// examples/sense_reversing_barrier.coll with `calls <= 3` (same line), in a fresh folder.
fn bounded(test: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("examples/sense_reversing_barrier.coll"))
        .expect("readable");
    let text = text.replace("calls <= 100000000;", "calls <= 3;");
    assert!(text.contains("calls <= 3;"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("calls-bound-{test}"));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let f = dir.join("sense_reversing_barrier.coll");
    std::fs::write(&f, text).expect("written");
    f
}

fn collc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .env(
            "COLLC_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"),
        )
        .output()
        .expect("collc runs")
}

fn refused(out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("run::calls-bound"), "{err}");
    assert!(err.contains("calls <= 3"), "{err}");
    assert!(err.contains("sense_reversing_barrier.coll:18"), "{err}");
}

#[test]
fn a_host_run_past_the_declared_calls_is_refused() {
    let f = bounded("host");
    let f = f.to_str().expect("utf-8");
    refused(&collc(&["run", f, "-P", "2", "--calls", "5"]));
}

#[test]
fn an_mpi_run_past_the_declared_calls_is_refused() {
    let f = bounded("mpi");
    let f = f.to_str().expect("utf-8");
    refused(&collc(&[
        "run", "--target", "mpi", f, "-np", "2", "--calls", "5",
    ]));
}

#[test]
fn a_run_within_the_declared_calls_is_not_refused() {
    let f = bounded("within");
    let f = f.to_str().expect("utf-8");
    let out = collc(&["run", f, "-P", "2", "--calls", "3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("run::calls-bound"), "{err}");
}
