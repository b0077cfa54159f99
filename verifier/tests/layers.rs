//! The verifier's layers (ARCHITECTURE.md, "Verifier layers"): every `crate::` path in a
//! module of `verifier/src/` names a module of its own layer or of a layer below.
//!
//! Layers, bottom first: `planning/` (world sizes, parameter values, budgets), `report/`
//! (the verdict's data), `engine/` (Z3 queries, the explorer, enumeration, the cost
//! model), `obligations/` (one module per obligation), and the crate root's own modules
//! (the verbs: `entry`, `validate`, `fix`, `table`, and `lib.rs`'s re-exports). A path
//! through a re-export of the root (`crate::Report`) counts as the root's.
//!
//! Read from the source text: every line outside comments and outside a module's
//! `#[cfg(test)]` tail (tests may build their fixtures with the front end). Imports
//! between modules of one layer are free.

use std::path::{Path, PathBuf};

const LAYERS: [&str; 4] = ["planning", "report", "engine", "obligations"];

/// The layer of a module path's first component (the root's when it is none of them).
fn layer(first: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| *l == first)
        .unwrap_or(LAYERS.len())
}

fn name(l: usize) -> &'static str {
    LAYERS.get(l).copied().unwrap_or("the crate root")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read verifier/src").flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `crate::NAME` in `line`: the NAMEs.
fn crate_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        let after = &rest[i + "crate::".len()..];
        let n: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // `collc_verifier_crate::x` or `$crate::` are not paths of this crate.
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            if n.is_empty() {
                // `crate::{a, b}`: each name of the group.
                let group: String = after
                    .trim_start_matches('{')
                    .chars()
                    .take_while(|c| *c != '}')
                    .collect();
                out.extend(
                    group
                        .split(',')
                        .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
                        .filter(|s| !s.is_empty()),
                );
            } else {
                out.push(n);
            }
        }
        rest = after;
    }
    out
}

/// The upward imports of one file: (line number, target, layer of the file, of the target).
fn upward(rel: &str, text: &str) -> Vec<(usize, String, usize, usize)> {
    let first = rel.split('/').next().unwrap_or("");
    let own = if rel.contains('/') {
        layer(first)
    } else {
        LAYERS.len()
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        for target in crate_paths(t) {
            let l = layer(&target);
            if l > own {
                out.push((i + 1, target, own, l));
            }
        }
    }
    out
}

#[test]
fn no_import_runs_up_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut seen = [0usize; 5];
    let mut bad = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let first = rel.split('/').next().unwrap_or("");
        seen[if rel.contains('/') {
            layer(first)
        } else {
            LAYERS.len()
        }] += 1;
        let text = std::fs::read_to_string(f).expect("read a source file");
        for (line, target, from, to) in upward(&rel, &text) {
            bad.push(format!(
                "verifier/src/{rel}:{line}: `crate::{target}` ({}) from {}",
                name(to),
                name(from)
            ));
        }
    }
    // Every layer has modules: a renamed directory would otherwise pass vacuously.
    for (l, n) in seen.iter().enumerate() {
        assert!(*n > 0, "no module in {}", name(l));
    }
    assert!(
        bad.is_empty(),
        "imports running up a layer:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_reader_finds_upward_paths() {
    let text = "use crate::engine::smt;\nuse crate::{report::Report, obligations::check};\n\
                // crate::entry in a comment\nfn f() { crate::verify(); }\n\
                #[cfg(test)]\nmod tests { use crate::validate; }\n";
    let found: Vec<(usize, String)> = upward("engine/x.rs", text)
        .into_iter()
        .map(|(l, t, _, _)| (l, t))
        .collect();
    assert_eq!(
        found,
        vec![(2, "obligations".to_string()), (4, "verify".to_string())]
    );
    assert!(upward("obligations/y.rs", "use crate::engine::exec;").is_empty());
}
