//! Front-end throughput (bytes of `.coll` per second): parse, parse + check,
//! `fmt` and `print` over the examples and bug fixtures, and parse + check of
//! a large generated file and of a file full of syntax errors (the recovery
//! path). Figures are recorded in benches/history.md under "Front end".

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

/// A valid collective of at most `bytes` bytes: many loops with notifies,
/// waits and data movement.
fn generated(bytes: usize) -> String {
    let mut s = String::from(
        "collective big: allreduce(sum, data) {\n    ranks P in 1..=16;\n    param n: int in 1..=4096;\n    const TILE = 256;\n    signal sig[P];\n    window data: f32[n];\n    tile acc: f32[TILE];\n\n    body {\n",
    );
    let mut k = 0;
    let tail = 200;
    loop {
        let chunk = format!(
            "        for p in peers {{\n            notify sig[me] @ p += 1;  // round {}\n        }}\n        for p in peers {{\n            wait sig[p] >= {};\n            get acc[0 .. min(TILE, n)] <- data[0 .. min(TILE, n)] @ p;\n        }}\n",
            k + 1,
            k + 1
        );
        if s.len() + chunk.len() + tail > bytes {
            break;
        }
        s.push_str(&chunk);
        k += 1;
    }
    s.push_str("    }\n\n    epilogue {\n        for p in peers {\n");
    s.push_str(&format!(
        "            notify sig[p] -= {k};\n        }}\n    }}\n}}\n"
    ));
    s
}

/// Every `.coll` file in `examples/bugs/`, sorted, with its text.
fn bug_fixtures() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        std::fs::read_dir(collc_benches::repo_path("examples/bugs"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "coll"))
                    .filter_map(|p| {
                        Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
    out.sort();
    out
}

fn frontend(c: &mut Criterion) {
    let mut corpus = collc_benches::examples();
    corpus.extend(bug_fixtures());
    let bytes: u64 = corpus.iter().map(|(_, t)| t.len() as u64).sum();
    let protocols: Vec<_> = corpus
        .iter()
        .map(|(n, t)| {
            let p = collc_spec::lowered(t).protocol;
            (
                p.unwrap_or_else(|| panic!("{n} does not check")),
                t.as_str(),
            )
        })
        .collect();

    let mut g = c.benchmark_group("frontend");
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("parse_corpus", |b| {
        b.iter(|| {
            for (_, t) in &corpus {
                black_box(collc_grammar::parse(black_box(t)).is_ok());
            }
        })
    });
    g.bench_function("check_corpus", |b| {
        b.iter(|| {
            for (_, t) in &corpus {
                black_box(collc_spec::lowered(black_box(t)).protocol.is_some());
            }
        })
    });
    g.bench_function("fmt_corpus", |b| {
        b.iter(|| {
            for (p, t) in &protocols {
                black_box(collc_spec::print::format_with_source(p, t));
            }
        })
    });
    g.bench_function("print_corpus", |b| {
        b.iter(|| {
            for (p, _) in &protocols {
                black_box(collc_spec::print::print(p));
            }
        })
    });
    g.finish();

    // As large as the front end accepts (1 MiB).
    let big = generated(collc_grammar::parse::MAX_SOURCE_BYTES);
    assert!(
        collc_spec::lowered(&big).protocol.is_some(),
        "the generated file checks"
    );
    let mut g = c.benchmark_group("frontend_large");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("check_1mib", |b| {
        b.iter(|| black_box(collc_spec::lowered(black_box(&big)).protocol.is_some()))
    });
    // Sixteen missing `;`: pest fails, the front end describes and recovers.
    let broken = big.replacen("+= 1;", "+= 1", 16);
    assert_eq!(
        collc_spec::lowered(&broken).diagnostics.len(),
        16,
        "sixteen syntax errors, all reported"
    );
    g.throughput(Throughput::Bytes(broken.len() as u64));
    g.bench_function("check_1mib_16_syntax_errors", |b| {
        b.iter(|| black_box(collc_spec::lowered(black_box(&broken)).diagnostics.len()))
    });
    g.finish();
}

criterion_group!(benches, frontend);
criterion_main!(benches);
