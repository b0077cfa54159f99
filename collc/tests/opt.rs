//! `collc opt`: the tile-coalescing pass on the shipped protocols that have a `const TILE`
//! (the result validates, passes the gate, makes fewer waits per call by `collc cost`, and
//! runs on the host and, when `mpirun` is installed, over MPI at np 2), the goldens of every
//! pass (`collc/tests/opt_applied/`), and the refusal fixtures of `collc/tests/opt/`, whose first line says what must happen:
//! `// opt: PASS refused: REASON` (the pass itself refuses, REASON in the message) or
//! `// opt: PASS refused by the gate: CODE` (the transformed protocol fails the gate with
//! CODE). Every fixture passes the gate before the pass, but one whose second line is
//! `// gate before: CODE`: a correct protocol the verifier refuses with exactly CODE (the
//! fixture says why).

use std::path::Path;
use std::process::Command;

mod common;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn collc(args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(common::repo_root())
        .output()
        .expect("run collc");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn tmp(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("collc-opt-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name).to_string_lossy().into_owned()
}

/// The value of `collc cost`'s row `what` at the parameters.
fn cost(file: &str, what: &str, params: &[&str]) -> i64 {
    let mut a = vec!["cost", file, "--format", "json"];
    a.extend_from_slice(params);
    let r = collc(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|x| x["what"] == what)
        .and_then(|x| x["value"].as_i64())
        .unwrap_or_else(|| panic!("no {what} in {}", r.stdout))
}

fn coalesced(example: &str, params: &[&str]) -> String {
    let out = tmp(&format!("{example}_x8.coll"));
    let src = format!("examples/{example}.coll");
    let mut a = vec!["opt", &src, "--pass", "coalesce=8", "-o", &out];
    a.extend_from_slice(params);
    let r = collc(&a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains("const TILE = 256 * 8;"), "{text}");
    assert!(text.contains("// Re-verified: the gate passed"), "{text}");
    assert!(
        text.contains("waits: "),
        "the header carries the cost rows: {text}"
    );
    let (before, after) = (cost(&src, "waits", params), cost(&out, "waits", params));
    assert!(after < before, "{example}: waits {before} -> {after}");
    out
}

#[test]
fn coalesced_allreduce_and_broadcast_run_on_host() {
    let params = [
        "-P", "3", "--param", "n=5000", "--param", "C=1", "--param", "stride=1",
    ];
    let ar = coalesced("allreduce_mesh", &params);
    // 5000 elements: two coalesced tiles of 2048 and a partial one.
    let r = collc(&[
        "run", &ar, "--target", "host", "-P", "3", "--param", "n=5000", "--param", "C=1",
        "--param", "stride=1",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let bparams = ["-P", "3", "--param", "n=5000", "--param", "root=1"];
    let bc = coalesced("broadcast_read_complete", &bparams);
    let r = collc(&[
        "run", &bc, "--target", "host", "-P", "3", "--param", "n=5000", "--param", "root=1",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!("skipped the MPI runs of the coalesced protocols: mpirun is not installed");
        return;
    }
    for (file, extra) in [
        (&ar, vec!["--param", "C=1", "--param", "stride=1"]),
        (&bc, vec!["--param", "root=1"]),
    ] {
        let mut a = vec![
            "run",
            file.as_str(),
            "--target",
            "mpi",
            "-P",
            "2",
            "--param",
            "n=5000",
        ];
        a.extend_from_slice(&extra);
        let r = collc(&a);
        assert_eq!(r.code, 0, "{file}: {}{}", r.stdout, r.stderr);
    }
}

#[test]
fn refusal_fixtures() {
    let files = common::coll_files("collc/tests/opt");
    assert!(files.len() >= 2, "fixtures in collc/tests/opt");
    for f in &files {
        let rel = common::rel(f);
        let text = common::read(f);
        let spec = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// opt: "))
            .unwrap_or_else(|| panic!("{rel}: first line `// opt: ...`"));
        let (pass, expect) = spec.split_once(' ').expect("PASS then the expectation");
        let before = collc(&["verify", &rel]);
        match text
            .lines()
            .nth(1)
            .and_then(|l| l.strip_prefix("// gate before: "))
        {
            // A correct protocol the verifier cannot prove yet: the gate's finding before
            // the pass is exactly the one named.
            Some(code) => {
                let only = code.strip_prefix("verify::").unwrap_or(code);
                assert_eq!(before.code, 1, "{rel}: {}", before.stderr);
                assert!(
                    before
                        .stdout
                        .starts_with(&format!("violated {rel}: {only}\n")),
                    "{rel}: only {code} before the pass: {}",
                    before.stdout
                );
            }
            None => assert_eq!(
                before.code, 0,
                "{rel} passes the gate before the pass: {}",
                before.stderr
            ),
        }
        let out = tmp(Path::new(&rel).file_name().unwrap().to_str().unwrap());
        let r = collc(&["opt", &rel, "--pass", pass, "-o", &out]);
        assert_eq!(r.code, 1, "{rel}: {}", r.stderr);
        assert!(!Path::new(&out).exists(), "{rel}: nothing is written");
        if let Some(code) = expect.strip_prefix("refused by the gate: ") {
            assert!(
                r.stderr.contains("refusing to write"),
                "{rel}: {}",
                r.stderr
            );
            assert!(r.stderr.contains(code), "{rel}: {code} in {}", r.stderr);
        } else {
            let reason = expect.strip_prefix("refused: ").expect("`refused: REASON`");
            assert!(
                r.stderr.contains(&format!("pass `{pass}` refused")),
                "{rel}: {}",
                r.stderr
            );
            assert!(
                r.stderr.contains(reason),
                "{rel}: `{reason}` in {}",
                r.stderr
            );
        }
    }
}

#[test]
fn usage_errors() {
    let r = collc(&["opt", "examples/barrier.coll", "--pass", "unroll=2"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("unknown pass"), "{}", r.stderr);
    let r = collc(&["opt", "examples/barrier.coll", "--pass", "coalesce=1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // A protocol without tiles: the pass does not apply.
    let r = collc(&["opt", "examples/barrier.coll", "--pass", "coalesce=4"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("no `const TILE`"), "{}", r.stderr);
}

/// Every pass's golden (`collc/tests/opt_applied/`, first line `// opt: PASS applies`, an
/// optional second line `// run: ARGS` of parameters): the result passes the gate, has fewer
/// waits (`implied-waits`) or remote atomics (`aggregate-notifies`) per call at P = 4 by
/// `collc cost`, runs on the host at P = 3 and, when `mpirun` is installed, over MPI at np 2,
/// and equals its golden `NAME.coll.golden` (`COLLC_BLESS=1` rewrites the goldens).
#[test]
fn passes_match_their_goldens() {
    let files = common::coll_files("collc/tests/opt_applied");
    assert!(files.len() >= 5, "fixtures in collc/tests/opt_applied");
    let mpi = Command::new("mpirun").arg("--version").output().is_ok();
    if !mpi {
        eprintln!("skipped the MPI runs of the opt goldens: mpirun is not installed");
    }
    for f in &files {
        let rel = common::rel(f);
        let text = common::read(f);
        let mut lines = text.lines();
        let pass = lines
            .next()
            .and_then(|l| l.strip_prefix("// opt: "))
            .and_then(|l| l.strip_suffix(" applies"))
            .unwrap_or_else(|| panic!("{rel}: first line `// opt: PASS applies`"));
        let run: Vec<&str> = lines
            .next()
            .and_then(|l| l.strip_prefix("// run: "))
            .map_or(Vec::new(), |a| a.split_whitespace().collect());
        let out = tmp(Path::new(&rel).file_name().unwrap().to_str().unwrap());
        let r = collc(&["opt", &rel, "--pass", pass, "-P", "4", "-o", &out]);
        assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        let got = std::fs::read_to_string(&out).expect("written");
        assert!(got.contains("// Re-verified: the gate passed"), "{got}");
        let row = match pass {
            "implied-waits" => Some("waits"),
            "aggregate-notifies" => Some("remote atomics"),
            _ => None,
        };
        if let Some(row) = row {
            let (b, a) = (cost(&rel, row, &["-P", "4"]), cost(&out, row, &["-P", "4"]));
            assert!(a < b, "{rel}: {row} {b} -> {a}");
        }
        for (target, np) in [("host", "3"), ("mpi", "2")] {
            if target == "mpi" && !mpi {
                continue;
            }
            let mut a = vec!["run", &out, "--target", target, "-P", np];
            a.extend_from_slice(&run);
            let r = collc(&a);
            assert_eq!(r.code, 0, "{rel} on {target}: {}{}", r.stdout, r.stderr);
        }
        let golden = f.with_extension("coll.golden");
        if std::env::var_os("COLLC_BLESS").is_some() {
            std::fs::write(&golden, &got).expect("golden written");
        }
        let want = std::fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("{}: no golden (COLLC_BLESS=1)", golden.display()));
        assert_eq!(got, want, "{rel}: the output differs from its golden");
    }
}
