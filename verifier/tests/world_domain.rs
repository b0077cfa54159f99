//! World-size domains beyond the enumeration cap: `ranks P in 1..=65536` and the
//! unbounded `ranks P >= 1` versions of the barrier and broadcast examples verify
//! promptly; the six symbolic obligations are proved for the whole domain by the
//! parametric route (P symbolic) and cross-checked by enumeration up to the planner's `enum_world_max`,
//! `fence` by its structural walk (no unfenced pair on any path, or only at notifies nobody
//! waits on), so the world limit is the declared one; all_to_all_v's `value-signal` and
//! `fence` are proved with P symbolic too.

use collc_verifier::planning::TABLE;
use collc_verifier::{Options, Report, Status};
use std::time::{Duration, Instant};

/// The symbolic obligations: the parametric route proves them for every world size.
const SYMBOLIC: [&str; 6] = [
    "credit-balance",
    "op-exclusivity",
    "wait-reachable",
    "stale-credit",
    "garbage-credit",
    "guard-symmetry",
];

/// Obligations with a P-independent proof besides the parametric route.
const STRUCTURAL: [&str; 1] = ["fence"];

fn example(name: &str, domain: &str) -> collc_spec::Validated {
    let path = format!("{}/../examples/{name}.coll", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("example");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("ranks P in 1..="))
        .unwrap_or_else(|| panic!("{path}: no `ranks P in 1..=N;`"));
    let text = text.replace(line, &format!("    ranks P {domain};"));
    let c = collc_spec::front(&collc_verifier::Ranges, &text);
    c.protocol
        .unwrap_or_else(|| panic!("{name} with `{domain}`: {:?}", c.diagnostics))
}

fn timed(p: &collc_spec::Validated, opts: &Options) -> (Report, Duration) {
    let t0 = Instant::now();
    let r = collc_verifier::verify(p, opts);
    (r, t0.elapsed())
}

#[test]
fn large_and_unbounded_domains_are_checked_up_to_the_cap_with_the_bound_stated() {
    for name in ["barrier", "broadcast"] {
        for (domain, hi, reach) in [
            ("in 1..=65536", 65536, "the declared domain goes to 65536"),
            (
                ">= 1",
                collc_spec::ir::MAX_WORLD,
                "the declared domain is unbounded (P >= 1)",
            ),
        ] {
            let p = example(name, domain);
            let (r, took) = timed(&p, &Options::symbolic_only());
            assert!(
                took < Duration::from_secs(60),
                "{name} `{domain}`: {took:?}"
            );
            assert_eq!((r.world.lo, r.world.hi), (1, hi));
            for id in SYMBOLIC {
                let o = r.get(id).expect(id);
                assert_eq!(o.status, Status::Proved, "{name} `{domain}` {id}: {o:?}");
                let scope = o.scope_text().unwrap_or_default();
                assert!(
                    scope.contains("P symbolic")
                        && scope.contains(&format!(
                            "cross-checked by enumeration (checked for P in 1..={} by enumeration; {reach}",
                            TABLE.enum_world_max
                        )),
                    "{name} `{domain}` {id}: {scope}"
                );
                let w = o.world.expect("a proof states its P range");
                assert_eq!((w.lo, w.hi), (1, hi), "{id}");
            }
            for id in STRUCTURAL {
                let o = r.get(id).expect(id);
                assert_eq!(o.status, Status::Proved, "{name} `{domain}` {id}: {o:?}");
                let w = o.world.expect("a proof states its P range");
                assert_eq!((w.lo, w.hi), (1, hi), "{id}");
            }
            // Nothing claims the whole domain unless it decided it: the index ranges are
            // Z3 over the declared domain.
            for o in &r.obligations {
                if o.status == Status::Proved {
                    let w = o.world.expect("a proof states its P range");
                    assert_eq!((w.lo, w.hi), (1, hi), "{name} `{domain}` {}", o.id);
                }
            }
            assert_eq!(r.world_limit(), Some(hi), "{name} `{domain}`");
        }
    }
    // all_to_all_v: its unfenced pairs meet only notifies nobody waits on (the Sets of
    // `recv_counts`), so fence is proved for every P too, and so is value-signal.
    let p = example("all_to_all_v", "in 1..=65536");
    let r = collc_verifier::verify(&p, &Options::symbolic_only());
    for id in ["fence", "value-signal"] {
        let o = r.get(id).expect(id);
        assert_eq!(o.status, Status::Proved, "{o:?}");
        assert_eq!(o.world.map(|w| (w.lo, w.hi)), Some((1, 65536)), "{id}");
        assert!(o
            .scope_text()
            .as_deref()
            .unwrap_or_default()
            .contains("P symbolic"));
    }
    assert_eq!(r.world_limit(), Some(65536));
}

#[test]
fn the_declared_sixteen_is_proved_and_is_the_limit() {
    let p = example("barrier", "in 1..=16");
    let r = collc_verifier::verify(&p, &Options::symbolic_only());
    for id in SYMBOLIC.iter().chain(STRUCTURAL.iter()) {
        assert_eq!(r.get(id).expect(id).status, Status::Proved, "{id}");
    }
    assert_eq!(r.world_limit(), Some(16));
    let p = example("barrier", "in 2..=8");
    let r = collc_verifier::verify(&p, &Options::symbolic_only());
    assert_eq!(r.world_limit(), Some(8));
    assert!(
        r.method.to_string().contains("P over 2..=8"),
        "{}",
        r.method
    );
}

#[test]
fn a_sixty_four_rank_domain_is_the_limit_when_proved_symbolically() {
    let p = example("barrier", "in 1..=64");
    let r = collc_verifier::verify(&p, &Options::symbolic_only());
    assert_eq!(r.world_limit(), Some(64));
    // all_to_all_v too: every obligation deciding world sizes is proved with P symbolic.
    let p = example("all_to_all_v", "in 1..=64");
    let r = collc_verifier::verify(&p, &Options::symbolic_only());
    assert_eq!(r.world_limit(), Some(64));
    assert!(
        r.method
            .to_string()
            .contains("P over 1..=16 (enumeration stops at 16; declared: P in 1..=64)"),
        "{}",
        r.method.to_string()
    );
}

#[test]
fn a_domain_starting_above_the_cap_is_proved_symbolically_and_undecided_by_enumeration() {
    let p = example("barrier", "in 32..=64");
    let (r, took) = timed(&p, &Options::symbolic_only());
    assert!(took < Duration::from_secs(30), "{took:?}");
    // The parametric route needs no enumeration: proved for 32..=64.
    for id in SYMBOLIC {
        let o = r.get(id).expect(id);
        assert_eq!(o.status, Status::Proved, "{id}: {o:?}");
        let w = o.world.expect("a proof states its P range");
        assert_eq!((w.lo, w.hi), (32, 64), "{id}");
    }
    for id in STRUCTURAL {
        let o = r.get(id).expect(id);
        assert_eq!(o.status, Status::Proved, "{id}: {o:?}");
    }
    // all_to_all_v's fence and value-signal need no enumeration either: proved for 32..=64.
    let q = example("all_to_all_v", "in 32..=64");
    let (r, took) = timed(&q, &Options::symbolic_only());
    assert!(took < Duration::from_secs(30), "{took:?}");
    for id in ["fence", "value-signal"] {
        let o = r.get(id).expect(id);
        assert_eq!(o.status, Status::Proved, "{id}: {o:?}");
        assert_eq!(o.world.map(|w| (w.lo, w.hi)), Some((32, 64)), "{id}");
    }
    // The credit table enumerates P too: it says why it has nothing instead of an empty table.
    let e = collc_verifier::table::explain(&p).expect_err("nothing to enumerate");
    assert!(e.contains("above the enumeration cap 16"), "{e}");
}

#[test]
fn the_credit_table_of_an_unbounded_domain_states_the_cap() {
    let p = example("broadcast", ">= 1");
    let t = collc_verifier::table::explain(&p).expect("a table");
    assert!(
        t.method
            .contains("P over 1..=16 (enumeration stops at 16; declared: P >= 1)"),
        "{}",
        t.method
    );
}

#[test]
fn the_bounded_half_returns_promptly_on_an_unbounded_domain() {
    let p = example("barrier", ">= 1");
    let (r, took) = timed(&p, &Options::default());
    // Default budgets: 10 s per symbolic obligation, 8 s for the bounded half.
    assert!(took < Duration::from_secs(45), "{took:?}");
    assert_ne!(
        collc_verifier::gate::verdict(&r),
        collc_verifier::Verdict::Violated
    );
    for id in collc_verifier::bounded::OBLIGATIONS {
        let o = r.get(id).expect(id);
        if id == "deadlock" {
            // Proved for every world size by the ranking of waits.
            assert_eq!(o.status, Status::Proved, "{o:?}");
            let w = o.world.expect("a proof states its P range");
            assert_eq!((w.lo, w.hi), (1, collc_spec::ir::MAX_WORLD));
            continue;
        }
        assert!(
            o.world.is_none(),
            "{id}: a bounded search samples, it covers no range"
        );
    }
}
