//! The `.coll` middle end: resolves names, checks types, shapes and domains,
//! and lowers the AST to the [`ir::Protocol`] every later stage consumes.
//! Also holds the IR's visitor ([`visit`]), the facts one walk of it gathers ([`info`]),
//! concrete evaluation ([`eval`]), the canonical printer ([`print`]) and what every
//! collective kind must compute, written once ([`meaning`]).

pub mod eval;
pub mod id;
pub mod info;
pub mod ir;
pub mod lower;
pub mod meaning;
pub mod params;
pub mod print;
pub mod templates;
pub mod visit;

use collc_grammar::Diagnostic;

/// The result of checking one source text.
#[derive(Debug)]
pub struct Checked {
    /// The validated protocol, if there were no errors.
    pub protocol: Option<ir::Protocol>,
    /// Every diagnostic (errors and warnings), in source order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses and lowers one source text, collecting every diagnostic.
pub fn check(text: &str) -> Checked {
    match collc_grammar::parse(text) {
        Ok(file) => check_file(&file),
        Err(diagnostics) => Checked {
            protocol: None,
            diagnostics,
        },
    }
}

/// Lowers a parsed file, collecting every diagnostic (for callers that also
/// need the AST, e.g. for the spans of its expressions).
pub fn check_file(file: &collc_grammar::ast::File) -> Checked {
    match lower::lower(file) {
        Ok((protocol, mut diagnostics)) => {
            sort(&mut diagnostics);
            Checked {
                protocol: Some(protocol),
                diagnostics,
            }
        }
        Err(mut diagnostics) => {
            sort(&mut diagnostics);
            Checked {
                protocol: None,
                diagnostics,
            }
        }
    }
}

fn sort(d: &mut [Diagnostic]) {
    d.sort_by_key(|x| x.primary_span().map_or(0, |s| s.start));
}
