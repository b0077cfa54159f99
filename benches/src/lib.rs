//! Shared helpers for the criterion benches.

/// Absolute path of a file under the repository root.
pub fn repo_path(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

/// Every `.coll` file directly in `examples/`, sorted, with its text.
pub fn examples() -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(repo_path("examples")) {
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "coll") {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    let name = p
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    out.push((name, t));
                }
            }
        }
    }
    out.sort();
    out
}

/// Validates `text` and passes it through the verifier gate every code-producing command
/// uses (`collc_verifier::verify` with the default options, then `collc_verifier::gate`
/// without `--allow-unverified`); panics, naming the blockers, if the gate refuses.
pub fn gated(what: &str, text: &str) -> collc_spec::Validated {
    let checked = collc_spec::front(&collc_verifier::Ranges, text);
    let Some(p) = checked.protocol else {
        panic!("{what} does not validate: {:?}", checked.diagnostics);
    };
    let report = collc_verifier::verify(&p, &collc_verifier::Options::default());
    let gate = collc_verifier::gate(&report, false);
    assert!(
        gate.allowed(),
        "{what}: the verifier gate refuses it: {:?}",
        gate.blockers
    );
    p
}
