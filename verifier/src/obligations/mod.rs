//! The obligations: each module decides obligations of a protocol and returns them as
//! report entries with their evidence (`crate::report::evidence`), asking the engine for
//! queries and the planner for sizes and budgets.
//!
//! - `check`: the enumerated route of the six credit obligations and `value-signal`, one
//!   module each with one entry (`credit_balance`, `op_exclusivity`, `wait_reachable`,
//!   `stale_credit`, `garbage_credit`, `guard_symmetry`, `value_signal`) on the facts of a
//!   configuration computed once (`context`, `classes`), with `multi` (the many-writer
//!   reset rule), `order` (cross-call order), `window` (credit windows), `take_back` (a
//!   waiter's own take-backs) and `epoch` (monotonic signals, `overflow-horizon`);
//! - `param_report`, `param_scope`: the P-symbolic route's results folded into them;
//! - `past`: the enumerated checks at the critical sizes past the enumeration;
//! - `fence`, `reuse` (`buffer-reuse`), `range_obligation`
//!   (`index-range`);
//! - `bounded`: the simulator's bounded obligations (`deadlock`, `stale-pass`,
//!   `data-race`, `semantics`, `lifetimes`).

pub mod bounded;
pub mod check;
pub(crate) mod classes;
pub(crate) mod context;
pub(crate) mod credit_balance;
pub mod epoch;
pub mod fence;
pub(crate) mod garbage_credit;
pub(crate) mod guard_symmetry;
pub(crate) mod multi;
pub(crate) mod op_exclusivity;
pub(crate) mod order;
pub mod param_report;
pub mod param_scope;
pub(crate) mod past;
pub mod range_obligation;
pub mod reuse;
pub(crate) mod stale_credit;
pub(crate) mod take_back;
pub mod value_signal;
pub(crate) mod wait_reachable;
pub(crate) mod window;
