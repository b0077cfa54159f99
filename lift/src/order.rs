//! The orderings the `pto::comm` dialect inserts, recognised and taken out, so what remains
//! is the protocol (documented in docs/lift.md, "Orderings"):
//!
//! * publish: `pipe_barrier(PIPE_ALL);` and, when global memory may have been written since
//!   the last notify, `dsb(DSB_DDR);`, right before a notify — or before a loop nest that
//!   only notifies (then not inside it). Its `pipe_barrier` is the instruction a `.coll
//!   fence` prints as, so it is recovered as a `fence;` in front of the notify (a `.coll
//!   fence` written there shares it: the dialect never prints two in a row); the `dsb` is
//!   taken out.
//! * acquire: `pipe_barrier(PIPE_ALL); dcci(.., ENTIRE_DATA_CACHE);` right after a wait — or
//!   after a loop nest that only waits.
//! * every other `pipe_barrier(PIPE_ALL);` is a `.coll fence`.
//!
//! A notify without its publish, a missing `dsb` after a store to a window, a wait without
//! its acquire, or a stray `dsb`/`dcci` is an error naming the line.

use crate::model::{L, S};
use collc_grammar::Diagnostic;

fn err(line: usize, msg: String) -> Diagnostic {
    Diagnostic::error("lift::ordering", format!("line {line}: {msg}"))
        .with_help("docs/lift.md, \"Orderings\", lists the orderings collc's notify and wait carry")
}

/// True if every statement (recursively) is one `pred` accepts, or a let/loop/if of such,
/// and at least one is not a let.
fn only(b: &[L], pred: &dyn Fn(&S) -> bool) -> bool {
    !b.is_empty()
        && b.iter().all(|l| match &l.s {
            S::Let { .. } => true,
            S::For { body, .. } => only(body, pred),
            S::If { then, els, .. } => {
                only(then, pred) && els.as_ref().is_none_or(|e| e.is_empty() || only(e, pred))
            }
            s => pred(s),
        })
        && b.iter().any(|l| !matches!(l.s, S::Let { .. }))
}

fn is_notify(s: &S) -> bool {
    matches!(s, S::Notify { .. })
}
fn is_wait(s: &S) -> bool {
    matches!(s, S::Wait { .. })
}

fn stores_gm(s: &S) -> bool {
    matches!(s, S::Data { dst, .. } if dst.gm)
}

/// May global memory be unpublished after `b`, given `dirty` before it?
fn flow(b: &[L], mut dirty: bool) -> bool {
    for l in b {
        dirty = match &l.s {
            S::Notify { .. } => false,
            S::For { body, .. } => dirty || flow(body, dirty || flow(body, dirty)),
            S::If { then, els, .. } => {
                flow(then, dirty) || els.as_ref().map_or(dirty, |e| flow(e, dirty))
            }
            s => dirty || stores_gm(s),
        };
    }
    dirty
}

#[derive(Clone, Copy)]
struct St {
    dirty: bool,
    hoisted: bool,
    in_wait: bool,
}

/// Takes the dialect's orderings out of a body (or epilogue) whose entry state is `dirty`;
/// also returns the state after it.
pub fn normalize(items: Vec<L>, dirty: bool) -> Result<(Vec<L>, bool), Diagnostic> {
    let mut st = St {
        dirty,
        hoisted: false,
        in_wait: false,
    };
    let out = block(items, &mut st)?;
    Ok((out, st.dirty))
}

fn publish(out: &mut Vec<L>, line: usize, st: &mut St) -> Result<(), Diagnostic> {
    let dsb = matches!(out.last(), Some(L { s: S::Dsb, .. }));
    if dsb {
        out.pop();
    }
    // The publish's `pipe_barrier(PIPE_ALL)` is the instruction a `.coll fence` prints as:
    // it stays, as a fence in front of the notify.
    match out.last() {
        Some(L { s: S::Barrier, .. }) => {}
        _ => {
            return Err(err(
                line,
                "a notify without `pipe_barrier(PIPE_ALL)` right before it (its publish)".into(),
            ))
        }
    }
    if st.dirty && !dsb {
        return Err(err(
            line,
            "a notify after a store to a window without `dsb(DSB_DDR)` in its publish".into(),
        ));
    }
    st.dirty = false;
    Ok(())
}

fn acquire(items: &[L], i: &mut usize, line: usize) -> Result<(), Diagnostic> {
    match (items.get(*i), items.get(*i + 1)) {
        (Some(L { s: S::Barrier, .. }), Some(L { s: S::Dcci, .. })) => {
            *i += 2;
            Ok(())
        }
        _ => Err(err(
            line,
            "a wait without `pipe_barrier(PIPE_ALL); dcci(.., ENTIRE_DATA_CACHE);` right after it (its acquire)".into(),
        )),
    }
}

fn block(items: Vec<L>, st: &mut St) -> Result<Vec<L>, Diagnostic> {
    let mut out: Vec<L> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let l = items[i].clone();
        i += 1;
        match l.s {
            S::Notify { .. } => {
                if !st.hoisted {
                    publish(&mut out, l.line, st)?;
                }
                out.push(l);
            }
            S::Wait { .. } => {
                out.push(l.clone());
                if !st.in_wait {
                    acquire(&items, &mut i, l.line)?;
                }
            }
            S::For { var, range, body } => {
                let notify_only = only(&body, &is_notify);
                let wait_only = only(&body, &is_wait);
                let hoist = notify_only && !st.hoisted;
                if hoist {
                    publish(&mut out, l.line, st)?;
                }
                let dirty_in = st.dirty;
                let mut inner = St {
                    dirty: dirty_in || flow(&body, dirty_in),
                    hoisted: st.hoisted || notify_only,
                    in_wait: st.in_wait || wait_only,
                };
                let body = block(body, &mut inner)?;
                st.dirty = if notify_only {
                    dirty_in && !hoist
                } else {
                    dirty_in || inner.dirty
                };
                out.push(L::new(S::For { var, range, body }, l.line));
                if wait_only && !st.in_wait {
                    acquire(&items, &mut i, l.line)?;
                }
            }
            S::If { cond, then, els } => {
                let mut a = *st;
                let then = block(then, &mut a)?;
                let mut b = *st;
                let els = match els {
                    Some(e) => Some(block(e, &mut b)?),
                    None => None,
                };
                st.dirty = a.dirty || b.dirty;
                out.push(L::new(S::If { cond, then, els }, l.line));
            }
            S::Barrier | S::Dsb | S::Dcci => out.push(l),
            s => {
                if stores_gm(&s) {
                    st.dirty = true;
                }
                out.push(L::new(s, l.line));
            }
        }
    }
    out.into_iter()
        .map(|l| match l.s {
            S::Barrier => Ok(L::new(S::Fence, l.line)),
            S::Dsb | S::Dcci => Err(err(
                l.line,
                "a `dsb`/`dcci` that is not part of a notify's publish or a wait's acquire".into(),
            )),
            s => Ok(L::new(s, l.line)),
        })
        .collect()
}
