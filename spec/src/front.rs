//! The one front end: source text → [`Validated`] protocol.
//!
//! [`front`] parses, lowers ([`crate::lower`]) and then runs the range obligations
//! (every signal-cell and region index in its dimension, every slice within its buffer,
//! every rank after `@` in `0..P`, for every value of the declared domains). Those need
//! Z3, which this crate does not depend on: the caller supplies them as a [`RangePass`]
//! (`collc_verifier::Ranges`). A protocol with an error from either step is refused.
//!
//! [`Validated`] can only be made here, so an entry point that takes one (the verifier's
//! `verify`, the simulator, the code generators and runners, the C++ validator) never sees
//! an IR that skipped the range obligations. [`lowered`] is the lowering step alone, for
//! callers that only compare or print IR; what it returns is a plain [`ir::Protocol`],
//! which those entry points do not accept.

use crate::info::ProtocolInfo;
use crate::ir::{self, ElemType, Lifetime, ReduceOp};
use collc_grammar::{ast, Diagnostic};

/// The range obligations of a lowered protocol, decided for every value of its declared
/// domains: errors for bounds some value breaks, warnings for bounds not decided.
/// Implemented by `collc_verifier::Ranges` (Z3).
pub trait RangePass {
    /// The diagnostics of `p`'s range obligations; `info` is `p`'s [`ProtocolInfo`] (the
    /// one the [`Validated`] protocol will carry) and `file` the AST `p` was lowered from
    /// (the ranges' spans).
    fn check(&self, p: &ir::Protocol, info: &ProtocolInfo, file: &ast::File) -> Vec<Diagnostic>;
}

/// A protocol that passed the whole front end: parsing, lowering and the range
/// obligations. Only [`front`] makes one (and the specialisations below, which change no
/// index); it reads as the [`ir::Protocol`] it holds. It carries the protocol's
/// [`ProtocolInfo`], computed once when it is made (the range pass reads it, and so do the
/// verifier's planning and obligations), and what the range pass found (the verifier's
/// `index-range` obligation reports it, rather than running the pass again); it
/// serialises as the protocol alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    protocol: ir::Protocol,
    info: ProtocolInfo,
    ranges: Vec<Diagnostic>,
}

impl serde::Serialize for Validated {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.protocol.serialize(s)
    }
}

impl std::ops::Deref for Validated {
    type Target = ir::Protocol;
    fn deref(&self) -> &ir::Protocol {
        &self.protocol
    }
}

impl Validated {
    /// Wraps a protocol that passed the range obligations, with its facts and the range
    /// pass's diagnostics.
    fn new(protocol: ir::Protocol, info: ProtocolInfo, ranges: Vec<Diagnostic>) -> Self {
        Validated {
            protocol,
            info,
            ranges,
        }
    }

    /// A specialisation of this protocol: its facts computed anew (a specialisation changes
    /// no index, but it may change the code the facts are read from); the range pass's
    /// result is this protocol's (no index changed).
    fn derived(&self, protocol: ir::Protocol) -> Self {
        let info = ProtocolInfo::of(&protocol);
        Validated::new(protocol, info, self.ranges.clone())
    }

    /// The IR.
    pub fn protocol(&self) -> &ir::Protocol {
        &self.protocol
    }

    /// The protocol's facts ([`ProtocolInfo::of`]), computed once when it was validated.
    pub fn info(&self) -> &ProtocolInfo {
        &self.info
    }

    /// What the front end's range pass found: the bounds it could not decide, as warnings
    /// (a bound some value breaks is an error, and [`front`] refused the protocol), with
    /// spans into the text it was validated from. Empty: every index, slice and `@` rank
    /// was decided in range for every value of the declared domains.
    pub fn ranges(&self) -> &[Diagnostic] {
        &self.ranges
    }

    /// [`ir::Protocol::with_op`], still validated (the operator changes no index).
    pub fn with_op(&self, op: ReduceOp) -> Option<Validated> {
        self.protocol.with_op(op).map(|q| self.derived(q))
    }

    /// [`ir::Protocol::with_elem`], still validated (the element type changes no index).
    pub fn with_elem(&self, t: ElemType) -> Option<Validated> {
        self.protocol.with_elem(t).map(|q| self.derived(q))
    }

    /// [`ir::Protocol::for_verification`], still validated.
    pub fn for_verification(&self) -> Validated {
        self.derived(self.protocol.for_verification())
    }

    /// [`ir::Protocol::with_every_lifetime`], still validated (lifetimes, not indices).
    pub fn with_every_lifetime(&self, l: Lifetime) -> Validated {
        self.derived(self.protocol.with_every_lifetime(l))
    }

    /// [`ir::Protocol::with_per_call_rotation`], still validated (instances, not indices).
    pub fn with_per_call_rotation(&self, k: u32) -> Validated {
        self.derived(self.protocol.with_per_call_rotation(k))
    }
}

/// The result of the front end on one source text.
#[derive(Debug)]
pub struct Checked<P = Validated> {
    /// The protocol, if there were no errors.
    pub protocol: Option<P>,
    /// Every diagnostic (errors and warnings), in source order.
    pub diagnostics: Vec<Diagnostic>,
}

/// The front end: parses, lowers and range-checks one source text. A protocol with an
/// error (a syntax or lowering error, or an index, slice or rank that some value of the
/// domains takes out of range) is refused (`protocol: None`); bounds `ranges` cannot
/// decide are warnings.
pub fn front(ranges: &dyn RangePass, text: &str) -> Checked {
    let file = match collc_grammar::parse(text) {
        Ok(f) => f,
        Err(diagnostics) => {
            return Checked {
                protocol: None,
                diagnostics,
            }
        }
    };
    let Checked {
        protocol,
        mut diagnostics,
    } = lower_file(&file);
    let Some(p) = protocol else {
        return Checked {
            protocol: None,
            diagnostics,
        };
    };
    let info = ProtocolInfo::of(&p);
    let found = ranges.check(&p, &info, &file);
    let refused = found.iter().any(|d| d.is_error());
    diagnostics.extend(found.iter().cloned());
    sort(&mut diagnostics);
    Checked {
        protocol: (!refused).then(|| Validated::new(p, info, found)),
        diagnostics,
    }
}

/// Lowering alone (no range obligations): for callers that compare or print IR. The
/// protocol it returns is not [`Validated`].
pub fn lowered(text: &str) -> Checked<ir::Protocol> {
    match collc_grammar::parse(text) {
        Ok(file) => lower_file(&file),
        Err(diagnostics) => Checked {
            protocol: None,
            diagnostics,
        },
    }
}

fn lower_file(file: &ast::File) -> Checked<ir::Protocol> {
    let (protocol, mut diagnostics) = match crate::lower::lower(file) {
        Ok((p, d)) => (Some(p), d),
        Err(d) => (None, d),
    };
    sort(&mut diagnostics);
    Checked {
        protocol,
        diagnostics,
    }
}

fn sort(d: &mut [Diagnostic]) {
    d.sort_by_key(|x| x.primary_span().map_or(0, |s| s.start));
}
