//! Every shipped example, on every target: `validate` accepts what `collc emit` produced,
//! and `lift` of the pto::comm source gives back the example's protocol (lift ∘ emit = id
//! up to formatting: the canonical printer's body and epilogue are equal).

use collc_backend::cpp::{self, EmitOptions, Target};
use collc_grammar::Source;
use collc_lift::layout::Dialect;
use collc_spec::ir::Protocol;
use std::path::PathBuf;

fn examples() -> Vec<(PathBuf, Source, Protocol)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("read example");
        let checked = collc_spec::check(&text);
        let p = checked.protocol.expect("examples check");
        out.push((
            path.clone(),
            Source::new(path.display().to_string(), text),
            p,
        ));
    }
    assert!(out.len() >= 10, "examples found: {}", out.len());
    out
}

pub fn emitted(p: &Protocol, src: &Source, target: &str) -> String {
    let opts = EmitOptions {
        source: Some(src),
        ..EmitOptions::default()
    };
    match target {
        "ascend" => cpp::emit(p, Target::Ascend, &opts).expect("emit ascend"),
        "host" => cpp::emit(p, Target::Host, &opts).expect("emit host"),
        _ => {
            let o = collc_backend::mpi::EmitOptions {
                source: Some(src),
                ..collc_backend::mpi::EmitOptions::default()
            };
            collc_backend::mpi::emit(p, &o).expect("emit mpi")
        }
    }
}

#[test]
fn validate_accepts_every_example_on_every_target() {
    let mut failures = Vec::new();
    for (path, src, p) in examples() {
        for t in ["ascend", "host", "mpi"] {
            let code = emitted(&p, &src, t);
            if let Err(es) = collc_lift::validate(&p, &code, Some(&src)) {
                let msgs: Vec<String> = es
                    .iter()
                    .map(|e| format!("{} {}", e.code, e.message))
                    .collect();
                failures.push(format!(
                    "{} --target {t}: {}",
                    path.display(),
                    msgs.join("; ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn body(p: &Protocol) -> String {
    let t = collc_spec::print::print(p);
    t.split_once("    body {")
        .map(|x| x.1.to_string())
        .unwrap_or(t)
}

#[test]
fn lift_of_emit_is_the_identity_on_every_example() {
    let mut failures = Vec::new();
    for (path, src, p) in examples() {
        let code = emitted(&p, &src, "ascend");
        match collc_lift::lift(&code) {
            Ok(l) => {
                if let Err(es) =
                    collc_lift::validate::compare(&p, &l.protocol, Dialect::Pto, None, Some(&src))
                {
                    let msgs: Vec<String> = es
                        .iter()
                        .map(|e| format!("{} {}", e.code, e.message))
                        .collect();
                    failures.push(format!(
                        "{}: {}\n--- lifted\n{}\n--- original\n{}",
                        path.display(),
                        msgs.join("; "),
                        body(&l.protocol),
                        body(&p)
                    ));
                }
            }
            Err(es) => {
                let msgs: Vec<String> = es
                    .iter()
                    .map(|e| format!("{} {}", e.code, e.message))
                    .collect();
                failures.push(format!("{}: {}", path.display(), msgs.join("; ")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
