//! No code reads prose: an obligation's `summary` (one line of prose on what was shown,
//! kept in the JSON report) is never read by a renderer. The text, JSON, SARIF and LSP
//! renderers (`collc/src/`, `lsp/src/`) and the report's own readers of a verdict (the
//! gate's blockers and the root causes, `verifier/src/report/gate.rs`, `cause.rs`) render
//! from the data: status, world range, scope, reason, findings and evidence.
//!
//! Read from the source text: every `.summary` field access (not a `summary(...)` call)
//! outside comments.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_path_buf()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir)
        .expect("read a source folder")
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The 1-based lines of `text` that read a `summary` field.
fn readers(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find(".summary") {
            let after = &rest[at + ".summary".len()..];
            let next = after.chars().next();
            let field = !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '(');
            if field {
                out.push(i + 1);
                break;
            }
            rest = after;
        }
    }
    out
}

#[test]
fn the_scanner_finds_a_summary_read() {
    assert_eq!(
        readers("let s = o.summary;\nlet t = o.summary.clone();"),
        [1, 2]
    );
    assert!(readers("let r = report.summary();\n// o.summary\nlet x = o.summary_line;").is_empty());
}

#[test]
fn no_renderer_reads_an_obligations_summary() {
    let root = root();
    let mut files = Vec::new();
    sources(&root.join("collc/src"), &mut files);
    sources(&root.join("lsp/src"), &mut files);
    files.push(root.join("verifier/src/report/gate.rs"));
    files.push(root.join("verifier/src/report/cause.rs"));
    assert!(files.len() > 20, "{files:?}");
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read a source file");
        for line in readers(&text) {
            found.push(format!(
                "{}:{line}",
                f.strip_prefix(&root).unwrap_or(f).display()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "these lines read an obligation's prose summary; render from its data (status, \
         world, scope, reason, findings, evidence) instead:\n{}",
        found.join("\n")
    );
}
