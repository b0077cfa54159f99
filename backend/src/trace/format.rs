//! The trace file the runtimes write (`collc/host_launch.cpp` `write_trace`, the MPI
//! runtime's `collc_mpi::trace`), one text line each:
//!
//! ```text
//! collc-trace 1 TARGET P=.. C=.. K=..
//! thread RANK BLOCK N DROPPED        (then N event lines)
//! KIND CALL OWNER BUFFER INSTANCE INDEX LEN OP VALUE OBSERVED SEQ
//! ```
//!
//! KIND: 1 notify, 2 passed wait, 3 fence, 4 get (window read), 5 put (window write),
//! 6 a wait still blocked when the run aborted. OP: a notify's 0 AtomicAdd / 1 Set, a wait's
//! `WaitCmp` (EQ 0, NE 1, GT 2, GE 3, LT 4, LE 5). BUFFER: index in the args-block order
//! (`crate::layout::Abi`), or in the MPI runtime's files the buffer's declared name
//! (`NAME@callK`: call K's instance of a `per call` buffer; `-`: none). An MPI thread line
//! has block -1 (a rank runs its blocks in turn).

use collc_spec::ir::{CmpOp, NotifyOp};

/// Where an event's cell or data lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    /// Whose window.
    pub owner: i64,
    /// The buffer (args-block order).
    pub buffer: i64,
    /// The instance of a `per call` buffer (0 for a reused one).
    pub instance: i64,
    /// Element index inside the instance.
    pub index: i64,
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A notify: `op value`, the cell held `before` just before it; `seq` numbers it among
    /// the notifies on the owner's cells.
    Notify {
        /// Add or set.
        op: NotifyOp,
        /// The operand.
        value: i64,
        /// The cell before the atomic.
        before: i64,
        /// 1, 2, ... per owner.
        seq: u64,
    },
    /// A wait that passed with `seen`, after the owner's notify number `seq` (0: none).
    Wait {
        /// The comparison.
        cmp: CmpOp,
        /// The threshold.
        threshold: i64,
        /// The value that let it pass.
        seen: i64,
        /// The last notify on the owner's cells it saw.
        seq: u64,
    },
    /// A wait that never passed (the run was aborted while it was blocked).
    Blocked {
        /// The comparison.
        cmp: CmpOp,
        /// The threshold.
        threshold: i64,
        /// The value it last read.
        seen: i64,
    },
    /// The `.coll` `fence`.
    Fence,
    /// A window read of `len` elements.
    Get {
        /// Elements.
        len: i64,
    },
    /// A window write of `len` elements.
    Put {
        /// Elements.
        len: i64,
    },
}

/// One recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The call in progress (0-based).
    pub call: i64,
    /// What.
    pub kind: EventKind,
    /// Where (a fence: the executing rank, buffer -1).
    pub place: Place,
}

/// One thread's recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadTrace {
    /// The rank.
    pub rank: i64,
    /// The block (`None`: every block of the rank, in turn, as the MPI program runs them).
    pub block: Option<i64>,
    /// The events, in program order.
    pub events: Vec<Event>,
    /// Events that did not fit in the buffer (the trace is incomplete when > 0).
    pub dropped: u64,
}

/// A whole run's recording.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// Per thread.
    pub threads: Vec<ThreadTrace>,
}

/// A trace file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "trace line {}: {}", self.line, self.what)
    }
}

impl std::error::Error for TraceError {}

fn cmp_of(op: i64) -> Option<CmpOp> {
    Some(match op {
        0 => CmpOp::Eq,
        1 => CmpOp::Ne,
        2 => CmpOp::Gt,
        3 => CmpOp::Ge,
        4 => CmpOp::Lt,
        5 => CmpOp::Le,
        _ => return None,
    })
}

fn event(fields: &[i64]) -> Option<Event> {
    let &[kind, call, owner, buffer, instance, index, len, op, value, observed, seq] = fields
    else {
        return None;
    };
    let seq = u64::try_from(seq).ok()?;
    let kind = match kind {
        1 => EventKind::Notify {
            op: match op {
                0 => NotifyOp::AtomicAdd,
                1 => NotifyOp::Set,
                _ => return None,
            },
            value,
            before: observed,
            seq,
        },
        2 => EventKind::Wait {
            cmp: cmp_of(op)?,
            threshold: value,
            seen: observed,
            seq,
        },
        6 => EventKind::Blocked {
            cmp: cmp_of(op)?,
            threshold: value,
            seen: observed,
        },
        3 => EventKind::Fence,
        4 => EventKind::Get { len },
        5 => EventKind::Put { len },
        _ => return None,
    };
    Some(Event {
        call,
        kind,
        place: Place {
            owner,
            buffer,
            instance,
            index,
        },
    })
}

fn numbers(line: &str) -> Option<Vec<i64>> {
    line.split_ascii_whitespace()
        .map(|t| t.parse::<i64>().ok())
        .collect()
}

/// An event line whose BUFFER field may be a name (`-`: none; `NAME@callK`: instance K).
fn named_event(line: &str, resolve: &dyn Fn(&str) -> Option<i64>) -> Option<Event> {
    let mut toks: Vec<&str> = line.split_ascii_whitespace().collect();
    let mut instance = None;
    let buffer = match toks.get(3)? {
        t if t.parse::<i64>().is_ok() => None,
        &"-" => Some(-1),
        t => {
            let (name, inst) = match t.split_once("@call") {
                Some((n, k)) => (n, k.parse::<i64>().ok()?),
                None => (*t, 0),
            };
            instance = Some(inst);
            Some(resolve(name)?)
        }
    };
    let b = buffer.map(|b| b.to_string());
    if let Some(b) = &b {
        toks[3] = b;
    }
    let mut nums = toks
        .iter()
        .map(|t| t.parse::<i64>().ok())
        .collect::<Option<Vec<i64>>>()?;
    if let (Some(i), Some(slot)) = (instance, nums.get_mut(4)) {
        *slot = i;
    }
    event(&nums)
}

/// Reads one trace file (host: every thread; MPI: one rank's); several files' threads can
/// be concatenated into one [`Trace`].
pub fn parse(text: &str) -> Result<Trace, TraceError> {
    parse_with(text, &|_| None)
}

/// As [`parse`], for a file whose BUFFER fields name buffers (the MPI runtime's):
/// `resolve` maps a declared name to its args-block index.
pub fn parse_with(text: &str, resolve: &dyn Fn(&str) -> Option<i64>) -> Result<Trace, TraceError> {
    let err = |line: usize, what: &str| TraceError {
        line,
        what: what.to_string(),
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, h)) if h.starts_with("collc-trace 1 ") => {}
        _ => return Err(err(1, "not a collc trace (version 1)")),
    }
    let mut trace = Trace::default();
    while let Some((ln, l)) = lines.next() {
        let Some(rest) = l.strip_prefix("thread ") else {
            return Err(err(ln, "expected a `thread` line"));
        };
        let nums = numbers(rest).ok_or_else(|| err(ln, "malformed `thread` line"))?;
        let &[rank, block, n, dropped] = nums.as_slice() else {
            return Err(err(ln, "malformed `thread` line"));
        };
        let (Ok(n), Ok(dropped)) = (usize::try_from(n), u64::try_from(dropped)) else {
            return Err(err(ln, "negative event count"));
        };
        let mut events = Vec::with_capacity(n.min(1 << 20));
        for _ in 0..n {
            let (eln, el) = lines
                .next()
                .ok_or_else(|| err(ln, "the file ends inside this thread's events"))?;
            let e = named_event(el, resolve).ok_or_else(|| err(eln, "malformed event"))?;
            events.push(e);
        }
        trace.threads.push(ThreadTrace {
            rank,
            block: (block >= 0).then_some(block),
            events,
            dropped,
        });
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_mpi_files_read_alike() {
        let host = "collc-trace 1 host P=2 C=1 K=1\nthread 1 0 2 0\n1 0 0 0 0 1 0 0 1 0 1\n2 0 1 0 0 0 0 3 1 1 1\n";
        let mpi = "collc-trace 1 mpi rank=1\nthread 1 -1 2 0\n1 0 0 sig 0 1 0 0 1 0 1\n2 0 1 sig 0 0 0 3 1 1 1\n";
        let h = parse(host).expect("host trace");
        let m = parse_with(mpi, &|n| (n == "sig").then_some(0)).expect("mpi trace");
        assert_eq!(h.threads[0].events, m.threads[0].events);
        assert_eq!((h.threads[0].block, m.threads[0].block), (Some(0), None));
        assert_eq!(
            h.threads[0].events[1].kind,
            EventKind::Wait {
                cmp: CmpOp::Ge,
                threshold: 1,
                seen: 1,
                seq: 1
            }
        );
    }

    #[test]
    fn per_call_instances_and_bad_lines() {
        let t = "collc-trace 1 mpi rank=0\nthread 0 -1 1 0\n5 2 1 data@call2 0 7 16 0 0 0 0\n";
        let e = parse_with(t, &|n| (n == "data").then_some(3))
            .expect("trace")
            .threads[0]
            .events[0];
        assert_eq!((e.place.buffer, e.place.instance, e.place.index), (3, 2, 7));
        assert_eq!(e.kind, EventKind::Put { len: 16 });
        let bad = "collc-trace 1 host\nthread 0 0 2 0\n1 0 0 0 0 1 0 0 1 0 1\n";
        assert_eq!(parse(bad).expect_err("short").line, 2);
        let unknown = "collc-trace 1 mpi\nthread 0 -1 1 0\n1 0 0 nope 0 1 0 0 1 0 1\n";
        assert_eq!(parse_with(unknown, &|_| None).expect_err("name").line, 3);
        assert!(parse("not a trace").is_err());
    }
}
