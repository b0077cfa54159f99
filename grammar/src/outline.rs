//! The pest parse tree seen flat, for the editor grammars' cross-checks: the
//! declarations and statements ([`outline`]: each rule whose name ends in `_decl`
//! or `_stmt`, or an `else_if` / `else_block` arm, with its depth among such nodes
//! and its byte range; editors/tree-sitter-coll), and the word tokens ([`words`]:
//! keywords, identifiers, integers; the TextMate grammar of editors/vscode).

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

/// What a word token of the parse tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// A keyword or type word (`K_*` rules).
    Keyword,
    /// An identifier.
    Ident,
    /// An integer literal.
    Int,
}

/// The word tokens of `text` (keywords, identifiers, integers) in source order,
/// `None` when pest rejects it. Operators and punctuation are literals pest does
/// not keep as pairs.
pub fn words(text: &str) -> Option<Vec<(Word, Span)>> {
    let pairs = CollParser::parse(Rule::file, text).ok()?;
    let mut out = Vec::new();
    let mut stack: Vec<Pair<Rule>> = pairs.collect();
    stack.reverse();
    while let Some(p) = stack.pop() {
        let kind = format!("{:?}", p.as_rule());
        let s = p.as_span();
        let span = Span::new(s.start(), s.end());
        let word = match kind.as_str() {
            "ident" => Some(Word::Ident),
            "int_lit" => Some(Word::Int),
            k if k.starts_with("K_") => Some(Word::Keyword),
            _ => None,
        };
        match word {
            Some(w) => out.push((w, span)),
            None => {
                let mut inner: Vec<Pair<Rule>> = p.into_inner().collect();
                inner.reverse();
                stack.extend(inner);
            }
        }
    }
    Some(out)
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
