//! Symbolic claims against the bounded run. For every example, every bug fixture and a
//! bounded set of mutants of the examples, the symbolic obligations (`verify` without its
//! bounded half) and the bounded run at small bounds (P = 2..4, 2 calls) are computed, and
//! wherever the bounded run has a counterexample, the symbolic obligations that claim its
//! absence must not be `proved` or `checked` (both cover P = 2..4). The correspondences,
//! each a theorem of verifier/README.md:
//!
//! - a bounded `stale-pass` (a wait passes on another call's credits or on credits an
//!   earlier wait counted): not all of `credit-balance`, `op-exclusivity`,
//!   `wait-reachable` and `stale-credit` hold — the conditions of the reuse theorem (its
//!   conclusion is that no wait passes on such credits; `stale-credit` alone does not claim
//!   it: a missing reset lets a wait pass on the last call's credits with every round
//!   pairing sound). Both count the same way when a take-back runs before the credits it
//!   takes back arrived: those late credits pay its debt and are no other call's credits
//!   (`a_late_credit_pays_the_debt_of_its_take_back` below);
//! - a bounded `deadlock` (`sim::deadlock`, `sim::lost-credit`, `sim::nonzero-exit`):
//!   symbolic `deadlock` is not proved (the ranking proof includes the reuse theorem);
//! - a relaxed-memory-only `data-race` or `semantics` finding: `fence` does not hold (the
//!   fence obligation covers exactly what relaxed memory adds to sc);
//! - a `lifetimes` finding of a value signal read for another call (`sim::stale-value`):
//!   `value-signal` does not hold.
//!
//! Not a correspondence: an sc `data-race` or `semantics` finding (no symbolic obligation
//! claims the windows' accesses ordered within a call; `buffer-reuse` only covers the
//! call-indexed reuse of `reused` windows), `sim::uninit-read` (of windows: no symbolic
//! counterpart), and a bounded `checked` where the symbolic route is violated (the symbolic
//! route reaches world sizes the bounded run does not).

mod common;

use collc_verifier::bounded::BoundedOptions;
use collc_verifier::Status;
use collc_verifier::{ObligationResult, Options};
use std::path::Path;
use std::time::{Duration, Instant};

/// The mutation operators: (name, edit). Each returns the mutated text, or `None` when
/// the operator does not apply.
type Op = (&'static str, fn(&str) -> Option<String>);

fn lines_with(text: &str, pat: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with(pat))
        .map(|(i, _)| i)
        .collect()
}

fn edit_lines(text: &str, f: impl Fn(usize, &str) -> Option<String>) -> String {
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(s) = f(i, l) {
            out.push_str(&s);
            out.push('\n');
        }
    }
    out
}

/// Drops the first wait statement.
fn drop_wait(text: &str) -> Option<String> {
    let at = *lines_with(text, "wait ").first()?;
    Some(edit_lines(text, |i, l| (i != at).then(|| l.to_string())))
}

/// Drops the last wait statement.
fn drop_last_wait(text: &str) -> Option<String> {
    let at = *lines_with(text, "wait ").last()?;
    Some(edit_lines(text, |i, l| (i != at).then(|| l.to_string())))
}

/// Lowers the first `>=` threshold by one.
fn lower_threshold(text: &str) -> Option<String> {
    let at = *lines_with(text, "wait ").first()?;
    let l = text.lines().nth(at)?;
    l.contains(">= ").then_some(())?;
    let new = l.replacen(">= ", ">= -1 + ", 1);
    Some(edit_lines(text, |i, l| {
        Some(if i == at { new.clone() } else { l.to_string() })
    }))
}

/// A per-writer slot becomes one shared cell: the first `[me]` of a notify.
fn shared_slot(text: &str) -> Option<String> {
    let at = *lines_with(text, "notify ")
        .iter()
        .find(|i| text.lines().nth(**i).is_some_and(|l| l.contains("[me]")))?;
    Some(edit_lines(text, |i, l| {
        Some(if i == at {
            l.replacen("[me]", "[0]", 1)
        } else {
            l.to_string()
        })
    }))
}

/// Moves the epilogue's first take-back to the start of the body.
fn move_reset(text: &str) -> Option<String> {
    let epi = text.find("epilogue {")?;
    let rel = text[epi..].find("-= ")?;
    let line_start = text[..epi + rel].rfind('\n')? + 1;
    let line_end = epi + rel + text[epi + rel..].find('\n')?;
    let line = text[line_start..line_end].trim().to_string();
    // Only a statement on its own line (not one inside a loop opened on that line).
    if !line.starts_with("notify ") || !line.ends_with(';') {
        return None;
    }
    let mut t = text.to_string();
    t.replace_range(line_start..=line_end, "");
    let body = t.find("body {")? + "body {".len();
    t.insert_str(body, &format!("\n        {line}"));
    Some(t)
}

/// Drops the first `fence;` statement.
fn drop_fence(text: &str) -> Option<String> {
    let at = *lines_with(text, "fence;").first()?;
    Some(edit_lines(text, |i, l| (i != at).then(|| l.to_string())))
}

const OPS: [Op; 6] = [
    ("drop the first wait", drop_wait),
    ("drop the last wait", drop_last_wait),
    ("lower a threshold", lower_threshold),
    ("a shared slot for `[me]`", shared_slot),
    ("move a reset into the body", move_reset),
    ("drop a fence", drop_fence),
];

/// Mutants in total (spread over the examples and operators): the test's runtime.
const MUTANTS: usize = 28;

fn claimed(o: Option<&ObligationResult>) -> bool {
    o.is_some_and(|o| matches!(o.status, Status::Proved | Status::Checked))
}

fn bounded_options() -> BoundedOptions {
    let mut b = BoundedOptions {
        budget: Duration::from_millis(300),
        max_states: 20_000,
        relaxed_max_states: 3_000,
        wrap_max_states: 3_000,
        ..Default::default()
    };
    b.bounds.ranks = (2, 4);
    b.bounds.calls = 2;
    b.bounds.tiles = (1, 1);
    b.full_ranks = 4;
    b
}

/// The disagreements of one protocol text (empty: none).
fn disagreements(name: &str, text: &str) -> Vec<String> {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    let Some(p) = c.protocol else {
        return Vec::new();
    };
    let sym = collc_verifier::verify(&p, &Options::symbolic_only());
    let bounded = collc_verifier::bounded::check(&p, &bounded_options());
    let mut bad = Vec::new();
    let get = |id: &str| sym.get(id);
    for ob in bounded.iter().filter(|o| o.status == Status::Violated) {
        let f = &ob.findings[0];
        let what = format!("{name}: bounded {} ({})", ob.id, f.primary_label);
        const REUSE: [&str; 4] = [
            "credit-balance",
            "op-exclusivity",
            "wait-reachable",
            "stale-credit",
        ];
        let broken: Option<&str> = match ob.id.as_str() {
            "stale-pass" => REUSE
                .iter()
                .all(|id| claimed(get(id)))
                .then_some("the reuse theorem's four are proved"),
            "deadlock" => get("deadlock")
                .is_some_and(|o| o.status == Status::Proved)
                .then_some("`deadlock` is proved"),
            "data-race" | "semantics" if f.message.starts_with("relaxed memory only") => {
                claimed(get("fence")).then_some("`fence` is proved")
            }
            "lifetimes" if f.primary_label.starts_with("sim::stale-value") => {
                claimed(get("value-signal")).then_some("`value-signal` is proved")
            }
            _ => None,
        };
        if let Some(b) = broken {
            bad.push(format!("{what}, but {b}"));
        }
    }
    bad
}

/// The mutants: every operator on every example, then `MUTANTS` of them at an even
/// stride (deterministic).
fn mutants() -> Vec<(String, String)> {
    let mut all = Vec::new();
    for f in common::coll_files(&["examples"]) {
        let text = std::fs::read_to_string(&f).expect("read");
        let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned());
        for (what, op) in OPS {
            if let Some(t) = op(&text) {
                if t != text {
                    all.push((format!("{} [{what}]", stem.clone().unwrap_or_default()), t));
                }
            }
        }
    }
    let stride = all.len().div_ceil(MUTANTS).max(1);
    all.into_iter().step_by(stride).collect()
}

#[test]
fn bounded_counterexamples_are_never_proved_away() {
    let start = Instant::now();
    let mut cases: Vec<(String, String)> = Vec::new();
    for dir in ["examples", "examples/bugs"] {
        for f in common::coll_files(&[dir]) {
            let text = std::fs::read_to_string(&f).expect("read");
            cases.push((f.display().to_string(), text));
        }
    }
    let n_files = cases.len();
    cases.extend(mutants());
    let n_mutants = cases.len() - n_files;
    assert!(n_mutants >= 20, "only {n_mutants} mutants");
    let chunks: Vec<Vec<(String, String)>> = (0..2)
        .map(|k| cases.iter().skip(k).step_by(2).cloned().collect())
        .collect();
    let bad: Vec<String> = std::thread::scope(|s| {
        let hs: Vec<_> = chunks
            .iter()
            .map(|c| {
                s.spawn(move || {
                    c.iter()
                        .flat_map(|(n, t)| disagreements(n, t))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    eprintln!(
        "{n_files} files and {n_mutants} mutants in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The run-ahead counter: the bounded run finds the stale pass at P = 3, and the symbolic
/// `stale-credit` reports it there, from the many-writer rule.
#[test]
fn the_run_ahead_counter_is_a_symbolic_violation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/bugs");
    for (file, world) in [
        ("runahead_counter.coll", 3),
        ("node_counter_barrier.coll", 10),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).expect("read");
        let p = collc_spec::front(&collc_verifier::Ranges, &text)
            .protocol
            .expect("validates");
        let r = collc_verifier::verify(&p, &Options::symbolic_only());
        let o = r.get("stale-credit").expect("stale-credit");
        assert_eq!(o.status, Status::Violated, "{file}: {o:?}");
        let f = &o.findings[0];
        assert!(f.message.contains("next call"), "{file}: {}", f.message);
        assert_eq!(f.params[0].value, world, "{file}: {:?}", f.params);
    }
}

/// One writer, two credits per call in two rounds: its credits arrive in its program
/// order across calls, so round pairing is the whole argument (no many-writer condition).
/// The simulator agrees: no stale pass at P = 2..4.
const SINGLE_WRITER_ROUNDS: &str = "collective single_writer_rounds: barrier() {
    ranks P in 2..=8;
    signal s[1];

    body {
        notify s[0] @ rank((me + 1) % P) += 1;
        wait s[0] >= 1;
        notify s[0] @ rank((me + 1) % P) += 1;
        wait s[0] >= 2;
    }

    epilogue {
        notify s[0] -= 2;
        fence;
    }
}
";

#[test]
fn single_writer_rounds() {
    let p = collc_spec::front(&collc_verifier::Ranges, SINGLE_WRITER_ROUNDS)
        .protocol
        .expect("validates");
    let r = collc_verifier::verify(&p, &Options::symbolic_only());
    for id in ["credit-balance", "stale-credit", "deadlock"] {
        assert_eq!(r.get(id).map(|o| o.status), Some(Status::Proved), "{id}");
    }
    let mut b = bounded_options();
    b.bounds.calls = 3;
    b.budget = Duration::from_secs(5);
    // (Its `semantics` is not a barrier's: a ring of two rounds orders no rank's exit after
    // every entry. Only the credit questions are asked here.)
    for ob in collc_verifier::bounded::check(&p, &b) {
        if matches!(ob.id.as_str(), "stale-pass" | "deadlock") {
            assert_eq!(ob.status, Status::Checked, "{}: {:?}", ob.id, ob.findings);
        }
    }
    assert!(disagreements("single_writer_rounds", SINGLE_WRITER_ROUNDS).is_empty());
}

/// One writer, two credits per call, the owner waiting for the first only and taking both
/// back: its take-back can run before the second credit arrives. The schedule at P = 2,
/// cell `s[0]` on rank 1 (writer rank 0):
///
/// 1. rank 0 sends call 1's first credit (`s = 1`); rank 1's wait `>= 1` passes on it;
/// 2. rank 1 takes back 2 (`s = -1`): a debt of call 1, its second credit still to come;
/// 3. rank 0 sends call 1's second credit (`s = 0`): it pays the debt;
/// 4. rank 1's call-2 wait `>= 1` can pass only when `s >= 1`, i.e. after rank 0's call-2
///    first credit (`s = 1`), which rank 0 sends after its call-1 credits (one writer: its
///    credits arrive in its program order).
///
/// By count the wait of call 2 passes on call 2's credit and on nothing else (the late
/// credit of call 1 only brought the cell back to 0), and it acquires that credit's clock,
/// which follows the writer's data of call 2. The reuse theorem's four conditions are
/// proved, and the simulator's accounting (a late credit pays its take-back's debt,
/// sim/README.md "Cells") finds no stale pass: the two agree.
const LATE_ROUND: &str = "collective late_round: barrier() {
    ranks P in 2..=8;
    signal s[1];

    body {
        notify s[0] @ rank((me + 1) % P) += 1;
        wait s[0] >= 1;
        notify s[0] @ rank((me + 1) % P) += 1;
    }

    epilogue {
        notify s[0] -= 2;
        fence;
    }
}
";

#[test]
fn a_late_credit_pays_the_debt_of_its_take_back() {
    let p = collc_spec::front(&collc_verifier::Ranges, LATE_ROUND)
        .protocol
        .expect("validates");
    let r = collc_verifier::verify(&p, &Options::symbolic_only());
    for id in [
        "credit-balance",
        "op-exclusivity",
        "wait-reachable",
        "stale-credit",
    ] {
        assert_eq!(r.get(id).map(|o| o.status), Some(Status::Proved), "{id}");
    }
    let mut b = bounded_options();
    b.bounds.calls = 3;
    b.budget = Duration::from_secs(5);
    for ob in collc_verifier::bounded::check(&p, &b) {
        if matches!(ob.id.as_str(), "stale-pass" | "deadlock") {
            assert_eq!(ob.status, Status::Checked, "{}: {:?}", ob.id, ob.findings);
        }
    }
    assert!(disagreements("late_round", LATE_ROUND).is_empty());
}
