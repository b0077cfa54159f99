//! One verdict, one gate: every bug fixture is refused by the verifier gate that `collc
//! emit` (ascend, host, mpi) and `collc run` (host, mpi) pass through, `--allow-unverified`
//! is the only way past it and is stamped into what is produced, and a protocol that does
//! not validate is refused even with `--allow-unverified`. Also the summary line of a
//! multi-file `collc verify` (golden, time masked) and its per-file grouping.
//!
//! The library gate runs once per fixture (the CLI calls exactly that); the CLI runs for a
//! few fixtures on every target.

mod common;

use collc_grammar::Source;
use collc_verifier::{Decision, Options};
use common::{coll_files, read, rel, repo_root};
use std::path::PathBuf;
use std::process::{Command, Stdio};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn collc(args: &[&str]) -> Run {
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo_root())
        .env(
            "COLLC_CACHE_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"),
        )
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("collc runs");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("\n*** SKIP: `{tool} --version` failed; the tests that run code need it\n");
    }
    ok
}

/// What the gate says about one fixture, with and without `--allow-unverified`.
fn gate_of(path: &std::path::Path) -> Result<(), String> {
    let name = rel(path);
    let src = Source::new(name.clone(), read(path));
    let checked = collc_spec::front(&collc_verifier::Ranges, &src.text);
    let p = checked
        .protocol
        .ok_or_else(|| format!("{name}: does not validate"))?;
    let report = collc_verifier::verify(&p, &Options::for_source(&src));
    let refused = collc_verifier::gate(&report, false);
    if refused.decision != Decision::Refuse {
        return Err(format!(
            "{name}: the gate lets it through (verdict {:?}; `collc verify` accepts it)",
            refused.verdict
        ));
    }
    if refused.diagnostics.is_empty() || refused.blockers.is_empty() {
        return Err(format!(
            "{name}: refused without the verifier's diagnostics"
        ));
    }
    let allowed = collc_verifier::gate(&report, true);
    if allowed.decision != Decision::Unverified
        || !allowed
            .stamp
            .first()
            .is_some_and(|s| s.starts_with("UNVERIFIED"))
        || allowed.stamp.len() != 1 + allowed.blockers.len()
    {
        return Err(format!(
            "{name}: --allow-unverified does not stamp: {:?}",
            allowed.stamp
        ));
    }
    Ok(())
}

#[test]
fn the_gate_refuses_every_bug_fixture_unless_allowed() {
    let files = coll_files("examples/bugs");
    assert!(
        files.len() >= 30,
        "the bug fixtures are under examples/bugs"
    );
    // Two workers (the verifier is single-threaded per protocol).
    let (a, b) = files.split_at(files.len() / 2);
    let mut failures: Vec<String> = std::thread::scope(|s| {
        let ha = s.spawn(|| {
            a.iter()
                .filter_map(|f| gate_of(f).err())
                .collect::<Vec<_>>()
        });
        let hb = s.spawn(|| {
            b.iter()
                .filter_map(|f| gate_of(f).err())
                .collect::<Vec<_>>()
        });
        let mut v = ha.join().expect("worker");
        v.extend(hb.join().expect("worker"));
        v
    });
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} bug fixtures:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The silicon bugs collc's model cannot express are not bug fixtures: the verifier accepts
/// them, as their headers say (`examples/outside_model/README.md`).
#[test]
fn bugs_outside_the_model_are_accepted_as_documented() {
    let files = coll_files("examples/outside_model");
    assert_eq!(files.len(), 2, "{files:?}");
    for f in files {
        let src = Source::new(rel(&f), read(&f));
        let p = collc_spec::front(&collc_verifier::Ranges, &src.text)
            .protocol
            .unwrap_or_else(|| panic!("{}: does not validate", rel(&f)));
        let report = collc_verifier::verify(&p, &Options::for_source(&src));
        let g = collc_verifier::gate(&report, false);
        assert_eq!(g.decision, Decision::Pass, "{}: {:?}", rel(&f), g.blockers);
    }
}

const BUG: &str = "examples/bugs/barrier_wait_before_notify.coll";

/// The refusal: exit 1, nothing produced, the verifier's diagnostics and the way past.
fn assert_refused(r: &Run, what: &str) {
    assert_eq!(r.code, 1, "{what}: {}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{what}: produced {}", r.stdout);
    assert!(
        r.stderr.contains("verify::deadlock") && r.stderr.contains("wait sig[p] >= 1"),
        "{what}: the verifier's diagnostic (with its snippet) is printed: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("the verifier does not show it safe")
            && r.stderr.contains("--allow-unverified"),
        "{what}: {}",
        r.stderr
    );
}

#[test]
fn emit_refuses_on_every_target_and_stamps_when_allowed() {
    for target in ["ascend", "host", "mpi"] {
        let r = collc(&["emit", "--target", target, BUG]);
        assert_refused(&r, &format!("emit --target {target}"));
        let r = collc(&["emit", "--target", target, BUG, "--allow-unverified"]);
        assert_eq!(r.code, 0, "{target}: {}", r.stderr);
        assert!(
            r.stdout
                .contains("// WARNING: UNVERIFIED: produced with --allow-unverified")
                && r.stdout.contains("verify::deadlock (violated)"),
            "{target}: the stamp is in the header: {}",
            r.stdout
        );
    }
}

#[test]
fn run_refuses_on_both_targets_and_prints_the_stamp_when_allowed() {
    let mut targets = Vec::new();
    if have("g++") {
        targets.push("host");
    }
    if have("mpicxx") {
        targets.push("mpi");
    }
    for target in targets {
        let r = collc(&["run", "--target", target, BUG, "-P", "2"]);
        assert_refused(&r, &format!("run --target {target}"));
        // Past the gate the run shows the bug (left-over credits), with the stamp.
        let r = collc(&[
            "run",
            "--target",
            target,
            "examples/bugs/barrier_no_epilogue.coll",
            "-P",
            "2",
            "--calls",
            "2",
            "--allow-unverified",
        ]);
        assert_eq!(r.code, 1, "{target}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains("  UNVERIFIED: produced with --allow-unverified")
                && r.stderr.contains("verify::credit-balance (violated)"),
            "{target}: the stamp is printed with the verdict: {}",
            r.stderr
        );
    }
}

#[test]
fn allow_unverified_never_passes_a_protocol_that_does_not_validate() {
    let bad = "collc/tests/ui/resolve_unknown.coll";
    for args in [
        vec!["emit", "--target", "ascend", bad, "--allow-unverified"],
        vec!["run", bad, "-P", "2", "--allow-unverified"],
    ] {
        let r = collc(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains("resolve::"), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn undecided_is_refused_too() {
    // `--no-bounded` leaves the bounded obligations undecided: not safe, so no code.
    // (`deadlock` is proved by the parametric route's ranking of waits, so it is not
    // among them.)
    let r = collc(&[
        "emit",
        "--target",
        "ascend",
        "examples/barrier.coll",
        "--no-bounded",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr
            .contains("0 violation(s), 4 undecided obligation(s)")
            && r.stderr.contains("verify::stale-pass (skipped)")
            && !r.stderr.contains("verify::deadlock"),
        "{}",
        r.stderr
    );
    let r = collc(&["verify", "examples/barrier.coll", "--no-bounded"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
}

/// `collc verify` on several files with both streams in one log, as CI shows it.
fn verify_log(files: &[&str]) -> (i32, String) {
    let mut cmd = vec![
        env!("CARGO_BIN_EXE_collc").to_string(),
        "--color".into(),
        "never".into(),
        "verify".into(),
        "--no-bounded".into(),
    ];
    cmd.extend(files.iter().map(|f| f.to_string()));
    let o = Command::new("sh")
        .arg("-c")
        .arg("\"$@\" 2>&1")
        .arg("sh")
        .args(&cmd)
        .current_dir(repo_root())
        .output()
        .expect("sh runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Masks the wall time of the summary line: `(1.3 s)` -> `(T s)`.
fn mask_time(line: &str) -> String {
    let Some(end) = line.find(" s)") else {
        return line.to_string();
    };
    match line[..end].rfind(" (") {
        Some(i) => format!("{} (T s){}", &line[..i], &line[end + 3..]),
        None => line.to_string(),
    }
}

#[test]
fn multi_file_verify_groups_each_file_and_ends_with_a_summary() {
    let files = [
        "examples/barrier.coll",
        "examples/bugs/barrier_no_epilogue.coll",
        "collc/tests/ui/resolve_unknown.coll",
        "no/such/file.coll",
    ];
    let (code, log) = verify_log(&files);
    assert_eq!(code, 2, "an unreadable file is a usage error: {log}");
    // Each file's diagnostics sit between its line and the next file's line.
    let at = |needle: &str| {
        log.find(needle)
            .unwrap_or_else(|| panic!("`{needle}` missing from\n{log}"))
    };
    let bug_line = at("violated examples/bugs/barrier_no_epilogue.coll:");
    let bug_diag = at("sig[1] on rank 0 is left at 1 after one call");
    let invalid_diag = at("resolve::");
    assert!(at("undecided examples/barrier.coll:") < bug_line);
    assert!(bug_line < bug_diag && bug_diag < invalid_diag, "{log}");
    let last = log.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("verify: 4 files:"),
        "the summary ends the log: {log}"
    );
    // The summary names every file not verified.
    for f in &files {
        assert!(last.contains(f), "{f} not named: {last}");
    }
    let headers: Vec<String> = log
        .lines()
        .filter(|l| {
            ["verified ", "violated ", "undecided "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .chain(std::iter::once(last))
        .map(mask_time)
        .collect();
    insta::assert_snapshot!(headers.join("\n"));
}

#[test]
fn one_file_has_no_summary_line() {
    let (code, log) = verify_log(&["examples/barrier.coll"]);
    assert_eq!(code, 3, "--no-bounded is undecided: {log}");
    assert!(!log.contains("verify: 1 files"), "{log}");
}
