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

use crate::cpp::{self, EmitOptions, Target};
use crate::host::compile::{self, Build, CompileError, Compiler};
use crate::host::{self, job, RunConfig, RunError, RunReport};
use collc_grammar::Source;
use collc_spec::eval::Bindings;
use collc_spec::ir::Protocol;
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
    let rt = compile::runtime_dir()?;
    syntax_check_with(source, roots, &[rt.as_path()])
}

/// As [`syntax_check`], with nothing of collc on the include path: only the a2a3sim include
/// directories of the real sources (a rendered pypto template, which carries collc's adapter
/// inline, must compile there as pypto's own kernels do).
pub fn syntax_check_alone(source: &str, roots: &Roots) -> Result<String, CompileError> {
    syntax_check_with(source, roots, &[])
}

fn syntax_check_with(
    source: &str,
    roots: &Roots,
    extra_includes: &[&Path],
) -> Result<String, CompileError> {
    let cxx = compiler(roots)?;
    let dir = compile::cache_dir()?;
    let hash = compile::content_hash(&[source.as_bytes()]);
    let src = dir.join(format!("pto-sim-{}.cpp", &hash[..16]));
    compile::write_once(&src, source.as_bytes())?;
    compile::run_compiler(&cxx, &syntax_args(roots, extra_includes, &src))
}

/// The flags of a runnable kernel library in the CPU simulation (after [`SIM_FLAGS`]): the
/// kernel binds its own symbols (`-Wl,-Bsymbolic`), since the process also holds collc's CPU
/// runtime, whose `pto::comm` names are the same.
pub const SIM_LIB_FLAGS: &[&str] = &["-O2", "-shared", "-fPIC", "-Wl,-Bsymbolic"];

/// What a kernel library's cache key covers besides the source, the compiler and the flags:
/// the roots' paths and the contents of their marker headers (a checkout moved to another
/// revision at the same path whose markers differ gets a fresh build).
fn roots_key(roots: &Roots) -> Vec<u8> {
    let mut v = Vec::new();
    for (dir, mark) in [
        (&roots.pto_isa, PTO_ISA_MARK),
        (&roots.simpler, SIMPLER_MARK),
    ] {
        v.extend_from_slice(dir.display().to_string().as_bytes());
        v.extend(std::fs::read(dir.join(mark)).unwrap_or_default());
    }
    v
}

/// Builds an emitted Ascend kernel (`collc emit --target ascend`) for pto-isa's CPU simulation
/// as a shared library with `collc/pto_sim_bridge.hpp` as its entry (cached by content hash):
/// what `collc run --target pto-isa` loads.
pub fn kernel_library(kernel: &str, roots: &Roots) -> Result<compile::Built, CompileError> {
    let cxx = compiler(roots)?;
    let rt = compile::runtime_dir()?;
    let dir = compile::cache_dir()?;
    let source = format!("{kernel}\n#include \"collc/pto_sim_bridge.hpp\"\n");
    let key = roots_key(roots);
    let hash = compile::content_hash(&[
        source.as_bytes(),
        compile::runtime_hash().as_bytes(),
        cxx.path.as_bytes(),
        cxx.version.as_bytes(),
        SIM_FLAGS.join(" ").as_bytes(),
        SIM_LIB_FLAGS.join(" ").as_bytes(),
        &key,
    ]);
    let src = dir.join(format!("pto-sim-run-{}.cpp", &hash[..16]));
    let lib = dir.join(format!("libpto-sim-{}.so", &hash[..16]));
    let args = |out: &Path| {
        let mut a: Vec<String> = SIM_FLAGS.iter().map(|s| s.to_string()).collect();
        a.extend(SIM_LIB_FLAGS.iter().map(|s| s.to_string()));
        for d in roots.include_dirs().iter().chain(std::iter::once(&rt)) {
            a.push(format!("-I{}", d.display()));
        }
        a.extend([
            src.display().to_string(),
            "-o".into(),
            out.display().to_string(),
        ]);
        a
    };
    let command = std::iter::once(cxx.path.clone())
        .chain(args(&lib))
        .map(|a| compile::shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ");
    if lib.exists() {
        return Ok(compile::Built {
            path: lib,
            command,
            cached: true,
        });
    }
    compile::write_once(&src, source.as_bytes())?;
    let tmp = compile::tmp_name(&lib);
    let built = compile::run_compiler(&cxx, &args(&tmp)).and_then(|_| {
        std::fs::rename(&tmp, &lib)
            .map_err(|e| CompileError::Io(format!("cannot rename {}: {e}", tmp.display())))
    });
    if let Err(e) = built {
        let _ = std::fs::remove_file(&tmp);
        return Err(match e {
            CompileError::Failed { output, .. } => CompileError::Failed { command, output },
            other => other,
        });
    }
    Ok(compile::Built {
        path: lib,
        command,
        cached: false,
    })
}

/// The collc launcher alone (no kernel: the runner passes the simulation kernel as
/// `CollcRunConfig::kernel`).
const LAUNCHER_ONLY: &str =
    "// collc launcher only: the kernel is CollcRunConfig::kernel (collc/pto_sim_bridge.hpp)\n";

/// The args block's entries before simpler's `LocalContext*` at `args[48]`
/// (`SPMD_LOCAL_CONTEXT_INDEX` in simpler's `intrinsic.h`): buffers, scalars, `CommContext*`.
pub const SIM_MAX_ARGS: usize = 48;

/// `collc run --target pto-isa`: emits the Ascend kernel, builds it against the real headers
/// in pto-isa's CPU simulation ([`kernel_library`]), runs P ranks x C blocks as threads of the
/// collc launcher for K back-to-back calls (TNOTIFY / TWAIT / TGET / TPUT / TLOAD / ... are
/// pto-isa's CPU implementations; the kernel reads simpler's `CommContext` and
/// `LocalContext`), and checks the outputs and every credit cell exactly as
/// [`crate::host::run`] does. A wait that never holds hangs (pto-isa's TWAIT has no deadline
/// collc can see): the runner is killed after `cfg.wall_limit`. `cfg.exec` and
/// `cfg.twait_timeout_ms` do not apply; a ThreadSanitizer build or chaos is refused.
pub fn run(
    p: &collc_spec::Validated,
    source: Option<&Source>,
    cfg: &RunConfig,
    roots: &Roots,
) -> Result<RunReport, RunError> {
    let kernel =
        cpp::emit(p, Target::Ascend, &emit_options(source, cfg)).map_err(RunError::Emit)?;
    run_text(p, cfg, roots, &|_| Ok(kernel.clone()))
}

/// As [`run`], with the kernel of pypto's builtin: the template
/// ([`cpp::pypto::emit_template`]) rendered as pypto renders it (FP32, the protocol's
/// reduction instruction, the bound broadcast root), called through pypto's args block
/// (simpler's `ChipTensor`s, nranks, `CommContext*`, and simpler's contexts at `args[48]`)
/// by [`cpp::pypto::cpu_shim`] built into the same simulation library.
pub fn run_pypto(
    p: &collc_spec::Validated,
    source: Option<&Source>,
    cfg: &RunConfig,
    roots: &Roots,
) -> Result<RunReport, RunError> {
    let template =
        cpp::pypto::emit_template(p, &emit_options(source, cfg)).map_err(RunError::Emit)?;
    run_text(p, cfg, roots, &|b| {
        let root = match p.semantics {
            collc_spec::ir::Semantics::Broadcast { root, .. } => b.env.get(root),
            _ => None,
        };
        let values = cpp::pypto::pypto_values(p, root);
        let vars: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let kernel = cpp::pypto::render_template(&template, &vars);
        cpp::pypto::cpu_shim(p, &kernel, None).map_err(RunError::Emit)
    })
}

fn emit_options<'a>(source: Option<&'a Source>, cfg: &RunConfig) -> EmitOptions<'a> {
    EmitOptions {
        source,
        warning: Vec::new(),
        world_limit: cfg.world_limit,
    }
}

/// Builds the kernel `text` makes from the bound parameters in the simulation, runs and
/// checks it.
fn run_text(
    p: &Protocol,
    cfg: &RunConfig,
    roots: &Roots,
    text: &dyn Fn(&Bindings) -> Result<String, RunError>,
) -> Result<RunReport, RunError> {
    if cfg.build != Build::Opt || cfg.chaos.is_some() {
        return Err(RunError::Config(
            "pto-isa's CPU simulation runs the plain build: no ThreadSanitizer, no chaos injection \
             (collc's hooks are not in pto-isa's TNOTIFY)"
                .into(),
        ));
    }
    let (bindings, job, plan) = host::job_of(p, cfg)?;
    let nargs = job.buffers.len() + job.scalars.len() + 1;
    if nargs > SIM_MAX_ARGS {
        return Err(RunError::Config(format!(
            "the args block has {nargs} entries; simpler's LocalContext* sits at args[{SIM_MAX_ARGS}]"
        )));
    }
    let kernel = text(&bindings)?;
    let built = kernel_library(&kernel, roots).map_err(RunError::Compile)?;
    let launcher = compile::library(LAUNCHER_ONLY, Build::Opt).map_err(RunError::Compile)?;
    let runner = compile::runner(Build::Opt).map_err(RunError::Compile)?;
    let out = job::execute_subprocess_with(
        &runner.path,
        &launcher.path,
        Some(&built.path),
        &job,
        cfg.wall_limit,
    )
    .map_err(RunError::Exec)?;
    let prep = host::Prepared {
        bindings,
        job,
        plan,
        built,
    };
    Ok(host::report_of(p, &prep, cfg.calls, out))
}
