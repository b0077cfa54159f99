//! Case splits of `min` and `max` for the proofs of [`super::prove`]: both sides of an
//! equality with every `min(x, y)` and `max(x, y)` replaced by one of its operands, under
//! the sign condition of `x - y` that makes it that operand (`max(x, y)` is `x` where
//! `x >= y` and `y` where `x < y`; `min` the other way), innermost first, for every
//! choice. The cases' conditions cover every point (each split is a condition and its
//! negation), so an equality holds when it holds in each case under its conditions;
//! there it is free of `ite`, and often a polynomial identity, which needs no Z3.
//!
//! A replacement is made everywhere, inside other atoms' arguments too, and the sides
//! are rebuilt with [`Poly`]'s arithmetic, so monomials renormalise and atoms that become
//! equal compare equal; `ceil`, `/`, `%`, indicators and the uninterpreted functions stay
//! atoms (an atom whose arguments become constants is its value, where defined). What
//! the replacement loses is definedness (the operand not chosen, an argument's
//! integrality): [`super::prove`] takes that from the original sides.

use super::alg::{Atom, Fun, Poly, Rat};

/// At most this many cases; an equality that needs more is not split.
pub const MAX_CASES: usize = 1 << 10;

/// A sign condition on a difference of operands: `d >= 0` (`true`) or `d < 0` (`false`).
pub type Cond = (Poly, bool);

/// One case: its conditions, and both sides free of `min` and `max` under them.
#[derive(Clone, Debug)]
pub struct Case {
    /// The sign conditions of the choices made (a choice the earlier ones decide adds none).
    pub conds: Vec<Cond>,
    /// The first side in this case.
    pub a: Poly,
    /// The second side in this case.
    pub b: Poly,
}

/// The cases of `a == b` (one, with no conditions, when neither has a `min` or `max`);
/// `None` when there would be more than [`MAX_CASES`].
pub fn cases(a: &Poly, b: &Poly) -> Option<Vec<Case>> {
    let mut out = Vec::new();
    let mut todo = vec![Case {
        conds: Vec::new(),
        a: a.clone(),
        b: b.clone(),
    }];
    while let Some(c) = todo.pop() {
        let Some((at, f, x, y)) = innermost(&c.a).or_else(|| innermost(&c.b)) else {
            out.push(c);
            continue;
        };
        let d = x.sub(&y);
        let known = known(&c.conds, &d);
        for ge in known.map_or(vec![true, false], |k| vec![k]) {
            // `ge`: x >= y (or x > y), so max is x and min is y
            let pick = if ge == (f == Fun::Max) { &x } else { &y };
            let mut conds = c.conds.clone();
            if known.is_none() {
                conds.push((d.clone(), ge));
            }
            todo.push(Case {
                conds,
                a: replace(&c.a, &at, pick),
                b: replace(&c.b, &at, pick),
            });
        }
        if out.len() + todo.len() > MAX_CASES {
            return None;
        }
    }
    Some(out)
}

/// Whether `d >= 0` (`Some(true)`) or `d <= 0` (`Some(false)`) follows from a constant
/// `d` or from a condition on a positive or negative multiple of `d`: at `d = 0` both
/// operands are equal, so either choice is right.
fn known(conds: &[Cond], d: &Poly) -> Option<bool> {
    if let Some(k) = d.as_const() {
        return Some(k.0 >= 0);
    }
    let (m, c) = d.0.iter().next()?;
    conds.iter().find_map(|(e, ge)| {
        let ce = e.0.get(m)?;
        let r = Rat::new(c.0 * ce.1, c.1 * ce.0);
        // d = r * e: the sign of e, flipped when r < 0
        (e.scale(r) == *d).then_some(*ge == (r.0 > 0))
    })
}

/// A `min` or `max` of two operands in `p` with none inside its operands, with them.
fn innermost(p: &Poly) -> Option<(Atom, Fun, Poly, Poly)> {
    p.0.keys().flatten().find_map(|a| {
        a.operands().iter().find_map(innermost).or_else(|| match a {
            Atom::Fun(f @ (Fun::Min | Fun::Max), args) => match &args[..] {
                [x, y] => Some((a.clone(), *f, x.clone(), y.clone())),
                _ => None,
            },
            _ => None,
        })
    })
}

/// `p` with atom `at` replaced by `by` everywhere.
fn replace(p: &Poly, at: &Atom, by: &Poly) -> Poly {
    let mut out = Poly::default();
    for (m, c) in &p.0 {
        let mut t = Poly::rat(*c);
        for x in m {
            t = t.mul(&replace_atom(x, at, by));
        }
        out = out.add(&t);
    }
    out
}

fn replace_atom(x: &Atom, at: &Atom, by: &Poly) -> Poly {
    let rebuilt = match x {
        _ if x == at => return by.clone(),
        Atom::Var(_) => return Poly::atom(x.clone()),
        Atom::Fun(f, args) => Atom::Fun(*f, args.iter().map(|y| replace(y, at, by)).collect()),
        Atom::Ind(t, d) => Atom::Ind(*t, replace(d, at, by)),
    };
    // constant arguments: the value where the evaluator gives one
    match rebuilt.eval(&|_| None) {
        Some(v) => Poly::k(i128::from(v)),
        None => Poly::atom(rebuilt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cost::prove::tests::{f, v};

    #[test]
    fn a_ramp_and_its_dual_decide_each_other() {
        // max(0, P - G) and min(P, G): one split on P - G, the other follows
        let r = f(Fun::Max, Poly::default(), v(0).sub(&v(1)));
        let m = f(Fun::Min, v(0), v(1));
        let Some(cs) = cases(&r.add(&m), &v(0)) else {
            panic!("split")
        };
        assert_eq!(cs.len(), 2, "{cs:?}");
        for c in &cs {
            assert_eq!(c.conds.len(), 1);
            assert_eq!(c.a, c.b, "{c:?}");
        }
    }

    #[test]
    fn nested_operands_are_replaced_first() {
        // max(min(P, G), T): min first, then max of the chosen operand
        let x = f(Fun::Max, f(Fun::Min, v(0), v(1)), v(2));
        let Some(cs) = cases(&x, &Poly::default()) else {
            panic!("split")
        };
        assert_eq!(cs.len(), 4);
        let picks: Vec<Poly> = cs.iter().map(|c| c.a.clone()).collect();
        for want in [v(0), v(1), v(2)] {
            assert!(picks.contains(&want), "{picks:?}");
        }
    }

    #[test]
    fn constant_arguments_evaluate() {
        // ceil(max(P, 3) / 2) where P < 3 is ceil(3 / 2) = 2
        let x = f(Fun::CeilDiv, f(Fun::Max, v(0), Poly::k(3)), Poly::k(2));
        let Some(cs) = cases(&x, &Poly::default()) else {
            panic!("split")
        };
        assert!(cs.iter().any(|c| c.a == Poly::k(2)), "{cs:?}");
    }

    #[test]
    fn too_many_cases_are_not_made() {
        let many = (0..11).fold(Poly::default(), |s, i| {
            s.add(&f(Fun::Max, Poly::default(), v(i)))
        });
        assert!(cases(&many, &Poly::default()).is_none());
        let fewer = (0..10).fold(Poly::default(), |s, i| {
            s.add(&f(Fun::Max, Poly::default(), v(i)))
        });
        assert_eq!(cases(&fewer, &Poly::default()).map(|c| c.len()), Some(1024));
    }
}
