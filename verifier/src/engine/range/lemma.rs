//! Facts about the nonlinear terms of a range query, added before it goes to Z3:
//! a product of two symbolic values (`idx * (n / P)`) or a division by a symbolic
//! value is beyond the linear arithmetic Z3 decides, and its nonlinear tactics do
//! not find the argument a slice bound needs (`idx <= P - 1`, so
//! `idx * (n / P) <= P * (n / P) - n / P <= n - n / P`). With these facts the
//! argument is linear in the monomials (`idx * q`, `P * q`, `q`), which Z3 treats as
//! opaque values.
//!
//! Soundness: every fact added is *valid*, true for every integer value of its
//! variables (or implied by a definition the query already asserts), so it removes
//! no model of the query: an unsat answer with the facts is an unsat answer without
//! them, and a counterexample stays a counterexample. The bounds proposed for a
//! factor ([`interval`]) are only hints: each enters as the premise of an
//! implication, which Z3 must itself derive for the fact to say anything.
//!
//! The facts, for integers `a`, `b`, `x`, `y`, `l`, `h`:
//!
//! 1. Division (`q = a / b`, Euclidean, which is the floor for `b > 0`):
//!    `b > 0 => b*q <= a < b*q + b`, since `a = b*q + r` with `0 <= r < b`; and
//!    `a >= 0 && b > 0 => 0 <= q <= a`, since `0 <= a/b <= a` for `b >= 1`.
//! 2. Ceiling (`q = ceil(a / b)`): `b > 0 => a <= b*q < a + b`, since
//!    `a/b <= q < a/b + 1`; and `a >= 0 && b > 0 => 0 <= q <= a`, since
//!    `0 <= a/b <= q <= ceil(a) = a`.
//! 3. Remainder (`q = a % b`, Euclidean): `b > 0 => 0 <= q < b`.
//! 4. Monotonicity of a product in one factor: `x <= h && y >= 0 => x*y <= h*y` and
//!    `x <= h && y <= 0 => x*y >= h*y` (the difference is `(h - x) * y`), likewise
//!    `x >= l` with the inequalities reversed; and in the other factor.
//! 5. Distributivity: `x*y` equals the sum of monomials of its expansion.
//!
//! Every product is written as its expansion into a sum of monomials over
//! *atoms* (variables, divisions, and other terms that are not sums or products),
//! each monomial built with its atoms in one order, so that the facts about one
//! product and about one division speak of the same Z3 terms: `(P - 1) * q` is
//! `P*q - q`, the `P*q` of the division fact of `q`.

use super::encode::{DivKind, Enc};
use collc_spec::ir::{BinOp, Expr, Range, Seq, VarId, VarKind};
use std::collections::BTreeMap;
use z3::ast::{Bool, Int};

/// A sum of monomials: sorted atom ids (empty: the constant term) to coefficients.
type Poly = BTreeMap<Vec<usize>, i64>;

/// An expansion larger than this is not attempted (a product of long sums).
const MAX_MONOMIALS: usize = 64;

/// How deep [`interval`] follows definitions.
const MAX_DEPTH: usize = 12;

/// Adds the facts about the products and divisions `enc` encoded so far to its side
/// facts (those encoded while stating the facts get their division facts too, not
/// their product facts: one round).
pub fn add(enc: &mut Enc) {
    let mut l = Lemmas {
        atoms: Vec::new(),
        out: Vec::new(),
    };
    let products = enc.products.clone();
    for (a, b) in &products {
        l.product(enc, a, b);
    }
    let mut done = 0;
    while done < enc.divisions.len() {
        let d = enc.divisions[done].clone();
        done += 1;
        l.division(enc, d.kind, &d.a, &d.b, &d.q);
    }
    enc.side.extend(l.out);
}

struct Lemmas {
    /// The atoms met so far; a monomial names them by position.
    atoms: Vec<Expr>,
    out: Vec<Bool>,
}

impl Lemmas {
    fn atom(&mut self, e: &Expr) -> usize {
        match self.atoms.iter().position(|x| x == e) {
            Some(i) => i,
            None => {
                self.atoms.push(e.clone());
                self.atoms.len() - 1
            }
        }
    }

    /// The expansion of `e` into monomials over atoms; `None` when a coefficient
    /// overflows or the expansion is too large.
    fn poly(&mut self, enc: &Enc, e: &Expr) -> Option<Poly> {
        let constant = |c: i64| Poly::from([(Vec::new(), c)]);
        Some(match e {
            Expr::Int(c) => constant(*c),
            Expr::Var(v) => match enc.p.vars[*v].kind {
                VarKind::Const(c) => constant(c),
                _ => Poly::from([(vec![self.atom(e)], 1)]),
            },
            Expr::Neg(a) => scale(&self.poly(enc, a)?, -1)?,
            Expr::Rank(a) => self.poly(enc, a)?,
            Expr::Bin(BinOp::Add, a, b) => sum(&self.poly(enc, a)?, &self.poly(enc, b)?, 1)?,
            Expr::Bin(BinOp::Sub, a, b) => sum(&self.poly(enc, a)?, &self.poly(enc, b)?, -1)?,
            Expr::Bin(BinOp::Mul, a, b) => mul(&self.poly(enc, a)?, &self.poly(enc, b)?)?,
            _ => Poly::from([(vec![self.atom(e)], 1)]),
        })
    }

    /// The Z3 term of an expansion (each monomial's atoms in id order).
    fn term(&self, enc: &mut Enc, p: &Poly) -> Int {
        let mut parts = Vec::new();
        for (mono, c) in p {
            if *c == 0 {
                continue;
            }
            let mut factors = vec![Int::from_i64(*c)];
            for &i in mono {
                let atom = self.atoms[i].clone();
                factors.push(enc.expr(&atom));
            }
            parts.push(if factors.len() == 1 {
                factors.remove(0)
            } else {
                Int::mul(&factors)
            });
        }
        match parts.len() {
            0 => Int::from_i64(0),
            1 => parts.remove(0),
            _ => Int::add(&parts),
        }
    }

    /// Facts 4 and 5 for `a * b`.
    fn product(&mut self, enc: &mut Enc, a: &Expr, b: &Expr) {
        let Some(ab) = self.poly(enc, &mul_expr(a, b)) else {
            return;
        };
        let ab_t = self.term(enc, &ab);
        let (x, y) = (enc.expr(a), enc.expr(b));
        // 5: the query's own term is its expansion.
        self.out.push((x.clone() * y.clone()).eq(&ab_t));
        // 4: in each factor, against each bound proposed for it.
        for (f, ft, g, gt) in [(a, &x, b, &y), (b, &y, a, &x)] {
            let (lo, hi) = interval(enc, f, 0);
            for (bound, upper) in [(lo, false), (hi, true)] {
                let Some(bound) = bound else { continue };
                let Some(hg) = self.poly(enc, &mul_expr(&bound, g)) else {
                    continue;
                };
                let hg_t = self.term(enc, &hg);
                let bt = enc.expr(&bound);
                let premise = if upper { ft.le(&bt) } else { ft.ge(&bt) };
                // x <= h, y >= 0: x*y <= h*y; the other three by sign.
                let (pos, neg) = if upper {
                    (ab_t.le(&hg_t), ab_t.ge(&hg_t))
                } else {
                    (ab_t.ge(&hg_t), ab_t.le(&hg_t))
                };
                self.out
                    .push(Bool::and(&[premise.clone(), gt.ge(0)]).implies(&pos));
                self.out.push(Bool::and(&[premise, gt.le(0)]).implies(&neg));
            }
        }
    }

    /// Facts 1 to 3 for `q`, which holds `a / b`, `ceil(a / b)` or `a % b`.
    fn division(&mut self, enc: &mut Enc, kind: DivKind, a: &Expr, b: &Expr, q: &Expr) {
        let (at, bt, qt) = (enc.expr(a), enc.expr(b), enc.expr(q));
        let pos = bt.gt(0);
        let main = match kind {
            DivKind::Rem => Bool::and(&[qt.ge(0), qt.lt(&bt)]),
            DivKind::Floor | DivKind::Ceil => {
                let Some(bq) = self.poly(enc, &mul_expr(b, q)) else {
                    return;
                };
                let bq = self.term(enc, &bq);
                if kind == DivKind::Floor {
                    Bool::and(&[bq.le(&at), at.lt(&(bq.clone() + bt.clone()))])
                } else {
                    Bool::and(&[at.le(&bq), bq.lt(&(at.clone() + bt.clone()))])
                }
            }
        };
        self.out.push(pos.implies(&main));
        if kind != DivKind::Rem {
            self.out
                .push(Bool::and(&[at.ge(0), pos]).implies(Bool::and(&[qt.ge(0), qt.le(&at)])));
        }
    }
}

fn mul_expr(a: &Expr, b: &Expr) -> Expr {
    Expr::Bin(BinOp::Mul, Box::new(a.clone()), Box::new(b.clone()))
}

fn scale(p: &Poly, k: i64) -> Option<Poly> {
    p.iter()
        .map(|(m, c)| Some((m.clone(), c.checked_mul(k)?)))
        .collect()
}

/// `p + sign * q`.
fn sum(p: &Poly, q: &Poly, sign: i64) -> Option<Poly> {
    let mut out = p.clone();
    for (m, c) in q {
        let e = out.entry(m.clone()).or_insert(0);
        *e = e.checked_add(c.checked_mul(sign)?)?;
    }
    out.retain(|_, c| *c != 0);
    Some(out)
}

fn mul(p: &Poly, q: &Poly) -> Option<Poly> {
    if p.len().saturating_mul(q.len()) > MAX_MONOMIALS {
        return None;
    }
    let mut out = Poly::new();
    for (m1, c1) in p {
        for (m2, c2) in q {
            let mut m: Vec<usize> = m1.iter().chain(m2).copied().collect();
            m.sort_unstable();
            let e = out.entry(m).or_insert(0);
            *e = e.checked_add(c1.checked_mul(*c2)?)?;
        }
    }
    out.retain(|_, c| *c != 0);
    Some(out)
}

/// A lower and an upper bound proposed for `e`, as expressions (hints: see the
/// module's soundness note): from the domains of parameters and ranks, loop ranges,
/// the definitions of `let`s, and interval arithmetic over `+`, `-`, constant
/// factors, `%`, `/`, `min` and `max`.
fn interval(enc: &Enc, e: &Expr, depth: usize) -> (Option<Expr>, Option<Expr>) {
    if depth > MAX_DEPTH {
        return (None, None);
    }
    let int = |c: i64| Some(Expr::Int(c));
    let below = |x: &Expr| Some(bin(BinOp::Sub, x.clone(), Expr::Int(1)));
    let go = |x: &Expr| interval(enc, x, depth + 1);
    match e {
        Expr::Int(c) => (int(*c), int(*c)),
        Expr::Var(v) => var_interval(enc, *v, depth),
        Expr::Rank(a) => go(a),
        Expr::Neg(a) => {
            let (l, h) = go(a);
            (h.map(neg), l.map(neg))
        }
        Expr::Bin(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let ((la, ha), (lb, hb)) = (go(a), go(b));
            let (lb, hb) = if *op == BinOp::Sub {
                (hb.map(neg), lb.map(neg))
            } else {
                (lb, hb)
            };
            let add = |x: Option<Expr>, y: Option<Expr>| Some(bin(BinOp::Add, x?, y?));
            (add(la, lb), add(ha, hb))
        }
        Expr::Bin(BinOp::Mul, a, b) => {
            let (k, x) = match (a.as_const(), b.as_const()) {
                (Some(k), _) => (k, b),
                (_, Some(k)) => (k, a),
                _ => return (None, None),
            };
            let (l, h) = go(x);
            let times = |y: Expr| bin(BinOp::Mul, Expr::Int(k), y);
            if k >= 0 {
                (l.map(times), h.map(times))
            } else {
                (h.map(times), l.map(times))
            }
        }
        Expr::Bin(BinOp::Mod, _, b) => (int(0), below(b)),
        Expr::Bin(BinOp::Div, a, b) | Expr::CeilDiv(a, b) => {
            let (la, ha) = go(a);
            match b.as_const() {
                Some(k) if k > 0 => {
                    let div = |y: Expr| {
                        if matches!(e, Expr::CeilDiv(..)) {
                            Expr::CeilDiv(Box::new(y), Box::new(Expr::Int(k)))
                        } else {
                            bin(BinOp::Div, y, Expr::Int(k))
                        }
                    };
                    (la.map(div), ha.map(div))
                }
                // A symbolic divisor (at least 1): 0 <= a / b <= a for a >= 0.
                _ => (int(0), ha),
            }
        }
        Expr::Min(a, b) => {
            let ((la, ha), (lb, hb)) = (go(a), go(b));
            let lo = la.zip(lb).map(|(x, y)| Expr::Min(Box::new(x), Box::new(y)));
            let hi = match (ha, hb) {
                (Some(x), Some(y)) => Some(Expr::Min(Box::new(x), Box::new(y))),
                (x, y) => x.or(y),
            };
            (lo, hi)
        }
        Expr::Max(a, b) => {
            let ((la, ha), (lb, hb)) = (go(a), go(b));
            let lo = match (la, lb) {
                (Some(x), Some(y)) => Some(Expr::Max(Box::new(x), Box::new(y))),
                (x, y) => x.or(y),
            };
            let hi = ha.zip(hb).map(|(x, y)| Expr::Max(Box::new(x), Box::new(y)));
            (lo, hi)
        }
        _ => (None, None),
    }
}

/// The bounds [`interval`] proposes for variable `v`.
fn var_interval(enc: &Enc, v: VarId, depth: usize) -> (Option<Expr>, Option<Expr>) {
    let int = |c: i64| Some(Expr::Int(c));
    let world = Expr::Var(enc.p.world);
    let below = |x: &Expr| Some(bin(BinOp::Sub, x.clone(), Expr::Int(1)));
    let rank = || (int(0), below(&world));
    let go = |x: &Expr| interval(enc, x, depth + 1);
    match (&enc.p.vars[v].kind, enc.defs) {
        (VarKind::Const(c), _) => (int(*c), int(*c)),
        (VarKind::World { lo, hi }, _) => (int(*lo), int(*hi)),
        (
            VarKind::Param {
                domain: Some((lo, hi)),
            },
            _,
        ) => (int(*lo), int(*hi)),
        (VarKind::Param { domain: None } | VarKind::Me, _) => rank(),
        (VarKind::Derived(x), _) => go(x),
        (VarKind::Local, defs) => match defs.lets.get(&v) {
            Some(x) => go(x),
            None => (None, None),
        },
        (VarKind::Loop, defs) => match defs.loops.get(&v) {
            Some(Range::Peers | Range::Ranks) => rank(),
            Some(Range::Span { lo, hi, .. } | Range::Seq(Seq { lo, hi, .. })) => {
                (Some(lo.clone()), below(hi))
            }
            None => (None, None),
        },
        (VarKind::Block, _) => match &enc.p.blocks {
            Some(b) => (int(0), below(&b.count)),
            None => (int(0), int(0)),
        },
        (VarKind::Call, _) => (int(0), None),
    }
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Bin(op, Box::new(a), Box::new(b))
}

fn neg(e: Expr) -> Expr {
    Expr::Neg(Box::new(e))
}
