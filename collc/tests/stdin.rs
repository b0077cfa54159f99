//! Every command that reads a `.coll` file reads standard input for the path `-`,
//! and does with it what it does with the file: the same exit code and the same
//! output, the file's name reading `<stdin>`. `collc fmt -` prints the formatted
//! text to standard output (as rustfmt and gofmt do) and writes no file.
//! (`collc lift -` is tested in `lift_cli.rs`, `collc new -o -` in `new.rs`.)

mod common;

use common::*;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `collc ARGS` in `dir` with `stdin` piped in.
fn collc_in(dir: &Path, args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(["--color", "never", "--width", "80"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run collc");
    // A command that fails early may not read its input: a broken pipe is no error here.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    let out = child.wait_with_output().expect("collc finishes");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn collc(args: &[&str], stdin: &str) -> Run {
    collc_in(&repo_root(), args, stdin)
}

/// What varies between two runs of the same work: timings (`12 ms`, `0.3 s`).
fn without_timings(s: &str) -> String {
    let mut out = String::new();
    for word in s.split_inclusive([' ', '\n', ',', ';', '(', ')']) {
        let digits = word.trim_end_matches([' ', '\n', ',', ';', '(', ')']);
        let is_num = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.');
        if is_num {
            out.push('#');
            out.push_str(&word[digits.len()..]);
        } else {
            out.push_str(word);
        }
    }
    out
}

/// Runs `args` once with `file` and once with `-` and the file's text on stdin, and
/// asserts the same exit code and output (the name `file` reading `<stdin>`).
fn same_as_the_file(args: &[&str], file: &str) -> Run {
    let with_file: Vec<&str> = args
        .iter()
        .map(|a| if *a == "-" { file } else { a })
        .collect();
    let by_path = collc(&with_file, "");
    let by_stdin = collc(args, &read(&repo_root().join(file)));
    // Generated code names the file by its last component.
    let base = file.rsplit('/').next().unwrap_or(file);
    let name = |s: &str| without_timings(&s.replace(file, "<stdin>").replace(base, "<stdin>"));
    assert_eq!(by_stdin.code, by_path.code, "{args:?}: {}", by_stdin.stderr);
    assert_eq!(name(&by_stdin.stdout), name(&by_path.stdout), "{args:?}");
    assert_eq!(name(&by_stdin.stderr), name(&by_path.stderr), "{args:?}");
    by_stdin
}

const VALID: &str = "collc/tests/inputs/valid.coll";
const MESSY: &str = "collc/tests/inputs/messy.coll";
const BAD: &str = "collc/tests/ui/type_rank_vs_count.coll";

#[test]
fn fmt_dash_prints_the_formatted_text_and_writes_no_file() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stdin-fmt");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    // The messy input comes out formatted, as `collc fmt FILE` would leave the file.
    std::fs::copy(repo_root().join(MESSY), dir.join("m.coll")).expect("copy");
    let in_place = collc_in(&dir, &["fmt", "m.coll"], "");
    assert_eq!(in_place.code, 0, "{}", in_place.stderr);
    let formatted = read(&dir.join("m.coll"));
    assert_ne!(
        formatted,
        read(&repo_root().join(MESSY)),
        "the input is messy"
    );
    let r = collc_in(&dir, &["fmt", "-"], &read(&repo_root().join(MESSY)));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, formatted);
    assert_eq!(r.stderr, "");
    // Canonical input comes out unchanged (not as nothing).
    let r = collc_in(&dir, &["fmt", "-"], &formatted);
    assert_eq!((r.code, r.stdout.as_str()), (0, formatted.as_str()));
    assert!(
        !dir.join("-").exists(),
        "`collc fmt -` wrote a file named `-`"
    );
}

#[test]
fn fmt_check_dash_names_stdin_and_invalid_input_prints_nothing() {
    let messy = read(&repo_root().join(MESSY));
    let r = collc(&["fmt", "--check", "-"], &messy);
    assert_eq!((r.code, r.stdout.as_str()), (1, "would reformat <stdin>\n"));
    let valid = read(&repo_root().join(VALID));
    let r = collc(&["fmt", "--check", "-"], &valid);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let r = collc(&["fmt", "-"], &read(&repo_root().join(BAD)));
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "", "nothing to stdout for input with errors");
    assert!(r.stderr.contains("<stdin>"), "{}", r.stderr);
}

#[test]
fn check_ir_and_cost_read_stdin() {
    same_as_the_file(&["check", "-"], VALID);
    let bad = same_as_the_file(&["check", "-"], BAD);
    assert_eq!(bad.code, 1);
    same_as_the_file(&["ir", "-"], VALID);
    same_as_the_file(&["ir", "-", "--format", "json"], VALID);
    same_as_the_file(&["cost", "-", "--param", "P=4"], VALID);
}

#[test]
fn sim_and_verify_read_stdin() {
    let r = same_as_the_file(&["sim", "-", "--param", "P=3", "--calls", "2"], VALID);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = same_as_the_file(&["verify", "-", "--no-bounded"], VALID);
    assert_eq!(
        r.code, 3,
        "the bounded obligations are skipped: {}",
        r.stdout
    );
    let r = same_as_the_file(&["verify", "-", "--explain"], VALID);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn emit_reads_stdin() {
    let r = same_as_the_file(
        &["emit", "-", "--target", "ascend"],
        "examples/barrier.coll",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("TWAIT"), "{}", r.stdout);
    same_as_the_file(&["emit", "-", "--target", "mpi"], "examples/barrier.coll");
}

#[test]
fn run_reads_stdin() {
    if Command::new("g++").arg("--version").output().is_err() {
        eprintln!("run_reads_stdin: skipped: no g++ to compile the host kernel");
        return;
    }
    let r = same_as_the_file(
        &["run", "-", "-P", "2", "--calls", "2"],
        "examples/barrier.coll",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}
