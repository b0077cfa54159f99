//! `collc verify --format sarif`: one SARIF 2.1.0 log for every file — validated against
//! the schema's constraints on what collc emits (required properties, types, enums,
//! index consistency), every annotated bug fixture's `verify::` codes at their annotated
//! lines, front-end errors and unreadable files, exit codes, and a golden.

mod common;

use serde_json::Value;
use std::process::Command;

fn collc(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(common::repo_root())
        .env("NO_COLOR", "1")
        .output()
        .expect("collc runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn is_uint(v: &Value) -> bool {
    v.as_u64().is_some()
}

/// The SARIF 2.1.0 schema's constraints on the objects collc writes (sarif-schema-2.1.0:
/// `sarifLog`, `run`, `tool`, `toolComponent`, `reportingDescriptor`, `result`,
/// `location`, `physicalLocation`, `artifactLocation`, `region`, `message`,
/// `invocation`, `notification`): required properties, types, enumerations, minimums,
/// and that indices point into their arrays.
fn violations(log: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let mut need = |ok: bool, what: &str| {
        if !ok {
            bad.push(what.to_string());
        }
    };
    need(log["version"] == "2.1.0", "sarifLog.version is \"2.1.0\"");
    need(
        log["$schema"].is_string(),
        "sarifLog.$schema is a URI string",
    );
    let Some(runs) = log["runs"].as_array() else {
        return vec!["sarifLog.runs is an array".into()];
    };
    for run in runs {
        let driver = &run["tool"]["driver"];
        need(driver["name"].is_string(), "toolComponent.name");
        let rules = driver["rules"].as_array().cloned().unwrap_or_default();
        let mut ids = Vec::new();
        for r in &rules {
            need(r["id"].is_string(), "reportingDescriptor.id");
            need(
                r["shortDescription"]["text"].is_string(),
                "multiformatMessageString.text",
            );
            ids.push(r["id"].as_str().unwrap_or("").to_string());
        }
        let mut dedup = ids.clone();
        dedup.sort();
        dedup.dedup();
        need(dedup.len() == ids.len(), "rules have unique ids");
        let artifacts = run["artifacts"].as_array().cloned().unwrap_or_default();
        for a in &artifacts {
            need(a["location"]["uri"].is_string(), "artifact.location.uri");
        }
        need(
            ["utf16CodeUnits", "unicodeCodePoints"]
                .contains(&run["columnKind"].as_str().unwrap_or("")),
            "run.columnKind enum",
        );
        let results = run["results"].as_array().cloned();
        need(results.is_some(), "run.results is an array");
        let results = results.unwrap_or_default();
        for res in &results {
            need(
                res["message"]["text"]
                    .as_str()
                    .is_some_and(|t| !t.is_empty()),
                "result.message.text",
            );
            let id = res["ruleId"].as_str().unwrap_or("");
            let ix = res["ruleIndex"].as_u64().map(|i| i as usize);
            need(
                ix.is_some_and(|i| ids.get(i).is_some_and(|x| x == id)),
                "result.ruleIndex points at the rule with its ruleId",
            );
            need(
                ["none", "note", "warning", "error"].contains(&res["level"].as_str().unwrap_or("")),
                "result.level enum",
            );
            need(
                [
                    "notApplicable",
                    "pass",
                    "fail",
                    "review",
                    "open",
                    "informational",
                ]
                .contains(&res["kind"].as_str().unwrap_or("")),
                "result.kind enum",
            );
            let mut locs: Vec<&Value> = res["locations"]
                .as_array()
                .map(|v| v.iter().collect())
                .unwrap_or_default();
            need(!locs.is_empty(), "result.locations");
            if let Some(rel) = res["relatedLocations"].as_array() {
                for r in rel {
                    need(is_uint(&r["id"]), "location.id is a non-negative integer");
                    need(
                        r["message"]["text"].is_string() || r.get("message").is_none(),
                        "location.message.text",
                    );
                    locs.push(r);
                }
            }
            for l in locs {
                let pl = &l["physicalLocation"];
                let al = &pl["artifactLocation"];
                need(al["uri"].is_string(), "artifactLocation.uri");
                if let Some(i) = al["index"].as_u64() {
                    need(
                        artifacts
                            .get(i as usize)
                            .is_some_and(|a| a["location"]["uri"] == al["uri"]),
                        "artifactLocation.index points at its artifact",
                    );
                }
                let r = &pl["region"];
                if !r.is_null() {
                    let sl = r["startLine"].as_u64().unwrap_or(0);
                    let el = r["endLine"].as_u64().unwrap_or(0);
                    let sc = r["startColumn"].as_u64().unwrap_or(0);
                    let ec = r["endColumn"].as_u64().unwrap_or(0);
                    need(
                        sl >= 1 && sc >= 1 && el >= sl,
                        "region lines and columns >= 1, endLine >= startLine",
                    );
                    need(
                        el > sl || ec >= sc,
                        "region endColumn >= startColumn on one line",
                    );
                    need(
                        is_uint(&r["charOffset"]) && is_uint(&r["charLength"]),
                        "region charOffset/charLength >= 0",
                    );
                }
            }
        }
        for inv in run["invocations"].as_array().cloned().unwrap_or_default() {
            need(
                inv["executionSuccessful"].is_boolean(),
                "invocation.executionSuccessful (required)",
            );
            need(inv["exitCode"].is_i64(), "invocation.exitCode");
            for n in inv["toolExecutionNotifications"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                need(
                    n["message"]["text"].is_string(),
                    "notification.message.text",
                );
            }
        }
    }
    bad
}

#[test]
fn every_bug_fixture_is_reported_at_its_annotated_lines() {
    let files = common::coll_files("examples/bugs");
    let names: Vec<String> = files
        .iter()
        .map(|f| {
            format!(
                "examples/bugs/{}",
                f.file_name().and_then(|n| n.to_str()).unwrap_or("")
            )
        })
        .collect();
    let mut args = vec!["verify", "--format", "sarif", "--no-bounded"];
    args.extend(names.iter().map(String::as_str));
    let (code, log, _) = collc(&args);
    assert_eq!(code, 1, "violations exit 1");
    assert_eq!(violations(&log), Vec::<String>::new());
    let results = log["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], 1);
    for (f, name) in files.iter().zip(&names) {
        let text = std::fs::read_to_string(f).expect("read");
        for (i, line) in text.lines().enumerate() {
            let Some((_, list)) = line.split_once("expect:") else {
                continue;
            };
            for code in list
                .split(',')
                .map(str::trim)
                .filter(|c| c.starts_with("verify::"))
            {
                // One result per root cause: the code is its rule, or one of the
                // other obligations of the same place (`also`).
                let found = results.iter().any(|r| {
                    let also = r["properties"]["also"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|c| c == code));
                    (r["ruleId"] == code || also)
                        && r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                            == name.as_str()
                        && r["locations"][0]["physicalLocation"]["region"]["startLine"]
                            == i as u64 + 1
                });
                assert!(found, "{name}:{}: {code} not reported there", i + 1);
            }
        }
    }
}

#[test]
fn a_verified_file_has_no_results_and_exits_0() {
    let (code, log, _) = collc(&["verify", "--format", "sarif", "examples/barrier.coll"]);
    assert_eq!(code, 0);
    assert_eq!(violations(&log), Vec::<String>::new());
    assert_eq!(log["runs"][0]["results"].as_array().map(Vec::len), Some(0));
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

#[test]
fn invalid_and_unreadable_files_are_in_the_log() {
    let (code, log, err) = collc(&[
        "verify",
        "--format",
        "sarif",
        "collc/tests/ui/syntax_missing_semicolon.coll",
        "does/not/exist.coll",
    ]);
    assert_eq!(code, 2, "an unreadable file is a usage error: {err}");
    assert_eq!(violations(&log), Vec::<String>::new());
    let results = log["runs"][0]["results"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        results.iter().any(|r| r["ruleId"]
            .as_str()
            .is_some_and(|c| c.starts_with("syntax::") || c.starts_with("parse::"))),
        "{log}"
    );
    let notes = &log["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    assert!(notes.as_array().is_some_and(|n| n.len() == 1), "{log}");
}

#[test]
fn golden() {
    let (code, log, _) = collc(&[
        "verify",
        "--format",
        "sarif",
        "--no-bounded",
        "examples/bugs/barrier_set0_reset.coll",
    ]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(serde_json::to_string_pretty(&log).unwrap_or_default());
}

/// The documented pre-commit hook (docs/ci/pre-commit) in a scratch repository: a
/// staged correct protocol commits, a staged bug fixture is refused with collc's exit
/// code, and what is verified is the staged content, not the working tree.
#[test]
fn the_pre_commit_hook_gates_staged_protocols() {
    let root = common::repo_root();
    let dir = std::env::temp_dir().join(format!("collc-hook-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .expect("git runs")
    };
    assert!(git(&["init", "-q"]).status.success());
    let hook = |name: &str, flags: &str| {
        Command::new("bash")
            .arg(root.join("docs/ci/pre-commit"))
            .current_dir(&dir)
            .env("COLLC", env!("CARGO_BIN_EXE_collc"))
            .env("COLLC_VERIFY_FLAGS", flags)
            .output()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    // Nothing staged: nothing to verify.
    assert_eq!(hook("empty", "").status.code(), Some(0));
    let good = std::fs::read_to_string(root.join("examples/barrier.coll")).expect("read");
    let bad =
        std::fs::read_to_string(root.join("examples/bugs/barrier_set0_reset.coll")).expect("read");
    std::fs::create_dir_all(dir.join("k")).expect("mkdir");
    std::fs::write(dir.join("k/barrier.coll"), &bad).expect("write");
    assert!(git(&["add", "k/barrier.coll"]).status.success());
    // The working tree is fixed but the staged content is the bug: refused (exit 1).
    std::fs::write(dir.join("k/barrier.coll"), &good).expect("write");
    let out = hook("bad", "--no-bounded");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("commit refused"));
    assert!(git(&["add", "k/barrier.coll"]).status.success());
    // --no-bounded leaves the bounded obligations undecided: exit 3, still refused.
    assert_eq!(hook("undecided", "--no-bounded").status.code(), Some(3));
    // Fully verified: the commit goes ahead.
    let out = hook("good", "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
