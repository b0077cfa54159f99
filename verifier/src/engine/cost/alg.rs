//! The algebra of cost formulas: polynomials with rational coefficients over atoms
//! (protocol variables, `ceil`/`min`/`max`/`/`/`%`, powers, `log2`, `ceil(log_b)`
//! and bit operations of polynomials, and 0/1 indicators of comparisons), with
//! substitution and concrete evaluation.

use collc_spec::ir::VarId;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A rational number (denominator positive, reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rat(pub i128, pub i128);

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

impl Rat {
    /// `n / d` reduced (`d != 0`).
    pub fn new(n: i128, d: i128) -> Rat {
        let g = gcd(n, d).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Rat(s * n / g, s * d / g)
    }
    /// An integer.
    pub fn int(n: i128) -> Rat {
        Rat(n, 1)
    }
    /// Whether zero.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// `-self` when that is positive.
    pub fn scale_neg(self) -> Option<Rat> {
        (self.0 < 0).then_some(Rat(-self.0, self.1))
    }
    /// The integer value, if integral.
    pub fn as_int(self) -> Option<i128> {
        (self.1 == 1).then_some(self.0)
    }
}

impl std::ops::Add for Rat {
    type Output = Rat;
    fn add(self, o: Rat) -> Rat {
        Rat::new(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
}

impl std::ops::Mul for Rat {
    type Output = Rat;
    fn mul(self, o: Rat) -> Rat {
        Rat::new(self.0 * o.0, self.1 * o.1)
    }
}

/// An integer function of polynomials that has no polynomial form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fun {
    /// `ceil(a / b)`
    CeilDiv,
    /// `a / b` (floor)
    Div,
    /// `a % b` (Euclidean)
    Mod,
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
    /// `a^b` (`b >= 0`; `pow2(b)` for `a = 2`)
    Pow,
    /// `log2(a)` of a power of two `a` (the language's exact `log2`)
    Log2,
    /// `ceil(log_b(a))`: the least `L >= 0` with `b^L >= a` (0 for `a <= 1`), `b >= 2`
    CeilLog,
    /// `a ^ b` (bitwise exclusive or)
    Xor,
    /// `a & b`
    And,
    /// `a | b`
    Or,
}

/// A 0/1 indicator's test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Test {
    /// `d == 0`
    Eq0,
    /// `d < 0`
    Lt0,
}

/// A factor of a monomial.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Atom {
    /// A protocol variable (world size, parameter, top-level `let`, `me`, block
    /// index, loop variable), or a summation index (ids past the protocol's).
    Var(VarId),
    /// A function of polynomials.
    Fun(Fun, Vec<Poly>),
    /// `1` when the test holds of the polynomial, else `0`.
    Ind(Test, Poly),
}

/// A monomial: atoms in order, with repetition for powers (indicators appear once).
pub type Mono = Vec<Atom>;

/// A polynomial: monomial -> non-zero coefficient.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly(pub BTreeMap<Mono, Rat>);

impl PartialOrd for Poly {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Poly {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.iter().cmp(o.0.iter())
    }
}

impl Poly {
    /// A constant.
    pub fn k(c: i128) -> Poly {
        Poly::rat(Rat::int(c))
    }
    /// A rational constant.
    pub fn rat(c: Rat) -> Poly {
        let mut m = BTreeMap::new();
        if !c.is_zero() {
            m.insert(Vec::new(), c);
        }
        Poly(m)
    }
    /// One atom.
    pub fn atom(a: Atom) -> Poly {
        let mut m = BTreeMap::new();
        m.insert(vec![a], Rat::int(1));
        Poly(m)
    }
    /// A variable.
    pub fn var(v: VarId) -> Poly {
        Poly::atom(Atom::Var(v))
    }
    /// Whether zero.
    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    /// The constant value, if constant.
    pub fn as_const(&self) -> Option<Rat> {
        match self.0.len() {
            0 => Some(Rat::int(0)),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }
    /// Sum.
    pub fn add(&self, o: &Poly) -> Poly {
        let mut m = self.0.clone();
        for (k, c) in &o.0 {
            let e = m.entry(k.clone()).or_insert(Rat::int(0));
            *e = *e + *c;
            if e.is_zero() {
                m.remove(k);
            }
        }
        Poly(m)
    }
    /// Difference.
    pub fn sub(&self, o: &Poly) -> Poly {
        self.add(&o.scale(Rat::int(-1)))
    }
    /// Times a constant.
    pub fn scale(&self, c: Rat) -> Poly {
        if c.is_zero() {
            return Poly::default();
        }
        Poly(self.0.iter().map(|(k, v)| (k.clone(), *v * c)).collect())
    }
    /// Product.
    pub fn mul(&self, o: &Poly) -> Poly {
        let mut out = Poly::default();
        for (a, x) in &self.0 {
            for (b, y) in &o.0 {
                let mut m: Mono = a.clone();
                for at in b {
                    if matches!(at, Atom::Ind(..)) && m.contains(at) {
                        continue; // indicators are idempotent
                    }
                    m.push(at.clone());
                }
                m.sort();
                let mut t = BTreeMap::new();
                t.insert(m, *x * *y);
                out = out.add(&Poly(t));
            }
        }
        out
    }
    /// `1 - self`.
    pub fn not(&self) -> Poly {
        Poly::k(1).sub(self)
    }
    /// Whether variable `v` occurs anywhere (also inside functions and indicators).
    pub fn mentions(&self, v: VarId) -> bool {
        self.0.keys().any(|m| m.iter().any(|a| a.mentions(v)))
    }
    /// Whether some monomial, here or inside a function or indicator, multiplies two or
    /// more atoms: the nonlinear forms (`P * max(0, G - 1)`) Z3's arithmetic may leave
    /// undecided.
    pub fn has_product(&self) -> bool {
        self.0
            .keys()
            .any(|m| m.len() >= 2 || m.iter().any(|a| a.operands().iter().any(Poly::has_product)))
    }
    /// Replaces variable `v` by `by` everywhere; functions and indicators are
    /// rebuilt through `mk` (which simplifies them).
    pub fn subst(&self, v: VarId, by: &Poly, mk: &dyn Fn(Atom) -> Poly) -> Poly {
        if !self.mentions(v) {
            return self.clone();
        }
        let mut out = Poly::default();
        for (m, c) in &self.0 {
            let mut t = Poly::rat(*c);
            for a in m {
                let f = match a {
                    Atom::Var(x) if *x == v => by.clone(),
                    Atom::Var(_) => Poly::atom(a.clone()),
                    Atom::Fun(f, args) => mk(Atom::Fun(
                        *f,
                        args.iter().map(|x| x.subst(v, by, mk)).collect(),
                    )),
                    Atom::Ind(t, d) => mk(Atom::Ind(*t, d.subst(v, by, mk))),
                };
                t = t.mul(&f);
            }
            out = out.add(&t);
        }
        out
    }
    /// The degree in variable `v` and the coefficients by power, when `v` occurs
    /// only as a plain factor (never inside a function or indicator).
    pub fn coefficients_in(&self, v: VarId) -> Option<Vec<Poly>> {
        let mut out: Vec<Poly> = Vec::new();
        for (m, c) in &self.0 {
            let mut k = 0usize;
            let mut rest: Mono = Vec::new();
            for a in m {
                match a {
                    Atom::Var(x) if *x == v => k += 1,
                    a if a.mentions(v) => return None,
                    a => rest.push(a.clone()),
                }
            }
            while out.len() <= k {
                out.push(Poly::default());
            }
            let mut t = BTreeMap::new();
            t.insert(rest, *c);
            out[k] = out[k].add(&Poly(t));
        }
        Some(out)
    }
    /// Evaluates, given values of the variables.
    pub fn eval(&self, val: &dyn Fn(VarId) -> Option<i64>) -> Option<Rat> {
        let mut acc = Rat::int(0);
        for (m, c) in &self.0 {
            let mut t = *c;
            for a in m {
                t = t * Rat::int(a.eval(val)? as i128);
            }
            acc = acc + t;
        }
        Some(acc)
    }
}

impl Atom {
    /// The polynomials the atom is made of: a function's arguments, an indicator's
    /// tested polynomial, none for a variable.
    pub fn operands(&self) -> &[Poly] {
        match self {
            Atom::Var(_) => &[],
            Atom::Fun(_, args) => args,
            Atom::Ind(_, d) => std::slice::from_ref(d),
        }
    }
    /// Whether variable `v` occurs in the atom.
    pub fn mentions(&self, v: VarId) -> bool {
        match self {
            Atom::Var(x) => *x == v,
            _ => self.operands().iter().any(|a| a.mentions(v)),
        }
    }
    /// Evaluates, given values of the variables (the protocol's integer semantics).
    pub fn eval(&self, val: &dyn Fn(VarId) -> Option<i64>) -> Option<i64> {
        let int = |p: &Poly| -> Option<i64> { i64::try_from(p.eval(val)?.as_int()?).ok() };
        match self {
            Atom::Var(v) => val(*v),
            Atom::Fun(Fun::Log2, args) => collc_spec::eval::log2(int(args.first()?)?).ok(),
            Atom::Fun(f, args) => {
                let a = int(args.first()?)?;
                let b = int(args.get(1)?)?;
                match f {
                    Fun::Pow => a.checked_pow(u32::try_from(b).ok()?),
                    Fun::CeilLog if b >= 2 => {
                        let (mut l, mut x) = (0i64, 1i64);
                        while x < a {
                            l += 1;
                            x = x.checked_mul(b)?;
                        }
                        Some(l)
                    }
                    Fun::Xor => Some(a ^ b),
                    Fun::And => Some(a & b),
                    Fun::Or => Some(a | b),
                    Fun::CeilDiv if b != 0 => collc_spec::eval::ceil_div(a, b),
                    Fun::Div if b != 0 => a.checked_div_euclid(b),
                    Fun::Mod if b != 0 => a.checked_rem_euclid(b),
                    Fun::Min => Some(a.min(b)),
                    Fun::Max => Some(a.max(b)),
                    _ => None,
                }
            }
            Atom::Ind(t, d) => {
                let x = d.eval(val)?;
                Some(i64::from(match t {
                    Test::Eq0 => x.is_zero(),
                    Test::Lt0 => x.0 < 0,
                }))
            }
        }
    }
}
