//! `collc emit --target mpi --pmpi`: libcollc_pmpi.so under `LD_PRELOAD` answers a plain MPI
//! program's collectives (collc/tests/pmpi/pmpi_check.c, no collc header) with the packaged
//! protocols. At np 2, 3 and 4 the program's own checks (every result against values
//! computed locally) pass with and without the library, with the same number of checks; the
//! counters (`COLLC_PMPI_STATS=1`) show MPI_Barrier, MPI_Bcast and MPI_Allreduce served
//! (sum, max, min and prod, from one protocol's `op` parameter), and every kind of call that
//! must pass through counted under its reason (for MPI_Allreduce: exactly those calls).
//! collc/tests/pmpi/pmpi_kinds.c does the same for MPI_Reduce_scatter_block, MPI_Allgather,
//! MPI_Alltoall and MPI_Alltoallv (the row length per call).
//!
//! Needs Open MPI (`mpicxx`, `mpicc`, `mpirun`); without it the test prints one SKIP line.

mod common;

use collc_backend::mpi::{build, launch};
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch(test: &str) -> PathBuf {
    let d = repo_root()
        .join("target")
        .join("collc-pmpi-tests")
        .join(format!("{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// `mpirun -np NP PROG` in a job directory of its own, with `preload` (if any) preloaded
/// in every rank. osc/sm: Open MPI 4.1's osc/rdma gives the disjoint halves of one
/// MPI_Comm_split colliding shared-memory segment names (open-mpi/ompi#9492).
/// `env` is exported to every rank.
fn mpirun_env(np: u32, prog: &Path, preload: Option<&Path>, env: &[(&str, &str)]) -> Output {
    let dir = launch::JobDir::new().expect("job directory");
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &np.to_string()]);
    c.args(["-x", "OMPI_MCA_osc=sm"]);
    if let Some(lib) = preload {
        c.args(["-x", &format!("LD_PRELOAD={}", lib.display())]);
        c.args(["-x", "COLLC_PMPI_STATS=1"]);
    }
    for (k, v) in env {
        c.args(["-x", &format!("{k}={v}")]);
    }
    c.arg(prog)
        .envs(dir.env(true))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c.output().expect("mpirun runs")
}

/// The count after `label` on the counters' line of `coll` (0 when absent).
fn count(stderr: &str, coll: &str, label: &str) -> u64 {
    let Some(line) = stderr
        .lines()
        .find(|l| l.starts_with(&format!("collc_pmpi: {coll} ")))
    else {
        return 0;
    };
    line.split(", ")
        .find_map(|part| {
            let i = part.find(label)?;
            part[i + label.len()..].trim().parse().ok()
        })
        .unwrap_or(0)
}

/// `collc emit --target mpi --pmpi FILES -o DIR`: DIR/libcollc_pmpi.so.
fn pmpi_library(files: &[&str], dir: &Path) -> PathBuf {
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo_root())
        .args(["emit", "--target", "mpi", "--pmpi"])
        .args(files)
        .arg("-o")
        .arg(dir)
        .output()
        .expect("collc runs");
    assert!(o.status.success(), "{}", text(&o));
    let lib = dir.join("libcollc_pmpi.so");
    assert!(lib.exists(), "{}", text(&o));
    lib
}

/// collc/tests/pmpi/NAME.c built with mpicc into DIR/NAME.
fn client(tc: &build::Toolchain, name: &str, dir: &Path) -> PathBuf {
    let mpicc = tc.mpicxx.with_file_name("mpicc");
    let exe = dir.join(name);
    let o = Command::new(&mpicc)
        .args(["-O2", "-Wall", "-Werror"])
        .arg(repo_root().join(format!("collc/tests/pmpi/{name}.c")))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("mpicc runs");
    assert!(o.status.success(), "{}", text(&o));
    exe
}

/// The library of `files` and the client NAME built in a scratch folder of their own, or
/// None (one SKIP line) without Open MPI.
fn setup(name: &str, files: &[&str]) -> Option<(PathBuf, PathBuf)> {
    let tc = match build::find_toolchain() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("SKIP pmpi {name}: needs Open MPI: {e}");
            return None;
        }
    };
    let dir = scratch(name);
    let lib = pmpi_library(files, &dir.join("lib"));
    Some((lib, client(&tc, name, &dir)))
}

/// The client at np `np` natively and preloaded (with `env`): both succeed with the same
/// number of checks, and only the preloaded run prints counters; its stderr.
fn both(np: u32, exe: &Path, lib: &Path, env: &[(&str, &str)]) -> String {
    let native = mpirun_env(np, exe, None, env);
    let served = mpirun_env(np, exe, Some(lib), env);
    let (tn, ts) = (text(&native), text(&served));
    assert!(native.status.success(), "np {np} native: {tn}");
    assert!(served.status.success(), "np {np} preloaded: {ts}");
    let n = checks(&tn).unwrap_or_else(|| panic!("np {np} native: {tn}"));
    assert_eq!(checks(&ts), Some(n), "np {np} preloaded: {ts}");
    // Without the library nothing is counted (the counters come from it alone).
    assert!(!tn.contains("collc_pmpi:"), "np {np}: {tn}");
    String::from_utf8_lossy(&served.stderr).into_owned()
}

/// "ok N checks" of rank 0.
fn checks(out: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.strip_prefix("ok ")?.strip_suffix(" checks")?.parse().ok())
}

#[test]
fn a_plain_mpi_program_is_served_and_what_must_pass_through_is_counted() {
    let files = [
        "examples/barrier.coll",
        "examples/allreduce_mesh.coll",
        "examples/broadcast_read_complete.coll",
    ];
    let Some((lib, exe)) = setup("pmpi_check", &files) else {
        return;
    };
    for np in [2, 3, 4] {
        let err = both(np, &exe, &lib, &[]);
        for coll in ["MPI_Barrier", "MPI_Bcast", "MPI_Allreduce"] {
            assert!(count(&err, coll, "served") > 0, "np {np}: {coll}: {err}");
        }
        // Exactly the allreduces that must pass through do, per rank: an unsigned datatype;
        // a user op and MPI_BAND; count 0; an intercommunicator. So every min, max and
        // prod call (and the f64 / i64 / i32 ones) was served.
        let n = u64::from(np);
        for (reason, per_rank) in [
            ("(datatype)", 1),
            ("(op)", 2),
            ("(count)", 1),
            ("(intercommunicator)", 1),
        ] {
            let got = count(&err, "MPI_Allreduce", reason);
            assert_eq!(got, per_rank * n, "np {np}: MPI_Allreduce {reason}: {err}");
        }
        for (coll, reason) in [
            ("MPI_Bcast", "(datatype)"),
            ("MPI_Allgather", "(no-protocol)"),
        ] {
            assert!(
                count(&err, coll, reason) > 0,
                "np {np}: {coll} {reason}: {err}"
            );
        }
    }
}

/// MPI_Reduce_scatter_block, MPI_Allgather, MPI_Alltoall and MPI_Alltoallv of a plain MPI
/// program (collc/tests/pmpi/pmpi_kinds.c) answered by the shipped protocols of those kinds
/// at per-call row lengths (1, 7, 300, 4000; in place too; world, a split and a duplicate):
/// at np 2, 3 and 4 the program's checks pass with and without the library, with the same
/// number of checks; every call in the protocols' domains was served (exact counts), and
/// every call that must pass through was, counted under its reason (exact counts).
#[test]
fn reduce_scatter_allgather_alltoall_and_alltoallv_are_served_at_per_call_counts() {
    let files = [
        "examples/reduce_scatter.coll",
        "examples/allgather.coll",
        "examples/all_to_all.coll",
        "examples/all_to_all_v.coll",
    ];
    let Some((lib, exe)) = setup("pmpi_kinds", &files) else {
        return;
    };
    let env = [("COLLC_PMPI_MAX_COUNT", "65536")];
    for np in [2, 3, 4] {
        let err = both(np, &exe, &lib, &env);
        let n = u64::from(np);
        // Per rank: 3 communicators x 2 iterations x 4 row lengths (x 2: in place or not).
        for (coll, label, per_rank) in [
            ("MPI_Reduce_scatter_block", "served", 48),
            ("MPI_Reduce_scatter_block", "(datatype)", 1),
            ("MPI_Reduce_scatter_block", "(op)", 1),
            ("MPI_Reduce_scatter_block", "(count)", 1),
            ("MPI_Allgather", "served", 48),
            ("MPI_Allgather", "(datatype)", 2),
            ("MPI_Allgather", "(count)", 1),
            ("MPI_Allgather", "(intercommunicator)", 1),
            ("MPI_Alltoall", "served", 48),
            ("MPI_Alltoall", "(datatype)", 1),
            ("MPI_Alltoall", "(count)", 1),
            ("MPI_Alltoallv", "served", 24),
            ("MPI_Alltoallv", "(in-place)", 1),
            ("MPI_Alltoallv", "(datatype)", 1),
            ("MPI_Alltoallv", "(count)", 2),
        ] {
            let got = count(&err, coll, label);
            assert_eq!(got, per_rank * n, "np {np}: {coll} {label}: {err}");
        }
    }
}
