//! The many-writer reset rule (part of `stale-credit`) and the `value-signal` obligation,
//! on small protocols: each rule's violation with its smallest P, and the correct variant
//! proved.

use collc_verifier::{Options, Report, Status};

fn verify(text: &str) -> Report {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    let p = c
        .protocol
        .unwrap_or_else(|| panic!("invalid: {:#?}", c.diagnostics));
    collc_verifier::verify(&p, &Options::symbolic_only())
}

fn status(r: &Report, id: &str) -> Status {
    r.get(id).map(|o| o.status).unwrap_or(Status::Skipped)
}

fn p_of(r: &Report, id: &str) -> i64 {
    let o = r.get(id).expect("obligation");
    o.findings[0]
        .params
        .iter()
        .find(|p| p.name == "P")
        .map(|p| p.value)
        .expect("P")
}

/// Every rank but 0 credits `cnt[0]` on rank 0; rank 0 waits for `thr` and releases.
fn arrival(thr: &str, reset: &str) -> String {
    format!(
        "collective a: barrier() {{
    ranks P in 1..=8;
    signal cnt[1];
    signal rel[1];

    body {{
        if me != 0 {{
            notify cnt[0] @ rank(0) += 1;
            wait rel[0] >= 1;
        }} else {{
            wait cnt[0] >= {thr};
            {reset}
            for p in peers {{
                notify rel[0] @ p += 1;
            }}
        }}
    }}

    epilogue {{
        if me != 0 {{
            notify rel[0] -= 1;
        }}
    }}
}}"
    )
}

#[test]
fn a_full_threshold_before_the_reset_is_proved() {
    let r = verify(&arrival("P - 1", "notify cnt[0] -= P - 1;"));
    assert_eq!(status(&r, "stale-credit"), Status::Proved);
    assert_eq!(status(&r, "credit-balance"), Status::Proved);
}

#[test]
fn a_partial_threshold_with_a_full_reset_is_stale_credit_at_the_smallest_p() {
    // `>= 1` for P - 1 writers: two writers first at P = 3.
    let r = verify(&arrival("1", "notify cnt[0] -= P - 1;"));
    assert_eq!(status(&r, "stale-credit"), Status::Violated);
    assert_eq!(p_of(&r, "stale-credit"), 3);
    let f = &r.get("stale-credit").unwrap().findings[0];
    assert_eq!(f.cell.as_deref(), Some("cnt[0] on rank 0"));
    assert_eq!(f.value, Some(1));
    // `>= min(P - 1, 3)`: full up to P = 4, partial from P = 5.
    let r = verify(&arrival("min(P - 1, 3)", "notify cnt[0] -= P - 1;"));
    assert_eq!(p_of(&r, "stale-credit"), 5);
}

#[test]
fn a_reset_before_any_wait_on_a_many_writer_cell_is_stale_credit() {
    let text = arrival("P - 1", "").replace(
        "            wait cnt[0] >= P - 1;",
        "            notify cnt[0] -= P - 1;\n            wait cnt[0] >= 0;",
    );
    let r = verify(&text);
    assert_eq!(status(&r, "stale-credit"), Status::Violated);
    assert_eq!(p_of(&r, "stale-credit"), 3);
}

/// A reused or per-call value flag written by `writer` and waited for by rank 0.
fn flag(lifetime: &str, set: &str, wait: &str) -> String {
    format!(
        "collective v: barrier() {{
    ranks P in 1..=8;
    signal go[1];
    signal flag[1] as value {lifetime};

    body {{
        if me != 0 {{
            {set}
            notify go[0] @ rank(0) += 1;
        }} else {{
            wait go[0] >= P - 1;
            {wait}
        }}
    }}

    epilogue {{
        if me == 0 {{
            notify go[0] -= P - 1;
        }}
    }}
}}"
    )
}

#[test]
fn value_signal_rules() {
    // Two writers (every rank but 0) Set the one cell: first at P = 3.
    let r = verify(&flag(
        "per call",
        "notify flag[0] @ rank(0) = 1;",
        "wait flag[0] >= 1;",
    ));
    assert_eq!(status(&r, "value-signal"), Status::Violated);
    assert_eq!(p_of(&r, "value-signal"), 3);
    assert!(r.get("value-signal").unwrap().findings[0]
        .message
        .contains("two writers"));
    // An AtomicAdd on a value signal.
    let r = verify(&flag(
        "per call",
        "notify flag[0] @ rank(0) += 1;",
        "wait flag[0] >= 1;",
    ));
    assert_eq!(status(&r, "value-signal"), Status::Violated);
    assert!(r.get("value-signal").unwrap().findings[0]
        .message
        .contains("AtomicAdd"));
    // One writer (rank 1), per call: a wait for a positive value is proved ...
    let one = "if me == 1 {\n                notify flag[0] @ rank(0) = 1;\n            }";
    let r = verify(&flag("per call", one, "wait flag[0] >= 1;"));
    assert_eq!(
        status(&r, "value-signal"),
        Status::Proved,
        "{:?}",
        r.get("value-signal")
    );
    // ... a wait that passes on the initial 0 is not ...
    let r = verify(&flag("per call", one, "wait flag[0] >= 0;"));
    assert_eq!(status(&r, "value-signal"), Status::Violated);
    // ... and with `reused` cells the previous call's 1 satisfies the wait.
    let r = verify(&flag("reused", one, "wait flag[0] >= 1;"));
    assert_eq!(status(&r, "value-signal"), Status::Violated);
    assert!(r.get("value-signal").unwrap().findings[0]
        .message
        .contains("previous call"));
}

/// Rank 1 then rank 2 credit `cnt[0]` on rank 0, passing a token; rank 0 waits for one
/// credit and resets both. `back` is rank 1's wait for the token's return.
fn chained(back: &str) -> String {
    format!(
        "collective c: barrier() {{
    ranks P in 3..=3;
    signal cnt[1];
    signal tok[1];

    body {{
        if me == 1 {{
            notify cnt[0] @ rank(0) += 1;
            notify tok[0] @ rank(2) += 1;
            {back}
        }}
        if me == 2 {{
            wait tok[0] >= 1;
            notify cnt[0] @ rank(0) += 1;
            notify tok[0] @ rank(1) += 1;
        }}
        if me == 0 {{
            wait cnt[0] >= 1;
        }}
    }}

    epilogue {{
        if me == 0 {{
            notify cnt[0] -= 2;
        }}
        if me != 0 {{
            notify tok[0] -= 1;
        }}
    }}
}}"
    )
}

#[test]
fn writers_ordered_in_one_sequence_keep_the_single_writer_rule() {
    // Rank 1's next call starts only after rank 2's credit (the token comes back): the
    // credits arrive as a prefix of one sequence, and a wait for 1 before the reset is fine.
    let r = verify(&chained("wait tok[0] >= 1;"));
    assert_eq!(status(&r, "stale-credit"), Status::Proved);
    // Without the return wait rank 1's next credit can overtake rank 2's: unordered.
    let r = verify(&chained(""));
    assert_eq!(status(&r, "stale-credit"), Status::Violated);
}

/// Rank 0 clears its value flag, then (`ack_first` or not) tells rank 1 it is ready; rank 1
/// waits for that and Sets the flag to 1; rank 0 waits with `wait`: two Sets per call.
fn clear_then_set(ack_first: bool, wait: &str) -> String {
    let (a, b) = ("notify flag[0] = 0;", "notify go[0] @ rank(1) += 1;");
    let (first, second) = if ack_first { (b, a) } else { (a, b) };
    format!(
        "collective c: barrier() {{
    ranks P in 2..=4;
    signal go[1];
    signal flag[1] as value;

    body {{
        if me == 0 {{
            {first}
            {second}
            {wait}
        }}
        if me == 1 {{
            wait go[0] >= 1;
            notify flag[0] @ rank(0) = 1;
        }}
    }}

    epilogue {{
        if me == 1 {{
            notify go[0] -= 1;
        }}
    }}
}}"
    )
}

#[test]
fn several_sets_per_call_ordered_by_a_chain() {
    // The clear, the ready credit, the writer's Set: ordered; the wait passes only on the
    // last Set's 1 (not on the cleared 0, nor on the previous call's 1).
    let r = verify(&clear_then_set(false, "wait flag[0] == 1;"));
    let o = r.get("value-signal").expect("value-signal");
    assert!(
        matches!(o.status, Status::Proved | Status::Checked),
        "{o:?}"
    );
    // The ready credit before the clear: the writer's Set can land first and be wiped.
    let r = verify(&clear_then_set(true, "wait flag[0] == 1;"));
    assert_eq!(status(&r, "value-signal"), Status::Violated);
    assert!(r.get("value-signal").unwrap().findings[0]
        .message
        .contains("two writers"));
    // Ordered Sets, but the wait also passes on the earlier Set's 0.
    let r = verify(&clear_then_set(false, "wait flag[0] >= 0;"));
    assert_eq!(status(&r, "value-signal"), Status::Violated);
    assert!(r.get("value-signal").unwrap().findings[0]
        .message
        .contains("earlier Set of the call"));
}
