//! `collc emit` and `collc run` from the command line: the verifier gate, the stamped
//! warning, the shared library build, runs that pass and fail, and a missing compiler.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

fn cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache")
}

fn collc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .env("COLLC_CACHE_DIR", cache())
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("collc runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn have_cxx() -> bool {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let ok = Command::new(&cxx)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "\n*** SKIP: no C++ compiler (`{cxx} --version` failed); `collc run` tests need g++\n"
        );
    }
    ok
}

#[test]
fn emit_ascend_prints_the_kernel_with_coll_line_comments() {
    let o = collc(&["emit", "--target", "ascend", "examples/barrier.coll"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args)"));
    assert!(out.contains("pto::comm::TNOTIFY(cell, 1, pto::comm::NotifyOp::AtomicAdd);"));
    assert!(out.contains("CommRemotePtr(ctx, sig + me, p)"));
    assert!(
        out.contains("// barrier.coll:14  notify sig[me] @ p += 1;"),
        "{out}"
    );
    assert!(out.contains("dsb(DSB_DDR)") && out.contains("dcci(sig, ENTIRE_DATA_CACHE)"));
    assert!(
        !out.contains("WARNING"),
        "a verified protocol carries no warning"
    );
}

#[test]
fn emit_refuses_what_the_verifier_rejects_unless_allowed() {
    let f = "examples/bugs/barrier_no_epilogue.coll";
    let o = collc(&["emit", "--target", "ascend", f]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(out.is_empty(), "nothing may be emitted: {out}");
    assert!(err.contains("verify::credit-balance"), "{err}");
    assert!(
        err.contains("refusing to emit") && err.contains("--allow-unverified"),
        "{err}"
    );

    let o = collc(&["emit", "--target", "host", f, "--allow-unverified"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.contains("// WARNING: UNVERIFIED: produced with --allow-unverified"),
        "{out}"
    );
    assert!(out.contains("verify::credit-balance"), "{out}");
    assert!(
        err.contains("warning: emitting a protocol the verifier does not show safe"),
        "{err}"
    );
}

#[test]
fn emit_host_so_builds_a_shared_library() {
    if !have_cxx() {
        return;
    }
    let so = Path::new(env!("CARGO_TARGET_TMPDIR")).join("barrier_cli.so");
    let _ = std::fs::remove_file(&so);
    let o = collc(&[
        "emit",
        "--target",
        "host",
        "examples/barrier.coll",
        "-o",
        so.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("-Wall -Wextra -Werror"),
        "the command is shown: {err}"
    );
    let bytes = std::fs::read(&so).expect("library written");
    assert_eq!(&bytes[..4], b"\x7fELF");
}

#[test]
fn run_passes_a_merged_kernel_and_fails_a_bug_loudly() {
    if !have_cxx() {
        return;
    }
    let o = collc(&[
        "run",
        "examples/reduce_scatter.coll",
        "-P",
        "2",
        "--param",
        "m=700",
        "--calls",
        "3",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("ok: P=2") && out.contains("every credit cell back at 0"),
        "{out}"
    );

    // Bug fixtures pass the gate only with --allow-unverified (the run then shows the bug).
    let o = collc(&[
        "run",
        "examples/bugs/barrier_no_epilogue.coll",
        "-P",
        "2",
        "--allow-unverified",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("signal residue") && err.contains("sig[1]@rank0=3"),
        "{err}"
    );

    let o = collc(&[
        "run",
        "examples/bugs/unreachable_threshold.coll",
        "--allow-unverified",
        "-P",
        "2",
        "--param",
        "m=300",
        "--twait-timeout-ms",
        "2000",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("deadlock") && err.contains("GE 3, but the cell holds 2"),
        "{err}"
    );
}

#[test]
fn run_reports_bad_parameters_and_a_missing_compiler() {
    let o = collc(&["run", "examples/barrier.coll"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("parameter `P` needs a value"), "{err}");

    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .env(
            "COLLC_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache-nocxx"),
        )
        .env("CXX", "/nonexistent/c++")
        .args(["run", "examples/barrier.coll", "-P", "2"])
        .output()
        .expect("collc runs");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no C++ compiler found") && err.contains("/nonexistent/c++"),
        "{err}"
    );
}
