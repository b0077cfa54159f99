//! Reductions into a peer's window (`reduce OP DST @ RANK <- SRC;`, LANGUAGE.md §9.7): the
//! fixtures of `collc/tests/remote_reduce/`. A fixture without `// expect` annotations is a
//! correct protocol: the bounded model checker finds nothing at P = 2..3 (sequentially
//! consistent and relaxed memory, 2 calls, exploration complete) and `verify` exits 0. A buggy
//! twin names its findings: each annotated `sim::` code (`// expect:` in sc memory,
//! `// expect[relaxed]:` in relaxed memory) is found by the bounded check, and each annotated
//! `verify::` code is an obligation `verify` reports violated on that line.

mod common;

use collc_grammar::Source;
use collc_sim::bounded::{check, BoundedConfig, Bounds};
use collc_sim::{Budget, Memory};
use collc_verifier::{Options, Status};
use common::*;
use std::collections::BTreeSet;
use std::time::Duration;

/// The codes with prefix `family` annotated with `tag` (`// expect:`), with their lines.
fn annotated(text: &str, tag: &str, family: &str) -> BTreeSet<(String, usize)> {
    let mut out = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, rest)) = line.split_once(tag) {
            for code in rest.split(',').map(str::trim) {
                if code.starts_with(family) {
                    out.insert((code.to_string(), i + 1));
                }
            }
        }
    }
    out
}

/// The codes the bounded check finds at P = 2..3, 1..=2 tiles, 2 calls, and whether the
/// exploration completed (a pass of an incomplete one says nothing).
fn sim_codes(text: &str, memory: Memory) -> (BTreeSet<String>, bool) {
    let p = collc_spec::front(&collc_verifier::Ranges, text)
        .protocol
        .expect("validates");
    let cfg = BoundedConfig {
        bounds: Bounds {
            ranks: (2, 3),
            tiles: (1, 2),
            calls: 2,
            small_ints: 2,
        },
        per_config: Budget {
            max_states: 400_000,
            max_time: Duration::from_secs(60),
            ..Budget::default()
        },
        total_time: Duration::from_secs(240),
        memory,
        ..BoundedConfig::default()
    };
    let r = check(&p, &cfg);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let complete = r.obligations.iter().all(|o| o.complete);
    let codes = r
        .configs
        .iter()
        .flat_map(|c| c.codes.iter().cloned())
        .collect();
    (codes, complete)
}

#[test]
fn remote_reduce_fixtures_are_judged_as_annotated() {
    let files = coll_files("collc/tests/remote_reduce");
    assert!(files.len() >= 4, "fixtures: {files:?}");
    let mut failures = Vec::new();
    for f in &files {
        let name = rel(f);
        let text = read(f);
        for (memory, tag) in [
            (Memory::Sc, "// expect:"),
            (Memory::Relaxed, "// expect[relaxed]:"),
        ] {
            let want: BTreeSet<String> = annotated(&text, tag, "sim::")
                .into_iter()
                .map(|(c, _)| c)
                .collect();
            let (got, complete) = sim_codes(&text, memory);
            let correct = annotated(&text, "// expect", "").is_empty();
            if (correct && (!got.is_empty() || !complete)) || !want.is_subset(&got) {
                failures.push(format!(
                    "{name} ({memory:?}): sim wants {want:?}, found {got:?}"
                ));
            }
        }
        let src = Source::new(name.clone(), text.clone());
        let p = collc_spec::front(&collc_verifier::Ranges, &text)
            .protocol
            .expect("validates");
        let r = collc_verifier::verify(&p, &Options::for_source(&src));
        let want = annotated(&text, "// expect:", "verify::");
        if annotated(&text, "// expect", "").is_empty() && r.exit_code() != 0 {
            failures.push(format!("{name}: verify exits {}", r.exit_code()));
        }
        for (code, line) in want {
            let o = r
                .get(code.trim_start_matches("verify::"))
                .expect("obligation");
            let at = r.diagnostics().iter().any(|d| {
                d.code == code
                    && d.labels
                        .iter()
                        .any(|l| src.line_col(l.span.start).0 == line)
            });
            if o.status != Status::Violated || !at {
                failures.push(format!(
                    "{name}:{line}: {code} is {:?} (labelled there: {at})",
                    o.status
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
