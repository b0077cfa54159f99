//! Simulator throughput: simulated scheduler steps per second on long
//! round-robin runs, and exhaustive exploration (states per second, total
//! time) of broadcast and barrier at P=3, 2 tiles, 2 calls, with and without the
//! partial-order reduction.

use collc_sim::{simulate, Budget, Memory, Schedule, SimConfig};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::collections::BTreeMap;
use std::hint::black_box;

fn load(name: &str) -> collc_spec::Validated {
    let text = std::fs::read_to_string(collc_benches::repo_path(&format!("examples/{name}.coll")))
        .expect("example exists");
    collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("example validates")
}

fn params(kv: &[(&str, i64)]) -> BTreeMap<String, i64> {
    kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn cfg(schedule: Schedule, calls: usize, reduce: bool) -> SimConfig {
    SimConfig {
        calls,
        memory: Memory::Sc,
        schedule,
        budget: Budget::default(),
        reduce,
        sticky_poll: false,
        stop: None,
        wrap: false,
    }
}

fn sim(c: &mut Criterion) {
    let broadcast = load("broadcast");
    let barrier = load("barrier");
    let bp = params(&[("P", 3), ("n", 512), ("root", 0)]);
    let ap = params(&[("P", 3)]);

    // Events per second: one long round-robin run (many calls) per iteration.
    let mut g = c.benchmark_group("sim_events");
    for (name, p, kv) in [
        ("broadcast_P3_2tiles", &broadcast, &bp),
        ("barrier_P3", &barrier, &ap),
    ] {
        let c50 = cfg(Schedule::RoundRobin, 50, true);
        let steps = simulate(p, kv, &c50).expect("runs").stats.transitions;
        g.throughput(Throughput::Elements(steps));
        g.bench_function(format!("round_robin_50_calls/{name}"), |b| {
            b.iter(|| black_box(simulate(p, kv, &c50).expect("runs").stats.transitions))
        });
    }
    g.finish();

    // Exhaustive exploration: states per second and total time.
    // `_full`: the same search without the partial-order reduction (every interleaving).
    exhaustive(
        c,
        "sim_exhaustive",
        &[
            ("broadcast_P3_2tiles_2calls", &broadcast, &bp, true),
            ("barrier_P3_2calls", &barrier, &ap, true),
            ("broadcast_P3_2tiles_2calls_full", &broadcast, &bp, false),
            ("barrier_P3_2calls_full", &barrier, &ap, false),
        ],
    );
}

/// A bench case: name, protocol, parameters, partial-order reduction on.
type Case<'a> = (
    &'a str,
    &'a collc_spec::Validated,
    &'a BTreeMap<String, i64>,
    bool,
);

/// One exhaustive search of 2 calls per case: states per second and total time.
fn exhaustive(c: &mut Criterion, group: &str, cases: &[Case]) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for &(name, p, kv, reduce) in cases {
        let ex = cfg(Schedule::Exhaustive, 2, reduce);
        let r = simulate(p, kv, &ex).expect("runs");
        assert!(r.stats.complete, "{name}: exploration must complete");
        eprintln!(
            "{name}: {} states, {} transitions, complete",
            r.stats.states, r.stats.transitions
        );
        g.throughput(Throughput::Elements(r.stats.states));
        g.bench_function(name, |b| {
            b.iter(|| black_box(simulate(p, kv, &ex).expect("runs").stats.states))
        });
    }
    g.finish();
}

/// The explorer's raw speed on the instance issue 11 compares with SPIN
/// (`broadcast_read_complete`, P=4, 2 tiles, 2 calls), with and without the
/// partial-order reduction, and a reduced search at P=8 (`allreduce_mesh`, 1 tile,
/// C=2, stride=2, 2 calls) where the stubborn-set computation dominates.
fn explorer(c: &mut Criterion) {
    let brc = load("broadcast_read_complete");
    let mesh = load("allreduce_mesh");
    let bp = params(&[("P", 4), ("n", 512), ("root", 0)]);
    let mp = params(&[("P", 8), ("n", 256), ("C", 2), ("stride", 2)]);
    exhaustive(
        c,
        "sim_explorer",
        &[
            (
                "broadcast_read_complete_P4_2tiles_2calls_full",
                &brc,
                &bp,
                false,
            ),
            ("broadcast_read_complete_P4_2tiles_2calls", &brc, &bp, true),
            ("allreduce_mesh_P8_1tile_2calls", &mesh, &mp, true),
        ],
    );
}

criterion_group!(benches, sim, explorer);
criterion_main!(benches);
