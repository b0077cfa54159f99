//! Mutation tests of the backend: each emitter fault of `collc_backend::cpp::mutate`,
//! on every example and every target where it changes the generated code (comments and
//! trace points aside),
//! is caught by the static validator; and each fault changes the code of some example on
//! each target where it can (MPI prints fences and publishes as comments only: there
//! `DropFence` and `DropPublish` change nothing that runs).

mod common;
use collc_backend::cpp::mutate::{self, Mutation};
use common::{emit, examples, TARGETS};

/// The code without comments, blank lines and trace points (`COLLC_TRACE_FENCE/GET/PUT`:
/// they only observe a run for `collc run --trace`, whose conformance check covers them;
/// the static validator skips them).
fn code(text: &str) -> Vec<String> {
    const TRACE: [&str; 3] = ["COLLC_TRACE_FENCE(", "COLLC_TRACE_GET(", "COLLC_TRACE_PUT("];
    text.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty() && !TRACE.iter().any(|t| l.starts_with(t)))
        .collect()
}

#[test]
fn validate_catches_every_injected_fault() {
    let exs = examples();
    let mut escaped = Vec::new();
    let mut changed_any = Vec::new();
    for m in Mutation::ALL {
        for t in TARGETS {
            let mut changed = 0;
            for (name, src, p) in &exs {
                let good = emit(p, src, t);
                let bad = mutate::with(m, || emit(p, src, t));
                if code(&good) == code(&bad) {
                    continue;
                }
                changed += 1;
                if collc_lift::validate(p, &bad, Some(src)).is_ok() {
                    escaped.push(format!("{m:?} on {name} --target {t}"));
                }
            }
            changed_any.push((m, t, changed));
        }
    }
    assert!(
        escaped.is_empty(),
        "faults the validator missed:\n{}",
        escaped.join("\n")
    );
    for (m, t, n) in changed_any {
        let comment_only = t == "mpi" && matches!(m, Mutation::DropFence | Mutation::DropPublish);
        assert_eq!(
            n == 0,
            comment_only,
            "{m:?} --target {t} changed {n} examples"
        );
    }
}

#[test]
fn a_fault_is_reported_with_the_statement_and_the_emitted_line() {
    let (_, src, p) = examples()
        .into_iter()
        .find(|(n, _, _)| n.ends_with("/barrier.coll"))
        .expect("barrier example");
    let bad = mutate::with(Mutation::SwapNotifyTarget, || emit(&p, &src, "ascend"));
    let errs = collc_lift::validate(&p, &bad, Some(&src)).expect_err("caught");
    let msg = &errs[0].message;
    assert_eq!(errs[0].code, "validate::mismatch", "{msg}");
    assert!(msg.contains("notify sig[me] @ p += 1;"), "{msg}");
    assert!(msg.contains("barrier.coll:14"), "{msg}");
    let line = bad
        .lines()
        .position(|l| l.contains("TNOTIFY") && l.contains("AtomicAdd") && !l.contains("-1"))
        .map(|i| i + 1)
        .expect("the notify line");
    assert!(
        msg.contains(&format!("emitted line {line}")),
        "{msg} (notify at {line})"
    );
}
