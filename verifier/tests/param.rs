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
                Ok(pr) => println!("  {id}: proved ({} checks, {} literal, {} z3)", pr.items, pr.literal, pr.z3),
                Err(r) => println!("  {id}: OPEN {r}"),
            }
        }
    }
}
