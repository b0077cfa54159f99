//! The collective's meaning is written once (`collc_spec::meaning`); the simulator, the host
//! runner and the MPI runner all derive their checks from it. This test runs all three on
//! every example (and on bug fixtures whose failure does not depend on the schedule) and
//! requires the same verdict from each: outputs equal to the one definition, or not.
//!
//! * simulator: round-robin, sequential consistency, 3 calls; the outputs are compared by
//!   provenance (who contributed which element of which call) with the meaning's segments;
//! * host: P rank threads, 3 calls, no barrier between calls; every collected float is
//!   compared with the fold of the meaning's contributions over the staged payloads;
//! * MPI: `mpirun -np 2`, 3 calls, no barrier between calls, the meaning handed to the
//!   program as its oracle table.
//!
//! Shapes the meaning refuses (an allgather `input` shorter than a row, an all_to_all whose
//! input rows differ from its target rows) are refused by all three with the same message:
//! the copies used to differ there (compare part of a row / `r*m` vs `r*m_in`).
//!
//! Without a C++ compiler the host and MPI parts print a loud SKIP; without Open MPI the MPI
//! part does.

use collc_backend::host::{compile, run_with_source, RunConfig, RunError};
use collc_backend::mpi::{self, build, launch};
use collc_backend::testing::default_params;
use collc_grammar::Source;
use collc_sim::{Memory, Schedule, SimConfig};
use collc_spec::Validated;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// The verdict of one consumer: `Ok(true)` outputs equal the meaning, `Ok(false)` they do
/// not (or the run deadlocked), `Err` the consumer refused or failed otherwise.
type Verdict = Result<bool, String>;

/// P=2 parameters, wide sizes shrunk to keep the simulator quick.
fn params_of(p: &Validated) -> BTreeMap<String, i64> {
    let mut params = default_params(p, 2).expect("parameters bind at P=2");
    for v in p.inputs().into_iter().skip(1) {
        let name = &p.vars[v].name;
        if params[name] == 1000 {
            let mut smaller = params.clone();
            smaller.insert(name.clone(), 300);
            if collc_spec::eval::bind(p, &smaller).is_ok() {
                params = smaller;
            }
        }
    }
    params
}

fn sim(p: &Validated, params: &BTreeMap<String, i64>) -> Verdict {
    let cfg = SimConfig {
        calls: 3,
        memory: Memory::Sc,
        schedule: Schedule::RoundRobin,
        ..SimConfig::default()
    };
    let r = collc_sim::simulate(p, params, &cfg).map_err(|e| format!("sim: {e}"))?;
    if let Some(f) = r.findings.iter().find(|f| f.code == "sim::runtime-error") {
        return Err(f.message.clone());
    }
    Ok(!r
        .findings
        .iter()
        .any(|f| f.code == "sim::wrong-result" || f.code == "sim::deadlock"))
}

fn host(p: &Validated, src: &Source, params: &BTreeMap<String, i64>) -> Verdict {
    let cfg = RunConfig {
        params: params.clone(),
        calls: 3,
        host_barrier: false,
        twait_timeout_ms: 2000,
        ..RunConfig::default()
    };
    match run_with_source(p, Some(src), &cfg) {
        Ok(r) => Ok(r.status != 2 && r.check.wrong == 0 && r.check.missing == 0),
        Err(RunError::Params(m)) => Err(m),
        Err(e) => Err(format!("host: {e}")),
    }
}

fn mpi_run(tc: &build::Toolchain, p: &Validated, params: &BTreeMap<String, i64>) -> Verdict {
    let world = &p.vars[p.world].name;
    let mut params = params.clone();
    let np = params.remove(world).unwrap_or(2) as u32;
    let oracle = mpi::table(p, &params, np, 3)?;
    let text = mpi::emit(p, &mpi::EmitOptions::default()).map_err(|d| format!("{d:?}"))?;
    let built = build::build(tc, &text).map_err(|e| e.to_string())?;
    let cfg = launch::LaunchConfig {
        np,
        calls: 3,
        params,
        wait_timeout_ms: 3000,
        deadline: Duration::from_secs(60),
        oracle: Some(oracle),
        ..launch::LaunchConfig::default()
    };
    let o = launch::launch(tc, &built.binary, &cfg).map_err(|e| e.to_string())?;
    let checked = o
        .json
        .as_ref()
        .and_then(|j| j.get("oracle"))
        .and_then(|v| v.as_bool());
    match &o.verdict {
        launch::Verdict::Ok if checked == Some(true) => Ok(true),
        launch::Verdict::Wrong { mismatches, .. } if *mismatches > 0 => Ok(false),
        launch::Verdict::WaitTimeout => Ok(false),
        _ => Err(format!("mpi: {}", o.summary())),
    }
}

fn load(path: &Path) -> (Source, Validated) {
    let text = std::fs::read_to_string(path).expect("readable");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .unwrap_or_else(|| panic!("{} does not check", path.display()));
    (Source::new(path.display().to_string(), text), p)
}

fn toolchains() -> (bool, Option<build::Toolchain>) {
    compile::set_cache_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"));
    let cxx = match compile::find_compiler() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("\n*** SKIP host and MPI parts: {e}\n");
            false
        }
    };
    let mpi = match build::find_toolchain() {
        Ok(t) if cxx => Some(t),
        Ok(_) => None,
        Err(e) => {
            eprintln!("\n*** SKIP MPI part: {e}\n");
            None
        }
    };
    (cxx, mpi)
}

#[test]
fn simulator_host_and_mpi_agree_with_the_one_definition_on_every_example() {
    let (cxx, tc) = toolchains();
    let mut files: Vec<(PathBuf, bool)> = std::fs::read_dir(root().join("examples"))
        .expect("examples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .map(|p| (p, true))
        .collect();
    files.sort();
    // Bugs whose failure does not depend on the schedule: a deadlock in every interleaving.
    for bug in [
        "barrier_wait_before_notify.coll",
        "unreachable_threshold.coll",
        "broadcast_reset_off_by_one.coll",
    ] {
        files.push((root().join("examples/bugs").join(bug), false));
    }
    let mut bad = Vec::new();
    for (f, right) in &files {
        let (src, p) = load(f);
        let params = params_of(&p);
        let mut verdicts = vec![("sim", sim(&p, &params))];
        if cxx {
            verdicts.push(("host", host(&p, &src, &params)));
        }
        if let Some(tc) = &tc {
            verdicts.push(("mpi", mpi_run(tc, &p, &params)));
        }
        eprintln!("{} {params:?}: {verdicts:?}", f.display());
        for (who, v) in &verdicts {
            if v != &Ok(*right) {
                bad.push(format!(
                    "{}: {who} says {v:?}, the definition says outputs {}",
                    f.display(),
                    if *right { "right" } else { "wrong" }
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

const ALLGATHER_SHORT: &str = "collective g: allgather(input, target) {
    ranks P in 2..=4;
    param m: int in 1..=64;
    param k: int in 1..=64;
    require k <= m;
    signal sig[P];
    window input: f32[k] per call;
    window target: f32[P][m] per call;
    body {
        for p in ranks { put target[me][0 .. k] @ p <- input[0 .. k]; }
        fence;
        for p in peers { notify sig[me] @ p += 1; }
        for p in peers { wait sig[p] >= 1; }
    }
    epilogue { for p in peers { notify sig[p] -= 1; } }
}";

#[test]
fn shapes_without_a_meaning_are_refused_alike() {
    let (cxx, tc) = toolchains();
    let p = collc_spec::front(&collc_verifier::Ranges, ALLGATHER_SHORT)
        .protocol
        .expect("the fixture checks");
    let src = Source::new("allgather_short.coll", ALLGATHER_SHORT);
    let params: BTreeMap<String, i64> = [("P", 2), ("m", 8), ("k", 5)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let want = "allgather: `input` has 5 elements but each row of `target` has 8";
    let mut verdicts = vec![("sim", sim(&p, &params))];
    if cxx {
        verdicts.push(("host", host(&p, &src, &params)));
    }
    if let Some(tc) = &tc {
        verdicts.push(("mpi", mpi_run(tc, &p, &params)));
    }
    for (who, v) in &verdicts {
        assert!(
            matches!(v, Err(m) if m.contains(want)),
            "{who}: {v:?} (want a refusal: {want})"
        );
    }
}
