//! `collc cost` formulas are exact: for every merged example, at several world sizes
//! (non-powers of two included) and several parameter values, each row's value —
//! evaluated from the derived formula, or for a row with no closed form from the
//! IR's control flow — equals what the simulator counts in one round-robin call.
//! The same holds for the credit table's `cells per call` (`verify --explain`) and
//! the garbage-credit waste: each derived count, evaluated, equals what one
//! simulated call touches.

use collc_sim::report::{EvKind, Event};
use collc_spec::ir::VarKind;
use collc_spec::Validated;
use collc_verifier::cost::cells::{at, At as Span};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;
use common::{coll_files, repo_root as root};

/// The merged examples, this test's fixtures (guards on loop variables, a ring, group
/// leaders) and the review's root-only broadcast.
fn examples() -> Vec<PathBuf> {
    let mut v = coll_files("examples");
    assert!(v.len() >= 8, "examples/ holds the merged kernels");
    v.extend(coll_files("collc/tests/cost_fixtures"));
    // The review's root-only broadcast: counts split by `me == root`.
    v.push(root().join("collc/tests/verify_fixtures/broadcast_root_only.coll"));
    v
}

fn protocol(path: &Path) -> Validated {
    validated(path, &std::fs::read_to_string(path).unwrap())
}

/// The protocol of `path` with its world-size domain declared `lo..=65536` (`lo`: the
/// declared lower bound when `None`), through the front end like any text.
fn widened(path: &Path, lo: Option<i64>) -> Validated {
    let text = std::fs::read_to_string(path).unwrap();
    let wide: Vec<String> = text
        .lines()
        .map(|l| match l.trim_start().strip_prefix("ranks P in ") {
            Some(d) => {
                let from = d.split("..=").next().unwrap_or("1");
                let from = lo.map_or(from.to_string(), |v| v.to_string());
                format!("    ranks P in {from}..=65536;")
            }
            None => l.to_string(),
        })
        .collect();
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("ranks P in ")),
        "{}: no `ranks P in` line",
        path.display()
    );
    validated(path, &wide.join("\n"))
}

fn validated(path: &Path, text: &str) -> Validated {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    match c.protocol {
        Some(p) => p,
        None => panic!("{}: {:#?}", path.display(), c.diagnostics),
    }
}

/// World sizes tried where the declared domain and the `require`s allow (powers of two
/// and not).
const WORLDS: [i64; 8] = [2, 3, 4, 5, 6, 7, 8, 12];

/// The first `n` assignments at each world size the declared domain and the
/// `require`s allow.
fn cases(p: &Validated, n: usize) -> Vec<BTreeMap<String, i64>> {
    let VarKind::World { lo, hi } = p.vars[p.world].kind else {
        panic!("world size")
    };
    WORLDS
        .into_iter()
        .filter(|w| (lo..=hi).contains(w))
        .flat_map(|w| assignments(p, w).into_iter().take(n))
        .filter(|a| collc_spec::eval::bind(p, a).is_ok())
        .collect()
}

/// The events of one round-robin call.
fn trace(p: &Validated, params: &BTreeMap<String, i64>) -> Vec<Event> {
    collc_sim::explore::call_trace(p, params).expect("simulate")
}

/// Parameter assignments to try at world size `w`: each parameter walks its own list
/// of candidates (its lower bound, small values, sizes that do and do not divide
/// into tiles or by `w`), clipped to its domain; rank parameters take 0 and `w - 1`.
fn assignments(p: &Validated, w: i64) -> Vec<BTreeMap<String, i64>> {
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
        for w in WORLDS.into_iter().filter(|w| (lo..=hi).contains(w)) {
            for a in assignments(&p, w) {
                if collc_spec::eval::bind(&p, &a).is_err() {
                    continue; // a `require` rules it out
                }
                let c = collc_verifier::cost::cost(&p, &a).expect("cost");
                let got: Vec<Option<i64>> = c.rows.iter().map(|r| r.value).collect();
                let want = collc_sim::explore::call_counts(&p, &a).expect("simulate");
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
        let wide = widened(&f, None);
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
    let p = widened(
        &root().join("collc/tests/cost_fixtures/guarded_loops.coll"),
        Some(1),
    );
    let a: BTreeMap<String, i64> = [("P".to_string(), 65536), ("n".to_string(), 64)].into();
    let t = std::time::Instant::now();
    let c = collc_verifier::cost::cost(&p, &a).unwrap();
    assert_eq!(c.rows[0].value, Some(65536 * 65535));
    assert!(c.rows[3].formula.starts_with("no closed form"));
    assert_eq!(c.rows[3].value, None);
    assert!(t.elapsed().as_secs() < 60, "{:?}", t.elapsed());
}

/// Rows allowed to have no closed form, with what their reason must name.
const OPEN: [(&str, &str, &str); 1] = [("guarded_loops.coll", "fences", "no closed form")];

fn open_row(f: &Path, what: &str) -> Option<&'static str> {
    let name = f.file_name()?.to_str()?;
    OPEN.iter()
        .find(|(n, w, _)| *n == name && *w == what)
        .map(|(_, _, why)| *why)
}

#[test]
fn every_example_has_closed_forms_except_the_listed() {
    for f in examples() {
        let p = protocol(&f);
        let c = collc_verifier::cost::cost(&p, &BTreeMap::new()).unwrap();
        for r in &c.rows {
            match open_row(&f, &r.what) {
                Some(why) => assert!(
                    r.formula.starts_with("no closed form") && r.formula.contains(why),
                    "{}: {} = {}",
                    f.display(),
                    r.what,
                    r.formula
                ),
                None => assert!(
                    !r.formula.contains("no closed form"),
                    "{}: {} = {}",
                    f.display(),
                    r.what,
                    r.formula
                ),
            }
        }
    }
}

#[test]
fn log_round_formulas() {
    // ceil(log2(P)) rounds for any P; log2(P) where a `require` makes P a power of two.
    assert_eq!(
        formulas("examples/dissemination_barrier.coll"),
        [
            "P * ceil(log2(P))",
            "P * ceil(log2(P))",
            "P * ceil(log2(P))",
            "P"
        ]
    );
    assert_eq!(
        formulas("examples/allreduce_recursive_doubling.coll"),
        [
            "P * log2(P) * (T + 1)",
            "2 * P * log2(P)",
            "P * log2(P) * (T + 1)",
            "P * (2*T*log2(P) + 2*log2(P) + 1)"
        ]
    );
    let b = formulas("collc/tests/cost_fixtures/geometric_sums.coll");
    assert_eq!(
        b,
        [
            "P * (pow2(ceil(log2(P))) - 1)",
            "P * ceil(log2(P))",
            "P * ceil(log2(P))",
            "P * ceil(log2(P)) * (ceil(log2(P)) + 1) / 2"
        ]
    );
}

/// The credit table's (signal, cells per call) rows, every one derived.
fn cells(f: &str) -> Vec<(String, String)> {
    let p = protocol(&root().join(f));
    let t = collc_verifier::table::explain(&p).unwrap();
    assert!(
        t.method.ends_with("cells per call derived for every P"),
        "{f}: {}",
        t.method
    );
    t.rows.into_iter().map(|r| (r.signal, r.cells)).collect()
}

/// Rows of the given signals, each with `cells`.
fn rows(names: &[&str], cells: &str) -> Vec<(String, String)> {
    names
        .iter()
        .map(|n| (n.to_string(), cells.to_string()))
        .collect()
}

#[test]
fn log_round_cells() {
    // One cell per rank and round for each signal: the partner `me ^ d` is a bijection
    // of the ranks for every round `d < P` (P a power of two), `(me + d) % P` for any P.
    assert_eq!(
        cells("examples/dissemination_barrier.coll"),
        rows(&["flag"], "P * ceil(log2(P))")
    );
    assert_eq!(
        cells("examples/allreduce_recursive_doubling.coll"),
        rows(&["done", "ready"], "P * log2(P)")
    );
    assert_eq!(
        cells("examples/allreduce_rabenseifner.coll"),
        rows(&["ag_done", "ag_ready", "rs_ready"], "P * log2(P)")
    );
}

/// Input values by variable, for evaluating a derived count.
fn config(p: &Validated, a: &BTreeMap<String, i64>) -> Vec<(collc_spec::ir::VarId, i64)> {
    p.inputs()
        .into_iter()
        .filter_map(|v| a.get(p.var_name(v)).map(|x| (v, *x)))
        .collect()
}

/// The statements of a block (nested ones included), by span, with whether each
/// adds credits (`+=` of a value that is not a constant <= 0).
fn credit_spans(b: &collc_spec::ir::Block, out: &mut BTreeSet<Span>) {
    use collc_spec::ir::{Expr, NotifyOp, StmtKind};
    collc_spec::visit::each_stmt(b, &mut |s| {
        if let StmtKind::Notify {
            op: NotifyOp::AtomicAdd,
            value,
            ..
        } = &s.kind
        {
            if !matches!(value, Expr::Int(v) if *v <= 0) && !matches!(value, Expr::Neg(_)) {
                out.insert(at(s.span));
            }
        }
    });
}

/// Per cell (owner, name) touched in one call: the statements (spans) touching it.
fn touched(events: &[Event]) -> BTreeMap<(u32, String), BTreeSet<Span>> {
    let mut out: BTreeMap<(u32, String), BTreeSet<Span>> = BTreeMap::new();
    for e in events {
        let key = match &e.kind {
            EvKind::Notify { to, cell, .. } => (*to, cell.clone()),
            EvKind::WaitPass { cell, .. } => (e.rank, cell.clone()),
            _ => continue,
        };
        if let Some(s) = e.span {
            out.entry(key).or_default().insert(at(s));
        }
    }
    out
}

/// The row of a cell the statements `spans` touch: the row of exactly those
/// statements, or else the one row whose statements include them (a loop that ran no
/// iteration here).
fn row_of(t: &collc_verifier::table::CreditTable, spans: &BTreeSet<Span>, what: &str) -> usize {
    let exact: Vec<usize> = (0..t.rows.len())
        .filter(|i| t.rows[*i].touched_by.contains(spans))
        .collect();
    let wider: Vec<usize> = (0..t.rows.len())
        .filter(|i| t.rows[*i].touched_by.iter().any(|s| s.is_superset(spans)))
        .collect();
    match (exact.as_slice(), wider.as_slice()) {
        ([i], _) | ([], [i]) => *i,
        _ => panic!("{what}: touched by {spans:?}, in rows {exact:?} / {wider:?}"),
    }
}

/// Credit tables whose cell counts may have no closed form: cells of one set of
/// statements with different credits (round d's d credits in `geometric_sums`); any table
/// whose rows say the shapes of one statement set's cells differ is skipped too. (The
/// partners `me ^ d` of the recursive-doubling and Rabenseifner allreduces and the
/// binomial trees' children `vr + m` have closed forms, checked here.)
fn open_cells(f: &Path) -> bool {
    let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    ["geometric_sums.coll"].contains(&name)
}

#[test]
fn explain_cells_match_the_simulator() {
    let mut checked = 0;
    for f in examples() {
        let p = protocol(&f);
        let Ok(t) = collc_verifier::table::explain(&p) else {
            continue; // outside the enumeration (the table says so)
        };
        // Cells of one set of statements with different shapes (credits that vary
        // with the cell or with P) have no single row to count them in.
        let shapes_vary = t.rows.iter().any(|r| r.cells.contains("differ in shape"));
        if open_cells(&f) || shapes_vary {
            continue;
        }
        for r in &t.rows {
            assert!(
                r.cells_count.is_some(),
                "{}: {} has no derived cell count: {}",
                f.display(),
                r.signal,
                r.cells
            );
        }
        for a in cases(&p, 2) {
            // Each simulated cell counts for the row of the statements that touch
            // it: the row of exactly those statements, or else the one row whose
            // statements include them (a loop that ran no iteration here).
            let mut want = vec![0i64; t.rows.len()];
            for (cell, spans) in touched(&trace(&p, &a)) {
                want[row_of(
                    &t,
                    &spans,
                    &format!("{}: cell {cell:?} at {a:?}", f.display()),
                )] += 1;
            }
            let cfg = config(&p, &a);
            for (r, want) in t.rows.iter().zip(want) {
                let Some(x) = &r.cells_count else { continue };
                let got = collc_verifier::cost::value_at(&p, x, &cfg);
                assert_eq!(
                    got,
                    Some(want),
                    "{}: row {} `{}` at {a:?}",
                    f.display(),
                    r.signal,
                    r.cells
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn garbage_waste_matches_the_simulator() {
    let mut files = examples();
    files.push(root().join("examples/bugs/broadcast_garbage_credits.coll"));
    let mut wasteful = 0;
    for f in files {
        let p = protocol(&f);
        let waste = match collc_verifier::cost::cells::waste(&p) {
            Ok(x) => x,
            Err(why) => {
                // the binomial tree's parent `(vr - low + root) % P` with `low = vr & -vr`
                assert!(
                    f.ends_with("broadcast_binomial.coll"),
                    "{}: {why}",
                    f.display()
                );
                continue;
            }
        };
        let mut credits = BTreeSet::new();
        credit_spans(&p.body, &mut credits);
        for a in cases(&p, 2) {
            let events = trace(&p, &a);
            let read: BTreeSet<(u32, String)> = events
                .iter()
                .filter_map(|e| match &e.kind {
                    EvKind::WaitPass { cell, .. } => Some((e.rank, cell.clone())),
                    _ => None,
                })
                .collect();
            let want = events
                .iter()
                .filter(|e| match &e.kind {
                    EvKind::Notify { to, cell, .. } => {
                        *to != e.rank
                            && e.span.is_some_and(|s| credits.contains(&at(s)))
                            && !read.contains(&(*to, cell.clone()))
                    }
                    _ => false,
                })
                .count() as i64;
            let got = collc_verifier::cost::value_at(&p, &waste, &config(&p, &a));
            assert_eq!(got, Some(want), "{} at {a:?}", f.display());
            wasteful += i64::from(want > 0);
        }
    }
    assert!(
        wasteful >= 5,
        "the garbage fixture wastes credits: {wasteful}"
    );
}

/// Every derived row, evaluated, equals the count of the IR's control flow run for
/// every rank at every world size `1..=16` the domain allows (each rank parameter at
/// 0, P / 2 and P - 1; other parameters at their lower bound and one larger value).
fn formulas_match_enumeration(f: &Path, p: &Validated) -> usize {
    let VarKind::World { lo, hi } = p.vars[p.world].kind else {
        panic!("world size")
    };
    let world = p.var_name(p.world).to_string();
    let derived = collc_verifier::cost::derive(p);
    let mut checked = 0;
    for w in (1..=16).filter(|w| (lo..=hi).contains(w)) {
        for i in 0..3 {
            let mut a = BTreeMap::from([(world.clone(), w)]);
            for v in p.inputs().into_iter().skip(1) {
                let x = match p.vars[v].kind {
                    VarKind::Param { domain: None } => [0, w / 2, w - 1][i],
                    VarKind::Param {
                        domain: Some((lo, hi)),
                    } => [lo, lo + 3, lo + 1000][i].clamp(lo, hi),
                    _ => continue,
                };
                a.insert(p.var_name(v).to_string(), x);
            }
            let Ok(b) = collc_spec::eval::bind(p, &a) else {
                continue; // a `require` rules it out
            };
            let want = collc_verifier::cost::concrete::counts(p, &b).expect("run");
            for (k, d) in derived.iter().enumerate() {
                if let Ok(x) = d {
                    let got = collc_verifier::cost::value(x, &b);
                    assert_eq!(got, Some(want[k]), "{} row {k} at {a:?}", f.display());
                }
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn formulas_match_enumerated_counts_for_p_1_to_16() {
    let mut checked = 0;
    for f in examples() {
        checked += formulas_match_enumeration(&f, &protocol(&f));
    }
    assert!(checked > 300, "{checked}");
}

#[test]
fn binomial_trees_have_closed_forms() {
    // A loop over the powers m whose guard selects the children x + m of x (in the
    // binomial tree over 0..P) sums, over the ranks, to the P - 1 edges of the tree,
    // whatever form the guard takes (`m < (vr & -vr)`, `me % (2 * m) == 0`).
    assert_eq!(
        formulas("examples/broadcast_binomial.coll"),
        ["2 * (P - 1)", "2 * (P - 1)", "2 * (P - 1)", "3*P - 2"]
    );
    assert_eq!(
        formulas("collc/tests/cost_fixtures/binomial_barrier.coll"),
        ["2 * (P - 1)", "2 * (P - 1)", "2 * (P - 1)", "0"]
    );
    // One cell per edge of the tree: `done[c]` on the parent of c, `ready[0]` on c.
    assert_eq!(
        cells("examples/broadcast_binomial.coll"),
        rows(&["done", "ready"], "P - 1")
    );
    assert_eq!(
        cells("collc/tests/cost_fixtures/binomial_barrier.coll"),
        rows(&["arrived", "release"], "P - 1")
    );
}

#[test]
fn collc_cost_prints_the_binomial_closed_forms() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .args(["cost", "examples/broadcast_binomial.coll", "-P", "12"])
        .args(["--param", "n=1024", "--param", "root=5"])
        .output()
        .expect("run collc");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for line in [
        "remote atomics  2 * (P - 1)  = 22",
        "local notifies  2 * (P - 1)  = 22",
        "waits           2 * (P - 1)  = 22",
        "fences          3*P - 2      = 34",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(!text.contains("no closed form"), "{text}");
}

#[test]
fn a_guard_that_is_no_tree_gets_no_tree_sum() {
    // `me % m == 0` sends in more rounds than a binomial tree: Z3 refutes the tree
    // form, so the count is not P - 1 (no closed form; its values are the run's).
    let src = "collective near_tree: barrier() {
    ranks P in 1..=16;
    signal s[1];
    body {
        for m in 1..P step *2 {
            if me % m == 0 && me + m < P {
                notify s[0] @ rank(me + m) += 1;
            }
        }
    }
    epilogue {
        fence;
    }
}";
    let c = collc_spec::front(&collc_verifier::Ranges, src);
    let p = c.protocol.unwrap_or_else(|| panic!("{:#?}", c.diagnostics));
    let rows = collc_verifier::cost::cost(&p, &BTreeMap::new())
        .unwrap()
        .rows;
    assert!(rows[0].formula.starts_with("no closed form"), "{rows:#?}");
    formulas_match_enumeration(Path::new("near_tree"), &p);
}

/// Every example's credit table against the simulator at every world size of its
/// domain up to 16 (the other parameters at their first assignment): each simulated
/// cell counts for its row, every row has the derived number of cells, and the credits
/// and the reset the simulator added to each cell are the row's derived ones.
#[test]
fn explain_tables_match_the_simulator_for_p_up_to_16() {
    let mut checked = 0;
    for f in examples() {
        let p = protocol(&f);
        let Ok(t) = collc_verifier::table::explain(&p) else {
            continue; // outside the enumeration (the table says so)
        };
        if open_cells(&f) || t.rows.iter().any(|r| r.cells_count.is_none()) {
            continue;
        }
        let VarKind::World { lo, hi } = p.vars[p.world].kind else {
            panic!("world size")
        };
        let (mut body, mut epilogue) = (BTreeSet::new(), BTreeSet::new());
        adds(&p.body, &mut body);
        adds(&p.epilogue, &mut epilogue);
        for w in lo.max(1)..=hi.min(16) {
            let Some(a) = assignments(&p, w)
                .into_iter()
                .find(|a| collc_spec::eval::bind(&p, a).is_ok())
            else {
                continue;
            };
            let events = trace(&p, &a);
            let mut cells = vec![0i64; t.rows.len()];
            for (cell, spans) in touched(&events) {
                let what = format!("{}: cell {cell:?} at {a:?}", f.display());
                let row = row_of(&t, &spans, &what);
                cells[row] += 1;
                // What the body and the epilogue added to the cell.
                let (mut credits, mut reset) = (0, 0);
                for e in &events {
                    if let (
                        EvKind::Notify {
                            to,
                            cell: c,
                            before,
                            after,
                        },
                        Some(s),
                    ) = (&e.kind, e.span)
                    {
                        if (*to, c) == (cell.0, &cell.1) {
                            if body.contains(&at(s)) {
                                credits += after - before;
                            } else if epilogue.contains(&at(s)) {
                                reset += after - before;
                            }
                        }
                    }
                }
                let r = &t.rows[row];
                let cfg = config(&p, &a);
                for (x, got, name) in [
                    (&r.credits_count, credits, "credits"),
                    (&r.reset_count, reset, "reset"),
                ] {
                    if let Some(x) = x {
                        let want = collc_verifier::cost::value_at(&p, x, &cfg);
                        assert_eq!(want, Some(got), "{what}: {name} of row {r:?}");
                    }
                }
            }
            let cfg = config(&p, &a);
            for (r, n) in t.rows.iter().zip(cells) {
                let Some(x) = &r.cells_count else { continue };
                let want = collc_verifier::cost::value_at(&p, x, &cfg);
                assert_eq!(want, Some(n), "{}: row {r:?} at {a:?}", f.display());
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

/// The spans of a block's `AtomicAdd` notifies, nested ones included.
fn adds(b: &collc_spec::ir::Block, out: &mut BTreeSet<Span>) {
    use collc_spec::ir::{NotifyOp, StmtKind};
    collc_spec::visit::each_stmt(b, &mut |s| {
        if let StmtKind::Notify {
            op: NotifyOp::AtomicAdd,
            ..
        } = &s.kind
        {
            out.insert(at(s.span));
        }
    });
}
