//! The tree-sitter grammar agrees with the pest grammar: every `.coll` file of
//! `examples/` (bug fixtures and out-of-model files included; pest must accept every
//! top-level example) and the valid files of `collc/tests/` parses without an
//! error node, and its declarations and
//! statements (each `*_decl` / `*_stmt` node, `else_if`, `else_block`) are the same
//! in kind, nesting depth and byte range as pest's (`collc_grammar::outline`; a
//! range may end earlier than pest's by blanks and comments only). The highlight
//! queries compile against the grammar.

use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser, Query};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn coll_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            coll_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "coll") {
            out.push(p);
        }
    }
}

fn parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_coll::LANGUAGE.into())
        .expect("the grammar loads");
    p
}

fn outline(n: Node, depth: usize, out: &mut Vec<collc_grammar::outline::Node>) {
    let mut inner = depth;
    if n.is_named() && collc_grammar::outline::is_outline_kind(n.kind()) {
        out.push(collc_grammar::outline::Node {
            kind: n.kind().to_string(),
            depth,
            span: collc_grammar::Span::new(n.start_byte(), n.end_byte()),
        });
        inner += 1;
    }
    let mut c = n.walk();
    for child in n.children(&mut c) {
        outline(child, inner, out);
    }
}

/// Whether a tree-sitter node `a` is the pest node `b`: kind, depth and start equal,
/// and the ends equal but for blanks and comments (pest's implicit whitespace after
/// an `if`'s block, before its optional `else` arms, ends up inside the `if_stmt`).
fn same(text: &str, a: &collc_grammar::outline::Node, b: &collc_grammar::outline::Node) -> bool {
    let trivia = |gap: &str| {
        gap.lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with("//"))
    };
    a.kind == b.kind
        && a.depth == b.depth
        && a.span.start == b.span.start
        && a.span.end <= b.span.end
        && text.get(a.span.end..b.span.end).is_some_and(trivia)
}

#[test]
fn every_example_has_the_same_statements_in_both_grammars() {
    let mut files = Vec::new();
    coll_files(&root().join("examples"), &mut files);
    coll_files(&root().join("collc/tests"), &mut files);
    files.sort();
    let mut ts = parser();
    let examples = root().join("examples");
    let (mut compared, mut failures) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        let Some(want) = collc_grammar::outline::outline(&text) else {
            // Every example at the top of `examples/` is a valid protocol: pest must
            // accept it, or the comparison would silently skip it.
            if f.parent() == Some(examples.as_path()) {
                failures.push(format!("{}: pest rejects it", f.display()));
            }
            continue; // pest rejects it (a syntax-error fixture): nothing to agree on
        };
        let tree = ts.parse(&text, None).expect("a tree");
        let mut got = Vec::new();
        outline(tree.root_node(), 0, &mut got);
        if tree.root_node().has_error() {
            failures.push(format!(
                "{}: tree-sitter error: {}",
                f.display(),
                tree.root_node().to_sexp()
            ));
        } else if got.len() != want.len() || got.iter().zip(&want).any(|(a, b)| !same(&text, a, b))
        {
            let first = got.iter().zip(&want).position(|(a, b)| !same(&text, a, b));
            failures.push(format!(
                "{}: {} vs {} nodes, first difference at {first:?}: {:?} vs {:?}",
                f.display(),
                got.len(),
                want.len(),
                first.and_then(|i| got.get(i)),
                first.and_then(|i| want.get(i)),
            ));
        }
        compared += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 60, "only {compared} files compared");
}

#[test]
fn syntax_error_fixtures_have_error_nodes_too() {
    let mut ts = parser();
    let mut files = Vec::new();
    coll_files(&root().join("collc/tests/ui"), &mut files);
    for f in files
        .iter()
        .filter(|f| f.to_string_lossy().contains("syntax_"))
    {
        let text = std::fs::read_to_string(f).expect("readable");
        if collc_grammar::outline::outline(&text).is_some() {
            continue;
        }
        let tree = ts.parse(&text, None).expect("a tree");
        assert!(tree.root_node().has_error(), "{} parses", f.display());
    }
}

#[test]
fn the_highlight_queries_compile() {
    let q = Query::new(
        &tree_sitter_coll::LANGUAGE.into(),
        tree_sitter_coll::HIGHLIGHTS_QUERY,
    );
    assert!(q.is_ok(), "{:?}", q.err());
}
