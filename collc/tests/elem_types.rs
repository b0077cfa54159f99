//! Element types end to end: a protocol with a `type` parameter runs at each listed type
//! on the host and MPI targets (`collc run --elem T`) with its outputs compared exactly in
//! that type, a protocol computing the wrong operator is caught at every type (the typed
//! check is not vacuous), and a type the protocol does not list is refused, never
//! converted.
//!
//! The MPI half needs Open MPI (`mpicxx`, `mpirun`); without it that half prints one SKIP
//! line and returns.

mod common;

use common::*;
use std::process::Command;

const TYPES: [&str; 4] = ["f32", "f64", "i32", "i64"];

/// `collc run` on `file` at element type `elem`: (exit code, stdout + stderr).
fn run(file: &str, target: &str, elem: &str, np: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo_root())
        .args(["run", "--target", target, "--elem", elem, file, "-P", np])
        .args(["--param", "n=960", "--allow-unverified", "--color", "never"])
        .output()
        .expect("collc runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn have_mpi() -> bool {
    match collc_backend::mpi::build::find_toolchain() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("SKIP the MPI half of the element-type runs: needs Open MPI: {e}");
            false
        }
    }
}

fn targets() -> Vec<&'static str> {
    let mut t = vec!["host"];
    if have_mpi() {
        t.push("mpi");
    }
    t
}

#[test]
fn a_typed_protocol_runs_right_at_every_listed_type() {
    for target in targets() {
        for elem in TYPES {
            let (code, text) = run("examples/allreduce_ring.coll", target, elem, "4");
            assert_eq!(code, 0, "{target} {elem}: {text}");
            assert!(text.contains(": ok"), "{target} {elem}: {text}");
        }
    }
}

#[test]
fn the_wrong_operator_is_caught_at_every_type() {
    for target in targets() {
        for elem in TYPES {
            let (code, text) = run("collc/tests/elem/ring_wrong_op.coll", target, elem, "3");
            assert_eq!(code, 1, "{target} {elem}: {text}");
            assert!(
                text.contains("wrong") || text.contains("MISMATCH"),
                "{target} {elem}: {text}"
            );
        }
    }
}

#[test]
fn a_type_the_protocol_does_not_list_is_refused() {
    let (code, text) = run("examples/broadcast.coll", "host", "f64", "2");
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("declared for f32 only"), "{text}");
    let (code, text) = run("examples/allreduce_ring.coll", "host", "f16", "2");
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("not an element type"), "{text}");
}
