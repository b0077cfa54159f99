//! Targeted bounded runs (`BoundedOptions::target_worlds`): a world size explored in
//! addition to the ladder, at the smallest bounds, stated in the scope; a violation
//! that shows only there is found there; sizes outside the declared domain or already
//! on the ladder are ignored.

use collc_verifier::bounded::{check, BoundedOptions};
use collc_verifier::report::Status;
use std::time::Duration;

/// A barrier that hangs only at P=12: every rank then also waits for a credit nobody sends.
const HANGS_AT_12: &str = "collective t: barrier() {
    ranks P in 1..=16;
    signal sig[P];
    body {
        for p in peers {
            notify sig[me] @ p += 1;
        }
        for p in peers {
            wait sig[p] >= 1;
        }
        if P == 12 {
            wait sig[me] >= 1;
        }
    }
    epilogue {
        for p in peers {
            notify sig[p] -= 1;
        }
    }
}
";

fn opts(targets: &[i64]) -> BoundedOptions {
    BoundedOptions {
        budget: Duration::from_secs(60),
        target_worlds: targets.to_vec(),
        ..BoundedOptions::default()
    }
}

fn protocol(text: &str) -> collc_spec::Validated {
    collc_spec::front(&collc_verifier::Ranges, text)
        .protocol
        .expect("valid protocol")
}

#[test]
fn a_target_is_explored_at_the_smallest_bounds_and_stated() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/barrier.coll"),
    )
    .expect("example");
    let p = protocol(&text);
    // 3 is on the ladder (P=2..8) and 65537 outside `ranks P in 1..=65536`: both ignored.
    let out = check(&p, &opts(&[11, 3, 65537, 11]));
    for o in &out {
        let scope = o.scope_text().unwrap_or_default();
        assert_eq!(o.status, Status::Checked, "{}: {scope}", o.id);
        let sc = scope.split("; relaxed memory: ").next().unwrap_or_default();
        assert!(
            sc.starts_with("P=2..4, 3 calls: ")
                && sc.contains("; P=5..8, 2 calls: ")
                && sc.contains("; targeted P=11, 2 calls: "),
            "{}: {scope}",
            o.id
        );
        assert!(
            !scope.contains("P=65537") && !scope.contains("P=3,"),
            "{scope}"
        );
    }
}

#[test]
fn a_violation_only_at_the_target_is_found_there() {
    let p = protocol(HANGS_AT_12);
    let without = check(&p, &opts(&[]));
    let deadlock = |v: &[collc_verifier::report::ObligationResult]| {
        v.iter()
            .find(|o| o.id == "deadlock")
            .cloned()
            .expect("deadlock obligation")
    };
    assert_eq!(deadlock(&without).status, Status::Checked);
    let with = check(&p, &opts(&[12]));
    let d = deadlock(&with);
    assert_eq!(d.status, Status::Violated, "{d:?}");
    let f = &d.findings[0];
    assert!(
        f.params.iter().any(|x| x.name == "P" && x.value == 12),
        "{:?}",
        f.params
    );
    assert!(
        d.scope_text()
            .as_deref()
            .is_some_and(|s| s.contains("targeted P=12, 2 calls: ")),
        "{:?}",
        d.scope
    );
}
