//! The conformance check of a trace against the IR (see the module documentation of
//! [`crate::trace`] for what is and is not checked).

use super::expect::{expected, Expected, Want};
use super::format::{Event, EventKind, Place, Trace};
use collc_spec::eval::{Bindings, EvalError};
use collc_spec::ir::{NotifyOp, Protocol};
use std::collections::{BTreeMap, HashMap};

/// A thread: its rank and block (`None`: every block of the rank in turn).
pub type Who = (i64, Option<i64>);

/// Something the trace shows that the IR does not allow (or that keeps it from being checked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The thread's buffer overflowed: `dropped` events were not recorded.
    Overflow {
        /// The thread.
        who: Who,
        /// Events recorded.
        recorded: usize,
        /// Events lost.
        dropped: u64,
    },
    /// Event `position` of the thread is not the one the IR prescribes there.
    Mismatch {
        /// The thread.
        who: Who,
        /// 0-based index in the thread's events.
        position: usize,
        /// What the IR prescribes.
        expected: Expected,
        /// What the run did.
        observed: Event,
    },
    /// The thread did more than the IR prescribes (e.g. a credit outside the IR).
    Extra {
        /// The thread.
        who: Who,
        /// 0-based index.
        position: usize,
        /// The event.
        observed: Event,
    },
    /// The run completed, but the thread did not perform this prescribed event.
    Missing {
        /// The thread.
        who: Who,
        /// 0-based index.
        position: usize,
        /// What the IR prescribes.
        expected: Expected,
    },
    /// The run was aborted while the thread was blocked in this (prescribed) wait; the events
    /// before it conform.
    Blocked {
        /// The thread.
        who: Who,
        /// 0-based index.
        position: usize,
        /// The wait.
        expected: Expected,
        /// What it last read.
        seen: i64,
    },
    /// The sequence numbers of notifies on `owner`'s cells are not exactly 1..=N: a write the
    /// trace does not hold (`seq` is the first number missing or repeated).
    Sequence {
        /// The window owner.
        owner: i64,
        /// The number.
        seq: u64,
    },
    /// No schedule of the operational semantics explains this event: replaying the IR's
    /// notifies in the recorded order, the cell held `replayed` here, but the run recorded
    /// `recorded` (a wait's value that let it pass, a notify's value before its atomic), or
    /// the value does not satisfy the wait.
    Value {
        /// The thread.
        who: Who,
        /// 0-based index.
        position: usize,
        /// The statement.
        expected: Expected,
        /// The event.
        observed: Event,
        /// The value the schedule gives.
        replayed: i64,
    },
    /// The recorded orders (program order, each owner's notify order, the waits between
    /// them) are cyclic: no interleaving has them all; this event is on the cycle.
    Cycle {
        /// The thread.
        who: Who,
        /// 0-based index.
        position: usize,
        /// The statement.
        expected: Expected,
    },
}

/// The result of a conformance check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conformance {
    /// Threads checked.
    pub threads: usize,
    /// Events checked against the IR.
    pub events: usize,
    /// Notifies and waits placed in the reconstructed schedule (0 when the per-thread check
    /// already failed).
    pub scheduled: usize,
    /// What does not conform (empty: the trace conforms).
    pub findings: Vec<Finding>,
}

impl Conformance {
    /// True if the trace conforms (a blocked wait, after a conforming prefix, is reported
    /// but is the run's failure, not the trace's).
    pub fn conforms(&self) -> bool {
        self.findings
            .iter()
            .all(|f| matches!(f, Finding::Blocked { .. }))
    }
}

fn matches(e: &Expected, o: &Event) -> bool {
    if e.call != o.call || e.place != o.place {
        return false;
    }
    match (e.want, o.kind) {
        (
            Want::Notify { op, value },
            EventKind::Notify {
                op: o2, value: v2, ..
            },
        ) => op == o2 && value == v2,
        (
            Want::Wait { cmp, threshold },
            EventKind::Wait {
                cmp: c2,
                threshold: t2,
                ..
            },
        ) => cmp == c2 && threshold == t2,
        (Want::Fence, EventKind::Fence) => true,
        (Want::Get { len }, EventKind::Get { len: l2 }) => len == l2,
        (Want::Put { len }, EventKind::Put { len: l2 }) => len == l2,
        _ => false,
    }
}

/// One thread's events matched against the IR; returns how many conform.
fn match_thread(
    who: Who,
    want: &[Expected],
    got: &[Event],
    completed: bool,
    findings: &mut Vec<Finding>,
) -> usize {
    for i in 0..want.len().max(got.len()) {
        match (want.get(i), got.get(i)) {
            (Some(e), Some(o)) if matches(e, o) => {}
            (Some(e), Some(o)) => {
                match (e.want, o.kind) {
                    (
                        Want::Wait { cmp, threshold },
                        EventKind::Blocked {
                            cmp: c2,
                            threshold: t2,
                            seen,
                        },
                    ) if cmp == c2 && threshold == t2 && e.place == o.place && e.call == o.call => {
                        findings.push(Finding::Blocked {
                            who,
                            position: i,
                            expected: *e,
                            seen,
                        })
                    }
                    _ => findings.push(Finding::Mismatch {
                        who,
                        position: i,
                        expected: *e,
                        observed: *o,
                    }),
                }
                return i;
            }
            (None, Some(o)) => {
                findings.push(Finding::Extra {
                    who,
                    position: i,
                    observed: *o,
                });
                return i;
            }
            (Some(e), None) => {
                if completed {
                    findings.push(Finding::Missing {
                        who,
                        position: i,
                        expected: *e,
                    });
                }
                return i;
            }
            (None, None) => {}
        }
    }
    want.len()
}

/// A node of the schedule: (thread, position).
type Node = (usize, usize);

fn apply(cell: i64, op: NotifyOp, value: i64) -> i64 {
    match op {
        NotifyOp::AtomicAdd => i64::from((cell as i32).wrapping_add(value as i32)),
        NotifyOp::Set => value,
    }
}

/// Checks `trace` against the IR under `b` for `calls` calls. `per_block`: the trace has one
/// thread per (rank, block) (host), else one per rank running its blocks in turn (MPI).
/// `completed`: the run finished every call (then a missing event is a finding).
pub fn check(
    p: &Protocol,
    b: &Bindings,
    calls: i64,
    trace: &Trace,
    per_block: bool,
    completed: bool,
) -> Result<Conformance, EvalError> {
    let mut findings = Vec::new();
    let mut whos: Vec<Who> = Vec::new();
    for r in 0..b.world {
        if per_block {
            whos.extend((0..b.blocks).map(|k| (r, Some(k))));
        } else {
            whos.push((r, None));
        }
    }
    let empty = Vec::new();
    let mut events = 0;
    // Per thread: (who, expected, recorded events, conforming prefix length).
    let mut threads: Vec<(Who, Vec<Expected>, &Vec<Event>, usize)> = Vec::new();
    for &who in &whos {
        let want = expected(p, b, who.0, who.1, calls)?;
        let t = trace
            .threads
            .iter()
            .find(|t| t.rank == who.0 && t.block == who.1);
        let got = t.map_or(&empty, |t| &t.events);
        let dropped = t.map_or(0, |t| t.dropped);
        if dropped > 0 {
            findings.push(Finding::Overflow {
                who,
                recorded: got.len(),
                dropped,
            });
        }
        let ok = match_thread(who, &want, got, completed && dropped == 0, &mut findings);
        events += ok;
        threads.push((who, want, got, ok));
    }
    for t in &trace.threads {
        if !whos.contains(&(t.rank, t.block)) {
            if let Some(o) = t.events.first() {
                findings.push(Finding::Extra {
                    who: (t.rank, t.block),
                    position: 0,
                    observed: *o,
                });
            }
        }
    }
    let mut scheduled = 0;
    if findings
        .iter()
        .all(|f| matches!(f, Finding::Blocked { .. }))
    {
        scheduled = schedule(&threads, &mut findings);
    }
    Ok(Conformance {
        threads: whos.len(),
        events,
        scheduled,
        findings,
    })
}

/// Per owner: its notifies by sequence number.
type Notifies = BTreeMap<i64, BTreeMap<u64, Node>>;
/// Per owner: its waits by the sequence number they saw.
type Waits = BTreeMap<i64, BTreeMap<u64, Vec<Node>>>;

/// A thread's (who, what the IR prescribes, what it recorded, how many events conform).
type Thread<'a> = (Who, Vec<Expected>, &'a Vec<Event>, usize);

/// Rebuilds the interleaving from the sequence numbers and checks it (part 2 of the check).
fn schedule(threads: &[Thread], findings: &mut Vec<Finding>) -> usize {
    let (notifies, waits, count) = index_events(threads, findings);
    // Edges: program order, then per owner n_s -> n_{s+1}, n_s -> w(s) -> n_{s+1}.
    let mut g = Graph::default();
    for (t, (_, _, _, ok)) in threads.iter().enumerate() {
        for i in 1..*ok {
            g.edge((t, i - 1), (t, i));
        }
    }
    let owners: Vec<i64> = notifies.keys().chain(waits.keys()).copied().collect();
    for owner in owners {
        let ns = notifies.get(&owner).cloned().unwrap_or_default();
        let n = ns.len() as u64;
        if let Some(gap) = (1..=n).find(|s| !ns.contains_key(s)) {
            findings.push(Finding::Sequence { owner, seq: gap });
            continue;
        }
        let ws = waits.get(&owner).cloned().unwrap_or_default();
        if let Some((&s, _)) = ws.range(n + 1..).next() {
            findings.push(Finding::Sequence { owner, seq: s });
            continue;
        }
        replay(threads, &ns, &ws, &mut g, findings);
    }
    if let Some(n) = g.cyclic() {
        let (who, position, expected, _) = at(threads, n);
        findings.push(Finding::Cycle {
            who,
            position,
            expected,
        });
    }
    count
}

/// Per owner: notifies by sequence number, waits by the number they saw; and how many
/// there are. A sequence number two notifies share is a finding.
fn index_events(threads: &[Thread], findings: &mut Vec<Finding>) -> (Notifies, Waits, usize) {
    let mut notifies = Notifies::new();
    let mut waits = Waits::new();
    let mut count = 0;
    for (t, (_, _, got, ok)) in threads.iter().enumerate() {
        for (i, e) in got[..*ok].iter().enumerate() {
            match e.kind {
                EventKind::Notify { seq, .. } => {
                    count += 1;
                    if notifies
                        .entry(e.place.owner)
                        .or_default()
                        .insert(seq, (t, i))
                        .is_some()
                    {
                        findings.push(Finding::Sequence {
                            owner: e.place.owner,
                            seq,
                        });
                    }
                }
                EventKind::Wait { seq, .. } => {
                    count += 1;
                    waits
                        .entry(e.place.owner)
                        .or_default()
                        .entry(seq)
                        .or_default()
                        .push((t, i));
                }
                _ => {}
            }
        }
    }
    (notifies, waits, count)
}

/// One event: its thread, its position, what the IR prescribes there and what was recorded.
fn at(threads: &[Thread], (t, i): Node) -> (Who, usize, Expected, Event) {
    (threads[t].0, i, threads[t].1[i], threads[t].2[i])
}

/// Replays one owner's notifies (`ns`, numbered 1..=n) in order, with the waits that saw
/// each number (`ws`): a wait that saw another value than the replay, or a notify that
/// found one, is a finding; the order between them becomes edges of `g`.
fn replay(
    threads: &[Thread],
    ns: &BTreeMap<u64, Node>,
    ws: &BTreeMap<u64, Vec<Node>>,
    g: &mut Graph,
    findings: &mut Vec<Finding>,
) {
    let n = ns.len() as u64;
    let mut cells: HashMap<Place, i64> = HashMap::new();
    for s in 0..=n {
        for &w in ws.get(&s).into_iter().flatten() {
            let (who, position, expected, observed) = at(threads, w);
            let replayed = *cells.get(&observed.place).unwrap_or(&0);
            if let (Want::Wait { cmp, threshold }, EventKind::Wait { seen, .. }) =
                (expected.want, observed.kind)
            {
                if seen != replayed || !cmp.holds(seen, threshold) {
                    findings.push(Finding::Value {
                        who,
                        position,
                        expected,
                        observed,
                        replayed,
                    });
                }
            }
            if s > 0 {
                g.edge(ns[&s], w);
            }
            if s < n {
                g.edge(w, ns[&(s + 1)]);
            }
        }
        if s < n {
            let node = ns[&(s + 1)];
            let (who, position, expected, observed) = at(threads, node);
            let cell = cells.entry(observed.place).or_insert(0);
            if let (Want::Notify { op, value }, EventKind::Notify { before, .. }) =
                (expected.want, observed.kind)
            {
                if before != *cell {
                    findings.push(Finding::Value {
                        who,
                        position,
                        expected,
                        observed,
                        replayed: *cell,
                    });
                }
                *cell = apply(*cell, op, value);
            }
            if s > 0 {
                g.edge(ns[&s], node);
            }
        }
    }
}

/// The order the recorded events must have: successors and in-degrees.
#[derive(Default)]
struct Graph {
    succ: HashMap<Node, Vec<Node>>,
    indeg: HashMap<Node, usize>,
}

impl Graph {
    fn edge(&mut self, a: Node, b: Node) {
        self.succ.entry(a).or_default().push(b);
        *self.indeg.entry(b).or_default() += 1;
        self.indeg.entry(a).or_default();
    }

    /// Kahn: every node must come out; else the smallest node left on a cycle (or
    /// after one).
    fn cyclic(mut self) -> Option<Node> {
        let mut ready: Vec<Node> = self
            .indeg
            .iter()
            .filter(|(_, &d)| d == 0)
            .map(|(&n, _)| n)
            .collect();
        let total = self.indeg.len();
        let mut done = 0;
        while let Some(n) = ready.pop() {
            done += 1;
            for &m in self.succ.get(&n).into_iter().flatten() {
                if let Some(d) = self.indeg.get_mut(&m) {
                    *d -= 1;
                    if *d == 0 {
                        ready.push(m);
                    }
                }
            }
        }
        if done < total {
            self.indeg
                .iter()
                .filter(|(_, &d)| d > 0)
                .min_by_key(|(&n, _)| n)
                .map(|(&n, _)| n)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    //! The check on hand-made traces of examples/barrier.coll at P=2, one call: rank r adds
    //! one credit to `sig[r]` on the other rank o, waits for `sig[o] >= 1`, resets it with
    //! `-= 1`, fences. Each test breaks one property of a conforming trace.
    use super::*;
    use crate::trace::format::ThreadTrace;
    use collc_spec::eval::bind;
    use collc_spec::ir::CmpOp;

    fn barrier() -> (Protocol, Bindings) {
        let text = include_str!("../../../examples/barrier.coll");
        let p = collc_spec::lowered(text).protocol.expect("barrier checks");
        let b = bind(&p, &[("P".to_string(), 2)].into_iter().collect()).expect("binds");
        (p, b)
    }

    fn at(owner: i64, index: i64) -> Place {
        Place {
            owner,
            buffer: 0,
            instance: 0,
            index,
        }
    }

    fn ev(kind: EventKind, place: Place) -> Event {
        Event {
            call: 0,
            kind,
            place,
        }
    }

    fn add(value: i64, before: i64, seq: u64) -> EventKind {
        EventKind::Notify {
            op: NotifyOp::AtomicAdd,
            value,
            before,
            seq,
        }
    }

    fn wait(seen: i64, seq: u64) -> EventKind {
        EventKind::Wait {
            cmp: CmpOp::Ge,
            threshold: 1,
            seen,
            seq,
        }
    }

    /// Rank r: +1 on the peer (its seq there), wait (seen, seq), reset (before, seq), fence.
    fn rank(r: i64, plus_seq: u64, w: (i64, u64), reset: (i64, u64)) -> ThreadTrace {
        let o = 1 - r;
        let fence = Place {
            owner: r,
            buffer: -1,
            instance: 0,
            index: 0,
        };
        ThreadTrace {
            rank: r,
            block: Some(0),
            events: vec![
                ev(add(1, 0, plus_seq), at(o, r)),
                ev(wait(w.0, w.1), at(r, o)),
                ev(add(-1, reset.0, reset.1), at(r, o)),
                ev(EventKind::Fence, fence),
            ],
            dropped: 0,
        }
    }

    fn good() -> Trace {
        Trace {
            threads: vec![rank(0, 1, (1, 1), (1, 2)), rank(1, 1, (1, 1), (1, 2))],
        }
    }

    fn run(t: &Trace) -> Conformance {
        let (p, b) = barrier();
        check(&p, &b, 1, t, true, true).expect("evaluates")
    }

    #[test]
    fn a_real_schedule_conforms() {
        let c = run(&good());
        assert!(c.conforms(), "{:?}", c.findings);
        assert_eq!((c.threads, c.events, c.scheduled), (2, 8, 6));
    }

    #[test]
    fn a_wait_that_passed_on_credits_not_yet_there_is_refused() {
        let mut t = good();
        // Rank 0's wait claims to have seen no notify on its cells, but passed with 1.
        t.threads[0].events[1] = ev(wait(1, 0), at(0, 1));
        let c = run(&t);
        assert!(
            c.findings.iter().any(|f| matches!(
                f,
                Finding::Value {
                    who: (0, Some(0)),
                    position: 1,
                    replayed: 0,
                    ..
                }
            )),
            "{:?}",
            c.findings
        );
    }

    #[test]
    fn orders_no_interleaving_has_are_refused() {
        let mut t = good();
        // On rank 0's cells: its own reset first (seq 1), then rank 1's credit (seq 2), and
        // its wait after both: but the wait precedes the reset in program order.
        t.threads[0].events[1] = ev(wait(1, 2), at(0, 1));
        t.threads[0].events[2] = ev(add(-1, 0, 1), at(0, 1));
        t.threads[1].events[0] = ev(add(1, -1, 2), at(0, 1));
        let c = run(&t);
        assert!(
            c.findings
                .iter()
                .any(|f| matches!(f, Finding::Cycle { .. })),
            "{:?}",
            c.findings
        );
    }

    #[test]
    fn a_write_missing_from_the_trace_is_refused() {
        let mut t = good();
        t.threads[1].events[2] = ev(add(-1, 1, 3), at(1, 0));
        let c = run(&t);
        assert!(
            c.findings.contains(&Finding::Sequence { owner: 1, seq: 2 }),
            "{:?}",
            c.findings
        );
    }

    #[test]
    fn a_notify_outside_the_ir_is_an_extra_event() {
        let mut t = good();
        t.threads[0].events.push(ev(add(1, 0, 3), at(1, 0)));
        let c = run(&t);
        assert!(
            matches!(
                c.findings.as_slice(),
                [Finding::Extra {
                    who: (0, Some(0)),
                    position: 4,
                    ..
                }]
            ),
            "{:?}",
            c.findings
        );
    }

    #[test]
    fn a_missing_event_of_a_completed_run_is_reported() {
        let mut t = good();
        t.threads[1].events.pop();
        let c = run(&t);
        assert!(
            matches!(c.findings.as_slice(), [Finding::Missing { who: (1, Some(0)), position: 3, expected }] if expected.want == Want::Fence),
            "{:?}",
            c.findings
        );
    }
}
