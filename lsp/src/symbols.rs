//! The document outline: the collective, with its declarations (the world size,
//! parameters, constants, lets, blocks, signals, windows, tiles, arrays) as
//! children. Taken from the parsed file, so a file that parses but does not yet
//! validate still has its outline.

use crate::names::{Decl, Kind};
use crate::position::LineIndex;
use lsp_types::{DocumentSymbol, SymbolKind};

/// The outline of a file whose declarations are `decls` (as [`crate::names::decls`]
/// gives them: the collective first).
pub fn outline(decls: &[Decl], idx: &LineIndex) -> Vec<DocumentSymbol> {
    let Some((top, rest)) = decls.split_first() else {
        return Vec::new();
    };
    let children = rest
        .iter()
        .filter(|d| !matches!(d.kind, Kind::LocalLet | Kind::Loop))
        .map(|d| symbol(d, idx, None))
        .collect();
    vec![symbol(top, idx, Some(children))]
}

#[allow(deprecated)] // `deprecated` must be written to build the struct
fn symbol(d: &Decl, idx: &LineIndex, children: Option<Vec<DocumentSymbol>>) -> DocumentSymbol {
    let (kind, detail) = match d.kind {
        Kind::Collective => (SymbolKind::MODULE, "collective"),
        Kind::World => (SymbolKind::CONSTANT, "ranks"),
        Kind::Param => (SymbolKind::TYPE_PARAMETER, "param"),
        Kind::Const => (SymbolKind::CONSTANT, "const"),
        Kind::Let | Kind::LocalLet => (SymbolKind::VARIABLE, "let"),
        Kind::Blocks => (SymbolKind::VARIABLE, "blocks"),
        Kind::Signal => (SymbolKind::EVENT, "signal"),
        Kind::Window => (SymbolKind::ARRAY, "window"),
        Kind::Tile => (SymbolKind::ARRAY, "tile"),
        Kind::Array => (SymbolKind::ARRAY, "array"),
        Kind::Loop => (SymbolKind::VARIABLE, "for"),
    };
    DocumentSymbol {
        name: d.name.clone(),
        detail: Some(detail.into()),
        kind,
        tags: None,
        deprecated: None,
        range: idx.range(d.full.join(d.span)),
        selection_range: idx.range(d.span),
        children,
    }
}
