//! `collc emit --validate` on every target and `collc lift` through the command line:
//! `collc lift k.cpp | collc verify -` verifies a hand-written kernel; refused constructs
//! exit 1 naming the line.

mod common;

use common::*;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// Runs `collc ARGS` from the repository root with `stdin`; (exit code, stdout, stderr).
fn collc(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
        .args(["--color", "never", "--width", "100"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run collc");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("collc finishes");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn emit_validate_accepts_the_generated_code_on_every_target() {
    for t in ["ascend", "host", "mpi"] {
        let (code, out, err) = collc(
            &["emit", "examples/barrier.coll", "--target", t, "--validate"],
            "",
        );
        assert_eq!(code, 0, "--target {t}: {err}");
        assert!(
            out.contains("TWAIT") || out.contains("collc_mpi::wait"),
            "--target {t}"
        );
        assert!(
            err.contains("validated: the generated code performs the protocol"),
            "{err}"
        );
    }
}

#[test]
fn a_lifted_hand_written_kernel_verifies_through_stdin() {
    let (code, coll, err) = collc(&["lift", "lift/tests/fixtures/broadcast.cpp"], "");
    assert_eq!(code, 0, "{err}");
    assert!(
        coll.starts_with("collective broadcast: broadcast(root, data) {"),
        "{coll}"
    );
    let (code, out, err) = collc(&["verify", "-"], &coll);
    assert_eq!(code, 0, "{out}\n{err}");
    let cpp =
        std::fs::read_to_string(repo_root().join("lift/tests/fixtures/barrier_set0_reset.cpp"))
            .expect("fixture");
    let (code, coll, err) = collc(&["lift", "-"], &cpp);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = collc(&["verify", "-"], &coll);
    assert_eq!(code, 1, "{out}");
    let line = out.lines().next().unwrap_or("");
    assert!(
        line.starts_with("violated <stdin>: ") && line.contains("op-exclusivity"),
        "{out}"
    );
}

#[test]
fn an_unliftable_construct_exits_1_naming_its_line() {
    let (code, out, err) = collc(&["lift", "lift/tests/fixtures/computed_bound.cpp"], "");
    assert_eq!(code, 1);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("lift::unsupported"), "{err}");
    assert!(
        err.contains("line 30: a loop update other than `++v` or `v += step`: `step *= 2`"),
        "{err}"
    );
}

/// A pypto-style kernel: `collc lift` appends the source map, and `collc verify -` on the
/// lifted text names the C++ line of each finding (`lifted from FILE:LINE`).
#[test]
fn lift_then_verify_names_the_cpp_line() {
    let file = "lift/tests/fixtures/pypto_barrier_no_reset.cpp";
    let (code, lifted, err) = collc(&["lift", file], "");
    assert_eq!(code, 0, "{err}");
    let map = lifted
        .lines()
        .find(|l| l.starts_with("// collc-source-map: "))
        .expect("a source map line");
    assert!(map.contains(file), "{map}");
    let (code, _, err) = collc(&["verify", "-"], &lifted);
    assert_eq!(code, 1, "{err}");
    let cpp = std::fs::read_to_string(repo_root().join(file)).expect("fixture");
    let wait = cpp
        .lines()
        .position(|l| l.contains("pto::comm::TWAIT"))
        .expect("the wait")
        + 1;
    assert!(
        err.contains(&format!("lifted from {file}:{wait}")),
        "no finding names the TWAIT line {wait}:\n{err}"
    );
}
