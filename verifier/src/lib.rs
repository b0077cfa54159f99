//! `collc-verifier`: Z3-backed proofs of the obligations of a protocol's signals
//! (credit balance, op exclusivity, wait reachability, stale credits with the many-writer
//! reset rule, garbage credits, guard symmetry, value signals), the simulator's bounded
//! obligations, the reviewer's credit table (`explain`) and the cost model (`cost`). The
//! method and what "proved" means are in `verifier/README.md`.
//!
//! One entry point, [`verify`] (protocol + [`Options`] → complete [`Report`]), and one
//! gate policy, [`gate()`] (report + `--allow-unverified` → may a kernel be produced, and
//! what is stamped into it).

// The layers, bottom first (ARCHITECTURE.md, "Verifier layers"; `tests/layers.rs` checks
// that no import runs up): the planner, the verdict's data, the engine, the obligations;
// then the verbs of this file's modules.
mod engine;
mod obligations;
pub mod planning;
pub mod report;

pub mod entry;
pub mod fix;
pub mod opt;
pub mod table;
mod validate;

// The layers' public surface: what the CLI, the language server, the benches and the
// tests use.
pub use engine::{cost, param, smt};
pub use obligations::{bounded, check, fence, range_obligation, reuse, value_signal};
pub use report::{cause, evidence};

pub use entry::{verify, Options};
pub use report::gate::{self, gate, Decision, Gate, Verdict};
pub use report::{Finding, ObligationResult, Report, Status, WorldRange};
pub use validate::Ranges;
