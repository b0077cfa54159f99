//! Queries over bit operations as pure bit-vector problems (QF_BV). A query whose
//! terms contain an [`Atom::Bit`] is translated with every integer a `W`-bit two's
//! complement vector; the translation is *exact* only when every term (every atom,
//! every partial sum) provably stays within `±2^(W-3)`, which interval bounds over
//! the atoms' domains check first — a query that may leave the range is not
//! translated (the integer encoding of `smt.rs` takes it). `W` is the smallest width
//! (at least [`MIN_WIDTH`]) the bounds allow: bit-blasting costs grow with the width,
//! so a query whose terms stay below `2^17` is posed over 20-bit vectors, not 32 or
//! 64. Division and remainder need a divisor known positive (Euclidean `%` is then
//! `bvsmod`). The solver bit-blasts after Z3's cheap rewrites ([`solver`]).
//! Constants other than the parameters are named by their position in the
//! query, so two queries that differ only in their fresh atoms (the generic cells of
//! two signals) are the same Z3 term, answered once per route ([`Cache`]).

use crate::engine::smt::{Answer, Limit, Prop};
use crate::engine::sym::{Assign, Atom, AtomId, BitFn, CondId, Formula, Guard, Lin, Syms};
use crate::report::evidence::Undecided;
use collc_spec::ir::{Protocol, VarId};
use std::collections::{BTreeMap, HashMap};
use z3::ast::{Bool, BV};
use z3::{SatResult, Solver, Tactic};

/// Whether a term reads a bit atom (at any depth); with `bitwise`, only `^ & | << >>`
/// count (not `pow2` and `lg`, which the integer encoding handles well).
pub fn has_bits(s: &Syms, prop: &Prop, extra: &[CondId], bitwise: bool) -> bool {
    let mut seen = HashMap::new();
    let mut w = Walk {
        s,
        seen: &mut seen,
        bitwise,
    };
    let r = match prop {
        Prop::Ge0(l) | Prop::Eq0(l) => w.lin(l),
        Prop::Never(g) => g.iter().any(|c| w.cond(*c)),
        Prop::Equiv(a, b) => w.cond(*a) || w.cond(*b),
    };
    r || extra.iter().any(|c| w.cond(*c))
}

struct Walk<'a> {
    s: &'a Syms,
    seen: &'a mut HashMap<AtomId, bool>,
    bitwise: bool,
}

impl Walk<'_> {
    fn lin(&mut self, l: &Lin) -> bool {
        l.t.iter().any(|(a, _)| self.atom(*a))
    }
    fn cond(&mut self, c: CondId) -> bool {
        match &self.s.conds[c as usize] {
            Formula::Ge0(l) | Formula::Eq0(l) => self.lin(l),
            Formula::Not(x) => self.cond(*x),
            Formula::And(xs) | Formula::Or(xs) => xs.iter().any(|x| self.cond(*x)),
        }
    }
    fn atom(&mut self, a: AtomId) -> bool {
        if let Some(b) = self.seen.get(&a) {
            return *b;
        }
        let r = match &self.s.atoms[a as usize] {
            Atom::Bit(BitFn::Pow2 | BitFn::Lg, x, _) if self.bitwise => self.lin(x),
            Atom::Bit(..) => true,
            Atom::Param(_) | Atom::Elem(..) => false,
            Atom::Iter(n) => self.lin(&self.s.loops[*n as usize].trip),
            Atom::CeilDiv(x, y)
            | Atom::Div(x, y)
            | Atom::Mod(x, y)
            | Atom::Min(x, y)
            | Atom::Max(x, y)
            | Atom::Mul(x, y) => self.lin(x) || self.lin(y),
            Atom::Tri(x) => self.lin(x),
            Atom::Ind(g) => g.iter().any(|c| self.cond(*c)),
            Atom::Guarded(g, x) => g.iter().any(|c| self.cond(*c)) || self.atom(*x),
        };
        self.seen.insert(a, r);
        r
    }
}

/// Interval of an atom (inclusive), `None` when unbounded or outside `±2^62`. Inside
/// a conjunction, the bounds its earlier conjuncts put on single atoms (`i < trip`)
/// hold for the later ones: a BV conjunction is false when any conjunct is, so a later
/// conjunct's value matters (and must be exact) only where the earlier ones hold.
struct Iv<'a> {
    s: &'a Syms,
    memo: HashMap<AtomId, Option<(i128, i128)>>,
    /// Bounds assumed by enclosing conjunctions (innermost last).
    over: Vec<HashMap<AtomId, (i128, i128)>>,
    /// The largest magnitude of any term seen.
    max: i128,
}

const CAP: i128 = 1 << 62;

impl Iv<'_> {
    /// The interval of `l`; its partial sums count toward [`Iv::max`] (the
    /// translation computes them).
    fn lin(&mut self, l: &Lin) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (i128::from(l.c), i128::from(l.c));
        let mut m = lo.abs();
        for (a, k) in &l.t {
            let (x, y) = self.atom(*a)?;
            let k = i128::from(*k);
            let (p, q) = (x * k, y * k);
            lo += p.min(q);
            hi += p.max(q);
            m += p.abs().max(q.abs());
        }
        self.max = self.max.max(m);
        (lo.abs() < CAP && hi.abs() < CAP && m < CAP).then_some((lo, hi))
    }
    /// The largest magnitude a Lin's partial sums reach.
    fn span(&mut self, l: &Lin) -> Option<i128> {
        let mut m = i128::from(l.c).abs();
        for (a, k) in &l.t {
            let (x, y) = self.atom(*a)?;
            m += x.abs().max(y.abs()) * i128::from(*k).abs();
        }
        self.max = self.max.max(m);
        (m < CAP).then_some(m)
    }
    fn atom(&mut self, a: AtomId) -> Option<(i128, i128)> {
        if let Some(r) = self.memo.get(&a) {
            return *r;
        }
        self.memo.insert(a, None);
        let mut r = self.compute(a);
        for o in &self.over {
            if let (Some((l, h)), Some((ol, oh))) = (r, o.get(&a)) {
                r = Some((l.max(*ol), h.min(*oh)));
            }
        }
        if let Some((l, h)) = r {
            self.max = self.max.max(l.abs()).max(h.abs());
        }
        self.memo.insert(a, r);
        r
    }
    /// A conjunction: each conjunct exact under the bounds of the ones taken before it
    /// (in any order that works: a conjunct is taken once it is exact).
    fn conj(&mut self, g: &[CondId]) -> Option<()> {
        self.over.push(HashMap::new());
        self.memo.clear();
        let r = self.take_all(g);
        self.over.pop();
        self.memo.clear();
        r
    }
    /// Takes every conjunct of `g` into the innermost bounds, exact ones first.
    fn take_all(&mut self, g: &[CondId]) -> Option<()> {
        let mut left: Vec<CondId> = g.to_vec();
        while !left.is_empty() {
            let before = left.len();
            let mut rest = Vec::new();
            for c in left {
                if self.cond(c).is_some() {
                    self.bound(c);
                } else {
                    self.memo.clear();
                    rest.push(c);
                }
            }
            left = rest;
            if left.len() == before {
                return None;
            }
        }
        Some(())
    }
    /// Records the bound `c` puts on a single atom (`k*a + r >= 0` or `== 0`).
    fn bound(&mut self, c: CondId) {
        let (l, eq) = match &self.s.conds[c as usize] {
            Formula::Ge0(l) => (l.clone(), false),
            Formula::Eq0(l) => (l.clone(), true),
            _ => return,
        };
        for (a, k) in &l.t {
            let (_, rest) = l.split(*a);
            if self.s.nested(&rest, *a)
                || self.s.iters[*a as usize]
                    .iter()
                    .any(|x| rest.coeff(*x) != 0)
            {
                continue;
            }
            let Some((rl, rh)) = self.lin(&rest) else {
                continue;
            };
            let k = i128::from(*k);
            // k*a >= -r  (and <= -r when eq)
            let (mut lo, mut hi) = (None, None);
            if k > 0 {
                lo = Some((-rh).div_euclid(k) + i128::from((-rh).rem_euclid(k) != 0));
                if eq {
                    hi = Some((-rl).div_euclid(k));
                }
            } else {
                let m = -k;
                hi = Some(rh.div_euclid(m));
                if eq {
                    lo = Some(rl.div_euclid(m) + i128::from(rl.rem_euclid(m) != 0));
                }
            }
            let top = self.over.len() - 1;
            let e = self.over[top].entry(*a).or_insert((-CAP, CAP));
            if let Some(lo) = lo {
                e.0 = e.0.max(lo);
            }
            if let Some(hi) = hi {
                e.1 = e.1.min(hi);
            }
            self.memo.clear();
        }
    }
    fn compute(&mut self, a: AtomId) -> Option<(i128, i128)> {
        let s = self.s;
        let (blo, bhi) = s.bounds[a as usize];
        let known = blo.zip(bhi).map(|(l, h)| (i128::from(l), i128::from(h)));
        let r = match &s.atoms[a as usize] {
            Atom::Param(_) | Atom::Elem(..) => known?,
            Atom::Iter(n) => {
                let (_, t) = self.lin(&s.loops[*n as usize].trip)?;
                (0, (t - 1).max(0))
            }
            Atom::Mod(x, y) => {
                self.lin(x)?;
                let (yl, yh) = self.lin(y)?;
                if yl <= 0 {
                    return None;
                }
                (0, yh - 1)
            }
            Atom::Div(x, y) | Atom::CeilDiv(x, y) => {
                let (xl, xh) = self.lin(x)?;
                let (yl, _) = self.lin(y)?;
                if yl <= 0 {
                    return None;
                }
                let m = xl.abs().max(xh.abs());
                (-m, m)
            }
            Atom::Min(x, y) | Atom::Max(x, y) => {
                let (xl, xh) = self.lin(x)?;
                let (yl, yh) = self.lin(y)?;
                (xl.min(yl), xh.max(yh))
            }
            Atom::Mul(x, y) => {
                let (xl, xh) = self.lin(x)?;
                let (yl, yh) = self.lin(y)?;
                let c = [xl * yl, xl * yh, xh * yl, xh * yh];
                (*c.iter().min()?, *c.iter().max()?)
            }
            Atom::Tri(x) => {
                let (xl, xh) = self.lin(x)?;
                let m = xl.abs().max(xh.abs());
                (0, m * (m + 1) / 2)
            }
            Atom::Ind(g) => {
                self.conj(g)?;
                (0, 1)
            }
            Atom::Guarded(g, x) => {
                let g = g.clone();
                self.over.push(HashMap::new());
                self.memo.clear();
                let r = self.take_all(&g).and_then(|_| self.atom(*x));
                self.over.pop();
                self.memo.clear();
                let (l, h) = r?;
                (l.min(0), h.max(0))
            }
            Atom::Bit(f, x, y) => {
                let (xl, xh) = self.lin(x)?;
                let (yl, yh) = self.lin(y)?;
                match f {
                    // The encoding is total: 2^e on 0..=61, else 0 (a real execution
                    // evaluates pow2 on 0..=62 only; 62 is excluded here).
                    BitFn::Pow2 if xh <= 61 => {
                        let lo = if xl < 0 { 0 } else { 1i128 << xl };
                        (lo, 1i128 << xh.max(0))
                    }
                    BitFn::Pow2 => return None,
                    BitFn::Lg if xh < CAP / 2 => (
                        i128::from(super::bits::lg(xl.max(0) as i64)),
                        i128::from(super::bits::lg(xh as i64)),
                    ),
                    BitFn::Lg => return None,
                    BitFn::Shl | BitFn::Shr if yl < 0 || yh > 61 => return None,
                    BitFn::Shl => {
                        let m = xl.abs().max(xh.abs()) << yh;
                        (-m, m)
                    }
                    _ => {
                        // |a op b| < 2^(bits of the larger magnitude + 1)
                        let m = xl.abs().max(xh.abs()).max(yl.abs()).max(yh.abs());
                        let b = 128 - m.leading_zeros();
                        let p = 1i128 << b.min(100);
                        (-p, p)
                    }
                }
            }
        };
        (r.0.abs() < CAP && r.1.abs() < CAP).then_some(r)
    }
    fn cond(&mut self, c: CondId) -> Option<()> {
        match &self.s.conds[c as usize] {
            Formula::Ge0(l) | Formula::Eq0(l) => self.span(l).map(|_| ()),
            Formula::Not(x) => self.cond(*x),
            Formula::And(xs) => {
                let xs = xs.clone();
                self.conj(&xs)
            }
            Formula::Or(xs) => {
                for x in xs.clone() {
                    self.cond(x)?;
                }
                Some(())
            }
        }
    }
}

/// The translation of one query.
struct Tr<'a> {
    p: &'a Protocol,
    s: &'a Syms,
    w: u32,
    atoms: BTreeMap<AtomId, BV>,
    conds: BTreeMap<CondId, Bool>,
    side: Vec<Bool>,
    params: BTreeMap<VarId, BV>,
    /// Constants named so far (the position of the next one).
    named: u32,
    /// How remainders are encoded.
    enc: Enc,
}

impl Tr<'_> {
    fn k(&self, v: i64) -> BV {
        BV::from_i64(v, self.w)
    }
    /// A new constant named by its position in the query.
    fn constant(&mut self) -> BV {
        self.named += 1;
        // `#` keeps it apart from the parameters' names (identifiers of the language).
        BV::new_const(format!("t#{}", self.named), self.w)
    }
    fn lin(&mut self, l: &Lin) -> BV {
        let mut acc = self.k(l.c);
        for (a, k) in &l.t {
            let x = self.atom(*a);
            let t = if *k == 1 { x } else { x.bvmul(self.k(*k)) };
            acc = acc.bvadd(&t);
        }
        acc
    }
    fn guard(&mut self, g: &Guard) -> Bool {
        let cs: Vec<Bool> = g.iter().map(|c| self.cond(*c)).collect();
        Bool::and(&cs)
    }
    fn cond(&mut self, c: CondId) -> Bool {
        if let Some(b) = self.conds.get(&c) {
            return b.clone();
        }
        let b = match &self.s.conds[c as usize] {
            Formula::Ge0(l) => self.lin(l).bvsge(self.k(0)),
            Formula::Eq0(l) => self.lin(l).eq(self.k(0)),
            Formula::Not(x) => self.cond(*x).not(),
            Formula::And(xs) => {
                let v: Vec<Bool> = xs.iter().map(|x| self.cond(*x)).collect();
                Bool::and(&v)
            }
            Formula::Or(xs) => {
                let v: Vec<Bool> = xs.iter().map(|x| self.cond(*x)).collect();
                Bool::or(&v)
            }
        };
        self.conds.insert(c, b.clone());
        b
    }
    fn within(&mut self, x: &BV, lo: i64, hi: i64) {
        let (l, h) = (self.k(lo), self.k(hi));
        self.side.push(x.bvsge(&l));
        self.side.push(x.bvsle(&h));
    }
    /// `2^e` on `0..=w-3`, else 0 (total; no constraint on `e`).
    fn pow2(&mut self, e: &BV) -> BV {
        let ok = Bool::and(&[e.bvsge(self.k(0)), e.bvsle(self.k(i64::from(self.w) - 3))]);
        ok.ite(&self.k(1).bvshl(e), &self.k(0))
    }
    /// `x % y` in `0..y`: the divider only outside -y..2y: most remainders of rank
    /// arithmetic (`(me - root + P) % P`) need none, which keeps the query small.
    fn modulo(&mut self, x: &Lin, y: &Lin) -> BV {
        let zero = self.k(0);
        let (x, y) = (self.lin(x), self.lin(y));
        let below = |v: &BV| Bool::and(&[v.bvsge(&zero), v.bvslt(&y)]);
        let (up, down) = (x.bvadd(&y), x.bvsub(&y));
        let far = if self.enc == Enc::Exact {
            x.bvsmod(&y)
        } else {
            let v = self.constant();
            self.side.push(v.bvsge(&zero));
            self.side.push(v.bvslt(&y));
            v
        };
        below(&x).ite(&x, &below(&up).ite(&up, &below(&down).ite(&down, &far)))
    }
    /// `lg(x)`: a fresh `k`, 0 for x <= 1, else 2^(k-1) < x <= 2^k.
    fn lg(&mut self, x: &BV) -> BV {
        let zero = self.k(0);
        let k = self.constant();
        let p = self.pow2(&k);
        let q = self.k(1).bvshl(k.bvsub(self.k(1)));
        let one = self.k(1);
        self.side.push(x.bvsle(&one).implies(k.eq(&zero)));
        self.side.push(
            x.bvsgt(&one)
                .implies(Bool::and(&[k.bvsge(&one), q.bvslt(x), x.bvsle(&p)])),
        );
        k
    }
    fn atom(&mut self, a: AtomId) -> BV {
        if let Some(x) = self.atoms.get(&a) {
            return x.clone();
        }
        let zero = self.k(0);
        let x = match self.s.atoms[a as usize].clone() {
            Atom::Param(v) => {
                let x = BV::new_const(self.p.var_name(v), self.w);
                if let Some((lo, hi)) = self.s.param_bounds.get(&v) {
                    self.within(&x, *lo, *hi);
                }
                self.params.insert(v, x.clone());
                x
            }
            Atom::Elem(arr, ..) => {
                let x = self.constant();
                let (lo, hi) = self.p.arrays[arr].domain;
                self.within(&x, lo, hi);
                x
            }
            Atom::Iter(n) => {
                let trip = self.s.loops[n as usize].trip.clone();
                let x = self.constant();
                let trip = self.lin(&trip);
                self.side.push(x.bvsge(&zero));
                self.side.push(x.bvslt(&trip));
                x
            }
            Atom::Mod(_, y) if self.enc == Enc::Coarse => {
                let y = self.lin(&y);
                let v = self.constant();
                self.side.push(v.bvsge(&zero));
                self.side.push(v.bvslt(&y));
                v
            }
            Atom::Mod(x, y) => self.modulo(&x, &y),
            Atom::Div(x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                x.bvsub(x.bvsmod(&y)).bvsdiv(&y)
            }
            Atom::CeilDiv(x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                let nx = x.bvneg();
                nx.bvsub(nx.bvsmod(&y)).bvsdiv(&y).bvneg()
            }
            Atom::Min(x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                x.bvsle(&y).ite(&x, &y)
            }
            Atom::Max(x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                x.bvsge(&y).ite(&x, &y)
            }
            Atom::Mul(x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                x.bvmul(&y)
            }
            Atom::Tri(x) => {
                let x = self.lin(&x);
                x.bvmul(x.bvsub(self.k(1))).bvsdiv(self.k(2))
            }
            Atom::Ind(g) => {
                let b = self.guard(&g);
                b.ite(&self.k(1), &zero)
            }
            Atom::Guarded(g, x) => {
                let b = self.guard(&g);
                let x = self.atom(x);
                b.ite(&x, &zero)
            }
            Atom::Bit(f, x, y) => {
                let (x, y) = (self.lin(&x), self.lin(&y));
                match f {
                    BitFn::Pow2 => self.pow2(&x),
                    BitFn::Lg => self.lg(&x),
                    BitFn::Xor => x.bvxor(&y),
                    BitFn::And => x.bvand(&y),
                    BitFn::Or => x.bvor(&y),
                    BitFn::Shl => x.bvshl(&y),
                    BitFn::Shr => x.bvashr(&y),
                }
            }
        };
        self.atoms.insert(a, x.clone());
        x
    }
}

/// The smallest width that keeps every term of the query within `±2^(w-3)` (then the
/// exponents of `pow2` and `lg` stay within the `0..=w-3` the encoding makes exact,
/// and sums of two terms, as the remainder's encoding forms, do not wrap); `None` when
/// no width up to 64 does. The asserted facts (assumptions, the path condition, the
/// negated property) form one conjunction.
fn width(s: &Syms, prop: &Prop, extra: &[CondId]) -> Option<u32> {
    let mut iv = Iv {
        s,
        memo: HashMap::new(),
        over: vec![HashMap::new()],
        max: 0,
    };
    match prop {
        Prop::Never(g) => {
            let mut all = extra.to_vec();
            all.extend_from_slice(g);
            iv.take_all(&all)?;
        }
        Prop::Ge0(l) | Prop::Eq0(l) => {
            iv.take_all(extra)?;
            iv.span(l)?;
        }
        Prop::Equiv(a, b) => {
            iv.take_all(extra)?;
            iv.cond(*a)?;
            iv.cond(*b)?;
        }
    }
    let bits = 128 - iv.max.leading_zeros();
    if bits + 3 <= 64 {
        Some((bits + 3).max(MIN_WIDTH))
    } else if iv.max < CAP {
        // Within `±2^62`: exact at 64 bits (the bounds keep `pow2` and `lg` below 62).
        Some(64)
    } else {
        None
    }
}

/// The narrowest bit-vector a query is posed over.
pub const MIN_WIDTH: u32 = 8;

/// How a query encodes remainders `x % y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Enc {
    /// A fresh value in `0..y` (an over-approximation: what it proves holds of the real
    /// remainders too).
    Coarse,
    /// Exact for `x` in `-y..2y`, a fresh value in `0..y` elsewhere (an
    /// over-approximation without a divider circuit, whose cost grows with the width).
    NoDivider,
    /// Exact (a divider outside `-y..2y`).
    Exact,
}

/// Answers of the bit-vector queries posed so far, by their Z3 term (the translation
/// names constants by position, so queries that differ only in fresh atoms meet).
/// Only decided answers are kept: an unknown depends on the limit it was posed with.
/// With them, the width-free queries' answers ([`super::bitlemma::Memo`]).
#[derive(Default)]
pub struct Cache(HashMap<(u32, Enc, String), Answer>, super::bitlemma::Memo);

/// Checks `assumptions ∧ extra ⇒ prop` as a bit-vector problem; `None` when the query
/// cannot be translated exactly (the caller uses the integer encoding). Remainders are
/// first abstracted to values in `0..divisor` (a quick proof of what does not depend
/// on them, within a small resource slice), then encoded exactly for arguments in
/// `-divisor..2*divisor` and abstracted outside (no divider circuit: the rank rotations
/// of rooted trees need no more, at a cost that grows far less with the width); only a
/// query neither proves is posed exactly.
pub fn check(
    cache: &mut Cache,
    p: &Protocol,
    s: &Syms,
    assumptions: &[CondId],
    extra: &[CondId],
    prop: &Prop,
    limit: Limit,
) -> Option<Answer> {
    // Width-free first: its cost does not grow with the bounds.
    if super::bitlemma::valid(&mut cache.1, p, s, assumptions, extra, prop) {
        return Some(Answer::Valid);
    }
    let q = Query {
        p,
        s,
        assumptions,
        extra,
        prop,
    };
    let has_mod = s.atoms.iter().any(|a| matches!(a, Atom::Mod(..)));
    if has_mod {
        let quick = Limit {
            rlimit: limit.rlimit.min(COARSE_RLIMIT),
            ..limit
        };
        if let Some(Answer::Valid) = pose(cache, &q, quick, Enc::Coarse) {
            return Some(Answer::Valid);
        }
        if let Some(Answer::Valid) = pose(cache, &q, limit, Enc::NoDivider) {
            return Some(Answer::Valid);
        }
    }
    pose(cache, &q, limit, Enc::Exact)
}

/// What one query asks: `assumptions ∧ extra ⇒ prop`.
struct Query<'a> {
    p: &'a Protocol,
    s: &'a Syms,
    assumptions: &'a [CondId],
    extra: &'a [CondId],
    prop: &'a Prop,
}

/// A solver that bit-blasts after Z3's cheap rewrites: the queries are small and posed
/// once, so the general solver's preprocessing (and its incremental core) costs more
/// than it saves — about half of the time of these queries in measurements. Complete
/// for QF_BV like the general one.
fn solver() -> Solver {
    let steps = [
        "simplify",
        "propagate-values",
        "solve-eqs",
        "elim-uncnstr",
        "simplify",
        "bit-blast",
        "sat",
    ];
    let mut t = Tactic::new(steps[0]);
    for s in &steps[1..] {
        t = t.and_then(&Tactic::new(s));
    }
    t.solver()
}

/// Resource slice (Z3 `rlimit` units) of the coarse attempt.
const COARSE_RLIMIT: u32 = 1_000_000;

fn pose(cache: &mut Cache, q: &Query, limit: Limit, enc: Enc) -> Option<Answer> {
    let (p, s, prop) = (q.p, q.s, q.prop);
    let mut all: Vec<CondId> = q.assumptions.to_vec();
    all.extend_from_slice(q.extra);
    let w = width(s, prop, &all)?;
    let mut tr = Tr {
        p,
        s,
        w,
        atoms: BTreeMap::new(),
        conds: BTreeMap::new(),
        side: Vec::new(),
        params: BTreeMap::new(),
        named: 0,
        enc,
    };
    let neg = match prop {
        Prop::Ge0(l) => tr.lin(l).bvslt(tr.k(0)),
        Prop::Eq0(l) => tr.lin(l).eq(tr.k(0)).not(),
        Prop::Never(g) => tr.guard(g),
        Prop::Equiv(a, b) => {
            let (x, y) = (tr.cond(*a), tr.cond(*b));
            x.eq(&y).not()
        }
    };
    let mut asserts: Vec<Bool> = all.iter().map(|c| tr.cond(*c)).collect();
    asserts.push(neg);
    asserts.extend(tr.side.iter().cloned());
    let key = (w, enc, Bool::and(&asserts).to_string());
    if let Some(a) = cache.0.get(&key) {
        return Some(a.clone());
    }
    let Some((params, limit_ms)) = crate::engine::smt::limit_params(limit) else {
        return Some(Answer::Unknown(
            Undecided::Clock,
            crate::engine::smt::CAP_HIT.into(),
        ));
    };
    let solver = solver();
    solver.set_params(&params);
    for a in &asserts {
        solver.assert(a);
    }
    let start = std::time::Instant::now();
    let at_start = crate::engine::smt::units(&solver);
    let answer = match solver.check() {
        SatResult::Unsat => Answer::Valid,
        SatResult::Sat => {
            let mut a = Assign::default();
            if let Some(m) = solver.get_model() {
                for (v, x) in &tr.params {
                    if let Some(val) = m.eval(x, true).and_then(|x| x.as_i64()) {
                        a.params.insert(*v, val);
                    }
                }
            }
            Answer::Refuted(a)
        }
        SatResult::Unknown => {
            let why = solver
                .get_reason_unknown()
                .unwrap_or_else(|| "unknown".into());
            let spent = crate::engine::smt::Spent {
                units: u64::from(crate::engine::smt::units(&solver).wrapping_sub(at_start)),
                rlimit: limit.rlimit,
                clock: Some((start.elapsed(), limit_ms)),
            };
            match crate::engine::smt::classify_unknown(&why, spent) {
                Undecided::Resources => Answer::Unknown(Undecided::Resources, format!(
                    "resource limit: Z3 gave up on a bit-vector query within its deterministic limit of {} resource units ({why})",
                    limit.rlimit
                )),
                Undecided::Clock => Answer::Unknown(
                    Undecided::Clock,
                    format!("timeout: Z3 gave up on a bit-vector query ({why})"),
                ),
                Undecided::Form => Answer::Unknown(
                    Undecided::Form,
                    format!("unsupported form: Z3 answered unknown on a bit-vector query ({why})"),
                ),
            }
        }
    };
    if !matches!(answer, Answer::Unknown(..)) {
        cache.0.insert(key, answer.clone());
    }
    Some(answer)
}
