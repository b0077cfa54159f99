//! `collc verify` time: per merged kernel, for the whole corpus, and its growth with
//! the declared bound of P. Figures are recorded in benches/README.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;

fn protocol(text: &str) -> collc_spec::ir::Protocol {
    collc_spec::check(text)
        .protocol
        .expect("examples are valid")
}

fn verify(c: &mut Criterion) {
    let examples = collc_benches::examples();
    // The symbolic half (the bounded half is the simulator's, benched in sim.rs).
    let opts = collc_verifier::Options::symbolic_only();
    let mut g = c.benchmark_group("verify");
    g.sample_size(10);
    for (name, text) in &examples {
        let p = protocol(text);
        g.bench_with_input(BenchmarkId::new("kernel", name), &p, |b, p| {
            b.iter(|| black_box(collc_verifier::verify(black_box(p), &opts).exit_code()))
        });
    }
    let all: Vec<_> = examples.iter().map(|(_, t)| protocol(t)).collect();
    g.bench_function("corpus", |b| {
        b.iter(|| {
            for p in &all {
                black_box(collc_verifier::verify(p, &opts).exit_code());
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("verify_growth");
    g.sample_size(10);
    for name in ["barrier", "broadcast", "allreduce_ring", "allreduce_mesh"] {
        let Some((_, text)) = examples.iter().find(|(n, _)| n == name) else {
            continue;
        };
        // Up to the enumeration cap, and past it, where only the parametric route (P
        // symbolic) proves anything: 65,536 and unbounded (`>= 1`) should cost what 16 does.
        for hi in [2, 4, 8, 16, 256, 65536, i64::from(i32::MAX)] {
            let dom = if hi == i64::from(i32::MAX) {
                "ranks P >= 1;".to_string()
            } else {
                format!("ranks P in 1..={hi};")
            };
            let t = text.replace("ranks P in 1..=16;", &dom);
            let t = t.replace(
                "ranks P in 2..=16;",
                &format!("ranks P in 2..={};", hi.max(2)),
            );
            let p = protocol(&t);
            g.bench_with_input(BenchmarkId::new(name, hi), &p, |b, p| {
                b.iter(|| black_box(collc_verifier::verify(black_box(p), &opts).exit_code()))
            });
        }
    }
    g.finish();

    // The parametric route alone (`collc_verifier::param::prove`), per kernel.
    let mut g = c.benchmark_group("param");
    g.sample_size(10);
    for (name, text) in &examples {
        let p = protocol(text);
        g.bench_with_input(BenchmarkId::new("kernel", name), &p, |b, p| {
            b.iter(|| {
                black_box(
                    collc_verifier::param::prove(black_box(p), std::time::Duration::from_secs(10))
                        .millis,
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, verify);
criterion_main!(benches);
