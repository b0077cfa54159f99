//! `buffer-reuse` (README, "Buffer reuse across calls"): the double scratch buffers indexed
//! by `call % 2` are proved with P and the call index symbolic, the bug fixtures (one
//! scratch buffer, a parity mismatch between writer and reader, a reader that lags two
//! calls behind a root that never waits) are violated with a certain schedule, a protocol
//! ordered only through a chain around the ring is undecided (never proved), and one-token
//! mutants of the examples that break the ordering are never proved.

use collc_verifier::report::ObligationResult;
use collc_verifier::{Options, Status};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).expect("fixture")
}

fn protocol(text: &str) -> collc_spec::Validated {
    collc_spec::front(&collc_verifier::Ranges, text)
        .protocol
        .expect("the case validates")
}

fn obligation(text: &str) -> Option<ObligationResult> {
    let r = collc_verifier::verify(&protocol(text), &Options::symbolic_only());
    r.get(collc_verifier::reuse::ID).cloned()
}

fn line_of(text: &str, span_start: usize) -> usize {
    text[..span_start].lines().count().max(1)
}

#[test]
fn double_scratch_buffers_are_proved_for_every_call_and_p() {
    for (file, window, distance, hi) in [
        ("examples/epoch_allreduce.coll", "scratch", 2, 65536),
        (
            "verifier/tests/disciplines/allpairs_self_clearing.coll",
            "scratch",
            2,
            16,
        ),
        (
            "verifier/tests/reuse/epoch_broadcast_acked.coll",
            "scratch",
            1,
            16,
        ),
    ] {
        let o = obligation(&read(file)).expect("a protocol that reads the call index");
        assert_eq!(o.status, Status::Proved, "{file}: {o:?}");
        assert!(
            o.summary().contains("P symbolic"),
            "{file}: {}",
            o.summary()
        );
        assert!(
            o.scope_text()
                .as_deref()
                .is_some_and(|s| s.contains("every call index")),
            "{file}: {:?}",
            o.scope
        );
        let want = format!("`{window}`: reused every {distance} call(s)");
        assert!(o.summary().contains(&want), "{file}: {}", o.summary());
        assert_eq!(o.world.map(|w| (w.lo, w.hi)), Some((1, hi)), "{file}");
    }
}

#[test]
fn bug_fixtures_are_violated_at_the_annotated_read() {
    for (file, distance) in [
        ("examples/bugs/epoch_allreduce_single_scratch.coll", 1),
        ("examples/bugs/epoch_allreduce_parity_mismatch.coll", 1),
        ("examples/bugs/epoch_broadcast_lagging_reader.coll", 2),
    ] {
        let text = read(file);
        let o = obligation(&text).expect("a protocol that reads the call index");
        assert_eq!(o.status, Status::Violated, "{file}: {o:?}");
        let f = &o.findings[0];
        let line = line_of(&text, f.primary.expect("primary").start + 1);
        let annotated = text
            .lines()
            .nth(line - 1)
            .is_some_and(|l| l.contains("expect: verify::buffer-reuse"));
        assert!(annotated, "{file}: line {line}: {}", f.message);
        assert!(
            f.notes
                .iter()
                .any(|n| n.contains(&format!("reuse distance {distance}"))),
            "{file}: {:?}",
            f.notes
        );
        assert!(!f.params.is_empty(), "{file}");
        assert!(f.params[0].value >= 2, "{file}: {:?}", f.params);
    }
}

#[test]
fn a_chain_around_the_ring_is_undecided_not_proved() {
    let o = obligation(&read("verifier/tests/reuse/epoch_ring_shift.coll")).expect("obligation");
    assert_eq!(o.status, Status::Unknown, "{o:?}");
    assert!(
        o.reason
            .as_deref()
            .is_some_and(|r| r.contains("a chain through other ranks") && r.contains("P = 3")),
        "{:?}",
        o.reason
    );
}

#[test]
fn protocols_without_the_call_index_have_no_such_obligation() {
    for file in [
        "examples/allreduce_ring.coll",
        "examples/broadcast_read_complete.coll",
    ] {
        assert!(obligation(&read(file)).is_none(), "{file}");
    }
    // sense_reversing_barrier reads the call index but has no window.
    assert!(obligation(&read("examples/sense_reversing_barrier.coll")).is_none());
}

#[test]
fn mutants_that_break_the_ordering_are_never_proved() {
    let good = read("examples/epoch_allreduce.coll");
    let mutants = [
        // One part: the reuse distance becomes 1.
        ("let half = call % 2;", "let half = call % 1;"),
        // The reader takes the other half.
        (
            "reduce sum data[0 .. n] <- scratch[half][p][0 .. n];",
            "reduce sum data[0 .. n] <- scratch[(call + 1) % 2][p][0 .. n];",
        ),
        // The waits pass on the previous call's credits.
        ("wait ready[p] >= call + 1;", "wait ready[p] >= call;"),
    ];
    for (from, to) in mutants {
        assert!(good.contains(from), "{from}");
        let m = good.replace(from, to);
        let o = obligation(&m).expect("obligation");
        assert_ne!(o.status, Status::Proved, "{to}: {}", o.summary());
    }
    // The fixed lagging reader (an acknowledgement per call) loses its proof without the
    // root's wait.
    let acked = read("verifier/tests/reuse/epoch_broadcast_acked.coll");
    let from =
        "            for p in peers {\n                wait done[p] >= call + 1;\n            }\n";
    assert!(acked.contains(from));
    let o = obligation(&acked.replace(from, "")).expect("obligation");
    assert_eq!(o.status, Status::Violated, "{o:?}");
}

/// A per-call credit that depends on a parameter (issue class a): the chunk pipeline sends
/// `T = ceil(n / CH)` acknowledgements per call on a monotonic cell, and the root's wait
/// `ack[q] >= T * (call + 1)` needs every one of them, so the next call's puts into `stage`
/// follow the peers' copies of this call: proved with P and the call index symbolic. The
/// wait for one chunk less (`T * call + T - 1`) does not need the last chunk's credit: not
/// proved.
#[test]
fn a_wait_for_every_credit_of_its_call_orders_a_parametric_pipeline() {
    let good = read("examples/idioms/epoch_chunk_pipeline.coll");
    let o = obligation(&good).expect("a protocol that reads the call index");
    assert_eq!(o.status, Status::Proved, "{o:?}");
    assert!(o.summary().contains("P symbolic"), "{}", o.summary());
    let from = "wait ack[q] >= T * (call + 1);";
    assert!(good.contains(from));
    let short = good.replace(from, "wait ack[q] >= T * call + T - 1;");
    let o = obligation(&short).expect("obligation");
    assert_ne!(o.status, Status::Proved, "{}", o.summary());
}
