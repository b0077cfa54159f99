//! Formulas in the world size P from per-configuration values: interpolate each
//! coefficient as a polynomial in P (degree ≤ 4), check it at *every* enumerated
//! point (so the formula is exact on the declared domain), and factor out common
//! roots for a readable form such as `P * (P - 1) * T`.

use collc_spec::ir::{Protocol, VarId};
use std::collections::BTreeMap;

/// One configuration's values and a printed-atom map (`atom -> coefficient`).
pub type Point = (Vec<(VarId, i64)>, BTreeMap<String, i64>);
type Series = BTreeMap<String, Vec<(i64, i64)>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rat(i128, i128);

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

impl Rat {
    fn new(n: i128, d: i128) -> Rat {
        let g = gcd(n, d).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Rat(s * n / g, s * d / g)
    }
    fn int(n: i128) -> Rat {
        Rat(n, 1)
    }
    fn add(self, o: Rat) -> Rat {
        Rat::new(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
    fn mul(self, o: Rat) -> Rat {
        Rat::new(self.0 * o.0, self.1 * o.1)
    }
    fn is_zero(self) -> bool {
        self.0 == 0
    }
}

type Poly = Vec<Rat>; // coefficient of x^i at i

fn eval(p: &Poly, x: i128) -> Rat {
    let mut acc = Rat::int(0);
    for c in p.iter().rev() {
        acc = acc.mul(Rat::int(x)).add(*c);
    }
    acc
}

fn interpolate(pts: &[(i64, i64)]) -> Option<Poly> {
    for deg in 0..=4usize.min(pts.len().saturating_sub(1)) {
        let base = &pts[..=deg];
        let mut poly: Poly = vec![Rat::int(0); deg + 1];
        for (i, (xi, yi)) in base.iter().enumerate() {
            // basis_i(x) = Π_{j≠i} (x - xj) / (xi - xj)
            let mut b: Poly = vec![Rat::int(1)];
            let mut den = Rat::int(1);
            for (j, (xj, _)) in base.iter().enumerate() {
                if i == j {
                    continue;
                }
                let mut nb = vec![Rat::int(0); b.len() + 1];
                for (k, c) in b.iter().enumerate() {
                    nb[k + 1] = nb[k + 1].add(*c);
                    nb[k] = nb[k].add(c.mul(Rat::int(-(*xj as i128))));
                }
                b = nb;
                den = den.mul(Rat::int((*xi - *xj) as i128));
            }
            let f = Rat::new(*yi as i128 * den.1, den.0);
            for (k, c) in b.iter().enumerate() {
                poly[k] = poly[k].add(c.mul(f));
            }
        }
        if pts
            .iter()
            .all(|(x, y)| eval(&poly, *x as i128) == Rat::int(*y as i128))
        {
            while poly.len() > 1 && poly.last().is_some_and(|c| c.is_zero()) {
                poly.pop();
            }
            return Some(poly);
        }
    }
    None
}

fn divide_root(p: &Poly, r: i128) -> Poly {
    // synthetic division by (x - r); assumes p(r) = 0
    let n = p.len();
    if n <= 1 {
        return vec![Rat::int(0)];
    }
    let mut q = vec![Rat::int(0); n - 1];
    let mut carry = Rat::int(0);
    for i in (1..n).rev() {
        carry = p[i].add(carry.mul(Rat::int(r)));
        q[i - 1] = carry;
    }
    q
}

fn rat_str(c: Rat) -> String {
    if c.1 == 1 {
        c.0.to_string()
    } else {
        format!("{}/{}", c.0, c.1)
    }
}

fn poly_str(p: &Poly, x: &str) -> String {
    let mut s = String::new();
    for (i, c) in p.iter().enumerate().rev() {
        if c.is_zero() {
            continue;
        }
        let neg = c.0 < 0;
        let mag = Rat(c.0.abs(), c.1);
        let mon = match i {
            0 => String::new(),
            1 => x.to_string(),
            _ => format!("{x}^{i}"),
        };
        let term = if mon.is_empty() {
            rat_str(mag)
        } else if mag == Rat::int(1) {
            mon
        } else {
            format!("{}*{mon}", rat_str(mag))
        };
        if s.is_empty() {
            if neg {
                s.push('-');
            }
        } else {
            s.push_str(if neg { " - " } else { " + " });
        }
        s.push_str(&term);
    }
    if s.is_empty() {
        "0".into()
    } else {
        s
    }
}

fn wrap(s: &str) -> String {
    if s.contains(' ') {
        format!("({s})")
    } else {
        s.to_string()
    }
}

/// A formula in `x` for one group of points: `key -> [(x, coefficient)]`.
pub fn fit(x: &str, series: &BTreeMap<String, Vec<(i64, i64)>>) -> Option<String> {
    let mut polys: BTreeMap<String, Poly> = BTreeMap::new();
    for (k, pts) in series {
        let p = interpolate(pts)?;
        if p.iter().any(|c| !c.is_zero()) {
            polys.insert(k.clone(), p);
        }
    }
    if polys.is_empty() {
        return Some("0".into());
    }
    let mut factors: Vec<String> = Vec::new();
    'outer: loop {
        for r in [0i128, 1, 2, 3, -1, 4, 5, 6, 7, 8] {
            let deg_ok = polys.values().all(|p| p.len() > 1);
            if deg_ok && polys.values().all(|p| eval(p, r).is_zero()) {
                for p in polys.values_mut() {
                    *p = divide_root(p, r);
                }
                factors.push(match r {
                    0 => x.to_string(),
                    r if r > 0 => format!("({x} - {r})"),
                    r => format!("({x} + {})", -r),
                });
                continue 'outer;
            }
        }
        break;
    }
    let mut terms: Vec<(bool, String)> = Vec::new();
    for (k, p) in &polys {
        let ps = poly_str(p, x);
        let (neg, body) = if p.len() == 1 && p[0].0 < 0 {
            (true, poly_str(&vec![Rat(-p[0].0, p[0].1)], x))
        } else {
            (false, ps)
        };
        let t = if k.is_empty() {
            body
        } else if body == "1" {
            k.clone()
        } else {
            format!("{}*{}", wrap(&body), wrap(k))
        };
        terms.push((neg, t));
    }
    // Non-constant-key terms first, constants last.
    terms.sort_by_key(|(_, t)| t.chars().next().is_some_and(|c| c.is_ascii_digit()));
    let mut rest = String::new();
    for (neg, t) in &terms {
        if rest.is_empty() {
            if *neg {
                rest.push('-');
            }
        } else {
            rest.push_str(if *neg { " - " } else { " + " });
        }
        rest.push_str(t);
    }
    if factors.is_empty() {
        return Some(rest);
    }
    let mut s = factors.join(" * ");
    if rest != "1" {
        s.push_str(" * ");
        s.push_str(&wrap(&rest));
    }
    Some(s)
}

/// Formula over the world size for per-configuration values (printed-atom maps),
/// one per group of the other enumerated parameters when they matter.
pub fn formula_over_world(p: &Protocol, points: &[Point]) -> String {
    let x = p.var_name(p.world);
    let mut groups: BTreeMap<Vec<(VarId, i64)>, Series> = BTreeMap::new();
    let mut keys: std::collections::BTreeSet<String> = Default::default();
    for (_, m) in points {
        keys.extend(m.keys().cloned());
    }
    for (cfg, m) in points {
        let w = cfg.iter().find(|c| c.0 == p.world).map_or(0, |c| c.1);
        let rest: Vec<(VarId, i64)> = cfg.iter().copied().filter(|c| c.0 != p.world).collect();
        let g = groups.entry(rest).or_default();
        for k in &keys {
            g.entry(k.clone())
                .or_default()
                .push((w, m.get(k).copied().unwrap_or(0)));
        }
    }
    // One formula for every group when the largest group's formula fits all points
    // (rank parameters have fewer points at small P), or when the groups of one other
    // parameter X scale as X times the X = 1 group.
    if groups.len() > 1 {
        if let Some((_, big)) = groups
            .iter()
            .max_by_key(|(_, s)| s.values().next().map_or(0, |v| v.len()))
        {
            let mut all: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
            for series in groups.values() {
                for (k, pts) in series {
                    all.entry(k.clone())
                        .or_default()
                        .extend(pts.iter().copied());
                }
            }
            let big_fit = fit(x, big);
            if big_fit.is_some() && fit_checks(big, &all) {
                return big_fit.unwrap_or_default();
            }
        }
        let one_param = groups.keys().all(|g| g.len() == 1)
            && groups
                .keys()
                .map(|g| g[0].0)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
                == 1;
        if one_param {
            let xv = groups.keys().next().map(|g| g[0].0).unwrap_or(0);
            if let Some(base) = groups.get(&vec![(xv, 1)]) {
                let scales = groups.iter().all(|(g, series)| {
                    series.iter().all(|(k, pts)| {
                        pts.iter().all(|(w, y)| {
                            base.get(k)
                                .and_then(|b| b.iter().find(|(bw, _)| bw == w))
                                .is_some_and(|(_, by)| *y == by * g[0].1)
                        })
                    })
                });
                if let (true, Some(f)) = (scales, fit(x, base)) {
                    let name = p.var_name(xv);
                    return if f == "1" {
                        name.to_string()
                    } else {
                        format!("{f} * {name}")
                    };
                }
            }
        }
    }
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (g, series) in &groups {
        let f = fit(x, series).unwrap_or_else(|| {
            let mut v: Vec<String> = Vec::new();
            let any = series.values().next().cloned().unwrap_or_default();
            for (i, (w, _)) in any.iter().enumerate() {
                let mut parts = Vec::new();
                for (k, pts) in series {
                    let c = pts[i].1;
                    if c != 0 {
                        parts.push(if k.is_empty() {
                            c.to_string()
                        } else {
                            format!("{c}*{k}")
                        });
                    }
                }
                v.push(format!(
                    "{x}={w}: {}",
                    if parts.is_empty() {
                        "0".into()
                    } else {
                        parts.join(" + ")
                    }
                ));
            }
            v.join("; ")
        });
        let label: Vec<String> = g
            .iter()
            .map(|(v, x)| format!("{} = {x}", p.var_name(*v)))
            .collect();
        out.entry(f).or_default().push(label.join(", "));
    }
    if out.len() == 1 {
        return out.into_keys().next().unwrap_or_default();
    }
    out.into_iter()
        .map(|(f, gs)| format!("{f} (for {})", gs.join("; ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// True when the polynomial fitted on `base` reproduces every point of `all`.
fn fit_checks(
    base: &BTreeMap<String, Vec<(i64, i64)>>,
    all: &BTreeMap<String, Vec<(i64, i64)>>,
) -> bool {
    for (k, pts) in all {
        let Some(b) = base.get(k) else {
            if pts.iter().all(|p| p.1 == 0) {
                continue;
            }
            return false;
        };
        let Some(poly) = interpolate(b) else {
            return false;
        };
        if !pts
            .iter()
            .all(|(x, y)| eval(&poly, *x as i128) == Rat::int(*y as i128))
        {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_review_figures() {
        let mut s = BTreeMap::new();
        s.insert(
            "T".to_string(),
            (1..=16).map(|p| (p, p * (p - 1))).collect(),
        );
        assert_eq!(fit("P", &s).as_deref(), Some("P * (P - 1) * T"));
        let mut s = BTreeMap::new();
        s.insert("T".to_string(), (1..=16).map(|p| (p, p - 1)).collect());
        s.insert(String::new(), (1..=16).map(|p| (p, 2 * (p - 1))).collect());
        assert_eq!(fit("P", &s).as_deref(), Some("(P - 1) * (T + 2)"));
    }
}
