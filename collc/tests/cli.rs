//! Golden tests of the `collc` command line: exit codes (0 ok, 1 input wrong,
//! 2 usage or I/O), what goes to stdout and stderr, `--format json`, and
//! `fmt` / `ir` on real files. Output is pinned with `--color never --width 80`.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `collc` from the repository root with colour off and width 80.
fn collc(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo_root())
        .env("NO_COLOR", "1")
        .args(["--color", "never", "--width", "80"])
        .args(args)
        .output()
        .expect("run collc");
    Run {
        code: out
            .status
            .code()
            .expect("collc exited normally, not by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

const VALID: &str = "collc/tests/inputs/valid.coll";
const MESSY: &str = "collc/tests/inputs/messy.coll";
const BAD_TYPES: &str = "collc/tests/ui/type_rank_vs_count.coll";
const BAD_SYNTAX: &str = "collc/tests/ui/syntax_missing_semicolon_stmt.coll";

#[test]
fn check_ok_exits_0_and_prints_a_summary() {
    let r = collc(&["check", VALID]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert_eq!(r.stderr, "checked 1 file(s): 1 ok, 0 with errors\n");
}

#[test]
fn check_bad_input_exits_1() {
    let r = collc(&["check", "collc/tests/ui/place_wait_remote.coll"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    insta::assert_snapshot!(r.stderr);
}

#[test]
fn check_missing_file_exits_2() {
    let r = collc(&["check", "no/such/file.coll"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("error: cannot read `no/such/file.coll`: "),
        "{}",
        r.stderr
    );
    assert!(r
        .stderr
        .ends_with("checked 1 file(s): 0 ok, 1 with errors\n"));
}

#[test]
fn check_a_directory_exits_2() {
    let r = collc(&["check", "collc/tests"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("error: cannot read `collc/tests`"));
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        &[][..],
        &["check"][..],
        &["frobnicate", VALID][..],
        &["check", "--format", "xml", VALID][..],
        &["ir"][..],
        &["ir", VALID, "--format", "yaml"][..],
        &["fmt", "--bogus", VALID][..],
    ] {
        let r = collc(args);
        assert_eq!(r.code, 2, "collc {args:?}: {}", r.stderr);
        assert_eq!(r.stdout, "", "collc {args:?}");
        assert!(!r.stderr.is_empty(), "collc {args:?} explains itself");
    }
}

#[test]
fn check_several_files_reports_every_error_of_every_file() {
    let r = collc(&["check", BAD_SYNTAX, VALID, BAD_TYPES]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    // Every annotated error of both bad files, in file order.
    let codes: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with(' ') && l.contains("::"))
        .collect();
    let mut want: Vec<String> = Vec::new();
    for f in [BAD_SYNTAX, BAD_TYPES] {
        want.extend(
            annotations(&read(&repo_root().join(f)))
                .into_iter()
                .map(|(_, c)| c),
        );
    }
    assert_eq!(codes, want);
    assert!(r
        .stderr
        .ends_with("checked 3 file(s): 1 ok, 2 with errors\n"));
    insta::assert_snapshot!(r.stderr);
}

#[test]
fn check_exit_code_is_the_worst_of_all_files() {
    let r = collc(&["check", BAD_TYPES, "missing.coll", VALID]);
    assert_eq!(r.code, 2, "I/O beats bad input");
    assert!(r.stderr.contains("error: cannot read `missing.coll`"));
    assert!(
        r.stderr.contains("type::expected-count"),
        "the other files are still checked"
    );
    assert!(r
        .stderr
        .ends_with("checked 3 file(s): 1 ok, 2 with errors\n"));
}

#[test]
fn check_json_gives_one_object_per_diagnostic() {
    let r = collc(&["check", "--format", "json", BAD_SYNTAX, BAD_TYPES, VALID]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "", "JSON mode writes no summary");
    let mut got = Vec::new();
    for line in r.stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
        let o = v.as_object().expect("an object");
        let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(
            keys,
            ["code", "column", "file", "help", "labels", "line", "message", "notes", "severity"]
        );
        assert_eq!(o["severity"], "error");
        assert!(o["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(o["help"].is_null() || o["help"].is_string());
        assert!(o["notes"].is_array());
        assert!(o["column"].as_u64().is_some_and(|c| c >= 1));
        let labels = o["labels"].as_array().expect("labels");
        assert!(labels.iter().any(|l| l["primary"] == true));
        for l in labels {
            let (s, e) = (l["span"]["start"].as_u64(), l["span"]["end"].as_u64());
            assert!(s.is_some() && e.is_some() && s <= e, "{l}");
            assert!(l["message"].is_string());
        }
        got.push((
            o["file"].as_str().expect("file").to_string(),
            o["line"].as_u64().expect("line") as usize,
            o["code"].as_str().expect("code").to_string(),
        ));
    }
    let mut want = Vec::new();
    for f in [BAD_SYNTAX, BAD_TYPES] {
        for (line, code) in annotations(&read(&repo_root().join(f))) {
            want.push((f.to_string(), line, code));
        }
    }
    assert_eq!(got, want);
    // The first diagnostic, whole.
    let first: serde_json::Value =
        serde_json::from_str(r.stdout.lines().next().expect("one")).expect("JSON");
    insta::assert_snapshot!(serde_json::to_string_pretty(&first).expect("pretty"));
}

#[test]
fn check_json_reports_an_unreadable_file_as_a_record() {
    let r = collc(&["check", "--format", "json", "missing.coll", VALID]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr, "");
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).expect("one JSON line");
    assert_eq!(v["code"], "input::unreadable");
    assert_eq!(v["file"], "missing.coll");
    assert_eq!(
        (v["line"].as_u64(), v["column"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(v["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("cannot read `missing.coll`")));
}

#[cfg(unix)]
#[test]
fn fmt_keeps_the_file_mode_and_leaves_no_temporary_file() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("fmt-mode");
    let f = d.join("messy.coll");
    std::fs::copy(repo_root().join(MESSY), &f).expect("copy");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let r = collc(&["fmt", &f.to_string_lossy()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mode = std::fs::metadata(&f).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let names: Vec<String> = std::fs::read_dir(&d)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["messy.coll"]);
}

#[test]
fn check_json_of_a_valid_file_is_empty() {
    let r = collc(&["check", "--format", "json", VALID]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
}

#[test]
fn fmt_check_is_0_when_clean_and_1_when_it_would_change() {
    let d = scratch("fmt-check");
    let messy = d.join("messy.coll");
    std::fs::copy(repo_root().join(MESSY), &messy).expect("copy");
    let messy = messy.to_string_lossy().into_owned();
    let before = std::fs::read(&messy).expect("read");

    let r = collc(&["fmt", "--check", &messy]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, format!("would reformat {messy}\n"));
    assert_eq!(
        std::fs::read(&messy).expect("read"),
        before,
        "--check writes nothing"
    );

    let r = collc(&["fmt", &messy]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, format!("formatted {messy}\n"));

    let r = collc(&["fmt", "--check", &messy]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
}

#[test]
fn fmt_rewrites_in_place_canonically() {
    let d = scratch("fmt-in-place");
    let messy = d.join("messy.coll");
    std::fs::copy(repo_root().join(MESSY), &messy).expect("copy");
    let r = collc(&["fmt", &messy.to_string_lossy()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let formatted = std::fs::read_to_string(&messy).expect("read");
    insta::assert_snapshot!(formatted);
    // Same protocol as before.
    let a = collc_spec::lowered(&read(&repo_root().join(MESSY)))
        .protocol
        .expect("valid");
    let b = collc_spec::lowered(&formatted)
        .protocol
        .expect("still valid");
    assert_eq!(ir_without_spans(&a), ir_without_spans(&b));
    // A second run changes nothing and says nothing.
    let r = collc(&["fmt", &messy.to_string_lossy()]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert_eq!(std::fs::read_to_string(&messy).expect("read"), formatted);
}

#[test]
fn fmt_leaves_a_file_with_errors_alone() {
    let d = scratch("fmt-errors");
    let bad = d.join("bad.coll");
    std::fs::copy(repo_root().join(BAD_TYPES), &bad).expect("copy");
    let before = std::fs::read(&bad).expect("read");
    let bad = bad.to_string_lossy().into_owned();
    let r = collc(&["fmt", &bad]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("type::expected-count"));
    assert!(r.stderr.ends_with(&format!(
        "error: `{bad}` was not formatted because it has errors\n"
    )));
    assert_eq!(std::fs::read(&bad).expect("read"), before);
    let r = collc(&["fmt", "--check", &bad]);
    assert_eq!(r.code, 1);
}

#[test]
fn fmt_missing_file_exits_2() {
    let r = collc(&["fmt", "no/such.coll"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.starts_with("error: cannot read `no/such.coll`"));
}

#[test]
fn ir_text_is_the_canonical_print() {
    let r = collc(&["ir", VALID]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    insta::assert_snapshot!(r.stdout);
    // It parses back to the same IR.
    let a = collc_spec::lowered(&read(&repo_root().join(VALID)))
        .protocol
        .expect("valid");
    let b = collc_spec::lowered(&r.stdout)
        .protocol
        .expect("ir output checks");
    assert_eq!(ir_without_spans(&a), ir_without_spans(&b));
}

#[test]
fn ir_json_is_the_serialised_protocol() {
    let r = collc(&["ir", "--format", "json", VALID]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["name"], "cli_barrier");
    // `barrier()`: every block of every rank (no lane variable; `barrier(blk)` names one).
    assert_eq!(
        v["semantics"],
        serde_json::json!({"Barrier": {"lane": null}})
    );
    let p: collc_spec::ir::Protocol = serde_json::from_value(v).expect("deserialises as the IR");
    let a = collc_spec::lowered(&read(&repo_root().join(VALID)))
        .protocol
        .expect("valid");
    assert_eq!(p, a, "the JSON is the whole IR, spans included");
}

#[test]
fn ir_of_bad_or_missing_input() {
    let r = collc(&["ir", BAD_TYPES]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("type::expected-count"));
    let r = collc(&["ir", "--format", "json", "nope.coll"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.starts_with("error: cannot read `nope.coll`"));
}

#[test]
fn non_utf8_input_is_reported_with_its_location() {
    let d = scratch("non-utf8");
    let f = d.join("latin1.coll");
    std::fs::write(
        &f,
        b"collective x: barrier() {\n  ranks P in 1..=4; // caf\xe9\n  body { }\n}\n",
    )
    .expect("write");
    let r = collc(&["check", &f.to_string_lossy()]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("input::not-utf8"), "{}", r.stderr);
    assert!(
        r.stderr.contains("invalid byte 0xe9 at offset 52 (line 2)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("not UTF-8"),
        "the label is shown: {}",
        r.stderr
    );
}

#[test]
fn a_10_mb_file_is_refused_without_being_parsed() {
    let d = scratch("too-large");
    let f = d.join("huge.coll");
    let mut text =
        String::from("collective big: barrier() {\n    ranks P in 1..=16;\n    body {\n");
    while text.len() < 10 << 20 {
        text.push_str("        fence;\n");
    }
    text.push_str("    }\n}\n");
    std::fs::write(&f, &text).expect("write");
    let r = collc(&["check", &f.to_string_lossy()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("input::too-large"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "file is {} bytes, over the limit of 1048576 bytes",
            text.len()
        )),
        "{}",
        r.stderr
    );
}
