//! `collc verify` time: per merged kernel, for the whole corpus, and its growth with
//! the declared bound of P. Figures are recorded in benches/README.md.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;

fn protocol(text: &str) -> collc_spec::Validated {
    collc_spec::front(&collc_verifier::Ranges, text)
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

    // The log-round and epoch examples proved with P symbolic, at declared bounds of P
    // past the enumeration cap: the time should not grow with the bound.
    let mut g = c.benchmark_group("verify_bound");
    g.sample_size(10);
    for name in [
        "dissemination_barrier",
        "allreduce_recursive_doubling",
        "allreduce_rabenseifner",
        "epoch_allreduce",
        "credit_window_pipeline",
        "all_to_all_v",
    ] {
        let Some((_, text)) = examples.iter().find(|(n, _)| n == name) else {
            continue;
        };
        for hi in [16, 64, 1024, 65536] {
            let Some(p) = with_world_bound(text, hi) else {
                continue;
            };
            let mut shown = false;
            g.bench_with_input(BenchmarkId::new(name, hi), &p, |b, p| {
                if !shown {
                    shown = true;
                    status(name, hi, &collc_verifier::verify(p, &opts));
                }
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

/// What one verify run decides (printed once per case, when it is run): the
/// obligations proved for every P of the domain `..=hi`, and the others.
fn status(name: &str, hi: i64, r: &collc_verifier::Report) {
    let (whole, rest): (Vec<_>, Vec<_>) = r.obligations.iter().partition(|o| {
        o.status == collc_verifier::Status::Proved && o.world.is_some_and(|w| w.hi == hi)
    });
    let rest: Vec<String> = rest
        .iter()
        .map(|o| format!("{} {:?}", o.id, o.status))
        .collect();
    eprintln!(
        "verify_bound {name} P in ..={hi}: {} proved for every P ({}); not: {}",
        whole.len(),
        whole
            .iter()
            .map(|o| o.id.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        rest.join(", ")
    );
}

/// `text` with its declared world domain (`ranks P in LO..=HI;`) replaced by
/// `LO..=hi`, validated; `None` when the text declares no such domain or the result
/// does not validate.
fn with_world_bound(text: &str, hi: i64) -> Option<collc_spec::Validated> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("ranks P in "))?;
    let lo = line
        .trim()
        .strip_prefix("ranks P in ")?
        .split("..=")
        .next()?;
    let t = text.replace(line, &format!("    ranks P in {lo}..={hi};"));
    collc_spec::front(&collc_verifier::Ranges, &t).protocol
}

criterion_group!(benches, verify);
criterion_main!(benches);
