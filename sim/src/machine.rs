//! The operational semantics: one state of the whole system (every process's
//! continuation, every cell with its credit provenance, every window with its
//! data provenance and access history), the actions enabled in it, and what
//! each action does. Both the simulator's schedulers and the bounded model
//! checker drive this one machine.
//!
//! See the crate documentation for the model; the comments here say how it is
//! implemented. This module holds the [`Machine`] itself; its submodules split
//! the machine by concern: `state` (the state types, re-exported here), `setup`
//! (construction, instances, the initial state), `schedule` (enabled actions,
//! steps, terminal states, local instructions), `signal` (notifies and waits),
//! `credit` (a counter's credit units, accounted by count),
//! `data` (regions and window accesses), `host` (staging, call ends, the
//! output check), `lifetime` (declared lifetimes as findings), `footprint` (for
//! the partial-order reduction), `describe` (names and trace events),
//! `canon` (canonicalisation) and `stepmemo` (the exhaustive search's memo of steps).

mod canon;
mod clocks;
mod credit;
mod data;
mod describe;
mod footprint;
mod host;
mod lifetime;
mod pack;
mod schedule;
mod setup;
mod signal;
mod state;
mod stepmemo;
mod wrap;

pub use clocks::{ClockId, Clocks};
pub use footprint::{DataAcc, DryOp, Footprint, OpKind};
pub use pack::Pack;
pub use state::{
    recycle, Acc, AccRec, Action, Cell, Clock, Limits, Memory, Numbers, OldCell, Origin, Outcome,
    Part, Pending, Proc, Procs, Recycle, Shared, State, Status, Unit, WinMem, CONSUME, STAGE,
};
pub use stepmemo::StepMemo;
pub use wrap::WrapStart;

use crate::code::Code;
use collc_spec::ir::Protocol;

/// The machine: a compiled protocol, its run configuration and its static data.
pub struct Machine<'a> {
    /// The protocol.
    pub p: &'a Protocol,
    /// Its compiled form.
    pub code: Code,
    /// Back-to-back calls.
    pub calls: usize,
    /// Memory model.
    pub memory: Memory,
    /// Loop limits.
    pub limits: Limits,
    /// Sticky polling (relaxed only): a blocked wait's poll may cache the failing value and
    /// keep re-reading it, since the process cannot invalidate the line while blocked.
    pub sticky_poll: bool,
    /// The call index of the first simulated call (0: the calls start from scratch).
    pub first_call: i64,
    /// The wrap-around mode's start (see `wrap`): each monotonic cell's value before the
    /// first simulated call, and the reused value cells' contents then. `None`: calls
    /// start from scratch (every cell 0).
    wrap: Option<wrap::Wrap>,
    /// Host arrays: `arrays[call][rank][array]`, flattened.
    arrays: Vec<Vec<Vec<Vec<i64>>>>,
    nwin: usize,
    /// Instances of each window per rank: the calls if some window is `per call`, else 1
    /// (a `reused` window always uses instance 0).
    win_inst: usize,
    /// Instances of the signal buffer: the calls if some value signal is `per call`, else 1
    /// (credit and `reused` signals always use instance 0).
    cell_inst: usize,
    /// Each rank's outputs of each call by the collective's meaning, computed at the
    /// first host step that needs them (they depend on the rank and call only).
    meanings: host::Meanings,
    /// The credit units' vector clocks, each kept once (`clocks.rs`).
    clocks: std::cell::RefCell<Clocks>,
    /// Each monotonic cell's credits per call, from a dry run of one call, computed when a
    /// wait first needs it (`signal.rs`, lagged thresholds); `None` while it is computed.
    mono_credit: std::cell::RefCell<Option<std::rc::Rc<Vec<i64>>>>,
    mono_busy: std::cell::Cell<bool>,
}

fn fmt_call(c: u16) -> usize {
    c as usize + 1
}
