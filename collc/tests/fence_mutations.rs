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
//! data race or wrong result that sc does not have: the witness of that violation).

use collc_grammar::Source;
use collc_sim::bounded::{self as sb, BoundedConfig, Bounds};
use collc_sim::{Budget, Memory};
use collc_spec::ir::Protocol;
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

fn sim_check(p: &Protocol, memory: Memory) -> sb::BoundedReport {
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
fn relaxed_only(p: &Protocol) -> Option<String> {
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
fn verify(name: &str, text: &str, p: &Protocol, bounded: bool) -> Verdict {
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

/// Fence removals that `verify` flags (the read half of `fence`) but no relaxed run can
/// show: each read is a `get` into a tile that a `reduce` reads before the notify. The
/// simulator completes a transfer before its destination is read (the data dependency; the
/// host and MPI backends complete every get before the next statement), so the read is
/// complete when the notify is issued. The `fence` obligation does not see that dependency
/// and demands the fence: open work (the list can only shrink; a listed case that a run
/// shows fails the test).
const NO_WITNESS: [&str; 5] = [
    "examples/allreduce_mesh.coll without the fence of line 49",
    "examples/allreduce_recursive_doubling.coll without the fence of line 36",
    "examples/incore_allreduce_mesh.coll without the fence of line 42",
    "examples/incore_allreduce_ring.coll without the fence of line 51",
    "examples/incore_reduce_scatter.coll without the fence of line 30",
];

fn protocol(text: &str) -> Option<Protocol> {
    collc_spec::check(text).protocol
}

#[test]
fn every_observable_missing_fence_is_a_violation() {
    let mut table = Vec::new();
    let mut failures = Vec::new();
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
                if !flagged {
                    failures.push(format!(
                        "{what}: the fence ordered a remote read before a notify; verify violates {:?}, fence pairs {:?}",
                        v.violated, v.fence_pairs
                    ));
                }
                let dependent = NO_WITNESS.contains(&what.as_str());
                if race.is_none() && !dependent {
                    failures.push(format!(
                        "{what}: the fence ordered a remote read before a notify; no relaxed run shows the read in flight"
                    ));
                }
                if race.is_some() && dependent {
                    failures.push(format!(
                        "{what}: listed in NO_WITNESS, but the relaxed run shows it: remove it from the list"
                    ));
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
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
