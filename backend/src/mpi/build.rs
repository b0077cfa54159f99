//! Finding the MPI tools and compiling generated programs with `mpicxx`, cached by content
//! hash (the program, the embedded runtime, the flags and the `mpicxx` identity).
//!
//! * Tools: `$COLLC_MPICXX` / `$COLLC_MPIRUN` if set, else `mpicxx` / `mpirun` on `PATH`. A
//!   missing tool is an [`MpiError::Missing`] that names the packages to install.
//! * Runtime: `collc_mpi.hpp` and `collc_mpi_main.hpp` are embedded (`include_str!`) and
//!   materialised once per content hash under the cache dir (the host backend's:
//!   `$COLLC_CACHE_DIR`, else `$XDG_CACHE_HOME/collc`, else `~/.cache/collc`), so a `collc`
//!   binary works outside the repository.
//! * Artefacts: `mpi-<hash>.cpp` and the executable `mpi-<hash>`, written under temporary
//!   names and renamed into place (concurrent builds are safe).

use crate::host::compile::{self as host, cache_dir, content_hash, shell_quote, tmp_name};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The MPI runtime, embedded: (file name, contents).
pub const RUNTIME_FILES: &[(&str, &str)] = &[
    (
        "collc_mpi.hpp",
        include_str!("../../runtime/mpi/collc_mpi.hpp"),
    ),
    (
        "collc_mpi_main.hpp",
        include_str!("../../runtime/mpi/collc_mpi_main.hpp"),
    ),
];

/// Flags every generated program is built with (the runtime's own tests use the same).
pub const CXXFLAGS: &[&str] = &["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"];

/// The packages that provide `mpicxx` and `mpirun` on Debian/Ubuntu (what CI installs).
pub const PACKAGES: &str = "openmpi-bin libopenmpi-dev";

/// Why the MPI backend could not build or run a program.
#[derive(Debug, Clone)]
pub enum MpiError {
    /// A tool is not installed.
    Missing {
        /// `mpicxx` or `mpirun`.
        tool: &'static str,
        /// Where we looked.
        looked: String,
    },
    /// The compiler failed.
    Compile {
        /// The command.
        command: String,
        /// Its output.
        output: String,
    },
    /// File-system trouble (cache dir, temporary files).
    Io(String),
    /// `mpirun` could not be started.
    Launch(String),
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MpiError::Missing { tool, looked } => write!(
                f,
                "`{tool}` not found ({looked}); the MPI backend needs Open MPI: install the packages \
                 `{PACKAGES}` (e.g. `apt-get install {PACKAGES}`), or point COLLC_MPICXX / COLLC_MPIRUN \
                 at your MPI's compiler wrapper and launcher"
            ),
            MpiError::Compile { command, output } => write!(f, "mpicxx failed: {command}\n{output}"),
            MpiError::Io(m) | MpiError::Launch(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for MpiError {}

/// The MPI tools found on this machine.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// The compiler wrapper.
    pub mpicxx: PathBuf,
    /// The launcher.
    pub mpirun: PathBuf,
}

fn find_tool(env: &str, name: &'static str) -> Result<PathBuf, MpiError> {
    if let Some(v) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&v);
        if is_executable(&p) {
            return Ok(p);
        }
        return Err(MpiError::Missing {
            tool: name,
            looked: format!("${env}={} is not an executable file", p.display()),
        });
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let p = dir.join(name);
        if is_executable(&p) {
            return Ok(p);
        }
    }
    Err(MpiError::Missing {
        tool: name,
        looked: format!("not on PATH, ${env} unset"),
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds `mpicxx` and `mpirun`.
pub fn find_toolchain() -> Result<Toolchain, MpiError> {
    Ok(Toolchain {
        mpicxx: find_tool("COLLC_MPICXX", "mpicxx")?,
        mpirun: find_tool("COLLC_MPIRUN", "mpirun")?,
    })
}

impl Toolchain {
    /// What identifies the compiler for the cache key: `mpicxx --showme` (Open MPI: the
    /// underlying command line) or `-show` (MPICH), and `--version`.
    fn identity(&self) -> String {
        let run = |args: &[&str]| {
            Command::new(&self.mpicxx)
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default()
        };
        let show = run(&["--showme"]);
        let show = if show.is_empty() {
            run(&["-show"])
        } else {
            show
        };
        format!("{}\n{show}\n{}", self.mpicxx.display(), run(&["--version"]))
    }

    /// The MPI library's version line (`mpirun --version`, first line).
    pub fn mpi_version(&self) -> String {
        Command::new(&self.mpirun)
            .arg("--version")
            .output()
            .ok()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default()
    }
}

/// A compiled program.
#[derive(Debug, Clone)]
pub struct Built {
    /// The executable.
    pub binary: PathBuf,
    /// The compile command (or the one that built the cached binary).
    pub command: String,
    /// True if it came from the cache.
    pub cached: bool,
}

fn runtime_hash() -> String {
    let mut parts: Vec<&[u8]> = Vec::new();
    for (n, c) in RUNTIME_FILES {
        parts.push(n.as_bytes());
        parts.push(c.as_bytes());
    }
    content_hash(&parts)
}

fn io(what: &str, p: &Path, e: std::io::Error) -> MpiError {
    MpiError::Io(format!("cannot {what} {}: {e}", p.display()))
}

/// Writes `contents` to `path` via a temporary and a rename, if it does not exist yet
/// (the host compiler's helper, with its error carried as an MPI I/O error).
fn write_once(path: &Path, contents: &[u8]) -> Result<(), MpiError> {
    host::write_once(path, contents).map_err(|e| MpiError::Io(e.to_string()))
}

fn cache() -> Result<PathBuf, MpiError> {
    cache_dir().map_err(|e| MpiError::Io(e.to_string()))
}

/// The materialised runtime include directory (holds `collc_mpi.hpp`).
pub fn runtime_dir() -> Result<PathBuf, MpiError> {
    let dir = cache()?.join(format!("mpi-runtime-{}", &runtime_hash()[..16]));
    std::fs::create_dir_all(&dir).map_err(|e| io("create", &dir, e))?;
    for (name, contents) in RUNTIME_FILES {
        write_once(&dir.join(name), contents.as_bytes())?;
    }
    Ok(dir)
}

/// A command line as shell text.
pub fn command_text(prog: &Path, args: &[String]) -> String {
    std::iter::once(prog.display().to_string())
        .chain(args.iter().cloned())
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Compiles `source` with `mpicxx` into `out` (not cached); returns the command.
pub fn compile_to(tc: &Toolchain, source_file: &Path, out: &Path) -> Result<String, MpiError> {
    let rt = runtime_dir()?;
    let mut args: Vec<String> = CXXFLAGS.iter().map(|s| s.to_string()).collect();
    args.push(format!("-I{}", rt.display()));
    args.push(source_file.display().to_string());
    args.push("-o".into());
    args.push(out.display().to_string());
    let command = command_text(&tc.mpicxx, &args);
    let o = Command::new(&tc.mpicxx)
        .args(&args)
        .output()
        .map_err(|e| MpiError::Compile {
            command: command.clone(),
            output: format!("cannot run mpicxx: {e}"),
        })?;
    if o.status.success() {
        Ok(command)
    } else {
        let mut output = String::from_utf8_lossy(&o.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&o.stderr));
        if output.len() > 20_000 {
            let mut cut = 20_000;
            while !output.is_char_boundary(cut) {
                cut -= 1;
            }
            output.truncate(cut);
            output.push_str("\n[... output truncated]");
        }
        Err(MpiError::Compile { command, output })
    }
}

/// Compiles a generated program (cached by content hash).
pub fn build(tc: &Toolchain, source: &str) -> Result<Built, MpiError> {
    let identity = tc.identity();
    let flags = CXXFLAGS.join(" ");
    let hash = content_hash(&[
        source.as_bytes(),
        runtime_hash().as_bytes(),
        flags.as_bytes(),
        identity.as_bytes(),
    ]);
    let dir = cache()?;
    let stem = format!("mpi-{}", &hash[..24]);
    let binary = dir.join(&stem);
    let src = dir.join(format!("{stem}.cpp"));
    write_once(&src, source.as_bytes())?;
    if binary.exists() {
        let rt = runtime_dir()?;
        let mut args: Vec<String> = CXXFLAGS.iter().map(|s| s.to_string()).collect();
        args.extend([
            format!("-I{}", rt.display()),
            src.display().to_string(),
            "-o".into(),
            binary.display().to_string(),
        ]);
        return Ok(Built {
            command: command_text(&tc.mpicxx, &args),
            binary,
            cached: true,
        });
    }
    let tmp = tmp_name(&binary);
    let result = compile_to(tc, &src, &tmp);
    let command = match result {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, &binary).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io("rename into", &binary, e)
    })?;
    Ok(Built {
        binary,
        command,
        cached: false,
    })
}
