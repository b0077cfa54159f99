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
    assert!(
        out.contains("dsb(DSB_DDR)") && out.contains("dcci(sig, cache_line_t::ENTIRE_DATA_CACHE)")
    );
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

/// Every example, as shipped (its windows' declared lifetimes honoured, no barrier between
/// calls), passes `collc run FILE -P 2` and `-P 4` with `--calls 3`.
#[test]
fn run_passes_every_example_at_p2_and_p4_with_three_calls() {
    if !have_cxx() {
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        let text_of = std::fs::read_to_string(f).expect("readable");
        let p = collc_spec::front(&collc_verifier::Ranges, &text_of)
            .protocol
            .expect("checks");
        let world = p.vars[p.world].name.clone();
        for np in [2, 4] {
            let params = collc_backend::testing::default_params(&p, np).expect("binds");
            let file = f.display().to_string();
            let mut args = vec!["run".to_string(), file.clone(), "-P".into(), np.to_string()];
            for (k, v) in params.iter().filter(|(k, _)| **k != world) {
                args.push("--param".into());
                args.push(format!("{k}={v}"));
            }
            args.extend(["--calls".to_string(), "3".to_string()]);
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = collc(&argv);
            let (out, err) = text(&o);
            if o.status.code() != Some(0) || !out.contains("ok: P=") {
                failures.push(format!("collc {}\n{out}{err}", args.join(" ")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The converse on the host: the broadcast whose window is declared `reused`
/// (`bugs/broadcast_reused_window.coll`) shows the cross-call race as wrong outputs under
/// `--chaos` (seeded random sleeps; some seed shows it), while its `per call` twin
/// (`examples/broadcast.coll`) passes every one of the same runs.
#[test]
fn run_shows_the_reused_window_race_that_per_call_windows_remove() {
    if !have_cxx() {
        return;
    }
    // The bug fixture is refused by the verifier gate: run it with --allow-unverified.
    let run = |file: &str, seed: u32| {
        let seed = seed.to_string();
        let mut args = vec![
            "run", file, "-P", "2", "--param", "n=1000", "--param", "root=0", "--calls", "3",
            "--chaos", &seed,
        ];
        if file.contains("/bugs/") {
            args.push("--allow-unverified");
        }
        collc(&args)
    };
    let mut shown = false;
    for seed in 1..=8 {
        let o = run("examples/bugs/broadcast_reused_window.coll", seed);
        let (out, err) = text(&o);
        if o.status.code() == Some(1) {
            assert!(
                format!("{out}{err}").contains("wrong output element(s)"),
                "{out}{err}"
            );
            shown = true;
        }
        let o = run("examples/broadcast.coll", seed);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "seed {seed}: {out}{err}");
    }
    assert!(shown, "no seed in 1..=8 showed the reused-window race");
}

/// The barrier example with another world-size domain, written where the test can read it.
fn barrier_with(domain: &str, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join("examples/barrier.coll")).expect("example");
    assert!(text.contains("ranks P in 1..=65536;"));
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text.replace("ranks P in 1..=65536;", domain)).expect("write");
    path
}

/// A protocol (path from the repository root) with another world-size domain, written
/// where the test can read it.
fn example_with(example: &str, domain: &str, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(root().join(example)).expect("example");
    assert!(text.contains("ranks P in 1..=16;"));
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text.replace("ranks P in 1..=16;", domain)).expect("write");
    path
}

#[test]
fn the_kernels_rank_limit_is_the_verdicts_not_the_declared_domain() {
    // The barrier on `1..=64`: every obligation that decides a range of world sizes is
    // proved with P symbolic, so the kernels accept all 64 ranks.
    let proved = barrier_with("ranks P in 1..=64;", "barrier_64.coll");
    let o = collc(&[
        "emit",
        "--target",
        "host",
        proved.to_str().expect("utf-8 path"),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.contains("constexpr int64_t kMaxSupportedRanks = 64;"),
        "{out}"
    );
    // The two-level barrier on `1..=64`: its credit obligations are decided by enumerating
    // P up to 16 only (the parametric route declines its group arithmetic). That is not the
    // declared domain, so the gate refuses it and names the narrower range; emitted anyway,
    // the kernels accept 16 ranks.
    let wide = example_with(
        "collc/tests/verify_fixtures/hier_barrier.coll",
        "ranks P in 1..=64;",
        "hier_barrier_64.coll",
    );
    let wide = wide.to_str().expect("utf-8 path");
    for target in ["host", "mpi"] {
        let o = collc(&["emit", "--target", target, wide]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{target}: {err}");
        assert!(
            err.contains("decided for P in 1..=16 only, not the declared 1..=64"),
            "{target}: {err}"
        );
        let o = collc(&["emit", "--target", target, "--allow-unverified", wide]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{target}: {err}");
        if target == "host" {
            assert!(
                out.contains("constexpr int64_t kMaxSupportedRanks = 16;"),
                "{out}"
            );
            assert!(
                out.contains("P > kMaxSupportedRanks ||  // ranks P in 1..=16 of the declared 1..=64 (kMaxSupportedRanks)"),
                "{out}"
            );
        } else {
            assert!(out.contains("is outside 1..=16 (mpirun -np; the verdict covers P <= 16 of the declared 1..=64)"), "{out}");
        }
    }
    // The merged barrier declares 1..=65536 and every obligation is proved for all of it:
    // the MPI kernel accepts 65536 ranks, the host one what `pto::comm` addresses (64).
    let merged = root().join("examples/barrier.coll");
    let merged = merged.to_str().expect("utf-8 path");
    for (target, want) in [
        ("mpi", "constexpr int64_t kMaxSupportedRanks = 65536;"),
        ("host", "constexpr int64_t kMaxSupportedRanks = 64;"),
    ] {
        let o = collc(&["emit", "--target", target, merged]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{target}: {err}");
        assert!(out.contains(want), "{target}: {out}");
    }
    // A narrower declared domain is the limit when it is proved: 2..=8 is 8.
    let narrow = barrier_with("ranks P in 2..=8;", "barrier_8.coll");
    let o = collc(&[
        "emit",
        "--target",
        "ascend",
        narrow.to_str().expect("utf-8 path"),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        out.contains("constexpr int64_t kMaxSupportedRanks = 8;"),
        "{out}"
    );
    // A host run above the limit is refused before anything is built (no compiler needed).
    let o = collc(&[
        "run",
        "--target",
        "host",
        "--allow-unverified",
        wide,
        "--param",
        "P=20",
        "--param",
        "G=4",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("P = 20 is above the kernel's rank limit 16: the verdict covers P <= 16 of the declared domain 1..=64"),
        "{err}"
    );
}

/// `collc run --target pto-isa` without the real sources: exit 2 and an error naming what to
/// set, before anything is verified or built; a flag the simulation cannot honour is refused.
#[test]
fn run_pto_isa_says_what_to_set_without_the_real_sources() {
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .env("COLLC_CACHE_DIR", cache())
        .env_remove("PTO_ISA_ROOT")
        .env_remove("SIMPLER_ROOT")
        .args(["--color", "never", "run", "--target", "pto-isa"])
        .args(["examples/barrier.coll", "-P", "2"])
        .output()
        .expect("collc runs");
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("PTO_ISA_ROOT is not set"), "{err}");
    assert!(err.contains("SIMPLER_ROOT is not set"), "{err}");
    assert!(err.contains("CONTRIBUTING.md"), "{err}");
    let o = collc(&[
        "run",
        "--target",
        "pto-isa",
        "examples/barrier.coll",
        "-P",
        "2",
        "--chaos",
        "7",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--chaos does not apply to --target pto-isa"),
        "{err}"
    );
}

/// With the real sources: an example runs on pto-isa's CPU simulation from the command line
/// (the kernel library is built by the simulation's compiler); one skip line without them.
#[test]
fn run_pto_isa_runs_an_example_on_the_cpu_simulation() {
    if collc_backend::pto_sim::Roots::from_env().is_err() {
        eprintln!("SKIP run_pto_isa_runs_an_example_on_the_cpu_simulation: PTO_ISA_ROOT / SIMPLER_ROOT not set (CONTRIBUTING.md)");
        return;
    }
    let o = collc(&[
        "run",
        "--target",
        "pto-isa",
        "examples/allreduce_ring.coll",
        "-P",
        "4",
        "--param",
        "n=1000",
        "--calls",
        "2",
        "-v",
    ]);
    let (out, err) = text(&o);
    if err.contains("no C++ compiler found") {
        eprintln!("SKIP run_pto_isa_runs_an_example_on_the_cpu_simulation: {err}");
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("ok: P=4 x 1 block(s), 2 call(s)"), "{out}");
    assert!(err.contains("-D__CPU_SIM"), "{err}");
}
