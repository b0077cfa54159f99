//! Traced MPI runs: every example (glob of `examples/*.coll`) runs under mpirun at 2 and 4
//! processes for 3 back-to-back calls with tracing on; the run must be right and each rank's
//! trace must conform to the IR (a rank runs its blocks in turn, so it is one thread of the
//! check). Then the generator faults of `collc_backend::cpp::mutate` on a representative set
//! of examples (each fault is also tried on every example on the host, `trace_runs.rs`): the
//! trace check must catch each.
//!
//! Needs Open MPI (`mpicxx`, `mpirun`); without it the tests print a loud SKIP line and pass.

use collc_backend::cpp::mutate::{self, Mutation};
use collc_backend::mpi::{self, build, MpiOptions, MpiTraced};
use collc_backend::testing::default_params;
use collc_spec::Validated;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

fn have_mpi() -> bool {
    match build::find_toolchain() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("\n*** SKIP: the traced MPI tests need Open MPI: {e}\n");
            false
        }
    }
}

/// mpirun jobs run one at a time (np 4 is oversubscribed on small machines).
fn mpirun_lock() -> std::sync::MutexGuard<'static, ()> {
    static L: OnceLock<Mutex<()>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn examples() -> Vec<(PathBuf, Validated)> {
    collc_backend::testing::examples(&collc_verifier::Ranges)
        .into_iter()
        .map(|(path, _, p)| (path, p))
        .collect()
}

fn traced(p: &Validated, np: i64, wait_ms: u64) -> Result<MpiTraced, String> {
    let opts = MpiOptions {
        params: default_params(p, np).ok_or("no parameters bind")?,
        calls: 3,
        wait_timeout_ms: wait_ms,
        deadline: Duration::from_secs(120),
        ..MpiOptions::default()
    };
    let _l = mpirun_lock();
    mpi::run_traced(p, &opts, 0).map_err(|e| e.to_string())
}

fn describe(r: &MpiTraced) -> String {
    match &r.trace {
        Ok(c) => format!(
            "{} rank(s), {} event(s), {} scheduled, findings {:?}",
            c.threads, c.events, c.scheduled, c.findings
        ),
        Err(e) => format!("trace not checked: {e}"),
    }
}

#[test]
fn every_example_conforms_traced_at_2_and_4_processes() {
    if !have_mpi() {
        return;
    }
    let mut failures = Vec::new();
    for (path, p) in examples() {
        for np in [2, 4] {
            match traced(&p, np, 20_000) {
                Ok(r) if r.ok() => eprintln!("ok  {} np {np}: {}", path.display(), describe(&r)),
                Ok(r) => failures.push(format!(
                    "{} np {np}: {}\n{}",
                    path.display(),
                    r.report.outcome.summary(),
                    describe(&r)
                )),
                Err(e) => failures.push(format!("{} np {np}: {e}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fault_is_caught_on_representative_examples() {
    if !have_mpi() {
        return;
    }
    let wanted = ["barrier.coll", "allreduce_mesh.coll", "all_to_all_v.coll"];
    let set: Vec<(PathBuf, Validated)> = examples()
        .into_iter()
        .filter(|(path, _)| wanted.iter().any(|w| path.ends_with(w)))
        .collect();
    assert_eq!(set.len(), wanted.len());
    let opts = mpi::EmitOptions {
        source: None,
        warning: Vec::new(),
        world_limit: None,
    };
    let mut missed = Vec::new();
    let mut caught = 0;
    for m in [
        Mutation::DropFence,
        Mutation::SwapNotifyTarget,
        Mutation::ResetValue,
        Mutation::ReorderWait,
    ] {
        for (path, p) in &set {
            let good = mpi::emit(p, &opts);
            if mutate::with(m, || mpi::emit(p, &opts)) == good {
                continue;
            }
            match mutate::with(m, || traced(p, 2, 1_500)) {
                Ok(r) if r.trace.as_ref().is_ok_and(|c| !c.conforms()) => {
                    caught += 1;
                    eprintln!("caught {m:?} in {}: {}", path.display(), describe(&r));
                }
                Ok(r) => missed.push(format!("{m:?} {}: {}", path.display(), describe(&r))),
                Err(e) => missed.push(format!("{m:?} {}: {e}", path.display())),
            }
        }
    }
    assert!(caught >= 8, "only {caught} faulty kernels");
    assert!(missed.is_empty(), "not caught:\n{}", missed.join("\n"));
}
