//! Every shipped example (and every historic bug variant in examples/bugs/), on every
//! target: `validate` accepts what `collc emit` produced,
//! and `lift` of the pto::comm source gives back the example's protocol (lift ∘ emit = id
//! up to formatting: the canonical printer's body and epilogue are equal).

mod common;
use collc_lift::layout::Dialect;
use collc_spec::ir::Protocol;
use common::{corpus, emit, examples, TARGETS};

#[test]
fn validate_accepts_every_example_on_every_target() {
    let mut failures = Vec::new();
    let bugs = corpus("../examples/bugs");
    assert!(bugs.len() >= 30, "bug variants found: {}", bugs.len());
    for (path, src, p) in examples().into_iter().chain(bugs) {
        for t in TARGETS {
            let code = emit(&p, &src, t);
            if let Err(es) = collc_lift::validate(&p, &code, Some(&src)) {
                let msgs = messages(&es);
                failures.push(format!("{} --target {t}: {}", path, msgs));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Diagnostics as `code message`, joined by `; `.
fn messages(es: &[collc_grammar::Diagnostic]) -> String {
    es.iter()
        .map(|e| format!("{} {}", e.code, e.message))
        .collect::<Vec<_>>()
        .join("; ")
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
                let bound = |p: &Protocol| p.calls.as_ref().map(|c| c.max);
                if bound(&l.protocol) != bound(&p) {
                    failures.push(format!(
                        "{path}: calls bound lifted {:?}, declared {:?}",
                        bound(&l.protocol),
                        bound(&p)
                    ));
                }
                if let Err(es) =
                    collc_lift::validate::compare(&p, &l.protocol, Dialect::Pto, None, Some(&src))
                {
                    let msgs = messages(&es);
                    failures.push(format!(
                        "{}: {}\n--- lifted\n{}\n--- original\n{}",
                        path,
                        msgs,
                        body(&l.protocol),
                        body(&p)
                    ));
                }
            }
            Err(es) => {
                let msgs = messages(&es);
                failures.push(format!("{}: {}", path, msgs));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The bit operations in every form `collc emit` writes them, on every target: `1 << k`
/// (emitted as `pow2(k)` is), `pow2`, `>>`, `& ^ |`, `log2` and a reversed loop.
#[test]
fn validate_accepts_every_bit_operation_form() {
    let text = "collective shifts: barrier() {
    ranks P in 1..=16;
    require P & (P - 1) == 0;
    signal flag[P];

    body {
        for k in (0..log2(P)).rev() {
            let d = 1 << k;
            notify flag[k] @ rank(me ^ d) += 1;
            wait flag[log2(pow2(k))] >= (d >> k) | (d & 1);
        }
    }

    epilogue {
        for d in 1..P step *2 {
            notify flag[log2(d)] -= 1;
        }
        fence;
    }
}
";
    let checked = collc_spec::front(&collc_verifier::Ranges, text);
    let p = checked.protocol.expect("the test protocol checks");
    let src = collc_grammar::Source::new("shifts.coll", text.to_string());
    for t in TARGETS {
        let code = emit(&p, &src, t);
        if let Err(es) = collc_lift::validate(&p, &code, Some(&src)) {
            let msgs = messages(&es);
            panic!("--target {t}: {}", msgs);
        }
    }
}
