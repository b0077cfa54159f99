//! Edits a finding's help proposes, as data (`crate::report::Rewrite`, set where the
//! finding is made), turned into source edits here. When the edit cannot be placed in the source, or the
//! verifier still finds the obligation violated on the edited text, the finding keeps
//! no fix and its help is [`Rewrite::unfixed_help`], which proposes no specific edit.

use super::{body, find_stmt, slice};
use crate::report::Rewrite;
use collc_grammar::ast::{CmpOp, File, StmtKind};
use collc_grammar::{Fix, Span};

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
