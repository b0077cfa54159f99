//! Every violated symbolic obligation says what replays its refusal, or why no run does
//! (`Report::witness`, the note of its diagnostics): a violated bounded obligation of its
//! class with that counterexample's replay; with `--no-bounded`, that the bounded
//! obligations did not run; else that the bounded search shows no violation of its class.

use collc_grammar::Source;
use collc_verifier::evidence::{NotReplayed, Witness};
use collc_verifier::report::{Obligation, Status};
use collc_verifier::{verify, Options, Report};
use std::path::Path;

fn report(file: &str, bounded: bool) -> Report {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let src = Source::new(file, text.clone());
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("validates");
    let opts = Options {
        source: Some(&src),
        ..if bounded {
            Options::default()
        } else {
            Options::symbolic_only()
        }
    };
    verify(&p, &opts)
}

/// The witness of the violated obligation `id`, and the notes of its diagnostics.
fn witness(r: &Report, id: &str) -> (Witness, Vec<String>) {
    let o = r.get(id).expect("obligation");
    assert_eq!(o.status, Status::Violated, "{id}");
    let notes = r
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == o.code)
        .flat_map(|d| d.notes)
        .filter(|n| n.contains("witness"))
        .collect();
    (r.witness(o).expect("violated"), notes)
}

/// The many-writer rule's finding at P = 10 no run shows (the slow writer's credit to the
/// owner comes first in its program order); the bounded half's targeted P = 11 shows a
/// stale pass, of the class of `stale-credit`.
#[test]
fn a_symbolic_finding_names_the_bounded_counterexample_of_its_class() {
    let file = "examples/bugs/node_counter_barrier.coll";
    let r = report(file, true);
    let (w, notes) = witness(&r, "stale-credit");
    let Witness::Shown {
        obligation,
        params,
        command,
    } = w
    else {
        panic!("{w:?}")
    };
    assert_eq!(obligation, "stale-pass");
    assert!(Obligation::StaleCredit
        .shown_by()
        .contains(&Obligation::StalePass));
    assert!(
        params.iter().any(|p| p.name == "P" && p.value == 11),
        "{params:?}"
    );
    assert!(
        command.starts_with(&format!("collc sim {file} ")),
        "{command}"
    );
    assert!(command.contains("--param P=11"), "{command}");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("verify::stale-pass at P = 11"),
        "{notes:?}"
    );
}

#[test]
fn without_the_bounded_half_the_report_says_no_run_was_made() {
    let r = report("examples/bugs/node_counter_barrier.coll", false);
    let (w, notes) = witness(&r, "stale-credit");
    assert_eq!(
        w,
        Witness::NotReplayed {
            reason: NotReplayed::NoBounded
        }
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("--no-bounded"), "{notes:?}");
}

/// Its bounded half shows a deadlock (the class of `credit-balance` and `wait-reachable`),
/// not a stale pass, a race or a wrong result: `stale-credit` at P = 9 has no witness, and
/// the report says why; the other two name the deadlock.
#[test]
fn a_finding_no_bounded_run_of_its_class_shows_says_so() {
    let r = report("examples/bugs/hier_barrier_release_off_by_one.coll", true);
    let (w, notes) = witness(&r, "stale-credit");
    assert_eq!(
        w,
        Witness::NotReplayed {
            reason: NotReplayed::NotShown
        }
    );
    assert!(
        notes[0].contains("stale-pass, data-race, semantics"),
        "{notes:?}"
    );
    for id in ["credit-balance", "wait-reachable"] {
        let (w, _) = witness(&r, id);
        assert!(
            matches!(&w, Witness::Shown { obligation, .. } if obligation == "deadlock"),
            "{id}: {w:?}"
        );
    }
    let (w, notes) = witness(&r, "deadlock");
    assert!(matches!(w, Witness::Replay { .. }), "{w:?}");
    assert!(
        notes.is_empty(),
        "a bounded finding carries its own replay: {notes:?}"
    );
}
