//! Runs a pypto-ABI kernel (`collc emit --target ascend --abi pypto`, [`crate::cpp::pypto`])
//! on CPU threads: the same source, wrapped by [`crate::cpp::pypto::cpu_shim`] (which builds
//! pypto's args block — `ChipTensor`s with `buffer.addr` + `start_offset`, nranks, the
//! `CommContext*` — from the collc launcher's), compiled, run for K back-to-back calls and
//! checked exactly like [`super::run`]: outputs against the collective's semantics, every
//! credit cell back at zero.

use super::{execute, prepare_with, RunConfig, RunError, RunReport};
use crate::cpp::{pypto, EmitOptions};
use collc_grammar::Source;
use collc_spec::ir::Semantics;

/// Emits the pypto-ABI kernel, wraps it in the CPU shim, runs and checks it.
pub fn run(
    p: &collc_spec::Validated,
    source: Option<&Source>,
    cfg: &RunConfig,
) -> Result<RunReport, RunError> {
    let kernel = pypto::emit(
        p,
        &EmitOptions {
            source,
            warning: Vec::new(),
            world_limit: cfg.world_limit,
        },
    )
    .map_err(RunError::Emit)?;
    let prep = prepare_with(p, cfg, &|b| {
        let root = match p.semantics {
            Semantics::Broadcast { root, .. } => b.env.get(root),
            _ => None,
        };
        pypto::cpu_shim(p, &kernel, root).map_err(RunError::Emit)
    })?;
    execute(p, &prep, cfg)
}
