//! Fence mutations: every `fence;` of every example, removed one at a time (and all at
//! once per example). Whenever the simulator's relaxed bounded check finds a data race or
//! a wrong result in the mutant that the sequentially consistent check at the same bounds
//! does not, `collc verify` (the library: the symbolic obligations, `fence` among them,
//! then the bounded ones in sc and relaxed memory) must report a violation; when it is the
//! `fence` obligation that reports it, its help must point at a notify that the removed
//! fence used to precede (in program order, possibly around a loop).
//!
//! Reads: the relaxed simulator keeps a remote read (`get`/`reduce ... @ q`) in flight until
//! a fence. When the removed fence separated a remote read from a later releasing notify
//! (in the text, with no other fence between), `collc verify` must report `fence` violated
//! with a pair that spans the removed fence (every example's remote reads are of windows
//! their owner writes or restages after the release), and the relaxed run must show it (a
//! data race or wrong result that sc does not have: the witness of that violation) —
//! unless a statement between the read and the fence reads the read's destination (the data
//! dependency completes the transfer): then `verify` must not demand the fence for it, and
//! no relaxed run may show the read in flight.

use collc_grammar::Source;
use collc_sim::bounded::{self as sb, BoundedConfig, Bounds};
use collc_sim::{Budget, Memory};
use collc_spec::Validated;
use collc_verifier::bounded::BoundedOptions;
use collc_verifier::{Options, Status};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "coll"));
    v.sort();
    v
}

/// The small bounds of the mutation check.
fn bounds() -> Bounds {
    Bounds {
        ranks: (2, 3),
        tiles: (1, 1),
        calls: 2,
        small_ints: 1,
    }
}

fn sim_check(p: &Validated, memory: Memory) -> sb::BoundedReport {
    sb::check(
        p,
        &BoundedConfig {
            bounds: bounds(),
            memory,
            per_config: Budget {
                max_states: 3_000,
                max_time: Duration::from_secs(20),
                ..Budget::default()
            },
            total_time: Duration::from_secs(60),
            fixed: BTreeMap::new(),
            sticky_poll: false,
            wrap: false,
            stop: None,
        },
    )
}

/// A data race or wrong result in relaxed memory that sc does not have.
fn relaxed_only(p: &Validated) -> Option<String> {
    let found = |r: &sb::BoundedReport, id: &str| {
        r.obligations
            .iter()
            .find(|o| o.name == id)
            .and_then(|o| o.counterexample.as_ref())
            .map(|c| format!("{} at {:?}: {}", c.code, c.params, c.message))
    };
    let rx = sim_check(p, Memory::Relaxed);
    let sc = sim_check(p, Memory::Sc);
    ["data-race", "semantics"]
        .iter()
        .filter(|id| found(&sc, id).is_none())
        .find_map(|id| found(&rx, id))
}

/// Lines (1-based) holding a `fence;` statement.
fn fence_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("fence;"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The text with the `fence;` statements of `lines` removed (line numbers kept).
fn without(text: &str, lines: &[usize]) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if lines.contains(&(i + 1)) {
                l.replacen("fence;", "", 1)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

struct Verdict {
    violated: Vec<String>,
    /// (write or read line, notify line) of each `fence` finding.
    fence_pairs: Vec<(usize, usize)>,
}

/// `collc verify` through the library: symbolic obligations first; the bounded ones
/// (sc and relaxed, at the small bounds) only when nothing symbolic is violated and
/// `bounded` is asked for (the test needs them only when the simulator found a race).
fn verify(name: &str, text: &str, p: &Validated, bounded: bool) -> Verdict {
    let src = Source::new(name, text.to_string());
    let mut report = collc_verifier::verify(p, &Options::default());
    if bounded && report.exit_code() != 1 {
        let opts = BoundedOptions {
            budget: Duration::from_secs(20),
            max_states: 20_000,
            file: name.into(),
            bounds: bounds(),
            relaxed_bounds: bounds(),
            relaxed_max_states: 4_000,
            ..BoundedOptions::default()
        };
        report
            .obligations
            .extend(collc_verifier::bounded::check(p, &opts));
    }
    report.locate(&src);
    let line = |s: collc_grammar::Span| src.line_col(s.start).0;
    let mut fence_pairs = Vec::new();
    if let Some(o) = report.get("fence") {
        if o.status == Status::Violated {
            for f in &o.findings {
                let notify = f.fence_before.map(line).unwrap_or(0);
                let write = f.labels.first().map(|(s, _)| line(*s)).unwrap_or(0);
                assert_eq!(
                    f.help.as_deref(),
                    Some(format!("add `fence;` before line {notify}").as_str()),
                    "{name}"
                );
                fence_pairs.push((write, notify));
            }
        }
    }
    Verdict {
        violated: report
            .obligations
            .iter()
            .filter(|o| o.status == Status::Violated)
            .map(|o| o.id.clone())
            .collect(),
        fence_pairs,
    }
}

/// The removed fence at line `l` lies between the write and the notify in program order:
/// straight (`write < l < notify`) or around a loop (`notify < write`, `l` after the write
/// or before the notify).
fn between(l: usize, (write, notify): (usize, usize)) -> bool {
    if write < notify {
        write < l && l < notify
    } else {
        l > write || l < notify
    }
}

/// Whether the `fence;` at line `l` is, in the text, the only fence between a remote read
/// (`get ... @ q`, `reduce ... @ q`) before it and a releasing notify (not `-=`) after it.
fn separates_read(text: &str, l: usize) -> bool {
    let stmt = |t: &str| -> &'static str {
        let t = t.trim_start();
        if t.starts_with("fence;") {
            "fence"
        } else if (t.starts_with("get ") || t.starts_with("reduce ")) && t.contains(" @ ") {
            "read"
        } else if t.starts_with("notify ") && !t.contains("-=") {
            "notify"
        } else {
            ""
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let kinds: Vec<&str> = lines.iter().map(|t| stmt(t)).collect();
    let before = kinds[..l - 1]
        .iter()
        .rev()
        .find(|k| !k.is_empty())
        .is_some_and(|k| *k == "read");
    let after = kinds[l..]
        .iter()
        .find(|k| **k == "fence" || **k == "notify")
        .is_some_and(|k| *k == "notify");
    before && after
}

/// The line (1-based) of the remote read that the `fence;` at line `l` follows, when it
/// reads into a region that a later statement before the fence reads on the reader's rank
/// (the same region text: `get recv[0 .. len] <- ... @ p;` then `reduce sum acc[0 .. len]
/// <- recv[0 .. len];`). The data dependency completes that transfer before the notify (the
/// simulator completes a transfer before its destination is read; hardware waits for it),
/// so the fence is not needed for that read: `verify` must not pair it with a notify (the
/// textual view of the `fence` obligation's rule, LANGUAGE.md §13.6). The fence may still
/// be needed for a window write before it: a relaxed race is then the write's.
fn completed_by_use(text: &str, l: usize) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let r = (0..l - 1).rev().find(|i| {
        let t = lines[*i].trim_start();
        (t.starts_with("get ") || t.starts_with("reduce ")) && t.contains(" @ ")
    })?;
    let t = lines[r].trim_start();
    let dst = match t.strip_prefix("get ") {
        Some(rest) => rest.split(" <- ").next(),
        None => t
            .split_once(' ')
            .and_then(|(_, rest)| rest.split_once(' '))
            .and_then(|(_, rest)| rest.split(" <- ").next()),
    }
    .filter(|d| !d.is_empty())?;
    lines[r + 1..l - 1]
        .iter()
        .any(|u| {
            let u = u.split("//").next().unwrap_or("");
            u.contains(&format!("<- {dst};"))
                || (u.trim_start().starts_with("reduce ") && u.contains(&format!(" {dst} <-")))
        })
        .then_some(r + 1)
}

fn protocol(text: &str) -> Option<Validated> {
    collc_spec::front(&collc_verifier::Ranges, text).protocol
}

#[test]
fn every_observable_missing_fence_is_a_violation() {
    let mut table = Vec::new();
    let mut failures = Vec::new();
    let mut dependents = 0;
    for f in examples() {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = format!(
            "examples/{}",
            f.file_name().unwrap_or_default().to_string_lossy()
        );
        let lines = fence_lines(&text);
        let mut cases: Vec<(String, Vec<usize>)> = lines
            .iter()
            .map(|l| (format!("{name} without the fence of line {l}"), vec![*l]))
            .collect();
        if lines.len() > 1 {
            cases.push((format!("{name} without any fence"), lines.clone()));
        }
        for (what, removed) in cases {
            let mutant = without(&text, &removed);
            let Some(p) = protocol(&mutant) else {
                failures.push(format!("{what}: does not validate"));
                continue;
            };
            let race = relaxed_only(&p);
            let v = verify(&name, &mutant, &p, race.is_some());
            table.push(format!(
                "{what}: relaxed {}; verify violates {:?}; fence pairs {:?}",
                race.as_deref().unwrap_or("clean"),
                v.violated,
                v.fence_pairs
            ));
            if let Some(r) = &race {
                if v.violated.is_empty() {
                    failures.push(format!("{what}: the simulator finds {r}, verify passes"));
                }
            }
            if removed.len() == 1 && separates_read(&text, removed[0]) {
                let flagged = v.violated.iter().any(|o| o == "fence")
                    && v.fence_pairs.iter().any(|p| between(removed[0], *p));
                match completed_by_use(&text, removed[0]) {
                    Some(read) => {
                        dependents += 1;
                        if v.fence_pairs.iter().any(|(r, _)| *r == read) {
                            failures.push(format!(
                                "{what}: the read of line {read} is complete (its destination is read before the notify), yet verify pairs it: {:?}",
                                v.fence_pairs
                            ));
                        }
                    }
                    None if !flagged => failures.push(format!(
                        "{what}: the fence ordered a remote read before a notify; verify violates {:?}, fence pairs {:?}",
                        v.violated, v.fence_pairs
                    )),
                    None if race.is_none() => failures.push(format!(
                        "{what}: the fence ordered a remote read before a notify; no relaxed run shows the read in flight"
                    )),
                    None => {}
                }
            }
            if removed.len() == 1 {
                for pair in &v.fence_pairs {
                    if !between(removed[0], *pair) {
                        failures.push(format!(
                            "{what}: fence finding for write line {} / notify line {} does not span the removed fence",
                            pair.0, pair.1
                        ));
                    }
                }
            }
        }
    }
    eprintln!("{}", table.join("\n"));
    // allreduce_mesh, allreduce_recursive_doubling, incore_allreduce_{mesh,ring} and
    // incore_reduce_scatter each reduce a get's tile before their read-done notify.
    assert!(
        dependents >= 5,
        "only {dependents} fence removals with a read completed by its use"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
