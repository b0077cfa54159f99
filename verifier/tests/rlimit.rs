//! Verdicts do not depend on the machine's load: every Z3 query is limited by Z3's
//! deterministic resource limit (`rlimit`), not by the clock (the wall-clock caps are far
//! away here).

use collc_verifier::smt::{classify_unknown, limit_params, units, unknown_reason, Limit, Spent};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use z3::ast::BV;
use z3::{SatResult, Solver};

/// `f` run while CPU burners occupy every core, twice over.
fn under_load<T>(f: impl FnOnce() -> T) -> T {
    let stop = Arc::new(AtomicBool::new(false));
    let n = std::thread::available_parallelism().map_or(2, |n| n.get()) * 2;
    let burners: Vec<_> = (0..n)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                x
            })
        })
        .collect();
    let r = f();
    stop.store(true, Ordering::Relaxed);
    for b in burners {
        let _ = b.join();
    }
    r
}

/// Factoring a 62-bit semiprime under `rlimit`: far more work than 200,000 units. The
/// answer, Z3's reason, and the units the query spent; `incremental`: asserted after a
/// `push`, as the verifier's reused solvers do (Z3 then answers from its incremental core,
/// which libz3 4.8.12 says was "canceled" when the limit is spent).
fn factor(rlimit: u32, incremental: bool) -> (SatResult, String, u64) {
    let s = Solver::new();
    if incremental {
        s.push();
    }
    let limit = Limit {
        rlimit,
        cap: Instant::now() + Duration::from_secs(600),
    };
    let (params, _) = limit_params(limit).expect("the cap is ten minutes away");
    s.set_params(&params);
    let (x, y) = (BV::new_const("x", 64), BV::new_const("y", 64));
    let n = BV::from_u64(2_147_483_647 * 2_147_483_629, 64);
    let small = BV::from_u64(1 << 32, 64);
    s.assert(x.bvmul(&y).eq(&n));
    s.assert(x.bvugt(BV::from_u64(1, 64)));
    s.assert(y.bvugt(BV::from_u64(1, 64)));
    s.assert(x.bvult(&small));
    s.assert(y.bvult(&small));
    let at_start = units(&s);
    let r = s.check();
    let spent = u64::from(units(&s).wrapping_sub(at_start));
    (r, s.get_reason_unknown().unwrap_or_default(), spent)
}

/// The same query under the same resource limit gets the same answer idle and loaded,
/// and running out of resources is reported as such (not as a timeout).
#[test]
fn the_resource_limit_decides_not_the_clock() {
    for incremental in [false, true] {
        let idle = factor(200_000, incremental);
        assert_eq!(idle.0, SatResult::Unknown, "{idle:?}");
        assert!(idle.2 >= 200_000, "{idle:?}");
        let spent = Spent {
            units: idle.2,
            rlimit: 200_000,
            clock: Some((Duration::ZERO, 600_000)),
        };
        assert_eq!(
            classify_unknown(&idle.1, spent),
            collc_verifier::evidence::Undecided::Resources,
            "{idle:?}"
        );
        let (kind, why) = unknown_reason(&idle.1, spent);
        assert_eq!(
            kind,
            collc_verifier::evidence::Undecided::Resources,
            "{why}"
        );
        assert!(why.starts_with("resource limit"), "{why}");
        // The same answer and the same units spent, loaded.
        assert_eq!(idle, under_load(|| factor(200_000, incremental)));
    }
}

fn outcome(text: &str) -> Vec<String> {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    let p = c.protocol.expect("the example validates");
    let o = collc_verifier::param::prove(&p, Duration::from_secs(600));
    let mut v: Vec<String> = o
        .results
        .iter()
        .map(|(id, r)| format!("{id}: {r:?}"))
        .collect();
    v.sort();
    v
}

/// broadcast_binomial over `1..=65536` (its costliest queries take seconds of Z3's work):
/// the same outcome, obligation for obligation, idle and loaded; every obligation proved
/// with P symbolic.
#[test]
fn the_binomial_tree_gets_the_same_outcome_under_load() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/broadcast_binomial.coll");
    let text = std::fs::read_to_string(path).expect("read");
    let idle = outcome(&text);
    assert_eq!(idle, under_load(|| outcome(&text)));
    assert!(idle.iter().all(|r| r.contains(": Ok(")), "{idle:#?}");
}

/// The front end's range pass (`Ranges`) on `rel`: every diagnostic's code, message and
/// span. A trivial protocol is checked first, so that the range memo (which keeps only the
/// last protocol's verdicts) holds nothing of this one and every query is asked.
fn ranges(rel: &str) -> Vec<String> {
    let trivial = "collective t: barrier() {\n    ranks P in 1..=4;\n    signal sig[P];\n    body {\n        notify sig[me] += 1;\n    }\n}\n";
    collc_spec::front(&collc_verifier::Ranges, trivial);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel);
    let text = std::fs::read_to_string(path).expect("read");
    collc_spec::front(&collc_verifier::Ranges, &text)
        .diagnostics
        .iter()
        .map(|d| format!("{} {} {:?}", d.code, d.message, d.primary_span()))
        .collect()
}

/// The index-range pass is limited by Z3's resource units, per query and in total
/// (`planning::TABLE.range_budget_units`), not by the clock: the two fixtures whose bound
/// Z3 cannot decide within its limit (each query spends all of it, seconds of Z3's work)
/// get the same warnings idle and with CPU burners on every core, and the warning names
/// the form, not a budget spent (which a wall-clock budget gave under load).
#[test]
fn the_range_pass_gets_the_same_outcome_under_load() {
    for rel in [
        "collc/tests/cost_fixtures/binomial_barrier.coll",
        "collc/tests/ui/domain_range_unproved.coll",
    ] {
        let idle = ranges(rel);
        assert_eq!(idle, under_load(|| ranges(rel)), "{rel}");
        assert_eq!(idle.len(), 1, "{rel}: {idle:#?}");
        assert!(
            idle[0].starts_with("domain::range-unproved could not prove"),
            "{rel}: {idle:?}"
        );
    }
}
