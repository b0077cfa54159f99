//! The C++ front end: tree-sitter with its C++ grammar, plus the few Ascend qualifiers the
//! grammar does not know (`__gm__`, `__aicore__`, `__ubuf__`), blanked to spaces of the same
//! length before parsing so byte offsets and lines stay those of the file.

use collc_grammar::{Diagnostic, Span};
use tree_sitter::{Node, Parser, Tree};

/// Ascend address-space and function qualifiers: macros the lifter knows, with no meaning
/// for the protocol.
const QUALIFIERS: [&str; 3] = ["__gm__", "__aicore__", "__ubuf__"];

/// A parsed C++ file.
pub struct Cpp {
    /// The text as parsed (qualifiers blanked; same length and lines as the input).
    pub text: String,
    /// The syntax tree.
    pub tree: Tree,
}

/// Parses `text`; a syntax error (an `ERROR` or missing node) is a diagnostic at its line.
pub fn parse(text: &str) -> Result<Cpp, Diagnostic> {
    let mut blanked = text.to_string();
    for q in QUALIFIERS {
        blanked = blanked.replace(q, &" ".repeat(q.len()));
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cpp::LANGUAGE.into())
        .map_err(|e| Diagnostic::error("lift::parser", format!("tree-sitter C++: {e}")))?;
    let tree = parser
        .parse(&blanked, None)
        .ok_or_else(|| Diagnostic::error("lift::parser", "tree-sitter returned no tree"))?;
    if let Some(bad) = first_error(tree.root_node()) {
        let what = if bad.is_missing() {
            format!("missing `{}`", bad.kind())
        } else {
            "a syntax error".to_string()
        };
        return Err(Diagnostic::error(
            "lift::syntax",
            format!("line {}: the C++ has {what}", line(bad)),
        )
        .with_primary(span(bad), "C++ the parser cannot read"));
    }
    Ok(Cpp {
        text: blanked,
        tree,
    })
}

fn first_error(n: Node) -> Option<Node> {
    if n.is_error() || n.is_missing() {
        return Some(n);
    }
    if !n.has_error() {
        return None;
    }
    let mut c = n.walk();
    let kids: Vec<Node> = n.children(&mut c).collect();
    kids.into_iter().find_map(first_error)
}

/// The node's 1-based line.
pub fn line(n: Node) -> usize {
    n.start_position().row + 1
}

/// The node's byte span.
pub fn span(n: Node) -> Span {
    Span::new(n.start_byte(), n.end_byte())
}

/// The node's text.
pub fn text<'t>(n: Node, src: &'t str) -> &'t str {
    &src[n.byte_range()]
}

/// The named children, comments left out.
pub fn kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|k| k.kind() != "comment")
        .collect()
}

/// Every child (comments included), for walking a statement list with its comments.
pub fn all_kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// The `field` child.
pub fn field<'a>(n: Node<'a>, name: &str) -> Option<Node<'a>> {
    n.child_by_field_name(name)
}

/// A call's callee text and argument nodes, if `n` is a call expression.
pub fn call<'a>(n: Node<'a>, src: &str) -> Option<(String, Vec<Node<'a>>)> {
    if n.kind() != "call_expression" {
        return None;
    }
    let f = field(n, "function")?;
    let args = field(n, "arguments").map(kids).unwrap_or_default();
    Some((text(f, src).split_whitespace().collect(), args))
}

/// An error naming the construct at `n`.
pub fn unsupported(n: Node, src: &str, what: &str) -> Diagnostic {
    let t: String = text(n, src)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let t = if t.chars().count() > 80 {
        format!("{}...", t.chars().take(80).collect::<String>())
    } else {
        t
    };
    Diagnostic::error(
        "lift::unsupported",
        format!("line {}: {what}: `{t}`", line(n)),
    )
    .with_primary(span(n), what.to_string())
    .with_help("docs/lift.md lists the C++ patterns collc lift and emit --validate accept")
}
