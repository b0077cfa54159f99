//! `collc emit --target mpi --pmpi`: libcollc_pmpi.so under `LD_PRELOAD` answers a plain MPI
//! program's collectives (collc/tests/pmpi/pmpi_check.c, no collc header) with the packaged
//! protocols. At np 2, 3 and 4 the program's own checks (every result against values
//! computed locally) pass with and without the library, with the same number of checks; the
//! counters (`COLLC_PMPI_STATS=1`) show MPI_Barrier, MPI_Bcast and MPI_Allreduce served
//! (sum, max, min and prod, from one protocol's `op` parameter), and every kind of call that
//! must pass through counted under its reason (for MPI_Allreduce: exactly those calls).
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

fn scratch() -> PathBuf {
    let d = repo_root()
        .join("target")
        .join("collc-pmpi-tests")
        .join(std::process::id().to_string());
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// `mpirun -np NP PROG` in a job directory of its own, with `preload` (if any) preloaded
/// in every rank. osc/sm: Open MPI 4.1's osc/rdma gives the disjoint halves of one
/// MPI_Comm_split colliding shared-memory segment names (open-mpi/ompi#9492).
fn mpirun(np: u32, prog: &Path, preload: Option<&Path>) -> Output {
    let dir = launch::JobDir::new().expect("job directory");
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &np.to_string()]);
    c.args(["-x", "OMPI_MCA_osc=sm"]);
    if let Some(lib) = preload {
        c.args(["-x", &format!("LD_PRELOAD={}", lib.display())]);
        c.args(["-x", "COLLC_PMPI_STATS=1"]);
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

/// "ok N checks" of rank 0.
fn checks(out: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.strip_prefix("ok ")?.strip_suffix(" checks")?.parse().ok())
}

#[test]
fn a_plain_mpi_program_is_served_and_what_must_pass_through_is_counted() {
    let tc = match build::find_toolchain() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("SKIP pmpi: needs Open MPI: {e}");
            return;
        }
    };
    let dir = scratch();
    let files = [
        "examples/barrier.coll",
        "examples/allreduce_mesh.coll",
        "examples/broadcast_read_complete.coll",
    ];
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo_root())
        .args(["emit", "--target", "mpi", "--pmpi"])
        .args(files)
        .arg("-o")
        .arg(dir.join("lib"))
        .output()
        .expect("collc runs");
    assert!(o.status.success(), "{}", text(&o));
    let lib = dir.join("lib/libcollc_pmpi.so");
    assert!(lib.exists(), "{}", text(&o));
    let mpicc = tc.mpicxx.with_file_name("mpicc");
    let exe = dir.join("pmpi_check");
    let o = Command::new(&mpicc)
        .args(["-O2", "-Wall", "-Werror"])
        .arg(repo_root().join("collc/tests/pmpi/pmpi_check.c"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("mpicc runs");
    assert!(o.status.success(), "{}", text(&o));
    for np in [2, 3, 4] {
        let native = mpirun(np, &exe, None);
        let served = mpirun(np, &exe, Some(&lib));
        let (tn, ts) = (text(&native), text(&served));
        assert!(native.status.success(), "np {np} native: {tn}");
        assert!(served.status.success(), "np {np} preloaded: {ts}");
        let n = checks(&tn).unwrap_or_else(|| panic!("np {np} native: {tn}"));
        assert_eq!(checks(&ts), Some(n), "np {np} preloaded: {ts}");
        let err = String::from_utf8_lossy(&served.stderr);
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
        // Without the library nothing is counted (the counters come from it alone).
        assert!(!tn.contains("collc_pmpi:"), "np {np}: {tn}");
    }
}
