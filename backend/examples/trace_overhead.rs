//! `cargo run -p collc-backend --example trace_overhead [-- ROUNDS]`: the cost of tracing on
//! the host kernels of the barrier (P=2) and mesh-allreduce (P=2, n=65536, C=1) examples,
//! three ways: tracing compiled out (`COLLC_NO_TRACE`), compiled in but off (what every
//! generated kernel is), and on (recording; the trace file is written after the timed part).
//! Each round runs K back-to-back calls per variant, the variants interleaved so that machine
//! load drifts over all three alike; prints the median and the best launcher time per call
//! of the rounds and the ratios to the compiled-out build
//! (figures in benches/history.md, "Tracing overhead").

use collc_backend::cpp::{emit, EmitOptions, Target};
use collc_backend::host::compile::{self, Build};
use collc_backend::host::{self, Job, RunConfig};
use std::path::{Path, PathBuf};

fn job_for(p: &collc_spec::Validated, params: &[(&str, i64)]) -> (PathBuf, PathBuf, Job) {
    let mut cfg = RunConfig {
        calls: 1,
        ..RunConfig::default()
    };
    for (k, v) in params {
        cfg.params.insert((*k).to_string(), *v);
    }
    let prep = host::prepare(p, None, &cfg).expect("kernel builds");
    let text = emit(
        p,
        Target::Host,
        &EmitOptions {
            source: None,
            warning: Vec::new(),
            world_limit: None,
        },
    )
    .expect("emits");
    let out = compile::library(&format!("#define COLLC_NO_TRACE 1\n{text}"), Build::Opt)
        .expect("compiled-out build");
    let mut job = prep.job;
    for b in &mut job.buffers {
        b.stage = false;
        b.collect = false;
    }
    job.barrier_check = false;
    job.inputs.clear();
    (out.path, prep.built.path, job)
}

/// ns per call of one launcher run of `calls` calls.
fn per_call(lib: &Path, template: &Job, calls: i32, trace: Option<&PathBuf>) -> f64 {
    let mut job = template.clone();
    job.ncalls = calls;
    job.inputs = vec![Vec::new(); calls as usize * job.nranks as usize];
    job.trace_file = trace.cloned();
    job.trace_capacity = 1 << 17; // fits the allreduce run (about 72k events per thread)
    let out = host::job::execute_in_process(lib, &job).expect("runs");
    assert_eq!(out.status, 0, "{}", out.message);
    out.elapsed_ns / f64::from(calls)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(15);
    let root = collc_backend::testing::repo_root();
    compile::set_cache_dir(root.join("target").join("collc-cache"));
    let trace = std::env::temp_dir().join(format!("collc-overhead-{}.txt", std::process::id()));
    for (file, params, calls) in [
        ("barrier.coll", vec![("P", 2)], 2000),
        (
            "allreduce_mesh.coll",
            vec![("P", 2), ("n", 65536), ("C", 1), ("stride", 1)],
            40,
        ),
    ] {
        let text = std::fs::read_to_string(root.join("examples").join(file)).expect("example");
        let p = collc_spec::front(&collc_verifier::Ranges, &text)
            .protocol
            .expect("checks");
        let (out_lib, in_lib, job) = job_for(&p, &params);
        let mut t: [Vec<f64>; 3] = Default::default();
        per_call(&in_lib, &job, calls, None); // warm-up
        for round in 0..rounds {
            // Rotate the order so that no variant always runs first.
            for k in 0..3 {
                let v = (round + k) % 3;
                let (lib, tr) = match v {
                    0 => (&out_lib, None),
                    1 => (&in_lib, None),
                    _ => (&in_lib, Some(&trace)),
                };
                t[v].push(per_call(lib, &job, calls, tr));
            }
        }
        let best = t
            .clone()
            .map(|v| v.into_iter().fold(f64::INFINITY, f64::min));
        for (what, [a, b, c]) in [("median", t.map(median)), ("best", best)] {
            println!(
                "{file} {params:?}, {calls} calls x {rounds} rounds, {what}: compiled out {:.2} us/call, in but off {:.2} us/call ({:+.1}%), on {:.2} us/call ({:+.1}%)",
                a / 1e3,
                b / 1e3,
                (b / a - 1.0) * 100.0,
                c / 1e3,
                (c / a - 1.0) * 100.0
            );
        }
    }
    let _ = std::fs::remove_file(&trace);
}
