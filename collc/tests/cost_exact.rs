//! `collc cost` formulas are exact: for every merged example, at several world sizes
//! (non-powers of two included) and several parameter values, each row's value —
//! evaluated from the derived formula, or for a row with no closed form from the
//! IR's control flow — equals what the simulator counts in one round-robin call.

use collc_sim::report::EvKind;
use collc_sim::{Schedule, SimConfig};
use collc_spec::ir::{Protocol, VarKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn coll_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "coll"));
    v.sort();
    v
}

/// The merged examples, this test's fixtures (guards on loop variables, a ring, group
/// leaders) and the review's root-only broadcast.
fn examples() -> Vec<PathBuf> {
    let mut v = coll_files(&root().join("examples"));
    assert!(v.len() >= 8, "examples/ holds the merged kernels");
    v.extend(coll_files(&root().join("collc/tests/cost_fixtures")));
    // The review's root-only broadcast: counts split by `me == root`.
    v.push(root().join("collc/tests/verify_fixtures/broadcast_root_only.coll"));
    v
}

fn protocol(path: &Path) -> Protocol {
    let text = std::fs::read_to_string(path).unwrap();
    let c = collc_verifier::validate(&text);
    match c.protocol {
        Some(p) => p,
        None => panic!("{}: {:#?}", path.display(), c.diagnostics),
    }
}

/// Remote atomics, local notifies, waits and fences the simulator executes in one call.
fn simulated(p: &Protocol, params: &BTreeMap<String, i64>) -> [i64; 4] {
    let cfg = SimConfig {
        calls: 1,
        schedule: Schedule::RoundRobin,
        ..SimConfig::default()
    };
    let events = collc_sim::explore::sample_trace(p, params, &cfg).expect("simulate");
    let mut out = [0i64; 4];
    for e in &events {
        match e.kind {
            EvKind::Notify { to, .. } if to != e.rank => out[0] += 1,
            EvKind::Notify { .. } => out[1] += 1,
            EvKind::WaitPass { .. } => out[2] += 1,
            EvKind::Fence => out[3] += 1,
            EvKind::Fault | EvKind::WaitBlocked { .. } => panic!("{}: {e:?}", p.name),
            _ => {}
        }
    }
    out
}

/// Parameter assignments to try at world size `w`: each parameter walks its own list
/// of candidates (its lower bound, small values, sizes that do and do not divide
/// into tiles or by `w`), clipped to its domain; rank parameters take 0 and `w - 1`.
fn assignments(p: &Protocol, w: i64) -> Vec<BTreeMap<String, i64>> {
    let world = p.var_name(p.world).to_string();
    (0..5)
        .map(|i| {
            let mut m = BTreeMap::new();
            m.insert(world.clone(), w);
            for v in p.inputs().into_iter().skip(1) {
                let x = match p.vars[v].kind {
                    VarKind::Param { domain: None } => [0, w - 1][i % 2],
                    VarKind::Param {
                        domain: Some((lo, hi)),
                    } => {
                        let c = [lo, 3, 300 * w, 1000, 17 * 4096 + 5][i];
                        c.clamp(lo, hi)
                    }
                    _ => continue,
                };
                m.insert(p.var_name(v).to_string(), x);
            }
            m
        })
        .collect()
}

#[test]
fn cost_values_match_the_simulator() {
    let mut checked = 0;
    for f in examples() {
        let p = protocol(&f);
        let VarKind::World { lo, hi } = p.vars[p.world].kind else {
            panic!("world size")
        };
        let mut here = 0;
        for w in [2i64, 3, 5, 7, 12]
            .into_iter()
            .filter(|w| (lo..=hi).contains(w))
        {
            for a in assignments(&p, w) {
                if collc_spec::eval::bind(&p, &a).is_err() {
                    continue; // a `require` rules it out
                }
                let c = collc_verifier::cost::cost(&p, &a).expect("cost");
                let got: Vec<Option<i64>> = c.rows.iter().map(|r| r.value).collect();
                let want = simulated(&p, &a);
                assert_eq!(
                    got,
                    want.iter().map(|x| Some(*x)).collect::<Vec<_>>(),
                    "{} at {a:?}: {:#?}",
                    f.display(),
                    c.rows
                );
                here += 1;
            }
        }
        assert!(here >= 5, "{}: only {here} assignments", f.display());
        checked += here;
    }
    assert!(checked > 100);
}

fn formulas(path: &str) -> Vec<String> {
    let p = protocol(&root().join(path));
    let c = collc_verifier::cost::cost(&p, &BTreeMap::new()).unwrap();
    c.rows.into_iter().map(|r| r.formula).collect()
}

#[test]
fn formulas_are_closed_forms_or_say_they_are_not() {
    assert_eq!(
        formulas("examples/allreduce_mesh.coll"),
        [
            "P * (P - 1) * (A + ceil(n / 256))",
            "P * (P - 1) * A",
            "P * (P - 1) * (A + ceil(n / 256))",
            "2 * P * (A + ceil(n / 256))"
        ]
    );
    assert_eq!(
        formulas("examples/allreduce_ring.coll")[3],
        "2 * P * (2*P - 1) - 2*[P == 1]"
    );
    assert_eq!(
        formulas("examples/incore_allreduce_ring.coll")[0],
        "4 * P * (P - 1)^2 * K"
    );
    assert_eq!(
        formulas("collc/tests/cost_fixtures/ring_neighbour.coll"),
        ["P - [P == 1]", "P + [P == 1]", "P", "0"]
    );
    assert_eq!(
        formulas("collc/tests/cost_fixtures/group_leaders.coll")[1],
        "P * (P - 1) + 2 * ceil(P / G)"
    );
    let g = formulas("collc/tests/cost_fixtures/guarded_loops.coll");
    assert_eq!(g[0], "P * (P - 1)");
    assert!(g[3].starts_with("no closed form: "), "{g:?}");
}

#[test]
fn formulas_do_not_depend_on_the_declared_world_bound() {
    // The derivation never enumerates P: widening the domain changes no formula.
    for f in examples() {
        let p = protocol(&f);
        let mut wide = p.clone();
        if let VarKind::World { lo, .. } = p.vars[p.world].kind {
            wide.vars[p.world].kind = VarKind::World { lo, hi: 65536 };
        }
        let a = collc_verifier::cost::cost(&p, &BTreeMap::new()).unwrap();
        let b = collc_verifier::cost::cost(&wide, &BTreeMap::new()).unwrap();
        let fa: Vec<&str> = a.rows.iter().map(|r| r.formula.as_str()).collect();
        let fb: Vec<&str> = b.rows.iter().map(|r| r.formula.as_str()).collect();
        assert_eq!(fa, fb, "{}", f.display());
    }
}

#[test]
fn a_huge_world_size_never_hangs() {
    // Closed forms evaluate at once; a row with none runs the IR's control flow within
    // a statement budget and, past it, has no value rather than hanging.
    let mut p = protocol(&root().join("collc/tests/cost_fixtures/guarded_loops.coll"));
    p.vars[p.world].kind = VarKind::World { lo: 1, hi: 65536 };
    let a: BTreeMap<String, i64> = [("P".to_string(), 65536), ("n".to_string(), 64)].into();
    let t = std::time::Instant::now();
    let c = collc_verifier::cost::cost(&p, &a).unwrap();
    assert_eq!(c.rows[0].value, Some(65536 * 65535));
    assert!(c.rows[3].formula.starts_with("no closed form"));
    assert_eq!(c.rows[3].value, None);
    assert!(t.elapsed().as_secs() < 60, "{:?}", t.elapsed());
}
