//! Host backend: generated kernels on CPU threads vs the physical limits measured in the same
//! run (figures and ratios in benches/history.md, "Host backend").
//!
//! * `host_barrier_p2`: one barrier round trip at P=2 through the kernel generated from
//!   examples/barrier.coll (K back-to-back calls in one launcher run; time per call), vs
//!   `std::sync::Barrier` (2 threads), `pthread_barrier_wait` (2 threads) and a two-thread
//!   cache-line ping-pong (the physical floor), the last two from
//!   backend/runtime/bench/baselines.cpp.
//! * `host_allreduce_p2`: allreduce (sum, f32) at P=2 for 4 KiB .. 64 MiB through the kernel
//!   generated from examples/allreduce_mesh.coll (its `n` domain widened to 16 Mi elements;
//!   `TILE` 256 as merged, and 8192), vs single-thread memcpy bandwidth at the same size.
//!
//! Set COLLC_BENCH_QUICK=1 for a short run. Without a C++ compiler the benches print a SKIP
//! line and do nothing.

use collc_backend::host::compile::{self, Build};
use collc_backend::host::{self, Job, RunConfig};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

type BaselineIters = unsafe extern "C" fn(u64) -> f64;
type BaselineBytes = unsafe extern "C" fn(u64, u64) -> f64;

struct Baselines {
    pingpong: BaselineIters,
    pthread_barrier: BaselineIters,
    memcpy_ns: BaselineBytes,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
}

fn setup() -> bool {
    compile::set_cache_dir(root().join("target").join("collc-cache"));
    match compile::find_compiler() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("*** SKIP host benches: {e}");
            false
        }
    }
}

fn baselines() -> Baselines {
    let src = std::fs::read_to_string(root().join("backend/runtime/bench/baselines.cpp"))
        .expect("baselines.cpp");
    let built =
        compile::shared_object("collc_baselines", &src, Build::Opt).expect("baselines build");
    // SAFETY: a plain C-ABI library built above; kept loaded for the process.
    let lib: &'static libloading::Library = Box::leak(Box::new(
        unsafe { libloading::Library::new(&built.path) }.expect("load baselines"),
    ));
    // SAFETY: the symbols have exactly these signatures (baselines.cpp).
    unsafe {
        Baselines {
            pingpong: *lib
                .get::<BaselineIters>(b"collc_baseline_pingpong_ns\0")
                .expect("pingpong"),
            pthread_barrier: *lib
                .get::<BaselineIters>(b"collc_baseline_pthread_barrier_ns\0")
                .expect("pthread"),
            memcpy_ns: *lib
                .get::<BaselineBytes>(b"collc_baseline_memcpy_ns\0")
                .expect("memcpy"),
        }
    }
}

/// A compiled kernel and a job template with nothing staged or collected (pure kernel time).
fn kernel(text: &str, params: &[(&str, i64)]) -> (std::path::PathBuf, Job) {
    let p = collc_benches::gated("host bench kernel", text);
    let mut cfg = RunConfig {
        calls: 1,
        ..RunConfig::default()
    };
    for (k, v) in params {
        cfg.params.insert((*k).to_string(), *v);
    }
    let prep = host::prepare(&p, None, &cfg).expect("kernel builds");
    let mut job = prep.job;
    for b in &mut job.buffers {
        b.stage = false;
        b.collect = false;
    }
    job.barrier_check = false;
    job.inputs.clear();
    (prep.built.path, job)
}

/// Runs `calls` back-to-back calls; returns the launcher's wall time.
fn run_calls(lib: &Path, template: &Job, calls: u64) -> Duration {
    let mut job = template.clone();
    job.ncalls = calls as i32;
    job.inputs = vec![Vec::new(); calls as usize * job.nranks as usize];
    let out = host::job::execute_in_process(lib, &job).expect("runs");
    assert_eq!(out.status, 0, "{}", out.message);
    Duration::from_nanos(out.elapsed_ns as u64)
}

fn quick() -> bool {
    std::env::var_os("COLLC_BENCH_QUICK").is_some()
}

fn bench_barrier(c: &mut Criterion) {
    if !setup() {
        return;
    }
    let base = baselines();
    let text = std::fs::read_to_string(root().join("examples/barrier.coll")).expect("barrier.coll");
    let (lib, job) = kernel(&text, &[("P", 2)]);
    let mut g = c.benchmark_group("host_barrier_p2");
    if quick() {
        g.sample_size(10).measurement_time(Duration::from_secs(2));
    }
    g.bench_function("collc_kernel", |b| {
        b.iter_custom(|iters| run_calls(&lib, &job, iters.max(1)))
    });
    g.bench_function("std_sync_barrier", |b| {
        b.iter_custom(|iters| {
            let bar = Arc::new(Barrier::new(2));
            let other = Arc::clone(&bar);
            let helper = std::thread::spawn(move || {
                for _ in 0..iters {
                    other.wait();
                }
            });
            bar.wait();
            let t0 = Instant::now();
            for _ in 1..iters {
                bar.wait();
            }
            let t = t0.elapsed();
            helper.join().expect("helper");
            t
        })
    });
    g.bench_function("pthread_barrier_wait", |b| {
        // SAFETY: baseline function, no preconditions.
        b.iter_custom(|iters| {
            Duration::from_nanos(
                (unsafe { (base.pthread_barrier)(iters.max(1)) } * iters as f64) as u64,
            )
        })
    });
    g.bench_function("cacheline_pingpong", |b| {
        // SAFETY: baseline function, no preconditions.
        b.iter_custom(|iters| {
            Duration::from_nanos((unsafe { (base.pingpong)(iters.max(1)) } * iters as f64) as u64)
        })
    });
    g.finish();
}

fn bench_allreduce(c: &mut Criterion) {
    if !setup() {
        return;
    }
    let base = baselines();
    let merged = std::fs::read_to_string(root().join("examples/allreduce_mesh.coll"))
        .expect("allreduce_mesh.coll");
    // Widen `param n: int in 1..=N;` to 16 Mi elements (64 MiB), whatever N is.
    let key = "param n: int in 1..=";
    let at = merged
        .find(key)
        .expect("allreduce_mesh.coll declares `param n: int in 1..=N;`");
    let end = at + merged[at..].find(';').expect("`;`");
    let widened = format!("{}{key}16777216{}", &merged[..at], &merged[end..]);
    assert!(
        widened.contains("const TILE = 256;"),
        "allreduce_mesh.coll: expected `const TILE = 256;`"
    );
    let wide_tile = widened.replace("const TILE = 256;", "const TILE = 8192;");
    let sizes: Vec<u64> = if quick() {
        vec![4 << 10, 1 << 20, 16 << 20]
    } else {
        vec![
            4 << 10,
            16 << 10,
            64 << 10,
            256 << 10,
            1 << 20,
            4 << 20,
            16 << 20,
            64 << 20,
        ]
    };
    let mut g = c.benchmark_group("host_allreduce_p2");
    g.sample_size(10);
    if quick() {
        g.measurement_time(Duration::from_secs(2));
    }
    for &bytes in &sizes {
        let n = (bytes / 4) as i64;
        g.throughput(Throughput::Bytes(bytes));
        for (name, text) in [("tile256", &widened), ("tile8192", &wide_tile)] {
            let (lib, job) = kernel(text, &[("P", 2), ("n", n), ("C", 1), ("stride", 1)]);
            g.bench_with_input(BenchmarkId::new(name, bytes), &bytes, |b, _| {
                b.iter_custom(|iters| run_calls(&lib, &job, iters.max(1)))
            });
        }
        g.bench_with_input(BenchmarkId::new("memcpy", bytes), &bytes, |b, &bytes| {
            // SAFETY: baseline function, no preconditions.
            b.iter_custom(|iters| {
                Duration::from_nanos(
                    (unsafe { (base.memcpy_ns)(bytes, iters.max(1)) } * iters as f64) as u64,
                )
            })
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_millis(500))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_barrier, bench_allreduce
}
criterion_main!(benches);
