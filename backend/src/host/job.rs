//! One run of a compiled kernel library: what to stage, what to collect, and the two ways to
//! execute it — in this process through `dlopen` ([`execute_in_process`]) or in the C++
//! runner subprocess ([`execute_subprocess`], which can be killed if a rank thread hangs and
//! is what ThreadSanitizer builds use).

use super::ffi;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One buffer of the job (args-block order).
#[derive(Debug, Clone)]
pub struct JobBuffer {
    /// Name (reports).
    pub name: String,
    /// Bytes (> 0).
    pub bytes: u64,
    /// `CollcBufferKind`: 0 data, 1 credit signal (residue-checked).
    pub kind: u32,
    /// A fresh instance per call (`CollcBufferLifetime` 1: a `per call` window or value
    /// signal) instead of one instance shared by every call.
    pub per_call: bool,
    /// The host stages an input image before every call.
    pub stage: bool,
    /// The host copies the buffer out after every call.
    pub collect: bool,
}

/// A run: configuration, buffers, scalars, and the staged inputs.
#[derive(Debug, Clone, Default)]
pub struct Job {
    /// P.
    pub nranks: i32,
    /// C (blocks per rank).
    pub nblocks: i32,
    /// K.
    pub ncalls: i32,
    /// `COLLC_RUN_*` flags.
    pub flags: u32,
    /// TWAIT deadline (0: env / default).
    pub twait_timeout_ms: u32,
    /// Check barrier semantics with host stamps: every block, when it leaves a call, must see
    /// the entry stamp of that call of every block of every other rank it waits for.
    pub barrier_check: bool,
    /// With `barrier_check`, a per-lane barrier (`barrier(blk)`): block b waits for block b
    /// of every other rank only (else for every block).
    pub per_lane: bool,
    /// Chaos seed (with `COLLC_RUN_CHAOS`).
    pub chaos_seed: u64,
    /// Longest chaos sleep.
    pub chaos_max_us: u32,
    /// Buffers.
    pub buffers: Vec<JobBuffer>,
    /// Scalars.
    pub scalars: Vec<i64>,
    /// Per (call, rank) (`k * P + r`): the staged buffers' images, concatenated in order.
    pub inputs: Vec<Vec<u8>>,
    /// Per (rank, buffer) (`r * B + b`): whether the rank stages the buffer (a staged buffer
    /// may be an input of some ranks only, e.g. a broadcast's root); its image is skipped on
    /// the others. Empty: every rank stages every staged buffer.
    pub stage_ranks: Vec<bool>,
    /// Record a trace into this file (`collc_host_trace`; the runner gets it as env
    /// `COLLC_TRACE_FILE`). Not part of the encoded job.
    pub trace_file: Option<std::path::PathBuf>,
    /// Events per thread of a traced run (0: the runtime's default).
    pub trace_capacity: u64,
}

/// `COLLC_RUN_HOST_BARRIER`.
pub const FLAG_HOST_BARRIER: u32 = 0x1;
/// `COLLC_RUN_QUIET`.
pub const FLAG_QUIET: u32 = 0x2;
/// `COLLC_RUN_CHAOS`.
pub const FLAG_CHAOS: u32 = 0x4;

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// `CollcStatus`.
    pub status: i32,
    /// Calls completed per rank.
    pub calls_completed: Vec<i32>,
    /// Signal cells not back at 0.
    pub nonzero_cells: u64,
    /// Wall time of the run (launcher), ns.
    pub elapsed_ns: f64,
    /// Barrier-check failures.
    pub barrier_errors: i64,
    /// The launcher's message.
    pub message: String,
    /// Per (call, rank): the collected buffers' images, concatenated (None: not collected).
    pub outputs: Vec<Option<Vec<u8>>>,
}

/// Why a job could not be executed (the run itself failing is an [`Outcome`] status).
#[derive(Debug, Clone)]
pub enum ExecError {
    /// The library could not be loaded.
    Load(String),
    /// The runner subprocess could not be started or misbehaved.
    Runner {
        /// Command line.
        command: String,
        /// What happened, with its stderr.
        detail: String,
    },
    /// The runner did not finish within the wall-clock limit and was killed.
    Hung {
        /// Command line.
        command: String,
        /// The limit.
        limit: Duration,
        /// Its stderr.
        stderr: String,
    },
    /// ThreadSanitizer reported a problem.
    Sanitizer {
        /// Command line.
        command: String,
        /// The report (stderr).
        report: String,
    },
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Load(m) => write!(f, "cannot load the kernel library: {m}"),
            ExecError::Runner { command, detail } => {
                write!(f, "the kernel runner failed\ncommand: {command}\n{}", detail.trim_end())
            }
            ExecError::Hung { command, limit, stderr } => write!(
                f,
                "the kernel run did not finish within {:.0} s (a rank thread hangs); the runner was killed\ncommand: {command}\n{}",
                limit.as_secs_f64(),
                stderr.trim_end()
            ),
            ExecError::Sanitizer { command, report } => {
                write!(f, "ThreadSanitizer reported a problem\ncommand: {command}\n{}", report.trim_end())
            }
        }
    }
}

impl std::error::Error for ExecError {}

impl Job {
    fn staged_bytes(&self) -> usize {
        self.buffers
            .iter()
            .filter(|b| b.stage)
            .map(|b| b.bytes as usize)
            .sum()
    }
    fn collected_bytes(&self) -> usize {
        self.buffers
            .iter()
            .filter(|b| b.collect)
            .map(|b| b.bytes as usize)
            .sum()
    }

    /// Whether rank `r` stages buffer `b` (a staged buffer, and an input of that rank).
    pub fn stages(&self, r: usize, b: usize) -> bool {
        self.buffers[b].stage
            && self
                .stage_ranks
                .get(r * self.buffers.len() + b)
                .copied()
                .unwrap_or(true)
    }

    /// The job in the runner's stdin format (see `collc/host_runner.cpp`).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(b"COLLCJB2");
        for x in [
            self.nranks,
            self.nblocks,
            self.ncalls,
            self.flags as i32,
            self.twait_timeout_ms as i32,
            i32::from(self.barrier_check) * (1 + i32::from(self.per_lane)),
        ] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(&self.chaos_seed.to_le_bytes());
        v.extend_from_slice(&self.chaos_max_us.to_le_bytes());
        v.extend_from_slice(&(self.buffers.len() as i32).to_le_bytes());
        for b in &self.buffers {
            v.extend_from_slice(&(b.name.len() as u32).to_le_bytes());
            v.extend_from_slice(b.name.as_bytes());
            v.extend_from_slice(&b.bytes.to_le_bytes());
            v.extend_from_slice(&b.kind.to_le_bytes());
            v.extend_from_slice(&u32::from(b.per_call).to_le_bytes());
            v.extend_from_slice(&u32::from(b.stage).to_le_bytes());
            v.extend_from_slice(&u32::from(b.collect).to_le_bytes());
        }
        v.extend_from_slice(&(self.scalars.len() as i32).to_le_bytes());
        for s in &self.scalars {
            v.extend_from_slice(&s.to_le_bytes());
        }
        let nb = self.buffers.len();
        for r in 0..self.nranks.max(0) as usize {
            for b in 0..nb {
                v.push(u8::from(self.stages(r, b)));
            }
        }
        let staged = self.staged_bytes();
        for img in &self.inputs {
            debug_assert_eq!(img.len(), staged);
            v.extend_from_slice(img);
        }
        v
    }

    /// Decodes the runner's stdout.
    fn decode(&self, out: &[u8]) -> Result<Outcome, String> {
        let mut r = Reader { b: out, i: 0 };
        if r.take(8)? != b"COLLCRS1" {
            return Err("the runner's output does not start with COLLCRS1".into());
        }
        let status = r.i32()?;
        let mut calls_completed = Vec::new();
        for _ in 0..self.nranks {
            calls_completed.push(r.i32()?);
        }
        let nonzero_cells = r.u64()?;
        let elapsed_ns = f64::from_bits(r.u64()?);
        let barrier_errors = r.u64()? as i64;
        let mlen = r.u32()? as usize;
        let message = String::from_utf8_lossy(r.take(mlen)?).into_owned();
        let per = self.collected_bytes();
        let mut outputs = Vec::new();
        for _ in 0..(self.ncalls as usize * self.nranks as usize) {
            let got = r.take(1)?[0] != 0;
            let img = r.take(per)?.to_vec();
            outputs.push(got.then_some(img));
        }
        Ok(Outcome {
            status,
            calls_completed,
            nonzero_cells,
            elapsed_ns,
            barrier_errors,
            message,
            outputs,
        })
    }
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}
impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.i + n > self.b.len() {
            return Err(format!(
                "the runner's output is truncated ({} bytes)",
                self.b.len()
            ));
        }
        let s = &self.b[self.i..self.i + n];
        self.i += n;
        Ok(s)
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

/// Runs the job in the C++ runner `runner` (built with the same flags as `lib`), killing it
/// after `limit`. ThreadSanitizer reports in its stderr are errors.
pub fn execute_subprocess(
    runner: &Path,
    lib: &Path,
    job: &Job,
    limit: Duration,
) -> Result<Outcome, ExecError> {
    execute_subprocess_with(runner, lib, None, job, limit)
}

/// As [`execute_subprocess`]; with `sim_kernel`, `lib` is the launcher alone and the kernel is
/// that library (an Ascend kernel built for pto-isa's CPU simulation with
/// `collc/pto_sim_bridge.hpp`, [`crate::pto_sim`]).
pub fn execute_subprocess_with(
    runner: &Path,
    lib: &Path,
    sim_kernel: Option<&Path>,
    job: &Job,
    limit: Duration,
) -> Result<Outcome, ExecError> {
    let mut command = format!("{} {}", runner.display(), lib.display());
    let mut cmd = Command::new(runner);
    if let Some(k) = sim_kernel {
        command.push_str(&format!(" {}", k.display()));
    }
    if let Some(t) = &job.trace_file {
        cmd.env("COLLC_TRACE_FILE", t)
            .env("COLLC_TRACE_CAPACITY", job.trace_capacity.to_string());
    }
    cmd.arg(lib);
    if let Some(k) = sim_kernel {
        cmd.arg(k);
    }
    let mut child = cmd
        .env("TSAN_OPTIONS", tsan_options())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ExecError::Runner {
            command: command.clone(),
            detail: format!("cannot start it: {e}"),
        })?;
    let input = job.encode();
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("piped stdout");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let mut stderr = child.stderr.take().expect("piped stderr");
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait(); // reap: no zombie
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ExecError::Runner {
                    command,
                    detail: format!("cannot wait for it: {e}"),
                });
            }
        }
    };
    let _ = writer.join();
    let out = out_reader.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    let Some(status) = status else {
        return Err(ExecError::Hung {
            command,
            limit,
            stderr: err,
        });
    };
    if err.contains("WARNING: ThreadSanitizer") || err.contains("ERROR: ThreadSanitizer") {
        return Err(ExecError::Sanitizer {
            command,
            report: err,
        });
    }
    if !status.success() {
        return Err(ExecError::Runner {
            command,
            detail: format!("exit status {status}\n{err}"),
        });
    }
    job.decode(&out).map_err(|detail| ExecError::Runner {
        command,
        detail: format!("{detail}\n{err}"),
    })
}

fn tsan_options() -> String {
    let extra = std::env::var("TSAN_OPTIONS").unwrap_or_default();
    format!("halt_on_error=1 exitcode=66 {extra}")
}

/// Runs the job in this process through the library's `collc_host_run`.
pub fn execute_in_process(lib: &Path, job: &Job) -> Result<Outcome, ExecError> {
    ffi::run(lib, job)
}
