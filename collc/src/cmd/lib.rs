//! `collc emit --target host|mpi --lib NAME FILE [MORE...] -o DIR`: package verified
//! protocols as a library (`collc_backend::library`): `libNAME.so`, `NAME.h`, `NAME.pc`,
//! `NAMEConfig.cmake`, `README.md`, the example program and the sources, in `DIR`.
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
    let Some(name) = &args.lib else {
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
    let mut loaded: Vec<Loaded> = Vec::new();
    let mut gates = Vec::new();
    let action = match target {
        LibTarget::Host => Action::Emit,
        LibTarget::Mpi => Action::GenerateMpi,
    };
    for file in std::iter::once(&args.file).chain(args.more.iter()) {
        let l = match load_or_report(file, style, out) {
            Ok(l) => l,
            Err(code) => return code,
        };
        out.diagnostics(&l.source, &l.warnings, style);
        let gate = match super::gate::check(&l, &args.gate, action, style, out) {
            Ok(g) => g,
            Err(code) => return code,
        };
        gates.push(gate);
        loaded.push(l);
    }
    let members: Vec<Member> = loaded
        .iter()
        .zip(&gates)
        .map(|(l, g)| Member {
            protocol: &l.protocol,
            source: Some(&l.source),
            warning: g.stamp.clone(),
            world_limit: Some(g.world_limit),
        })
        .collect();
    match library::install(&members, name, target, Path::new(dir)) {
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
        Err(LibError::Refused {
            member,
            diagnostics,
        }) => {
            if let Some(l) = loaded.get(member) {
                out.diagnostics(&l.source, &diagnostics, style);
            }
            exit::INPUT
        }
        Err(e) => {
            out.err(format!("error: {e}"));
            exit::USAGE
        }
    }
}
