//! The pest parse tree's declarations and statements as a flat outline: what the
//! editor grammar (editors/tree-sitter-coll) is checked against. Each node is a
//! rule whose name ends in `_decl` or `_stmt`, or an `else_if` / `else_block` arm,
//! with its depth among such nodes and its byte range.

use crate::parse::{CollParser, Rule};
use crate::Span;
use pest::iterators::Pair;
use pest::Parser as _;

/// One declaration or statement of the parse tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The pest rule's name, e.g. `notify_stmt`.
    pub kind: String,
    /// How many outline nodes enclose it.
    pub depth: usize,
    /// Its bytes.
    pub span: Span,
}

/// Whether a rule name is an outline node's.
pub fn is_outline_kind(kind: &str) -> bool {
    kind.ends_with("_decl") || kind.ends_with("_stmt") || kind == "else_if" || kind == "else_block"
}

/// The outline of `text` in source order, `None` when pest rejects it.
pub fn outline(text: &str) -> Option<Vec<Node>> {
    let pairs = CollParser::parse(Rule::file, text).ok()?;
    let mut out = Vec::new();
    for p in pairs {
        walk(p, 0, &mut out);
    }
    Some(out)
}

fn walk(p: Pair<Rule>, depth: usize, out: &mut Vec<Node>) {
    let kind = format!("{:?}", p.as_rule());
    let mut inner_depth = depth;
    if is_outline_kind(&kind) {
        let s = p.as_span();
        out.push(Node {
            kind,
            depth,
            span: Span::new(s.start(), s.end()),
        });
        inner_depth += 1;
    }
    for q in p.into_inner() {
        walk(q, inner_depth, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_nest_under_their_declarations() {
        let text =
            "collective c: barrier() { ranks P in 1..=2; body { for p in peers { fence; } } }";
        let got: Vec<(String, usize)> = outline(text)
            .unwrap_or_default()
            .into_iter()
            .map(|n| (n.kind, n.depth))
            .collect();
        let want = [
            ("ranks_decl", 0),
            ("body_decl", 0),
            ("for_stmt", 1),
            ("fence_stmt", 2),
        ];
        assert_eq!(got, want.map(|(k, d)| (k.to_string(), d)));
    }
}
