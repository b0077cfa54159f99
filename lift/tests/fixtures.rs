//! Hand-written kernels in the style of pypto's host collectives (`tests/fixtures/*.cpp`).
//!
//! * `// expect-verify: safe`: the kernel lifts and its protocol verifies;
//! * `// expect-verify: CODE...`: it lifts (a buggy kernel) and each obligation named is
//!   violated;
//! * `// expect: CODE` on a line: lifting stops with that error, naming that line.

use collc_grammar::Source;
use std::path::PathBuf;

fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("fixtures/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read fixture");
            (
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                text,
            )
        })
        .collect();
    v.sort();
    assert!(v.len() >= 8, "fixtures found: {}", v.len());
    v
}

fn violated(coll: &str) -> (Vec<String>, i32) {
    let src = Source::new("lifted.coll", coll.to_string());
    let checked = collc_spec::front(&collc_verifier::Ranges, &src.text);
    let p = checked.protocol.expect("the lifted protocol validates");
    let report = collc_verifier::verify(&p, &collc_verifier::Options::for_source(&src));
    let v = report
        .obligations
        .iter()
        .filter(|o| o.status == collc_verifier::Status::Violated)
        .map(|o| o.code.clone())
        .collect();
    (v, report.exit_code())
}

#[test]
fn hand_written_kernels_lift_and_verify_as_annotated() {
    let mut failures = Vec::new();
    let mut kinds = [0usize; 3];
    for (name, text) in fixtures() {
        let verify_line = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("// expect-verify:"));
        let expect_line = text.lines().enumerate().find_map(|(i, l)| {
            l.split_once("// expect: ")
                .map(|(_, code)| (i + 1, code.trim().to_string()))
        });
        match (verify_line, expect_line, collc_lift::lift(&text)) {
            (Some(want), None, Ok(l)) => {
                let (v, code) = violated(&l.coll);
                let want: Vec<&str> = want.split_whitespace().collect();
                if want == ["safe"] {
                    kinds[0] += 1;
                    if code != 0 {
                        failures.push(format!(
                            "{name}: expected safe, verify exits {code} ({v:?})\n{}",
                            l.coll
                        ));
                    }
                } else {
                    kinds[1] += 1;
                    for w in want {
                        if !v.iter().any(|c| c == w) {
                            failures.push(format!(
                                "{name}: expected {w} violated, got {v:?}\n{}",
                                l.coll
                            ));
                        }
                    }
                }
            }
            (None, Some((line, code)), Err(errs)) => {
                kinds[2] += 1;
                let e = &errs[0];
                if e.code != code || !e.message.starts_with(&format!("line {line}:")) {
                    failures.push(format!(
                        "{name}: expected {code} at line {line}, got {} {}",
                        e.code, e.message
                    ));
                }
            }
            (_, _, Ok(l)) => {
                failures.push(format!("{name}: lifted but expected an error\n{}", l.coll))
            }
            (_, _, Err(errs)) => failures.push(format!(
                "{name}: {}",
                errs.iter()
                    .map(|e| format!("{} {}", e.code, e.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        kinds.iter().all(|k| *k >= 2),
        "safe / buggy / refused fixtures: {kinds:?}"
    );
}

#[test]
fn deeply_nested_cpp_is_refused_not_overflowed() {
    let deep = format!(
        "// collective barrier: barrier()\nextern \"C\" void kernel_entry(int64_t* args) {{ const int64_t x = {}1{}; }}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let errs = collc_lift::lift(&deep).expect_err("refused");
    assert_eq!(errs[0].code, "input::too-deep", "{}", errs[0].message);
    let errs = collc_lift::lift("int main( {").expect_err("refused");
    assert_eq!(errs[0].code, "lift::syntax", "{}", errs[0].message);
}

/// `calls <= N` as `collc emit` states it after the prologue (`COLLC_CALLS_BOUND(N, "...")`)
/// is read back as the protocol's calls bound; a second one, or a non-literal N, is refused
/// at its line.
#[test]
fn the_calls_bound_is_read_back() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(dir.join("barrier.cpp")).expect("barrier.cpp");
    let me = "    const int32_t me = static_cast<int32_t>(ctx->rankId);\n";
    assert!(text.contains(me), "barrier.cpp reads its rank as expected");
    let bound = "    COLLC_CALLS_BOUND(3, \"calls <= 3 (barrier.coll:4)\");\n";
    let with = text.replacen(me, &format!("{me}{bound}"), 1);
    let l = collc_lift::lift(&with).expect("lifts");
    assert_eq!(l.protocol.calls.as_ref().map(|c| c.max), Some(3));
    assert!(l.coll.contains("calls <= 3;"), "{}", l.coll);
    let plain = collc_lift::lift(&text).expect("lifts");
    assert_eq!(plain.protocol.calls.as_ref().map(|c| c.max), None);
    let twice = text.replacen(me, &format!("{me}{bound}{bound}"), 1);
    let errs = collc_lift::lift(&twice).expect_err("a second bound is refused");
    assert_eq!(errs[0].code, "lift::unsupported", "{}", errs[0].message);
    let line = with
        .lines()
        .position(|l| l.contains("COLLC_CALLS_BOUND"))
        .unwrap_or(0)
        + 2;
    assert!(
        errs[0].message.starts_with(&format!("line {line}:")),
        "{}",
        errs[0].message
    );
}
