//! Helpers shared by the front-end test suites.
#![allow(dead_code)] // each test crate uses a different subset

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `.coll` files directly in `dir` (relative to the repository root), sorted.
pub fn coll_files(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "coll"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Every example and every bug fixture: the inputs that must be valid.
pub fn valid_corpus() -> Vec<PathBuf> {
    let mut v = coll_files("examples");
    v.extend(coll_files("examples/bugs"));
    v.extend(coll_files("examples/outside_model"));
    assert!(
        v.len() >= 3,
        "expected the examples under {}",
        repo_root().display()
    );
    v
}

/// The front-end fixtures with expected diagnostics.
pub fn ui_fixtures() -> Vec<PathBuf> {
    let v = coll_files("collc/tests/ui");
    assert!(!v.is_empty(), "no fixtures in collc/tests/ui");
    v
}

/// The path relative to the repository root, with `/` separators.
pub fn rel(p: &Path) -> String {
    let root = repo_root().canonicalize().expect("repository root");
    let p = p.canonicalize().expect("fixture path");
    p.strip_prefix(&root)
        .unwrap_or(&p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Reads a UTF-8 test input.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The diagnostic code families the front end reports (parse to lowering).
pub const FRONT_END_FAMILIES: [&str; 9] = [
    "input::",
    "parse::",
    "resolve::",
    "type::",
    "domain::",
    "shape::",
    "place::",
    "structure::",
    "semantics::",
];

/// True for a code of a front-end family.
pub fn is_front_end(code: &str) -> bool {
    FRONT_END_FAMILIES.iter().any(|f| code.starts_with(f))
}

/// The `// expect: CODE, CODE` annotations of a fixture as sorted (line, code) pairs.
pub fn annotations(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find("// expect:") {
            for code in line[at + "// expect:".len()..].split(',') {
                let code = code.trim();
                if !code.is_empty() {
                    out.push((i + 1, code.to_string()));
                }
            }
        }
    }
    out.sort();
    out
}

/// What the front end reports for a text, as sorted (line, code) pairs (line
/// of the primary label; 0 for a diagnostic without labels).
pub fn diagnosed(text: &str) -> Vec<(usize, String)> {
    let src = collc_grammar::Source::new("input", text);
    let mut out: Vec<(usize, String)> = collc_spec::front(&collc_verifier::Ranges, text)
        .diagnostics
        .iter()
        .map(|d| {
            let line = d.primary_span().map_or(0, |s| src.line_col(s.start).0);
            (line, d.code.clone())
        })
        .collect();
    out.sort();
    out
}

/// Every diagnostic of a text rendered as `collc check` renders it, at width 80
/// without colour.
pub fn render_all(name: &str, text: &str) -> String {
    let src = collc_grammar::Source::new(name, text);
    collc_spec::front(&collc_verifier::Ranges, text)
        .diagnostics
        .iter()
        .map(|d| collc::render::render(d, &src, collc::render::Style::plain(80)))
        .collect()
}

/// The IR as JSON with every `span` removed: what two texts of the same
/// protocol must agree on.
pub fn ir_without_spans(p: &collc_spec::ir::Protocol) -> serde_json::Value {
    let mut v = serde_json::to_value(p).expect("the IR serialises");
    strip_spans(&mut v);
    v
}

fn strip_spans(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("span");
            m.values_mut().for_each(strip_spans);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_spans),
        _ => {}
    }
}

/// Runs `f` on a thread with a stack of `bytes`, so a test shows that an
/// input cannot exhaust a stack of that size (whatever RUST_MIN_STACK says).
pub fn on_stack<T: Send + 'static>(bytes: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(bytes)
        .spawn(f)
        .expect("spawn")
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
}
