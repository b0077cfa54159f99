//! Compiling generated kernels (and the C++ runner) with the system C++ compiler, cached by
//! content hash.
//!
//! * Compiler: `$CXX`, else `g++`. Its `--version` line is part of the hash.
//! * Runtime: the CPU runtime's sources are embedded in this crate (`include_str!`) and
//!   materialised once per content hash under the cache dir, so a `collc` binary works
//!   outside the repository.
//! * Cache dir: `$COLLC_CACHE_DIR`, else `$XDG_CACHE_HOME/collc`, else `$HOME/.cache/collc`,
//!   else `<tmp>/collc-cache`. Artefacts: `<hash>.cpp` (the source), `lib<hash>.so`, and
//!   `runner-<hash>`. Each is written to a unique temporary name and renamed into place, so
//!   concurrent builds are safe; temporaries are removed on every failure path.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The CPU runtime, embedded: (relative path, contents).
pub const RUNTIME_FILES: &[(&str, &str)] = &[
    (
        "collc/pto_comm.hpp",
        include_str!("../../runtime/collc/pto_comm.hpp"),
    ),
    (
        "collc/pto_comm_ascend.hpp",
        include_str!("../../runtime/collc/pto_comm_ascend.hpp"),
    ),
    (
        "collc/pto_comm_cpu.hpp",
        include_str!("../../runtime/collc/pto_comm_cpu.hpp"),
    ),
    (
        "collc/chip_tensor.hpp",
        include_str!("../../runtime/collc/chip_tensor.hpp"),
    ),
    (
        "collc/host_launch.hpp",
        include_str!("../../runtime/collc/host_launch.hpp"),
    ),
    (
        "collc/host_launch.cpp",
        include_str!("../../runtime/collc/host_launch.cpp"),
    ),
    (
        "collc/host_runner.cpp",
        include_str!("../../runtime/collc/host_runner.cpp"),
    ),
    (
        "collc/pto_sim_bridge.hpp",
        include_str!("../../runtime/collc/pto_sim_bridge.hpp"),
    ),
];

/// Build configuration (its flags are part of every cache key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Build {
    /// `-O3`.
    Opt,
    /// `-O1 -g -fsanitize=thread` (library and runner).
    Tsan,
}

impl Build {
    fn flags(self) -> &'static [&'static str] {
        match self {
            // -O3: the tile loops (TADD(acc, acc, recv) aliases) vectorize only with the
            // full cost model.
            Build::Opt => &["-O3"],
            Build::Tsan => &["-O1", "-g", "-fsanitize=thread"],
        }
    }
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Build::Opt => "opt",
            Build::Tsan => "tsan",
        }
    }
}

/// The warning and language flags of every build: generated code must compile warning-free.
pub const COMMON_FLAGS: &[&str] = &["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread"];

/// Why a build failed.
#[derive(Debug, Clone)]
pub enum CompileError {
    /// No usable C++ compiler.
    NoCompiler {
        /// What was tried.
        tried: String,
        /// Why it failed.
        why: String,
    },
    /// The compiler ran and failed.
    Failed {
        /// The command line.
        command: String,
        /// Its stdout and stderr.
        output: String,
    },
    /// A file could not be written or read.
    Io(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::NoCompiler { tried, why } => write!(
                f,
                "no C++ compiler found: `{tried} --version` failed ({why}); install g++ or set CXX to a C++17 compiler"
            ),
            CompileError::Failed { command, output } => {
                write!(f, "C++ compilation failed\ncommand: {command}\n{}", output.trim_end())
            }
            CompileError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CompileError {}

/// A C++ compiler.
#[derive(Debug, Clone)]
pub struct Compiler {
    /// Executable.
    pub path: String,
    /// First line of `--version`.
    pub version: String,
}

/// Finds the compiler (`$CXX` or `g++`).
pub fn find_compiler() -> Result<Compiler, CompileError> {
    let path = std::env::var("CXX")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "g++".to_string());
    match Command::new(&path).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(Compiler {
            version: String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
            path,
        }),
        Ok(o) => Err(CompileError::NoCompiler {
            tried: path,
            why: format!("exit status {}", o.status),
        }),
        Err(e) => Err(CompileError::NoCompiler {
            tried: path,
            why: e.to_string(),
        }),
    }
}

/// 128-bit FNV-1a style content hash (two independent 64-bit lanes), as hex.
pub fn content_hash(parts: &[&[u8]]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for part in parts {
        for &x in part.iter().chain(&(part.len() as u64).to_le_bytes()) {
            a ^= u64::from(x);
            a = a.wrapping_mul(0x0000_0100_0000_01b3);
            b ^= u64::from(x).wrapping_add(0x9e);
            b = b.wrapping_mul(0x0000_0100_0000_01b3).rotate_left(5);
        }
    }
    format!("{a:016x}{b:016x}")
}

static CACHE_OVERRIDE: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Overrides the cache directory for this process (tests and benches use a directory of
/// their own build tree instead of the user's cache).
pub fn set_cache_dir(dir: impl Into<PathBuf>) {
    *CACHE_OVERRIDE.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.into());
}

/// The cache directory (created).
pub fn cache_dir() -> Result<PathBuf, CompileError> {
    let forced = CACHE_OVERRIDE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = forced
        .or_else(|| env("COLLC_CACHE_DIR"))
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("collc")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("collc")))
        .unwrap_or_else(|| std::env::temp_dir().join("collc-cache"));
    std::fs::create_dir_all(&dir).map_err(|e| {
        CompileError::Io(format!(
            "cannot create the cache dir {}: {e}",
            dir.display()
        ))
    })?;
    Ok(dir)
}

pub(crate) fn runtime_hash() -> &'static str {
    static H: OnceLock<String> = OnceLock::new();
    H.get_or_init(|| {
        let mut parts: Vec<&[u8]> = Vec::new();
        for (p, c) in RUNTIME_FILES {
            parts.push(p.as_bytes());
            parts.push(c.as_bytes());
        }
        content_hash(&parts)
    })
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A unique temporary name next to `final_path` (for write-then-rename).
pub(crate) fn tmp_name(final_path: &Path) -> PathBuf {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut s = final_path.as_os_str().to_owned();
    s.push(format!(".tmp.{}.{n}", std::process::id()));
    PathBuf::from(s)
}

/// Removes a file when dropped (unless disarmed).
struct TempFile(Option<PathBuf>);
impl TempFile {
    fn disarm(&mut self) {
        self.0 = None;
    }
}
impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Writes `contents` to `path` atomically (temporary + rename), if it does not exist yet.
pub(crate) fn write_once(path: &Path, contents: &[u8]) -> Result<(), CompileError> {
    if path.exists() {
        return Ok(());
    }
    let tmp = tmp_name(path);
    let mut guard = TempFile(Some(tmp.clone()));
    std::fs::write(&tmp, contents)
        .map_err(|e| CompileError::Io(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        CompileError::Io(format!(
            "cannot rename {} to {}: {e}",
            tmp.display(),
            path.display()
        ))
    })?;
    guard.disarm();
    Ok(())
}

/// The materialised runtime include directory (contains `collc/...`).
pub fn runtime_dir() -> Result<PathBuf, CompileError> {
    let dir = cache_dir()?.join(format!("runtime-{}", &runtime_hash()[..16]));
    for (rel, contents) in RUNTIME_FILES {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                CompileError::Io(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        write_once(&p, contents.as_bytes())?;
    }
    Ok(dir)
}

/// Quotes one argument for display as POSIX shell text.
pub(crate) fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+:,@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub(crate) fn run_compiler(cxx: &Compiler, args: &[String]) -> Result<String, CompileError> {
    let command = std::iter::once(cxx.path.clone())
        .chain(args.iter().cloned())
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(&cxx.path)
        .args(args)
        .output()
        .map_err(|e| CompileError::Failed {
            command: command.clone(),
            output: format!("cannot run the compiler: {e}"),
        })?;
    if out.status.success() {
        Ok(command)
    } else {
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        const LIMIT: usize = 20_000;
        if output.len() > LIMIT {
            let cut = collc_grammar::diag::floor_char_boundary(&output, LIMIT);
            output.truncate(cut);
            output.push_str("\n[... output truncated]");
        }
        Err(CompileError::Failed { command, output })
    }
}

/// A cached build product.
#[derive(Debug, Clone)]
pub struct Built {
    /// The artefact.
    pub path: PathBuf,
    /// The command that built it (or would have, on a cache hit).
    pub command: String,
    /// True if it was already in the cache.
    pub cached: bool,
}

fn lib_args(rt: &Path, src: &Path, out: &Path, build: Build) -> Vec<String> {
    let mut a: Vec<String> = COMMON_FLAGS.iter().map(|s| s.to_string()).collect();
    a.extend(build.flags().iter().map(|s| s.to_string()));
    a.push("-shared".into());
    a.push("-fPIC".into());
    a.push(format!("-I{}", rt.display()));
    a.push(src.display().to_string());
    a.push(rt.join("collc/host_launch.cpp").display().to_string());
    a.push("-o".into());
    a.push(out.display().to_string());
    a
}

/// Compiles a kernel source (with the launcher) into a shared library in the cache.
pub fn library(source: &str, build: Build) -> Result<Built, CompileError> {
    let cxx = find_compiler()?;
    let rt = runtime_dir()?;
    let dir = cache_dir()?;
    let hash = content_hash(&[
        source.as_bytes(),
        runtime_hash().as_bytes(),
        cxx.path.as_bytes(),
        cxx.version.as_bytes(),
        build.name().as_bytes(),
        build.flags().join(" ").as_bytes(),
        COMMON_FLAGS.join(" ").as_bytes(),
    ]);
    let src = dir.join(format!("{hash}.cpp"));
    let lib = dir.join(format!("lib{hash}.so"));
    let final_args = lib_args(&rt, &src, &lib, build);
    let command = std::iter::once(cxx.path.clone())
        .chain(final_args.iter().cloned())
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ");
    if lib.exists() {
        return Ok(Built {
            path: lib,
            command,
            cached: true,
        });
    }
    write_once(&src, source.as_bytes())?;
    let tmp = tmp_name(&lib);
    let mut guard = TempFile(Some(tmp.clone()));
    let args = lib_args(&rt, &src, &tmp, build);
    run_compiler(&cxx, &args).map_err(|e| match e {
        CompileError::Failed { output, .. } => CompileError::Failed {
            command: command.clone(),
            output,
        },
        other => other,
    })?;
    std::fs::rename(&tmp, &lib).map_err(|e| {
        CompileError::Io(format!(
            "cannot rename {} to {}: {e}",
            tmp.display(),
            lib.display()
        ))
    })?;
    guard.disarm();
    Ok(Built {
        path: lib,
        command,
        cached: false,
    })
}

/// Compiles a kernel source into the shared library `out` (not cached); returns the command.
pub fn build_library(source: &str, out: &str, build: Build) -> Result<String, CompileError> {
    let built = library(source, build)?;
    std::fs::copy(&built.path, out)
        .map_err(|e| CompileError::Io(format!("cannot write `{out}`: {e}")))?;
    Ok(built.command)
}

/// The C++ runner executable (`collc/host_runner.cpp`), built once per build config.
pub fn runner(build: Build) -> Result<Built, CompileError> {
    let cxx = find_compiler()?;
    let rt = runtime_dir()?;
    let dir = cache_dir()?;
    let hash = content_hash(&[
        runtime_hash().as_bytes(),
        cxx.path.as_bytes(),
        cxx.version.as_bytes(),
        build.name().as_bytes(),
        build.flags().join(" ").as_bytes(),
    ]);
    let exe = dir.join(format!("runner-{}-{}", build.name(), &hash[..16]));
    let mk = |out: &Path| {
        let mut a: Vec<String> = COMMON_FLAGS.iter().map(|s| s.to_string()).collect();
        a.extend(build.flags().iter().map(|s| s.to_string()));
        a.push(format!("-I{}", rt.display()));
        a.push(rt.join("collc/host_runner.cpp").display().to_string());
        a.push("-ldl".into());
        a.push("-o".into());
        a.push(out.display().to_string());
        a
    };
    let command = std::iter::once(cxx.path.clone())
        .chain(mk(&exe))
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ");
    if exe.exists() {
        return Ok(Built {
            path: exe,
            command,
            cached: true,
        });
    }
    let tmp = tmp_name(&exe);
    let mut guard = TempFile(Some(tmp.clone()));
    run_compiler(&cxx, &mk(&tmp))?;
    std::fs::rename(&tmp, &exe).map_err(|e| {
        CompileError::Io(format!(
            "cannot rename {} to {}: {e}",
            tmp.display(),
            exe.display()
        ))
    })?;
    guard.disarm();
    Ok(Built {
        path: exe,
        command,
        cached: false,
    })
}

/// Compiles an arbitrary C++ file of the runtime tree (e.g. `bench/baselines.cpp`) into a
/// cached shared library.
pub fn shared_object(name: &str, source: &str, build: Build) -> Result<Built, CompileError> {
    let cxx = find_compiler()?;
    let dir = cache_dir()?;
    let hash = content_hash(&[
        source.as_bytes(),
        cxx.path.as_bytes(),
        cxx.version.as_bytes(),
        build.name().as_bytes(),
        build.flags().join(" ").as_bytes(),
    ]);
    let src = dir.join(format!("{name}-{}.cpp", &hash[..16]));
    let lib = dir.join(format!("lib{name}-{}.so", &hash[..16]));
    let mk = |out: &Path| {
        let mut a: Vec<String> = COMMON_FLAGS.iter().map(|s| s.to_string()).collect();
        a.extend(build.flags().iter().map(|s| s.to_string()));
        a.extend([
            "-shared".to_string(),
            "-fPIC".to_string(),
            src.display().to_string(),
            "-o".to_string(),
        ]);
        a.push(out.display().to_string());
        a
    };
    let command = mk(&lib).join(" ");
    if lib.exists() {
        return Ok(Built {
            path: lib,
            command,
            cached: true,
        });
    }
    write_once(&src, source.as_bytes())?;
    let tmp = tmp_name(&lib);
    let mut guard = TempFile(Some(tmp.clone()));
    run_compiler(&cxx, &mk(&tmp))?;
    std::fs::rename(&tmp, &lib)
        .map_err(|e| CompileError::Io(format!("cannot rename {}: {e}", tmp.display())))?;
    guard.disarm();
    Ok(Built {
        path: lib,
        command,
        cached: false,
    })
}
