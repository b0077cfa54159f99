//! The C++ front end: tree-sitter with its C++ grammar, plus the few Ascend qualifiers the
//! grammar does not know (`__gm__`, `__aicore__`, `__ubuf__`, `AICORE`), blanked to spaces of
//! the same length before parsing so byte offsets and lines stay those of the file. Lines of
//! preprocessor directives keep them (`#ifndef __gm__` names the macro). pypto's template
//! placeholders (`{{dtype_cpp}}`, ...) are read as the values pypto renders by default,
//! padded to the placeholder's length ([`PLACEHOLDERS`]).

use collc_grammar::{Diagnostic, Span};
use tree_sitter::{Node, Parser, Tree};

/// Ascend address-space and function qualifiers: macros the lifter knows, with no meaning
/// for the protocol.
const QUALIFIERS: [&str; 4] = ["__gm__", "__aicore__", "__ubuf__", "AICORE"];

/// pypto's builtin-template placeholders and the text a template is read with: pypto's
/// renderer (`pto_backend.py`, `_render_builtin_template`) substitutes them textually, with
/// these values for the f32 sum variants its builtins register.
pub const PLACEHOLDERS: [(&str, &str); 5] = [
    ("{{dtype_cpp}}", "float"),
    ("{{reduce_inst}}", "TADD"),
    ("{{root_cpp}}", "0"),
    ("{{op_cpp}}", "ReduceOp::kSum"),
    ("{{template_package}}", "template"),
];

/// `text` with the qualifiers blanked outside preprocessor lines and the placeholders
/// substituted, every line keeping its length.
fn blank(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        let mut l = l.to_string();
        for (p, v) in PLACEHOLDERS {
            if l.contains(p) {
                l = l.replace(p, &format!("{v:<width$}", width = p.len()));
            }
        }
        if !l.trim_start().starts_with('#') {
            for q in QUALIFIERS {
                l = blank_word(&l, q);
            }
        }
        out.push_str(&l);
    }
    out
}

/// `l` with every whole-word occurrence of `w` replaced by spaces.
fn blank_word(l: &str, w: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(l.len());
    let mut rest = l;
    while let Some(i) = rest.find(w) {
        let before = rest[..i].chars().next_back().or(out.chars().next_back());
        let after = rest[i + w.len()..].chars().next();
        out.push_str(&rest[..i]);
        if word(before) || word(after) {
            out.push_str(w);
        } else {
            out.push_str(&" ".repeat(w.len()));
        }
        rest = &rest[i + w.len()..];
    }
    out.push_str(rest);
    out
}

/// A parsed C++ file.
pub struct Cpp {
    /// The text as parsed (qualifiers blanked; same length and lines as the input).
    pub text: String,
    /// The syntax tree.
    pub tree: Tree,
}

/// Parses `text`; a syntax error (an `ERROR` or missing node) is a diagnostic at its line.
pub fn parse(text: &str) -> Result<Cpp, Diagnostic> {
    let blanked = blank(text);
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cpp::LANGUAGE.into())
        .map_err(|e| Diagnostic::error("lift::parser", format!("tree-sitter C++: {e}")))?;
    let tree = parser
        .parse(&blanked, None)
        .ok_or_else(|| Diagnostic::error("lift::parser", "tree-sitter returned no tree"))?;
    if let Some(deep) = too_deep(tree.root_node()) {
        return Err(Diagnostic::error(
            "input::too-deep",
            format!(
                "line {}: the C++ nests deeper than {MAX_DEPTH} syntax levels",
                line(deep)
            ),
        )
        .with_primary(span(deep), "nesting the lifter does not follow"));
    }
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

/// The deepest syntax nesting the lifter follows (its readers recurse on the tree).
pub const MAX_DEPTH: usize = 256;

/// The first node deeper than [`MAX_DEPTH`], found without recursion.
fn too_deep(root: Node) -> Option<Node> {
    let mut c = root.walk();
    let mut depth = 0usize;
    loop {
        if depth > MAX_DEPTH {
            return Some(c.node());
        }
        if c.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return None;
            }
            depth -= 1;
        }
    }
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
