//! The real pto-isa / simpler build environment of collc's Ascend output: pto-isa's CPU
//! simulation (`-D__CPU_SIM`), the way pypto's `a2a3sim` platform builds an AIV kernel
//! (simpler's `KernelCompiler._compile_incore_sim` with pypto's runtime include directories
//! for the `tensormap_and_ringbuffer` runtime): pto-isa's `include` and `include/pto`,
//! simpler's incore and platform headers, the runtime's `runtime`, `common` and root
//! directories, `src/common` (`platform_comm/comm_context.h`) and `src/common/task_interface`
//! (`tensor.h`), and the a2a3sim flags.
//!
//! The real sources are never part of this repository: they are found through the
//! environment variables `PTO_ISA_ROOT` and `SIMPLER_ROOT` (checkouts of hw-native-sys/pto-isa
//! and hw-native-sys/simpler; CONTRIBUTING.md says how to set them up).
//!
//! pto-isa's CPU headers need a C++ compiler that accepts `static_assert(false)` in a template
//! (GCC 13 or Clang 17 and later); `COLLC_SIM_CXX` names one, else the first of
//! [`SIM_COMPILERS`] that compiles `#include <pto/pto-inst.hpp>` is used.

use crate::host::compile::{self, CompileError, Compiler};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The real source trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// `PTO_ISA_ROOT`: a hw-native-sys/pto-isa checkout.
    pub pto_isa: PathBuf,
    /// `SIMPLER_ROOT`: a hw-native-sys/simpler checkout.
    pub simpler: PathBuf,
}

/// Why the real sources are not usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingRoots(pub String);

impl std::fmt::Display for MissingRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A file each root must contain (so a wrong directory is named, not compiled against).
const PTO_ISA_MARK: &str = "include/pto/common/cpu_stub.hpp";
const SIMPLER_MARK: &str = "src/common/platform_comm/comm_context.h";

fn root_from(var: &str, value: Option<std::ffi::OsString>, mark: &str) -> Result<PathBuf, String> {
    let dir = value
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| format!("{var} is not set"))?;
    if dir.join(mark).is_file() {
        Ok(dir)
    } else {
        Err(format!("{var}={} has no {mark}", dir.display()))
    }
}

impl Roots {
    /// `PTO_ISA_ROOT` and `SIMPLER_ROOT` from the environment, each checked to be the tree it
    /// names.
    pub fn from_env() -> Result<Roots, MissingRoots> {
        let pto = root_from(
            "PTO_ISA_ROOT",
            std::env::var_os("PTO_ISA_ROOT"),
            PTO_ISA_MARK,
        );
        let simpler = root_from(
            "SIMPLER_ROOT",
            std::env::var_os("SIMPLER_ROOT"),
            SIMPLER_MARK,
        );
        match (pto, simpler) {
            (Ok(pto_isa), Ok(simpler)) => Ok(Roots { pto_isa, simpler }),
            (a, b) => {
                let why: Vec<String> = [a.err(), b.err()].into_iter().flatten().collect();
                Err(MissingRoots(format!(
                    "{}: set PTO_ISA_ROOT to a hw-native-sys/pto-isa checkout and SIMPLER_ROOT to a \
                     hw-native-sys/simpler checkout (CONTRIBUTING.md, \"The real sources\")",
                    why.join("; ")
                )))
            }
        }
    }

    /// The include directories of an a2a3sim AIV kernel, in simpler's order.
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        let s = &self.simpler;
        let rt = s.join("src/a2a3/runtime/tensormap_and_ringbuffer");
        vec![
            self.pto_isa.join("include"),
            self.pto_isa.join("include/pto"),
            s.join("simpler_setup/incore"),
            s.join("src/common/platform/include"),
            rt.join("runtime"),
            rt.join("common"),
            rt,
            s.join("src/common"),
            s.join("src/common/task_interface"),
        ]
    }
}

/// The a2a3sim flags of simpler's g++-15 kernel toolchain (`Gxx15Toolchain`), less
/// `-shared`/`-O2`/`-fPIC` (added per build), for an AIV kernel.
pub const SIM_FLAGS: &[&str] = &[
    "-std=c++23",
    "-fpermissive",
    "-Wno-macro-redefined",
    "-Wno-ignored-attributes",
    "-D__CPU_SIM",
    "-DPTO_CPU_MAX_THREADS=1",
    "-DNDEBUG",
    "-D__DAV_VEC__",
];

/// Compilers tried, in order, when `COLLC_SIM_CXX` is unset.
pub const SIM_COMPILERS: &[&str] = &[
    "g++-15",
    "g++-14",
    "g++-13",
    "clang++-21",
    "clang++-20",
    "clang++-19",
    "clang++-18",
    "clang++-17",
    "g++",
    "clang++",
];

fn version(cxx: &str) -> Option<String> {
    let o = Command::new(cxx).arg("--version").output().ok()?;
    o.status.success().then(|| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    })
}

/// The first compiler (`COLLC_SIM_CXX`, else [`SIM_COMPILERS`]) that compiles pto-isa's
/// headers in the CPU simulation; found once per process.
pub fn compiler(roots: &Roots) -> Result<Compiler, CompileError> {
    static FOUND: OnceLock<Result<Compiler, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| find_compiler(roots))
        .clone()
        .map_err(|why| CompileError::NoCompiler {
            tried: std::env::var("COLLC_SIM_CXX").unwrap_or_else(|_| SIM_COMPILERS.join(", ")),
            why,
        })
}

fn find_compiler(roots: &Roots) -> Result<Compiler, String> {
    let forced = std::env::var("COLLC_SIM_CXX")
        .ok()
        .filter(|s| !s.trim().is_empty());
    let candidates: Vec<String> = match &forced {
        Some(c) => vec![c.clone()],
        None => SIM_COMPILERS.iter().map(|s| s.to_string()).collect(),
    };
    let dir = compile::cache_dir().map_err(|e| e.to_string())?;
    // What every kernel starts with (pto-isa's headers assume <cstdint> is included).
    const PROBE: &[u8] =
        b"#include <cstdint>\n#include <pto/pto-inst.hpp>\nint main() { return 0; }\n";
    let hash = compile::content_hash(&[PROBE]);
    let probe = dir.join(format!("pto-sim-probe-{}.cpp", &hash[..16]));
    compile::write_once(&probe, PROBE).map_err(|e| e.to_string())?;
    let mut tried = Vec::new();
    for c in candidates {
        let Some(v) = version(&c) else {
            continue;
        };
        let cxx = Compiler {
            path: c.clone(),
            version: v.clone(),
        };
        match compile::run_compiler(&cxx, &syntax_args(roots, &[], &probe)) {
            Ok(_) => return Ok(cxx),
            Err(_) => tried.push(format!("{c} ({v})")),
        }
    }
    Err(if tried.is_empty() {
        "none of them is installed; pto-isa's CPU headers need GCC 13 or Clang 17 or later \
         (e.g. `apt-get install clang-19`), or set COLLC_SIM_CXX"
            .to_string()
    } else {
        format!(
            "none compiles pto-isa's CPU headers (tried {}); they need GCC 13 or Clang 17 or \
             later, or set COLLC_SIM_CXX",
            tried.join(", ")
        )
    })
}

fn syntax_args(roots: &Roots, extra_includes: &[&Path], src: &Path) -> Vec<String> {
    let mut args: Vec<String> = SIM_FLAGS.iter().map(|s| s.to_string()).collect();
    args.push("-fsyntax-only".into());
    for d in roots
        .include_dirs()
        .iter()
        .map(PathBuf::as_path)
        .chain(extra_includes.iter().copied())
    {
        args.push(format!("-I{}", d.display()));
    }
    args.extend([
        "-x".to_string(),
        "c++".to_string(),
        src.display().to_string(),
    ]);
    args
}

/// Type-checks `source` (an emitted Ascend kernel) in the a2a3sim build of the real headers:
/// pto-isa's `__CPU_SIM` implementation of `pto::comm` and the tile instructions, simpler's
/// `CommContext`, `ChipTensor` and block intrinsics, plus collc's runtime directory (for
/// `collc/pto_comm.hpp`). Returns the command on success, the diagnostics on failure.
pub fn syntax_check(source: &str, roots: &Roots) -> Result<String, CompileError> {
    let cxx = compiler(roots)?;
    let rt = compile::runtime_dir()?;
    let dir = compile::cache_dir()?;
    let hash = compile::content_hash(&[source.as_bytes()]);
    let src = dir.join(format!("pto-sim-{}.cpp", &hash[..16]));
    compile::write_once(&src, source.as_bytes())?;
    compile::run_compiler(&cxx, &syntax_args(roots, &[rt.as_path()], &src))
}
