//! Traced runs (`collc run --trace`) and their conformance to the IR.
//!
//! A traced run records, per thread (host: a (rank, block) thread; MPI: a rank process,
//! which runs its blocks one after another), every notify (with the cell's value before the
//! atomic and a per-owner sequence number), every passed wait (the value that let it pass and
//! the sequence number of the last notify it saw), every `.coll` `fence`, and every window
//! access of a data statement (`get` = read, `put` = write, with owner, offset and length),
//! tagged with the call in progress ([`format`] reads the text the runtimes write).
//!
//! [`check`] then decides whether the recording is one the IR allows:
//!
//! 1. **Per thread, the exact event sequence.** [`expect`] runs the IR's control flow for
//!    that rank, block and call (concrete parameters, host arrays as the oracle stages them)
//!    and lists the events its statements prescribe; the trace must equal it event by event:
//!    kind, call, target rank, signal/window and index, op and value, comparison and
//!    threshold, offset and length. A notify the IR does not prescribe (no credit outside the
//!    IR) is an extra event; one it prescribes and the run did not perform is a missing one.
//! 2. **The interleaving is a schedule of the operational semantics.** The sequence numbers
//!    order, per window owner, every notify, and place every passed wait between two of them;
//!    together with each thread's program order they must be acyclic (so a global order of
//!    all events exists), and replaying the IR's notify values in that order, every wait must
//!    see exactly the value it recorded, that value must satisfy its comparison, and every
//!    notify must find the value it recorded before its atomic. Sequence numbers of an owner
//!    must be exactly 1..=N (no unrecorded write to a cell).
//!
//! Not checked: data values (the oracle checks outputs), the orderings the backend inserts
//! (only the `.coll` `fence` is traced, at its place in program order), and data races
//! between window accesses (TSan and the simulator's relaxed mode cover those).

pub mod check;
pub mod expect;
pub mod format;

pub use check::{check, Conformance, Finding};
pub use expect::{expected, Expected, StmtAt};
pub use format::{parse, parse_with, Event, EventKind, Place, ThreadTrace, Trace, TraceError};
