//! Fixture tests of the front end's diagnostics: every `collc/tests/ui/*.coll`
//! yields exactly the (line, code) pairs annotated in it with `// expect: CODE`
//! (several codes: comma-separated; the line is the primary label's), and its
//! rendered diagnostics match a snapshot in `snapshots/` (width 80, no colour).
//!
//! To add a fixture: write the `.coll` file with its annotations, then run
//! `INSTA_UPDATE=always cargo test -p collc --test ui` and review the new
//! `.snap` file before committing it.

mod common;

use common::*;

#[test]
fn every_fixture_yields_exactly_its_annotations() {
    let mut failures = Vec::new();
    for path in ui_fixtures() {
        let text = read(&path);
        let want = annotations(&text);
        assert!(
            !want.is_empty(),
            "{}: a ui fixture must annotate at least one diagnostic",
            rel(&path)
        );
        let got = diagnosed(&text);
        if got != want {
            failures.push(format!(
                "{}:\n  expected {:?}\n  got      {:?}",
                rel(&path),
                want,
                got
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn fixtures_report_several_errors_per_file() {
    // The harness would not notice a front end that stops at the first error
    // if no fixture had more than one: make sure several do, syntax included.
    let multi: Vec<String> = ui_fixtures()
        .iter()
        .filter(|p| annotations(&read(p)).len() >= 3)
        .map(|p| rel(p))
        .collect();
    assert!(multi.len() >= 5, "too few multi-error fixtures: {multi:?}");
    assert!(multi.iter().any(|p| p.contains("syntax")), "{multi:?}");
}

#[test]
fn rendered_diagnostics_match_snapshots() {
    insta::glob!("ui/*.coll", |path| {
        let text = read(path);
        let name = format!(
            "ui/{}",
            path.file_name().expect("file name").to_string_lossy()
        );
        insta::assert_snapshot!(render_all(&name, &text));
    });
}

#[test]
fn examples_and_bug_fixtures_have_no_front_end_errors() {
    // Bug fixtures are annotated with what later stages find; the front end
    // must accept them all (unless a front-end code is annotated).
    let mut failures = Vec::new();
    for path in valid_corpus() {
        let text = read(&path);
        let want: Vec<(usize, String)> = annotations(&text)
            .into_iter()
            .filter(|(_, c)| is_front_end(c))
            .collect();
        let got = diagnosed(&text);
        if got != want {
            failures.push(format!("{}: expected {want:?}, got {got:?}", rel(&path)));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
