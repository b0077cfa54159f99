//! Golden tests of `collc sim`: verdict lines, exit codes (0 ok, 1 violation or bad
//! input, 2 usage, 3 incomplete without violation), traces, budgets, JSON and SVG output,
//! the relaxed memory mode, the read-complete fix of the merged broadcast, and all_to_all_v's
//! value check (counted rows and receive counts, on the examples and on mutated protocols).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn sim(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(repo())
        .arg("sim")
        .args(args)
        .output()
        .expect("collc runs");
    Run {
        code: out.status.code().expect("collc exits normally (no signal)"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("collc-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn barrier_exhaustive_is_complete() {
    let r = sim(&[
        "examples/barrier.coll",
        "--param",
        "P=3",
        "--calls",
        "3",
        "--schedule",
        "exhaustive",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines,
        ["sim barrier (P=3; 3 calls, exhaustive, sc): ok — 55 states, 54 transitions, exploration complete (partial-order reduced)"]
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    // Without the reduction: every interleaving, the same verdict, and no reduction claimed.
    let full = sim(&[
        "examples/barrier.coll",
        "--param",
        "P=3",
        "--calls",
        "3",
        "--no-reduction",
    ]);
    assert_eq!(full.code, 0, "{}{}", full.stdout, full.stderr);
    assert_eq!(
        full.stdout.trim(),
        "sim barrier (P=3; 3 calls, exhaustive, sc): ok — 1006 states, 2544 transitions, exploration complete"
    );
}

#[test]
fn set0_reset_deadlocks_with_a_trace() {
    let r = sim(&[
        "examples/bugs/barrier_set0_reset.coll",
        "--param",
        "P=2",
        "--calls",
        "2",
        "--schedule",
        "exhaustive",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let o = &r.stdout;
    assert!(o.starts_with("sim barrier_set0_reset (P=2; 2 calls, exhaustive, sc): VIOLATED sim::deadlock, sim::lost-credit — 24 states"), "{o}");
    assert!(o.contains("exploration complete"), "{o}");
    // Who waits, on which cell, for what value, and what it holds.
    assert!(
        o.contains("note: rank 1 (call 2) waits at `wait sig[p] >= 1` for rank 1's sig[0] >= 1; the cell holds 0"),
        "{o}"
    );
    assert!(o.contains("blocked forever: rank 1's sig[0] >= 1, holds 0  [line 16: wait sig[p] >= 1]   <-- sim::deadlock"), "{o}");
    assert!(
        o.contains(
            "rank 1's sig[0] = 0: 2 -> 0  [line 22: notify sig[p] = 0]   <-- sim::lost-credit"
        ),
        "{o}"
    );
    assert!(
        o.contains("trace (P=2; 10 scheduler steps, shortest found)"),
        "{o}"
    );
}

#[test]
fn parameter_outside_its_domain() {
    let r = sim(&[
        "examples/barrier.coll",
        "--param",
        "P=65537",
        "--calls",
        "2",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "error: examples/barrier.coll: parameter `P` = 65537 is outside its domain 1..=65536"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("the protocol's parameters: P"),
        "{}",
        r.stderr
    );
}

#[test]
fn unknown_parameter() {
    // One --param parser for every subcommand: an undeclared name is a usage error (2).
    let r = sim(&["examples/barrier.coll", "--param", "P=2", "--param", "Q=1"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("error: the protocol has no parameter `Q` (it declares: P)"),
        "{}",
        r.stderr
    );
}

#[test]
fn malformed_parameter_is_a_usage_error() {
    let r = sim(&["examples/barrier.coll", "--param", "P3"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("expected NAME=VALUE"), "{}", r.stderr);
}

#[test]
fn state_budget_too_small_is_incomplete() {
    let r = sim(&[
        "examples/barrier.coll",
        "--param",
        "P=3",
        "--calls",
        "3",
        "--max-states",
        "10",
    ]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    let first = r.stdout.lines().next().unwrap_or("");
    assert!(
        first.contains("incomplete, no violation in what was explored"),
        "{first}"
    );
    assert!(
        first.contains("exploration INCOMPLETE: state budget of 10 exhausted"),
        "{first}"
    );
    assert!(!r.stdout.contains("exploration complete"), "{}", r.stdout);
    assert!(!r.stdout.contains(": ok"), "{}", r.stdout);
}

/// A loop nest of 2^40 local iterations (each loop under the per-loop limit) used to run
/// inside one scheduler step, where no budget is checked: a hang. It is refused before it runs.
#[test]
fn huge_loop_nest_is_refused_quickly() {
    let src = "collective nested: broadcast(root, data) {
    ranks P in 1..=16;
    param root: rank;
    param n: int in 1..=1048576;
    signal sig[P];
    window data: f32[n];

    body {
        for i in 0..n {
            for j in 0..n {
                if me == root {
                    copy data[0 .. 1] <- data[0 .. 1];
                }
            }
        }
        fence;
        for p in peers {
            notify sig[me] @ p += 1;
        }
        for p in peers {
            wait sig[p] >= 1;
        }
        fence;
        if me != root {
            get data[0 .. n] <- data[0 .. n] @ root;
        }
    }

    epilogue {
        for p in peers {
            notify sig[p] -= 1;
        }
        fence;
    }
}
";
    let f = tmp("nested.coll");
    std::fs::write(&f, src).unwrap();
    let f = f.to_str().unwrap();
    for schedule in ["exhaustive", "round-robin"] {
        let t = Instant::now();
        let r = sim(&[
            f,
            "--param",
            "P=2",
            "--param",
            "root=0",
            "--param",
            "n=1048576",
            "--calls",
            "2",
            "--schedule",
            schedule,
        ]);
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{schedule}: took {:?}",
            t.elapsed()
        );
        assert_eq!(r.code, 3, "{schedule}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout
                .contains("incomplete, no violation in what was explored"),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains(
                "`for j in 0..n` nested in 1 enclosing loop(s) would run 1099511627776 iterations"
            ),
            "{}",
            r.stdout
        );
        assert!(r.stdout.contains("choose smaller ones"), "{}", r.stdout);
    }
}

/// The merged broadcast at the largest `n` (4096 tiles) is within the loop limits but far
/// beyond an exhaustive search: the time budget stops it, incomplete, never `complete`.
#[test]
fn large_broadcast_stops_at_the_time_budget() {
    let t = Instant::now();
    let r = sim(&[
        "examples/broadcast.coll",
        "--param",
        "P=2",
        "--param",
        "root=0",
        "--param",
        "n=1048576",
        "--calls",
        "2",
        "--max-time",
        "1",
    ]);
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("exploration INCOMPLETE: time budget of 1s exhausted"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("exploration complete"), "{}", r.stdout);
}

#[test]
fn json_report_has_the_verdict() {
    let r = sim(&[
        "examples/bugs/barrier_set0_reset.coll",
        "--param",
        "P=2",
        "--calls",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("valid JSON");
    assert_eq!(v["protocol"], "barrier_set0_reset");
    assert_eq!(v["verdict"], "violated");
    assert_eq!(v["calls"], 2);
    assert_eq!(v["params"]["P"], 2);
    assert_eq!(v["stats"]["complete"], true);
    assert_eq!(v["stats"]["states"], 24);
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["sim::deadlock", "sim::lost-credit"]);

    let ok = sim(&[
        "examples/barrier.coll",
        "--param",
        "P=3",
        "--format",
        "json",
    ]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    let v: serde_json::Value = serde_json::from_str(&ok.stdout).expect("valid JSON");
    assert_eq!(v["verdict"], "pass");
    assert_eq!(v["stats"]["complete"], true);
    assert!(v["findings"].as_array().unwrap().is_empty());
}

#[test]
fn svg_has_one_lane_per_rank() {
    for (file, params, ranks) in [
        ("examples/bugs/barrier_set0_reset.coll", vec!["P=2"], 2),
        ("examples/barrier.coll", vec!["P=3"], 3),
    ] {
        let out = tmp(&format!("{ranks}.svg"));
        let mut args = vec![file, "--calls", "2", "--svg", out.to_str().unwrap()];
        for p in &params {
            args.extend(["--param", p]);
        }
        let r = sim(&args);
        assert!(r.code == 0 || r.code == 1, "{}{}", r.stdout, r.stderr);
        let svg = std::fs::read_to_string(&out).expect("the SVG was written");
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        for rank in 0..ranks {
            assert_eq!(
                svg.matches(&format!(">rank {rank}</text>")).count(),
                1,
                "{file}: lane of rank {rank}"
            );
        }
        assert_eq!(svg.matches(&format!(">rank {ranks}</text>")).count(), 0);
    }
}

/// The ring allreduce without the per-step flush is correct under SC and wrong under the
/// relaxed model (a notify overtakes the unfenced chunk stores).
#[test]
fn ring_without_flush_fails_only_relaxed() {
    let args = |m| {
        sim(&[
            "examples/bugs/allreduce_ring_no_flush.coll",
            "--param",
            "P=2",
            "--param",
            "n=512",
            "--calls",
            "2",
            "--memory",
            m,
        ])
    };
    let sc = args("sc");
    assert_eq!(sc.code, 0, "{}{}", sc.stdout, sc.stderr);
    assert!(
        sc.stdout.contains(": ok — ") && sc.stdout.contains("exploration complete"),
        "{}",
        sc.stdout
    );
    let relaxed = args("relaxed");
    assert_eq!(relaxed.code, 1, "{}{}", relaxed.stdout, relaxed.stderr);
    let first = relaxed.stdout.lines().next().unwrap_or("");
    assert!(
        first.contains("VIOLATED sim::data-race, sim::wrong-result"),
        "{first}"
    );
    assert!(
        relaxed.stdout.contains("\nsim::data-race: "),
        "{}",
        relaxed.stdout
    );
    assert!(
        relaxed.stdout.contains("\nsim::wrong-result: "),
        "{}",
        relaxed.stdout
    );
}

/// The merged broadcast with a `reused` window (the bug fixture) lets the root restage while
/// a non-root reads the last tile, a race whose help names the window and both fixes; the
/// read-complete round removes both findings, and so does the `per call` window the merged
/// example declares (P=3, 2 tiles, 2 calls, exhaustive, every root).
#[test]
fn read_complete_round_fixes_the_broadcast() {
    let run = |file: &str, root: &str, memory: &str| {
        sim(&[
            file,
            "--param",
            "P=3",
            "--param",
            root,
            "--param",
            "n=512",
            "--calls",
            "2",
            "--schedule",
            "exhaustive",
            "--memory",
            memory,
        ])
    };
    let reused = run("examples/bugs/broadcast_reused_window.coll", "root=0", "sc");
    assert_eq!(reused.code, 1, "{}{}", reused.stdout, reused.stderr);
    assert!(
        reused
            .stdout
            .lines()
            .next()
            .unwrap()
            .contains("VIOLATED sim::data-race, sim::wrong-result"),
        "{}",
        reused.stdout
    );
    assert!(
        reused
            .stdout
            .contains("  help: `data` is declared `reused`: one window serves back-to-back calls")
            && reused
                .stdout
                .contains("examples/broadcast_read_complete.coll")
            && reused.stdout.contains("or declare `data` `per call`"),
        "{}",
        reused.stdout
    );
    for (file, root) in [
        ("examples/broadcast_read_complete.coll", "root=0"),
        ("examples/broadcast_read_complete.coll", "root=1"),
        ("examples/broadcast_read_complete.coll", "root=2"),
        ("examples/broadcast.coll", "root=0"),
        ("examples/broadcast.coll", "root=2"),
    ] {
        let fixed = run(file, root, "sc");
        assert_eq!(fixed.code, 0, "{root}: {}{}", fixed.stdout, fixed.stderr);
        assert!(!fixed.stdout.contains("sim::"), "{}", fixed.stdout);
        assert!(
            fixed.stdout.contains("exploration complete"),
            "{}",
            fixed.stdout
        );
    }
    let relaxed = run("examples/broadcast_read_complete.coll", "root=0", "relaxed");
    assert_eq!(relaxed.code, 0, "{}{}", relaxed.stdout, relaxed.stderr);
    assert!(
        relaxed.stdout.contains("exploration complete"),
        "{}",
        relaxed.stdout
    );
}

/// Asserts that a run reports a violation (exit 1) whose first line contains `verdict`
/// (when given) and whose report contains `finding`.
fn assert_violation(r: &Run, verdict: Option<&str>, finding: &str) {
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    if let Some(v) = verdict {
        let first = r.stdout.lines().next().unwrap_or("");
        assert!(first.contains(v), "{first}");
    }
    assert!(r.stdout.contains(finding), "{}", r.stdout);
}

/// `examples/all_to_all_v.coll` renamed and with its body edited (`from` -> `to`), written
/// to a temporary file; its `// expect:` annotations are dropped.
fn a2av_variant(name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(repo().join("examples/all_to_all_v.coll")).unwrap();
    text = text.replace("collective all_to_all_v:", &format!("collective {name}:"));
    for (from, to) in edits {
        assert!(text.contains(from), "{name}: `{from}` not in the example");
        text = text.replace(from, to);
    }
    let text: String = text
        .lines()
        .map(|l| l.split("  // expect:").next().unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let path = tmp(&format!("{name}.coll"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `file` with every `per call` buffer declared `reused`, written to a temporary file.
fn reused_variant(file: &str) -> PathBuf {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    assert!(
        text.contains(" per call;"),
        "{file} declares no per-call buffer"
    );
    let name = Path::new(file).file_stem().unwrap().to_string_lossy();
    let path = tmp(&format!("{name}_reused.coll"));
    std::fs::write(&path, text.replace(" per call;", " reused;")).unwrap();
    path
}

/// `collc sim FILE --param P=.. --param m=256 --param R=.. --calls ..` plus `extra`.
fn a2av_sim(file: &str, p: &str, r: &str, calls: &str, extra: &[&str]) -> Run {
    let (p, r) = (format!("P={p}"), format!("R={r}"));
    let mut args = vec![
        file, "--param", &p, "--param", "m=256", "--param", &r, "--calls", calls,
    ];
    args.extend(extra);
    sim(&args)
}

/// The merged all_to_all_v kernels deliver the right rows and counts (one call, every
/// schedule, P=2,3), and over two calls with their `per call` windows and receive counts.
/// Declared `reused` instead, the consume sees the next call's data: a fast rank's call-2
/// rows in the slow rank's target (with the race), and its call-2 count in the slow
/// rank's receive counts (a stale value).
#[test]
fn all_to_all_v_values_are_checked() {
    for file in [
        "examples/all_to_all_v.coll",
        "examples/incore_all_to_all_v.coll",
    ] {
        for p in ["2", "3"] {
            for r in ["1", "2", "3"] {
                let one = a2av_sim(file, p, r, "1", &[]);
                assert_eq!(
                    one.code, 0,
                    "{file} P={p} R={r}: {}{}",
                    one.stdout, one.stderr
                );
                assert!(
                    one.stdout.contains(": ok — ") && one.stdout.contains("exploration complete"),
                    "{}",
                    one.stdout
                );
            }
            let variant = reused_variant(file);
            let reused = a2av_sim(variant.to_str().unwrap(), p, "2", "2", &[]);
            assert_eq!(reused.code, 1, "{}{}", reused.stdout, reused.stderr);
            let first = reused.stdout.lines().next().unwrap_or("");
            assert!(
                first.contains("VIOLATED sim::data-race, sim::stale-value, sim::wrong-result — ")
                    && first.contains("exploration complete"),
                "{first}"
            );
            assert!(
                reused.stdout.contains(
                    "\nsim::stale-value: rank 0's host reads call 1's output rank 0's recv_counts["
                ) && reused.stdout.contains(
                    "in call 2 (`notify recv_counts[me] @ d = rows`): a later call's value"
                ),
                "{}",
                reused.stdout
            );
            let want = if p == "2" {
                "\nsim::wrong-result: wrong result: rank 0's output target[512..768] (tile 2) \
                 after call 1 lacks rank 1's contribution of call 1 (input[0..256]); holds \
                 rank 1's contribution of call 2 (input[0..256]) (block 1, row 0; rank 1 \
                 sent 1 row of its block 0)"
            } else {
                "\nsim::wrong-result: wrong result: rank 0's output target[1024..1536] (tiles \
                 4..=5) after call 1 lacks rank 2's contribution of call 1 (input[0..512]); \
                 holds rank 2's contribution of call 2 (input[0..512]) (block 2, rows 0..=1; \
                 rank 2 sent 2 rows of its block 0)"
            };
            assert!(reused.stdout.contains(want), "{}", reused.stdout);
            let fresh = a2av_sim(file, p, "2", "2", &[]);
            assert_eq!(fresh.code, 0, "{}{}", fresh.stdout, fresh.stderr);
            let first = fresh.stdout.lines().next().unwrap_or("");
            assert!(
                first.contains(": ok — ") && first.contains("exploration complete"),
                "{first}"
            );
        }
    }
}

/// Rows past the published count are don't-care: putting only those rows is right, one row
/// fewer is a wrong result naming the block and row.
#[test]
fn all_to_all_v_checks_only_the_counted_rows() {
    let put = "put target[me][r][0 .. m] @ d <- input[d][r][0 .. m];";
    let counted = a2av_variant(
        "a2av_counted_rows",
        &[(
            put,
            &format!("if r < rows {{\n                    {put}\n                }}"),
        )],
    );
    let short = a2av_variant(
        "a2av_one_row_short",
        &[(
            put,
            &format!("if r + 1 < rows {{\n                    {put}\n                }}"),
        )],
    );
    for p in ["2", "3"] {
        let ok = a2av_sim(counted.to_str().unwrap(), p, "2", "1", &[]);
        assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
        assert!(ok.stdout.contains(": ok — "), "{}", ok.stdout);
        let bad = a2av_sim(short.to_str().unwrap(), p, "2", "1", &[]);
        assert_violation(
            &bad,
            Some("VIOLATED sim::wrong-result — "),
            "\nsim::wrong-result: wrong result: rank 0's output target[512..768] (tile 2) \
                 after call 1 lacks rank 1's contribution of call 1 (input[0..256]); holds \
                 rank 0's window content from before the first call (block 1, row 0; rank 1 \
                 sent 1 row of its block 0)",
        );
    }
}

/// Mutated protocols: the wrong block (bug fixture), a skipped block (own block never
/// sent) and an unclamped count (bug fixture) are wrong results naming what is wrong;
/// windows that are not P blocks of the same rows are a runtime error.
#[test]
fn all_to_all_v_mutations_are_wrong_results() {
    let wrong = a2av_sim(
        "examples/bugs/all_to_all_v_wrong_block.coll",
        "2",
        "2",
        "1",
        &[],
    );
    assert_violation(
        &wrong,
        None,
        "\nsim::wrong-result: wrong result: rank 0's output target[512..768] (tile 2) after \
             call 1 lacks rank 1's contribution of call 1 (input[0..256]); holds rank 1's \
             contribution of call 1 (input[512..768]) (block 1, row 0; rank 1 sent 1 row of its \
             block 0)",
    );

    let skip = a2av_variant(
        "a2av_skip_self",
        &[("for d in ranks {", "for d in peers {")],
    );
    let r = a2av_sim(skip.to_str().unwrap(), "2", "2", "1", &[]);
    assert_violation(
        &r,
        None,
        "\nsim::wrong-result: wrong result: rank 1's output target[512..1024] (tiles 2..=3) \
             after call 1 lacks rank 1's contribution of call 1 (input[512..1024]); holds rank \
             1's window content from before the first call (block 1, rows 0..=1; rank 1 sent 2 \
             rows of its block 1)",
    );

    let file = "examples/bugs/all_to_all_v_unclamped_count.coll";
    let ok = a2av_sim(file, "2", "2", "1", &[]);
    assert_eq!(
        ok.code, 0,
        "no count above R=2 at P=2: {}{}",
        ok.stdout, ok.stderr
    );
    let bad = a2av_sim(file, "3", "2", "1", &[]);
    assert_violation(
        &bad,
        Some("VIOLATED sim::wrong-result — "),
        "\nsim::wrong-result: wrong result: rank 1's recv_counts[2] after call 1 holds 3; \
             rank 2 sent 2 rows (min of its send_counts[1] = 3 and the 2 rows per block)",
    );

    let shape = a2av_variant(
        "a2av_shape",
        &[
            (
                "window input: f32[P][R][m] per call;",
                "window input: f32[P][m] per call;",
            ),
            ("input[d][r][0 .. m]", "input[d][0 .. m]"),
        ],
    );
    let r = a2av_sim(shape.to_str().unwrap(), "2", "2", "1", &[]);
    assert_violation(
        &r,
        None,
        "\nsim::runtime-error: all_to_all_v: `input` has 512 elements but `target` has \
             1024; both must be 2 blocks of 2 rows of 256",
    );
}

const ROOT_ONLY: &str = "examples/outside_model/broadcast_root_only_23a8b699b.coll";

fn root_only(extra: &[&str]) -> Run {
    let mut args = vec![
        ROOT_ONLY, "--param", "P=2", "--param", "root=0", "--param", "n=256", "--calls", "2",
    ];
    args.extend_from_slice(extra);
    sim(&args)
}

#[test]
fn root_only_broadcast_deadlocks_under_sticky_polling() {
    let r = root_only(&["--memory", "relaxed", "--sticky-poll"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let o = &r.stdout;
    assert!(
        o.starts_with("sim broadcast_root_only_23a8b699b (P=2 n=256 root=0; 2 calls, exhaustive, relaxed, sticky polling): VIOLATED sim::deadlock — 33 states, 42 transitions, exploration complete"),
        "{o}"
    );
    assert!(o.contains("sim::deadlock: deadlock: every live process waits for a cell that can no longer change, or is blocked on a stale cached value it cannot invalidate while it polls"), "{o}");
    // The deadlock note names the stale cached value and what the cell really holds.
    assert!(
        o.contains("note: rank 1 (call 1) waits at `wait sig[root] >= t + 1` for rank 1's sig[0] >= 1; it is blocked on a stale cached value 0 (sticky polling: the poll keeps re-reading its cached line), the cell itself holds 1"),
        "{o}"
    );
    // The trace shows the pinning poll before the credit lands.
    let pin = o
        .find("rank 1's sig[0] >= 1 polls and caches 0; the poll keeps re-reading the cached line (sticky polling)")
        .expect("pinning poll in the trace");
    let credit = o
        .find("rank 1's sig[0] += 1: 0 -> 1")
        .expect("the credit in the trace");
    assert!(pin < credit, "{o}");
    assert!(
        o.contains(
            "blocked forever: rank 1's sig[0] >= 1, re-reads a stale cached 0 (the cell holds 1)"
        ),
        "{o}"
    );
}

#[test]
fn root_only_broadcast_sticky_json_and_svg_show_the_pin() {
    let svg = tmp("root_only_sticky.svg");
    let svg_s = svg.to_string_lossy().into_owned();
    let r = root_only(&[
        "--memory",
        "relaxed",
        "--sticky-poll",
        "--format",
        "json",
        "--svg",
        &svg_s,
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let j: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(j["sticky_poll"], true);
    let trace = j["findings"][0]["trace"].as_array().expect("trace");
    assert!(
        trace
            .iter()
            .any(|e| e["kind"]["type"] == "wait-pinned" && e["kind"]["value"] == 0),
        "{}",
        r.stdout
    );
    let pic = std::fs::read_to_string(&svg).expect("svg written");
    assert!(pic.contains("pins 0"), "{pic}");
}

#[test]
fn root_only_broadcast_passes_in_sc_and_plain_relaxed() {
    for mem in ["sc", "relaxed"] {
        let r = root_only(&["--memory", mem]);
        assert_eq!(r.code, 0, "{mem}: {}{}", r.stdout, r.stderr);
        let counts = if mem == "sc" {
            "13 states, 12 transitions"
        } else {
            "18 states, 22 transitions"
        };
        assert!(
            r.stdout.contains(&format!(
                "2 calls, exhaustive, {mem}): ok — {counts}, exploration complete"
            )),
            "{mem}: {}",
            r.stdout
        );
        // Without --sticky-poll the JSON report has no sticky_poll key (compatible output).
        let j = root_only(&["--memory", mem, "--format", "json"]);
        assert!(!j.stdout.contains("sticky_poll"), "{}", j.stdout);
    }
}

#[test]
fn sticky_poll_needs_relaxed_memory() {
    let r = root_only(&["--sticky-poll"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("error: --sticky-poll needs --memory relaxed"),
        "{}",
        r.stderr
    );
}

/// Sticky polling also hangs the merged broadcast (verified on silicon): the root's
/// per-tile wait polls before rank 1's credit lands and keeps reading 0. So the
/// hypothesis does not separate the 23a8b699b hang from kernels that work. (Its window is
/// `per call`, so it has no cross-call race; the same kernel with a `reused` window, the
/// bug fixture, has the race as well.)
#[test]
fn merged_broadcast_deadlocks_under_sticky_polling() {
    let r = sim(&[
        "examples/broadcast.coll",
        "--param",
        "P=2",
        "--param",
        "root=0",
        "--param",
        "n=256",
        "--calls",
        "2",
        "--memory",
        "relaxed",
        "--sticky-poll",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let o = &r.stdout;
    assert!(
        o.starts_with("sim broadcast (P=2 n=256 root=0; 2 calls, exhaustive, relaxed, sticky polling): VIOLATED sim::deadlock — 99 states, 141 transitions, exploration complete"),
        "{o}"
    );
    assert!(
        o.contains("note: rank 0 (call 1) waits at `wait sig[p] >= t + 1` for rank 0's sig[1] >= 1; it is blocked on a stale cached value 0 (sticky polling: the poll keeps re-reading its cached line), the cell itself holds 2"),
        "{o}"
    );
    // Without sticky polling the merged broadcast passes, and its reused-window variant has
    // only the known last-tile race.
    let plain = |file: &str| {
        sim(&[
            file, "--param", "P=2", "--param", "root=0", "--param", "n=256", "--calls", "2",
            "--memory", "relaxed",
        ])
    };
    assert!(plain("examples/broadcast.coll")
        .stdout
        .starts_with("sim broadcast (P=2 n=256 root=0; 2 calls, exhaustive, relaxed): ok —"),);
    let sticky = sim(&[
        "examples/bugs/broadcast_reused_window.coll",
        "--param",
        "P=2",
        "--param",
        "root=0",
        "--param",
        "n=256",
        "--calls",
        "2",
        "--memory",
        "relaxed",
        "--sticky-poll",
    ]);
    assert!(
        sticky
            .stdout
            .starts_with("sim broadcast_reused_window (P=2 n=256 root=0; 2 calls, exhaustive, relaxed, sticky polling): VIOLATED sim::data-race, sim::deadlock, sim::wrong-result — 122 states, 188 transitions, exploration complete"),
        "{}",
        sticky.stdout
    );
    assert!(
        plain("examples/bugs/broadcast_reused_window.coll")
            .stdout
            .starts_with("sim broadcast_reused_window (P=2 n=256 root=0; 2 calls, exhaustive, relaxed): VIOLATED sim::data-race, sim::wrong-result —"),
    );
}
