//! Running a built program under `mpirun`, with a wall-clock deadline and no orphans.
//!
//! `mpirun` is started as the leader of a new session (`setsid`). Open MPI puts every rank
//! it forks into a process group of its own, so "the process group of mpirun" would miss
//! them; the session contains mpirun, its daemons and every local rank. On the deadline we
//! send SIGTERM to mpirun (it tears the job down, remote daemons included), then SIGKILL to
//! every process still in the session, and report how many were left (0 is the invariant the
//! tests check). After a normal exit the session is swept the same way. Ranks on other hosts
//! (`--hostfile`) are stopped by their `orted`, which exits with its lifeline to mpirun.
//!
//! The runtime's own deadline comes first: every wait aborts the job after
//! `COLLC_MPI_WAIT_TIMEOUT_MS` with a report naming the step, the cell and its value (exit 3);
//! the launcher's deadline catches what the runtime cannot (a rank that hangs outside a wait,
//! a stuck `mpirun`).

use super::build::{command_text, MpiError, Toolchain};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How to launch a program.
#[derive(Debug, Clone)]
pub struct LaunchConfig {
    /// Processes (ranks).
    pub np: u32,
    /// Back-to-back calls through one signal window.
    pub calls: u32,
    /// `--param name=value` for the program (the world size is `np`, not a param).
    pub params: BTreeMap<String, i64>,
    /// An Open MPI hostfile (a cluster run); `None`: this machine only (loopback, osc/sm).
    pub hostfile: Option<PathBuf>,
    /// `COLLC_MPI_WAIT_TIMEOUT_MS` of the ranks (0: the runtime's default, 20 s).
    pub wait_timeout_ms: u64,
    /// Wall-clock deadline of the whole `mpirun`.
    pub deadline: Duration,
    /// More environment for the ranks (forwarded with `-x` to remote hosts too), e.g.
    /// `COLLC_MPI_LAG_US`, `COLLC_MPI_JITTER_US`, `COLLC_MPI_TEST_FAULT`.
    pub env: Vec<(String, String)>,
    /// Extra `mpirun` arguments (before `-np`), e.g. `--mca osc rdma`.
    pub mpirun_args: Vec<String>,
    /// `--skew-us` of the launcher (rank- and call-dependent sleep before each call).
    pub skew_us: u64,
    /// The oracle table of the run ([`super::table`]: what every rank stages and must hold
    /// after every call); written to a file for `--oracle`. `None`: the program stages no
    /// inputs and checks no outputs.
    pub oracle: Option<String>,
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            np: 2,
            calls: 3,
            params: BTreeMap::new(),
            hostfile: None,
            wait_timeout_ms: 0,
            deadline: Duration::from_secs(120),
            env: Vec::new(),
            mpirun_args: Vec::new(),
            skew_us: 0,
            oracle: None,
        }
    }
}

/// What a run found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every output right, every credit cell back at zero.
    Ok,
    /// Outputs differ from the semantics and/or credit cells are nonzero after the last call.
    Wrong {
        /// Mismatched output elements (summed over ranks and calls).
        mismatches: u64,
        /// Nonzero credit cells after the last call (summed over ranks).
        nonzero_cells: u64,
    },
    /// A wait hit the runtime's deadline (exit 3).
    WaitTimeout,
    /// A runtime check, contract check or MPI call failed (exit 4).
    RuntimeError,
    /// The program refused its parameters (exit 2).
    Usage,
    /// A rank died (signal or unexpected exit); the message is mpirun's.
    RankDied(String),
    /// The run did not finish within the deadline and was killed.
    Deadline,
    /// mpirun failed for another reason (exit code, no JSON).
    Failed(String),
}

/// The result of one `mpirun`.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// mpirun's exit code (`None`: killed by a signal).
    pub exit_code: Option<i32>,
    /// The launcher's JSON line from rank 0, if any.
    pub json: Option<serde_json::Value>,
    /// mpirun's stdout.
    pub stdout: String,
    /// mpirun's stderr.
    pub stderr: String,
    /// Wall-clock time of the mpirun.
    pub elapsed: Duration,
    /// The command line.
    pub command: String,
    /// Processes of the job's session still alive after the cleanup (must be 0).
    pub leftover: usize,
    /// Processes the cleanup had to kill after mpirun had exited (orphans; normally 0).
    pub orphans_killed: usize,
}

impl Outcome {
    /// True if the run passed.
    pub fn ok(&self) -> bool {
        self.verdict == Verdict::Ok
    }

    /// The interesting stderr lines: the runtime's reports and mpirun's notes on dead ranks.
    pub fn findings(&self, max: usize) -> Vec<String> {
        let keys = [
            "WAIT TIMEOUT",
            "MISMATCH",
            "NONZERO",
            "CHECK FAILED",
            "usage:",
            "runtime check failed",
            "collc_mpi: rank=",
            "exited on signal",
            "noticed that process rank",
            "COLLC_MPI_TEST_FAULT",
            "not enough slots",
            "ORTE was unable",
            "failed",
        ];
        let mut out = Vec::new();
        for l in self.stderr.lines() {
            if keys.iter().any(|k| l.contains(k)) && !out.iter().any(|x: &String| x == l) {
                out.push(l.trim_end().to_string());
                if out.len() >= max {
                    break;
                }
            }
        }
        out
    }

    /// One line: verdict and the JSON's key figures.
    pub fn summary(&self) -> String {
        let j = |k: &str| self.json.as_ref().and_then(|v| v.get(k)).cloned();
        let num = |k: &str| j(k).and_then(|v| v.as_f64());
        let verdict = match &self.verdict {
            Verdict::Ok => "ok".to_string(),
            Verdict::Wrong {
                mismatches,
                nonzero_cells,
            } => format!("WRONG: {mismatches} mismatched output element(s), {nonzero_cells} nonzero credit cell(s) after the last call"),
            Verdict::WaitTimeout => "WAIT TIMEOUT: a wait never saw its credits (the runtime aborted the job, exit 3)".into(),
            Verdict::RuntimeError => "RUNTIME ERROR: a runtime/contract check or an MPI call failed (exit 4)".into(),
            Verdict::Usage => "USAGE: the program refused its parameters (exit 2)".into(),
            Verdict::RankDied(m) => format!("RANK DIED: {m}"),
            Verdict::Deadline => format!(
                "DEADLINE: not finished after {:.1} s; mpirun and every rank were killed",
                self.elapsed.as_secs_f64()
            ),
            Verdict::Failed(m) => format!("FAILED: {m}"),
        };
        let mut s = verdict;
        if let (Some(np), Some(calls)) = (num("np"), num("calls")) {
            s.push_str(&format!(" (np {np}, {calls} calls"));
            if let Some(w) = num("wall_ms") {
                s.push_str(&format!(", {w:.1} ms"));
            }
            if let Some(m) = j("win_model").and_then(|v| v.as_str().map(str::to_string)) {
                s.push_str(&format!(", {m} windows"));
            }
            if let Some(o) = j("osc").and_then(|v| v.as_str().map(str::to_string)) {
                s.push_str(&format!(", osc {o}"));
            }
            s.push(')');
        }
        s
    }
}

/// The `mpirun` argument list (without the program's own arguments).
pub fn mpirun_args(cfg: &LaunchConfig) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    // MCA keys the caller sets itself (`--mpirun-arg=--mca --mpirun-arg=osc ...`): mpirun
    // refuses a key given twice, so our defaults step aside.
    let user_keys: Vec<&str> = cfg
        .mpirun_args
        .windows(2)
        .filter(|w| w[0] == "--mca" || w[0] == "-mca")
        .map(|w| w[1].as_str())
        .collect();
    let mca = |a: &mut Vec<String>, key: &str, value: &str| {
        if !user_keys.contains(&key) {
            a.extend(["--mca", key, value].map(String::from));
        }
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        a.push("--allow-run-as-root".into());
    }
    mca(&mut a, "mpi_yield_when_idle", "1");
    match &cfg.hostfile {
        None => {
            // One machine: more ranks than cores is fine (the runtime yields in waits), shared
            // memory transport only, and osc/sm (Open MPI's default osc/rdma is correct too,
            // but 7-28x slower on one node: backend/runtime/mpi/bench/RESULTS.md).
            a.push("--oversubscribe".into());
            mca(&mut a, "btl", "self,vader");
            mca(&mut a, "osc", "sm");
        }
        Some(h) => {
            a.push("--hostfile".into());
            a.push(h.display().to_string());
        }
    }
    let mut names: Vec<String> = forwarded_env(cfg).into_iter().map(|(k, _)| k).collect();
    names.sort();
    names.dedup();
    for n in names {
        a.push("-x".into());
        a.push(n);
    }
    a.extend(cfg.mpirun_args.iter().cloned());
    a.push("-np".into());
    a.push(cfg.np.to_string());
    a
}

/// Environment the ranks get (set on mpirun, forwarded with `-x`).
fn forwarded_env(cfg: &LaunchConfig) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    // Whatever COLLC_MPI_* the caller already has (tuning, test aids).
    for (k, v) in std::env::vars() {
        if k.starts_with("COLLC_MPI_") {
            env.push((k, v));
        }
    }
    if cfg.wait_timeout_ms > 0 {
        env.retain(|(k, _)| k != "COLLC_MPI_WAIT_TIMEOUT_MS");
        env.push((
            "COLLC_MPI_WAIT_TIMEOUT_MS".into(),
            cfg.wait_timeout_ms.to_string(),
        ));
    }
    for (k, v) in &cfg.env {
        env.retain(|(x, _)| x != k);
        env.push((k.clone(), v.clone()));
    }
    env
}

/// A private directory for one `mpirun` job: its Open MPI session directory and, on one
/// machine, the backing files of its shared-memory segments (btl/vader, osc/sm). Removed
/// with everything in it when dropped (also what a killed job left behind).
///
/// By default every job on a machine shares the session tree `$TMPDIR/ompi.HOST.UID` and
/// `/dev/shm`, with file names keyed by a 16-bit hash of mpirun's pid; jobs running side by
/// side (tests, benches) then race on that tree and a rank's `open(2)` of a segment can fail
/// ("A system call failed during shared memory initialization"). A job in its own directory
/// shares nothing with another job.
#[derive(Debug)]
pub struct JobDir {
    path: PathBuf,
}

impl JobDir {
    /// Creates a fresh directory under `/dev/shm` (memory-backed, where Open MPI puts its
    /// segments by default) or, where that is missing, the system temp directory.
    pub fn new() -> Result<JobDir, MpiError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = base.join(format!(
            "collc-mpi-{}-{}-{nanos:x}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&path).map_err(|e| {
            MpiError::Launch(format!(
                "cannot create the job directory {}: {e}",
                path.display()
            ))
        })?;
        Ok(JobDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The environment of `mpirun` that puts the job's files in this directory. `local`:
    /// every rank runs on this machine (then the session tree of every process and the
    /// shared-memory backing files go there; with a hostfile only `TMPDIR`, which places
    /// this machine's session directory and is not forwarded, since MCA variables in
    /// mpirun's environment reach the remote ranks, whose machines lack the directory).
    /// An MCA variable the caller's environment already sets is left to it (Open MPI
    /// refuses `orte_tmpdir_base` next to `orte_local_tmpdir_base`, so either of those in the
    /// caller's environment leaves the session tree to the caller).
    pub fn env(&self, local: bool) -> Vec<(String, String)> {
        let dir = self.path.display().to_string();
        let mut keys = vec!["TMPDIR"];
        let caller_tree = [
            "OMPI_MCA_orte_local_tmpdir_base",
            "OMPI_MCA_orte_remote_tmpdir_base",
        ]
        .iter()
        .any(|k| std::env::var_os(k).is_some());
        if local && !caller_tree {
            keys.push("OMPI_MCA_orte_tmpdir_base");
        }
        if local {
            keys.extend([
                "OMPI_MCA_btl_vader_backing_directory",
                "OMPI_MCA_osc_sm_backing_directory",
            ]);
        }
        keys.into_iter()
            .filter(|k| *k == "TMPDIR" || std::env::var_os(k).is_none())
            .map(|k| (k.to_string(), dir.clone()))
            .collect()
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The program's own arguments (`oracle`: the table's file).
fn program_args(cfg: &LaunchConfig, oracle: Option<&Path>) -> Vec<String> {
    let mut a = vec!["--calls".to_string(), cfg.calls.to_string()];
    if let Some(f) = oracle {
        a.push("--oracle".into());
        a.push(f.display().to_string());
    }
    for (k, v) in &cfg.params {
        a.push("--param".into());
        a.push(format!("{k}={v}"));
    }
    if cfg.skew_us > 0 {
        a.push("--skew-us".into());
        a.push(cfg.skew_us.to_string());
    }
    a
}

/// Pids of the live (not zombie) processes in session `sid` (from /proc).
pub fn session_members(sid: i32) -> Vec<i32> {
    session_scan(sid)
        .into_iter()
        .filter(|(_, zombie, _)| !zombie)
        .map(|(p, _, _)| p)
        .collect()
}

/// (pid, is zombie, parent pid) of every process in session `sid`.
fn session_scan(sid: i32) -> Vec<(i32, bool, i32)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 3 && f[3].parse::<i32>().ok() == Some(sid) {
            out.push((pid, f[0] == "Z", f[1].parse::<i32>().unwrap_or(0)));
        }
    }
    out
}

fn signal_all(pids: &[i32], sig: i32) {
    for &p in pids {
        // SAFETY: kill(2) on a pid of our own job's session; no memory is involved.
        unsafe {
            libc::kill(p, sig);
        }
    }
}

/// Reaps the job's zombies that were re-parented to this process (we are a child subreaper,
/// see [`become_subreaper`]), so that no dead rank lingers in the process table when the
/// machine's init does not reap (containers).
fn reap_zombies(sid: i32) {
    let me = std::process::id() as i32;
    for (pid, zombie, ppid) in session_scan(sid) {
        if zombie && ppid == me {
            let mut status = 0;
            // SAFETY: waitpid on a specific pid that is our (zombie) child.
            unsafe {
                libc::waitpid(pid, &mut status, libc::WNOHANG);
            }
        }
    }
}

/// Makes this process the child subreaper of everything it launches (Linux
/// PR_SET_CHILD_SUBREAPER): ranks that mpirun leaves behind become our children instead of
/// init's, so the sweep can still kill them and reap them.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with integer arguments only.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
        }
    });
}

/// SIGKILLs every process of the session until none is left (at most `limit`); returns how
/// many were killed and how many survived.
fn sweep(sid: i32, limit: Duration) -> (usize, usize) {
    let t0 = Instant::now();
    let mut killed = std::collections::BTreeSet::new();
    loop {
        reap_zombies(sid);
        let live = session_members(sid);
        if live.is_empty() {
            reap_zombies(sid);
            return (killed.len(), 0);
        }
        killed.extend(live.iter().copied());
        signal_all(&live, libc::SIGKILL);
        if t0.elapsed() >= limit {
            return (killed.len(), session_members(sid).len());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn reader(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        const CAP: usize = 1 << 20;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if buf.len() < CAP {
                        buf.extend_from_slice(&chunk[..n.min(CAP - buf.len())]);
                    }
                }
            }
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// Runs `binary` under mpirun.
pub fn launch(tc: &Toolchain, binary: &Path, cfg: &LaunchConfig) -> Result<Outcome, MpiError> {
    if cfg.np == 0 {
        return Err(MpiError::Launch("-np must be at least 1".into()));
    }
    let oracle = match &cfg.oracle {
        Some(text) => Some(OracleFile::write(text)?),
        None => None,
    };
    let mut args = mpirun_args(cfg);
    args.push(binary.display().to_string());
    args.extend(program_args(cfg, oracle.as_ref().map(|f| f.0.as_path())));
    let env = forwarded_env(cfg);
    let job_dir = JobDir::new()?;
    let command = shown_command(tc, cfg, &env, &args);

    let mut cmd = Command::new(&tc.mpirun);
    cmd.args(&args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .envs(job_dir.env(cfg.hostfile.is_none()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    own_session(&mut cmd);
    become_subreaper();
    let t0 = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| MpiError::Launch(format!("cannot start {}: {e}", tc.mpirun.display())))?;
    let sid = child.id() as i32;
    let out_h = reader(child.stdout.take().expect("piped stdout"));
    let err_h = reader(child.stderr.take().expect("piped stderr"));
    let (status, deadline_hit) = wait_until(&mut child, sid, t0, cfg.deadline)?;
    let elapsed = t0.elapsed();
    // Sweep the session: after a deadline everything left is killed; after a normal exit
    // there should be nothing (anything found is an orphan and is killed and counted).
    let (orphans_killed, leftover) = sweep(sid, Duration::from_secs(5));
    let stdout = out_h.join().unwrap_or_default();
    let stderr = err_h.join().unwrap_or_default();
    let exit_code = status.and_then(|s| s.code());
    let json = result_json(&stdout);
    let verdict = classify(deadline_hit, exit_code, json.as_ref(), &stderr);
    Ok(Outcome {
        verdict,
        exit_code,
        json,
        stdout,
        stderr,
        elapsed,
        command,
        leftover,
        orphans_killed: if deadline_hit { 0 } else { orphans_killed },
    })
}

/// The program's result: the last line of its standard output that is a JSON object.
fn result_json(stdout: &str) -> Option<serde_json::Value> {
    stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("{"))
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
}

/// The command line as shown to the user: the environment variables the user set (and the
/// wait timeout) in front of the mpirun invocation.
fn shown_command(
    tc: &Toolchain,
    cfg: &LaunchConfig,
    env: &[(String, String)],
    args: &[String],
) -> String {
    let mut command = String::new();
    for (k, v) in env {
        if cfg.env.iter().any(|(x, _)| x == k) || k == "COLLC_MPI_WAIT_TIMEOUT_MS" {
            command.push_str(&format!("{k}={v} "));
        }
    }
    command.push_str(&command_text(&tc.mpirun, args));
    command
}

/// Makes the child the leader of a new session, torn down when collc dies.
fn own_session(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls: setsid(2) makes mpirun
    // the leader of a new session (so every process of the job can be found and killed);
    // prctl(PR_SET_PDEATHSIG) lets mpirun tear the job down if collc dies first.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGTERM as libc::c_ulong,
                0,
                0,
                0,
            );
            Ok(())
        });
    }
}

/// Waits for mpirun until `deadline` after `t0`; past it, SIGTERM (mpirun tears the job down,
/// remote daemons too), two seconds of grace, then SIGKILL. Returns the exit status (if any)
/// and whether the deadline was hit.
fn wait_until(
    child: &mut std::process::Child,
    sid: i32,
    t0: Instant,
    deadline: Duration,
) -> Result<(Option<std::process::ExitStatus>, bool), MpiError> {
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Ok((Some(st), false)),
            Ok(None) => {}
            Err(e) => return Err(MpiError::Launch(format!("waiting for mpirun: {e}"))),
        }
        if t0.elapsed() >= deadline {
            signal_all(&[sid], libc::SIGTERM);
            let grace = Instant::now();
            while grace.elapsed() < Duration::from_secs(2) {
                if let Ok(Some(s)) = child.try_wait() {
                    return Ok((Some(s), true));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            signal_all(&[sid], libc::SIGKILL);
            return Ok((child.wait().ok(), true));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The oracle table's file for one launch (removed when dropped).
struct OracleFile(PathBuf);

impl OracleFile {
    fn write(text: &str) -> Result<OracleFile, MpiError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "collc-oracle-{}-{}.txt",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, text).map_err(|e| {
            MpiError::Launch(format!(
                "cannot write the oracle table {}: {e}",
                path.display()
            ))
        })?;
        Ok(OracleFile(path))
    }
}

impl Drop for OracleFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn classify(
    deadline: bool,
    code: Option<i32>,
    json: Option<&serde_json::Value>,
    stderr: &str,
) -> Verdict {
    if deadline {
        return Verdict::Deadline;
    }
    let get = |k: &str| {
        json.and_then(|j| j.get(k))
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    };
    let died = stderr
        .lines()
        .find(|l| l.contains("exited on signal") || l.contains("noticed that process rank"))
        .map(|l| l.trim().to_string());
    if stderr.contains("WAIT TIMEOUT") || (code == Some(3) && json.is_none()) {
        return Verdict::WaitTimeout;
    }
    if let Some(line) = died {
        if json.is_none() {
            return Verdict::RankDied(line);
        }
    }
    match (code, json) {
        (Some(0), Some(j)) if j.get("ok").and_then(|v| v.as_bool()) == Some(true) => Verdict::Ok,
        (_, Some(j)) if j.get("ok").and_then(|v| v.as_bool()) == Some(false) => Verdict::Wrong {
            mismatches: get("mismatches"),
            nonzero_cells: get("nonzero_cells"),
        },
        (Some(2), None) => Verdict::Usage,
        (Some(4), None) => Verdict::RuntimeError,
        (Some(c), _) => Verdict::Failed(format!(
            "mpirun exited with code {c}{}",
            if json.is_none() {
                " and no result line"
            } else {
                ""
            }
        )),
        (None, _) => Verdict::RankDied("mpirun was killed by a signal".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_dir_is_private_points_open_mpi_at_itself_and_is_removed() {
        let a = JobDir::new().expect("job dir");
        let b = JobDir::new().expect("job dir");
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_dir());
        let local = a.env(true);
        let dir = a.path().display().to_string();
        let get = |k: &str| local.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
        assert_eq!(get("TMPDIR"), Some(dir.clone()));
        for k in [
            "OMPI_MCA_orte_tmpdir_base",
            "OMPI_MCA_btl_vader_backing_directory",
            "OMPI_MCA_osc_sm_backing_directory",
        ] {
            if std::env::var_os(k).is_none() {
                assert_eq!(get(k), Some(dir.clone()), "{k}");
            }
        }
        // A cluster run: nothing that mpirun would forward to the other machines.
        assert!(a.env(false).iter().all(|(k, _)| k == "TMPDIR"));
        std::fs::write(a.path().join("left-behind"), "x").expect("write");
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists(), "{} survived", path.display());
    }
}
