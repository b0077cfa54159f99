//! Every cost formula the repository's protocols produce is proved by Z3
//! (`collc_verifier::cost::prove`) equal to its normal form, and that to the folded form
//! `collc cost` prints: each derived count of `collc cost` and each cells, credits and
//! reset per call of `verify --explain`'s credit table, over every example, bug fixture,
//! cost fixture, step fixture and discipline fixture, under the declared domains. A
//! counterexample fails; an unknown answer is named and counted, and the number proved
//! is asserted.

use collc_verifier::cost::alg::Poly;
use collc_verifier::cost::prove::{equal, Verdict};
use collc_verifier::cost::show::Names;
use collc_verifier::cost::walk::Walk;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const DIRS: [&str; 5] = [
    "examples",
    "examples/bugs",
    "collc/tests/cost_fixtures",
    "verifier/tests/step",
    "verifier/tests/disciplines",
];

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for d in DIRS {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root.join(d))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "coll"))
                    .collect()
            })
            .unwrap_or_default();
        assert!(!here.is_empty(), "{d} holds fixtures");
        here.sort();
        out.extend(here);
    }
    out
}

/// Tallies of the proofs.
#[derive(Default)]
struct Tally {
    formulas: usize,
    proved: usize,
    unknown: Vec<String>,
    refuted: Vec<String>,
}

impl Tally {
    fn prove(&mut self, what: &str, a: &Poly, b: &Poly, range: &dyn Fn(&Poly) -> (f64, f64)) {
        self.formulas += 1;
        match equal(a, b, range) {
            Verdict::Proved => self.proved += 1,
            Verdict::Unknown(why) => self.unknown.push(format!("{what}: unknown ({why})")),
            Verdict::Refuted(at) => self.refuted.push(format!("{what}: differs at {at:?}")),
        }
    }
}

#[test]
fn every_printed_cost_formula_is_proved_equal_to_the_derived_one() {
    let mut t = Tally::default();
    let (mut deriving, mut proving) = (Duration::ZERO, Duration::ZERO);
    for path in files() {
        let start = Instant::now();
        let text = std::fs::read_to_string(&path).expect("read .coll");
        let Some(p) = collc_verifier::validate(&text).protocol else {
            continue;
        };
        let names = Names { p: &p };
        let w = Walk::new(&p, 0);
        let range = |y: &Poly| w.range(y);
        let file = path
            .file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned());
        let mut polys: Vec<(String, Poly)> = Vec::new();
        for (k, d) in collc_verifier::cost::derive(&p).into_iter().enumerate() {
            if let Ok(x) = d {
                polys.push((format!("cost row {k}"), x));
            }
        }
        if let Ok(table) = collc_verifier::table::explain(&p) {
            for (i, r) in table.rows.iter().enumerate() {
                let each = [
                    ("cells", &r.cells_count),
                    ("credits", &r.credits_count),
                    ("reset", &r.reset_count),
                ];
                for (what, x) in each {
                    if let Some(x) = x {
                        polys.push((format!("credit row {i} {what}"), x.clone()));
                    }
                }
            }
        }
        deriving += start.elapsed();
        let start = Instant::now();
        for (what, x) in polys {
            let n = collc_verifier::cost::normal::normal(&x, &range);
            let shown = names.shown(&x);
            let what = format!("{file} {what} `{}`", names.formula(&x));
            t.prove(&format!("{what} (normal form)"), &x, &n, &range);
            t.prove(&format!("{what} (folded)"), &n, &shown, &range);
        }
        proving += start.elapsed();
    }
    eprintln!("deriving {deriving:?}, proving {proving:?}");
    for u in &t.unknown {
        eprintln!("{u}");
    }
    eprintln!(
        "{} of {} equalities proved, {} unknown, {} refuted",
        t.proved,
        t.formulas,
        t.unknown.len(),
        t.refuted.len()
    );
    assert!(t.refuted.is_empty(), "refuted: {:#?}", t.refuted);
    assert!(t.formulas >= 200, "{} equalities posed", t.formulas);
    assert_eq!(t.proved + t.unknown.len(), t.formulas);
    // within the resource limit, Z3 leaves products of several ramps unknown
    assert!(t.proved >= 1332, "{} proved", t.proved);
}
