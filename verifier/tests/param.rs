//! The parametric route (P symbolic) on every shipped example.

use std::time::Duration;

fn examples() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    v.sort();
    v
}

#[test]
fn print_outcomes() {
    for f in examples() {
        let text = std::fs::read_to_string(&f).expect("read");
        let c = collc_verifier::validate(&text);
        let p = c.protocol.expect("validates");
        let o = collc_verifier::param::prove(&p, Duration::from_secs(20));
        println!("== {} ({} ms)", f.display(), o.millis);
        for id in collc_verifier::param::IDS {
            match &o.results[id] {
                Ok(pr) => println!(
                    "  {id}: proved ({} checks, {} literal, {} z3)",
                    pr.items, pr.literal, pr.z3
                ),
                Err(r) => println!("  {id}: OPEN {r}"),
            }
        }
    }
}

/// Soundness against the enumerated route: on every example and every bug fixture,
/// an obligation the enumerated route finds violated (or the bounded search finds a
/// deadlock for) is never proved by the parametric route.
#[test]
fn never_proves_what_enumeration_refutes() {
    let mut files = examples();
    let bugs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/bugs");
    let mut b: Vec<_> = std::fs::read_dir(&bugs)
        .expect("examples/bugs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    b.sort();
    files.extend(b);
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        let c = collc_verifier::validate(&text);
        let Some(p) = c.protocol else { continue };
        let o = collc_verifier::param::prove(&p, Duration::from_secs(20));
        let r = collc_verifier::check::verify(&p, &collc_verifier::check::Options::default());
        for ob in &r.obligations {
            if matches!(
                ob.status,
                collc_verifier::Status::Violated | collc_verifier::Status::Warning
            ) && o.proof(&ob.id).is_some()
            {
                bad.push(format!(
                    "{}: {} proved but enumerated {:?}",
                    f.display(),
                    ob.id,
                    ob.status
                ));
            }
        }
        println!(
            "{}: {:?}",
            f.display(),
            collc_verifier::param::IDS
                .iter()
                .filter(|i| o.proof(i).is_none())
                .collect::<Vec<_>>()
        );
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
