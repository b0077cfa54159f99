//! Every cost formula the repository's protocols produce is proved by Z3
//! (`collc_verifier::cost::prove`) equal to its normal form, and that to the folded form
//! `collc cost` prints: each derived count of `collc cost` and each cells, credits and
//! reset per call of `verify --explain`'s credit table, over every example, bug fixture,
//! cost fixture, step fixture and discipline fixture, under the declared domains. A
//! counterexample fails, and so does an unknown answer (each is named).

mod common;

use collc_verifier::cost::alg::Poly;
use collc_verifier::cost::prove::{equal, Verdict};
use collc_verifier::cost::show::Names;
use collc_verifier::cost::walk::Walk;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const DIRS: [&str; 5] = [
    "examples",
    "examples/bugs",
    "collc/tests/cost_fixtures",
    "verifier/tests/step",
    "verifier/tests/disciplines",
];

/// Tallies of the proofs.
#[derive(Default)]
struct Tally {
    formulas: usize,
    proved: usize,
    unknown: Vec<String>,
    refuted: Vec<String>,
    /// Verdicts by question in the current file (whose domains give the ranges): a
    /// question another row of the file poses again is answered once.
    asked: BTreeMap<(Poly, Poly), Verdict>,
}

impl Tally {
    fn prove(&mut self, what: &str, a: &Poly, b: &Poly, range: &dyn Fn(&Poly) -> (f64, f64)) {
        self.formulas += 1;
        let key = (a.clone(), b.clone());
        let verdict = match self.asked.get(&key) {
            Some(v) => v.clone(),
            None => {
                let v = equal(a, b, range);
                self.asked.insert(key, v.clone());
                v
            }
        };
        match verdict {
            Verdict::Proved => self.proved += 1,
            Verdict::Unknown(why) => {
                // Z3 decides linear integer arithmetic with min/max/ceil within the limit
                assert!(
                    a.has_product() || b.has_product(),
                    "{what}: unknown ({why}) though linear"
                );
                self.unknown.push(format!("{what}: unknown ({why})"))
            }
            Verdict::Refuted(at) => self.refuted.push(format!("{what}: differs at {at:?}")),
        }
    }
}

#[test]
fn every_printed_cost_formula_is_proved_equal_to_the_derived_one() {
    let mut t = Tally::default();
    let (mut deriving, mut proving) = (Duration::ZERO, Duration::ZERO);
    for path in common::coll_files(&DIRS) {
        let start = Instant::now();
        let text = std::fs::read_to_string(&path).expect("read .coll");
        let Some(p) = collc_spec::front(&collc_verifier::Ranges, &text).protocol else {
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
        t.asked.clear();
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
    // every one is proved: the case split of `min` and `max` (`cost::split`) leaves Z3
    // small `ite`-free questions, far within its resource limit
    assert!(t.unknown.is_empty(), "{} unknown", t.unknown.len());
}
