//! Names: the identifier tokens of a text (comments skipped), the declarations of
//! a parsed file with the part of the text where each is visible, and the
//! resolution of a token to its declaration (the innermost visible one). Go to
//! definition, find references and hover all start here.

use collc_grammar::ast::{Block, File, ItemKind, StmtKind};
use collc_grammar::Span;

/// What a declaration declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The collective itself.
    Collective,
    /// `ranks P in ...`.
    World,
    /// `param`.
    Param,
    /// `const`.
    Const,
    /// A top-level `let`.
    Let,
    /// `blocks blk in ...`.
    Blocks,
    /// `signal`.
    Signal,
    /// `window`.
    Window,
    /// `tile`.
    Tile,
    /// `array`.
    Array,
    /// A statement-level `let`.
    LocalLet,
    /// A `for` variable.
    Loop,
}

/// One declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decl {
    /// The declared name.
    pub name: String,
    /// Where the name is written in the declaration.
    pub span: Span,
    /// The whole declaration.
    pub full: Span,
    /// Where uses of the name refer to it.
    pub scope: Span,
    /// What it declares.
    pub kind: Kind,
}

/// Every declaration of a file, top-level ones first.
pub fn decls(file: &File, text_len: usize) -> Vec<Decl> {
    let everywhere = Span::new(0, text_len);
    let mut out = vec![Decl {
        name: file.name.name.clone(),
        span: file.name.span,
        full: file.span,
        scope: everywhere,
        kind: Kind::Collective,
    }];
    let mut blocks = Vec::new();
    for item in &file.items {
        let (name, kind) = match &item.kind {
            ItemKind::Ranks { name, .. } => (name, Kind::World),
            ItemKind::Param { name, .. } => (name, Kind::Param),
            ItemKind::Const { name, .. } => (name, Kind::Const),
            ItemKind::Let { name, .. } => (name, Kind::Let),
            ItemKind::Blocks { name, .. } => (name, Kind::Blocks),
            ItemKind::Signal { name, .. } => (name, Kind::Signal),
            ItemKind::Window { name, .. } => (name, Kind::Window),
            ItemKind::Tile { name, .. } => (name, Kind::Tile),
            ItemKind::Array { name, .. } => (name, Kind::Array),
            ItemKind::Body(b) | ItemKind::Epilogue(b) => {
                blocks.push(b);
                continue;
            }
            ItemKind::Require(_)
            | ItemKind::Calls(_)
            | ItemKind::Type { .. }
            | ItemKind::Op { .. } => continue,
        };
        out.push(Decl {
            name: name.name.clone(),
            span: name.span,
            full: item.span,
            scope: everywhere,
            kind,
        });
    }
    for b in blocks {
        block_decls(b, &mut out);
    }
    out
}

fn block_decls(b: &Block, out: &mut Vec<Decl>) {
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Let { name, .. } => out.push(Decl {
                name: name.name.clone(),
                span: name.span,
                full: s.span,
                scope: Span::new(s.span.end, b.span.end),
                kind: Kind::LocalLet,
            }),
            StmtKind::For { var, body, .. } => {
                out.push(Decl {
                    name: var.name.clone(),
                    span: var.span,
                    full: s.span,
                    scope: body.span,
                    kind: Kind::Loop,
                });
                block_decls(body, out);
            }
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                block_decls(then_block, out);
                if let Some(e) = else_block {
                    block_decls(e, out);
                }
            }
            _ => {}
        }
    }
}

/// The spans of every identifier token outside comments, in order.
pub fn idents(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                i += 1;
            }
        } else if b.is_ascii_alphanumeric() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if !b.is_ascii_digit() {
                out.push(Span::new(start, i));
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The identifier token touching byte `offset` (the cursor may stand just after it).
pub fn ident_at(text: &str, offset: usize) -> Option<Span> {
    idents(text)
        .into_iter()
        .find(|s| s.start <= offset && offset <= s.end)
}

/// The declaration the token `at` of `text` refers to.
pub fn resolve<'d>(decls: &'d [Decl], text: &str, at: Span) -> Option<&'d Decl> {
    let name = text.get(at.start..at.end)?;
    if let Some(d) = decls.iter().find(|d| d.span == at) {
        return Some(d);
    }
    decls
        .iter()
        .filter(|d| d.name == name && d.scope.start <= at.start && at.end <= d.scope.end)
        .max_by_key(|d| d.scope.start)
}

/// Every token of `text` that refers to `decl`, its declaration included.
pub fn references(decls: &[Decl], text: &str, decl: &Decl) -> Vec<Span> {
    idents(text)
        .into_iter()
        .filter(|s| text.get(s.start..s.end) == Some(decl.name.as_str()))
        .filter(|s| resolve(decls, text, *s) == Some(decl))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_skip_comments_and_numbers() {
        let text = "a1 2b // c\n_d";
        let got: Vec<&str> = idents(text).iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(got, ["a1", "_d"]);
    }
}
