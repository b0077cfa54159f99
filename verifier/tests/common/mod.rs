//! Helpers shared by the verifier's test crates.

use std::path::{Path, PathBuf};

/// The `.coll` files directly in each of `dirs` (relative to the repository root),
/// sorted within each directory, directories in the order given. A directory that is
/// missing or holds no `.coll` file fails the test: a listing that finds nothing would
/// let every check over it pass vacuously.
pub fn coll_files(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
    for dir in dirs {
        let mut here: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "coll"))
            .collect();
        assert!(!here.is_empty(), "{dir} holds no .coll file");
        here.sort();
        out.extend(here);
    }
    out
}
