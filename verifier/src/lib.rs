//! `collc-verifier`: Z3-backed proofs of the obligations of a protocol's signals
//! (credit balance, op exclusivity, wait reachability, stale credits with the many-writer
//! reset rule, garbage credits, guard symmetry, value signals), the simulator's bounded
//! obligations, the reviewer's credit table (`explain`) and the cost model (`cost`). The
//! method and what "proved" means are in `verifier/README.md`.
//!
//! One entry point, [`verify`] (protocol + [`Options`] → complete [`Report`]), and one
//! gate policy, [`gate()`] (report + `--allow-unverified` → may a kernel be produced, and
//! what is stamped into it).

pub mod bounded;
pub mod cause;
pub mod check;
pub mod cost;
pub mod entry;
pub mod epoch;
pub mod evidence;
pub mod exec;
pub mod fence;
pub mod fix;
pub mod gate;
mod multi;
mod order;
pub mod pair_order;
pub mod param;
mod past;
pub mod planning;
pub mod range;
pub mod range_obligation;
pub mod report;
pub mod reuse;
pub mod smt;
pub mod sweep;
pub mod sym;
pub mod table;
pub mod validate;
pub mod value_signal;
mod window;

pub use entry::{verify, Options};
pub use gate::{gate, Decision, Gate, Verdict};
pub use report::{Finding, ObligationResult, Report, Status, WorldRange};
pub use validate::validate;
