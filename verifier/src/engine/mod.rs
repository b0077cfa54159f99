//! The engine: symbolic values and Z3 queries (`sym`, `smt`), the abstract explorer and
//! the enumeration of configurations (`exec`, `sweep`) and the reading of its events
//! (`events`), the P-symbolic route's solvers
//! (`param`), the index-range solver (`range`), and the pair-order search (`pair_order`).
//! It imports the planner and the report's data, never an obligation.

pub mod call;
pub mod cost;
pub mod events;
pub mod exec;
pub mod pair_order;
pub mod param;
pub mod range;
pub mod smt;
pub mod sweep;
pub mod sym;
