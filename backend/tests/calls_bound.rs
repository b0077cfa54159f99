//! `calls <= N` in the emitted kernels: run past the bound directly through the backend's
//! runners (the CLI refuses such a run before building; `collc/tests/calls_bound.rs`), the
//! host kernel (CPU runtime) and the MPI program refuse call N + 1 themselves, naming the
//! declaration. Without a C++ compiler / Open MPI the tests print a SKIP line and pass.

use collc_backend::host::{run_with_source, Exec, RunConfig};
use collc_backend::mpi::{self, build, MpiOptions};
use collc_backend::testing::{compiler_or_skip, repo_root};
use collc_grammar::Source;
use collc_spec::Validated;
use std::path::Path;
use std::time::Duration;

/// examples/sense_reversing_barrier.coll with `calls <= 3` (same line).
fn bounded() -> (Source, Validated) {
    let text = std::fs::read_to_string(repo_root().join("examples/sense_reversing_barrier.coll"))
        .expect("readable");
    let text = text.replace("calls <= 100000000;", "calls <= 3;");
    assert!(text.contains("calls <= 3;"), "the example declares calls");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("checks");
    (Source::new("sense_reversing_barrier.coll", text), p)
}

const DECL: &str = "calls <= 3 (sense_reversing_barrier.coll:18)";

#[test]
fn the_host_kernel_refuses_the_call_past_the_bound() {
    if !compiler_or_skip(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"),
        "the calls-bound host tests",
    ) {
        return;
    }
    let (src, p) = bounded();
    let mut cfg = RunConfig {
        exec: Exec::Subprocess,
        calls: 3,
        ..RunConfig::default()
    };
    cfg.params.insert("P".into(), 2);
    let r = run_with_source(&p, Some(&src), &cfg).expect("runs");
    assert!(r.ok(), "3 calls of calls <= 3: {}", r.summary());
    cfg.calls = 5;
    let r = run_with_source(&p, Some(&src), &cfg).expect("runs");
    assert!(!r.ok(), "5 calls of calls <= 3 passed: {}", r.summary());
    assert!(
        r.message.contains("call 4 refused") && r.message.contains(DECL),
        "{}",
        r.message
    );
}

#[test]
fn the_mpi_program_refuses_the_call_past_the_bound() {
    if let Err(e) = build::find_toolchain() {
        eprintln!("SKIP the_mpi_program_refuses_the_call_past_the_bound: needs Open MPI: {e}");
        return;
    }
    let (src, p) = bounded();
    let mut opts = MpiOptions {
        source: Some(&src),
        calls: 5,
        deadline: Duration::from_secs(120),
        ..MpiOptions::default()
    };
    opts.params.insert("P".into(), 2);
    let r = mpi::run(&p, &opts).expect("runs");
    assert!(!r.ok(), "5 calls of calls <= 3 passed");
    let text = format!("{}{}", r.outcome.stdout, r.outcome.stderr);
    assert!(text.contains(DECL), "{text}");
    assert_eq!(r.outcome.exit_code, Some(4), "{text}");
}
