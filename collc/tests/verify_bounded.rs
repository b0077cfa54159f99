//! `collc verify`'s bounded obligations (simulator-backed: `deadlock`, `stale-pass`,
//! `data-race`, `semantics`, `window-reuse`): what each merged kernel gets (a table, not a
//! blanket pass), bug fixtures annotated `sim::deadlock` are violated with a replay
//! command, window reuse is a warning that does not fail, and incomplete or skipped
//! exploration is never reported as checked.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn collc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("run collc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const BOUNDED: [&str; 5] = [
    "deadlock",
    "stale-pass",
    "data-race",
    "semantics",
    "window-reuse",
];

/// Per merged kernel: does it race only when one data window serves back-to-back calls
/// (the `window-reuse` warning; data-race/semantics then checked with fresh windows)?
/// Every bounded obligation must be at least checked at P=2 with full tiles and calls;
/// larger P may fall back to smaller bounds within the budget, which the scope states.
const EXAMPLES: [(&str, bool); 17] = [
    ("all_to_all", true),
    ("all_to_all_v", true),
    ("allgather", true),
    ("allreduce_mesh", false),
    ("allreduce_ring", false),
    ("barrier", false),
    ("broadcast", true),
    ("broadcast_read_complete", false),
    ("incore_all_to_all", true),
    ("incore_all_to_all_v", true),
    ("incore_allgather", true),
    ("incore_allreduce_mesh", false),
    ("incore_allreduce_ring", false),
    ("incore_barrier", false),
    ("incore_broadcast", true),
    ("incore_reduce_scatter", false),
    ("reduce_scatter", false),
];

fn obligation<'a>(j: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    j["report"]["obligations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("{}: no {id}", j["file"]))
}

#[test]
fn merged_kernels_bounded_obligations() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".coll"))
        .map(|n| format!("examples/{n}"))
        .collect();
    files.sort();
    let table: Vec<String> = EXAMPLES
        .iter()
        .map(|(n, _)| format!("examples/{n}.coll"))
        .collect();
    assert_eq!(files, table, "every merged kernel has a row in EXAMPLES");
    // A generous budget: the reduced search covers every merged kernel at the full default
    // bounds in well under a second per file (release), so wall-clock load cannot shrink them.
    let mut args = vec!["verify", "--format", "json", "--bounded-budget-ms", "30000"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = collc(&args);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), EXAMPLES.len());
    for (j, (name, reuse)) in lines.iter().zip(EXAMPLES) {
        assert_eq!(j["file"], format!("examples/{name}.coll"));
        for id in BOUNDED {
            let o = obligation(j, id);
            let want = if id == "window-reuse" && reuse {
                "warning"
            } else {
                "checked"
            };
            assert_eq!(o["status"], want, "{name}: {id}: {o}");
            assert_eq!(o["code"], format!("verify::{id}"));
            let scope = o["scope"].as_str().unwrap();
            assert!(
                scope.contains("P=2") && scope.contains("complete"),
                "{name}: {id}: {scope}"
            );
            if scope.contains("not explored") {
                assert!(scope.contains("(budget)"), "{scope}");
            }
        }
        if reuse {
            for id in ["data-race", "semantics"] {
                let s = obligation(j, id)["scope"].as_str().unwrap().to_string();
                assert!(s.starts_with("fresh data window per call: "), "{name}: {s}");
            }
            let f = &obligation(j, "window-reuse")["findings"][0];
            assert!(f["help"].as_str().unwrap().contains("fresh data window"));
            assert!(f["message"]
                .as_str()
                .unwrap()
                .contains(&format!("collc sim examples/{name}.coll --param P=2")));
        }
    }
    // Every merged kernel completes at the full default bounds.
    for j in &lines {
        for id in BOUNDED.iter().filter(|id| **id != "window-reuse") {
            let s = obligation(j, id)["scope"].as_str().unwrap();
            // The sc run's scope; the relaxed run's follows (its bounds are smaller).
            let (s, relaxed) = s.split_once("; relaxed memory: ").unwrap_or((s, ""));
            assert!(
                relaxed.contains("2 calls") || relaxed.contains("not explored (budget)"),
                "{}: {id}: relaxed part {relaxed:?}",
                j["file"]
            );
            let s = s.strip_prefix("fresh data window per call: ").unwrap_or(s);
            assert!(
                s.starts_with("P=2..4, 1..3 tiles, 3 calls: ") && s.ends_with("complete"),
                "{}: {id}: {s}",
                j["file"]
            );
            assert!(!s.contains("not explored"), "{s}");
        }
    }
}

#[test]
fn sim_deadlock_fixtures_are_violated_with_a_replay() {
    for f in [
        "examples/bugs/barrier_set0_reset.coll",
        "examples/bugs/unreachable_threshold.coll",
    ] {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        let line = text
            .lines()
            .position(|l| l.contains("expect:") && l.contains("sim::deadlock"))
            .map(|i| i + 1)
            .expect("annotated sim::deadlock");
        let (code, out, err) = collc(&["verify", "--format", "json", f]);
        assert_eq!(code, 1, "{out}{err}");
        let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        let o = obligation(&j, "deadlock");
        assert_eq!(o["status"], "violated", "{f}: {o}");
        let fd = &o["findings"][0];
        assert_eq!(fd["params"][0]["name"], "P");
        let notes: Vec<&str> = fd["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(
            notes[0].starts_with(&format!("replay: collc sim {f} --param P=")),
            "{notes:?}"
        );
        assert!(notes.iter().any(|n| n.starts_with("trace: step ")));
        assert!(!fd["primary"].is_null(), "{f}: a label on the statement");
        let d = j["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "verify::deadlock")
            .expect("deadlock diagnostic");
        assert!(d["line"].as_u64().unwrap() > 0, "{d}");
        let _ = line; // the annotated line; the trace's statement may be a peer's
    }
}

#[test]
fn broadcast_window_reuse_is_a_warning() {
    let (code, out, err) = collc(&[
        "verify",
        "--bounded-budget-ms",
        "1500",
        "examples/broadcast.coll",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("verify::window-reuse"), "{err}");
    assert!(err.contains("collc sim examples/broadcast.coll"), "{err}");
    assert!(
        err.contains("safe when each call gets a fresh data window"),
        "{err}"
    );
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("window-reuse"))
        .unwrap();
    assert!(line.contains("warning"), "{line}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("deadlock"))
        .unwrap();
    assert!(
        line.contains("checked") && line.contains("states, complete"),
        "{line}"
    );
}

#[test]
fn incomplete_or_skipped_is_never_checked() {
    let (code, out, err) = collc(&[
        "verify",
        "--bounded-max-states",
        "5",
        "examples/barrier.coll",
    ]);
    assert_eq!(code, 3, "{out}{err}");
    for id in BOUNDED {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(id))
            .unwrap();
        assert!(line.contains("unknown"), "{line}");
        assert!(line.contains("explored completely: nothing"), "{line}");
    }
    let (code, out, err) = collc(&["verify", "--no-bounded", "examples/barrier.coll"]);
    assert_eq!(code, 0, "{out}{err}");
    for id in BOUNDED {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(id))
            .unwrap();
        assert!(line.contains("skipped"), "{line}");
    }
}
