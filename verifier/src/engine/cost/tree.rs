//! Binomial trees in the cost derivation. A loop over the powers of two
//! `for m in 1..N step *2` whose guard selects, for a rank's value `x` in `0..N`
//! (a relative rank), the rounds `m` with `x % (2*m) == 0 && x + m < N` visits the
//! children `c = x + m` of `x` in the binomial tree over `0..N`: every `c` in `1..N`
//! is the child of exactly one `x` (its parent `c & (c - 1)`, the lowest set bit
//! `m = c & -c` cleared). So, for any `x >= 0` and any `R`,
//!
//! `Σ_{m = 2^j < N} [x & (2m - 1) == 0] [x + m < N] R(m) = Σ_{c in 1..N} [x == c & (c - 1)] R(c & -c)`,
//!
//! and the sum over the ranks (which fixes `x` for each `c`, a rotation) is done
//! before the one over `c`: the sum over `c` is deferred to the end of the walk
//! (`N` must not depend on anything summed before it). A guard written in another
//! form (`(vr == 0 || m < (vr & -vr)) && vr + m < P`, `vr % (2*m) == 0 && ...`) is
//! replaced by the canonical form `[x & (2m - 1) == 0] [x + m < N]` only when Z3
//! proves the two equal for every `x` in `0..N`, every power of two `m < N` and
//! every value of the other variables (a bit-vector query: 64-bit two's complement,
//! exact for every value the language's 64-bit arithmetic computes).

use super::alg::{Atom, Fun, Poly, Rat, Test};
use super::simplify::single;
use super::walk::Walk;
use collc_spec::ir::*;
use std::collections::BTreeSet;
use z3::ast::{Bool, BV};
use z3::{Params, SatResult, Solver};

/// Bits of the bit-vector encoding.
const W: u32 = 64;
/// Time a guard's equivalence query may take, in milliseconds.
const TIMEOUT_MS: u32 = 5_000;

impl Walk<'_> {
    /// `[x & (2m - 1) == 0] * [x + m < n]`: round `m` of a binomial tree over `0..n`
    /// has the child `x + m` of `x`.
    pub(super) fn tree_guard(&self, x: &Poly, m: VarId, n: &Poly) -> Poly {
        let mm = Poly::var(m);
        let mask = mm.scale(Rat::int(2)).sub(&Poly::k(1));
        let clear = self.mk(Atom::Fun(Fun::And, vec![x.clone(), mask]));
        let clear = self.mk(Atom::Ind(Test::Eq0, clear));
        let fits = self.mk(Atom::Ind(Test::Lt0, x.add(&mm).sub(n)));
        clear.mul(&fits)
    }

    /// The canonical tree guard of a loop over powers `m` (`1..n step *2`) when
    /// `g` (an `if`'s indicator) equals it for some `x` Z3 finds it equal with.
    pub(super) fn as_tree_guard(&self, g: &Poly, m: VarId, n: &Poly) -> Option<Poly> {
        for x in self.tree_candidates(g, m, n) {
            let t = self.tree_guard(&x, m, n);
            if t == *g || (self.tree_edge(&t, m, n).is_some() && self.proved_equal(g, &t, &x, m, n))
            {
                return Some(t);
            }
        }
        None
    }

    /// The values `x` with a `x + m < n` comparison in `g` (either orientation),
    /// free of `m` and provably in `0..n`.
    fn tree_candidates(&self, g: &Poly, m: VarId, n: &Poly) -> Vec<Poly> {
        let mut out: Vec<Poly> = Vec::new();
        for mono in g.0.keys() {
            for a in mono {
                let Atom::Ind(Test::Lt0, d) = a else { continue };
                let Some(cs) = d.coefficients_in(m) else {
                    continue;
                };
                if cs.len() != 2 {
                    continue;
                }
                let x = match cs[1].as_const() {
                    // x + m - n < 0
                    Some(u) if u == Rat::int(1) => cs[0].add(n),
                    // e - m < 0 stands for m <= e, i.e. x + m < n with x = n - 1 - e
                    Some(u) if u == Rat::int(-1) => n.sub(&Poly::k(1)).sub(&cs[0]),
                    _ => continue,
                };
                if !x.mentions(m) && self.inside(&x, n) && !out.contains(&x) {
                    out.push(x);
                }
            }
        }
        out
    }

    /// A monomial's tree guard for the loop variable `m` over `0..n`: `x` and the
    /// positions of its two indicators.
    pub(super) fn tree_edge(&self, g: &Poly, m: VarId, n: &Poly) -> Option<Poly> {
        let (mono, _) = g.0.iter().next()?;
        self.edge_in(mono, m, n).map(|e| e.0)
    }

    fn edge_in(&self, mono: &[Atom], m: VarId, n: &Poly) -> Option<(Poly, usize, usize)> {
        let mm = Poly::var(m);
        let mask = mm.scale(Rat::int(2)).sub(&Poly::k(1));
        for (i, a) in mono.iter().enumerate() {
            let Atom::Ind(Test::Eq0, d) = a else { continue };
            let Some(Atom::Fun(Fun::And, args)) = single(d) else {
                continue;
            };
            if args.len() != 2 || args[1] != mask || args[0].mentions(m) {
                continue;
            }
            let x = &args[0];
            let fits = x.add(&mm).sub(n);
            let j = mono
                .iter()
                .position(|b| matches!(b, Atom::Ind(Test::Lt0, e) if *e == fits));
            if let Some(j) = j {
                return Some((x.clone(), i, j));
            }
        }
        None
    }

    /// Splits `f` (a loop body's count over the powers `m` in `1..n`) into the rest
    /// and the terms under a tree guard, summed over `m` as a sum over the children
    /// `c` whose sum is deferred (a fresh variable, created once per loop in `c`
    /// with the marker `u` the deferred terms carry as a factor).
    pub(super) fn tree_children(
        &mut self,
        f: &Poly,
        m: VarId,
        n: &Poly,
        c: &mut Option<(VarId, VarId)>,
    ) -> (Poly, Poly) {
        let mut rest = Poly::default();
        let mut kids = Poly::default();
        let deferrable = self.deferrable(n);
        for (mono, k) in &f.0 {
            let term = Poly(std::iter::once((mono.clone(), *k)).collect());
            let edge = self.edge_in(mono, m, n);
            let Some((x, i, j)) = edge.filter(|e| deferrable && self.range(&e.0).0 >= 0.0) else {
                rest = rest.add(&term);
                continue;
            };
            let (cv, u) = *c.get_or_insert_with(|| {
                let top = self.range(n).1;
                let v = self.fresh_var((0.0, top - 1.0));
                let u = self.fresh_var((1.0, 1.0));
                self.upper.insert(v, n.clone());
                self.pending.push((v, u, n.clone()));
                (v, u)
            });
            let cp = Poly::var(cv);
            let others: Vec<Atom> = mono
                .iter()
                .enumerate()
                .filter(|(p, _)| *p != i && *p != j)
                .map(|(_, a)| a.clone())
                .collect();
            let r = Poly(std::iter::once((others, *k)).collect());
            let low = self.mk(Atom::Fun(
                Fun::And,
                vec![cp.clone(), cp.scale(Rat::int(-1))],
            ));
            let parent = self.mk(Atom::Fun(Fun::And, vec![cp.clone(), cp.sub(&Poly::k(1))]));
            let is_parent = self.mk(Atom::Ind(Test::Eq0, x.sub(&parent)));
            let nonzero = self.mk(Atom::Ind(Test::Eq0, cp.clone())).not();
            // under `[x == parent]`, `x` is the parent (so `x + m` is the child `c`)
            let r = self
                .replace(&r, &x, &parent)
                .subst(m, &low, &|a| self.mk(a));
            kids = kids.add(&r.mul(&is_parent).mul(&nonzero).mul(&Poly::var(u)));
        }
        (rest, kids)
    }

    /// `p` with the one-atom polynomial `x` replaced by `by` everywhere (functions
    /// and indicators rebuilt simplified); `p` when `x` is not one atom.
    fn replace(&self, p: &Poly, x: &Poly, by: &Poly) -> Poly {
        let Some(from) = single(x) else {
            return p.clone();
        };
        if let Atom::Var(v) = from {
            return p.subst(*v, by, &|a| self.mk(a));
        }
        let mut out = Poly::default();
        for (mono, k) in &p.0 {
            let mut t = Poly::rat(*k);
            for a in mono {
                let f = if a == from {
                    by.clone()
                } else {
                    match a {
                        Atom::Var(_) => Poly::atom(a.clone()),
                        Atom::Fun(f, args) => self.mk(Atom::Fun(
                            *f,
                            args.iter().map(|y| self.replace(y, x, by)).collect(),
                        )),
                        Atom::Ind(t, d) => self.mk(Atom::Ind(*t, self.replace(d, x, by))),
                    }
                };
                t = t.mul(&f);
            }
            out = out.add(&t);
        }
        out
    }

    /// Whether a sum bounded by `n` may be done last: `n` reads only the world size,
    /// parameters, constants and top-level `let`s.
    fn deferrable(&self, n: &Poly) -> bool {
        let mut vs = BTreeSet::new();
        vars_of(n, &mut vs);
        vs.iter().all(|v| {
            matches!(
                self.p.vars.get(v.index()).map(|x| &x.kind),
                Some(
                    VarKind::World { .. }
                        | VarKind::Param { .. }
                        | VarKind::Const(_)
                        | VarKind::Derived(_)
                )
            )
        })
    }

    /// Whether Z3 proves `g == t` for every `x` in `0..n`, power of two `m` in `1..n`
    /// and value of everything else.
    fn proved_equal(&self, g: &Poly, t: &Poly, x: &Poly, m: VarId, n: &Poly) -> bool {
        let mut tr = Tr {
            w: self,
            x,
            m,
            big_x: BV::new_const("x", W),
            big_m: BV::new_const("m", W),
            free: Vec::new(),
        };
        let (Some(a), Some(b), Some(big_n)) = (tr.poly(g), tr.poly(t), tr.poly(n)) else {
            return false;
        };
        let k = |v: i64| BV::from_i64(v, W);
        let (bx, bm) = (tr.big_x.clone(), tr.big_m.clone());
        let side = [
            bx.bvsge(k(0)),
            bx.bvslt(&big_n),
            bm.bvsgt(k(0)),
            bm.bvand(bm.bvsub(k(1))).eq(k(0)),
            bm.bvslt(&big_n),
            big_n.bvsle(k(1 << 40)),
        ];
        let solver = Solver::new();
        let mut params = Params::new();
        params.set_u32("timeout", TIMEOUT_MS);
        solver.set_params(&params);
        solver.assert(Bool::and(&side));
        solver.assert(a.eq(&b).not());
        solver.check() == SatResult::Unsat
    }
}

/// `p`'s terms with the factor `u` (that factor dropped), and the others.
pub(super) fn marked(p: &Poly, u: VarId) -> (Poly, Poly) {
    let (mut with, mut without) = (Poly::default(), Poly::default());
    for (mono, k) in &p.0 {
        let mut mono = mono.clone();
        let hit = mono.iter().position(|a| *a == Atom::Var(u));
        let side = match hit {
            Some(i) => {
                mono.remove(i);
                &mut with
            }
            None => &mut without,
        };
        *side = side.add(&Poly(std::iter::once((mono, *k)).collect()));
    }
    (with, without)
}

/// Every variable `p` reads (inside functions and indicators too).
pub(super) fn vars_of(p: &Poly, out: &mut BTreeSet<VarId>) {
    for mono in p.0.keys() {
        for a in mono {
            if let Atom::Var(v) = a {
                out.insert(*v);
            }
            a.operands().iter().for_each(|x| vars_of(x, out));
        }
    }
}

/// The bit-vector image of polynomials: `x` as one variable, `m` as another, atoms
/// with no exact encoding that do not read `m` as unconstrained variables (what is
/// proved for every value of them holds of theirs).
struct Tr<'t, 'a> {
    w: &'t Walk<'a>,
    x: &'t Poly,
    m: VarId,
    big_x: BV,
    big_m: BV,
    free: Vec<(Atom, BV)>,
}

impl Tr<'_, '_> {
    fn k(v: i128) -> Option<BV> {
        i64::try_from(v).ok().map(|v| BV::from_i64(v, W))
    }

    fn poly(&mut self, p: &Poly) -> Option<BV> {
        if p == self.x {
            return Some(self.big_x.clone());
        }
        let mut acc = Tr::k(0)?;
        for (mono, c) in &p.0 {
            let mut t = Tr::k(c.as_int()?)?;
            for a in mono {
                t = t.bvmul(&self.atom(a)?);
            }
            acc = acc.bvadd(&t);
        }
        Some(acc)
    }

    fn fresh(&mut self, a: &Atom) -> BV {
        if let Some((_, v)) = self.free.iter().find(|(b, _)| b == a) {
            return v.clone();
        }
        let v = BV::new_const(format!("a{}", self.free.len()), W);
        self.free.push((a.clone(), v.clone()));
        v
    }

    fn atom(&mut self, a: &Atom) -> Option<BV> {
        if Poly::atom(a.clone()) == *self.x {
            return Some(self.big_x.clone());
        }
        let (zero, one) = (Tr::k(0)?, Tr::k(1)?);
        match a {
            Atom::Var(v) if *v == self.m => Some(self.big_m.clone()),
            Atom::Var(_) => Some(self.fresh(a)),
            Atom::Ind(t, d) => {
                let d = self.poly(d)?;
                let b = match t {
                    Test::Eq0 => d.eq(&zero),
                    Test::Lt0 => d.bvslt(&zero),
                };
                Some(b.ite(&one, &zero))
            }
            Atom::Fun(f, args) => match self.fun(*f, args) {
                Some(v) => Some(v),
                None if !a.mentions(self.m) => Some(self.fresh(a)),
                None => None,
            },
        }
    }

    /// `b` is `2^k * m` for a constant `k >= 0` (a power of two, as `m` is).
    fn power_of_m(&self, b: &Poly) -> bool {
        let Some(cs) = b.coefficients_in(self.m) else {
            return false;
        };
        let unit = cs.get(1).and_then(|c| c.as_const());
        cs.len() == 2
            && cs[0].is_zero()
            && unit.is_some_and(|u| u.1 == 1 && u.0 > 0 && u.0 & (u.0 - 1) == 0)
    }

    fn fun(&mut self, f: Fun, args: &[Poly]) -> Option<BV> {
        let (a, b) = (args.first()?, args.get(1)?);
        let positive = self.w.range(b).0 > 0.0;
        let (x, y) = (self.poly(a)?, self.poly(b)?);
        Some(match f {
            Fun::And => x.bvand(&y),
            Fun::Or => x.bvor(&y),
            Fun::Xor => x.bvxor(&y),
            Fun::Min => x.bvsle(&y).ite(&x, &y),
            Fun::Max => x.bvsge(&y).ite(&x, &y),
            // `a % (2^k * m) = a & (2^k * m - 1)` for `a >= 0` and `m` a power of two
            Fun::Mod if self.power_of_m(b) && self.w.range(a).0 >= 0.0 => {
                x.bvand(y.bvsub(Tr::k(1)?))
            }
            // Euclidean remainder and floor quotient by a positive divisor
            Fun::Mod if positive => x.bvsmod(&y),
            Fun::Div if positive => x.bvsub(x.bvsmod(&y)).bvsdiv(&y),
            Fun::CeilDiv if positive => {
                let nx = x.bvneg();
                nx.bvsub(nx.bvsmod(&y)).bvsdiv(&y).bvneg()
            }
            Fun::Pow if *a == Poly::k(2) => {
                let r = self.w.range(b);
                if r.0 < 0.0 || r.1 > 62.0 {
                    return None;
                }
                Tr::k(1)?.bvshl(&y)
            }
            _ => return None,
        })
    }
}
