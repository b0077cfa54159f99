//! The parametric route (P symbolic) on every shipped example.

mod common;

use std::time::Duration;

fn outcome(text: &str) -> collc_verifier::param::Outcome {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    let p = c.protocol.expect("the case validates");
    collc_verifier::param::prove(&p, Duration::from_secs(120))
}

fn open_ids(o: &collc_verifier::param::Outcome) -> Vec<&'static str> {
    collc_verifier::param::IDS
        .iter()
        .copied()
        .filter(|i| o.proof(i).is_none())
        .collect()
}

/// The examples outside the parametric route, with the forms their open obligations name
/// (proved by enumeration, and the report says so; collc/tests/verify.rs checks the
/// wording). None today: the binomial tree (its round guard `m < low`, ranked by relative
/// rank) and the sense-reversing barrier (its release ranked by the Set that writes the
/// awaited value) are demanded like every other example. The route must never prove what
/// the enumeration refutes (`agrees_with_enumeration`).
const DECLINED: [(&str, &[&str]); 0] = [];

fn declined(f: &std::path::Path) -> Option<&'static [&'static str]> {
    let stem = f.file_stem()?.to_string_lossy().into_owned();
    DECLINED
        .iter()
        .find(|(n, _)| *n == stem)
        .map(|(_, why)| *why)
}

#[test]
fn every_example_is_proved_with_p_symbolic() {
    for f in common::coll_files(&["examples"]) {
        let text = std::fs::read_to_string(&f).expect("read");
        let o = outcome(&text);
        if let Some(forms) = declined(&f) {
            // Declined with the form named: deadlock and every other open obligation
            // name it (some, e.g. a vacuous op-exclusivity, may be proved).
            if !forms.is_empty() {
                assert!(o.open("deadlock").is_some(), "{}", f.display());
                for id in collc_verifier::param::IDS {
                    let Some(why) = o.open(id) else { continue };
                    assert!(
                        forms.iter().any(|x| why.contains(x)),
                        "{}: {id}: {why:?}",
                        f.display()
                    );
                }
            }
            continue;
        }
        assert!(open_ids(&o).is_empty(), "{}: {:?}", f.display(), o.results);
    }
}

const RING: &str = "collective ring: barrier() {
    ranks P in 2..=65536;
    signal sig[1];
    body {
        notify sig[0] @ rank((me + 1) % P) += 1;
        wait sig[0] >= 1;
    }
    epilogue {
        notify sig[0] -= 1;
    }
}
";

#[test]
fn a_modular_ring_is_proved_for_every_world_size() {
    let o = outcome(RING);
    assert!(open_ids(&o).is_empty(), "{:?}", o.results);
    assert_eq!(o.domain(), "all P in 2..=65536");
}

#[test]
fn a_ring_resetting_too_little_is_not_proved_balanced() {
    let o = outcome(&RING.replace("notify sig[0] -= 1;", "notify sig[0] -= 2;"));
    assert!(o.proof("credit-balance").is_none(), "{:?}", o.results);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
}

#[test]
fn a_ring_waiting_for_a_credit_nobody_sends_first_is_not_proved_live() {
    // The wait comes before this rank's notify in every rank: each needs its left
    // neighbour's notify, which comes after that neighbour's own wait.
    let text = RING.replace(
        "        notify sig[0] @ rank((me + 1) % P) += 1;\n        wait sig[0] >= 1;",
        "        wait sig[0] >= 1;\n        notify sig[0] @ rank((me + 1) % P) += 1;",
    );
    let o = outcome(&text);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
    assert!(o.proof("credit-balance").is_some(), "{:?}", o.results);
}

/// Every rank but 0 adds one to a counter on rank 0 (many writers, counted: P - 1).
const GATHER: &str = "collective gather: barrier() {
    ranks P >= 2;
    signal arrive[1];
    body {
        if me != rank(0) {
            notify arrive[0] @ rank(0) += 1;
        } else {
            wait arrive[0] >= P - 1;
        }
    }
    epilogue {
        if me == rank(0) {
            notify arrive[0] -= P - 1;
        }
    }
}
";

#[test]
fn a_counter_with_many_writers_is_counted() {
    let o = outcome(GATHER);
    assert!(o.proof("credit-balance").is_some(), "{:?}", o.results);
    assert!(o.proof("deadlock").is_some(), "{:?}", o.results);
    let short = outcome(&GATHER.replace("wait arrive[0] >= P - 1;", "wait arrive[0] >= P;"));
    assert!(short.proof("deadlock").is_none(), "{:?}", short.results);
    let leak = outcome(&GATHER.replace("-= P - 1;", "-= P - 2;"));
    assert!(leak.proof("credit-balance").is_none(), "{:?}", leak.results);
    // Nothing orders a writer's next arrival after rank 0's wait (there is no release): a
    // writer that has finished call k can credit call k+1 before a slower writer's credit
    // of call k arrived, and rank 0's wait of call k passes counting it (the many-writer
    // rule's second half, README "Several writers"). With the release of
    // examples/arrival_barrier.coll it is proved.
    assert!(o.proof("stale-credit").is_none(), "{:?}", o.results);
    let released = GATHER
        .replace(
            "            notify arrive[0] @ rank(0) += 1;\n",
            "            notify arrive[0] @ rank(0) += 1;\n            wait release[0] >= 1;\n",
        )
        .replace(
            "            wait arrive[0] >= P - 1;\n",
            "            wait arrive[0] >= P - 1;\n            for p in peers {\n                notify release[0] @ p += 1;\n            }\n",
        )
        .replace("    signal arrive[1];\n", "    signal arrive[1];\n    signal release[1];\n")
        .replace(
            "            notify arrive[0] -= P - 1;\n        }",
            "            notify arrive[0] -= P - 1;\n        } else {\n            notify release[0] -= 1;\n        }",
        );
    let r = outcome(&released);
    assert!(
        r.proof("stale-credit").is_some(),
        "{released}\n{:?}",
        r.results
    );
    // A partial threshold with a full reset: a late arrival of call k survives the
    // reset and satisfies call k+1's wait. Not proved (the enumerated route refutes it).
    let partial = outcome(&GATHER.replace("wait arrive[0] >= P - 1;", "wait arrive[0] >= 1;"));
    assert!(
        partial.proof("stale-credit").is_none(),
        "{:?}",
        partial.results
    );
    assert!(
        partial.proof("credit-balance").is_some(),
        "{:?}",
        partial.results
    );
}

/// The obligations a fixture's `// expect:` annotations say are violated.
fn expected(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, list)) = line.split_once("expect:") else {
            continue;
        };
        for code in list.split(',').map(str::trim) {
            let id = match code {
                "sim::deadlock" | "sim::lost-credit" | "sim::nonzero-exit" => "deadlock",
                c => match c.strip_prefix("verify::") {
                    Some(id) => id,
                    None => continue,
                },
            };
            out.push(id.to_string());
        }
    }
    out
}

/// Soundness: on every bug fixture, no obligation its annotations say is violated is
/// proved by the parametric route (deadlock included: a fixture that deadlocks, loses
/// a credit or leaves a cell non-zero never gets `deadlock` proved).
#[test]
fn never_proves_an_annotated_violation() {
    let mut bad = Vec::new();
    for f in common::coll_files(&["examples/bugs"]) {
        let text = std::fs::read_to_string(&f).expect("read");
        let c = collc_spec::front(&collc_verifier::Ranges, &text);
        let Some(p) = c.protocol else { continue };
        let o = collc_verifier::param::prove(&p, Duration::from_secs(120));
        for id in expected(&text) {
            if o.proof(&id).is_some() {
                bad.push(format!(
                    "{}: {id} is annotated violated but proved",
                    f.display()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Symbolic results agree with enumeration on every example (P over the declared
/// domain, at most 1..=16): every obligation both proved, and on every bug fixture
/// nothing the enumerated route refutes is proved symbolically.
#[test]
fn agrees_with_enumeration() {
    let mut bad = Vec::new();
    let mut files = common::coll_files(&["examples"]);
    files.extend(common::coll_files(&["examples/bugs"]));
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let c = collc_spec::front(&collc_verifier::Ranges, &text);
        let Some(p) = c.protocol else { continue };
        // Generous wall-clock budgets: a cross-check of statuses, not of speed (a
        // loaded machine must not turn a proof into `unknown` here).
        let o = collc_verifier::param::prove(&p, Duration::from_secs(120));
        let opts = collc_verifier::check::Options {
            timeout_ms: 120_000,
        };
        let r = collc_verifier::check::verify(&p, &opts);
        let is_example = !f.to_string_lossy().contains("/bugs/");
        for ob in &r.obligations {
            if !collc_verifier::param::IDS.contains(&ob.id.as_str()) {
                continue;
            }
            let proved = o.proof(&ob.id).is_some();
            let refuted = matches!(
                ob.status,
                collc_verifier::Status::Violated | collc_verifier::Status::Warning
            );
            if refuted && proved {
                bad.push(format!(
                    "{}: {} proved but enumerated {:?}",
                    f.display(),
                    ob.id,
                    ob.status
                ));
            }
            // A declared domain past the enumeration cap: the enumeration only checks
            // its first 16 sizes, and the parametric route must prove the rest.
            let wide = o.world.1 > collc_verifier::planning::TABLE.enum_world_max;
            let enumerated = ob.status == collc_verifier::Status::Proved
                || (wide && proved && ob.status == collc_verifier::Status::Checked);
            if is_example && (!enumerated || (!proved && declined(&f).is_none())) {
                bad.push(format!(
                    "{}: {}: enumerated {:?}, symbolic {:?}",
                    f.display(),
                    ob.id,
                    ob.status,
                    o.open(&ob.id)
                ));
            }
        }
        if is_example && declined(&f).is_none() && o.proof("deadlock").is_none() {
            bad.push(format!(
                "{}: deadlock not proved symbolically: {:?}",
                f.display(),
                o.open("deadlock")
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// A gather/release barrier: ranks arrive at a counter on rank 0 (many writers), rank 0
/// releases them. In program order the release wait (then-branch) comes before the
/// release notify (else-branch); the ranking raises rank 0's arrival wait.
const GATHER_RELEASE: &str = "collective gr: barrier() {
    ranks P in 2..=16;
    signal arrive[1];
    signal release[1];
    body {
        if me != rank(0) {
            notify arrive[0] @ rank(0) += 1;
            wait release[0] >= 1;
        } else {
            wait arrive[0] >= P - 1;
            for p in peers {
                notify release[0] @ p += 1;
            }
        }
    }
    epilogue {
        if me == rank(0) {
            notify arrive[0] -= P - 1;
        } else {
            notify release[0] -= 1;
        }
    }
}
";

#[test]
fn a_gather_release_barrier_is_ranked_by_levels() {
    let o = outcome(GATHER_RELEASE);
    assert!(open_ids(&o).is_empty(), "{:?}", o.results);
    // Releasing before the gather completes cannot be ranked: the release waits for the
    // arrivals, which wait for the release.
    let cyclic = GATHER_RELEASE.replace(
        "            notify arrive[0] @ rank(0) += 1;\n            wait release[0] >= 1;",
        "            wait release[0] >= 1;\n            notify arrive[0] @ rank(0) += 1;",
    );
    let o = outcome(&cyclic);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
}

/// A chain barrier: rank `me` waits for `me + 1`'s arrival and reports to `me - 1`, then
/// waits for `me - 1`'s release and releases `me + 1`. No one order of ranks ranks both
/// phases: the arrivals need the rank descending, the releases ascending.
const CHAIN: &str = "collective chain: barrier() {
    ranks P in 1..=65536;
    signal arrived[1];
    signal release[1];
    body {
        if me + 1 < P {
            wait arrived[0] >= 1;
        }
        if me != 0 {
            notify arrived[0] @ rank(me - 1) += 1;
            wait release[0] >= 1;
        }
        if me + 1 < P {
            notify release[0] @ rank(me + 1) += 1;
        }
    }
    epilogue {
        if me + 1 < P {
            notify arrived[0] -= 1;
        }
        if me != 0 {
            notify release[0] -= 1;
        }
    }
}
";

#[test]
fn a_chain_barrier_is_ranked_by_a_key_per_level() {
    let o = outcome(CHAIN);
    assert!(open_ids(&o).is_empty(), "{:?}", o.results);
    assert_eq!(o.domain(), "all P in 1..=65536");
    // Waiting for the release before arriving: every rank but the last waits forever.
    let cyclic = CHAIN.replace(
        "            notify arrived[0] @ rank(me - 1) += 1;\n            wait release[0] >= 1;",
        "            wait release[0] >= 1;\n            notify arrived[0] @ rank(me - 1) += 1;",
    );
    assert_ne!(cyclic, CHAIN);
    let o = outcome(&cyclic);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
    assert!(o.proof("wait-reachable").is_none(), "{:?}", o.results);
    // The last rank is never released (from P = 2 on).
    let unreleased = CHAIN.replace(
        "        if me + 1 < P {\n            notify release[0]",
        "        if me + 2 < P {\n            notify release[0]",
    );
    assert_ne!(unreleased, CHAIN);
    let o = outcome(&unreleased);
    assert!(o.proof("wait-reachable").is_none(), "{:?}", o.results);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
}

/// The binomial tree barrier of `examples/idioms` (its domain narrowed to keep the test
/// short; `collc/tests/idioms.rs` verifies the declared one) is ranked with a key per
/// level; its twin that skips the release of the odd ranks is not.
#[test]
fn a_binomial_tree_barrier_is_ranked_by_a_key_per_level() {
    let read = |f: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/idioms")
            .join(f);
        let text = std::fs::read_to_string(path).expect("read");
        assert!(text.contains("ranks P in 1..=65536;"), "{f}");
        text.replace("ranks P in 1..=65536;", "ranks P in 1..=64;")
    };
    let o = outcome(&read("binomial_tree_barrier.coll"));
    assert!(open_ids(&o).is_empty(), "{:?}", o.results);
    let o = outcome(&read("bugs/binomial_tree_barrier_no_release.coll"));
    assert!(o.proof("wait-reachable").is_none(), "{:?}", o.results);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
}

/// The semaphore mailbox of `examples/idioms` (a round trip within each round: the root
/// signals chunk `t`, then waits for the peers' acknowledgement of it, which the peers'
/// branch sends later in the text; both counters consumed by the waiter's own take-backs)
/// is proved with P symbolic: wait-reachable and deadlock by phases inside the round
/// (`param/phase.rs`), stale-credit counting the take-backs between two waits. Waiting for
/// the acknowledgement before signalling the chunk deadlocks and is not ranked; without the
/// peer's take-back its wait passes on round 0's credit and stale-credit is not proved.
#[test]
fn a_semaphore_mailbox_is_ranked_by_phases_and_counts_its_take_backs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/idioms/semaphore_mailbox.coll");
    let text = std::fs::read_to_string(path).expect("read");
    let o = outcome(&text);
    assert!(open_ids(&o).is_empty(), "{:?}", o.results);
    for id in ["wait-reachable", "deadlock", "stale-credit"] {
        assert!(o.proof(id).is_some(), "{id}: {:?}", o.results);
    }
    let signal = "                for q in peers {\n                    notify full[root] @ q += 1;\n                }\n";
    let ack = "                for q in peers {\n                    wait ack[q] >= 1;\n                    notify ack[q] -= 1;\n                }\n";
    let cyclic = text.replace(&format!("{signal}{ack}"), &format!("{ack}{signal}"));
    assert_ne!(cyclic, text);
    let o = outcome(&cyclic);
    assert!(o.proof("wait-reachable").is_none(), "{:?}", o.results);
    assert!(o.proof("deadlock").is_none(), "{:?}", o.results);
    let kept = text.replace("                notify full[root] -= 1;\n", "");
    assert_ne!(kept, text);
    let o = outcome(&kept);
    assert!(o.proof("stale-credit").is_none(), "{:?}", o.results);
}

/// Generated cross-check: one-token mutations of every example (thresholds, values,
/// comparisons, loop ranges, targets). Whatever validates must not make the parametric
/// route panic, and no obligation the enumerated route refutes may be proved by it.
#[test]
fn mutants_never_get_a_proof_enumeration_refutes() {
    const MUTATIONS: [(&str, &str); 15] = [
        // The log-round forms: partner, distance, round index, loop factor and direction.
        ("me ^ d", "me | d"),
        ("(me + d) % P", "(me + 2 * d) % P"),
        ("log2(d)]", "log2(d) + 1]"),
        ("step *2", "step *3"),
        ("step *2).rev()", "step *2)"),
        ("+= 1;", "+= 2;"),
        ("-= 1;", "-= 2;"),
        (">= 1;", ">= 2;"),
        (">= t + 1;", ">= t;"),
        (">= k + 2;", ">= k + 1;"),
        (">=", ">"),
        ("in peers", "in ranks"),
        ("@ p", "@ rank(0)"),
        ("sig[me]", "sig[0]"),
        ("sig[p]", "sig[me]"),
    ];
    let mut bad = Vec::new();
    let mut checked = 0;
    for f in common::coll_files(&["examples"]) {
        let text = std::fs::read_to_string(&f).expect("read");
        for (from, to) in MUTATIONS {
            for (n, (at, _)) in text.match_indices(from).take(2).enumerate() {
                let mut t = text.clone();
                t.replace_range(at..at + from.len(), to);
                let c = collc_spec::front(&collc_verifier::Ranges, &t);
                let Some(p) = c.protocol else { continue };
                let o = collc_verifier::param::prove(&p, Duration::from_secs(10));
                let opts = collc_verifier::check::Options { timeout_ms: 5_000 };
                let r = collc_verifier::check::verify(&p, &opts);
                checked += 1;
                // A deadlock proof is checked against the simulator at small bounds.
                if o.proof("deadlock").is_some() {
                    let b = collc_verifier::bounded::BoundedOptions {
                        budget: Duration::from_millis(400),
                        max_states: 20_000,
                        relaxed_max_states: 2_000,
                        ..Default::default()
                    };
                    for ob in collc_verifier::bounded::check(&p, &b) {
                        if ob.id == "deadlock" && ob.status == collc_verifier::Status::Violated {
                            bad.push(format!(
                                "{} [{from} -> {to} #{n}]: deadlock proved, simulator: {:?}",
                                f.display(),
                                ob.findings.first().map(|x| &x.message)
                            ));
                        }
                    }
                }
                for ob in &r.obligations {
                    let refuted = matches!(
                        ob.status,
                        collc_verifier::Status::Violated | collc_verifier::Status::Warning
                    );
                    if refuted && o.proof(&ob.id).is_some() {
                        bad.push(format!("{} [{from} -> {to} #{n}]: {}", f.display(), ob.id));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} mutants validated");
    assert!(bad.is_empty(), "{bad:#?}");
}
