//! The printed text of every cost formula means its value: each formula `collc cost`
//! prints (text and JSON) and each `cells per call` of the credit table
//! (`verify --explain`) is parsed back (with the language's integer semantics: `/` and
//! `%` floor, `ceil(a / b)`, `log2`, `pow2`, `min`, `max`, `^` exclusive or between
//! spaces and a power when written `x^k`, `[a == b]` and `[a < b]` 1 or 0) and
//! evaluated at several parameter assignments (world sizes 1, 2, 3, 5, 6, 8, 12, 16
//! where the domain allows, other parameters at several values of their domains,
//! respecting the `require`s); the value must equal the one the tool computes from
//! its internal formula. Over every example, bug fixture, cost fixture and step
//! fixture.

use collc_spec::ir::VarKind;
use collc_spec::Validated;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in [
        "examples",
        "examples/bugs",
        "collc/tests/cost_fixtures",
        "verifier/tests/step",
    ] {
        let here = common::coll_files(d);
        assert!(!here.is_empty(), "{d} holds fixtures");
        v.extend(here);
    }
    v
}

/// The protocol, when the file validates (a fixture of a rejected file has no cost).
fn protocol(path: &Path) -> Option<Validated> {
    let text = std::fs::read_to_string(path).ok()?;
    collc_spec::front(&collc_verifier::Ranges, &text).protocol
}

const WORLDS: [i64; 8] = [1, 2, 3, 5, 6, 8, 12, 16];

/// Up to four assignments at each world size the domain allows: parameter `k` of a
/// declared domain takes candidate `(i + k) % 6` of its own list (bounds, small
/// values, the middle), a rank parameter 0, 1 or `P - 1`; those a `require` rules out
/// are dropped.
fn cases(p: &Validated) -> Vec<BTreeMap<String, i64>> {
    let VarKind::World { lo, hi } = p.vars[p.world].kind else {
        return Vec::new();
    };
    let world = p.var_name(p.world).to_string();
    let mut out = Vec::new();
    for w in WORLDS.into_iter().filter(|w| (lo..=hi).contains(w)) {
        for i in 0..4 {
            let mut a = BTreeMap::from([(world.clone(), w)]);
            for (k, v) in p.inputs().into_iter().skip(1).enumerate() {
                let x = match p.vars[v].kind {
                    VarKind::Param { domain: None } => [0, 1, w - 1, w / 2][i].clamp(0, w - 1),
                    VarKind::Param {
                        domain: Some((lo, hi)),
                    } => {
                        let c = [lo, lo + 1, 3, 7, hi, lo + (hi - lo) / 2][(i + k) % 6];
                        c.clamp(lo, hi)
                    }
                    _ => continue,
                };
                a.insert(p.var_name(v).to_string(), x);
            }
            if collc_spec::eval::bind(p, &a).is_ok() && !out.contains(&a) {
                out.push(a);
            }
        }
    }
    out
}

// ---- a parser of the printed formula syntax, evaluating as it goes ----

struct Eval<'a> {
    s: &'a [u8],
    i: usize,
    env: &'a BTreeMap<String, i64>,
}

type R = Result<i64, String>;

impl Eval<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, t: &str) -> Result<(), String> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(format!("expected `{t}` at {}", self.i))
        }
    }
    fn err(&self, what: &str) -> String {
        format!(
            "{what} at {} in `{}`",
            self.i,
            String::from_utf8_lossy(self.s)
        )
    }
    fn expr(&mut self) -> R {
        let mut x = self.xor()?;
        while self.peek() == Some(b'|') {
            self.i += 1;
            x |= self.xor()?;
        }
        Ok(x)
    }
    /// `^` between spaces is exclusive or; `x^k` (no space before) is a power.
    fn xor(&mut self) -> R {
        let mut x = self.and()?;
        while self.peek() == Some(b'^') && self.i > 0 && self.s[self.i - 1] == b' ' {
            self.i += 1;
            x ^= self.and()?;
        }
        Ok(x)
    }
    fn and(&mut self) -> R {
        let mut x = self.sum()?;
        while self.peek() == Some(b'&') {
            self.i += 1;
            x &= self.sum()?;
        }
        Ok(x)
    }
    fn sum(&mut self) -> R {
        let mut x = self.term()?;
        loop {
            match self.peek() {
                Some(b'+') => {
                    self.i += 1;
                    x = x.checked_add(self.term()?).ok_or("overflow")?;
                }
                Some(b'-') => {
                    self.i += 1;
                    x = x.checked_sub(self.term()?).ok_or("overflow")?;
                }
                _ => return Ok(x),
            }
        }
    }
    fn term(&mut self) -> R {
        let mut x = self.unary()?;
        loop {
            match self.peek() {
                Some(b'*') => {
                    self.i += 1;
                    x = x.checked_mul(self.unary()?).ok_or("overflow")?;
                }
                Some(b'/') => {
                    self.i += 1;
                    let y = self.unary()?;
                    x = x
                        .checked_div_euclid(y)
                        .ok_or_else(|| self.err("division"))?;
                }
                Some(b'%') => {
                    self.i += 1;
                    let y = self.unary()?;
                    x = x
                        .checked_rem_euclid(y)
                        .ok_or_else(|| self.err("remainder"))?;
                }
                _ => return Ok(x),
            }
        }
    }
    fn unary(&mut self) -> R {
        if self.peek() == Some(b'-') {
            self.i += 1;
            return Ok(-self.unary()?);
        }
        let x = self.primary()?;
        // a power: `x^k` with no space before the caret
        if self.s.get(self.i) == Some(&b'^') {
            self.i += 1;
            let k = self.primary()?;
            return x
                .checked_pow(u32::try_from(k).map_err(|_| self.err("exponent"))?)
                .ok_or_else(|| "overflow".into());
        }
        Ok(x)
    }
    fn primary(&mut self) -> R {
        match self.peek() {
            Some(b'(') => {
                self.i += 1;
                let x = self.expr()?;
                self.expect(")")?;
                Ok(x)
            }
            Some(b'[') => {
                self.i += 1;
                let a = self.expr()?;
                let t = if self.eat("==") {
                    a == self.expr()?
                } else if self.eat("<") {
                    a < self.expr()?
                } else {
                    return Err(self.err("comparison"));
                };
                self.expect("]")?;
                Ok(i64::from(t))
            }
            Some(c) if c.is_ascii_digit() => {
                let st = self.i;
                while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[st..self.i])
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .ok_or_else(|| self.err("number"))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let st = self.i;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    self.i += 1;
                }
                let name = String::from_utf8_lossy(&self.s[st..self.i]).to_string();
                if self.s.get(self.i) == Some(&b'(') {
                    self.i += 1;
                    self.call(&name)
                } else {
                    self.env
                        .get(&name)
                        .copied()
                        .ok_or_else(|| self.err(&format!("unknown name `{name}`")))
                }
            }
            _ => Err(self.err("operand")),
        }
    }
    fn call(&mut self, f: &str) -> R {
        let x = match f {
            // ceil(a / b) and ceil(log2(x)), ceil(logK(x))
            "ceil" => {
                let save = self.i;
                let lg = ["log2(", "log3(", "log4(", "log8(", "log16("]
                    .into_iter()
                    .find(|l| self.eat(l));
                if let Some(l) = lg {
                    let b: i64 = l[3..l.len() - 1].parse().map_err(|_| "base")?;
                    let a = self.expr()?;
                    self.expect(")")?;
                    let (mut n, mut p) = (0, 1i64);
                    while p < a {
                        p = p.checked_mul(b).ok_or("overflow")?;
                        n += 1;
                    }
                    n
                } else {
                    self.i = save;
                    // `ceil(x / y)`: `x` a product (parenthesised when more)
                    let mut a = self.unary()?;
                    while self.peek() == Some(b'*') {
                        self.i += 1;
                        a = a.checked_mul(self.unary()?).ok_or("overflow")?;
                    }
                    self.expect("/")?;
                    let b = self.unary()?;
                    if b == 0 {
                        return Err(self.err("ceil of a division by zero"));
                    }
                    -((-a).div_euclid(b))
                }
            }
            "log2" => {
                let a = self.expr()?;
                if a < 1 || a & (a - 1) != 0 {
                    return Err(self.err(&format!("log2({a})")));
                }
                i64::from(a.trailing_zeros())
            }
            "pow2" => {
                let a = self.expr()?;
                1i64.checked_shl(u32::try_from(a).map_err(|_| "pow2")?)
                    .ok_or("overflow")?
            }
            "min" | "max" => {
                let mut x = self.expr()?;
                while self.eat(",") {
                    let y = self.expr()?;
                    x = if f == "min" { x.min(y) } else { x.max(y) };
                }
                x
            }
            _ => return Err(self.err(&format!("unknown function `{f}`"))),
        };
        self.expect(")")?;
        Ok(x)
    }
}

/// The value of printed formula `text` at `env`.
fn eval(text: &str, env: &BTreeMap<String, i64>) -> R {
    let mut e = Eval {
        s: text.as_bytes(),
        i: 0,
        env,
    };
    let x = e.expr()?;
    e.ws();
    if e.i != text.len() {
        return Err(e.err("trailing text"));
    }
    Ok(x)
}

/// `env` with the top-level `let`s and constants given their values too.
fn full_env(p: &Validated, a: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    let mut env = a.clone();
    if let Ok(b) = collc_spec::eval::bind(p, a) {
        for (var, x) in p.vars.iter().zip(&b.env.values) {
            if let Some(x) = x {
                env.entry(var.name.clone()).or_insert(*x);
            }
        }
    }
    env
}

fn collc(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .output()
        .expect("run collc");
    assert!(out.status.success(), "collc {args:?}: {:?}", out);
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn the_parser_reads_the_printed_syntax() {
    let env = BTreeMap::from([("P".to_string(), 6), ("G".to_string(), 4)]);
    let e = |t: &str| eval(t, &env).unwrap_or_else(|e| panic!("{t}: {e}"));
    assert_eq!(e("P * (P - 1) / 2"), 15);
    assert_eq!(e("2*P^2 - 3"), 69);
    assert_eq!(e("(P - 1)^2"), 25);
    assert_eq!(e("P ^ G"), 2);
    assert_eq!(e("ceil(P / G) + P / G + P % G"), 5);
    assert_eq!(e("ceil(log2(P)) + log2(G) + pow2(G)"), 21);
    assert_eq!(e("-P - 2 * G + [P == 6] - [G < 4]"), -13);
    assert_eq!(e("min(P, G) + max(0, G - P)"), 4);
    assert_eq!(e("-(P % G) + (P & G) + (P | 1)"), 9);
    assert!(eval("P +", &env).is_err());
    assert!(eval("log2(P)", &env).is_err());
}

#[test]
fn printed_cost_formulas_evaluate_to_the_tools_values() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for f in files() {
        let Some(p) = protocol(&f) else { continue };
        let Ok(sym) = collc_verifier::cost::cost(&p, &BTreeMap::new()) else {
            continue;
        };
        let path = f.to_string_lossy().to_string();
        // the command's text and JSON print the library's formulas
        let text = collc(&["cost", &path]);
        let json: serde_json::Value =
            serde_json::from_str(&collc(&["cost", &path, "--format", "json"])).expect("json");
        for (k, r) in sym.rows.iter().enumerate() {
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(&r.what))
                .unwrap_or_else(|| panic!("{path}: no `{}` line in\n{text}", r.what));
            let shown = line.trim_start()[r.what.len()..].trim();
            assert_eq!(shown, r.formula, "{path}: text output");
            assert_eq!(
                json["rows"][k]["formula"].as_str(),
                Some(r.formula.as_str()),
                "{path}: JSON output"
            );
        }
        for a in cases(&p) {
            let c = collc_verifier::cost::cost(&p, &a).expect("cost");
            let env = full_env(&p, &a);
            for r in &c.rows {
                if r.formula.starts_with("no closed form") {
                    continue;
                }
                let Some(want) = r.value else {
                    failures.push(format!("{path}: {} has no value at {a:?}", r.what));
                    continue;
                };
                match eval(&r.formula, &env) {
                    Ok(got) if got == want => checked += 1,
                    got => failures.push(format!(
                        "{path}: {} `{}` at {a:?}: printed gives {got:?}, the tool {want}",
                        r.what, r.formula
                    )),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 1000, "{checked}");
}

#[test]
fn printed_cells_per_call_evaluate_to_the_tools_values() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for f in files() {
        let Some(p) = protocol(&f) else { continue };
        let Ok(t) = collc_verifier::table::explain(&p) else {
            continue;
        };
        let path = f.to_string_lossy().to_string();
        for a in cases(&p) {
            let env = full_env(&p, &a);
            let cfg: Vec<_> = p
                .inputs()
                .into_iter()
                .filter_map(|v| Some((v, *a.get(p.var_name(v))?)))
                .collect();
            for r in &t.rows {
                let Some(x) = &r.cells_count else { continue };
                let Some(want) = collc_verifier::cost::value_at(&p, x, &cfg) else {
                    continue; // a variable the formula reads has no value here
                };
                match eval(&r.cells, &env) {
                    Ok(got) if got == want => checked += 1,
                    got => failures.push(format!(
                        "{path}: {} cells `{}` at {a:?}: printed gives {got:?}, the tool {want}",
                        r.signal, r.cells
                    )),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 200, "{checked}");
}
