//! The operational semantics of the collc protocol IR, a simulator and a
//! bounded model checker. See `sim/README.md` for the model.

pub mod bounded;
pub mod code;
pub mod explore;
pub mod fingerprint;
pub mod machine;
pub mod por;
pub mod report;
pub mod svg;
pub mod value;
pub mod visited;

pub use explore::{simulate, Budget, Schedule, SimConfig, SimError, StopFlag};
pub use machine::Memory;
pub use report::{EvKind, Event, Finding, SimReport, Stats, Verdict};
