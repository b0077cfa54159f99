//! Loops with a symbolic step (`for c in 0..n step CH`, `for l in G .. P step G`): the
//! parametric route proves the correct fixtures of `tests/step/` for every P with the step
//! symbolic, agreeing with the enumerated route; it proves none of the obligations the bug
//! fixtures of `tests/step/bugs/` annotate, which the enumerated route refutes with the
//! counterexample each fixture's `// smallest:` line names; and `collc cost`'s closed forms
//! (trip count `ceil((hi - lo) / s)`) equal the simulator's counts, also where the step
//! does not divide the range. Residue classes of a symbolic group size G (`me % G`, strided
//! loops `for p in me + G .. P step G` over a leader's class, and `for p in me % G .. P
//! step G` over a rank's own class, whose membership is a congruence: `param::stride`):
//! proved with P and G symbolic (`param::residue`), their bug variants refuted at their
//! smallest P.

mod common;

use collc_spec::Validated;
use collc_verifier::Status;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

fn protocol(f: &Path) -> (String, Validated) {
    let text = std::fs::read_to_string(f).expect("read");
    let c = collc_spec::front(&collc_verifier::Ranges, &text);
    match c.protocol {
        Some(p) => (text, p),
        None => panic!("{}: {:#?}", f.display(), c.diagnostics),
    }
}

fn prove(p: &Validated) -> collc_verifier::param::Outcome {
    // Generous: a check of what is proved, not of speed on a loaded machine.
    collc_verifier::param::prove(p, Duration::from_secs(120))
}

fn enumerate(p: &Validated) -> collc_verifier::Report {
    let opts = collc_verifier::check::Options {
        timeout_ms: 120_000,
    };
    collc_verifier::check::verify(p, &opts)
}

/// The enumerated route proves (or, past the cap of P, checks) every obligation the
/// parametric route decides: it refutes none.
fn enumerated_sound(f: &Path, p: &Validated) {
    for ob in &enumerate(p).obligations {
        if collc_verifier::param::IDS.contains(&ob.id.as_str()) {
            assert!(
                matches!(ob.status, Status::Proved | Status::Checked),
                "{}: {} enumerated {:?}: {}",
                f.display(),
                ob.id,
                ob.status,
                ob.summary()
            );
        }
    }
}

#[test]
fn correct_fixtures_are_proved_for_every_p_and_agree_with_enumeration() {
    let files = common::coll_files(&["verifier/tests/step"]);
    assert!(files.len() >= 6);
    for f in files {
        proved_but(&f, None);
    }
}

/// Every obligation of `f` is proved with P symbolic, but `open`'s (its reason naming the
/// form), and the enumerated route refutes nothing (the declared domains go past the
/// enumeration cap: it checks P in 1..=16, or proves).
fn proved_but(f: &Path, open: Option<(&str, &str)>) {
    let (_, p) = protocol(f);
    let o = prove(&p);
    for id in collc_verifier::param::IDS {
        match open {
            Some((x, form)) if x == id => {
                let why = o.open(id).unwrap_or_default();
                assert!(why.contains(form), "{}: {why}", f.display());
            }
            _ => assert!(
                o.proof(id).is_some(),
                "{}: {id}: {:?}",
                f.display(),
                o.open(id)
            ),
        }
    }
    enumerated_sound(f, &p);
}

/// `// expect: verify::ID` annotations.
fn expected(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            l.split_once("expect: verify::")
                .map(|x| x.1.trim().to_string())
        })
        .collect()
}

/// The `// smallest: P = 2, G = 1` line: the counterexample's parameters.
fn smallest(text: &str) -> Vec<(String, i64)> {
    let line = text
        .lines()
        .find_map(|l| l.split_once("// smallest: ").map(|x| x.1))
        .expect("a `// smallest:` line");
    line.split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("k = v");
            (k.trim().to_string(), v.trim().parse().expect("int"))
        })
        .collect()
}

#[test]
fn step_bugs_are_refuted_with_the_smallest_counterexample() {
    let files = common::coll_files(&["verifier/tests/step/bugs"]);
    assert!(files.len() >= 7);
    for f in files {
        let (text, p) = protocol(&f);
        let ids = expected(&text);
        assert!(!ids.is_empty(), "{}", f.display());
        let o = prove(&p);
        let r = enumerate(&p);
        let want = smallest(&text);
        for id in &ids {
            assert!(
                o.proof(id).is_none(),
                "{}: {id} proved with P symbolic",
                f.display()
            );
            let ob = r
                .obligations
                .iter()
                .find(|x| &x.id == id)
                .expect("obligation");
            assert_eq!(ob.status, Status::Violated, "{}: {id}", f.display());
            let finding = ob.findings.first().expect("a finding");
            let got: Vec<(String, i64)> = finding
                .params
                .iter()
                .map(|x| (x.name.clone(), x.value))
                .collect();
            for kv in &want {
                assert!(
                    got.contains(kv),
                    "{}: {id}: {got:?} lacks {kv:?}",
                    f.display()
                );
            }
        }
        assert!(o.proof("deadlock").is_none(), "{}", f.display());
    }
}

/// A parameter and the values it takes.
type Axis<'a> = (&'a str, &'a [i64]);

#[test]
fn cost_formulas_count_ceil_of_the_range_over_the_step() {
    let step = |name: &str| protocol(&Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).1;
    let bc = step("tests/step/chunked_broadcast.coll");
    let rows = collc_verifier::cost::cost(&bc, &BTreeMap::new()).expect("cost");
    let f: Vec<&str> = rows.rows.iter().map(|r| r.formula.as_str()).collect();
    assert!(
        f[0].contains("ceil(n / CH)"),
        "remote atomics of the chunked broadcast: {f:?}"
    );
    // The strided release's notifies are remote or local as `G + G*j` is `me` or not,
    // which the derivation does not count: no closed form, its values from the IR's
    // control flow (still equal to the simulator's).
    let cases: [(&str, &[Axis]); 5] = [
        (
            "tests/step/chunked_broadcast.coll",
            &[
                ("P", &[2, 3, 5]),
                ("n", &[1, 7, 12, 13]),
                ("CH", &[1, 3, 4, 5]),
            ],
        ),
        (
            "tests/step/chunked_pipeline.coll",
            &[("P", &[2, 3, 6]), ("m", &[1, 10, 11]), ("CH", &[2, 3, 10])],
        ),
        (
            "tests/step/strided_release.coll",
            &[("P", &[1, 2, 5, 7, 12]), ("G", &[1, 2, 3, 5])],
        ),
        (
            "tests/step/residue_reduce.coll",
            &[("P", &[1, 2, 5, 7]), ("G", &[1, 2, 3]), ("n", &[1])],
        ),
        (
            "tests/step/residue_barrier.coll",
            &[("P", &[1, 2, 5, 7, 12]), ("G", &[1, 2, 3, 5])],
        ),
    ];
    let mut checked = 0;
    for (file, axes) in cases {
        let p = step(file);
        let mut grid: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new()];
        for (name, vals) in axes {
            grid = grid
                .iter()
                .flat_map(|g| {
                    vals.iter().map(move |v| {
                        let mut g = g.clone();
                        g.insert(name.to_string(), *v);
                        g
                    })
                })
                .collect();
        }
        for mut a in grid {
            if p.inputs().iter().any(|v| p.var_name(*v) == "root") {
                a.insert("root".into(), a["P"] - 1);
            }
            let c = collc_verifier::cost::cost(&p, &a).expect("cost");
            assert!(
                file.contains("strided")
                    || file.contains("residue")
                    || c.rows
                        .iter()
                        .all(|r| !r.formula.starts_with("no closed form")),
                "{file}: {:#?}",
                c.rows
            );
            let got: Vec<i64> = c.rows.iter().map(|r| r.value.expect("value")).collect();
            let want = collc_sim::explore::call_counts(&p, &a).expect("simulate");
            assert_eq!(got, want, "{file} at {a:?}: {:#?}", c.rows);
            checked += 1;
        }
    }
    assert!(checked >= 120, "{checked}");
}

fn inline(text: &str) -> collc_verifier::param::Outcome {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    let p = c.protocol.expect("the case validates");
    prove(&p)
}

/// A chunked broadcast whose step `G - 2` is positive only under a `require`.
const SHIFTED: &str = "collective shifted: broadcast(root, data) {
    ranks P in 1..=65536;
    param root: rank;
    param n: int in 1..=65536;
    param G: int in 1..=64;
    REQUIRE
    signal full[1];
    window data: f32[n] per call;
    body {
        if me == root {
            for c in 0..n step G - 2 {
                for q in peers {
                    notify full[0] @ q += 1;
                }
            }
        } else {
            wait full[0] >= ceil(n / (G - 2));
        }
    }
    epilogue {
        if me != root {
            notify full[0] -= ceil(n / (G - 2));
        }
    }
}
";

#[test]
fn a_step_not_shown_positive_is_declined_with_the_form_named() {
    let o = inline(&SHIFTED.replace("REQUIRE", ""));
    for id in ["credit-balance", "deadlock"] {
        let why = o.open(id).unwrap_or_default();
        assert!(why.contains("is not shown to be at least 1"), "{id}: {why}");
    }
    let o = inline(&SHIFTED.replace("REQUIRE", "require G >= 3;"));
    for id in collc_verifier::param::IDS {
        assert!(o.proof(id).is_some(), "{id}: {:?}", o.open(id));
    }
}

/// Groups as residue classes: the members of leader `g < G` are `g + G, g + 2G, ...`;
/// the writers of a leader's counter are determined only through `me % G`.
const RESIDUE: &str = "collective residue: barrier() {
    ranks P in 1..=65536;
    param G: int in 1..=64;
    signal arrive[1];
    body {
        if me >= G {
            notify arrive[0] @ rank(me % G) += 1;
        } else {
            wait arrive[0] >= ceil((P - me) / G) - 1;
        }
    }
    epilogue {
        if me < G {
            notify arrive[0] -= ceil((P - me) / G) - 1;
        }
    }
}
";

/// The leader's counter is credited by the members `me % G == o`, `me >= G`: counted as
/// `max(0, ceil((P - o) / G) - 1)` (`param::residue`), so the balance and the leader's wait
/// are proved for every P and G. The members never wait, so nothing orders a member's
/// next-call credit after its leader's wait: `stale-credit` is not proved (the enumerated
/// route decides it).
#[test]
fn writers_counted_through_a_remainder_by_the_step_are_counted() {
    let o = inline(RESIDUE);
    for id in ["credit-balance", "wait-reachable", "deadlock"] {
        assert!(o.proof(id).is_some(), "{id}: {:?}", o.open(id));
    }
    let why = o.open("stale-credit").unwrap_or_default();
    assert!(why.contains("several writers per cell"), "{why}");
}

/// A two-level barrier over residue classes whose leaders count their class on one counter
/// (`tests/step/residue_barrier.coll`, also among the correct fixtures above): its
/// `stale-credit` is proved with P and G symbolic. `release` is credited by rank 0 on the
/// leaders and by each leader on its members (two statements, two writers), yet every
/// cell receives one credit per call; the members' next-call credits to `arrive` follow
/// their wait for `release`, sent after the leader's wait for the whole call.
#[test]
fn a_residue_class_counter_barrier_is_proved_with_its_stale_credit() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/step/residue_barrier.coll");
    let (_, p) = protocol(&f);
    let o = prove(&p);
    assert!(
        o.proof("stale-credit").is_some(),
        "{:?}",
        o.open("stale-credit")
    );
    // A leader that waits for one arrival short of its class (a partial threshold with the
    // full reset) keeps `stale-credit` open: the count of `arrive` is no single writer's.
    let text = std::fs::read_to_string(&f).expect("read");
    let part = text.replace(
        "wait arrive[0] >= ceil((P - me) / G) - 1;",
        "wait arrive[0] >= min(ceil((P - me) / G) - 1, 1);",
    );
    assert_ne!(part, text);
    let o = inline(&part);
    let why = o.open("stale-credit").unwrap_or_default();
    assert!(why.contains("several writers per cell"), "{why}");
}

#[test]
fn a_reversed_chunk_loop_is_proved_too() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/step/chunked_broadcast.coll");
    let text = std::fs::read_to_string(f).expect("read");
    let rev = text.replace("for c in 0..n step CH {", "for c in (0..n step CH).rev() {");
    assert_ne!(rev, text);
    let o = inline(&rev);
    for id in collc_verifier::param::IDS {
        assert!(o.proof(id).is_some(), "{id}: {:?}", o.open(id));
    }
}
