//! The largest world size generated code and the runners accept: the kernels'
//! `kMaxSupportedRanks` is the verdict's world limit (the largest P every obligation
//! covers, `collc_verifier::Gate::world_limit`) within the declared domain, and a run
//! is also bounded by what its runner can start.

use collc_spec::ir::{Protocol, VarKind};

/// Ranks a `pto::comm` kernel (Ascend and CPU threads) can address: the entries of
/// `CommContext::windowsIn` (64 in Ascend's runtime and in collc's CPU runtime).
pub const PTO_MAX_RANKS: i64 = 64;
/// Rank threads the CPU launcher runs (`COLLC_MAX_RANKS` in `runtime/collc/host_launch.hpp`).
pub const HOST_MAX_RANKS: i64 = 64;
/// Processes `collc run --target mpi` starts on one machine or a hostfile.
pub const MPI_MAX_RANKS: i64 = 64;

/// The kernel's rank limit: the verdict's world limit (`None`: none given, the declared
/// upper bound) within the declared domain.
pub fn world_limit(p: &Protocol, given: Option<i64>) -> i64 {
    let (lo, hi) = declared(p);
    given.map_or(hi, |g| g.min(hi)).max(lo)
}

fn declared(p: &Protocol) -> (i64, i64) {
    match p.vars[p.world].kind {
        VarKind::World { lo, hi } => (lo, hi),
        _ => (1, 1),
    }
}

/// Whether a run with `world` ranks may start: within the kernel's rank limit
/// ([`world_limit`]) and what the runner (`runner`, at most `runner_max` ranks) starts.
pub fn check_run_world(
    p: &Protocol,
    world: i64,
    given: Option<i64>,
    runner: &str,
    runner_max: i64,
) -> Result<(), String> {
    let name = &p.vars[p.world].name;
    let limit = world_limit(p, given);
    let (lo, hi) = declared(p);
    if world > limit {
        return Err(format!(
            "{name} = {world} is above the kernel's rank limit {limit}: the verdict covers {name} <= {limit} of the declared domain {lo}..={hi}"
        ));
    }
    if world > runner_max {
        return Err(format!(
            "{name} = {world}: the {runner} runs at most {runner_max} ranks"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proto(domain: &str) -> Protocol {
        let text = format!(
            "collective c: barrier() {{\n    ranks P {domain};\n    signal sig[P];\n    body {{\n    }}\n}}\n"
        );
        collc_spec::lowered(&text).protocol.expect("valid")
    }

    #[test]
    fn the_limit_is_the_verdicts_within_the_declared_domain() {
        let p = proto("in 1..=64");
        assert_eq!(world_limit(&p, None), 64);
        assert_eq!(world_limit(&p, Some(16)), 16);
        assert_eq!(world_limit(&p, Some(1000)), 64);
        let q = proto("in 4..=64");
        assert_eq!(world_limit(&q, Some(2)), 4);
    }

    #[test]
    fn runs_above_the_limit_or_the_runner_are_refused() {
        let p = proto(">= 1");
        assert!(check_run_world(&p, 16, Some(16), "CPU launcher", HOST_MAX_RANKS).is_ok());
        let e = check_run_world(&p, 17, Some(16), "CPU launcher", HOST_MAX_RANKS).unwrap_err();
        assert!(
            e.contains("P = 17 is above the kernel's rank limit 16"),
            "{e}"
        );
        let q = proto("in 1..=65536");
        let e = check_run_world(&q, 65, Some(65536), "CPU launcher", HOST_MAX_RANKS).unwrap_err();
        assert!(e.contains("runs at most 64 ranks"), "{e}");
    }
}
