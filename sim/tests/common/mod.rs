//! Helpers shared by the simulator's test crates.

use std::path::{Path, PathBuf};

/// The `.coll` files directly in each of `dirs` (relative to the repository root),
/// sorted; a missing directory contributes nothing.
pub fn coll_files(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut v = Vec::new();
    for dir in dirs {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            v.extend(
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "coll")),
            );
        }
    }
    v.sort();
    v
}
