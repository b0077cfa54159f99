//! Host backend: generated kernels on CPU threads vs the physical limits measured in the same
//! run (figures and ratios in benches/history.md, "Host backend").
//!
//! * `host_barrier_p2`: one barrier round trip at P=2 through the kernel generated from
//!   examples/barrier.coll (K back-to-back calls in one launcher run; time per call), vs
//!   `std::sync::Barrier` (2 threads), `pthread_barrier_wait` (2 threads) and a two-thread
//!   cache-line ping-pong (the physical floor), the last two from
//!   backend/runtime/bench/baselines.cpp.
//! * `host_allreduce_p2`: allreduce (sum, f32) at P=2 for 4 KiB .. 64 MiB through the kernels
//!   generated from examples/allreduce_mesh.coll (its `n` domain widened to 16 Mi elements;
//!   `TILE` 256 as merged, and 8192 and 65536 by `collc opt --pass coalesce=32` / `=256`) and,
//!   up to 1 MiB, from examples/epoch_allreduce.coll (one credit round per call; `n` widened
//!   to 256 Ki elements), vs single-thread memcpy at the same size and a two-thread
//!   exchange (`exchange`: each thread publishes its bytes and copies the peer's, one flag
//!   round per call: the data crossing between the cores, without the reduction).
//! * `host_opt_p2`: each `collc opt` pass's fixture (collc/tests/opt_applied, at its `// run:`
//!   parameters) before and after the pass, at P=2: time per call, back-to-back calls.
//!
//! Set COLLC_BENCH_QUICK=1 for a short run. Without a C++ compiler the benches print a SKIP
//! line and do nothing.

use collc_backend::host::compile::{self, Build};
use collc_backend::host::{self, Job, RunConfig};
use collc_verifier::opt::Pass;
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
    exchange2_ns: BaselineBytes,
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
            exchange2_ns: *lib
                .get::<BaselineBytes>(b"collc_baseline_exchange2_ns\0")
                .expect("exchange2"),
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

/// `text` with its `param n: int in 1..=N;` widened to `1..=max`, whatever N is.
fn widen_n(text: &str, what: &str, max: u64) -> String {
    let key = "param n: int in 1..=";
    let at = text
        .find(key)
        .unwrap_or_else(|| panic!("{what} declares `param n: int in 1..=N;`"));
    let end = at + text[at..].find(';').expect("`;`");
    format!("{}{key}{max}{}", &text[..at], &text[end..])
}

/// `text` through `collc opt` passes (the result goes through the gate in [`kernel`]).
fn opt(text: &str, passes: &[Pass], what: &str) -> String {
    collc_verifier::opt::apply(text, passes)
        .unwrap_or_else(|r| panic!("{what}: `{}` refused: {}", r.pass, r.reason))
        .text
}

/// The parameters of the mesh variants beyond `P` and `n`: one block, the rank-1 layout.
const MESH: &[(&str, i64)] = &[("C", 1), ("stride", 1)];

/// The host allreduce variants: name, source, largest size served (bytes), parameters
/// beyond `P` and `n`.
type Variant = (&'static str, String, u64, &'static [(&'static str, i64)]);

fn allreduce_variants() -> Vec<Variant> {
    let read = |rel: &str| std::fs::read_to_string(root().join(rel)).expect(rel);
    let merged = widen_n(
        &read("examples/allreduce_mesh.coll"),
        "allreduce_mesh.coll",
        16 << 20,
    );
    assert!(
        merged.contains("const TILE = 256;"),
        "allreduce_mesh.coll: expected `const TILE = 256;`"
    );
    let tile8192 = opt(&merged, &[Pass::Coalesce(32)], "allreduce_mesh.coll");
    let tile65536 = opt(&merged, &[Pass::Coalesce(256)], "allreduce_mesh.coll");
    // One credit round per call (monotonic flags, a double scratch buffer), n widened to 1 MiB.
    let epoch = widen_n(
        &read("examples/epoch_allreduce.coll"),
        "epoch_allreduce.coll",
        1 << 18,
    );
    vec![
        ("tile256", merged, 64 << 20, MESH),
        ("tile8192", tile8192, 64 << 20, MESH),
        ("tile65536", tile65536, 64 << 20, MESH),
        ("epoch", epoch, 1 << 20, &[]),
    ]
}

fn bench_allreduce(c: &mut Criterion) {
    if !setup() {
        return;
    }
    let base = baselines();
    let variants = allreduce_variants();
    let sizes: Vec<u64> = if quick() {
        vec![4 << 10, 256 << 10, 1 << 20, 16 << 20]
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
        for (name, text, most, extra) in &variants {
            if bytes > *most {
                continue;
            }
            let mut params = vec![("P", 2), ("n", n)];
            params.extend_from_slice(extra);
            let (lib, job) = kernel(text, &params);
            g.bench_with_input(BenchmarkId::new(*name, bytes), &bytes, |b, _| {
                b.iter_custom(|iters| run_calls(&lib, &job, iters.max(1)))
            });
        }
        g.bench_with_input(BenchmarkId::new("exchange", bytes), &bytes, |b, &bytes| {
            // SAFETY: baseline function, no preconditions.
            b.iter_custom(|iters| {
                let ns = unsafe { (base.exchange2_ns)(bytes, iters.max(1)) };
                Duration::from_nanos((ns * iters as f64) as u64)
            })
        });
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

/// A fixture of collc/tests/opt_applied: its name, text, pass and `--param NAME=V` values.
type OptFixture = (String, String, Pass, Vec<(String, i64)>);

fn opt_fixtures() -> Vec<OptFixture> {
    let dir = root().join("collc/tests/opt_applied");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("collc/tests/opt_applied")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let name = f.file_stem().expect("name").to_string_lossy().into_owned();
            let text = std::fs::read_to_string(f).expect("fixture");
            let mut lines = text.lines();
            let pass = lines
                .next()
                .and_then(|l| l.strip_prefix("// opt: "))
                .and_then(|l| l.strip_suffix(" applies"))
                .map(Pass::parse)
                .unwrap_or_else(|| panic!("{name}: first line `// opt: PASS applies`"))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let run = lines.next().and_then(|l| l.strip_prefix("// run: "));
            let params = run
                .map_or("", |r| r)
                .split("--param")
                .filter_map(|a| a.trim().split_once('='))
                .map(|(k, v)| (k.to_string(), v.parse().expect("integer parameter")))
                .collect();
            (name, text, pass, params)
        })
        .collect()
}

/// Why the verifier gate refuses `text` (its blockers' codes), or `None` when it passes.
fn gate_refuses(text: &str) -> Option<String> {
    let p = collc_spec::front(&collc_verifier::Ranges, text).protocol?;
    let report = collc_verifier::verify(&p, &collc_verifier::Options::default());
    let gate = collc_verifier::gate(&report, false);
    (!gate.allowed()).then(|| {
        let codes: Vec<&str> = gate.blockers.iter().map(|b| b.code.as_str()).collect();
        codes.join(", ")
    })
}

/// `collc opt` outputs against the protocol they were made from, at P=2: every fixture of
/// collc/tests/opt_applied (one per pass but coalescing, which `host_allreduce_p2` covers),
/// before and after its pass, back-to-back calls, nothing staged.
fn bench_opt(c: &mut Criterion) {
    if !setup() {
        return;
    }
    let mut g = c.benchmark_group("host_opt_p2");
    g.sample_size(10);
    if quick() {
        g.measurement_time(Duration::from_secs(2));
    }
    for (name, text, pass, params) in opt_fixtures() {
        if let Some(why) = gate_refuses(&text) {
            // The pass's input is a hand-written flaw the pass removes: nothing to time it by.
            eprintln!("host_opt_p2: {name} not timed: its input does not pass the gate ({why})");
            continue;
        }
        let after = opt(&text, &[pass], &name);
        let mut bound: Vec<(&str, i64)> = params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        bound.push(("P", 2));
        for (when, t) in [("before", &text), ("after", &after)] {
            let (lib, job) = kernel(t, &bound);
            let id = BenchmarkId::new(format!("{name}/{}", pass.spelled()), when);
            g.bench_function(id, |b| {
                b.iter_custom(|iters| run_calls(&lib, &job, iters.max(1)))
            });
        }
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_millis(500))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_barrier, bench_allreduce, bench_opt
}
criterion_main!(benches);
