//! The front end's whole check of one source text: parsing and lowering
//! (`collc_spec::check`), then the range obligations of [`crate::engine::range`] for
//! every value of the declared domains. Every command that reads a `.coll`
//! file validates it with [`validate`].

use collc_spec::Checked;

/// Parses, lowers and range-checks one source text. A protocol with an index,
/// slice or rank that some value of the domains takes out of range is
/// refused (`protocol: None`) with an error naming those values; bounds the
/// solver cannot decide are warnings.
pub fn validate(text: &str) -> Checked {
    let file = match collc_grammar::parse(text) {
        Ok(f) => f,
        Err(diagnostics) => {
            return Checked {
                protocol: None,
                diagnostics,
            }
        }
    };
    let mut checked = collc_spec::check_file(&file);
    let Some(p) = &checked.protocol else {
        return checked;
    };
    // The AST gives the ranges their spans.
    let found = crate::engine::range::check(p, &file);
    if found.iter().any(|d| d.is_error()) {
        checked.protocol = None;
    }
    checked.diagnostics.extend(found);
    checked
        .diagnostics
        .sort_by_key(|d| d.primary_span().map_or(0, |s| s.start));
    checked
}
