//! Every example and every bug fixture through the bounded model checker at
//! small bounds: each `// expect: sim::...` code annotated in a file must be
//! found (sequentially consistent mode), and a file without sim annotations must
//! produce no sim finding. A second pass checks the memory-model annotations:
//! `// expect[relaxed]: sim::...` must be found with `--memory relaxed`, and
//! `// expect[sticky]: sim::...` with `--memory relaxed --sticky-poll`, and
//! `// expect[3 calls]: sim::...` (a race that needs a third call, such as a part of a
//! double buffer written again two calls later) in sc memory with 3 calls.

use collc_sim::bounded::{check, BoundedConfig, Bounds};
use collc_sim::{Budget, Memory};
use collc_spec::ir::Lifetime;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn coll_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "coll"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The `sim::` codes annotated with `// expect:` in a fixture.
fn expected(text: &str) -> BTreeSet<String> {
    expected_tagged(text, "// expect:")
}

/// The `sim::` codes annotated with `tag` (e.g. `// expect[relaxed]:`) in a fixture.
fn expected_tagged(text: &str, tag: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if let Some((_, rest)) = line.split_once(tag) {
            for code in rest.split(',') {
                let code = code.trim();
                if code.starts_with("sim::") {
                    out.insert(code.to_string());
                }
            }
        }
    }
    out
}

/// Runs the bounded check on one file: (annotated codes, found codes, every assignment complete).
fn run(path: &Path) -> FixtureOutcome {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (found, complete) = found_codes(&text, Memory::Sc, false)?;
    Ok((expected(&text), found, complete))
}

/// The codes the bounded check finds in `text` at the fixture bounds (P 2..=3, 1..=2
/// tiles, 2 calls) in the given memory mode, and whether exploration completed.
fn found_codes(
    text: &str,
    memory: Memory,
    sticky_poll: bool,
) -> Result<(BTreeSet<String>, bool), String> {
    found_codes_calls(text, memory, sticky_poll, 2)
}

/// [`found_codes`] with `calls` back-to-back calls.
fn found_codes_calls(
    text: &str,
    memory: Memory,
    sticky_poll: bool,
    calls: usize,
) -> Result<(BTreeSet<String>, bool), String> {
    let p = collc_spec::front(&collc_verifier::Ranges, text)
        .protocol
        .ok_or_else(|| "does not validate".to_string())?;
    let cfg = BoundedConfig {
        bounds: Bounds {
            ranks: (2, 3),
            tiles: (1, 2),
            calls,
            small_ints: 2,
        },
        per_config: Budget {
            max_states: 150_000,
            max_time: Duration::from_secs(3),
            ..Budget::default()
        },
        total_time: Duration::from_secs(5),
        memory,
        sticky_poll,
        ..BoundedConfig::default()
    };
    let r = check(&p, &cfg);
    if !r.errors.is_empty() {
        return Err(r.errors.join("; "));
    }
    let found: BTreeSet<String> = r
        .configs
        .iter()
        .flat_map(|c| c.codes.iter().cloned())
        .collect();
    let complete = r.obligations.iter().all(|o| o.complete);
    Ok((found, complete))
}

/// Expected codes, found codes, and whether exploration completed — or why the run failed.
type FixtureOutcome = Result<(BTreeSet<String>, BTreeSet<String>, bool), String>;

#[test]
fn examples_and_bug_fixtures() {
    let mut files = coll_files("examples");
    files.extend(coll_files("examples/bugs"));
    files.extend(coll_files("examples/outside_model"));
    assert!(files.len() >= 3, "no fixtures found");
    let chunks: Vec<Vec<PathBuf>> = (0..2)
        .map(|k| files.iter().skip(k).step_by(2).cloned().collect())
        .collect();
    let results: Vec<(PathBuf, FixtureOutcome)> = std::thread::scope(|s| {
        let hs: Vec<_> = chunks
            .iter()
            .map(|c| s.spawn(move || c.iter().map(|f| (f.clone(), run(f))).collect::<Vec<_>>()))
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    let mut failures = Vec::new();
    for (f, r) in results {
        let name = f.strip_prefix(repo()).unwrap_or(&f).display().to_string();
        match r {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((want, found, complete)) => {
                let missing: Vec<&String> = want.difference(&found).collect();
                if !missing.is_empty() {
                    failures.push(format!("{name}: annotated {missing:?} not found (found {found:?}, complete: {complete})"));
                }
                if want.is_empty() && !found.is_empty() {
                    failures.push(format!("{name}: no sim annotation, but found {found:?}"));
                }
                let extra: Vec<&String> = found.difference(&want).collect();
                eprintln!(
                    "{name}: want {want:?}, found {found:?}, extra {extra:?}, complete {complete}"
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every `expect[relaxed]` / `expect[sticky]` / `expect[3 calls]` annotation in the examples
/// and bug fixtures, checked in its memory mode (or with 3 calls): each annotated code must
/// be found.
#[test]
fn memory_model_annotations() {
    let mut files = coll_files("examples");
    files.extend(coll_files("examples/bugs"));
    files.extend(coll_files("examples/outside_model"));
    let modes = [
        ("// expect[relaxed]:", Memory::Relaxed, false, 2, "relaxed"),
        (
            "// expect[sticky]:",
            Memory::Relaxed,
            true,
            2,
            "relaxed --sticky-poll",
        ),
        ("// expect[3 calls]:", Memory::Sc, false, 3, "3 calls"),
    ];
    let mut failures = Vec::new();
    let mut checked = Vec::new();
    for f in &files {
        let name = f.strip_prefix(repo()).unwrap_or(f).display().to_string();
        let Ok(text) = std::fs::read_to_string(f) else {
            failures.push(format!("{name}: unreadable"));
            continue;
        };
        for (tag, memory, sticky, calls, mode) in modes {
            let want = expected_tagged(&text, tag);
            if want.is_empty() {
                continue;
            }
            match found_codes_calls(&text, memory, sticky, calls) {
                Err(e) => failures.push(format!("{name} ({mode}): {e}")),
                Ok((found, complete)) => {
                    let missing: Vec<&String> = want.difference(&found).collect();
                    if !missing.is_empty() {
                        failures.push(format!("{name} ({mode}): annotated {missing:?} not found (found {found:?}, complete: {complete})"));
                    }
                    eprintln!(
                        "{name} ({mode}): want {want:?}, found {found:?}, complete {complete}"
                    );
                    checked.push(format!("{name} ({mode})"));
                }
            }
        }
    }
    // The fixtures this pass exists for: a tag typo must not silently drop them.
    for must in [
        "examples/outside_model/broadcast_root_only_23a8b699b.coll (relaxed --sticky-poll)",
        "examples/bugs/allreduce_ring_no_flush.coll (relaxed)",
        "examples/bugs/scatter_unfenced_get.coll (relaxed)",
        "examples/bugs/broadcast_read_complete_unfenced.coll (relaxed)",
        "examples/bugs/epoch_broadcast_lagging_reader.coll (3 calls)",
    ] {
        if !checked.iter().any(|c| c == must) {
            failures.push(format!("{must}: no annotation checked"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the sticky-polling hypothesis (`--memory relaxed --sticky-poll`) does to
/// the merged examples at the fixture bounds. Every wait that can be polled
/// before its credit lands hangs, so every example that has a wait deadlocks:
/// the hypothesis reproduces the 23a8b699b hang but does not separate it from
/// the kernels pypto verified on silicon (see sim/README.md, "Memory modes").
#[test]
fn sticky_poll_on_merged_examples() {
    let mut failures = Vec::new();
    for f in coll_files("examples") {
        let name = f.strip_prefix(repo()).unwrap_or(&f).display().to_string();
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        match found_codes(&text, Memory::Relaxed, true) {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((found, complete)) => {
                eprintln!("{name}: sticky found {found:?}, complete {complete}");
                if !found.contains("sim::deadlock") {
                    failures.push(format!(
                        "{name}: sticky polling no longer deadlocks it (found {found:?})"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every merged example in relaxed memory (buffered writes, stale cached cells, and
/// remote reads in flight until a fence) at the fixture bounds: nothing is found. Their
/// fences are where the hardware needs them; a missing one shows (the bug fixtures
/// annotated `expect[relaxed]`, `fence_mutations.rs`).
#[test]
fn merged_examples_pass_in_relaxed_memory() {
    let mut failures = Vec::new();
    for f in coll_files("examples") {
        let name = f.strip_prefix(repo()).unwrap_or(&f).display().to_string();
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        match found_codes(&text, Memory::Relaxed, false) {
            Err(e) => failures.push(format!("{name}: {e}")),
            Ok((found, complete)) => {
                eprintln!("{name}: relaxed found {found:?}, complete {complete}");
                if !found.is_empty() {
                    failures.push(format!("{name}: relaxed memory finds {found:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A lagged acknowledgement across calls (issue 27, class c): the writer's
/// `wait done[q] >= call - 1` on a monotonic cell counts the reader's credit of call c - 2
/// (the call that read the half it is about to overwrite), not one of its own call, so it
/// is no stale pass; over 4 calls (the half reused twice) nothing is found. Its twin,
/// waiting one call less, overwrites a half still being read: a race and a wrong result.
#[test]
fn lagged_acknowledgement_is_not_a_stale_pass() {
    let read = |f: &str| std::fs::read_to_string(repo().join(f)).expect("fixture");
    let ok = read("examples/idioms/lagged_ack_double_buffer.coll");
    let (found, complete) = found_codes_calls(&ok, Memory::Sc, false, 4).expect("runs");
    assert!(
        found.is_empty() && complete,
        "{found:?} complete {complete}"
    );
    let bug = read("examples/idioms/bugs/lagged_ack_double_buffer_two_behind.coll");
    let (found, _) = found_codes_calls(&bug, Memory::Sc, false, 4).expect("runs");
    assert!(
        found.contains("sim::data-race") && !found.contains("sim::stale-pass"),
        "{found:?}"
    );
}

/// The 23a8b699b fixture under sticky polling on the schedule of the silicon report
/// ("the root polled a locally cached zero"): only the root's read-complete poll pins
/// (before the non-root's +1 lands), every other wait reads the current value. The root
/// hangs in `wait sig[p] >= 1` on a stale cached 0 while its cell holds 1.
#[test]
fn root_only_broadcast_root_hangs_on_a_stale_zero() {
    use collc_sim::machine::{Action, Limits, Machine, Outcome};
    let text = std::fs::read_to_string(
        repo().join("examples/outside_model/broadcast_root_only_23a8b699b.coll"),
    )
    .expect("fixture");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("validates");
    let params = [("P", 2), ("root", 0), ("n", 256)]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    let b = collc_spec::eval::bind(&p, &params).expect("binds");
    let code = collc_sim::code::Code::compile(&p, &b).expect("compiles");
    let mut m = Machine::new(
        &p,
        code,
        1,
        Memory::Relaxed,
        Limits {
            max_trip: 1 << 20,
            max_nest: 1 << 20,
        },
    );
    m.sticky_poll = true;
    let mut out = Outcome {
        events: Some(Vec::new()),
        ..Outcome::default()
    };
    let mut s = m.initial(&mut out);
    for _ in 0..1000 {
        let en = m.enabled(&s);
        if m.stuck(&en) {
            break;
        }
        // Rank 0 (the root) pins whenever it can; nobody else ever does.
        let pick = en
            .iter()
            .find(|a| matches!(a, Action::Pin(0)))
            .or_else(|| en.iter().find(|a| matches!(a, Action::Run(_))))
            .or_else(|| en.iter().find(|a| !matches!(a, Action::Pin(_))))
            .copied()
            .expect("an action");
        m.step(&mut s, pick, &mut out);
    }
    m.terminal(&s, &mut out);
    let f = out
        .findings
        .iter()
        .find(|f| f.code == "sim::deadlock")
        .expect("a deadlock");
    assert!(
        f.notes.iter().any(|n| n.starts_with(
            "rank 0 (call 1) waits at `wait sig[p] >= 1` for rank 0's sig[1] >= 1; it is blocked on a stale cached value 0 (sticky polling: the poll keeps re-reading its cached line), the cell itself holds 1"
        )),
        "{:?}",
        f.notes
    );
    let events = out.events.unwrap_or_default();
    assert!(
        events.iter().any(|e| e.rank == 0
            && e.text == "rank 0's sig[1] >= 1 polls and caches 0; the poll keeps re-reading the cached line (sticky polling)"),
        "{events:?}"
    );
}

/// The merged kernels whose buffers are declared `per call` (pypto's tests hand in fresh
/// buffers per call): declared `reused` instead, one buffer serving back-to-back calls races.
const PER_CALL: [&str; 8] = [
    "all_to_all",
    "all_to_all_v",
    "allgather",
    "broadcast",
    "incore_all_to_all",
    "incore_all_to_all_v",
    "incore_allgather",
    "incore_broadcast",
];

/// Every merged example explored over every schedule of 3 back-to-back calls at P=2,3,4,
/// 1..3 tiles, every root, the lowest two values of other parameters, its windows and value
/// signals living as declared: every assignment is explored completely and nothing is
/// found. The kernels declared `per call` are also run with every buffer declared `reused`
/// (the other contract), which must race: a data race and a wrong result, and for
/// all_to_all_v a stale receive count, nothing else.
#[test]
fn merged_examples_pass_exhaustively_at_the_full_bounds() {
    let files = coll_files("examples");
    // 18 merged kernels, 3 epoch-discipline examples, 5 log-round examples and the
    // rooted reduce, gather and scatter, and the pulled allgather.
    assert_eq!(files.len(), 30, "{files:?}");
    let check_file = |f: &PathBuf| -> Result<(), String> {
        let name = f
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(f).map_err(|e| e.to_string())?;
        let p = collc_spec::front(&collc_verifier::Ranges, &text)
            .protocol
            .ok_or_else(|| format!("{name}: does not validate"))?;
        let per_call = PER_CALL.contains(&name.as_str());
        if per_call
            != p.windows
                .iter()
                .any(|w| w.lifetime == Some(Lifetime::PerCall))
        {
            return Err(format!("{name}: PER_CALL does not match its declarations"));
        }
        let run = |p: &collc_spec::Validated| {
            check(
                p,
                &BoundedConfig {
                    bounds: Bounds::default(),
                    per_config: Budget {
                        max_states: 2_000_000,
                        max_time: Duration::from_secs(120),
                        ..Budget::default()
                    },
                    total_time: Duration::from_secs(600),
                    ..BoundedConfig::default()
                },
            )
        };
        let codes = |r: &collc_sim::bounded::BoundedReport| -> BTreeSet<String> {
            r.configs
                .iter()
                .flat_map(|c| c.codes.iter().cloned())
                .collect()
        };
        let r = run(&p);
        if !r.errors.is_empty() || r.configs.is_empty() {
            return Err(format!("{name}: {:?}", r.errors));
        }
        if let Some(c) = r.configs.iter().find(|c| !c.complete) {
            return Err(format!(
                "{name}: {:?} incomplete: {:?}",
                c.params, c.stopped
            ));
        }
        if !r.configs.iter().any(|c| c.params.get("P") == Some(&4)) {
            return Err(format!("{name}: P=4 not in the grid"));
        }
        if !codes(&r).is_empty() {
            return Err(format!("{name}: found {:?}", codes(&r)));
        }
        if per_call {
            let shared = run(&p.with_every_lifetime(Lifetime::Reused));
            let mut want: BTreeSet<String> = ["sim::data-race", "sim::wrong-result"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            if name.ends_with("all_to_all_v") {
                want.insert("sim::stale-value".to_string());
            }
            if codes(&shared) != want {
                return Err(format!("{name}: every buffer reused: {:?}", codes(&shared)));
            }
        }
        Ok(())
    };
    let failures: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|k| {
                let mine: Vec<PathBuf> = files.iter().skip(k).step_by(2).cloned().collect();
                s.spawn(move || {
                    mine.iter()
                        .filter_map(|f| check_file(f).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The simulator's first call is not preceded by a barrier: a multicore gather whose lane
/// stride makes two cells alias races in call 1 (the root's host reads before a peer's put
/// is ordered), and one call of exhaustive exploration finds it. It used to pass at 1 call
/// (every process's first accesses were at epoch 0, known to every other process).
#[test]
fn a_race_in_the_first_call_is_found_in_one_call() {
    let text = std::fs::read_to_string(repo().join("examples/bugs/gather_lane_stride.coll"))
        .expect("fixture");
    let (found, complete) = found_codes_calls(&text, Memory::Sc, false, 1).expect("runs");
    assert!(complete);
    assert!(found.contains("sim::data-race"), "{found:?}");
}
