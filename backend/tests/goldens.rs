//! Goldens of the generated code: every example (`examples/*.coll`) on every target
//! (`ascend`, `host`, `mpi`, and `ascend-pypto`: `--abi pypto` for the examples with a pypto
//! builtin counterpart) is emitted and compared byte for byte with
//! `backend/tests/goldens/<target>/<example>.cpp`. Any difference fails the test and names
//! the file and the first differing line; a golden without an example fails too (stale).
//!
//! The code is emitted straight from the backend, without the verifier gate: no warning
//! stamp and `world_limit: None` (the declared domain's upper bound, capped by the target),
//! so the goldens do not depend on the verifier's budgets. The source name is the path
//! relative to the repository root (`examples/NAME.coll`).
//!
//! Regenerate after an intended change of the emitter: `UPDATE_GOLDENS=1 cargo test -p
//! collc-backend --test goldens` (CONTRIBUTING.md), then review the diff like code.

use collc_backend::cpp::{self, EmitOptions, Target};
use collc_backend::mpi;
use collc_backend::testing::{coll_files, repo_root};
use collc_grammar::Source;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn golden_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/goldens")
        .join(target)
}

/// The examples, sorted: (stem, source).
fn examples() -> Vec<(String, Source)> {
    let v: Vec<(String, Source)> = coll_files(&repo_root().join("examples"))
        .into_iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&p).expect("readable example");
            (
                stem.clone(),
                Source::new(format!("examples/{stem}.coll"), text),
            )
        })
        .collect();
    assert!(!v.is_empty(), "no examples found");
    v
}

/// The emitted text, `None` for an example the target refuses by design (`ascend-pypto`: no
/// pypto builtin counterpart, `backend::pypto-abi`).
fn emit(target: &str, src: &Source) -> Option<String> {
    let p = collc_spec::front(&collc_verifier::Ranges, &src.text)
        .protocol
        .unwrap_or_else(|| panic!("{} does not check", src.name));
    let r = match target {
        "ascend-pypto" => match cpp::pypto::emit(
            &p,
            &EmitOptions {
                source: Some(src),
                warning: Vec::new(),
                world_limit: None,
            },
        ) {
            Err(d) if d.iter().all(|d| d.code == cpp::pypto::CODE) => return None,
            r => r,
        },
        "ascend" | "host" => cpp::emit(
            &p,
            if target == "ascend" {
                Target::Ascend
            } else {
                Target::Host
            },
            &EmitOptions {
                source: Some(src),
                warning: Vec::new(),
                world_limit: None,
            },
        ),
        _ => mpi::emit(
            &p,
            &mpi::EmitOptions {
                source: Some(src),
                warning: Vec::new(),
                world_limit: None,
            },
        ),
    };
    Some(r.unwrap_or_else(|d| panic!("{}: {target} emit failed: {d:?}", src.name)))
}

/// The first differing line of two texts (1-based), with both versions.
fn first_diff(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i), g.get(i));
        if a != b {
            return format!(
                "line {}:\n    golden:  {}\n    emitted: {}",
                i + 1,
                a.unwrap_or(&"<end of file>"),
                b.unwrap_or(&"<end of file>")
            );
        }
    }
    "trailing newline differs".to_string()
}

fn check_target(target: &str) {
    let update = std::env::var_os("UPDATE_GOLDENS").is_some_and(|v| !v.is_empty() && v != "0");
    let dir = golden_dir(target);
    if update {
        std::fs::create_dir_all(&dir).expect("golden dir");
    }
    let mut failures = Vec::new();
    let mut expected = BTreeSet::new();
    for (stem, src) in examples() {
        let file = format!("{stem}.cpp");
        let Some(got) = emit(target, &src) else {
            continue;
        };
        expected.insert(file.clone());
        let path = dir.join(&file);
        if update {
            std::fs::write(&path, &got).expect("write golden");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!("{}: {}", path.display(), first_diff(&want, &got))),
            Err(_) => failures.push(format!("{}: missing golden", path.display())),
        }
    }
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".cpp") && !expected.contains(&name) {
            if update {
                std::fs::remove_file(e.path()).expect("remove stale golden");
            } else {
                failures.push(format!(
                    "{}: no example emits it (stale)",
                    e.path().display()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} {target} golden(s) differ from the emitted code (after an intended emitter change: \
         UPDATE_GOLDENS=1 cargo test -p collc-backend --test goldens, then review the diff):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn ascend_goldens() {
    check_target("ascend");
}

#[test]
fn host_goldens() {
    check_target("host");
}

/// `collc emit --target ascend --abi pypto` (docs/pypto-abi.md), for every example with a
/// pypto builtin counterpart.
#[test]
fn ascend_pypto_goldens() {
    check_target("ascend-pypto");
}

#[test]
fn mpi_goldens() {
    check_target("mpi");
}

/// The comparison itself: a one-character change of an emitted source is reported with its
/// line (so a golden cannot silently pass a different text).
#[test]
fn a_changed_line_is_reported() {
    let (_, src) = examples().into_iter().next().expect("an example");
    let got = emit("ascend", &src).expect("ascend emits every example");
    let mut changed = got.replacen("TNOTIFY", "TNOTIFX", 1);
    if changed == got {
        changed.push('x');
    }
    assert_ne!(changed, got);
    let d = first_diff(&changed, &got);
    assert!(d.starts_with("line "), "{d}");
}
