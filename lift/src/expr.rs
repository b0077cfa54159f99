//! Integer expressions and conditions recovered from C++, printed as `.coll`.
//!
//! Accepted: integer literals, names the lifter has bound (parameters, constants, `let`s,
//! loop variables, `me`, the block index), `+ - * / %`, unary `-`, parentheses, `static_cast`
//! (dropped: every value is an integer), `collc_div`/`collc_mod`/`collc_ceil_div`/
//! `collc_min`/`collc_max`, `a < b ? a : b` (min) and `a > b ? a : b` (max),
//! `collc_shl`/`collc_shr` (`<<`/`>>`; `collc_shl(1, k)` is `pow2(k)`), `collc_log2`
//! (`log2`), `& ^ |`,
//! `ctx->rankId` (`me`), host-array elements `a[i]`. Anything else is an error naming it.

use crate::cpp::{self, call, field, kids, text, unsupported};
use collc_grammar::Diagnostic;
use std::collections::BTreeMap;
use tree_sitter::Node;

/// An integer expression in `.coll` terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum E {
    /// A literal.
    Int(i64),
    /// A name.
    Name(String),
    /// `-e`.
    Neg(Box<E>),
    /// `a op b` with op one of `+ - * / % << >> & ^ |`.
    Bin(&'static str, Box<E>, Box<E>),
    /// `log2(e)` or `pow2(e)`.
    Fun1(&'static str, Box<E>),
    /// `min`, `max` or `ceil` (of a quotient) with its operands.
    Fun(&'static str, Box<E>, Box<E>),
    /// A host-array element.
    Index(String, Vec<E>),
    /// `rank(e)`.
    Rank(Box<E>),
}

/// A condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum C {
    /// `a op b`.
    Cmp(&'static str, E, E),
    /// `!c`.
    Not(Box<C>),
    /// `a && b`.
    And(Box<C>, Box<C>),
    /// `a || b`.
    Or(Box<C>, Box<C>),
}

impl E {
    fn prec(&self) -> u8 {
        match self {
            E::Bin("|", ..) => 1,
            E::Bin("^", ..) => 2,
            E::Bin("&", ..) => 3,
            E::Bin("<<" | ">>", ..) => 4,
            E::Bin("+" | "-", ..) => 5,
            E::Bin(..) => 6,
            E::Neg(_) => 7,
            _ => 8,
        }
    }

    /// The `.coll` text.
    pub fn coll(&self) -> String {
        match self {
            E::Int(v) if *v < 0 => format!("-{}", v.unsigned_abs()),
            E::Int(v) => v.to_string(),
            E::Name(n) => n.clone(),
            E::Neg(a) => format!("-{}", paren(a, 7)),
            E::Bin(op, a, b) => {
                let p = self.prec();
                // Left-associative: the right operand needs parentheses at equal precedence.
                format!("{} {op} {}", paren(a, p), paren(b, p + 1))
            }
            E::Fun("ceil", a, b) => format!("ceil({} / {})", paren(a, 6), paren(b, 7)),
            E::Fun1(f, a) => format!("{f}({})", a.coll()),
            E::Fun(f, a, b) => format!("{f}({}, {})", a.coll(), b.coll()),
            E::Index(a, xs) => {
                let idx: Vec<String> = xs.iter().map(|x| format!("[{}]", x.coll())).collect();
                format!("{a}{}", idx.concat())
            }
            E::Rank(a) => format!("rank({})", a.coll()),
        }
    }

    /// `a + b` (dropping a literal 0).
    pub fn plus(a: E, b: E) -> E {
        match (&a, &b) {
            (E::Int(0), _) => b,
            (_, E::Int(0)) => a,
            _ => E::Bin("+", Box::new(a), Box::new(b)),
        }
    }

    /// The names the expression reads.
    pub fn names(&self, out: &mut Vec<String>) {
        match self {
            E::Int(_) => {}
            E::Name(n) => out.push(n.clone()),
            E::Neg(a) | E::Rank(a) | E::Fun1(_, a) => a.names(out),
            E::Bin(_, a, b) | E::Fun(_, a, b) => {
                a.names(out);
                b.names(out);
            }
            E::Index(a, xs) => {
                out.push(a.clone());
                xs.iter().for_each(|x| x.names(out));
            }
        }
    }
}

fn paren(e: &E, min: u8) -> String {
    if e.prec() < min {
        format!("({})", e.coll())
    } else {
        e.coll()
    }
}

impl C {
    fn prec(&self) -> u8 {
        match self {
            C::Or(..) => 1,
            C::And(..) => 2,
            _ => 3,
        }
    }

    /// The `.coll` text.
    pub fn coll(&self) -> String {
        let p = |c: &C, min: u8| {
            if c.prec() < min {
                format!("({})", c.coll())
            } else {
                c.coll()
            }
        };
        match self {
            C::Cmp(op, a, b) => format!("{} {op} {}", a.coll(), b.coll()),
            C::Not(c) => format!("!({})", c.coll()),
            C::And(a, b) => format!("{} && {}", p(a, 2), p(b, 3)),
            C::Or(a, b) => format!("{} || {}", p(a, 1), p(b, 2)),
        }
    }

    /// The disjuncts of a chain of `||`.
    pub fn disjuncts(self) -> Vec<C> {
        match self {
            C::Or(a, b) => {
                let mut v = a.disjuncts();
                v.extend(b.disjuncts());
                v
            }
            c => vec![c],
        }
    }
}

/// What names mean while reading expressions.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    /// C++ name -> `.coll` name.
    pub names: BTreeMap<String, String>,
    /// C++ names that stand for an expression (collc's hoisted loop bounds and the like).
    pub aliases: BTreeMap<String, E>,
    /// Host arrays (C++ name -> `.coll` name).
    pub arrays: BTreeMap<String, String>,
    /// The block index's `.coll` name, if the kernel has blocks.
    pub block: Option<String>,
    /// The world size's `.coll` name.
    pub world: String,
    /// Appended to the names bound while reading an inlined helper's body (`_1` for the
    /// first helper call, ...), so that its locals never clash with the caller's.
    pub suffix: String,
}

impl Scope {
    /// Binds a C++ name to itself, or to `name_` when it is a `.coll` keyword (`step`,
    /// `window`, ...).
    pub fn bind(&mut self, name: &str) {
        let coll = if KEYWORDS.contains(&name) {
            format!("{name}_")
        } else {
            name.to_string()
        };
        self.names.insert(name.to_string(), coll);
    }

    /// Binds a `let`'s C++ name: as [`Scope::bind`], with the helper's suffix inside an
    /// inlined helper.
    pub fn bind_let(&mut self, name: &str) {
        if self.suffix.is_empty() {
            return self.bind(name);
        }
        let coll = format!("{name}{}", self.suffix);
        self.names.insert(name.to_string(), coll);
    }

    /// The `.coll` name of a bound C++ name (itself if unbound).
    pub fn coll(&self, name: &str) -> String {
        self.names
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }
}

/// `.coll`'s keywords (`grammar/src/coll.pest`), which are not names.
const KEYWORDS: [&str; 32] = [
    "collective",
    "ranks",
    "param",
    "const",
    "let",
    "blocks",
    "signal",
    "window",
    "tile",
    "array",
    "require",
    "body",
    "epilogue",
    "for",
    "in",
    "peers",
    "if",
    "else",
    "return",
    "notify",
    "wait",
    "copy",
    "get",
    "put",
    "reduce",
    "fence",
    "step",
    "as",
    "value",
    "true",
    "false",
    "calls",
];

/// Strips parentheses and casts.
pub fn strip<'a>(mut n: Node<'a>, src: &str) -> Node<'a> {
    loop {
        match n.kind() {
            "parenthesized_expression" => match kids(n).first() {
                Some(k) => n = *k,
                None => return n,
            },
            "call_expression" => match cast_arg(n, src) {
                Some(a) => n = a,
                None => return n,
            },
            "cast_expression" => match field(n, "value") {
                Some(v) => n = v,
                None => return n,
            },
            _ => return n,
        }
    }
}

fn cast_arg<'a>(n: Node<'a>, src: &str) -> Option<Node<'a>> {
    let f = field(n, "function")?;
    if f.kind() != "template_function" {
        return None;
    }
    let name = field(f, "name").map(|x| text(x, src))?;
    if name != "static_cast" {
        return None;
    }
    let args = field(n, "arguments").map(kids)?;
    (args.len() == 1).then(|| args[0])
}

/// Reads an integer expression.
pub fn expr(n: Node, src: &str, s: &Scope) -> Result<E, Diagnostic> {
    let n = strip(n, src);
    match n.kind() {
        "number_literal" => literal(n, src),
        "identifier" => {
            let t = text(n, src);
            if let Some(e) = s.aliases.get(t) {
                return Ok(e.clone());
            }
            s.names
                .get(t)
                .map(|x| E::Name(x.clone()))
                .ok_or_else(|| unsupported(n, src, "a name the lifter has not bound"))
        }
        "field_expression" if text(n, src).replace(' ', "") == "ctx->rankId" => {
            Ok(E::Name("me".into()))
        }
        "unary_expression" => unary(n, src, s),
        "binary_expression" => {
            let op = field(n, "operator").map(|o| text(o, src)).unwrap_or("");
            // `collc emit` parenthesises `& ^ |` (C++ binds them looser than comparisons).
            let op = ["+", "-", "*", "/", "%", "&", "^", "|"]
                .into_iter()
                .find(|o| *o == op)
                .ok_or_else(|| unsupported(n, src, "an integer operator collc has no form of"))?;
            let (a, b) = operands(n, src, s)?;
            Ok(E::Bin(op, Box::new(a), Box::new(b)))
        }
        "conditional_expression" => min_max(n, src, s),
        "sizeof_expression" => size_of(n, src),
        "pointer_expression" => Err(unsupported(
            n,
            src,
            "an address-of or dereference (function pointers and pointer values are not accepted)",
        )),
        "subscript_expression" => {
            let arr = field(n, "argument").ok_or_else(|| unsupported(n, src, "an array"))?;
            let name = s
                .arrays
                .get(text(arr, src))
                .ok_or_else(|| unsupported(n, src, "a subscript of something not a host array"))?;
            let idx = field(n, "indices")
                .map(kids)
                .unwrap_or_default()
                .into_iter()
                .map(|i| expr(i, src, s))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(E::Index(name.clone(), idx))
        }
        "call_expression" => helper_call(n, src, s),
        _ => Err(unsupported(
            n,
            src,
            "an expression the lifter cannot express in .coll",
        )),
    }
}

/// An integer literal (decimal with digit separators, or hexadecimal; suffixes dropped).
fn literal(n: Node, src: &str) -> Result<E, Diagnostic> {
    let t = text(n, src).trim_end_matches(['l', 'L', 'u', 'U']);
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else {
        t.replace('\'', "").parse::<i64>().ok()
    };
    v.map(E::Int)
        .ok_or_else(|| unsupported(n, src, "an integer literal out of range"))
}

/// Unary `-` (folded into a literal) and `+`.
fn unary(n: Node, src: &str, s: &Scope) -> Result<E, Diagnostic> {
    let op = field(n, "operator").map(|o| text(o, src)).unwrap_or("");
    let arg = field(n, "argument").ok_or_else(|| unsupported(n, src, "an operand"))?;
    match op {
        "-" => match expr(arg, src, s)? {
            E::Int(v) => Ok(E::Int(-v)),
            e => Ok(E::Neg(Box::new(e))),
        },
        "+" => expr(arg, src, s),
        _ => Err(unsupported(
            n,
            src,
            "an integer operator collc has no form of",
        )),
    }
}

/// The sizes in bytes of the element types `sizeof` may name.
const SIZES: &[(&[&str], i64)] = &[
    (&["float", "int", "int32_t", "uint32_t"], 4),
    (&["int64_t", "uint64_t", "double"], 8),
    (&["half", "bfloat16_t", "int16_t"], 2),
];

/// `sizeof(T)` of an element type in [`SIZES`].
fn size_of(n: Node, src: &str) -> Result<E, Diagnostic> {
    let t = text(n, src).replace(' ', "");
    let ty = t.trim_start_matches("sizeof").trim_matches(['(', ')']);
    SIZES
        .iter()
        .find(|(names, _)| names.contains(&ty))
        .map(|(_, bytes)| E::Int(*bytes))
        .ok_or_else(|| unsupported(n, src, "the size of a type the lifter does not know"))
}

/// A call in an integer expression: the block index, `collc_log2`, or a two-operand helper
/// (`collc_div`, `collc_mod`, `collc_shl`, `collc_shr`, `collc_ceil_div`, `collc_min`,
/// `collc_max`).
fn helper_call(n: Node, src: &str, s: &Scope) -> Result<E, Diagnostic> {
    let (f, args) = call(n, src).ok_or_else(|| unsupported(n, src, "a call"))?;
    if f == "get_block_idx" {
        return s
            .block
            .clone()
            .map(E::Name)
            .ok_or_else(|| unsupported(n, src, "the block index in a kernel without blocks"));
    }
    if f == "collc_log2" {
        return match args.as_slice() {
            [a] => Ok(E::Fun1("log2", Box::new(expr(*a, src, s)?))),
            _ => Err(unsupported(
                n,
                src,
                "a collc_log2 with other than 1 argument",
            )),
        };
    }
    let known = [
        "collc_div",
        "collc_shl",
        "collc_shr",
        "collc_mod",
        "collc_ceil_div",
        "collc_min",
        "collc_max",
    ];
    if !known.contains(&f.as_str()) {
        return Err(unsupported(n, src, "a call the lifter does not know"));
    }
    if args.len() != 2 {
        return Err(unsupported(
            n,
            src,
            "a helper call with other than 2 arguments",
        ));
    }
    let a = Box::new(expr(args[0], src, s)?);
    let b = Box::new(expr(args[1], src, s)?);
    Ok(match f.as_str() {
        "collc_div" => E::Bin("/", a, b),
        "collc_mod" => E::Bin("%", a, b),
        // `pow2(k)` is written `collc_shl(1, k)`, as is `1 << k`: read as `pow2(k)`
        // (validation compares the two as one).
        "collc_shl" if *a == E::Int(1) => E::Fun1("pow2", b),
        "collc_shl" => E::Bin("<<", a, b),
        "collc_shr" => E::Bin(">>", a, b),
        "collc_ceil_div" => E::Fun("ceil", a, b),
        "collc_min" => E::Fun("min", a, b),
        _ => E::Fun("max", a, b),
    })
}

fn operands(n: Node, src: &str, s: &Scope) -> Result<(E, E), Diagnostic> {
    let l = field(n, "left").ok_or_else(|| unsupported(n, src, "an operand"))?;
    let r = field(n, "right").ok_or_else(|| unsupported(n, src, "an operand"))?;
    Ok((expr(l, src, s)?, expr(r, src, s)?))
}

/// `a < b ? a : b` is `min(a, b)`; `a > b ? a : b` is `max(a, b)` (and the mirrored forms).
fn min_max(n: Node, src: &str, s: &Scope) -> Result<E, Diagnostic> {
    let bad = || unsupported(n, src, "a conditional expression that is not a min or max");
    let c = field(n, "condition")
        .map(|c| strip(c, src))
        .ok_or_else(bad)?;
    let t = field(n, "consequence").ok_or_else(bad)?;
    let f = field(n, "alternative").ok_or_else(bad)?;
    if c.kind() != "binary_expression" {
        return Err(bad());
    }
    let op = field(c, "operator").map(|o| text(o, src)).unwrap_or("");
    let (a, b) = operands(c, src, s)?;
    let (t, f) = (expr(t, src, s)?, expr(f, src, s)?);
    let lt = matches!(op, "<" | "<=");
    let gt = matches!(op, ">" | ">=");
    let fun = if (lt && t == a && f == b) || (gt && t == b && f == a) {
        "min"
    } else if (gt && t == a && f == b) || (lt && t == b && f == a) {
        "max"
    } else {
        return Err(bad());
    };
    Ok(E::Fun(fun, Box::new(a), Box::new(b)))
}

/// Reads a condition.
pub fn cond(n: Node, src: &str, s: &Scope) -> Result<C, Diagnostic> {
    let n = strip(n, src);
    let n = if n.kind() == "condition_clause" {
        match field(n, "value") {
            Some(v) => strip(v, src),
            None => return Err(unsupported(n, src, "a condition")),
        }
    } else {
        n
    };
    match n.kind() {
        "unary_expression" if field(n, "operator").map(|o| text(o, src)) == Some("!") => {
            let a = field(n, "argument").ok_or_else(|| unsupported(n, src, "an operand"))?;
            Ok(C::Not(Box::new(cond(a, src, s)?)))
        }
        "binary_expression" => {
            let op = field(n, "operator").map(|o| text(o, src)).unwrap_or("");
            let l = field(n, "left").ok_or_else(|| unsupported(n, src, "an operand"))?;
            let r = field(n, "right").ok_or_else(|| unsupported(n, src, "an operand"))?;
            match op {
                "&&" => Ok(C::And(
                    Box::new(cond(l, src, s)?),
                    Box::new(cond(r, src, s)?),
                )),
                "||" => Ok(C::Or(
                    Box::new(cond(l, src, s)?),
                    Box::new(cond(r, src, s)?),
                )),
                "==" | "!=" | "<" | "<=" | ">" | ">=" => {
                    let op: &'static str = match op {
                        "==" => "==",
                        "!=" => "!=",
                        "<" => "<",
                        "<=" => "<=",
                        ">" => ">",
                        _ => ">=",
                    };
                    Ok(C::Cmp(op, expr(l, src, s)?, expr(r, src, s)?))
                }
                _ => Err(unsupported(n, src, "a condition the lifter cannot express")),
            }
        }
        _ => Err(unsupported(n, src, "a condition the lifter cannot express")),
    }
}

/// The line of `n` (re-exported for statement readers).
pub fn line(n: Node) -> usize {
    cpp::line(n)
}
