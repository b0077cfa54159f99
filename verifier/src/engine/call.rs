//! The call index: the values it takes, and what a `reused` value cell holds when a call
//! starts.

use crate::engine::sym::{subst_deep, Atom, CondId, CondV, Lin, Syms};
use collc_spec::ir::{CmpOp, Protocol};

/// The largest value of an int32 cell.
pub(crate) const CELL_MAX: i64 = i32::MAX as i64;

/// The values the call index takes: `0..N` under `calls <= N;`, else every int32.
pub fn call_bounds(p: &Protocol) -> (i64, i64) {
    (0, p.calls.map_or(CELL_MAX, |c| c.max - 1))
}

/// Whether the protocol has a monotonic signal.
pub fn has_monotonic(p: &Protocol) -> bool {
    p.signals.iter().any(|s| s.monotonic)
}

/// What a `reused` value cell holds when a call starts, for a protocol that reads the call
/// index: 0 in call 0 (cells start at 0), and in call `c >= 1` what a Set of call `c - 1`
/// wrote, `value[call := call - 1]`. Each with the condition on the call it needs (`None`:
/// none; a condition that cannot hold drops the entry). `None` without a call index.
pub(crate) fn previous_values(
    p: &Protocol,
    s: &mut Syms,
    sets: &[Lin],
) -> Option<Vec<(Lin, bool, Option<CondId>)>> {
    let call = s.intern(Atom::Param(p.call?));
    let c = Lin::atom(call);
    let cond = |s: &mut Syms, op: CmpOp, k: i64| -> Option<Option<Option<CondId>>> {
        Some(match s.cmp(op, &c, &Lin::k(k))? {
            CondV::Const(true) => Some(None),
            CondV::Const(false) => None,
            CondV::Sym(id) => Some(Some(id)),
        })
    };
    let mut out = Vec::new();
    if let Some(g) = cond(s, CmpOp::Eq, 0)? {
        out.push((Lin::k(0), false, g));
    }
    if let Some(g) = cond(s, CmpOp::Ge, 1)? {
        let before = c.add(&Lin::k(-1))?;
        for v in sets {
            out.push((subst_deep(s, v, call, &before)?, true, g));
        }
    }
    Some(out)
}
