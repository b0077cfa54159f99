//! The examples whose signals or buffers carry state from call to call (the call index,
//! epoch counters, parity buffers, credit windows) or that synchronise in log rounds
//! (dissemination, recursive doubling, Rabenseifner, binomial tree) and one semaphore per
//! peer (all-pairs), run back to back for 6 calls through one signal buffer with `collc run`
//! on the host and `collc run --target mpi`, at P = 2 and 4: every call's output checked
//! against the collective's semantics, credit cells back at zero. Enough calls that every
//! parity part is reused at least twice and a fast rank can run calls ahead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CALLS: u32 = 6;

const EXAMPLES: &[&str] = &[
    "sense_reversing_barrier",
    "epoch_allreduce",
    "credit_window_pipeline",
    "dissemination_barrier",
    "allreduce_recursive_doubling",
    "allreduce_rabenseifner",
    "broadcast_binomial",
    "allreduce_allpairs",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

fn collc(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .env(
            "COLLC_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"),
        )
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("collc runs")
}

fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("\n*** SKIP: `{tool} --version` failed\n");
    }
    ok
}

/// `collc run [--target T] FILE -P np --param ... --calls 6` for every example and np.
fn run_all(target: Option<&str>, ok_text: &dyn Fn(u32) -> String) {
    let mut failures = Vec::new();
    let mut ran = 0;
    for name in EXAMPLES {
        let file = format!("examples/{name}.coll");
        let text = std::fs::read_to_string(root().join(&file)).expect("readable");
        let p = collc_spec::front(&collc_verifier::Ranges, &text)
            .protocol
            .expect("checks");
        let world = p.vars[p.world].name.clone();
        for np in [2u32, 4] {
            let params = collc_backend::testing::default_params(&p, np as i64).expect("binds");
            let mut args = vec!["run".to_string()];
            if let Some(t) = target {
                args.extend(["--target".to_string(), t.to_string()]);
            }
            args.extend([file.clone(), "-P".into(), np.to_string()]);
            for (k, v) in params.iter().filter(|(k, _)| **k != world) {
                args.push("--param".into());
                args.push(format!("{k}={v}"));
            }
            args.extend(["--calls".to_string(), CALLS.to_string()]);
            let o = collc(&args);
            let out = String::from_utf8_lossy(&o.stdout);
            let err = String::from_utf8_lossy(&o.stderr);
            ran += 1;
            if o.status.code() != Some(0) || !out.contains(&ok_text(np)) {
                failures.push(format!("collc {}\n{out}{err}", args.join(" ")));
            }
        }
    }
    assert_eq!(ran, EXAMPLES.len() * 2);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn host_runs_six_back_to_back_calls_at_p2_and_p4() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    if !have(&cxx) {
        return;
    }
    run_all(None, &|np| format!("ok: P={np}"));
}

#[test]
fn mpi_runs_six_back_to_back_calls_at_np2_and_np4() {
    if !have("mpicxx") {
        return;
    }
    run_all(Some("mpi"), &|np| format!(": ok (np {np}, {CALLS} calls"));
}
