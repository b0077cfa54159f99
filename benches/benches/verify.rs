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
        for hi in [2, 4, 8, 16] {
            let t = text.replace("ranks P in 1..=16;", &format!("ranks P in 1..={hi};"));
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
}

criterion_group!(benches, verify);
criterion_main!(benches);
