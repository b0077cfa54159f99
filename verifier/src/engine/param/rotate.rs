//! Relative ranks: a protocol that names every rank relative to a root (`let vr =
//! (me - root + P) % P`, the binomial tree) is analysed with the generic actor's
//! variable standing for the *relative* rank. The substitution `me := (me - c) % P`
//! (`c` the rotation, here `P - root`) is a bijection of `0..P`, so the pass describes
//! the same actors, relabelled; every statement's rank arithmetic then cancels to the
//! relative rank (`(((me - c) % P) + c) % P == me`) and the cell equations are solved
//! and summed over it. Protocols with value or monotonic signals are left as written
//! (their analyses read the actor's rank directly).

use super::extract::{PKind, Pass};
use super::solve::{self, Map};
use crate::engine::sym::{Atom, CondV, Lin, Syms};
use collc_spec::ir::{Protocol, SignalKind};

/// The rotation `c` of the first top-level `let` of the form `(me + c) % P`.
fn rotation(s: &Syms, pass: &Pass, world: &Lin) -> Option<Lin> {
    pass.lets.iter().find_map(|l| {
        let [(a, 1)] = l.t.as_slice() else {
            return None;
        };
        if l.c != 0 {
            return None;
        }
        let Atom::Mod(x, m) = &s.atoms[*a as usize] else {
            return None;
        };
        if m != world || x.coeff(pass.me) != 1 || s.nested(x, pass.me) {
            return None;
        }
        let (_, c) = x.split(pass.me);
        (!s.deps(&c).contains(&pass.me)).then_some(c)
    })
}

/// Relabels the actors of `pass` by their rank relative to the rotation, when the
/// protocol names one: `Some(Some(c))` with the rotation, `Some(None)` when it is left
/// as written (`None`: overflow).
pub fn apply(p: &Protocol, s: &mut Syms, pass: &mut Pass, world: &Lin) -> Option<Option<Lin>> {
    let plain = p
        .signals
        .iter()
        .all(|g| g.kind != SignalKind::Value && !g.monotonic);
    let me = pass.me;
    let loops_plain = pass.loops.iter().all(|l| !s.deps(&l.trip).contains(&me));
    let Some(c) = rotation(s, pass, world).filter(|_| plain && loops_plain) else {
        return Some(None);
    };
    let rank = rank(s, &c, &Lin::atom(me), world)?;
    let m: Map = [(me, rank.clone())].into_iter().collect();
    pass.rank = rank;
    for ev in &mut pass.events {
        ev.owner = solve::lin(s, &ev.owner, &m)?;
        for i in &mut ev.index {
            *i = solve::lin(s, i, &m)?;
        }
        ev.guard = match solve::guard(s, &ev.guard, &m)? {
            Some(g) => g,
            // Never runs (a literal false condition keeps the two passes aligned).
            None => vec![s.formula_raw(crate::engine::sym::Formula::Ge0(Lin::k(-1)))],
        };
        match &mut ev.kind {
            PKind::Notify { value: Some(v), .. } => *v = solve::lin(s, v, &m)?,
            PKind::Notify { value: None, .. } => {}
            PKind::Wait { thr, .. } => *thr = solve::lin(s, thr, &m)?,
        }
    }
    for r in &mut pass.returns {
        if let CondV::Sym(id) = r.cond {
            r.cond = solve::cond(s, id, &m)?;
        }
    }
    for l in &mut pass.lets {
        *l = solve::lin(s, l, &m)?;
    }
    Some(Some(c))
}

/// The rank of relative rank `v` under rotation `c`: `(v - c) % P` (a generic cell's
/// owner, so that it cancels against the actors' rotated ranks).
pub fn rank(s: &mut Syms, c: &Lin, v: &Lin, world: &Lin) -> Option<Lin> {
    super::invert::rem(s, &v.sub(c)?, world)
}
