//! Libraries that host programs call: `collc emit --target host|mpi --lib NAME FILE... -o DIR`.
//!
//! One library packages one or more verified protocols (one collective each) behind one
//! communicator, one function per kind; a library may hold several protocols of one kind,
//! one chosen per call by the count and P from a decision table (`table`, `choice`,
//! measured by `collc tune` for either target: `tune`; a library also takes the table
//! with `--table`):
//!
//! * [`LibTarget::Host`]: `libNAME.so` + `NAME.h`; ranks are the caller's threads; the
//!   communicator is `collc::lib::Comm` (`backend/runtime/collc/host_lib.hpp`).
//! * [`LibTarget::Mpi`]: the same over MPI-3 RMA; ranks are the processes of the
//!   `MPI_Comm` given to `NAME_comm_create` (`backend/runtime/mpi/collc_mpi_lib.hpp`).
//!
//! [`generate`] is pure (the files as text); [`install`] writes them into the output folder
//! with the runtime headers, builds the shared library, and adds the packaging: a pkg-config
//! file, a CMake package config and a README with an example ([`package`]). The verifier
//! gate is the caller's (the CLI runs it for every file before calling this), as for every
//! other generator.

pub mod api;
pub mod checks;
pub mod choice;
pub mod config;
pub mod header;
pub mod host;
pub mod mpi;
pub mod package;
pub mod pmpi;
pub mod table;
pub mod tune;

use crate::cpp::{EmitOptions, Kernel};
use api::Coll;
use collc_grammar::{Diagnostic, Source};
use collc_spec::ir::Id;
use collc_spec::ir::Protocol;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the library's ranks live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibTarget {
    /// Threads of one process (CPU `pto::comm` runtime).
    Host,
    /// Processes of an MPI communicator (MPI-3 RMA runtime).
    Mpi,
}

impl LibTarget {
    /// `host` / `mpi`.
    pub fn name(self) -> &'static str {
        match self {
            LibTarget::Host => "host",
            LibTarget::Mpi => "mpi",
        }
    }
}

/// One verified protocol of the library.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    /// The protocol.
    pub protocol: &'a collc_spec::Validated,
    /// Its source (line comments, file name in the header).
    pub source: Option<&'a Source>,
    /// The gate's stamp (why it is packaged unverified), empty when verified.
    pub warning: Vec<String>,
    /// The verdict's world limit.
    pub world_limit: Option<i64>,
}

/// One generated file: its path relative to the output folder and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Relative path.
    pub path: String,
    /// Contents.
    pub text: String,
}

/// Why a library could not be produced.
#[derive(Debug, Clone)]
pub enum LibError {
    /// A member cannot be packaged (diagnostics against that member's source).
    Refused {
        /// Index of the member.
        member: usize,
        /// Why.
        diagnostics: Vec<Diagnostic>,
    },
    /// The library name is not a C identifier, protocols of one kind that cannot share
    /// its function, or a decision table that does not fit the library.
    Usage(String),
    /// Writing the output folder failed.
    Io(String),
    /// The compiler failed or is missing.
    Build(String),
}

impl std::fmt::Display for LibError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LibError::Refused {
                member,
                diagnostics,
            } => {
                let m: Vec<String> = diagnostics
                    .iter()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .collect();
                write!(f, "file {}: {}", member + 1, m.join("; "))
            }
            LibError::Usage(m) | LibError::Io(m) | LibError::Build(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LibError {}

/// True for a C identifier that is usable as a library name (`[A-Za-z_][A-Za-z0-9_]*`,
/// at most 64 characters, not starting with `collc_`).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
        && !name.starts_with("collc_")
}

/// The collectives of a library, checked.
pub fn collectives<'a>(members: &[Member<'a>], name: &str) -> Result<Vec<Coll<'a>>, LibError> {
    if !valid_name(name) {
        return Err(LibError::Usage(format!(
            "library name `{name}` must be a C identifier ([A-Za-z_][A-Za-z0-9_]*, at most 64 characters, not starting with collc_)"
        )));
    }
    if members.is_empty() {
        return Err(LibError::Usage(
            "a library needs at least one .coll file".into(),
        ));
    }
    let mut colls: Vec<Coll> = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let pto = crate::ranks::PTO_MAX_RANKS;
        let k = Kernel::new(
            m.protocol,
            &EmitOptions {
                source: m.source,
                warning: m.warning.clone(),
                world_limit: Some(m.world_limit.map_or(pto, |l| l.min(pto))),
            },
        )
        .map_err(|diagnostics| LibError::Refused {
            member: i,
            diagnostics,
        })?;
        let c = Coll::new(k, i).map_err(|diagnostics| LibError::Refused {
            member: i,
            diagnostics,
        })?;
        colls.push(c);
    }
    several_per_kind(&mut colls)?;
    Ok(colls)
}

/// Several protocols of one kind: each gets the protocol's name as its configuration field
/// (`Coll::cfg`); they must all take the count per call (`Coll::row_param`; a barrier has
/// no count), with the same element type, and the names must be distinct from each other and from the other kinds.
fn several_per_kind(colls: &mut [Coll]) -> Result<(), LibError> {
    let funcs: Vec<String> = colls.iter().map(|c| c.func.clone()).collect();
    for i in 0..colls.len() {
        let same: Vec<usize> = (0..colls.len()).filter(|&j| funcs[j] == funcs[i]).collect();
        if same.len() < 2 {
            continue;
        }
        let first = &colls[same[0]];
        for &j in &same {
            let c = &colls[j];
            if c.row_param().is_none() && c.kind != api::Kind::Barrier {
                return Err(LibError::Usage(format!(
                    "`{}` is one of several {} protocols, but its count is fixed at creation: a library chooses among protocols of one kind per call by the count, so each must take its count per call (windows ending in a row-length parameter)",
                    c.p().name, c.func
                )));
            }
            if c.elem() != first.elem() {
                return Err(LibError::Usage(format!(
                    "the {} protocols `{}` ({}) and `{}` ({}) pass different element types: one function serves them",
                    c.func,
                    first.p().name,
                    first.elem().as_str(),
                    c.p().name,
                    c.elem().as_str()
                )));
            }
        }
        colls[i].cfg = colls[i].p().name.clone();
    }
    for (i, c) in colls.iter().enumerate() {
        if colls[..i].iter().any(|x| x.cfg == c.cfg) || (c.cfg != c.func && funcs.contains(&c.cfg))
        {
            return Err(LibError::Usage(format!(
                "two configuration fields named `{}`: a library holding several protocols of one kind names each after its collective, so their names must differ from each other and from the kinds (rename the collective)",
                c.cfg
            )));
        }
    }
    Ok(())
}

/// Several protocols of one kind in a host library: each takes its count per call
/// (`Coll::size_param`: a 1-D allreduce, broadcast or reduce), or is a barrier.
fn host_several(colls: &[Coll]) -> Result<(), LibError> {
    for (f, ms) in kinds(colls) {
        if ms.len() < 2 {
            continue;
        }
        if let Some(c) = ms
            .iter()
            .find(|c| c.size_param().is_none() && c.kind != api::Kind::Barrier)
        {
            return Err(LibError::Usage(format!(
                "`{}` is one of several {f} protocols of a host library, but its count is fixed at creation: a host library chooses among protocols of one kind per call by the count, which a host call passes only to a 1-D allreduce, broadcast or reduce (several protocols of other kinds: --target mpi)",
                c.p().name
            )));
        }
    }
    Ok(())
}

/// The protocols of each kind, in library order: (kind, members), kinds in order of first
/// appearance.
pub fn kinds<'c, 'a>(colls: &'c [Coll<'a>]) -> Vec<(&'c str, Vec<&'c Coll<'a>>)> {
    let mut out: Vec<(&str, Vec<&Coll>)> = Vec::new();
    for c in colls {
        match out.iter_mut().find(|(f, _)| *f == c.func) {
            Some((_, v)) => v.push(c),
            None => out.push((c.func.as_str(), vec![c])),
        }
    }
    out
}

/// Checks a decision table against the library's protocols: every rule names a kind the
/// library holds several protocols of and one of them.
pub fn check_table(colls: &[Coll], t: &table::Table) -> Result<(), LibError> {
    let ks = kinds(colls);
    for r in &t.rules {
        let Some((_, ms)) = ks.iter().find(|(f, ms)| *f == r.kind && ms.len() > 1) else {
            return Err(LibError::Usage(format!(
                "decision table: the library holds no choice of {} protocols (rule `{} {} {} {}`)",
                r.kind, r.kind, r.p, r.count, r.protocol
            )));
        };
        if !ms.iter().any(|c| c.p().name == r.protocol) {
            return Err(LibError::Usage(format!(
                "decision table: `{}` is not one of the library's {} protocols ({})",
                r.protocol,
                r.kind,
                ms.iter()
                    .map(|c| c.p().name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// The library's files (sources, header, packaging), not yet written.
pub fn generate(members: &[Member], name: &str, target: LibTarget) -> Result<Vec<File>, LibError> {
    generate_with(members, name, target, &table::Table::default())
}

/// [`generate`] with the decision table of the kinds it holds several protocols of.
pub fn generate_with(
    members: &[Member],
    name: &str,
    target: LibTarget,
    table: &table::Table,
) -> Result<Vec<File>, LibError> {
    let colls = collectives(members, name)?;
    check_table(&colls, table)?;
    if target == LibTarget::Host {
        host_several(&colls)?;
    }
    let mut files = vec![File {
        path: format!("{name}.h"),
        text: header::header(name, target, &colls),
    }];
    type Unit = fn(&Coll) -> Result<String, Vec<Diagnostic>>;
    let (unit, glue, runtime): (Unit, String, Vec<(&str, &str)>) = match target {
        LibTarget::Host => (
            host::unit,
            host::glue(name, &colls, table),
            crate::host::compile::RUNTIME_FILES
                .iter()
                .filter(|(p, _)| p.ends_with(".hpp"))
                .chain(std::iter::once(&HOST_LIB_RUNTIME))
                .copied()
                .collect(),
        ),
        LibTarget::Mpi => (
            mpi::unit,
            mpi::glue(name, &colls, table),
            crate::mpi::build::RUNTIME_FILES
                .iter()
                .filter(|(p, _)| !p.contains("main"))
                .chain(std::iter::once(&MPI_LIB_RUNTIME))
                .copied()
                .collect(),
        ),
    };
    for c in &colls {
        let text = unit(c).map_err(|diagnostics| LibError::Refused {
            member: c.index,
            diagnostics,
        })?;
        files.push(File {
            path: format!("src/coll_{}.cpp", c.index),
            text,
        });
    }
    files.push(File {
        path: format!("src/{name}.cpp"),
        text: glue,
    });
    for (path, text) in runtime {
        files.push(File {
            path: format!("src/{path}"),
            text: text.to_string(),
        });
    }
    files.extend(package::files(name, target, &colls, table));
    Ok(files)
}

/// Instances of each `per call` window and value signal a library holds, used in rotation
/// (a collective's call `c` on a rank uses instance `c % ROTATION`). A protocol with `per
/// call` buffers is packaged only if it verifies as
/// `protocol.with_per_call_rotation(ROTATION)` (the caller's gate, like the plain one).
pub const ROTATION: u32 = 2;

/// Whether a protocol has `per call` buffers (so a library must rotate them).
pub fn has_per_call_buffers(p: &Protocol) -> bool {
    Id::range(p.windows.len()).any(|w| p.window_per_call(w))
        || Id::range(p.signals.len()).any(|s| p.signal_per_call(s))
}

/// The host library runtime, embedded.
pub const HOST_LIB_RUNTIME: (&str, &str) = (
    "collc/host_lib.hpp",
    include_str!("../../runtime/collc/host_lib.hpp"),
);

/// The MPI library runtime, embedded.
pub const MPI_LIB_RUNTIME: (&str, &str) = (
    "collc_mpi_lib.hpp",
    include_str!("../../runtime/mpi/collc_mpi_lib.hpp"),
);

/// What [`install`] produced.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The output folder (absolute).
    pub dir: PathBuf,
    /// The shared library.
    pub library: PathBuf,
    /// The compile command.
    pub command: String,
    /// Every file written (relative paths).
    pub files: Vec<String>,
}

/// Generates, writes into `dir` (created if missing) and builds `libNAME.so`.
pub fn install(
    members: &[Member],
    name: &str,
    target: LibTarget,
    dir: &Path,
) -> Result<Installed, LibError> {
    install_with(members, name, target, &table::Table::default(), dir)
}

/// [`install`] with the decision table of the kinds it holds several protocols of (written
/// into the folder as `NAME.tune` too).
pub fn install_with(
    members: &[Member],
    name: &str,
    target: LibTarget,
    table: &table::Table,
    dir: &Path,
) -> Result<Installed, LibError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| LibError::Io(format!("cannot create `{}`: {e}", dir.display())))?;
    let dir = dir
        .canonicalize()
        .map_err(|e| LibError::Io(format!("`{}`: {e}", dir.display())))?;
    let files = generate_with(members, name, target, table)?;
    let mut written = Vec::new();
    for f in &files {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| LibError::Io(format!("cannot create `{}`: {e}", parent.display())))?;
        }
        std::fs::write(&path, &f.text)
            .map_err(|e| LibError::Io(format!("cannot write `{}`: {e}", path.display())))?;
        written.push(f.path.clone());
    }
    let sources: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.path.starts_with("src/") && f.path.ends_with(".cpp"))
        .map(|f| dir.join(&f.path))
        .collect();
    let library = dir.join(format!("lib{name}.so"));
    let compiler = match target {
        LibTarget::Host => {
            crate::host::compile::find_compiler()
                .map_err(|e| LibError::Build(e.to_string()))?
                .path
        }
        LibTarget::Mpi => crate::mpi::build::find_toolchain()
            .map_err(|e| LibError::Build(e.to_string()))?
            .mpicxx
            .to_string_lossy()
            .into_owned(),
    };
    let mut args: Vec<String> = BUILD_FLAGS.iter().map(|s| s.to_string()).collect();
    args.push(format!("-I{}", dir.join("src").display()));
    args.push(format!("-I{}", dir.display()));
    args.extend(sources.iter().map(|s| s.to_string_lossy().into_owned()));
    args.push("-o".into());
    args.push(library.to_string_lossy().into_owned());
    let command = compile(&compiler, &args)?;
    Ok(Installed {
        dir,
        library,
        command,
        files: written,
    })
}

/// Runs `compiler args`; the command line, or the build error with its output.
pub fn compile(compiler: &str, args: &[String]) -> Result<String, LibError> {
    let command = format!("{compiler} {}", args.join(" "));
    let out = Command::new(compiler)
        .args(args)
        .output()
        .map_err(|e| LibError::Build(format!("cannot run `{compiler}`: {e}")))?;
    if !out.status.success() {
        return Err(LibError::Build(format!(
            "{command}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(command)
}

/// Flags of the library build: optimised, warnings as errors, position independent, only
/// the API exported.
pub const BUILD_FLAGS: &[&str] = &[
    "-std=c++17",
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pthread",
    "-shared",
    "-fPIC",
    "-fvisibility=hidden",
];
