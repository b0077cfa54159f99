//! Every fix a diagnostic offers (`collc_grammar::Fix`: the front end's, and the
//! verifier's from `collc_verifier::fix`), on every bug fixture and every ui fixture, is
//! applied and the edited protocol replayed in the bounded simulator: it must not deadlock
//! or fail in a way the original did not (every schedule at P = 2..3, 1..2 tiles, 3 calls;
//! for a text that did not validate, no deadlock, lost credit, leftover credit or stale
//! pass;
//! a protocol with a monotonic signal also in the wrap-around mode, its last calls before a
//! cell leaves int32), and a verifier fix must remove what it fixes: the obligation is no
//! longer violated, or (a fence, placed one at a time) has fewer findings.

mod common;

use collc_grammar::{Fix, Source};
use collc_sim::bounded::{param_grid, Bounds};
use collc_sim::{simulate, Budget, SimConfig};
use collc_spec::Validated;
use collc_verifier::{Options, Report, Status};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// The simulator's findings of a signal protocol that hangs or synchronises on the wrong
/// credits.
const HANGS: &[&str] = &[
    "sim::deadlock",
    "sim::lost-credit",
    "sim::nonzero-exit",
    "sim::stale-pass",
];

/// One offered fix: the diagnostic's code, the fix.
type Offer = (String, Fix);

fn verify(p: &Validated, src: &Source) -> Report {
    let opts = Options {
        source: Some(src),
        ..Options::symbolic_only()
    };
    collc_verifier::verify(p, &opts)
}

/// Every fix offered for `text`: the front end's diagnostics, then the verifier's findings.
fn offers(path: &Path, text: &str) -> Vec<Offer> {
    let checked = collc_spec::front(&collc_verifier::Ranges, text);
    let mut out: Vec<Offer> = checked
        .diagnostics
        .iter()
        .flat_map(|d| d.fixes.iter().map(|f| (d.code.clone(), f.clone())))
        .collect();
    if let Some(p) = checked.protocol {
        let src = Source::new(path.display().to_string(), text);
        for o in verify(&p, &src).obligations {
            for f in o.findings {
                if let Some(x) = f.fix {
                    out.push((format!("verify::{}", o.id), x));
                }
            }
        }
    }
    out
}

/// The simulator's finding codes over the small grid (`wrap:` before those of the
/// wrap-around mode), and whether every run completed.
fn sim_codes(p: &Validated) -> (BTreeSet<String>, bool) {
    let bounds = Bounds {
        ranks: (2, 3),
        tiles: (1, 2),
        calls: 3,
        small_ints: 2,
    };
    let mut codes = BTreeSet::new();
    let mut complete = true;
    let modes: &[bool] = if p.signals.iter().any(|s| s.monotonic) {
        &[false, true]
    } else {
        &[false]
    };
    for params in param_grid(p, &bounds, &BTreeMap::new()) {
        for &wrap in modes {
            let cfg = SimConfig {
                calls: if wrap { 4 } else { 3 },
                budget: Budget {
                    max_states: 100_000,
                    max_time: Duration::from_secs(10),
                    ..Budget::default()
                },
                wrap,
                ..SimConfig::default()
            };
            let Ok(r) = simulate(p, &params, &cfg) else {
                continue;
            };
            complete &= r.stats.complete;
            for f in r.findings {
                codes.insert(if wrap {
                    format!("wrap:{}", f.code)
                } else {
                    f.code
                });
            }
        }
    }
    (codes, complete)
}

/// The findings of obligation `id` that are violations.
fn violations(r: &Report, id: &str) -> usize {
    r.obligations
        .iter()
        .filter(|o| o.id == id && o.status == Status::Violated)
        .map(|o| o.findings.len().max(1))
        .sum()
}

#[test]
fn every_offered_fix_replays_without_a_new_failure() {
    let mut files = common::coll_files("examples/bugs");
    files.extend(common::ui_fixtures());
    let mut bad = Vec::new();
    let mut replayed = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read");
        let offered = offers(path, &text);
        if offered.is_empty() {
            continue;
        }
        let original = collc_spec::front(&collc_verifier::Ranges, &text).protocol;
        let before = original.as_ref().map(sim_codes);
        let name = path.file_name().and_then(|s| s.to_str()).unwrap_or("");
        for (code, fix) in offered {
            let what = format!("{name}: {code}: `{}`", fix.title);
            let Some(edited) = fix.apply(&text) else {
                bad.push(format!("{what}: the edits do not apply"));
                continue;
            };
            let Some(p) = collc_spec::front(&collc_verifier::Ranges, &edited).protocol else {
                // A front-end fix on a fixture with further errors: nothing to run yet,
                // but a verifier fix must keep the protocol valid.
                if code.starts_with("verify::") || original.is_some() {
                    bad.push(format!("{what}: the edited text no longer validates"));
                }
                continue;
            };
            let (after, complete) = sim_codes(&p);
            // Against the original's run; a front-end fix of a text that did not validate
            // (a ui fixture: a minimal text, not a working collective) must not make a
            // protocol that hangs or passes a wait on the wrong credits.
            let new: Vec<&String> = match &before {
                Some((b, _)) => after.difference(b).collect(),
                None => after
                    .iter()
                    .filter(|c| HANGS.iter().any(|h| c.ends_with(h)))
                    .collect(),
            };
            if !new.is_empty() {
                bad.push(format!("{what}: the edited protocol fails with {new:?}"));
            }
            if !complete {
                bad.push(format!("{what}: the replay did not complete"));
            }
            if let Some(id) = code.strip_prefix("verify::") {
                let src = Source::new(name, text.as_str());
                let was = violations(&verify(original.as_ref().expect("valid"), &src), id);
                let src = Source::new(name, edited.as_str());
                let now = violations(&verify(&p, &src), id);
                let resolved = if id == "fence" { now < was } else { now == 0 };
                if !resolved {
                    bad.push(format!("{what}: {id} still violated ({was} -> {now})"));
                }
            }
            replayed.push(format!("{what} -> {after:?}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}\nreplayed: {replayed:#?}");
    // A monotonic wait's threshold growth, on the fixture made for it.
    assert!(
        replayed
            .iter()
            .any(|r| r
                .starts_with("epoch_allreduce_growth_off_by_one.coll: verify::credit-balance: ")),
        "{replayed:#?}"
    );
    // The fixes the front end and the verifier derive, each replayed at least once (the
    // name suggestions of `resolve_unknown.coll` leave a text with other errors: they
    // are checked to remove their diagnostic by lsp/tests/actions.rs).
    for code in [
        "parse::syntax",
        "verify::credit-balance",
        "verify::op-exclusivity",
        "verify::fence",
        "verify::overflow-horizon",
        "verify::stale-credit",
    ] {
        assert!(
            replayed.iter().any(|r| r.contains(&format!(": {code}: "))),
            "{code} in {replayed:#?}"
        );
    }
}
