//! Edits a finding's help proposes, as data ([`Rewrite`], set where the finding is made),
//! turned into source edits here. When the edit cannot be placed in the source, or the
//! verifier still finds the obligation violated on the edited text, the finding keeps
//! no fix and its help is [`Rewrite::unfixed_help`], which proposes no specific edit.

use super::{body, find_stmt, slice};
use collc_grammar::ast::{CmpOp, File, StmtKind};
use collc_grammar::{Fix, Span};

/// An edit of the statement at a finding's primary span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// The wait's threshold grows `by` more per call: `+ by * call` appended
    /// (`- |by| * call` when `by` is negative).
    ThresholdGrowth {
        /// Credits per call minus the threshold's growth per call.
        by: i64,
    },
    /// The wait's `==` becomes `>=`.
    WaitAtLeast,
}

impl Rewrite {
    /// The help when no fix was derived: the rule, no specific edit.
    pub fn unfixed_help(&self) -> String {
        match self {
            Rewrite::ThresholdGrowth { .. } => "a wait on a monotonic cell must have a threshold that grows per call by exactly the cell's credits per call".into(),
            Rewrite::WaitAtLeast => "a wait on a counter that receives AtomicAdd credits must compare with `>=` or `>`: a fast writer can push it past an exact value before this rank polls".into(),
        }
    }
}

/// The source edit of `r` on the body statement at `at`, if it is a wait it applies to.
pub fn fix(r: Rewrite, file: &File, text: &str, at: Span) -> Option<Fix> {
    let (stmt, _) = find_stmt(body(file)?, at, text, &mut Vec::new())?;
    let StmtKind::Wait {
        cell,
        target,
        cmp,
        threshold,
    } = &stmt.kind
    else {
        return None;
    };
    match r {
        Rewrite::ThresholdGrowth { by } if by != 0 => {
            let thr = slice(text, threshold.span);
            let thr = if thr.contains(['|', '&', '^', '<', '>']) {
                format!("({thr})")
            } else {
                thr.to_string()
            };
            let step = match by.abs() {
                1 => "call".to_string(),
                k => format!("{k} * call"),
            };
            let new = format!("{thr} {} {step}", if by > 0 { '+' } else { '-' });
            Some(Fix::replace(
                format!("make the threshold grow by the cell's credits per call: `{new}`"),
                threshold.span,
                new,
            ))
        }
        Rewrite::WaitAtLeast if matches!(cmp, CmpOp::Eq) => {
            let from = target.as_ref().map_or(cell.span.end, |t| t.span.end);
            let between = slice(text, Span::new(from, threshold.span.start));
            let at = from + between.find("==")?;
            Some(Fix::replace("wait with `>=`", Span::new(at, at + 2), ">="))
        }
        _ => None,
    }
}
