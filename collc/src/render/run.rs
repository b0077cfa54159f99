//! How `collc run` prints a run's verdict (host and MPI): one verdict line (stdout when it
//! passed, stderr when not), the gate's `--allow-unverified` stamp under it on the same
//! stream, then what the run found.

use crate::output::Output;
use collc_backend::host::RunReport;
use collc_backend::mpi::MpiReport;

/// The verdict line and, under it on the same stream, the stamp.
fn verdict(out: &mut Output, ok: bool, line: &str, stamp: &[String]) {
    let mut put = |s: &str| if ok { out.out(s) } else { out.err(s) };
    put(line);
    for s in stamp {
        put(&format!("  {s}"));
    }
}

/// A host run (`collc run --target host`).
pub fn host(file: &str, report: &RunReport, stamp: &[String], verbose: bool, out: &mut Output) {
    if verbose {
        out.err(format!(
            "library {} ({}): {}",
            report.library.display(),
            if report.cached { "cached" } else { "built" },
            report.compile_command
        ));
    }
    let line = format!("collc run {file}: {}", report.summary());
    verdict(out, report.ok(), &line, stamp);
}

/// An MPI run (`collc run --target mpi`).
pub fn mpi(file: &str, report: &MpiReport, stamp: &[String], verbose: bool, out: &mut Output) {
    let (built, outcome) = (&report.built, &report.outcome);
    if verbose {
        out.err(format!(
            "program {} ({}): {}",
            built.binary.display(),
            if built.cached { "cached" } else { "built" },
            built.command
        ));
        out.err(format!("command: {}", outcome.command));
    }
    let line = format!(
        "collc run --target mpi {}: {} [{:.1} s]",
        file,
        outcome.summary(),
        outcome.elapsed.as_secs_f64()
    );
    verdict(out, outcome.ok(), &line, stamp);
    if !outcome.ok() {
        for f in outcome.findings(12) {
            out.err(format!("  {f}"));
        }
        if outcome.json.is_none() && outcome.findings(1).is_empty() {
            let tail: Vec<&str> = outcome.stderr.lines().rev().take(15).collect();
            for l in tail.into_iter().rev() {
                out.err(format!("  | {l}"));
            }
        }
        out.err(format!("  command: {}", outcome.command));
    }
    if outcome.leftover > 0 {
        out.err(format!(
            "error: {} process(es) of the job survived SIGKILL (session {})",
            outcome.leftover, outcome.command
        ));
    } else if outcome.orphans_killed > 0 {
        out.err(format!(
            "warning: {} orphaned process(es) of the job were still running after mpirun exited; killed",
            outcome.orphans_killed
        ));
    }
}
