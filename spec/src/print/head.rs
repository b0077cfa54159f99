//! A statement's head — the whole statement for one that is one line (`wait X >= k;`,
//! `notify X @ q += k;`, `put ...;`), the part before the braces for a `for` or an `if`
//! — printed once for every place that shows one: the formatter, the simulator's
//! traces, the generated kernels' comments, the lifter's validation messages and the
//! `.coll` text the lifter prints for the statements it recovers from C++ (through
//! [`Head`], whose operands it prints itself: they are not IR yet). What differs between
//! those places is a parameter of [`Style`], not a copy of the printer.

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
    let at = |e: Option<&Expr>| e.map(expr);
    let h = match kind {
        StmtKind::Let { var, value } => Head::Let {
            name: p.vars[*var].name.clone(),
            value: expr(value),
        },
        StmtKind::Notify {
            signal,
            index,
            target,
            op,
            value,
        } => Head::Notify {
            cell: super::cell_to_string(p, *signal, index),
            target: at(target.as_ref()),
            credit: credit(p, *op, value, style),
        },
        StmtKind::Wait {
            signal,
            index,
            cmp,
            threshold,
        } => Head::Wait {
            cell: super::cell_to_string(p, *signal, index),
            cmp: cmp.as_str().to_string(),
            threshold: expr(threshold),
        },
        StmtKind::Copy { dst, src } => Head::Copy {
            dst: region(dst, Side::Dst),
            src: region(src, Side::Src),
        },
        StmtKind::Get { dst, src, from } => Head::Get {
            dst: region(dst, Side::Dst),
            src: region(src, Side::Src),
            from: expr(from),
        },
        StmtKind::Put { dst, to, src } => Head::Put {
            dst: region(dst, Side::Dst),
            to: expr(to),
            src: region(src, Side::Src),
        },
        StmtKind::Reduce {
            op,
            dst,
            src,
            from,
            to,
        } => Head::Reduce {
            op: if style.op_param() {
                op_text(p, *op)
            } else {
                op.as_str().to_string()
            },
            dst: region(dst, Side::Dst),
            to: at(to.as_ref()),
            src: region(src, Side::Src),
            from: at(from.as_ref()),
        },
        StmtKind::Fence => Head::Fence,
        StmtKind::Return { cond } => Head::Return {
            cond: cond_to_string(p, cond),
        },
        StmtKind::For { var, range, .. } => Head::For {
            var: p.vars[*var].name.clone(),
            range: match range {
                Range::Ranks if style.normal() => format!("0..{}", p.vars[p.world].name),
                r => range_to_string(p, r),
            },
        },
        StmtKind::If {
            cond, else_block, ..
        } => Head::If {
            cond: cond_to_string(p, cond),
            has_else: else_block.is_some(),
        },
    };
    h.text(style)
}

/// A statement's head with its operands (expressions, cells, regions, ranges) already
/// printed: the one place the statements' syntax is written. [`stmt_head`] fills it from
/// the IR; a printer of statements that are not yet IR (the lifter's, which prints the
/// protocol it recovers from C++ as `.coll` text to be lowered) fills it from its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// `let NAME = VALUE`.
    Let { name: String, value: String },
    /// `notify CELL (@ TARGET) CREDIT`.
    Notify {
        cell: String,
        target: Option<String>,
        credit: Credit,
    },
    /// `wait CELL CMP THRESHOLD`.
    Wait {
        cell: String,
        cmp: String,
        threshold: String,
    },
    /// `copy DST <- SRC`.
    Copy { dst: String, src: String },
    /// `get DST <- SRC @ FROM`.
    Get {
        dst: String,
        src: String,
        from: String,
    },
    /// `put DST @ TO <- SRC`.
    Put {
        dst: String,
        to: String,
        src: String,
    },
    /// `reduce OP DST (@ TO) <- SRC (@ FROM)`.
    Reduce {
        op: String,
        dst: String,
        to: Option<String>,
        src: String,
        from: Option<String>,
    },
    /// `fence`.
    Fence,
    /// `return if COND`.
    Return { cond: String },
    /// `for VAR in RANGE` (the head of the loop, without its brace).
    For { var: String, range: String },
    /// `if COND` (without its brace); `has_else` is shown in [`Style::Validate`].
    If { cond: String, has_else: bool },
}

/// A notify's operator and its printed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credit {
    /// `= v`.
    Set(String),
    /// `+= v`.
    Add(String),
    /// `-= v`.
    Sub(String),
}

impl Head {
    /// The head in `style`: `;` after a one-line statement (but in [`Style::Trace`]), an
    /// `if` marked when it has an `else` ([`Style::Validate`]).
    pub fn text(&self, style: Style) -> String {
        let at = |e: &Option<String>| e.as_ref().map(|t| format!(" @ {t}")).unwrap_or_default();
        let line = |text: String| {
            if style.semicolon() {
                text + ";"
            } else {
                text
            }
        };
        match self {
            Head::Let { name, value } => line(format!("let {name} = {value}")),
            Head::Notify {
                cell,
                target,
                credit,
            } => {
                let credit = match credit {
                    Credit::Set(v) => format!("= {v}"),
                    Credit::Add(v) => format!("+= {v}"),
                    Credit::Sub(v) => format!("-= {v}"),
                };
                line(format!("notify {cell}{} {credit}", at(target)))
            }
            Head::Wait {
                cell,
                cmp,
                threshold,
            } => line(format!("wait {cell} {cmp} {threshold}")),
            Head::Copy { dst, src } => line(format!("copy {dst} <- {src}")),
            Head::Get { dst, src, from } => line(format!("get {dst} <- {src} @ {from}")),
            Head::Put { dst, to, src } => line(format!("put {dst} @ {to} <- {src}")),
            Head::Reduce {
                op,
                dst,
                to,
                src,
                from,
            } => line(format!("reduce {op} {dst}{} <- {src}{}", at(to), at(from))),
            Head::Fence => line("fence".into()),
            Head::Return { cond } => line(format!("return if {cond}")),
            Head::For { var, range } => format!("for {var} in {range}"),
            Head::If { cond, has_else } => {
                let mark = if style.marks_else() && *has_else {
                    " (with else)"
                } else {
                    ""
                };
                format!("if {cond}{mark}")
            }
        }
    }
}

/// A notify's operator and value: `= v`, `+= v`, or `-= v` for a negated value (and, in
/// the validation's normal form, for a negative constant).
fn credit(p: &Protocol, op: NotifyOp, value: &Expr, style: Style) -> Credit {
    match (op, value, value.as_const()) {
        (NotifyOp::Set, v, _) => Credit::Set(expr_to_string(p, v)),
        (NotifyOp::AtomicAdd, _, Some(c)) if c < 0 && style.normal() => {
            Credit::Sub(c.unsigned_abs().to_string())
        }
        (NotifyOp::AtomicAdd, Expr::Neg(inner), _) => Credit::Sub(expr_to_string(p, inner)),
        (NotifyOp::AtomicAdd, v, _) => Credit::Add(expr_to_string(p, v)),
    }
}
