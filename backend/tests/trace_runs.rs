//! Traced host runs: every example (glob of `examples/*.coll`) runs at P=2 and P=4 for 3
//! back-to-back calls with tracing on, in-process (optimized build); the run must be right and
//! its trace must conform to the IR (per-thread event sequences and the reconstructed
//! schedule). Then the mutation tests: each fault injected into the generator
//! (`collc_backend::cpp::mutate`) must be caught by the trace check on every example where
//! the fault changes the emitted kernel and a run can see it.
//!
//! What a dynamic check cannot see, and these tests therefore do not claim: faults in the
//! orderings the generator inserts (publish / acquire barriers are not traced, and on CPU
//! threads they are plain fences whose absence changes no event); a `.coll` fence whose
//! barrier is dropped while its trace point stays (the trace point is the generator's word
//! for where the fence is); faults on paths the run's parameters do not take (another root,
//! another P, a tile tail that does not occur); a fault that is the identity at both world
//! sizes run (each fault is tried at P=2, then at P=4 if P=2 does not show it); and data faults inside tiles
//! (not window accesses: the oracle's output check sees those).
//!
//! Without a C++ compiler these tests print a loud SKIP line and pass.

use collc_backend::cpp::mutate::{self, Mutation};
use collc_backend::cpp::{emit, EmitOptions, Target};
use collc_backend::host::{run_traced, Exec, RunConfig, TracedRun};
use collc_backend::testing::default_params;
use collc_backend::trace::Finding;
use collc_grammar::Source;
use collc_spec::Validated;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn setup() -> bool {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache");
    collc_backend::testing::compiler_or_skip(&cache, "the traced-run tests")
}

fn examples() -> Vec<(PathBuf, Source, Validated)> {
    collc_backend::testing::examples(&collc_verifier::Ranges)
        .into_iter()
        .map(|(path, text, p)| {
            let src = Source::new(path.display().to_string(), text);
            (path, src, p)
        })
        .collect()
}

fn config(p: &Validated, world: i64, twait_ms: u32) -> Option<RunConfig> {
    Some(RunConfig {
        params: default_params(p, world)?,
        calls: 3,
        twait_timeout_ms: twait_ms,
        exec: Exec::InProcess,
        wall_limit: Duration::from_secs(120),
        ..RunConfig::default()
    })
}

fn describe(r: &TracedRun) -> String {
    match &r.trace {
        Ok(c) => format!(
            "{} thread(s), {} event(s), {} scheduled, findings {:?}",
            c.threads, c.events, c.scheduled, c.findings
        ),
        Err(e) => format!("trace not checked: {e}"),
    }
}

#[test]
fn every_example_conforms_traced_at_p2_and_p4() {
    if !setup() {
        return;
    }
    let mut failures = Vec::new();
    let mut runs = 0;
    for (path, src, p) in examples() {
        for world in [2, 4] {
            let Some(cfg) = config(&p, world, 20_000) else {
                failures.push(format!(
                    "{}: no parameters bind at P={world}",
                    path.display()
                ));
                continue;
            };
            runs += 1;
            match run_traced(&p, Some(&src), &cfg, 0) {
                Ok(r) if r.ok() => {
                    eprintln!("ok  {} P={world}: {}", path.display(), describe(&r));
                }
                Ok(r) => failures.push(format!(
                    "{} P={world}: {}\n{}",
                    path.display(),
                    r.report.summary(),
                    describe(&r)
                )),
                Err(e) => failures.push(format!("{} P={world}: {e}", path.display())),
            }
        }
    }
    assert!(runs >= 30, "only {runs} traced runs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_overflowing_trace_is_reported_not_truncated() {
    if !setup() {
        return;
    }
    let (_, src, p) = examples()
        .into_iter()
        .find(|(path, ..)| path.ends_with("barrier.coll"))
        .expect("barrier example");
    let cfg = config(&p, 4, 20_000).expect("params");
    // Each thread records 3 notifies + 3 waits + 3 resets + 1 fence per call: 4 events fit.
    let r = run_traced(&p, Some(&src), &cfg, 4).expect("runs");
    assert!(r.report.ok(), "{}", r.report.summary());
    let c = r.trace.as_ref().expect("checked");
    assert!(!c.conforms());
    assert!(
        c.findings
            .iter()
            .any(|f| matches!(f, Finding::Overflow { recorded: 4, dropped, .. } if *dropped == 26)),
        "{:?}",
        c.findings
    );
}

/// Whether fault `m` changes the kernel emitted for `p`.
fn changes_kernel(p: &Validated, m: Mutation) -> bool {
    let opts = EmitOptions {
        source: None,
        warning: Vec::new(),
        world_limit: None,
    };
    let good = emit(p, Target::Host, &opts);
    let bad = mutate::with(m, || emit(p, Target::Host, &opts));
    good != bad
}

/// Runs `p` traced with fault `m` at world size `world`: `Ok(description)` when the fault is
/// caught (the trace does not conform, or the run itself fails naming the statement, e.g. a
/// swapped index the kernel's range check refuses), `Err(description)` when not.
fn traced_with_fault(
    m: Mutation,
    src: &Source,
    p: &Validated,
    world: i64,
) -> Result<String, String> {
    let Some(cfg) = config(p, world, 1_500) else {
        return Err(format!("P={world}: no default parameters"));
    };
    match mutate::with(m, || run_traced(p, Some(src), &cfg, 0)) {
        Ok(r) if r.trace.as_ref().is_ok_and(|c| !c.conforms()) => Ok(describe(&r)),
        Ok(r) if !r.report.ok() => Ok(format!("run failed: {}", r.report.summary())),
        Ok(r) => Err(format!(
            "P={world}: {}\n{}",
            r.report.summary(),
            describe(&r)
        )),
        Err(e) => Err(format!("P={world}: {e}")),
    }
}

fn mutation_caught(m: Mutation) {
    if !setup() {
        return;
    }
    let mut caught = 0;
    let mut missed = Vec::new();
    for (path, src, p) in examples() {
        if !changes_kernel(&p, m) {
            continue;
        }
        // A fault can be the identity at P=2 (one peer; a swapped target equal to the
        // index at the default root): then P=4 must show it.
        match traced_with_fault(m, &src, &p, 2).or_else(|_| traced_with_fault(m, &src, &p, 4)) {
            Ok(how) => {
                caught += 1;
                eprintln!("caught {m:?} in {}: {how}", path.display());
            }
            Err(why) => missed.push(format!("{}: {why}", path.display())),
        }
    }
    assert!(caught > 0, "{m:?} changed no example's kernel");
    assert!(
        missed.is_empty(),
        "{m:?} not caught:\n{}",
        missed.join("\n")
    );
}

#[test]
fn mutation_drop_fence_is_caught() {
    mutation_caught(Mutation::DropFence);
}

#[test]
fn mutation_swap_notify_target_is_caught() {
    mutation_caught(Mutation::SwapNotifyTarget);
}

#[test]
fn mutation_reset_value_is_caught() {
    mutation_caught(Mutation::ResetValue);
}

#[test]
fn mutation_reorder_wait_is_caught() {
    mutation_caught(Mutation::ReorderWait);
}
