//! What `collc verify` prints, as cargo and clippy do: a verified file is one line; a file
//! that is not is one line naming what failed, then one diagnostic per root cause (the
//! obligations that found the same statement shown once, the others as "also"); after
//! several files one summary line naming the files that failed. `--format short` is one
//! line per root cause, `--verbose` the table of every obligation, SARIF one result per
//! root cause with the others as related locations.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn collc(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
        .args(["--color", "never", "--width", "100"])
        .args(args)
        .output()
        .expect("run collc");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const BUG: &str = "examples/bugs/barrier_no_epilogue.coll";

#[test]
fn every_example_verified_is_one_line_each_and_a_summary() {
    let examples: Vec<String> = coll_files("examples").iter().map(|p| rel(p)).collect();
    assert!(examples.len() >= 20, "{examples:?}");
    let mut args = vec!["verify"];
    args.extend(examples.iter().map(String::as_str));
    let r = collc(&args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "", "nothing on stderr when everything passes");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), examples.len() + 1, "{}", r.stdout);
    for (line, f) in lines.iter().zip(&examples) {
        assert!(line.starts_with(&format!("verified {f}: ")), "{line}");
    }
    let summary = lines.last().expect("a summary");
    let n = examples.len();
    assert!(
        summary.starts_with(&format!(
            "verify: {n} files: {n} verified, 0 violated, 0 unknown, 0 invalid ("
        )),
        "{summary}"
    );
    assert!(!summary.contains("failed"), "{summary}");
}

/// The `╭─[FILE:LINE:COL]` places of the rendered diagnostics of a log.
fn places(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.split("╭─[").nth(1))
        .map(|p| p.trim_end_matches(']').to_string())
        .collect()
}

#[test]
fn a_failing_file_gets_one_diagnostic_per_root_cause_and_is_named_in_the_summary() {
    let r = collc(&["verify", "examples/barrier.coll", BUG]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    assert!(lines[0].starts_with("verified examples/barrier.coll: "));
    assert!(
        lines[1].starts_with(&format!("violated {BUG}: credit-balance")),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].ends_with(&format!("; failed: {BUG} (violated)")),
        "{}",
        lines[2]
    );
    // One diagnostic per place: no place is shown twice.
    let at = places(&r.stderr);
    let distinct: BTreeSet<&String> = at.iter().collect();
    assert!(!at.is_empty(), "{}", r.stderr);
    assert_eq!(at.len(), distinct.len(), "{at:?}\n{}", r.stderr);
    // Every diagnostic `--verbose` shows is here, once: as a root cause or listed with one.
    let v = collc(&["verify", "--verbose", BUG]);
    assert_eq!(v.code, 1);
    let also = r.stderr.matches("note: also verify::").count();
    assert_eq!(at.len() + also, places(&v.stderr).len(), "{}", r.stderr);
    assert!(also > 0, "{}", r.stderr);
    // No simulator trace without --verbose; the replay command is there.
    assert!(!r.stderr.contains("scheduler steps"), "{}", r.stderr);
    assert!(r.stderr.contains("replay: collc sim "), "{}", r.stderr);
    assert!(r.stdout.lines().count() + r.stderr.lines().count() < 80);

    // --verbose: the table of every obligation and the traces.
    assert!(
        v.stdout.starts_with(&format!("verify {BUG}: ")),
        "{}",
        v.stdout
    );
    for id in ["credit-balance", "op-exclusivity", "deadlock", "semantics"] {
        assert!(
            v.stdout.lines().any(|l| l.trim_start().starts_with(id)),
            "{id}: {}",
            v.stdout
        );
    }
    assert!(v.stderr.contains("scheduler steps"), "{}", v.stderr);
}

#[test]
fn short_format_is_one_line_per_root_cause() {
    let text = collc(&["verify", BUG]);
    let r = collc(&["verify", "--format", "short", "examples/barrier.coll", BUG]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let (summary, causes) = lines.split_last().expect("lines");
    assert!(summary.starts_with("verify: 2 files: 1 verified, 1 violated"));
    assert!(summary.contains(&format!("failed: {BUG} (violated)")));
    assert_eq!(causes.len(), places(&text.stderr).len(), "{}", r.stdout);
    let mut seen = BTreeSet::new();
    for l in causes {
        let (place, rest) = l.split_at(l.find(": ").expect("FILE:LINE:COL: "));
        let parts: Vec<&str> = place.split(':').collect();
        assert_eq!(parts.len(), 3, "{l}");
        assert_eq!(parts[0], BUG);
        assert!(parts[1].parse::<usize>().is_ok() && parts[2].parse::<usize>().is_ok());
        assert!(rest.starts_with(": error[verify::"), "{l}");
        assert!(seen.insert(place.to_string()), "{place} twice");
    }
    assert!(causes.iter().any(|l| l.contains(" (also: verify::")));
    // A file with errors: its front-end diagnostics, one line each.
    let bad = collc(&[
        "verify",
        "--format",
        "short",
        "collc/tests/ui/resolve_unknown.coll",
    ]);
    assert_eq!(bad.code, 1);
    assert!(bad
        .stdout
        .lines()
        .all(|l| l.starts_with("collc/tests/ui/resolve_unknown.coll:") && l.contains("]: ")));
}

#[test]
fn sarif_has_one_result_per_root_cause_with_the_others_related() {
    let r = collc(&["verify", "--format", "sarif", BUG]);
    assert_eq!(r.code, 1);
    let log: serde_json::Value = serde_json::from_str(&r.stdout).expect("SARIF is JSON");
    let results = log["runs"][0]["results"].as_array().expect("results");
    let mut seen = BTreeSet::new();
    for res in results {
        let region = &res["locations"][0]["physicalLocation"]["region"];
        let at = format!("{}:{}", region["startLine"], region["startColumn"]);
        assert!(seen.insert(at), "{res}");
    }
    let related = results
        .iter()
        .find(|res| res["properties"]["also"].is_array());
    let related = related.expect("a result with others of the same place");
    let also = related["relatedLocations"].as_array().expect("related");
    assert!(also.iter().any(|l| l["message"]["text"]
        .as_str()
        .is_some_and(|m| m.starts_with("also verify::"))));
}
