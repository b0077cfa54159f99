//! One range obligation, what deciding it can yield, and its diagnostic.

use collc_grammar::{Diagnostic, Span};
use collc_spec::ir::{Cond, Expr, Protocol};
use collc_spec::print::expr_to_string;

/// A bound that must hold for every value of the declared domains.
#[derive(Clone, Debug)]
pub enum Goal {
    /// `0 <= e < dim`: index `pos` of a signal cell or region of `of`.
    Index {
        e: Expr,
        dim: Expr,
        pos: usize,
        of: String,
        what: &'static str,
    },
    /// `0 <= lo <= hi <= dim`: the slice of a region of `of`.
    Slice {
        lo: Expr,
        hi: Expr,
        dim: Expr,
        of: String,
        what: &'static str,
    },
    /// `0 <= e < P`: the rank after `@`.
    Target { e: Expr },
    /// `e` (`log2`'s argument) is a power of two.
    Log2 { e: Expr },
    /// `0 <= e <= 62`: a shift amount (`<<`, `>>`, `pow2`).
    Shift { e: Expr },
}

/// A goal at a point of the protocol.
#[derive(Clone, Debug)]
pub struct Obligation {
    /// The bound.
    pub goal: Goal,
    /// The expression it is about.
    pub span: Span,
    /// The enclosing `if` conditions (`true`: holds) and passed early returns (`false`).
    pub conds: Vec<(Cond, bool)>,
}

/// An obligation that is not proved.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Some value of the domains breaks it.
    Broken {
        /// The parameter and variable values of the counterexample, by name.
        values: Vec<(String, i64)>,
        /// The values of the goal's expressions there: the index (or rank) and
        /// its bound; for a slice `lo`, `hi` and the size.
        got: Vec<i64>,
    },
    /// Neither proved nor refuted.
    Undecided {
        /// The form that is beyond the decision procedure, if one was found.
        form: Option<String>,
        /// What the solver said.
        reason: String,
    },
}

impl Goal {
    /// What the bound is about, e.g. ``index `me + 1` of signal `sig` ``.
    fn subject(&self, p: &Protocol) -> String {
        let s = |e: &Expr| expr_to_string(p, e);
        match self {
            Goal::Index { e, of, what, .. } => format!("index `{}` of {what} `{of}`", s(e)),
            Goal::Slice {
                lo, hi, of, what, ..
            } => {
                format!("slice `{} .. {}` of {what} `{of}`", s(lo), s(hi))
            }
            Goal::Target { e } => format!("rank `{}`", s(e)),
            Goal::Log2 { e } => format!("`log2({})`", s(e)),
            Goal::Shift { e } => format!("shift amount `{}`", s(e)),
        }
    }
    /// The range it must stay in, e.g. `0..P`.
    fn bound(&self, p: &Protocol) -> String {
        match self {
            Goal::Index { dim, .. } | Goal::Slice { dim, .. } => {
                format!("0..{}", expr_to_string(p, dim))
            }
            Goal::Target { .. } => format!("0..{}", p.var_name(p.world)),
            Goal::Log2 { .. } => "the powers of two".into(),
            Goal::Shift { .. } => format!("0..={}", collc_spec::eval::MAX_SHIFT),
        }
    }
}

fn assignment(values: &[(String, i64)]) -> String {
    values
        .iter()
        .map(|(n, v)| format!("{n} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

const NARROW: &str = "guard the statement with `if`, or narrow the domain with `require`";

/// The diagnostic for an obligation that is not proved.
pub fn diagnostic(p: &Protocol, o: &Obligation, v: &Verdict) -> Diagnostic {
    let (subject, bound) = (o.goal.subject(p), o.goal.bound(p));
    let (values, got) = match v {
        Verdict::Broken { values, got } => (values, got),
        Verdict::Undecided { form, reason } => {
            // The form is the advice; the solver's own words only when no form
            // explains the answer (they vary with the machine's speed).
            let label = match form {
                Some(f) => format!("not decided: it depends on {f}"),
                None => format!("not decided: the solver answered {reason}"),
            };
            return Diagnostic::warning(
                "domain::range-unproved",
                format!("could not prove {subject} stays in {bound} for every value of the domains"),
            )
            .with_primary(o.span, label)
            .with_help(
                "write the bound so it is linear in the parameters: a `%` by the dimension, a `min(..)` clamp, \
                 an `if` that states the bound, or a constant instead of a symbolic divisor or factor; \
                 until then nothing vouches for this access",
            );
        }
    };
    let at = assignment(values);
    let g = |i: usize| got.get(i).copied().unwrap_or(0);
    let message = match &o.goal {
        Goal::Log2 { .. } => format!("{subject} of a value that is not a power of two, for {at}"),
        _ => format!("{subject} leaves {bound} for {at}"),
    };
    match &o.goal {
        Goal::Index { dim, pos, of, .. } => {
            let size = expr_to_string(p, dim);
            let note = if dim.as_const().is_some() {
                format!("dimension {pos} of `{of}` has size {}", g(1))
            } else {
                format!(
                    "dimension {pos} of `{of}` has size `{size}` = {} there",
                    g(1)
                )
            };
            Diagnostic::error("domain::index-out-of-range", message)
                .with_primary(o.span, format!("is {} there, outside 0..{}", g(0), g(1)))
                .with_note(note)
                .with_help(format!(
                    "keep the index in 0..{size} for every value the domains allow: reduce it (`% {size}`), {NARROW}"
                ))
        }
        Goal::Slice { .. } => {
            let (l, h, d) = (g(0), g(1), g(2));
            let why = if l < 0 {
                format!("starts at {l}, before 0")
            } else if l > h {
                format!("starts at {l}, after its end {h}")
            } else {
                format!("ends at {h}, past the size {d}")
            };
            Diagnostic::error("domain::slice-out-of-range", message)
                .with_primary(o.span, format!("is {l} .. {h} there: {why}"))
                .with_help(format!(
                    "a slice `lo .. hi` needs 0 <= lo <= hi <= the last dimension's size for every value \
                     the domains allow: clamp it (`min(..)`), {NARROW}"
                ))
        }
        Goal::Target { .. } => {
            let world = p.var_name(p.world);
            Diagnostic::error("domain::rank-out-of-range", message)
                .with_primary(
                    o.span,
                    format!("is {} there, not a rank of 0..{}", g(0), g(1)),
                )
                .with_help(format!(
                    "`rank(e)` does not wrap: write `rank((...) % {world})`, {NARROW}"
                ))
        }
        Goal::Log2 { .. } => Diagnostic::error("domain::log2-not-power-of-two", message)
            .with_primary(o.span, format!("its argument is {} there", g(0)))
            .with_help(
                "`log2` is exact: take it of a power of two only (a `step *2` loop variable, `pow2(k)`), \
                 guard the statement with `if`, or state the assumption with `require` \
                 (e.g. `require P & (P - 1) == 0;`)",
            ),
        Goal::Shift { .. } => Diagnostic::error("domain::shift-out-of-range", message)
            .with_primary(o.span, format!("the shift amount is {} there", g(0)))
            .with_help(format!(
                "shift amounts are 0..={} (results stay in 64 bits): clamp it with `min(..)`, {NARROW}",
                collc_spec::eval::MAX_SHIFT
            )),
    }
}

/// The one diagnostic for the bounds left when the range check's budget is spent.
pub fn not_checked(first: Span, n: usize) -> Diagnostic {
    Diagnostic::warning(
        "domain::range-unproved",
        format!(
            "{n} index, slice or rank bound(s) not checked: the range check's budget of {} million Z3 resource units is spent",
            crate::planning::TABLE.range_budget_units / 1_000_000
        ),
    )
    .with_primary(first, "the first bound not checked")
    .with_help(
        "simplify the bounds (constant or whole-row slices, rank variables as indices are checked at once) \
         or split the protocol; until then nothing vouches for these accesses",
    )
}
