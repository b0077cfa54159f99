//! A statement's head — the whole statement for one that is one line (`wait X >= k;`,
//! `notify X @ q += k;`, `put ...;`), the part before the braces for a `for` or an `if`
//! — printed once for every place that shows one: the formatter, the simulator's
//! traces, the generated kernels' comments and the lifter's validation messages. What
//! differs between those places is a parameter of [`Style`], not a copy of the printer.

use super::{cond_to_string, expr_to_string, op_text, range_to_string, region_to_string};
use crate::ir::{Expr, NotifyOp, Protocol, Range, Region, StmtKind};

/// Where a statement's head is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `.coll` source (the formatter): `;` after a one-line statement, a reduction names
    /// the protocol's `op` parameter when it declares one.
    Source,
    /// The simulator's traces and messages: no `;`, the reduction's operator.
    Trace,
    /// The comments of the generated kernels: `;`, the reduction's operator.
    Comment,
    /// The lifter's translation validation, which compares the heads of the IR and of
    /// the protocol read back from the C++ as text (docs/lift.md, "Orderings"): `;`, the
    /// reduction's operator, `for v in ranks` as `for v in 0..P`, a notify of a negative
    /// constant as `-= c`, a data move's source to its start (`data[a ..]`: the code
    /// moves the destination's length), and an `if` says whether it has an `else`.
    Validate,
}

/// Which region of a data move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Dst,
    Src,
}

impl Style {
    /// A one-line statement ends with `;`.
    fn semicolon(self) -> bool {
        self != Style::Trace
    }
    /// A reduction names the `op` parameter (when the protocol declares one).
    fn op_param(self) -> bool {
        self == Style::Source
    }
    /// The forms the lifter reads back alike print alike: `ranks` as `0..P`, a negative
    /// constant credit as `-= c`.
    fn normal(self) -> bool {
        self == Style::Validate
    }
    /// A data move's source is printed up to its start.
    fn source_start(self) -> bool {
        self == Style::Validate
    }
    /// An `if` says whether it has an `else`.
    fn marks_else(self) -> bool {
        self == Style::Validate
    }
}

/// The head of a statement of `p` in `style` (module documentation).
pub fn stmt_head(p: &Protocol, kind: &StmtKind, style: Style) -> String {
    head(p, kind, style, &|r, side| {
        let text = region_to_string(p, r);
        match text.rfind(" .. ") {
            Some(i) if side == Side::Src && style.source_start() => format!("{} ..]", &text[..i]),
            _ => text,
        }
    })
}

/// [`stmt_head`] with the regions printed by `region` (the formatter keeps the slice
/// bounds the source left out).
pub(super) fn head(
    p: &Protocol,
    kind: &StmtKind,
    style: Style,
    region: &dyn Fn(&Region, Side) -> String,
) -> String {
    let expr = |e: &Expr| expr_to_string(p, e);
    let at = |e: Option<&Expr>| e.map(|t| format!(" @ {}", expr(t))).unwrap_or_default();
    let line = |text: String| {
        if style.semicolon() {
            text + ";"
        } else {
            text
        }
    };
    match kind {
        StmtKind::Let { var, value } => {
            line(format!("let {} = {}", p.vars[*var].name, expr(value)))
        }
        StmtKind::Notify {
            signal,
            index,
            target,
            op,
            value,
        } => line(format!(
            "notify {}{} {}",
            super::cell_to_string(p, *signal, index),
            at(target.as_ref()),
            credit(p, *op, value, style)
        )),
        StmtKind::Wait {
            signal,
            index,
            cmp,
            threshold,
        } => line(format!(
            "wait {} {} {}",
            super::cell_to_string(p, *signal, index),
            cmp.as_str(),
            expr(threshold)
        )),
        StmtKind::Copy { dst, src } => line(format!(
            "copy {} <- {}",
            region(dst, Side::Dst),
            region(src, Side::Src)
        )),
        StmtKind::Get { dst, src, from } => line(format!(
            "get {} <- {}{}",
            region(dst, Side::Dst),
            region(src, Side::Src),
            at(Some(from))
        )),
        StmtKind::Put { dst, to, src } => line(format!(
            "put {}{} <- {}",
            region(dst, Side::Dst),
            at(Some(to)),
            region(src, Side::Src)
        )),
        StmtKind::Reduce {
            op,
            dst,
            src,
            from,
            to,
        } => line(format!(
            "reduce {} {}{} <- {}{}",
            if style.op_param() {
                op_text(p, *op)
            } else {
                op.as_str().to_string()
            },
            region(dst, Side::Dst),
            at(to.as_ref()),
            region(src, Side::Src),
            at(from.as_ref())
        )),
        StmtKind::Fence => line("fence".into()),
        StmtKind::Return { cond } => line(format!("return if {}", cond_to_string(p, cond))),
        StmtKind::For { var, range, .. } => {
            let range = match range {
                Range::Ranks if style.normal() => format!("0..{}", p.vars[p.world].name),
                r => range_to_string(p, r),
            };
            format!("for {} in {range}", p.vars[*var].name)
        }
        StmtKind::If {
            cond, else_block, ..
        } => {
            let mark = if style.marks_else() && else_block.is_some() {
                " (with else)"
            } else {
                ""
            };
            format!("if {}{mark}", cond_to_string(p, cond))
        }
    }
}

/// A notify's operator and value: `= v`, `+= v`, or `-= v` for a negated value (and, in
/// the validation's normal form, for a negative constant).
fn credit(p: &Protocol, op: NotifyOp, value: &Expr, style: Style) -> String {
    match (op, value, value.as_const()) {
        (NotifyOp::Set, v, _) => format!("= {}", expr_to_string(p, v)),
        (NotifyOp::AtomicAdd, _, Some(c)) if c < 0 && style.normal() => {
            format!("-= {}", c.unsigned_abs())
        }
        (NotifyOp::AtomicAdd, Expr::Neg(inner), _) => format!("-= {}", expr_to_string(p, inner)),
        (NotifyOp::AtomicAdd, v, _) => format!("+= {}", expr_to_string(p, v)),
    }
}
