//! Cost formulas as text, with the protocol's own names, factored for reading:
//! the common numeric and atomic factors, then roots of the world size
//! (`P * (P - 1) * (T + 1)`, `2 * P * (P - 1)`).

use super::alg::{Atom, Fun, Mono, Poly, Rat, Test};
use collc_spec::ir::{Protocol, VarId};
use std::collections::BTreeMap;

/// Names of variables (summation indices print as `j`).
pub struct Names<'a> {
    /// The protocol.
    pub p: &'a Protocol,
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

fn wrap(s: String) -> String {
    if s.contains(' ') {
        format!("({s})")
    } else {
        s
    }
}

/// A power's base: in parentheses when an operator outside parentheses would bind
/// it loosely (`(P - 1)^2`, `(2*P)^2`; not `min(P, G)^2`).
fn wrap_base(s: String) -> String {
    if top_level(&s, &["+", "-", "*", "/", "%", "^", "&", "|"]) || s.starts_with('-') {
        format!("({s})")
    } else {
        s
    }
}

/// An atom's text as a factor of a product: parentheses around `%`, `/` and the bit
/// operations (`2*(x % y)`, `T*(a ^ b)`).
fn factor(a: &Atom, s: String) -> String {
    match a {
        Atom::Fun(Fun::Mod | Fun::Div | Fun::Xor | Fun::And | Fun::Or, _) => format!("({s})"),
        _ => s,
    }
}

fn wrap_product(s: String) -> String {
    if s.contains(' ') || s.contains('*') || s.contains('/') {
        format!("({s})")
    } else {
        s
    }
}

impl Names<'_> {
    /// A variable's name.
    pub fn var(&self, v: VarId) -> String {
        self.p
            .vars
            .get(v.index())
            .map_or_else(|| "j".into(), |x| x.name.clone())
    }

    /// An atom.
    pub fn atom(&self, a: &Atom) -> String {
        match a {
            Atom::Var(v) => self.var(*v),
            Atom::Fun(f, args) => {
                let x = args.first().map(|x| self.sum(x)).unwrap_or_default();
                let y = args.get(1).map(|x| self.sum(x)).unwrap_or_default();
                match f {
                    Fun::Pow if y == "1" => x,
                    Fun::Pow if x == "2" => format!("pow2({y})"),
                    Fun::Pow => format!("{}^{}", wrap_product(x), wrap_product(y)),
                    Fun::Log2 => format!("log2({x})"),
                    Fun::CeilLog if y == "2" => format!("ceil(log2({x}))"),
                    Fun::CeilLog => format!("ceil(log{y}({x}))"),
                    Fun::Xor => format!("{} ^ {}", wrap(x), wrap(y)),
                    Fun::And => format!("{} & {}", wrap(x), wrap(y)),
                    Fun::Or => format!("{} | {}", wrap(x), wrap(y)),
                    Fun::CeilDiv => format!("ceil({} / {})", wrap(x), wrap_product(y)),
                    Fun::Div => format!("{} / {}", wrap(x), wrap_product(y)),
                    Fun::Mod => format!("{} % {}", wrap(x), wrap_product(y)),
                    Fun::Min => format!("min({x}, {y})"),
                    Fun::Max => format!("max({x}, {y})"),
                }
            }
            Atom::Ind(t, d) => {
                // positive terms on the left, the rest on the right
                let (mut l, mut r) = (Poly::default(), Poly::default());
                for (m, c) in &d.0 {
                    let mut one = BTreeMap::new();
                    let right = match t {
                        Test::Eq0 => m.is_empty(),
                        Test::Lt0 => c.0 < 0,
                    };
                    if right {
                        one.insert(m.clone(), Rat(-c.0, c.1));
                        r = r.add(&Poly(one));
                    } else {
                        one.insert(m.clone(), *c);
                        l = l.add(&Poly(one));
                    }
                }
                let op = match t {
                    Test::Eq0 => "==",
                    Test::Lt0 => "<",
                };
                format!("[{} {op} {}]", self.sum(&l), self.sum(&r))
            }
        }
    }

    fn mono(&self, m: &Mono) -> String {
        self.product(m, false)
    }

    /// A monomial; with `scaled` (a coefficient before it) or more than one factor,
    /// the factors that are `%`, `/` or bit operations in parentheses.
    fn product(&self, m: &Mono, scaled: bool) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        let several = scaled || m.iter().any(|a| *a != m[0]);
        while i < m.len() {
            let mut k = 1;
            while i + k < m.len() && m[i + k] == m[i] {
                k += 1;
            }
            let a = self.atom(&m[i]);
            parts.push(if k == 1 && several {
                factor(&m[i], a)
            } else if k == 1 {
                a
            } else {
                format!("{}^{k}", wrap_base(a))
            });
            i += k;
        }
        parts.join("*")
    }

    /// A polynomial as a plain sum (highest degree first, the constant last).
    pub fn sum(&self, x: &Poly) -> String {
        let mut terms: Vec<(&Mono, &Rat)> = x.0.iter().collect();
        terms.sort_by_key(|(m, _)| (m.is_empty(), std::cmp::Reverse(m.len())));
        let mut s = String::new();
        for (m, c) in terms {
            let neg = c.0 < 0;
            let mag = Rat(c.0.abs(), c.1);
            let num = if mag.1 == 1 {
                mag.0.to_string()
            } else {
                format!("{}/{}", mag.0, mag.1)
            };
            // `-(x % y)`, and `x + (y ^ z)`: `^ & |` bind looser than `+ -`
            let loose = match m.as_slice() {
                [Atom::Fun(Fun::Xor | Fun::And | Fun::Or, _)] => x.0.len() > 1 || neg,
                [Atom::Fun(Fun::Mod | Fun::Div, _)] => neg && s.is_empty(),
                _ => false,
            };
            let t = if m.is_empty() {
                num
            } else if mag == Rat::int(1) && loose {
                format!("({})", self.mono(m))
            } else if mag == Rat::int(1) {
                self.mono(m)
            } else {
                format!("{num}*{}", self.product(m, true))
            };
            if s.is_empty() {
                if neg {
                    s.push('-');
                }
            } else {
                s.push_str(if neg { " - " } else { " + " });
            }
            s.push_str(&t);
        }
        if s.is_empty() {
            "0".into()
        } else {
            s
        }
    }

    /// A polynomial in normal form ([`super::normal`]: equal formulas print equal),
    /// each `min`/`max` in its shortest form, factored for reading.
    pub fn formula(&self, x: &Poly) -> String {
        self.layout(&self.shown(x))
    }

    /// The polynomial [`Names::formula`] prints: `x` in normal form, each ramp folded
    /// to its shortest printed form.
    pub fn shown(&self, x: &Poly) -> Poly {
        let w = super::walk::Walk::new(self.p, 0);
        let n = super::normal::normal(x, &|y| w.range(y));
        super::normal::fold(&n, &|y| self.layout(y).len())
    }

    /// A polynomial factored for reading; terms under an indicator follow the
    /// factored rest as a plain sum.
    fn layout(&self, x: &Poly) -> String {
        let (ind, plain): (BTreeMap<Mono, Rat>, BTreeMap<Mono, Rat>) =
            x.0.iter()
                .map(|(m, c)| (m.clone(), *c))
                .partition(|(m, _)| m.iter().any(|a| matches!(a, Atom::Ind(..))));
        let mut s = self.factored(&Poly(plain));
        if !ind.is_empty() {
            let tail = self.sum(&Poly(ind));
            if s == "0" {
                return tail;
            }
            if top_level(&s, &["^", "&", "|"]) {
                s = format!("({s})");
            }
            match tail.strip_prefix('-') {
                Some(t) => s = format!("{s} - {t}"),
                None => s = format!("{s} + {tail}"),
            }
        }
        s
    }

    fn by_groups(&self, x: &Poly) -> Option<String> {
        let world = Atom::Var(self.p.world);
        let mut groups: BTreeMap<Mono, Poly> = BTreeMap::new();
        for (m, c) in &x.0 {
            let key: Mono = m.iter().filter(|a| **a != world).cloned().collect();
            let mut t = BTreeMap::new();
            t.insert(m.clone(), *c);
            let g = groups.entry(key).or_default();
            *g = g.add(&Poly(t));
        }
        if groups.len() < 2 {
            return None;
        }
        // the pure-P group first, constants last
        let mut gs: Vec<(Mono, Poly)> = groups.into_iter().collect();
        gs.sort_by_key(|(k, g)| (g.0.keys().all(|m| m.is_empty()), !k.is_empty()));
        let mut s = String::new();
        for (_, g) in gs {
            let f = self.factored(&g);
            let (neg, body) = match f.strip_prefix('-') {
                Some(b) => (true, b.to_string()),
                None => (false, f),
            };
            // a group that is a sum keeps its terms together after a minus: `- (P - G)`
            let body = if top_level(&body, &["^", "&", "|"]) || neg && top_level(&body, &["+", "-"])
            {
                format!("({body})")
            } else {
                body
            };
            if s.is_empty() {
                s = if neg { format!("-{body}") } else { body };
            } else {
                s.push_str(if neg { " - " } else { " + " });
                s.push_str(&body);
            }
        }
        Some(s)
    }

    fn factored(&self, x: &Poly) -> String {
        if x.is_zero() {
            return "0".into();
        }
        let world = self.p.world;
        let (c, common, mut rest) = content(x);
        let mut roots: Vec<i128> = Vec::new();
        'outer: loop {
            for r in [1i128, 2, -1, 3, 4] {
                if let Some(q) = divide_root(&rest, world, r) {
                    roots.push(r);
                    rest = q;
                    continue 'outer;
                }
            }
            break;
        }
        let (c2, common2, rest) = content(&rest);
        let c = c * c2;
        let mut atoms: Mono = common.into_iter().chain(common2).collect();
        atoms.sort();
        let mut parts: Vec<String> = Vec::new();
        let minus = c.0 == -1;
        if c.0 != 1 && !minus {
            parts.push(c.0.to_string());
        }
        let pw = atoms.iter().filter(|a| **a == Atom::Var(world)).count();
        if pw > 0 {
            parts.push(self.mono(&vec![Atom::Var(world); pw]));
        }
        let mut i = 0;
        while i < roots.len() {
            let r = roots[i];
            let k = roots[i..].iter().take_while(|x| **x == r).count();
            let n = self.var(world);
            let f = if r > 0 {
                format!("({n} - {r})")
            } else {
                format!("({n} + {})", -r)
            };
            parts.push(if k == 1 { f } else { format!("{f}^{k}") });
            i += k;
        }
        let others: Mono = atoms
            .into_iter()
            .filter(|a| *a != Atom::Var(world))
            .collect();
        if !others.is_empty() {
            parts.push(self.mono(&others));
        }
        if parts.is_empty() && c.1 == 1 {
            // Nothing factors out of the whole: factor the terms over each set of
            // atoms other than P apart (`P * (P - 1) + 2*ceil(P / G)`). The content is
            // 1 or -1 here; with -1, `rest` is `-x`, so the groups are those of `x`.
            let whole = if minus { x } else { &rest };
            return self.by_groups(whole).unwrap_or_else(|| self.sum(whole));
        }
        if rest != Poly::k(1) || parts.is_empty() {
            parts.push(wrap(self.sum(&rest)));
        }
        if let [one] = parts.as_slice() {
            // a lone factor needs no parentheses: `P - 1`
            if c.1 == 1 && !minus && one.starts_with('(') && one.ends_with(')') {
                let inner = &one[1..one.len() - 1];
                if !inner.contains('(') {
                    return inner.to_string();
                }
            }
        }
        if parts.len() > 1 || minus || c.1 != 1 {
            for part in &mut parts {
                if top_level(part, &["+", "-", "/", "%", "^", "&", "|"]) {
                    *part = format!("({part})");
                }
            }
        }
        let mut s = parts.join(" * ");
        if minus {
            s = format!("-{s}");
        }
        if c.1 != 1 {
            s = format!("{s} / {}", c.1);
        }
        s
    }
}

/// Whether `s` has one of the binary operators `ops` outside parentheses and
/// brackets (written between spaces: ` - `, ` * `, ` ^ `; a product `2*P` counts as
/// `*`, a power `P^2` never).
fn top_level(s: &str, ops: &[&str]) -> bool {
    let mut depth = 0i32;
    let b = s.as_bytes();
    for (i, c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            _ if depth != 0 => {}
            b'*' if ops.contains(&"*") => return true,
            _ if i > 0 && b[i - 1] == b' ' && b.get(i + 1) == Some(&b' ') => {
                let op = std::str::from_utf8(&b[i..i + 1]).unwrap_or_default();
                if ops.contains(&op) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// `x = c * common * rest` with `c` the rational content (sign of the first term)
/// and `common` the atoms every term shares.
fn content(x: &Poly) -> (Rat, Mono, Poly) {
    let mut num = 0i128;
    let mut den = 1i128;
    for c in x.0.values() {
        num = gcd(num, c.0);
        den = den / gcd(den, c.1) * c.1;
    }
    let lead = x.0.iter().max_by_key(|(m, _)| m.len()).map(|(_, c)| *c);
    let c = if lead.is_some_and(|c| c.0 < 0) {
        Rat::new(-num.max(1), den)
    } else {
        Rat::new(num.max(1), den)
    };
    let mut common: Option<Mono> = None;
    for m in x.0.keys() {
        common = Some(match common {
            None => m.clone(),
            Some(cm) => {
                let mut left = m.clone();
                let mut keep = Vec::new();
                for a in cm {
                    if let Some(i) = left.iter().position(|b| *b == a) {
                        left.remove(i);
                        keep.push(a);
                    }
                }
                keep
            }
        });
    }
    let common = common.unwrap_or_default();
    let inv = Rat::new(c.1, c.0);
    let rest = Poly(
        x.0.iter()
            .map(|(m, v)| {
                let mut left = m.clone();
                for a in &common {
                    if let Some(i) = left.iter().position(|b| b == a) {
                        left.remove(i);
                    }
                }
                (left, *v * inv)
            })
            .collect(),
    );
    (c, common, rest)
}

/// `x / (v - r)` when `v` occurs only as a plain factor, with degree ≥ 1, and
/// `x` vanishes at `v = r`.
fn divide_root(x: &Poly, v: VarId, r: i128) -> Option<Poly> {
    let cs = x.coefficients_in(v)?;
    if cs.len() < 2 {
        return None;
    }
    let mut carry = Poly::default();
    let mut q = vec![Poly::default(); cs.len() - 1];
    for i in (1..cs.len()).rev() {
        carry = cs[i].add(&carry.scale(Rat::int(r)));
        q[i - 1] = carry.clone();
    }
    // remainder
    if !cs[0].add(&carry.scale(Rat::int(r))).is_zero() {
        return None;
    }
    let mut out = Poly::default();
    let mut pw = Poly::k(1);
    for qi in q {
        out = out.add(&qi.mul(&pw));
        pw = pw.mul(&Poly::var(v));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A formula whose first term is negative and which nothing factors: every term
    /// keeps its sign (the content -1 is not dropped).
    #[test]
    fn a_negative_sum_that_does_not_factor_keeps_its_signs() {
        let text = "collective barrier: barrier() {\n    ranks P in 1..=16;\n    param G: int in 1..=8;\n    signal s[P];\n    body {\n        notify s[me] += 1;\n        wait s[me] >= 1;\n        notify s[me] -= 1;\n    }\n}\n";
        let c = collc_spec::front(&crate::Ranges, text);
        let Some(p) = c.protocol else {
            panic!("validates: {:?}", c.diagnostics)
        };
        let g = p.vars.iter().position(|v| v.name == "G").expect("G");
        let names = Names { p: &p };
        let pp = Poly::var(p.world);
        let gg = Poly::var(collc_spec::ir::Id::new(g));
        let x = Poly::k(0).sub(&pp).sub(&gg.scale(Rat::int(2)));
        assert_eq!(names.formula(&x), "-P - 2 * G");
        assert_eq!(names.formula(&x.scale(Rat::int(-1))), "P + 2 * G");
        let y = Poly::k(3).sub(&pp.mul(&gg));
        assert_eq!(names.formula(&y), "-P * G + 3");
    }
}
