//! The call index and monotonic (epoch) signals in the parametric route.
//!
//! `call` is one more symbolic atom, in `0..N` under `calls <= N;` (else every int32),
//! shared by the two passes: the obligations are statements about one call, for every
//! call index at once. A monotonic cell is reduced as in the enumerated route
//! (`crate::obligations::epoch`, README "Monotonic signals"): every wait threshold on it is split into
//! `a + b·call` with `a` and `b` free of `call` (`b` may be symbolic, `(P - 1)·call`), the
//! event keeps `a`, and `credit-balance` proves that the cell's per-call credit equals
//! every `b` that reads it, for every cell, every `P` and every call index (Z3). A cell
//! that receives exactly its threshold growth each call starts call `c` holding `c·b`, so
//! the reduced wait behaves like a wait `>= a` on a self-clearing cell that its owner
//! empties at the end of every call: `wait-reachable`, `stale-credit` (no wait passes on
//! an earlier call's credits) and the progress ranking then run on `a`, unchanged.

use super::extract::{PKind, Pass};
use super::oblig::Side;
use super::solve::{self, Map};
use super::Ctx;
use crate::engine::smt::Prop;
use crate::engine::sym::{cond_mentions, mentions};
use crate::engine::sym::{Atom, AtomId, Lin, Syms};
use collc_spec::ir::{Protocol, SignalId};
use std::collections::HashMap;

/// Per wait statement on a monotonic cell (its span start): the threshold's growth per
/// call, `b` (free of `call`).
pub(crate) type Growth = HashMap<usize, Lin>;

/// The atom of the call index, when the protocol reads it.
pub(crate) fn call_atom(p: &Protocol, s: &mut Syms) -> Option<AtomId> {
    p.call.map(|v| s.intern(Atom::Param(v)))
}

/// `l = a + b·call` with `a` and `b` free of `call`: `(b, a)`; `None` when `l` is not
/// affine in `call` (a product of `call` with itself, `call` inside `%`, `min`, ...).
pub(crate) fn split_call(s: &mut Syms, l: &Lin, call: AtomId) -> Option<(Lin, Lin)> {
    let mut b = Lin::k(0);
    let mut a = Lin::k(l.c);
    for (x, k) in l.t.clone() {
        if x == call {
            b = b.add(&Lin::k(k))?;
            continue;
        }
        if !crate::engine::sym::atom_mentions(s, x, call) {
            a = a.axpy(k, &Lin::atom(x))?;
            continue;
        }
        // k · u · v with u free of call and v affine in it.
        let Atom::Mul(u, v) = s.atoms[x as usize].clone() else {
            return None;
        };
        let (free, aff) = if !mentions(s, &u, call) {
            (u, v)
        } else if !mentions(s, &v, call) {
            (v, u)
        } else {
            return None;
        };
        let (kc, rest) = aff.split(call);
        if mentions(s, &rest, call) {
            return None;
        }
        b = b.axpy(k.checked_mul(kc)?, &free)?;
        let m = s.mul(&free, &rest)?;
        a = a.axpy(k, &m)?;
    }
    Some((b, a))
}

/// Reduces the waits on monotonic cells of one pass (thresholds keep `a`) and returns
/// their growths. A form outside the reduction is an `Err` naming it.
pub(crate) fn reduce(p: &Protocol, s: &mut Syms, pass: &mut Pass) -> Result<Growth, String> {
    let mut out = Growth::new();
    let call = call_atom(p, s);
    for ev in pass.events.iter_mut() {
        if !p.signals[ev.signal].monotonic {
            continue;
        }
        let name = &p.signals[ev.signal].name;
        if let Some(c) = call {
            if ev.guard.iter().any(|g| cond_mentions(s, *g, c)) {
                return Err(format!(
                    "a notify or wait on the monotonic signal `{name}` under a condition on `call`"
                ));
            }
            if ev
                .loops
                .iter()
                .any(|l| mentions(s, &pass.loops[*l].trip, c))
            {
                return Err(format!(
                    "a notify or wait on the monotonic signal `{name}` in a loop whose trip count depends on `call`"
                ));
            }
            if mentions(s, &ev.owner, c) || ev.index.iter().any(|i| mentions(s, i, c)) {
                return Err(format!(
                    "a cell of the monotonic signal `{name}` chosen by the call index"
                ));
            }
        }
        match &mut ev.kind {
            PKind::Notify { value, .. } => {
                if let (Some(c), Some(v)) = (call, value.as_ref()) {
                    if mentions(s, v, c) {
                        return Err(format!(
                            "a credit to the monotonic signal `{name}` that depends on `call`"
                        ));
                    }
                }
            }
            PKind::Wait { thr, .. } => {
                let (b, a) = match call {
                    Some(c) => split_call(s, thr, c).ok_or_else(|| {
                        format!(
                            "a wait on the monotonic signal `{name}` whose threshold is not `a + b * call`"
                        )
                    })?,
                    None => (Lin::k(0), thr.clone()),
                };
                *thr = a;
                out.insert(ev.span.start, b);
            }
        }
    }
    Ok(out)
}

impl Ctx<'_> {
    /// `credit-balance` on a monotonic cell: the per-call credit `net` of the generic cell
    /// `(o, idx)` equals the growth of every wait that reads the cell.
    pub(super) fn monotonic_balance(
        &mut self,
        s: SignalId,
        o: &Lin,
        idx: &[Lin],
        net: &Lin,
    ) -> Result<(), String> {
        let waits: Vec<_> = self
            .a
            .events
            .iter()
            .filter(|e| e.signal == s && matches!(e.kind, PKind::Wait { .. }))
            .cloned()
            .collect();
        for w in waits {
            let Some((map, g, _)) = self.reach(Side::A, &w, o, idx, &Map::new(), &[])? else {
                continue;
            };
            let b = self.growth.get(&w.span.start).cloned().unwrap_or(Lin::k(0));
            let b = solve::lin(&mut self.run.syms, &b, &map).ok_or("arithmetic overflow")?;
            let d = net.sub(&b).ok_or("arithmetic overflow")?;
            self.holds(&g, Prop::Eq0(d)).map_err(|r| {
                format!(
                    "`{}` is monotonic: its per-call credit is not shown equal to the per-call growth of a threshold that reads it ({r})",
                    self.p.signals[s].name
                )
            })?;
        }
        self.horizon.push((s, net.clone()));
        Ok(())
    }
}
