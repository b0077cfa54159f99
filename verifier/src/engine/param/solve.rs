//! Substitution through nested atoms, and solving a statement's cell equations for
//! its variables: "which writer, in which loop iteration, reaches cell (o, i)?".
//! A variable with coefficient ±1 is solved linearly; `(x + c) % m == e` with `x`
//! in `0..m` is solved as `x = (e - c) % m` (with `0 <= e < m` as a side condition);
//! `s*x == e` with a symbolic step `s >= 1` as `x = e / s` (with `e % s == 0`).
//! What stays unsolved is summed (numeric loops) or counted (ranks).

use super::invert::{self, Mode};
use crate::engine::sym::{Atom, AtomId, CondId, CondV, Formula, Guard, Lin, Syms};
use std::collections::HashMap;

/// A substitution of atoms by Lins.
pub type Map = HashMap<AtomId, Lin>;

/// Substitutes through every level of `l` (atoms are rebuilt and re-interned).
pub fn lin(s: &mut Syms, l: &Lin, m: &Map) -> Option<Lin> {
    if m.is_empty() {
        return Some(l.clone());
    }
    let mut out = Lin::k(l.c);
    for (a, k) in &l.t {
        let r = atom(s, *a, m)?;
        out = out.axpy(*k, &r)?;
    }
    Some(out)
}

fn touches(s: &Syms, a: AtomId, m: &Map) -> bool {
    m.contains_key(&a) || deep(s, m) || s.iters[a as usize].iter().any(|x| m.contains_key(x))
}

/// True when `m` replaces an atom that is not an iteration atom (every atom is then
/// rebuilt: only iteration atoms are tracked through the terms that contain them), unless
/// that atom reads an iteration atom `m` replaces too (`s*x` next to `x`: every term that
/// contains it contains `x`, and is rebuilt for `x`).
fn deep(s: &Syms, m: &Map) -> bool {
    m.keys().any(|k| {
        !matches!(s.atoms[*k as usize], Atom::Iter(_))
            && !s.iters[*k as usize].iter().any(|x| m.contains_key(x))
    })
}

fn atom(s: &mut Syms, a: AtomId, m: &Map) -> Option<Lin> {
    if let Some(x) = m.get(&a) {
        return Some(x.clone());
    }
    if !touches(s, a, m) {
        return Some(Lin::atom(a));
    }
    let at = s.atoms[a as usize].clone();
    Some(match at {
        Atom::Param(_) | Atom::Elem(..) | Atom::Iter(_) => Lin::atom(a),
        Atom::CeilDiv(x, y) => {
            let (x, y) = (lin(s, &x, m)?, lin(s, &y, m)?);
            s.ceil_div(&x, &y)?
        }
        Atom::Div(x, y) => {
            let (x, y) = (lin(s, &x, m)?, lin(s, &y, m)?);
            s.div(&x, &y)?
        }
        Atom::Mod(x, y) => {
            let (x, y) = (lin(s, &x, m)?, lin(s, &y, m)?);
            invert::rem(s, &x, &y)?
        }
        Atom::Min(x, y) => {
            let (x, y) = (lin(s, &x, m)?, lin(s, &y, m)?);
            s.min(&x, &y)?
        }
        Atom::Max(x, y) => {
            let (x, y) = (lin(s, &x, m)?, lin(s, &y, m)?);
            s.max(&x, &y)?
        }
        Atom::Mul(x, y) => {
            let (x, y) = (lin(s, &x, m)?, lin(s, &y, m)?);
            s.mul(&x, &y)?
        }
        Atom::Tri(x) => {
            let x = lin(s, &x, m)?;
            s.tri(&x)?
        }
        Atom::Bit(f, x, y) => {
            let (x, y) = (lin(s, &x, m)?, lin(s, &y, m)?);
            super::bits::bit(s, f, &x, &y)?
        }
        Atom::Ind(g) => match guard(s, &g, m)? {
            None => Lin::k(0),
            Some(g) => s.guarded(&g, &Lin::k(1)),
        },
        Atom::Guarded(g, x) => match guard(s, &g, m)? {
            None => Lin::k(0),
            Some(g) => {
                let x = atom(s, x, m)?;
                s.guarded(&g, &x)
            }
        },
    })
}

/// Substitutes in a condition.
pub fn cond(s: &mut Syms, c: CondId, m: &Map) -> Option<CondV> {
    if m.is_empty() || !(deep(s, m) || s.citers[c as usize].iter().any(|x| m.contains_key(x))) {
        return Some(CondV::Sym(c));
    }
    let f = s.conds[c as usize].clone();
    Some(match f {
        Formula::Ge0(l) => {
            let l = lin(s, &l, m)?;
            s.formula(Formula::Ge0(l))
        }
        Formula::Eq0(l) => {
            let l = lin(s, &l, m)?;
            s.formula(Formula::Eq0(l))
        }
        Formula::Not(x) => {
            let v = cond(s, x, m)?;
            s.not(v)
        }
        Formula::And(xs) | Formula::Or(xs) => {
            let and = matches!(s.conds[c as usize], Formula::And(_));
            let mut vs = Vec::new();
            for x in xs {
                vs.push(cond(s, x, m)?);
            }
            s.junction(and, vs)
        }
    })
}

/// Substitutes in a guard; `None` inside when it became false.
pub fn guard(s: &mut Syms, g: &Guard, m: &Map) -> Option<Option<Guard>> {
    let mut out: Guard = Vec::new();
    for c in g {
        match cond(s, *c, m)? {
            CondV::Const(true) => {}
            CondV::Const(false) => return Some(None),
            CondV::Sym(id) => out.push(id),
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(Some(out))
}

/// `0 <= v` and `v < t` (a value inside a variable's range `0..t`).
pub fn within(s: &mut Syms, v: &Lin, t: &Lin) -> Option<[CondV; 2]> {
    let hi = t.sub(v)?.add(&Lin::k(-1))?;
    Some([
        s.formula(Formula::Ge0(v.clone())),
        s.formula(Formula::Ge0(hi)),
    ])
}

/// The result of solving a statement's cell equations.
#[derive(Clone, Debug, Default)]
pub struct Solution {
    /// Solved variables.
    pub map: Map,
    /// Conditions for the solution to be a real execution: leftover equations and
    /// the solved variables' domains.
    pub side: Vec<CondV>,
    /// Variables left free (to be summed or counted).
    pub free: Vec<AtomId>,
    /// Powers of two the solution names, each with its value (`pow2(lg(e))` and `e`,
    /// with the side condition `pow2(lg(e)) == e`): the path condition may read `e`.
    pub pows: Vec<(Lin, Lin)>,
    /// What every execution must satisfy for a claimed rule to be exact
    /// ([`super::invert`]): each with the variables solved when it was made (`x == v`).
    pub claims: Vec<(CondV, Vec<CondV>)>,
}

/// Solves `lhs[k] == rhs[k]` for `vars` (each in `0..trip(var)`), with the rules
/// `mode` allows (the claimed ones only when no exact one applies).
pub fn solve(
    s: &mut Syms,
    vars: &[AtomId],
    trips: &HashMap<AtomId, Lin>,
    eqs: &[(Lin, Lin)],
    mode: Mode,
) -> Option<Solution> {
    let mut map: Map = HashMap::new();
    let mut pending: Vec<Lin> = Vec::new();
    let mut facts: Vec<Formula> = Vec::new();
    let mut claims: Vec<(CondV, Vec<CondV>)> = Vec::new();
    // Variables whose domain the solving facts already state (`stride::solve`).
    let mut ranged: Vec<AtomId> = Vec::new();
    for (l, r) in eqs {
        pending.push(l.sub(r)?);
    }
    // With the claimed rules: first the exact solutions that read no other unsolved
    // variable, then a claimed rewriting, then any exact solution.
    let mut open = mode == Mode::Exact;
    loop {
        let mut progress = false;
        let mut rest = Vec::new();
        for d in pending {
            let d = lin(s, &d, &map)?;
            match solve_one(s, vars, &map, trips, &d) {
                Some((x, val)) if open || closed(s, vars, &map, x, &val.0) => {
                    facts.extend(val.1);
                    if val.2 {
                        ranged.push(x);
                    }
                    let mut both: Map = [(x, val.0)].into_iter().collect();
                    both.extend(val.3);
                    bind(s, &mut map, both)?;
                    progress = true;
                }
                _ => rest.push(d),
            }
        }
        pending = rest;
        if progress {
            open = mode == Mode::Exact;
            continue;
        }
        let Mode::Claimed(split) = mode else { break };
        if open {
            break;
        }
        let solved = |x: AtomId| map.contains_key(&x);
        let Some((k, step, range)) = pending.iter().enumerate().find_map(|(k, d)| {
            super::residue::claimed(s, vars, &solved, d)
                .or_else(|| invert::claimed(s, vars, &solved, split, d).map(|st| (st, None)))
                .map(|(st, r)| (k, st, r))
        }) else {
            open = true;
            continue;
        };
        ranged.extend(range);
        let mut hyps = Vec::new();
        for (x, v) in &map {
            let d = Lin::atom(*x).sub(v)?;
            hyps.push(s.formula(Formula::Eq0(d)));
        }
        for c in step.claims {
            let c = s.formula(c);
            claims.push((c, hyps.clone()));
        }
        facts.extend(step.facts);
        pending.remove(k);
        pending.extend(step.eqs);
    }
    finish(
        s,
        vars,
        trips,
        Solving {
            map,
            pending,
            facts,
            claims,
            ranged,
        },
    )
}

/// What [`solve`] has found when no rule applies any more.
struct Solving {
    map: Map,
    /// The equations left unsolved.
    pending: Vec<Lin>,
    facts: Vec<Formula>,
    claims: Vec<(CondV, Vec<CondV>)>,
    /// Variables whose domain the solving facts already state (`stride::solve`).
    ranged: Vec<AtomId>,
}

/// The solution: its side conditions are the solving facts, the congruences of the
/// equations left, and every solved variable within its trip count.
fn finish(
    s: &mut Syms,
    vars: &[AtomId],
    trips: &HashMap<AtomId, Lin>,
    st: Solving,
) -> Option<Solution> {
    let Solving {
        map,
        pending,
        facts,
        claims,
        ranged,
    } = st;
    let mut side = Vec::new();
    let mut pows = Vec::new();
    for f in &facts {
        if let Formula::Eq0(l) = f {
            if let Some((p, e)) = invert::power(s, l) {
                pows.push((lin(s, &p, &map)?, lin(s, &e, &map)?));
            }
        }
        let f = match f {
            Formula::Ge0(l) => Formula::Ge0(lin(s, l, &map)?),
            Formula::Eq0(l) => Formula::Eq0(lin(s, l, &map)?),
            _ => return None,
        };
        side.push(s.formula(f));
    }
    for d in &pending {
        let d = lin(s, d, &map)?;
        let d = invert::congruence(s, &d)?;
        side.push(s.formula(Formula::Eq0(d)));
    }
    for x in vars {
        if ranged.contains(x) {
            continue;
        }
        if let Some(v) = map.get(x) {
            let t = lin(s, trips.get(x)?, &map)?;
            side.extend(within(s, v, &t)?);
        }
    }
    let free = vars
        .iter()
        .copied()
        .filter(|x| !map.contains_key(x))
        .collect();
    Some(Solution {
        map,
        side,
        free,
        pows,
        claims,
    })
}

/// True when `v`, the value of `x`, reads no other unsolved variable.
fn closed(s: &Syms, vars: &[AtomId], map: &Map, x: AtomId, v: &Lin) -> bool {
    !vars
        .iter()
        .any(|y| *y != x && !map.contains_key(y) && (v.coeff(*y) != 0 || s.nested(v, *y)))
}

/// Records `x := v` for every entry of `new` (a variable, and the product atom `s*x` of a
/// strided loop's variable); already-solved values may mention them.
fn bind(s: &mut Syms, map: &mut Map, new: Map) -> Option<()> {
    let keys: Vec<AtomId> = map.keys().copied().collect();
    for k in keys {
        if !new.contains_key(&k) {
            let v = map.get(&k)?.clone();
            let nv = lin(s, &v, &new)?;
            map.insert(k, nv);
        }
    }
    map.extend(new);
    Some(())
}

/// One equation solved: the variable's value, the facts the solution needs, whether they
/// state the variable's range, and a product atom with its value (`s*x` of a strided loop,
/// [`super::stride::Solved`]).
type Sol1 = (Lin, Vec<Formula>, bool, Option<(AtomId, Lin)>);

/// One equation `d == 0`: a variable with coefficient ±1 that occurs nowhere else
/// in `d`, or `(x + c) % m == e` with `x` in `0..m`. The second part of the answer
/// lists facts `f >= 0` the solution needs (the modular case: `e` in `0..m`).
#[allow(clippy::type_complexity)]
fn solve_one(
    s: &mut Syms,
    vars: &[AtomId],
    map: &Map,
    trips: &HashMap<AtomId, Lin>,
    d: &Lin,
) -> Option<(AtomId, Sol1)> {
    for x in vars {
        if map.contains_key(x) {
            continue;
        }
        let k = d.coeff(*x);
        if (k == 1 || k == -1) && !s.nested(d, *x) {
            let (_, rest) = d.split(*x);
            // k*x + rest = 0  =>  x = -rest / k
            let v = rest.scale(-k)?;
            return Some((*x, (v, Vec::new(), false, None)));
        }
    }
    if let Some(st) = super::stride::solve(s, vars, &|x| map.contains_key(&x), d) {
        return Some((st.var, (st.val, st.facts, st.ranged, Some(st.product))));
    }
    if let Some((x, v)) = super::bits::solve_xor(s, vars, &|x| map.contains_key(&x), d) {
        return Some((x, (v, Vec::new(), false, None)));
    }
    if let Some((x, v, f)) = invert::pow2(s, vars, &|x| map.contains_key(&x), d) {
        return Some((x, (v, f, false, None)));
    }
    // (x + c) % m == e
    for (k, inner, m, others) in invert::mod_terms(s, d) {
        // k*M + others = 0  =>  M = -others/k
        let e = others.scale(-k)?;
        if vars
            .iter()
            .any(|x| !map.contains_key(x) && e.coeff(*x) != 0)
            || vars
                .iter()
                .any(|x| s.nested(&e, *x) && !map.contains_key(x))
        {
            continue;
        }
        for x in vars {
            if map.contains_key(x) || inner.coeff(*x) != 1 || s.nested(&inner, *x) {
                continue;
            }
            if trips.get(x) != Some(&m) {
                continue;
            }
            let (_, c) = inner.split(*x);
            let arg = e.sub(&c)?;
            let v = invert::rem(s, &arg, &m)?;
            let hi = m.sub(&e)?.add(&Lin::k(-1))?;
            return Some((
                *x,
                (v, vec![Formula::Ge0(e), Formula::Ge0(hi)], false, None),
            ));
        }
    }
    None
}

/// A sum of guarded Lins: `Σ [g_i] * l_i`.
pub type GLin = Vec<(Guard, Lin)>;

/// Σ_{j < trip} of `g`, every guard independent of `j`, every Lin affine in `j`.
pub fn sum(s: &mut Syms, g: &GLin, j: AtomId, trip: &Lin) -> Result<GLin, String> {
    let mut out = Vec::new();
    for (gd, l) in g {
        if gd.iter().any(|c| s.citers[*c as usize].contains(&j)) {
            return Err("a condition depends on a loop variable that is summed over".into());
        }
        out.push((gd.clone(), crate::engine::sym::sum_over(s, l, j, trip)?));
    }
    Ok(out)
}

/// Substitutes in a guarded sum.
pub fn gsubst(s: &mut Syms, g: &GLin, m: &Map) -> Result<GLin, String> {
    let mut out = Vec::new();
    for (gd, l) in g {
        let Some(gd) = guard(s, gd, m).ok_or("overflow")? else {
            continue;
        };
        out.push((gd, lin(s, l, m).ok_or("overflow")?));
    }
    Ok(out)
}

/// Multiplies a guarded sum by a condition.
pub fn gand(g: &GLin, c: CondV) -> GLin {
    match c {
        CondV::Const(true) => g.clone(),
        CondV::Const(false) => Vec::new(),
        CondV::Sym(id) => g
            .iter()
            .map(|(gd, l)| (crate::engine::sym::union(gd, &vec![id]), l.clone()))
            .collect(),
    }
}

/// Flattens a guarded sum into one Lin.
pub fn flat(s: &mut Syms, g: &GLin) -> Option<Lin> {
    let mut out = Lin::k(0);
    for (gd, l) in g {
        let v = s.guarded(gd, l);
        out = out.add(&v)?;
    }
    Some(out)
}

/// The number of `x` in `0..trip` satisfying the conditions of `g` that mention
/// `x` — `x != e`, or also bounds and a residue class (`super::residue::count`) — times
/// the rest. `x` must not occur in the Lins.
pub fn count(s: &mut Syms, g: &GLin, x: AtomId, trip: &Lin) -> Result<GLin, String> {
    let mut out = Vec::new();
    for (gd, l) in g {
        if l.coeff(x) != 0 || s.nested(l, x) {
            return Err(
                "a notify value depends on a writer that the cell does not determine".into(),
            );
        }
        if !super::residue::plain(s, gd, x) {
            out.extend(super::residue::count(s, gd, l, x, trip)?);
            continue;
        }
        let mut keep: Guard = Vec::new();
        let mut excl: Vec<Lin> = Vec::new();
        for c in gd {
            if !s.citers[*c as usize].contains(&x) {
                keep.push(*c);
                continue;
            }
            let Formula::Not(inner) = s.conds[*c as usize] else {
                return Err("a condition on a writer other than `!=`".into());
            };
            let Formula::Eq0(d) = s.conds[inner as usize].clone() else {
                return Err("a condition on a writer other than `!=`".into());
            };
            let k = d.coeff(x);
            if (k != 1 && k != -1) || s.nested(&d, x) {
                return Err("a condition on a writer other than `x != e`".into());
            }
            let (_, rest) = d.split(x);
            excl.push(rest.scale(-k).ok_or("overflow")?);
        }
        // count = trip - Σ_k [e_k in 0..trip and e_k differs from e_0..e_{k-1}]
        out.push((keep.clone(), crate::engine::sym::sum_over(s, l, x, trip)?));
        for (k, e) in excl.iter().enumerate() {
            let mut cs = within(s, e, trip).ok_or("overflow")?.to_vec();
            for prev in &excl[..k] {
                let d = e.sub(prev).ok_or("overflow")?;
                let eq = s.formula(Formula::Eq0(d));
                cs.push(s.not(eq));
            }
            let c = s.junction(true, cs);
            let neg = l.scale(-1).ok_or("overflow")?;
            for (gd2, l2) in gand(&vec![(keep.clone(), neg)], c) {
                out.push((gd2, l2));
            }
        }
    }
    Ok(out)
}
