//! The tree-sitter grammar of `.coll` files: [`LANGUAGE`] for a `tree_sitter::Parser`,
//! and the highlight queries ([`HIGHLIGHTS_QUERY`]).

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_coll() -> *const ();
}

/// The grammar, for `tree_sitter::Parser::set_language(&LANGUAGE.into())`.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_coll) };

/// The highlight queries (queries/highlights.scm).
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");

/// The node types (src/node-types.json).
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");
