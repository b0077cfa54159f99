//! verify, the simulator and `collc run` agree on every fixture: the examples, the idioms
//! (`examples/idioms/`) and the bug fixtures (`examples/bugs/`, `examples/idioms/bugs/`).
//!
//! Per fixture:
//! - *verify*: the symbolic half is read from its verdict golden
//!   (`verifier/tests/verdicts/<path>.txt`, kept equal to `verify` by `cargo test -p
//!   collc-verifier --test verdicts`): the obligations it reports `violated`, and the world
//!   size of each finding; the bounded half is run here ([`bounded_options`]: the simulator
//!   in sc and relaxed memory, P = 2..3, 2 calls, 1 tile);
//! - *run*: the host target (`collc run`'s kernel on CPU threads, no verifier gate) at P =
//!   3, 3 back-to-back calls, the parameters the simulator's grid gives first at P = 3
//!   (two tiles per element count, every `require` met): right when every output element is
//!   right, no wait timed out and every credit cell is back at 0.
//!
//! The two directions:
//! 1. what the run fails, verify rejects (a symbolic or a bounded violation);
//! 2. what verify rejects, the bounded simulator or the run shows — the run at P = 3, or,
//!    when neither does, a replay of each symbolic finding at its parameters (read from the
//!    golden): the simulator's seeded random schedules ([`SIM_RUNS`] runs from seed 1, 2
//!    calls; sequentially consistent and then relaxed memory, `fence` relaxed only), which
//!    must show a violation of the finding's class (a code of [`Obligation::shown_by`]; the
//!    `collc sim ... --schedule random` command is printed); when no replay shows one, the
//!    run at the finding with the smallest P, plain and then under `--chaos` seeds
//!    ([`CHAOS`]); when neither does, `verify`'s own bounded half (its ladder and the world
//!    sizes the symbolic findings name, [`full_bounded`]), whose counterexample must be of a
//!    finding's class and carries its replay — or the fixture is listed in [`NO_WITNESS`]
//!    with the reason. The replays are deterministic (fixed seeds, bounded by the number of
//!    runs; a replay its time cap stops is a failure, not a pass).
//!
//! "verify rejects" is the golden's symbolic half or this test's bounded half, whose bounds
//! are smaller than `verify`'s (P = 2..3, 2 calls, so that the test adds about a minute to
//! CI): a run failure that only `verify`'s larger bounded half would catch is reported as a
//! disagreement here. Without a C++ compiler the test prints one SKIP line and checks
//! neither direction. `COLLC_DIFF_FILTER=SUBSTRING` restricts the fixtures (to study one).

use collc_backend::host::{compile, run_with_source, RunConfig, RunError};
use collc_grammar::Source;
use collc_sim::bounded::{param_grid, Bounds};
use collc_spec::Validated;
use collc_verifier::bounded::BoundedOptions;
use collc_verifier::report::{Obligation, Route};
use collc_verifier::Status;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The world size of the run.
const RUN_P: i64 = 3;
/// The largest world size of the bounded half.
const BOUNDED_P: i64 = 3;

/// Fixtures verify rejects for which neither the bounded simulator, a replay nor a run is a
/// dependable witness (at P = 3, nor at the parameters of the symbolic finding, with or
/// without `--chaos`): (path, why). A timing race a run may or may not show is listed here:
/// whether this run showed it is printed, not asserted (the test must not flake).
const NO_WITNESS: [(&str, &str); 0] = [];

/// Seeded random runs of the simulator at the parameters of a symbolic finding, per
/// memory model (from seed 1: deterministic, bounded by the number of runs).
const SIM_RUNS: u64 = 300;

/// The wall-clock cap of one replay: a safety net only. A replay it stops is an error of
/// the test (raise it or lower [`SIM_RUNS`]), never a silent pass or a flaky witness.
const SIM_TIME: Duration = Duration::from_secs(60);

/// The time budget of `verify`'s bounded half when it is the witness ([`full_bounded`]):
/// far above what its state limits take, so that the load does not decide how far it
/// reaches.
const FULL_TIME: Duration = Duration::from_secs(120);

/// `--chaos` seeds of the targeted run, tried in turn after the plain run.
const CHAOS: [u64; 3] = [1, 2, 3];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixtures() -> Vec<PathBuf> {
    let filter = std::env::var("COLLC_DIFF_FILTER").unwrap_or_default();
    let mut v = Vec::new();
    for dir in [
        "examples",
        "examples/bugs",
        "examples/idioms",
        "examples/idioms/bugs",
    ] {
        let mut fs: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        fs.retain(|p| p.extension().is_some_and(|x| x == "coll"));
        fs.sort();
        v.extend(fs);
    }
    v.retain(|p| rel(p).contains(&filter));
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// A finding's parameter values as the verdict golden states them (`[P=2 root=0 n=1]`).
type Params = BTreeMap<String, i64>;

/// The symbolic half of the verdict golden: for every obligation it reports `violated`, its
/// id and the parameters of its finding with the smallest P.
fn golden_violations(path: &Path) -> Result<Vec<(String, Option<Params>)>, String> {
    let g = root()
        .join("verifier/tests/verdicts")
        .join(format!("{}.txt", rel(path)));
    let text = std::fs::read_to_string(&g).map_err(|e| format!("{}: {e}", g.display()))?;
    let mut out: Vec<(String, Option<Params>)> = Vec::new();
    let mut current: Option<usize> = None;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if !line.starts_with(' ') && words.len() >= 3 && words[1].starts_with("verify::") {
            current = (words[2] == "violated").then(|| {
                out.push((words[0].to_string(), None));
                out.len() - 1
            });
        } else if let (Some(i), Some(rest)) = (current, line.trim().strip_prefix("finding:")) {
            let inside = rest.split_once('[').and_then(|(_, r)| r.split_once(']'));
            let params: Params = inside
                .map(|(ps, _)| ps.split_whitespace())
                .into_iter()
                .flatten()
                .filter_map(|w| w.split_once('='))
                .filter(|(k, _)| k.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .filter_map(|(k, v)| Some((k.to_string(), v.parse::<i64>().ok()?)))
                .collect();
            let p_of = |m: &Params| m.get("P").copied().unwrap_or(i64::MAX);
            if params.contains_key("P") && out[i].1.as_ref().is_none_or(|q| p_of(&params) < p_of(q))
            {
                out[i].1 = Some(params);
            }
        }
    }
    Ok(out)
}

fn bounded_options(file: &str) -> BoundedOptions {
    let mut b = BoundedOptions {
        budget: Duration::from_millis(1500),
        max_states: 20_000,
        relaxed_max_states: 3_000,
        wrap_max_states: 3_000,
        file: file.to_string(),
        ..Default::default()
    };
    b.bounds.ranks = (2, BOUNDED_P);
    b.bounds.calls = 2;
    b.bounds.tiles = (1, 1);
    b.full_ranks = BOUNDED_P;
    b
}

/// The bounded half: the obligations it finds violated.
fn bounded_violations(p: &Validated, file: &str) -> Vec<String> {
    collc_verifier::bounded::check(p, &bounded_options(file))
        .into_iter()
        .filter(|o| o.status == Status::Violated)
        .map(|o| o.id.to_string())
        .collect()
}

/// The run's parameters: the simulator grid's first assignment at P = [`RUN_P`] (else at
/// P = 4, then 2: a world the domain admits), or the grid's first with `fixed` given.
fn run_params(p: &Validated, fixed: &Params) -> Option<Params> {
    let world = p.vars[p.world].name.clone();
    let worlds = match fixed.get(&world) {
        Some(w) => vec![*w],
        None => vec![RUN_P, 4, 2],
    };
    worlds.into_iter().find_map(|w| {
        let bounds = Bounds {
            ranks: (w, w),
            tiles: (2, 2),
            calls: 3,
            small_ints: 2,
        };
        let mut fixed = fixed.clone();
        fixed.remove(&world);
        param_grid(p, &bounds, &fixed).into_iter().next()
    })
}

/// The host run at the parameters `fixed` fixes (the rest from the grid): `Ok(None)`
/// right, `Ok(Some(what))` wrong, `Err` not run (why).
fn run(
    p: &Validated,
    src: &Source,
    fixed: &Params,
    chaos: Option<u64>,
) -> Result<Option<String>, String> {
    let params = run_params(p, fixed).ok_or(format!("no parameters for {fixed:?}"))?;
    let cfg = RunConfig {
        params,
        chaos,
        calls: 3,
        host_barrier: false,
        twait_timeout_ms: 2000,
        ..RunConfig::default()
    };
    match run_with_source(p, Some(src), &cfg) {
        Ok(r) if r.status == 0 && r.check.wrong == 0 && r.check.missing == 0 => {
            Ok((r.nonzero_cells > 0)
                .then(|| format!("{} credit cell(s) not back at 0", r.nonzero_cells)))
        }
        Ok(r) => Ok(Some(format!(
            "status {}, {} wrong and {} missing output element(s): {}",
            r.status, r.check.wrong, r.check.missing, r.message
        ))),
        Err(RunError::Params(m)) => Err(m),
        Err(e) => Err(e.to_string()),
    }
}

/// A replay of one symbolic finding: the simulator's seeded random schedules at the
/// finding's parameters.
#[derive(Debug)]
struct Replay {
    /// The obligation verify reports violated.
    obligation: String,
    /// The `collc sim` command of the last memory model tried (the one that showed it).
    command: String,
    /// The simulator's finding codes there (none: nothing shown).
    codes: Vec<String>,
    /// Whether a code is one of the obligation's ([`Obligation::shown_by`]).
    same_class: bool,
    /// Its wall time.
    took: Duration,
}

/// What the three said about one fixture.
#[derive(Debug)]
struct Said {
    symbolic: Vec<(String, Option<Params>)>,
    bounded: Vec<String>,
    run: Option<Result<Option<String>, String>>,
    /// A rejection neither half shows: each finding replayed by the simulator.
    replay: Vec<Result<Replay, String>>,
    /// Then, when no replay shows it, the run at its finding's parameters.
    targeted: Option<Result<Option<String>, String>>,
    /// Then, when neither shows it, `verify`'s own bounded half: (its obligation, replay)
    /// of a counterexample of a symbolic finding's class.
    full: Option<Result<Option<(String, String)>, String>>,
}

impl Said {
    /// A replay shows a violation of the class verify reports.
    fn replayed(&self) -> bool {
        self.replay
            .iter()
            .any(|r| r.as_ref().is_ok_and(|r| r.same_class))
    }
}

fn judge(path: &Path, host: bool) -> Result<Said, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .ok_or("does not check (the front end refuses it)")?;
    let src = Source::new(rel(path), text);
    let mut said = Said {
        symbolic: golden_violations(path)?,
        bounded: bounded_violations(&p, &rel(path)),
        run: host.then(|| run(&p, &src, &Params::new(), None)),
        replay: Vec::new(),
        targeted: None,
        full: None,
    };
    if host && said.bounded.is_empty() && !matches!(said.run, Some(Ok(Some(_)))) {
        // Rejected, but not shown at P <= 3: replay each finding where it is.
        said.replay = said
            .symbolic
            .iter()
            .filter_map(|(id, f)| Some(sim_replay(&p, &rel(path), id, f.as_ref()?)))
            .collect();
        // The run where the finding is (smallest P first), plain and under --chaos.
        let mut at: Vec<&Params> = said
            .symbolic
            .iter()
            .filter_map(|(_, f)| f.as_ref())
            .collect();
        at.sort_by_key(|f| f.get("P").copied());
        if let Some(f) = at.first().filter(|_| !said.replayed()) {
            for chaos in std::iter::once(None).chain(CHAOS.map(Some)) {
                let r = run(&p, &src, f, chaos);
                let shown = matches!(r, Ok(Some(_)));
                said.targeted = Some(r);
                if shown {
                    break;
                }
            }
        }
        if !said.symbolic.is_empty()
            && !said.replayed()
            && !matches!(said.targeted, Some(Ok(Some(_))))
        {
            said.full = Some(full_bounded(&p, &src, &said.symbolic));
        }
    }
    Ok(said)
}

/// `verify` with its own bounded half ([`BoundedOptions::cli`]: the planner's ladder, and
/// the world sizes and values the symbolic findings name; the time budget raised to
/// [`FULL_TIME`] so that the state limits bound it, not the load): the first bounded
/// obligation it reports violated that is of a symbolic finding's class
/// ([`Obligation::shown_by`]), with its counterexample's replay.
fn full_bounded(
    p: &Validated,
    src: &Source,
    symbolic: &[(String, Option<Params>)],
) -> Result<Option<(String, String)>, String> {
    let class: Vec<Obligation> = symbolic
        .iter()
        .filter_map(|(id, _)| Obligation::from_id(id))
        .flat_map(|o| o.shown_by().iter().copied())
        .collect();
    let opts = collc_verifier::Options {
        bounded: Some(BoundedOptions {
            budget: FULL_TIME,
            ..BoundedOptions::cli()
        }),
        ..collc_verifier::Options::for_source(src)
    };
    let report = collc_verifier::verify(p, &opts);
    let shown = report.obligations.iter().find(|o| {
        o.status == Status::Violated
            && Obligation::from_id(&o.id)
                .is_some_and(|b| b.route() == Route::Bounded && class.contains(&b))
    });
    Ok(shown.map(|o| {
        let replay = o
            .evidence
            .counterexample
            .as_ref()
            .and_then(|c| c.replay.clone());
        (o.id.clone(), replay.unwrap_or_default())
    }))
}

/// The simulator's seeded random schedules ([`SIM_RUNS`] runs from seed 1, 2 calls) at the
/// parameters `fixed` fixes (the rest from the grid), in each memory model the obligation
/// `id` can be shown in (`fence`: relaxed only), until one shows a violation of its class.
fn sim_replay(p: &Validated, file: &str, id: &str, fixed: &Params) -> Result<Replay, String> {
    use collc_sim::{simulate, Budget, Memory, Schedule, SimConfig};
    let ob = Obligation::from_id(id).ok_or(format!("no obligation {id}"))?;
    let params = run_params(p, fixed).ok_or(format!("no parameters for {fixed:?}"))?;
    let memories: &[(Memory, &str)] = match ob {
        Obligation::Fence => &[(Memory::Relaxed, "relaxed")],
        _ => &[(Memory::Sc, "sc"), (Memory::Relaxed, "relaxed")],
    };
    let class: Vec<&str> = ob
        .shown_by()
        .iter()
        .flat_map(|o| {
            collc_sim::bounded::OBLIGATIONS
                .iter()
                .filter(|(n, _)| *n == o.id())
        })
        .flat_map(|(_, codes)| codes.iter().copied())
        .collect();
    let start = Instant::now();
    let mut replay = None;
    for &(memory, flag) in memories {
        let cfg = SimConfig {
            calls: 2,
            memory,
            schedule: Schedule::Random {
                seed: 1,
                runs: SIM_RUNS,
            },
            budget: Budget {
                max_time: SIM_TIME,
                ..Budget::default()
            },
            ..SimConfig::default()
        };
        let r = simulate(p, &params, &cfg).map_err(|e| e.to_string())?;
        if let Some(why) = &r.stats.stopped {
            return Err(format!("the replay stopped early: {why}"));
        }
        let ps: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("--param {k}={v}"))
            .collect();
        let codes: Vec<String> = r.findings.iter().map(|f| f.code.clone()).collect();
        let same_class = codes.iter().any(|c| class.contains(&c.as_str()));
        replay = Some(Replay {
            obligation: id.to_string(),
            command: format!(
                "collc sim {file} {} --calls 2 --memory {flag} --schedule random --seed 1 --runs {SIM_RUNS}",
                ps.join(" ")
            ),
            codes,
            same_class,
            took: start.elapsed(),
        });
        if same_class {
            break;
        }
    }
    replay.ok_or(format!("{id}: no memory model to replay in"))
}

/// The disagreement of one fixture, if any.
fn disagreement(path: &Path, s: &Said) -> Option<String> {
    let name = rel(path);
    let rejects = !s.symbolic.is_empty() || !s.bounded.is_empty();
    let run_fails = matches!(&s.run, Some(Ok(Some(_))));
    if run_fails && !rejects {
        return Some(format!(
            "{name}: the run fails ({:?}), verify rejects nothing",
            s.run
        ));
    }
    // No C++ compiler: direction 2 needs the runs.
    s.run.as_ref()?;
    if let Some(Err(e)) = s.replay.iter().find(|r| r.is_err()) {
        return Some(format!("{name}: a replay did not run: {e}"));
    }
    let listed = NO_WITNESS.iter().any(|(n, _)| *n == name);
    let witnessed = !s.bounded.is_empty()
        || run_fails
        || s.replayed()
        || matches!(&s.targeted, Some(Ok(Some(_))))
        || matches!(&s.full, Some(Ok(Some((_, replay)))) if !replay.is_empty());
    if listed && rejects && witnessed {
        eprintln!(
            "{name}: listed in NO_WITNESS, and shown this time ({:?}, {:?}, {:?})",
            s.replay, s.targeted, s.full
        );
    }
    match (rejects && !witnessed, listed) {
        (true, false) => Some(format!(
            "{name}: verify rejects ({:?}) but neither the bounded simulator nor the run shows it (run: {:?})",
            s.symbolic, s.run
        )),
        (false, true) if !rejects => Some(format!(
            "{name}: listed in NO_WITNESS but verify does not reject it: remove it"
        )),
        _ => None,
    }
}

#[test]
fn verify_sim_and_run_agree_on_every_fixture() {
    compile::set_cache_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"));
    let host = match compile::find_compiler() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("SKIP the run half of the differential test: no C++ compiler: {e}");
            false
        }
    };
    let files = fixtures();
    let start = Instant::now();
    let said: Vec<(PathBuf, Result<Said, String>)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..2)
            .map(|k| {
                let files = &files;
                sc.spawn(move || {
                    files
                        .iter()
                        .skip(k)
                        .step_by(2)
                        .map(|f| (f.clone(), judge(f, host)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    let mut bad = Vec::new();
    let mut replays = (0, Duration::ZERO);
    for (f, s) in &said {
        eprintln!("{}: {s:?}", rel(f));
        for r in s.iter().flat_map(|s| s.replay.iter().flatten()) {
            eprintln!(
                "{}: {} replayed in {:.1} s ({}): {}: {:?}",
                rel(f),
                r.obligation,
                r.took.as_secs_f64(),
                if r.same_class { "shown" } else { "not shown" },
                r.command,
                r.codes
            );
            replays = (replays.0 + 1, replays.1 + r.took);
        }
        if let Some(Ok(Some((id, replay)))) = s.as_ref().ok().and_then(|s| s.full.as_ref()) {
            eprintln!("{}: shown by verify's bounded half: {id}: {replay}", rel(f));
        }
        match s {
            Ok(s) => bad.extend(disagreement(f, s)),
            Err(e) if e.starts_with("does not check") => {}
            Err(e) => bad.push(format!("{}: {e}", rel(f))),
        }
    }
    eprintln!(
        "{} fixtures in {:.1} s, of which {} replays {:.1} s",
        said.len(),
        start.elapsed().as_secs_f64(),
        replays.0,
        replays.1.as_secs_f64()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
