//! Static translation validation (`collc emit --validate`, `collc_lift::validate`): the time
//! to recover the protocol from the generated C++ of every example and compare it with the
//! IR, per target (the emission itself is outside the measured loop), and `collc lift` of
//! the pto::comm source. Figures are recorded in benches/history.md under "Validate".

use collc_backend::cpp::{self, EmitOptions, Target};
use collc_grammar::Source;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn validate(c: &mut Criterion) {
    let corpus: Vec<_> = collc_benches::examples()
        .into_iter()
        .map(|(name, text)| {
            let src = Source::new(name.clone(), text.clone());
            let p = collc_spec::front(&collc_verifier::Ranges, &text)
                .protocol
                .expect("examples check");
            let opts = EmitOptions {
                source: Some(&src),
                ..EmitOptions::default()
            };
            let pto = cpp::emit(&p, Target::Ascend, &opts).expect("emit");
            let mpi_opts = collc_backend::mpi::EmitOptions {
                source: Some(&src),
                ..collc_backend::mpi::EmitOptions::default()
            };
            let mpi = collc_backend::mpi::emit(&p, &mpi_opts).expect("emit mpi");
            (name, p, pto, mpi)
        })
        .collect();
    let mut g = c.benchmark_group("validate");
    for (name, p, pto, _) in &corpus {
        g.bench_function(format!("pto/{name}"), |b| {
            b.iter(|| black_box(collc_lift::validate(p, pto, None).is_ok()))
        });
    }
    g.bench_function("all_examples/pto", |b| {
        b.iter(|| {
            for (_, p, pto, _) in &corpus {
                assert!(collc_lift::validate(p, pto, None).is_ok());
            }
        })
    });
    g.bench_function("all_examples/mpi", |b| {
        b.iter(|| {
            for (_, p, _, mpi) in &corpus {
                assert!(collc_lift::validate(p, mpi, None).is_ok());
            }
        })
    });
    g.bench_function("all_examples/lift", |b| {
        b.iter(|| {
            for (_, _, pto, _) in &corpus {
                assert!(collc_lift::lift(pto).is_ok());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
