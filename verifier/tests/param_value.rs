//! `value-signal` and `fence` with P symbolic, and the scope every proved line states.

mod common;

use collc_verifier::report::Report;
use collc_verifier::{Options, Status};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every example, bug fixture and verify fixture.
fn all_files() -> Vec<PathBuf> {
    common::coll_files(&["examples", "examples/bugs", "collc/tests/verify_fixtures"])
}

fn protocol(text: &str) -> Option<collc_spec::Validated> {
    collc_spec::front(&collc_verifier::Ranges, text).protocol
}

fn report(text: &str) -> Report {
    let p = protocol(text).expect("the case validates");
    collc_verifier::verify(&p, &Options::symbolic_only())
}

fn value_proof(text: &str) -> Result<collc_verifier::param::Proof, String> {
    let p = protocol(text).expect("the case validates");
    let credits = collc_verifier::param::prove(&p, Duration::from_secs(20));
    collc_verifier::param::value::prove(&p, &credits, Duration::from_secs(20))
}

fn read(f: &Path) -> String {
    std::fs::read_to_string(f).expect("read")
}

fn example(name: &str) -> String {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/{name}.coll")))
}

/// The rule "say exactly what was shown": every `proved` line of every example and fixture
/// states its scope in its summary (P symbolic for the whole domain, by enumeration over a
/// stated range, or vacuous), has a scope, and the header counts the obligations that
/// decide a range of world sizes.
#[test]
fn every_proved_line_states_its_scope() {
    let mut bad = Vec::new();
    for f in all_files() {
        let text = read(&f);
        let Some(p) = protocol(&text) else { continue };
        let r = collc_verifier::verify(&p, &Options::symbolic_only());
        let counted = r
            .method
            .decided
            .as_ref()
            .is_some_and(|d| d.symbolic + d.enumerated.len() <= d.of && d.declared == r.world);
        let head = r.method.to_string();
        if !counted || !head.contains("P symbolic: ") || !head.contains(" obligations proved for ")
        {
            bad.push(format!("{}: header {head:?}", f.display()));
        }
        for o in r.obligations.iter().filter(|o| o.status == Status::Proved) {
            let scoped = o.summary().contains(", P symbolic")
                || o.summary().contains("by enumeration over P")
                || o.summary().contains("vacuous");
            if !scoped || o.scope_text().as_deref().is_none_or(str::is_empty) || o.world.is_none() {
                bad.push(format!(
                    "{}: {}: {} [{:?}]",
                    f.display(),
                    o.id,
                    o.summary(),
                    o.scope
                ));
            }
            // A proof with P symbolic covers the declared domain; an enumeration its range.
            if o.summary().contains(", P symbolic") {
                assert_eq!(o.world, Some(r.world), "{}: {}", f.display(), o.id);
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The all_to_all_v family and the sense-reversing barrier: value-signal and fence are
/// proved with P symbolic, so every obligation that decides world sizes covers the
/// declared domain (the kernels' rank limit).
#[test]
fn value_signal_and_fence_are_proved_with_p_symbolic() {
    for name in [
        "all_to_all_v",
        "incore_all_to_all_v",
        "sense_reversing_barrier",
    ] {
        let text = example(name);
        assert!(
            value_proof(&text).is_ok(),
            "{name}: {:?}",
            value_proof(&text)
        );
        let r = report(&text);
        for id in ["value-signal", "fence"] {
            let o = r.obligations.iter().find(|o| o.id == id).expect(id);
            assert_eq!(o.status, Status::Proved, "{name}: {id}: {:?}", o.reason);
            assert!(
                o.summary().contains(", P symbolic"),
                "{name}: {id}: {}",
                o.summary()
            );
            assert_eq!(o.world, Some(r.world), "{name}: {id}");
        }
    }
    for name in ["all_to_all_v", "incore_all_to_all_v"] {
        let r = report(&example(name));
        assert_eq!(r.world_limit(), Some(r.world.hi), "{name}: {}", r.method);
    }
}

/// The reused twin with an entry barrier (each destination's `ready` credit of the call
/// precedes the Sets into it) is proved; the near handshake (only the 4 ranks before it)
/// is not: the enumerated route reports it at P = 6.
#[test]
fn next_call_ordering() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let good = read(&root.join("collc/tests/verify_fixtures/all_to_all_v_entry_barrier.coll"));
    assert!(value_proof(&good).is_ok(), "{:?}", value_proof(&good));
    let near = read(&root.join("examples/bugs/all_to_all_v_near_handshake.coll"));
    assert!(value_proof(&near).is_err());
    let r = report(&near);
    let o = r
        .obligations
        .iter()
        .find(|o| o.id == "value-signal")
        .expect("value-signal");
    assert_eq!(o.status, Status::Violated);
    let p = o.findings[0]
        .params
        .iter()
        .find(|x| x.name == "P")
        .map(|x| x.value);
    assert_eq!(p, Some(6));
}

/// Mutants of the proved examples are never proved with P symbolic.
#[test]
fn mutants_are_not_proved() {
    let a2a = example("all_to_all_v");
    let sense = example("sense_reversing_barrier");
    let set = "notify recv_counts[me] @ d = rows;";
    let mutants: Vec<(&str, String)> = vec![
        // AtomicAdd on a value cell.
        ("add", a2a.replace(set, "notify recv_counts[me] @ d += rows;")),
        // Set twice in one call.
        ("twice", a2a.replace(set, &format!("{set}\n            {set}"))),
        // Every rank Sets the same cell.
        ("one cell", a2a.replace(set, "notify recv_counts[0] @ d = rows;")),
        // No barrier after the Sets: the host may read before a remote Set.
        (
            "no wait",
            a2a.replace(
                "        for p in peers {\n            wait sig[p] >= 1;\n        }\n",
                "",
            ),
        ),
        // The reader's wait dropped: the Set of the next call is not ordered after the read.
        (
            "drop arrival wait",
            sense.replace("wait arrived[p] >= call + 1;", "wait arrived[p] >= call;"),
        ),
        // The writer's wait for the reader's arrival dropped.
        (
            "no arrival wait",
            sense.replace(
                "            for p in peers {\n                wait arrived[p] >= call + 1;\n            }\n",
                "",
            ),
        ),
        // A wait that passes on the previous call's value.
        (
            "stale read",
            sense.replace(
                "wait sense[0] == (call + 1) % 2;",
                "wait sense[0] == call % 2;",
            ),
        ),
    ];
    for (what, text) in mutants {
        let Some(p) = protocol(&text) else {
            panic!("{what}: the mutant does not validate")
        };
        let credits = collc_verifier::param::prove(&p, Duration::from_secs(20));
        let r = collc_verifier::param::value::prove(&p, &credits, Duration::from_secs(20));
        assert!(r.is_err(), "{what}: proved");
    }
}

/// Agreement with enumeration on every example and fixture (P <= 16): what the parametric
/// route proves for value-signal, the enumerated route does not refute, and on the examples
/// the enumerated route proves it too.
#[test]
fn value_signal_agrees_with_enumeration() {
    let mut bad = Vec::new();
    for f in all_files() {
        let text = read(&f);
        let Some(p) = protocol(&text) else { continue };
        let credits = collc_verifier::param::prove(&p, Duration::from_secs(20));
        let proved =
            collc_verifier::param::value::prove(&p, &credits, Duration::from_secs(20)).is_ok();
        let r = collc_verifier::check::verify(&p, &collc_verifier::check::Options::default());
        let Some(o) = r.obligations.iter().find(|o| o.id == "value-signal") else {
            continue;
        };
        // `checked`: the declared domain goes past the enumeration cap, nothing found.
        if proved && !matches!(o.status, Status::Proved | Status::Checked) {
            bad.push(format!(
                "{}: proved with P symbolic, enumerated {:?}",
                f.display(),
                o.status
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

fn idiom(path: &str) -> String {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/idioms/{path}.coll")))
}

/// Several Sets per call with P symbolic (the NVSHMEM clear-then-set): the reader's clear,
/// its ready credit and the writer's Set are ordered, and the wait passes only on the last
/// Set's value, so `value-signal` and the ranking (`deadlock`) are proved for the declared
/// domain. The ready credit before the clear (the twin) leaves the Sets unordered, and a wait
/// that also passes on the cleared 0 reads an earlier Set: neither is proved.
#[test]
fn ordered_sets_per_call_are_proved_with_p_symbolic() {
    let ok = idiom("nvshmem_flag_clear_then_set");
    if let Err(e) = value_proof(&ok) {
        panic!("the ordered clear-then-set is not proved: {e}");
    }
    let r = report(&ok);
    for id in ["value-signal", "deadlock"] {
        let o = r.get(id).expect(id);
        assert_eq!(o.status, Status::Proved, "{id}: {o:?}");
        assert!(
            o.summary().contains(", P symbolic"),
            "{id}: {}",
            o.summary()
        );
    }
    let twin = idiom("bugs/nvshmem_flag_clear_after_ready");
    let e = value_proof(&twin).expect_err("the twin's Sets are not ordered");
    assert!(e.contains("not shown ordered"), "{e}");
    let loose = ok.replace("wait flag[0] == 1;", "wait flag[0] >= 0;");
    assert_ne!(loose, ok);
    let e = value_proof(&loose).expect_err("the wait passes on the cleared 0");
    assert!(e.contains("may pass before the call's Set"), "{e}");
}
