//! Every shipped example, on every target: `validate` accepts what `collc emit` produced,
//! and `lift` of the pto::comm source gives back the example's protocol (lift ∘ emit = id
//! up to formatting: the canonical printer's body and epilogue are equal).

mod common;
use collc_lift::layout::Dialect;
use collc_spec::ir::Protocol;
use common::{emit, examples, TARGETS};

#[test]
fn validate_accepts_every_example_on_every_target() {
    let mut failures = Vec::new();
    for (path, src, p) in examples() {
        for t in TARGETS {
            let code = emit(&p, &src, t);
            if let Err(es) = collc_lift::validate(&p, &code, Some(&src)) {
                let msgs: Vec<String> = es
                    .iter()
                    .map(|e| format!("{} {}", e.code, e.message))
                    .collect();
                failures.push(format!("{} --target {t}: {}", path, msgs.join("; ")));
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
        let code = emit(&p, &src, "ascend");
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
                        path,
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
                failures.push(format!("{}: {}", path, msgs.join("; ")));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
