//! Cross-checks the stubborn-set reduction against the full search on randomly generated
//! small protocols (the fixtures' cross-check is `por_crosscheck.rs`): a broadcast whose
//! root and non-root branches are random sequences of notifies, waits, puts, gets,
//! copies, reduces and fences over two credit signals and two windows, with one block
//! per rank or two (signal cells per block, windows shared), at P = 2 and 3,
//! two calls, in sequentially consistent and relaxed memory. Wherever the full search
//! completes, the reduced one must complete too and meet exactly the same terminal states
//! and report the same finding codes, with no more states. `PROPTEST_CASES` raises the
//! number of protocols (64 by default, a few seconds).

use collc_sim::explore::terminal_states;
use collc_sim::{Budget, Memory, Schedule, SimConfig};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The statements a branch is drawn from (`#`: the block's index of a signal cell, if any).
const STMTS: [&str; 10] = [
    "for p in peers { notify a[me]# @ p += 1; }",
    "for p in peers { wait a[p]# >= 1; }",
    "notify b[me]# @ root += 1;",
    "for p in peers { wait b[p]# >= 1; }",
    "for p in peers { put data[0 .. n] @ p <- data[0 .. n]; }",
    "get data[0 .. n] <- data[0 .. n] @ root;",
    "copy tmp[0 .. n] <- data[0 .. n];",
    "fence;",
    "reduce sum tmp[0 .. n] <- data[0 .. n] @ root;",
    "copy data[0 .. n] <- tmp[0 .. n];",
];

/// The protocol with branches `root` and `other` (indices into [`STMTS`]); `reused`
/// chooses the windows' lifetime, `blocks` two blocks per rank (each signal cell then per
/// block: `a[me][blk]`; the windows shared by the blocks).
fn protocol(root: &[usize], other: &[usize], reused: bool, blocks: bool) -> String {
    let (cell, dims, decl) = if blocks {
        ("[blk]", "[P][2]", "    blocks blk in 0..2;\n")
    } else {
        ("", "[P]", "")
    };
    let branch = |ix: &[usize]| -> String {
        ix.iter()
            .map(|i| {
                format!(
                    "            {}\n",
                    STMTS[i % STMTS.len()].replace('#', cell)
                )
            })
            .collect::<String>()
    };
    let life = if reused { "reused" } else { "per call" };
    format!(
        "collective random: broadcast(root, data) {{\n    ranks P in 1..=16;\n{decl}    param root: rank;\n    param n: int in 1..=4;\n    signal a{dims};\n    signal b{dims};\n    window data: f32[n] {life};\n    window tmp: f32[n] {life};\n\n    body {{\n        if me == root {{\n{}        }} else {{\n{}        }}\n    }}\n}}\n",
        branch(root),
        branch(other)
    )
}

fn config(memory: Memory, reduce: bool) -> SimConfig {
    SimConfig {
        calls: 2,
        memory,
        schedule: Schedule::Exhaustive,
        budget: Budget {
            max_states: 20_000,
            max_time: Duration::from_secs(10),
            ..Budget::default()
        },
        reduce,
        ..SimConfig::default()
    }
}

/// Whether the reduced search agrees with the full one on `text` at every small
/// assignment; `Ok(false)` when nothing could be compared (invalid, or the full search
/// did not complete).
fn agrees(text: &str) -> Result<bool, TestCaseError> {
    let Some(p) = collc_spec::front(&collc_verifier::Ranges, text).protocol else {
        return Ok(false);
    };
    let mut compared = false;
    for (world, memory) in [(2, Memory::Sc), (3, Memory::Sc), (2, Memory::Relaxed)] {
        let params: BTreeMap<String, i64> = [("P", world), ("root", 0), ("n", 2)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let Ok((full, full_t)) = terminal_states(&p, &params, &config(memory, false)) else {
            continue;
        };
        if !full.stats.complete {
            continue;
        }
        let (red, red_t) = terminal_states(&p, &params, &config(memory, true))
            .map_err(|e| TestCaseError::fail(format!("reduced search fails: {e:?}\n{text}")))?;
        let codes = |r: &collc_sim::SimReport| -> BTreeSet<String> {
            r.findings.iter().map(|f| f.code.clone()).collect()
        };
        let what = format!("P={world} {memory:?}\n{text}");
        prop_assert!(red.stats.complete, "reduced search incomplete: {what}");
        prop_assert_eq!(codes(&full), codes(&red), "findings differ: {}", what);
        prop_assert_eq!(full_t, red_t, "terminal states differ: {}", what);
        prop_assert!(
            red.stats.states <= full.stats.states,
            "more states reduced: {what}"
        );
        compared = true;
    }
    Ok(compared)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn reduction_agrees_with_the_full_search_on_random_protocols(
        root in prop::collection::vec(0usize..STMTS.len(), 1..6),
        other in prop::collection::vec(0usize..STMTS.len(), 1..6),
        reused in any::<bool>(),
        blocks in any::<bool>(),
    ) {
        agrees(&protocol(&root, &other, reused, blocks))?;
    }
}

/// The generator is not vacuous: of 200 protocols drawn from it (a fixed pseudo-random
/// sequence), most validate and are compared, and their outcomes are mixed: some with a
/// data race, some without, at least four different sets of finding codes.
#[test]
fn the_generator_produces_protocols_the_searches_compare() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |m: usize| -> usize {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as usize
    };
    let (mut compared, mut racy) = (0, 0);
    let mut outcomes: BTreeSet<BTreeSet<String>> = BTreeSet::new();
    for _ in 0..200 {
        let root: Vec<usize> = (0..1 + next(5)).map(|_| next(STMTS.len())).collect();
        let other: Vec<usize> = (0..1 + next(5)).map(|_| next(STMTS.len())).collect();
        let text = protocol(&root, &other, next(2) == 0, next(2) == 0);
        match agrees(&text) {
            Ok(true) => compared += 1,
            Ok(false) => {}
            Err(e) => panic!("{e}"),
        }
        let p = collc_spec::front(&collc_verifier::Ranges, &text).protocol;
        if let Some(p) = p {
            let params: BTreeMap<String, i64> = [("P", 2), ("root", 0), ("n", 2)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            if let Ok((r, _)) = terminal_states(&p, &params, &config(Memory::Sc, true)) {
                let codes: BTreeSet<String> = r.findings.iter().map(|f| f.code.clone()).collect();
                racy += usize::from(codes.contains("sim::data-race"));
                outcomes.insert(codes);
            }
        }
    }
    eprintln!("{compared} of 200 random protocols compared, {racy} with a data race, {} distinct sets of finding codes: {outcomes:?}", outcomes.len());
    assert!(compared >= 150, "only {compared} of 200 compared");
    assert!((10..=190).contains(&racy), "{racy} of 200 with a data race");
    assert!(
        outcomes.len() >= 4,
        "only {} outcomes: {outcomes:?}",
        outcomes.len()
    );
}
