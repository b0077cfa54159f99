//! The wrap-around mode (`SimConfig::wrap`, `collc sim --wrap`) against the verifier's
//! overflow horizon: every example with a monotonic (epoch) signal passes when its calls
//! are the last it declares (5 back-to-back calls, P = 2 and 4, every schedule); every
//! fixture annotated `verify::overflow-horizon` fails there (a stale pass or a deadlock
//! named on a wait) while it passes from call 0; and every file with a monotonic signal
//! that fails in the mode is a fixture the verifier rejects (an `// expect: verify::`
//! annotation, checked by the verifier's fixture suite): what the run fails, verify
//! rejects.

mod common;

use collc_sim::bounded::{param_grid, Bounds};
use collc_sim::{simulate, Budget, SimConfig, SimReport, Verdict};
use collc_spec::Validated;
use common::{coll_files, repo_root};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

const CALLS: usize = 5;

/// Every example and fixture with a monotonic signal: (path, text, protocol).
fn monotonic_files() -> Vec<(PathBuf, String, Validated)> {
    let mut out = Vec::new();
    for dir in ["examples", "examples/bugs"] {
        for path in coll_files(dir) {
            let text = std::fs::read_to_string(&path).expect("read");
            let Some(p) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
                continue;
            };
            if p.signals.iter().any(|s| s.monotonic) {
                out.push((path, text, p));
            }
        }
    }
    out
}

fn config(wrap: bool) -> SimConfig {
    SimConfig {
        calls: CALLS,
        budget: Budget {
            max_states: 400_000,
            max_time: Duration::from_secs(60),
            ..Budget::default()
        },
        wrap,
        ..SimConfig::default()
    }
}

/// The protocol at world size `world` with one tile and the lowest other values.
fn params(p: &Validated, world: i64) -> Option<BTreeMap<String, i64>> {
    let b = Bounds {
        ranks: (world, world),
        tiles: (1, 1),
        calls: CALLS,
        small_ints: 1,
    };
    param_grid(p, &b, &BTreeMap::new()).into_iter().next()
}

fn run(p: &Validated, world: i64, wrap: bool) -> Option<SimReport> {
    let params = params(p, world)?;
    Some(simulate(p, &params, &config(wrap)).expect("simulate"))
}

fn codes(r: &SimReport) -> Vec<&str> {
    r.findings.iter().map(|f| f.code.as_str()).collect()
}

/// The obligations `collc verify` reports violated for a protocol.
fn violated(p: &Validated) -> Vec<String> {
    let r = collc_verifier::verify(p, &collc_verifier::Options::default());
    r.obligations
        .iter()
        .filter(|o| o.status == collc_verifier::Status::Violated)
        .map(|o| o.id.clone())
        .collect()
}

#[test]
fn examples_with_monotonic_cells_pass_at_their_last_declared_calls() {
    let files = monotonic_files();
    let mut ran = 0;
    for (path, _, p) in &files {
        if path.parent().is_some_and(|d| d.ends_with("bugs")) {
            continue;
        }
        for world in [2, 4] {
            let Some(r) = run(p, world, true) else {
                continue;
            };
            ran += 1;
            let w = r.wrap.as_ref().expect("the report states the mode's start");
            assert_eq!(
                r.verdict,
                Verdict::Pass,
                "{} at P={world} in wrap-around mode: {:?}\n{}",
                path.display(),
                codes(&r),
                r.to_text(&|_| None)
            );
            assert!(r.stats.complete, "{}", path.display());
            // Within the horizon: the window is the protocol's last declared calls.
            let m = p.calls.expect("an example declares `calls <= N`").max;
            assert!(!w.crosses, "{}: {w:?}", path.display());
            assert_eq!(w.first_call, m - CALLS as i64, "{}", path.display());
            assert!(w.per_call > 0 && w.first_call > 1 << 20, "{w:?}");
        }
    }
    assert!(ran >= 4, "only {ran} runs over {} files", files.len());
}

#[test]
fn overflow_horizon_fixtures_fail_in_wrap_mode_on_a_wait() {
    let mut flagged = 0;
    for (path, text, p) in monotonic_files() {
        if !text.contains("expect: verify::overflow-horizon") {
            continue;
        }
        flagged += 1;
        for world in [2, 4] {
            let plain = run(&p, world, false).expect("params");
            assert_eq!(
                plain.verdict,
                Verdict::Pass,
                "{}: from call 0 it passes ({:?})",
                path.display(),
                codes(&plain)
            );
            let r = run(&p, world, true).expect("params");
            let w = r.wrap.as_ref().expect("wrap start");
            assert!(w.crosses, "{}: {w:?}", path.display());
            let f = r
                .findings
                .iter()
                .find(|f| f.code == "sim::stale-pass" || f.code == "sim::deadlock")
                .unwrap_or_else(|| panic!("{} at P={world}: {:?}", path.display(), codes(&r)));
            let span = f.span.expect("the finding names a statement");
            let stmt = &text[span.start..span.end];
            assert!(stmt.starts_with("wait "), "{}: {stmt}", path.display());
            if f.code == "sim::stale-pass" {
                assert!(f.message.contains("int32 wrapped"), "{}", f.message);
            }
        }
    }
    assert!(flagged >= 2, "overflow-horizon fixtures: {flagged}");
}

#[test]
fn what_fails_in_wrap_mode_the_verifier_rejects() {
    let mut failing = 0;
    for (path, _, p) in monotonic_files() {
        let r = run(&p, 2, true).expect("params");
        if r.verdict != Verdict::Pass {
            failing += 1;
            assert!(
                !violated(&p).is_empty(),
                "{} fails in wrap-around mode ({:?}) but verify accepts it",
                path.display(),
                codes(&r)
            );
        }
    }
    assert!(failing >= 2, "{failing}");
}

#[test]
fn a_protocol_declaring_exactly_its_horizon_passes_and_one_more_call_fails() {
    let path = repo_root().join("examples/sense_reversing_barrier.coll");
    let text = std::fs::read_to_string(path).expect("read");
    let decl = "calls <= 100000000;";
    assert!(text.contains(decl));
    for (calls, pass) in [(i32::MAX as i64, true), (i32::MAX as i64 + 1, false)] {
        let edited = text.replace(decl, &format!("calls <= {calls};"));
        let p = collc_spec::front(&collc_verifier::Ranges, &edited)
            .protocol
            .expect("valid");
        let r = run(&p, 2, true).expect("params");
        assert_eq!(
            r.verdict == Verdict::Pass,
            pass,
            "calls <= {calls}: {:?}",
            codes(&r)
        );
    }
}

/// The findings of `collc verify`'s bounded runs in a report: (obligation, finding), the
/// replay command first in each finding's notes.
fn bounded_findings(r: &collc_verifier::Report) -> Vec<(String, String)> {
    r.obligations
        .iter()
        .filter(|o| o.status == collc_verifier::Status::Violated)
        .flat_map(|o| {
            o.findings.iter().filter_map(|f| {
                let replay = f.notes.first()?.strip_prefix("replay: ")?;
                Some((o.id.clone(), replay.to_string()))
            })
        })
        .collect()
}

/// `collc verify` runs the wrap-around mode as part of its bounded obligations: every file
/// with a monotonic signal that fails in the mode is rejected through a bounded finding —
/// one of the wrap-around run itself (its replay says `--wrap`) when the file passes from
/// call 0 — past the overflow horizon in `overflow-horizon`, next to the symbolic finding
/// there (both report it), within it in the obligation its code names; every example with a
/// monotonic signal stays verified, each bounded line stating the run complete.
#[test]
fn verify_runs_the_wrap_mode_in_its_bounded_obligations() {
    let (mut rejected, mut verified) = (0, 0);
    for (path, text, p) in monotonic_files() {
        let src = collc_grammar::Source::new(path.display().to_string(), text.as_str());
        let report = collc_verifier::verify(&p, &collc_verifier::Options::for_source(&src));
        let name = path.display();
        let wrapped = run(&p, 2, true).expect("params");
        if wrapped.verdict == Verdict::Pass {
            if !path.parent().is_some_and(|d| d.ends_with("bugs")) {
                verified += 1;
                assert_eq!(report.exit_code(), 0, "{name}: {:?}", violated(&p));
                for id in collc_verifier::bounded::OBLIGATIONS {
                    let o = report.get(id).expect("bounded obligation");
                    let scope = o.scope_text().unwrap_or_default();
                    let (_, w) = scope
                        .split_once("; wrap-around mode (the last declared calls, from call index ")
                        .unwrap_or_else(|| panic!("{name}: {id}: {scope}"));
                    assert!(
                        w.contains("4 calls: ") && w.ends_with("complete"),
                        "{name}: {id}: {w}"
                    );
                    assert!(!w.contains("not explored"), "{name}: {id}: {w}");
                }
            }
            continue;
        }
        rejected += 1;
        let found = bounded_findings(&report);
        let from_zero = run(&p, 2, false).expect("params").verdict == Verdict::Pass;
        let wrap: Vec<&(String, String)> = found
            .iter()
            .filter(|(_, r)| r.ends_with("--wrap"))
            .collect();
        assert!(
            !found.is_empty() && (!from_zero || !wrap.is_empty()),
            "{name} fails in wrap-around mode ({:?}) but verify's bounded run does not reject it: {found:?}",
            codes(&wrapped)
        );
        let crosses = wrapped.wrap.as_ref().is_some_and(|w| w.crosses);
        for (id, replay) in &wrap {
            if crosses {
                assert_eq!(id, "overflow-horizon", "{name}: {replay}");
                // The symbolic horizon check reports it too.
                let o = report.get("overflow-horizon").expect("overflow-horizon");
                assert!(
                    o.findings.iter().any(|f| f.trace.is_none()),
                    "{name}: only the bounded run reports the horizon"
                );
            } else {
                assert!(
                    collc_verifier::bounded::OBLIGATIONS.contains(&id.as_str()),
                    "{id}"
                );
            }
        }
    }
    assert!(
        rejected >= 4 && verified >= 2,
        "{rejected} rejected, {verified} verified"
    );
}
