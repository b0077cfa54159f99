//! The parametric route (P symbolic) with the call index, monotonic signals and credit
//! windows: the overflow horizon as a formula in P, and one-token mutants of the epoch and
//! window examples that the route must never prove where enumeration or the simulator
//! refutes.

use collc_verifier::Status;
use std::time::Duration;

fn protocol(text: &str) -> collc_spec::Validated {
    collc_spec::front(&collc_verifier::Ranges, text)
        .protocol
        .expect("the case validates")
}

/// A gather/release barrier on epoch counters: every rank but 0 adds one per call to a
/// counter on rank 0 (P - 1 writers), rank 0 waits for `(P - 1) * (call + 1)` and then
/// releases every peer, which waits for it before its next call's credit (without the
/// release a fast writer's next-call credit can be counted: a stale pass at P = 3).
const EPOCH_GATHER: &str = "collective eg: barrier() {
    ranks P in 2..=64;
    calls <= 1000;
    signal arrive[1] monotonic;
    signal release[1] monotonic;
    body {
        if me != rank(0) {
            notify arrive[0] @ rank(0) += 1;
            wait release[0] >= call + 1;
        } else {
            wait arrive[0] >= (P - 1) * (call + 1);
            for p in peers {
                notify release[0] @ p += 1;
            }
        }
    }
}
";

#[test]
fn a_symbolic_threshold_growth_is_proved_and_the_horizon_is_a_formula_in_p() {
    let p = protocol(EPOCH_GATHER);
    let o = collc_verifier::param::prove(&p, Duration::from_secs(20));
    for id in collc_verifier::param::IDS {
        assert!(o.proof(id).is_some(), "{id}: {:?}", o.open(id));
    }
    let h = o.horizon.as_ref().expect("a symbolic horizon");
    assert_eq!(h.max, 63);
    assert_eq!(h.per_call, "P - 1");
    assert_eq!(h.at.first(), Some(&("P".to_string(), 64)));
    let r = collc_verifier::verify(&p, &collc_verifier::Options::symbolic_only());
    let ob = r.get("overflow-horizon").expect("the obligation");
    assert_eq!(ob.status, Status::Proved, "{ob:?}");
    assert!(ob.summary().contains("N(P) <= P - 1"), "{}", ob.summary());
    assert_eq!(ob.world.map(|w| w.hi), Some(64));
    // floor((2^31 - 1) / 63) = 34087042 calls at P = 64, the worst P of the domain.
    let long = protocol(&EPOCH_GATHER.replace("calls <= 1000;", "calls <= 34087043;"));
    let r = collc_verifier::verify(&long, &collc_verifier::Options::symbolic_only());
    let ob = r.get("overflow-horizon").expect("the obligation");
    assert_eq!(ob.status, Status::Violated, "{ob:?}");
    assert!(ob.summary().contains("34087042"), "{}", ob.summary());
    let fits = protocol(&EPOCH_GATHER.replace("calls <= 1000;", "calls <= 34087042;"));
    let r = collc_verifier::verify(&fits, &collc_verifier::Options::symbolic_only());
    assert_eq!(
        r.get("overflow-horizon").map(|o| o.status),
        Some(Status::Proved)
    );
}

#[test]
fn a_threshold_growing_apart_from_the_credits_is_not_proved() {
    for (from, to) in [
        ("(P - 1) * (call + 1)", "P * (call + 1)"),
        ("(P - 1) * (call + 1)", "(P - 1) * call + P"),
        ("(P - 1) * (call + 1)", "(P - 1) * (call * call + 1)"),
    ] {
        let o = collc_verifier::param::prove(
            &protocol(&EPOCH_GATHER.replace(from, to)),
            Duration::from_secs(20),
        );
        assert!(o.proof("deadlock").is_none(), "{to}: {:?}", o.results);
    }
}

/// One-token mutants of the epoch and window examples: the call index's threshold, the
/// parity, the window's lag, the credits. No obligation the enumerated route refutes is
/// proved symbolically, and no deadlock proof where the simulator finds one.
#[test]
fn epoch_and_window_mutants_never_get_a_proof_that_is_refuted() {
    const FILES: [&str; 3] = [
        "sense_reversing_barrier",
        "epoch_allreduce",
        "credit_window_pipeline",
    ];
    const MUTATIONS: [(&str, &str); 9] = [
        (">= call + 1;", ">= call;"),
        (">= call + 1;", ">= call + 2;"),
        (">= call + 1;", ">= 2 * call + 1;"),
        ("let half = call % 2;", "let half = (call + 1) % 2;"),
        (">= t - K + 1;", ">= t - K;"),
        (">= t - K + 1;", ">= t - 3 + 1;"),
        (">= t - K + 1;", ">= t + 1;"),
        (">= t + 1;", ">= t;"),
        ("+= 1;", "+= 2;"),
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut bad = Vec::new();
    let mut checked = 0;
    for name in FILES {
        let text = std::fs::read_to_string(root.join(format!("{name}.coll"))).expect("read");
        for (from, to) in MUTATIONS {
            let Some(at) = text.find(from) else { continue };
            let mut t = text.clone();
            t.replace_range(at..at + from.len(), to);
            let Some(p) = collc_spec::front(&collc_verifier::Ranges, &t).protocol else {
                continue;
            };
            checked += 1;
            let o = collc_verifier::param::prove(&p, Duration::from_secs(10));
            let r = collc_verifier::check::verify(
                &p,
                &collc_verifier::check::Options { timeout_ms: 20_000 },
            );
            for ob in &r.obligations {
                let refuted = matches!(ob.status, Status::Violated | Status::Warning);
                if refuted && o.proof(&ob.id).is_some() {
                    bad.push(format!("{name} [{from} -> {to}]: {} proved", ob.id));
                }
            }
            if o.proof("deadlock").is_some() {
                let b = collc_verifier::bounded::BoundedOptions {
                    budget: Duration::from_millis(1500),
                    max_states: 50_000,
                    relaxed_max_states: 2_000,
                    ..Default::default()
                };
                for ob in collc_verifier::bounded::check(&p, &b) {
                    if ob.id == "deadlock" && ob.status == Status::Violated {
                        bad.push(format!(
                            "{name} [{from} -> {to}]: deadlock proved, simulator refutes"
                        ));
                    }
                }
            }
        }
    }
    assert!(checked >= 8, "only {checked} mutants validated");
    assert!(bad.is_empty(), "{bad:#?}");
}
