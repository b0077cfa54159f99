//! `collc emit --target host|mpi --lib NAME FILE [MORE...] -o DIR`: package verified
//! protocols as a library (`collc_backend::library`): `libNAME.so`, `NAME.h`, `NAME.pc`,
//! `NAMEConfig.cmake`, `README.md`, the example program and the sources, in `DIR`.
//!
//! Several protocols of one kind (`--target mpi`): one chosen per call by the count and P,
//! from the decision table `--table FILE` (`collc tune` measures it).
//!
//! Every file passes the verifier gate first (`cmd::gate`, as every generator does);
//! `--allow-unverified` is stamped into the header and README of what it lets through.

use super::emit::{EmitArgs, TargetArg};
use crate::driver::{load_or_report, Loaded};
use crate::output::{exit, Output};
use crate::render::gate::Action;
use crate::render::Style;
use collc_backend::library::{self, LibError, LibTarget, Member};
use std::path::Path;

/// Runs `collc emit ... --lib`.
pub fn emit(args: &EmitArgs, style: Style, out: &mut Output) -> i32 {
    if args.pmpi && (args.lib.is_some() || args.target != TargetArg::Mpi) {
        out.err("error: --pmpi builds libcollc_pmpi.so for --target mpi, without --lib");
        return exit::USAGE;
    }
    if args.pmpi && (args.elem.elem.is_some() || args.elem.op.is_some()) {
        out.err("error: --pmpi packages every element type and operator a protocol lists: drop --elem and --op");
        return exit::USAGE;
    }
    let name = if args.pmpi {
        Some("collc_pmpi".to_string())
    } else {
        args.lib.clone()
    };
    let Some(name) = &name else {
        out.err(
            "error: more than one FILE needs --lib NAME (a library packages several protocols)",
        );
        return exit::USAGE;
    };
    let target = match args.target {
        TargetArg::Host => LibTarget::Host,
        TargetArg::Mpi => LibTarget::Mpi,
        TargetArg::Ascend => {
            out.err("error: --lib packages --target host or --target mpi");
            return exit::USAGE;
        }
    };
    let Some(dir) = &args.output else {
        out.err("error: --lib needs the output folder: -o DIR");
        return exit::USAGE;
    };
    let action = match target {
        LibTarget::Host => Action::Emit,
        LibTarget::Mpi => Action::GenerateMpi,
    };
    let files: Vec<&String> = std::iter::once(&args.file)
        .chain(args.more.iter())
        .collect();
    let gated = match load_gated(&files, Some(&args.elem), &args.gate, action, style, out) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let members = members(&gated);
    let table = match table_arg(args.table.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    let installed = if args.pmpi {
        library::pmpi::install_pmpi(&members, Path::new(dir))
    } else {
        library::install_with(&members, name, target, &table, Path::new(dir))
    };
    match installed {
        Ok(inst) => {
            out.err(format!(
                "built {}: {}\nwrote {} in {} (pkg-config: PKG_CONFIG_PATH={}; CMake: find_package({name} CONFIG PATHS {}))",
                inst.library.display(),
                inst.command,
                inst.files.join(", "),
                inst.dir.display(),
                inst.dir.display(),
                inst.dir.display()
            ));
            exit::OK
        }
        Err(e) => render_lib_error(e, &gated, style, out),
    }
}

/// A library that could not be produced: a refused member's diagnostics against its source
/// (exit 1), else the error (exit 2).
pub fn render_lib_error(e: LibError, gated: &[Gated], style: Style, out: &mut Output) -> i32 {
    match e {
        LibError::Refused {
            member,
            diagnostics,
        } => {
            if let Some((l, _)) = gated.get(member) {
                out.diagnostics(&l.source, &diagnostics, style);
            }
            exit::INPUT
        }
        e => {
            out.err(format!("error: {e}"));
            exit::USAGE
        }
    }
}

/// A file loaded and through the gate: its gate (both gates' stamps and world limit) and the
/// protocol with its `per call` buffers rotated, if it has any.
pub type Gated = (
    Loaded,
    (collc_verifier::Gate, Option<collc_spec::Validated>),
);

/// Loads every file (at `--elem` / `--op` when given: the instance a library packages) and
/// runs the gate (and [`rotation_gate`]) on each; the exit code of the first that fails (its
/// diagnostics written).
pub fn load_gated(
    files: &[&String],
    elem: Option<&super::args::ElemArg>,
    args: &super::args::GateArgs,
    action: Action,
    style: Style,
    out: &mut Output,
) -> Result<Vec<Gated>, i32> {
    let mut gated = Vec::new();
    for file in files {
        let mut l = load_or_report(file, style, out)?;
        if let Err(e) = elem.map_or(Ok(()), |e| e.apply(&mut l.protocol)) {
            out.err(format!("error: {file}: {e}"));
            return Err(exit::USAGE);
        }
        out.diagnostics(&l.source, &l.warnings, style);
        let gate = super::gate::check(&l, args, action, style, out)?;
        let gate = rotation_gate(&l, args, gate, style, out)?;
        gated.push((l, gate));
    }
    Ok(gated)
}

/// The library members of gated files.
pub fn members(gated: &[Gated]) -> Vec<Member<'_>> {
    gated
        .iter()
        .map(|(l, (g, rotated))| Member {
            protocol: rotated.as_ref().unwrap_or(&l.protocol),
            source: Some(&l.source),
            warning: g.stamp.clone(),
            world_limit: Some(g.world_limit),
        })
        .collect()
}

/// A protocol with `per call` buffers is packaged with them rotated over
/// `library::ROTATION` instances: it passes the gate a second time as
/// `with_per_call_rotation(ROTATION)` (the verifier checks reuse at that distance), else it
/// is refused with `lib::per-call-reuse` naming what to change. Returns the gate (stamps and
/// world limit of both) and the rotated protocol to package, if any.
fn rotation_gate(
    l: &Loaded,
    args: &super::args::GateArgs,
    gate: collc_verifier::Gate,
    style: Style,
    out: &mut Output,
) -> Result<(collc_verifier::Gate, Option<collc_spec::Validated>), i32> {
    if !library::has_per_call_buffers(&l.protocol) {
        return Ok((gate, None));
    }
    let k = library::ROTATION;
    let rotated = l.protocol.with_per_call_rotation(k);
    let report = collc_verifier::verify(&rotated, &args.verify.options(&l.source));
    let g = collc_verifier::gate(&report, args.allow_unverified);
    if g.verdict != collc_verifier::Verdict::Safe {
        // The findings' replay commands simulate fresh `per call` buffers (what the file
        // says), which do not reproduce a reuse: left out.
        let blockers: Vec<String> = g
            .blockers
            .iter()
            .map(|b| {
                let t = b.text();
                match t.find(" (replay: ") {
                    Some(i) => t[..i].to_string(),
                    None => t,
                }
            })
            .collect();
        let d = library::api::per_call_reuse_refused(&l.protocol, k, &blockers);
        if !g.allowed() {
            out.diagnostics(&l.source, &[d], style);
            return Err(exit::INPUT);
        }
        let w = collc_grammar::Diagnostic {
            severity: collc_grammar::Severity::Warning,
            ..d
        };
        out.diagnostics(&l.source, &[w], style);
    }
    let mut merged = gate;
    merged.world_limit = merged.world_limit.min(g.world_limit);
    merged.stamp.extend(g.stamp);
    Ok((merged, Some(rotated)))
}

/// The decision table of `--table FILE` (empty without it).
pub fn table_arg(file: Option<&str>) -> Result<library::table::Table, String> {
    let Some(f) = file else {
        return Ok(library::table::Table::default());
    };
    std::fs::read_to_string(f)
        .map_err(|e| e.to_string())
        .and_then(|t| library::table::Table::parse(&t))
        .map_err(|e| format!("--table {f}: {e}"))
}
