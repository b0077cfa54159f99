//! The idioms corpus (`examples/idioms/`) runs: every correct idiom under `collc run` on
//! the host target (CPU threads) and, with Open MPI, on the MPI target, at P = 3, three
//! back-to-back calls, with every output element compared and every credit cell back at 0
//! (`collc run`'s `ok` verdict). The parameters are the simulator's first assignment at
//! P = 3, two tiles per element count ([`collc_sim::bounded::param_grid`]: in every domain,
//! every `require` met). Idioms the verifier does not pass yet (the OPEN list of
//! `idioms.rs`) run with `--allow-unverified`: this test checks that they compute the
//! collective, not the gate. Without Open MPI the MPI half prints one SKIP line.

use collc_sim::bounded::{param_grid, Bounds};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn idioms() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples/idioms"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "coll"));
    v.sort();
    v
}

/// `--param NAME=V` for every parameter but P: the first grid assignment at P = 3.
fn params(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("read .coll");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .unwrap_or_else(|| panic!("{} does not validate", path.display()));
    let world = p.vars[p.world].name.clone();
    let bounds = Bounds {
        ranks: (3, 3),
        tiles: (2, 2),
        calls: 3,
        small_ints: 2,
    };
    let grid = param_grid(&p, &bounds, &Default::default());
    let first = grid
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{}: no assignment at P = 3", path.display()));
    first
        .into_iter()
        .filter(|(k, _)| *k != world)
        .flat_map(|(k, v)| ["--param".to_string(), format!("{k}={v}")])
        .collect()
}

/// `collc run --target TARGET` on `path`: (exit code, stdout + stderr).
fn run(path: &Path, target: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .args(["run", "--target", target, "-P", "3", "--calls", "3"])
        .args(["--allow-unverified", "--color", "never"])
        .args(params(path))
        .arg(path.strip_prefix(root()).unwrap_or(path))
        .output()
        .expect("collc runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn check(target: &str) {
    let files = idioms();
    assert!(files.len() >= 8, "idioms missing: {files:?}");
    let mut failures = Vec::new();
    for f in &files {
        let (code, text) = run(f, target);
        let verdict = text
            .lines()
            .find(|l| l.starts_with("collc run "))
            .unwrap_or("")
            .to_string();
        eprintln!("{target}: {verdict}");
        // Host: `collc run FILE: ok: P=3 ...`; MPI: `collc run --target mpi FILE: ok (np 3, ...)`.
        if code != 0 || !(verdict.contains(": ok: ") || verdict.contains(": ok (")) {
            failures.push(format!("{} on {target}: exit {code}\n{text}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_idiom_runs_right_on_the_host() {
    check("host");
}

#[test]
fn every_idiom_runs_right_on_mpi() {
    if let Err(e) = collc_backend::mpi::build::find_toolchain() {
        eprintln!("SKIP the idioms on MPI: needs Open MPI: {e}");
        return;
    }
    check("mpi");
}
