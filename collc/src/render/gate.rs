//! How the verifier gate's decision is printed: the verifier's diagnostics behind it,
//! then one line saying what was refused (or produced anyway) and why.

use super::Style;
use crate::output::Output;
use collc_grammar::Source;
use collc_verifier::{Decision, Gate};

/// What the gated command was about to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// `collc emit`.
    Emit,
    /// `collc emit --target mpi` / `collc run --target mpi`.
    GenerateMpi,
    /// `collc run --target host`.
    Run,
    /// `collc opt`.
    Opt,
}

impl Action {
    fn refuse(self) -> &'static str {
        match self {
            Action::Emit => "refusing to emit",
            Action::GenerateMpi => "refusing to generate (for MPI)",
            Action::Run => "refusing to run",
            Action::Opt => "refusing to write the transformed protocol of",
        }
    }
    fn anyway(self) -> &'static str {
        match self {
            Action::Emit => "emit anyway",
            Action::GenerateMpi => "generate it anyway",
            Action::Run => "run anyway",
            Action::Opt => "write it anyway",
        }
    }
    fn doing(self) -> &'static str {
        match self {
            Action::Emit => "emitting",
            Action::GenerateMpi => "generating",
            Action::Run => "running",
            Action::Opt => "writing",
        }
    }
}

fn why(g: &Gate) -> String {
    format!(
        "{} violation(s), {} undecided obligation(s)",
        g.violations(),
        g.undecided()
    )
}

/// Prints the gate's decision to stderr: nothing when the protocol is safe; otherwise the
/// verifier's diagnostics, every blocker, and the refusal or the `--allow-unverified` warning.
pub fn decision(g: &Gate, src: &Source, action: Action, style: Style, out: &mut Output) {
    if g.decision == Decision::Pass {
        return;
    }
    out.diagnostics(src, &g.diagnostics, style);
    let lines: Vec<String> = g
        .blockers
        .iter()
        .map(|b| format!("  {}", b.text()))
        .collect();
    match g.decision {
        Decision::Refuse => {
            out.err(format!(
                "error: {} `{}`: the verifier does not show it safe ({}):",
                action.refuse(),
                src.name,
                why(g)
            ));
            for l in &lines {
                out.err(l);
            }
            let fix = if g.undecided() > 0 {
                "fix the protocol or decide what is undecided (see each reason)"
            } else {
                "fix the protocol"
            };
            out.err(format!(
                "  {fix}, or pass --allow-unverified to {} (stamped into the output)",
                action.anyway()
            ));
        }
        _ => {
            out.err(format!(
                "warning: {} a protocol the verifier does not show safe ({}; --allow-unverified):",
                action.doing(),
                why(g)
            ));
            for l in &lines {
                out.err(l);
            }
        }
    }
}
