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
