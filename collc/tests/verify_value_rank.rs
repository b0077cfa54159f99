//! `collc verify` on value-signal barriers: the sense-reversing barrier's release (a wait
//! on a value signal) is proved deadlock-free and reached with P symbolic over its declared
//! domain, and the two-level variant whose leaders wait for the release before reporting
//! deadlocks from P = 5 on, reported at that smallest P (the ranking's Z3 counterexample
//! names it for the bounded run).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn verify_json(file: &str) -> (i32, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(["verify", "--format", "json", file])
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("run collc");
    let text = String::from_utf8_lossy(&out.stdout);
    let j = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{file}: {e}: {text}"));
    (out.status.code().unwrap_or(-1), j)
}

fn obligation<'a>(j: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    j["report"]["obligations"]
        .as_array()
        .and_then(|v| v.iter().find(|o| o["id"] == id))
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn the_sense_reversing_barrier_is_proved_for_its_whole_domain() {
    let (code, j) = verify_json("examples/sense_reversing_barrier.coll");
    assert_eq!(code, 0, "{j}");
    for id in ["wait-reachable", "overflow-horizon", "deadlock"] {
        let o = obligation(&j, id);
        assert_eq!(o["status"], "proved", "{id}: {o}");
        let s = o["summary"].as_str().unwrap_or_default();
        assert!(s.contains("all P in 1..=65536, P symbolic"), "{id}: {s}");
        assert!(!s.contains("by enumeration"), "{id}: {s}");
    }
}

#[test]
fn a_leader_waiting_for_its_release_before_reporting_deadlocks_from_p5() {
    let file = "examples/bugs/sense_tree_barrier_late_report.coll";
    let (code, j) = verify_json(file);
    assert_eq!(code, 1, "{j}");
    let o = obligation(&j, "deadlock");
    assert_eq!(o["status"], "violated", "{o}");
    let params = &o["findings"][0]["params"];
    assert_eq!(params[0]["name"], "P", "{params}");
    assert_eq!(params[0]["value"], 5, "{params}");
    // The parametric route does not rank it, and Z3 names P = 5, the smallest size past
    // the flat barrier's (P <= 4: one group).
    let text = std::fs::read_to_string(root().join(file)).expect("read");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("the fixture validates");
    let out = collc_verifier::param::prove(&p, Duration::from_secs(20));
    assert!(out.proof("deadlock").is_none(), "{:?}", out.results);
    let above: Vec<i64> = out
        .named_worlds
        .iter()
        .copied()
        .filter(|w| *w > 4)
        .collect();
    assert_eq!(above.first(), Some(&5), "{:?}", out.named_worlds);
}
