//! MPI backend: collc's GENERATED programs over MPI-3 RMA vs the native collectives of the
//! same Open MPI, in the same `mpirun`, at the same process count (figures and analysis in
//! benches/history.md, "MPI backend").
//!
//! The programs are generated from the examples with `collc_backend::mpi::emit` and spliced
//! into `backend/runtime/mpi/bench/bench_server.cpp`, a persistent timing server (one
//! `mpirun -np P` per process count; rank 0 takes commands on stdin). criterion drives the
//! collc side through `iter_custom`: each sample asks the server to run ITERS repetitions of
//! {refill inputs (untimed); MPI_Barrier; t0; op; t1} and returns the sum over repetitions of
//! the slowest rank's time. Every rank rewrites its inputs before every repetition (the
//! broadcast root its payload too), so the data moved is not cache-resident from the
//! previous repetition on the receiving core. The native collectives are timed by the same server, the same
//! way, in between.
//!
//! | group | collc (generated from) | native |
//! |---|---|---|
//! | `mpi_npP_barrier` | examples/barrier.coll | `MPI_Barrier` |
//! | `mpi_npP_broadcast/BYTES` | examples/broadcast.coll (merged, `collc`) and examples/broadcast_read_complete.coll (`collc_rc`), root 0 | `MPI_Bcast` (root 0) |
//! | `mpi_npP_allreduce/BYTES` | examples/allreduce_mesh.coll (C = 1) and examples/allreduce_ring.coll | `MPI_Allreduce` (sum, in place) |
//!
//! Sizes 8 B .. 16 MiB (x4, plus 16 MiB), f32, P = 2 and 4 (the examples' `n` reaches
//! 4194304 elements, 16 MiB). One edit of the .coll text, re-verified (no obligation
//! violated) before use and labelled in the output:
//! * `*_tile64k`: `const TILE = 256` replaced by 65536, a what-if for a tile-size knob the
//!   examples do not declare (they fix the Ascend UB tile).
//!
//! The ring allreduce needs `n % P == 0`: its `n` is rounded up to a multiple of P.
//!
//! Env: COLLC_MPI_BENCH_MAX_BYTES (default 16777216), COLLC_MPI_BENCH_NP (default "2,4"),
//! COLLC_BENCH_QUICK=1 (sizes up to 128 KiB, shorter measurement). Under `cargo test` (no
//! `--bench` argument) it is a smoke test: np 2, up to 2 KiB, every case run and checked.
//! Without mpicxx the bench prints a SKIP line and does nothing. A markdown summary (medians,
//! ratios) is printed at the end and written to target/mpi-bench-summary.md.

use collc_backend::mpi::{self, build, launch};
use criterion::{BenchmarkId, Criterion, Throughput};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
}

/// One generated program of the server.
struct Program {
    /// Case name in the server.
    case: &'static str,
    /// The .coll file.
    file: &'static str,
    /// Text edits (from, to) applied to the .coll before generating; each must apply.
    edits: &'static [(&'static str, &'static str)],
    /// The params at `n = max(1, bytes / 4)` elements and `np` ranks (sent with `prep`; the
    /// oracle table is computed from them too).
    params: fn(i64, i64) -> Vec<(&'static str, i64)>,
    /// Refill the inputs before every timed repetition (in-place allreduce).
    refill: bool,
}

const TILE_64K: (&str, &str) = ("const TILE = 256;", "const TILE = 65536;");

const PROGRAMS: &[Program] = &[
    Program {
        case: "collc_barrier",
        file: "examples/barrier.coll",
        edits: &[],
        params: |_, _| vec![],
        refill: false,
    },
    Program {
        case: "collc_bcast",
        file: "examples/broadcast.coll",
        edits: &[],
        params: |n, _| vec![("n", n), ("root", 0)],
        refill: true,
    },
    Program {
        case: "collc_bcast_rc",
        file: "examples/broadcast_read_complete.coll",
        edits: &[],
        params: |n, _| vec![("n", n), ("root", 0)],
        refill: true,
    },
    Program {
        case: "collc_bcast_rc_tile64k",
        file: "examples/broadcast_read_complete.coll",
        edits: &[TILE_64K],
        params: |n, _| vec![("n", n), ("root", 0)],
        refill: true,
    },
    Program {
        case: "collc_mesh",
        file: "examples/allreduce_mesh.coll",
        edits: &[],
        params: |n, _| vec![("n", n), ("C", 1), ("stride", 1)],
        refill: true,
    },
    Program {
        case: "collc_mesh_tile64k",
        file: "examples/allreduce_mesh.coll",
        edits: &[TILE_64K],
        params: |n, _| vec![("n", n), ("C", 1), ("stride", 1)],
        refill: true,
    },
    Program {
        case: "collc_ring",
        file: "examples/allreduce_ring.coll",
        edits: &[],
        params: |n, np| vec![("n", (n + np - 1) / np * np)],
        refill: true,
    },
];

/// The protocol of every collc case (for its oracle tables).
type Protocols = BTreeMap<&'static str, (collc_spec::Validated, &'static Program)>;

/// Generates, verifies and splices the programs into the server source.
fn server_source() -> (String, Protocols) {
    let mut protocols = Protocols::new();
    let template =
        std::fs::read_to_string(root().join("backend/runtime/mpi/bench/bench_server.cpp"))
            .expect("bench_server.cpp");
    let mut spliced = String::new();
    let mut reg = String::from("void register_programs() {\n");
    for prog in PROGRAMS {
        let mut text = std::fs::read_to_string(root().join(prog.file)).expect("read .coll");
        for (from, to) in prog.edits {
            assert!(
                text.contains(from),
                "{}: edit `{from}` does not apply",
                prog.file
            );
            text = text.replace(from, to);
        }
        let p = collc_benches::gated(&format!("{} with edits {:?}", prog.file, prog.edits), &text);
        let program = mpi::emit(&p, &mpi::EmitOptions::default()).expect("emit");
        let ns = format!("gen_{}", prog.case);
        spliced.push_str(&format!(
            "// ---- {} from {} (edits: {:?}) ----\n#define collc_program {ns}\n{program}\n#undef collc_program\n\n",
            prog.case, prog.file, prog.edits
        ));
        reg.push_str(&format!(
            "  bench::registry()[\"{case}\"] = [](int64_t, const bench::KV& kv) {{\n    \
             return bench::gen<{ns}::Args>(kv, {ns}::setup, {ns}::begin_call, {ns}::kernel, {ns}::prepare, {ns}::check, {refill});\n  }};\n",
            case = prog.case,
            refill = prog.refill
        ));
        protocols.insert(prog.case, (p, prog));
    }
    reg.push_str("}\n");
    spliced.push_str(&reg);
    let marker = "// @@COLLC_BENCH_PROGRAMS@@";
    assert!(template.contains(marker));
    (template.replace(marker, &spliced), protocols)
}

/// A running `mpirun -np P bench_server`.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    current: Option<(String, u64)>,
    np: u32,
    protocols: Protocols,
    /// The job's own session and shared-memory directory (removed after the job).
    _job_dir: launch::JobDir,
}

impl Server {
    fn start(tc: &build::Toolchain, bin: &Path, np: u32, protocols: &Protocols) -> Server {
        let cfg = launch::LaunchConfig {
            np,
            ..launch::LaunchConfig::default()
        };
        let job_dir = launch::JobDir::new().expect("job directory");
        let mut child = Command::new(&tc.mpirun)
            .args(launch::mpirun_args(&cfg))
            .envs(job_dir.env(true))
            .arg(bin)
            .env("COLLC_MPI_WAIT_TIMEOUT_MS", "120000")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mpirun");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server {
            child,
            stdin,
            stdout,
            current: None,
            np,
            protocols: protocols.clone(),
            _job_dir: job_dir,
        }
    }

    fn cmd(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").expect("send command");
        self.cmd_reply()
    }

    /// Flushes what was sent and reads the one-line answer.
    fn cmd_reply(&mut self) -> String {
        self.stdin.flush().expect("flush");
        let mut reply = String::new();
        loop {
            reply.clear();
            let n = self.stdout.read_line(&mut reply).expect("read reply");
            assert!(n > 0, "the MPI bench server died");
            let r = reply.trim();
            if r == "ok" || r.starts_with("t ") || r.starts_with("fail") {
                return r.to_string();
            }
            // Anything else (MPI notices) is passed through.
            eprint!("server: {reply}");
        }
    }

    fn prep(&mut self, case: &str, bytes: u64) {
        if self.current.as_ref() == Some(&(case.to_string(), bytes)) {
            return;
        }
        let mut line = format!("prep {case} {bytes}");
        if let Some((p, prog)) = self.protocols.get(case) {
            let n = (bytes as i64 / 4).max(1);
            let params: BTreeMap<String, i64> = (prog.params)(n, i64::from(self.np))
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let table = mpi::table(p, &params, self.np, 1)
                .unwrap_or_else(|e| panic!("{case} at {bytes} bytes: {e}"));
            write!(self.stdin, "oracle {}\n{table}", table.len()).expect("send the table");
            let r = self.cmd_reply();
            assert_eq!(r, "ok", "oracle of {case} {bytes}: {r}");
            for (k, v) in &params {
                line.push_str(&format!(" {k}={v}"));
            }
        }
        let r = self.cmd(&line);
        assert_eq!(r, "ok", "prep {case} {bytes}: {r}");
        self.current = Some((case.to_string(), bytes));
    }

    fn time(&mut self, iters: u64) -> Duration {
        let r = self.cmd(&format!("time {iters}"));
        let secs: f64 = r
            .strip_prefix("t ")
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("bad reply `{r}`"));
        Duration::from_secs_f64(secs)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        for _ in 0..200 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Per-iteration times (seconds) of every sample, by (np, group, impl, bytes).
type Records = BTreeMap<(u32, String, String, u64), Vec<f64>>;

#[allow(clippy::too_many_arguments)]
fn bench_case(
    c: &mut Criterion,
    server: &mut Server,
    rec: &mut Records,
    np: u32,
    group: &str,
    label: &str,
    case: &str,
    bytes: u64,
) {
    let mut g = c.benchmark_group(format!("mpi_np{np}_{group}"));
    if bytes > 0 {
        g.throughput(Throughput::Bytes(bytes));
    }
    let id = if bytes > 0 {
        BenchmarkId::new(label, bytes)
    } else {
        BenchmarkId::from_parameter(label)
    };
    let key = (np, group.to_string(), label.to_string(), bytes);
    g.bench_function(id, |b| {
        server.prep(case, bytes);
        b.iter_custom(|iters| {
            let d = server.time(iters);
            rec.entry(key.clone())
                .or_default()
                .push(d.as_secs_f64() / iters as f64);
            d
        })
    });
    g.finish();
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn us(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x * 1e6 >= 100.0 {
        format!("{:.0}", x * 1e6)
    } else {
        format!("{:.1}", x * 1e6)
    }
}

fn fmt_bytes(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

fn sh(cmd: &str) -> String {
    Command::new("sh")
        .args(["-c", cmd])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn summary(rec: &mut Records, facts: &str) -> String {
    let mut s = String::new();
    s.push_str(facts);
    let nps: Vec<u32> = {
        let mut v: Vec<u32> = rec.keys().map(|k| k.0).collect();
        v.dedup();
        v
    };
    let meds: BTreeMap<(u32, String, String, u64), f64> = rec
        .iter_mut()
        .map(|(k, v)| (k.clone(), median(v)))
        .collect();
    let med = |np: u32, g: &str, l: &str, b: u64| -> f64 {
        meds.get(&(np, g.to_string(), l.to_string(), b))
            .copied()
            .unwrap_or(f64::NAN)
    };
    for np in nps {
        s.push_str(&format!(
            "\n### np = {np}\n\nbarrier: collc {} us, MPI_Barrier {} us (ratio {:.2}x)\n",
            us(med(np, "barrier", "collc", 0)),
            us(med(np, "barrier", "native", 0)),
            med(np, "barrier", "collc", 0) / med(np, "barrier", "native", 0)
        ));
        for (group, cols, native) in [
            (
                "broadcast",
                &["collc", "collc_rc", "collc_rc_tile64k"][..],
                "MPI_Bcast",
            ),
            (
                "allreduce",
                &["collc_mesh", "collc_mesh_tile64k", "collc_ring"][..],
                "MPI_Allreduce",
            ),
        ] {
            let sizes: Vec<u64> = {
                let mut v: Vec<u64> = meds
                    .keys()
                    .filter(|k| k.0 == np && k.1 == group)
                    .map(|k| k.3)
                    .collect();
                v.sort();
                v.dedup();
                v
            };
            if sizes.is_empty() {
                continue;
            }
            s.push_str(&format!(
                "\n{group} (median us per call; ratio = {} / {native})\n\n| bytes |",
                cols[0]
            ));
            for c in cols {
                s.push_str(&format!(" {c} |"));
            }
            s.push_str(&format!(
                " {native} | ratio | best collc / native |\n|---:|"
            ));
            for _ in cols {
                s.push_str("---:|");
            }
            s.push_str("---:|---:|---:|\n");
            for b in sizes {
                let nat = med(np, group, "native", b);
                let vals: Vec<f64> = cols.iter().map(|c| med(np, group, c, b)).collect();
                s.push_str(&format!("| {} |", fmt_bytes(b)));
                for v in &vals {
                    s.push_str(&format!(" {} |", us(*v)));
                }
                let best = vals
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .fold(f64::INFINITY, f64::min);
                s.push_str(&format!(
                    " {} | {:.2}x | {:.2}x |\n",
                    us(nat),
                    vals[0] / nat,
                    best / nat
                ));
            }
        }
    }
    s
}

fn main() {
    let tc = match build::find_toolchain() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("*** SKIP MPI benches: {e}");
            return;
        }
    };
    collc_backend::host::compile::set_cache_dir(root().join("target").join("collc-cache"));
    // `cargo test --all-targets` runs this binary without `--bench` (criterion's test mode:
    // every benchmark once). Then only a smoke run: np 2, up to 2 KiB.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let quick = smoke || std::env::var_os("COLLC_BENCH_QUICK").is_some();
    let max_bytes: u64 = std::env::var("COLLC_MPI_BENCH_MAX_BYTES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if smoke {
            2 << 10
        } else if quick {
            128 << 10
        } else {
            16 << 20
        });
    let nps: Vec<u32> = std::env::var("COLLC_MPI_BENCH_NP")
        .unwrap_or_else(|_| if smoke { "2".into() } else { "2,4".into() })
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    let mut sizes = Vec::new();
    let mut b = 8u64;
    while b <= max_bytes {
        sizes.push(b);
        b *= 4;
    }
    if sizes.last() != Some(&max_bytes) {
        sizes.push(max_bytes);
    }

    let (source, protocols) = server_source();
    let built =
        build::build(&tc, &source).unwrap_or_else(|e| panic!("build the MPI bench server: {e}"));
    eprintln!(
        "MPI bench server {} ({})",
        built.binary.display(),
        if built.cached { "cached" } else { "built" }
    );
    let facts_start = format!(
        "date {} | nproc {} | CPU {} | {} | {} | load average at start: {}",
        sh("date -u '+%Y-%m-%d %H:%M UTC'"),
        sh("nproc"),
        sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
        tc.mpi_version(),
        sh("mpicxx --version | head -1"),
        sh("cut -d' ' -f1-3 /proc/loadavg"),
    );
    eprintln!("{facts_start}");

    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(if quick { 100 } else { 300 }))
        .measurement_time(Duration::from_millis(if quick { 300 } else { 1000 }))
        .without_plots()
        .configure_from_args();
    let mut rec = Records::new();
    for &np in &nps {
        let mut server = Server::start(&tc, &built.binary, np, &protocols);
        bench_case(
            &mut c,
            &mut server,
            &mut rec,
            np,
            "barrier",
            "collc",
            "collc_barrier",
            0,
        );
        bench_case(
            &mut c,
            &mut server,
            &mut rec,
            np,
            "barrier",
            "native",
            "native_barrier",
            0,
        );
        for &bytes in &sizes {
            for (label, case) in [
                ("collc", "collc_bcast"),
                ("collc_rc", "collc_bcast_rc"),
                ("collc_rc_tile64k", "collc_bcast_rc_tile64k"),
                ("native", "native_bcast"),
            ] {
                bench_case(
                    &mut c,
                    &mut server,
                    &mut rec,
                    np,
                    "broadcast",
                    label,
                    case,
                    bytes,
                );
            }
            for (label, case) in [
                ("collc_mesh", "collc_mesh"),
                ("collc_mesh_tile64k", "collc_mesh_tile64k"),
                ("collc_ring", "collc_ring"),
                ("native", "native_allreduce"),
            ] {
                bench_case(
                    &mut c,
                    &mut server,
                    &mut rec,
                    np,
                    "allreduce",
                    label,
                    case,
                    bytes,
                );
            }
        }
        drop(server);
    }
    c.final_summary();
    let facts = format!(
        "{facts_start} | load average at end: {}\n",
        sh("cut -d' ' -f1-3 /proc/loadavg")
    );
    let text = summary(&mut rec, &facts);
    println!("\n{text}");
    let out = root().join("target").join("mpi-bench-summary.md");
    if !smoke && std::fs::write(&out, &text).is_ok() {
        eprintln!("summary written to {}", out.display());
    }
}
