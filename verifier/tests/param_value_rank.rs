//! Waits on value signals in the progress ranking (P symbolic): the sense-reversing
//! barrier's release is reached by the Set of the awaited value, and no mutant whose value
//! wait can hang, pass on another value, or lose its Set to the next call gets `deadlock`
//! or `wait-reachable` proved.

use collc_verifier::Status;
use std::time::Duration;

fn example(name: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(format!("examples/{name}.coll"))).expect("read")
}

fn outcome(text: &str) -> collc_verifier::param::Outcome {
    let p = collc_spec::front(&collc_verifier::Ranges, text)
        .protocol
        .expect("the case validates");
    collc_verifier::param::prove(&p, Duration::from_secs(20))
}

#[test]
fn the_sense_reversing_barrier_is_ranked_by_its_sets() {
    let text = example("sense_reversing_barrier");
    let o = outcome(&text);
    for id in collc_verifier::param::IDS {
        assert!(o.proof(id).is_some(), "{id}: {:?}", o.open(id));
    }
    assert_eq!(o.domain(), "all P in 1..=65536");
    // The bounded run agrees at the sizes it reaches.
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("validates");
    let b = collc_verifier::bounded::BoundedOptions {
        budget: Duration::from_secs(5),
        max_states: 50_000,
        relaxed_max_states: 2_000,
        ..Default::default()
    };
    for ob in collc_verifier::bounded::check(&p, &b) {
        assert_ne!(ob.status, Status::Violated, "{}: {:?}", ob.id, ob.findings);
    }
}

/// A gather/release barrier on value flags only: every rank but 0 Sets its flag on rank 0,
/// rank 0 waits for every flag and Sets each peer's `go` (fresh cells every call).
const FLAGS: &str = "collective flags: barrier() {
    ranks P in 1..=64;
    signal ready[P] as value per call;
    signal go[1] as value per call;
    body {
        if me != 0 {
            notify ready[me] @ rank(0) = 1;
            wait go[0] == 1;
        } else {
            for p in peers {
                wait ready[p] == 1;
            }
            for p in peers {
                notify go[0] @ p = 1;
            }
        }
    }
}
";

#[test]
fn a_barrier_of_value_flags_is_ranked() {
    let o = outcome(FLAGS);
    assert!(o.proof("deadlock").is_some(), "{:?}", o.open("deadlock"));
    assert!(o.proof("wait-reachable").is_some(), "{:?}", o.results);
    // Releasing before arriving: each peer waits for `go`, which waits for its flag.
    let cyclic = FLAGS.replace(
        "            notify ready[me] @ rank(0) = 1;\n            wait go[0] == 1;",
        "            wait go[0] == 1;\n            notify ready[me] @ rank(0) = 1;",
    );
    assert_ne!(cyclic, FLAGS);
    let o = outcome(&cyclic);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
    // The wrong value: the flag never shows what the wait needs.
    let o = outcome(&FLAGS.replace("@ p = 1;", "@ p = 2;"));
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
    assert!(o.proof("wait-reachable").is_none(), "{:?}", o.results);
    // Ranks from 5 on never raise their flag: rank 0 hangs from P = 6 on, the smallest
    // world size Z3 names for the bounded run above the ones it explores anyway (the
    // ranking's first rounds, before a wait is raised, may name smaller ones).
    let o = outcome(&FLAGS.replace(
        "notify ready[me] @ rank(0) = 1;",
        "if me < 5 {\n                notify ready[me] @ rank(0) = 1;\n            }",
    ));
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
    let above: Vec<i64> = o.named_worlds.iter().copied().filter(|w| *w > 4).collect();
    assert_eq!(above.first(), Some(&6), "{:?}", o.named_worlds);
}

/// One-token mutants of the sense-reversing barrier: none gets the progress obligations
/// proved where the release can hang, pass on the other sense or be overwritten.
#[test]
fn sense_mutants_are_not_ranked() {
    let sense = example("sense_reversing_barrier");
    let arrive_then_wait = "            notify arrived[me] @ rank(0) += 1;\n            wait sense[0] == (call + 1) % 2;";
    let mutants: [(&str, String); 5] = [
        // Waiting for the release before arriving: a cycle.
        (
            "release before arrival",
            sense.replace(
                arrive_then_wait,
                "            wait sense[0] == (call + 1) % 2;\n            notify arrived[me] @ rank(0) += 1;",
            ),
        ),
        // Waiting for the sense of the previous call.
        (
            "old sense",
            sense.replace("wait sense[0] == (call + 1) % 2;", "wait sense[0] == call % 2;"),
        ),
        // Writing the wrong sense.
        (
            "wrong sense",
            sense.replace("@ p = (call + 1) % 2;", "@ p = call % 2;"),
        ),
        // Releasing one peer only.
        (
            "one peer",
            sense.replace("notify sense[0] @ p = ", "notify sense[0] @ rank(1) = "),
        ),
        // Releasing before the arrivals: the next call's Set may overwrite a sense not
        // yet read (value-signal is not proved, and the ranking needs it).
        (
            "release first",
            sense.replace(
                "            for p in peers {\n                wait arrived[p] >= call + 1;\n            }\n",
                "",
            ),
        ),
    ];
    for (what, text) in mutants {
        assert_ne!(text, sense, "{what}: the mutation applies");
        let Some(p) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
            continue;
        };
        let o = collc_verifier::param::prove(&p, Duration::from_secs(20));
        assert!(o.proof("deadlock").is_none(), "{what}: {:?}", o.results);
    }
}
