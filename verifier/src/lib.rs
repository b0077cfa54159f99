//! `collc-verifier`: Z3-backed proofs of the obligations of a protocol's signals
//! (credit balance, op exclusivity, wait reachability, stale credits, garbage
//! credits, guard symmetry), the reviewer's credit table (`explain`) and the cost
//! model (`cost`). The method and what "proved" means are in `verifier/README.md`.

pub mod bounded;
pub mod check;
pub mod exec;
pub mod fence;
pub mod poly;
pub mod report;
pub mod smt;
pub mod sym;
pub mod table;

pub use check::{verify, Options};
pub use report::{Finding, ObligationResult, Report, Status};
