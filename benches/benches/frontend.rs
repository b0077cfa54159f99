//! Parse + validate throughput over `examples/` (bytes per second).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn frontend(c: &mut Criterion) {
    let examples = collc_benches::examples();
    let corpus: String = examples.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join("\n");
    let mut g = c.benchmark_group("frontend");
    g.throughput(Throughput::Bytes(examples.iter().map(|(_, t)| t.len() as u64).sum()));
    g.bench_function("parse_examples", |b| {
        b.iter(|| {
            for (_, t) in &examples {
                black_box(collc_grammar::parse(black_box(t)).is_ok());
            }
        })
    });
    g.bench_function("check_examples", |b| {
        b.iter(|| {
            for (_, t) in &examples {
                black_box(collc_spec::check(black_box(t)).protocol.is_some());
            }
        })
    });
    g.finish();
    black_box(corpus);
}

criterion_group!(benches, frontend);
criterion_main!(benches);
