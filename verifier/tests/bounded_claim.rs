//! A bounded `checked` result claims what its runs covered, from data: its scope records
//! an extra run (relaxed memory, the wrap-around mode) that did not complete as a part
//! (`Covered::Incomplete`), and the claim is that scope, set once every run is in.

use collc_verifier::bounded::{check, BoundedOptions};
use collc_verifier::report::scope::{Covered, Extra};
use collc_verifier::report::Status;
use std::time::Duration;

fn barrier() -> collc_spec::Validated {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/barrier.coll"),
    )
    .expect("example");
    collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("valid protocol")
}

#[test]
fn a_relaxed_run_cut_short_is_a_part_of_the_scope_and_the_claim() {
    // Ten relaxed states per assignment: the sc run completes, the relaxed one cannot.
    let opts = BoundedOptions {
        budget: Duration::from_secs(60),
        relaxed_max_states: 10,
        ..BoundedOptions::default()
    };
    let out = check(&barrier(), &opts);
    let mut relaxed_ones = 0;
    for o in out.iter().filter(|o| o.status == Status::Checked) {
        let scope = o.scope.as_ref().expect("a checked result has a scope");
        // The claim is the scope's one rendering, not an edited copy of it.
        assert_eq!(o.claim, scope.to_string(), "{}", o.id);
        let cut = scope.parts().iter().find_map(|c| match c {
            Covered::Incomplete {
                run: Extra::Relaxed,
                why,
            } => Some(why),
            _ => None,
        });
        if let Some(why) = cut {
            relaxed_ones += 1;
            assert!(!why.is_empty(), "{}: no reason", o.id);
            assert!(
                o.claim.contains("relaxed memory incomplete: "),
                "{}",
                o.claim
            );
        }
    }
    // deadlock, stale-pass, data-race and semantics run in relaxed memory too.
    assert!(relaxed_ones >= 1, "no relaxed run was cut short: {out:#?}");
}

#[test]
fn a_complete_run_adds_no_incomplete_part() {
    let opts = BoundedOptions {
        budget: Duration::from_secs(60),
        ..BoundedOptions::default()
    };
    for o in check(&barrier(), &opts) {
        assert_eq!(o.status, Status::Checked, "{}", o.id);
        let scope = o.scope.expect("scope");
        assert!(
            !scope
                .parts()
                .iter()
                .any(|c| matches!(c, Covered::Incomplete { .. } | Covered::PastHorizon)),
            "{}: {scope}",
            o.id
        );
    }
}
