//! Z3 encoding of IR expressions and conditions for the range obligations:
//! every variable is a Z3 constant, created on first use together with the
//! facts that define it (its domain, its `let`, its loop range), so a query
//! holds exactly the variables its goal and path depend on.

use collc_spec::ir::{BinOp, CmpOp, Cond, Expr, Protocol, Range, VarId, VarKind};
use std::collections::HashMap;
use z3::ast::{Bool, Int, BV};

/// What the walker knows about the statement-level names of a protocol.
#[derive(Default)]
pub struct Defs {
    /// The value of every statement `let`.
    pub lets: HashMap<VarId, Expr>,
    /// The range of every loop variable.
    pub loops: HashMap<VarId, Range>,
}

impl Defs {
    /// The statement `let`s and loop variables of the body and the epilogue (names are
    /// never shadowed, so each has one definition).
    pub fn of(info: &collc_spec::info::ProtocolInfo) -> Self {
        Defs {
            lets: info.locals.iter().cloned().collect(),
            loops: info
                .loops
                .iter()
                .map(|l| (l.var, l.range.clone()))
                .collect(),
        }
    }
}

/// One query's translation: Z3 constants for the variables read so far and
/// the facts defining them.
pub struct Enc<'a> {
    pub(super) p: &'a Protocol,
    pub(super) defs: &'a Defs,
    /// The constant of every variable read so far, in order of first use.
    pub vars: Vec<(VarId, Int)>,
    index: HashMap<VarId, Int>,
    /// Host-array elements read so far (one constant per distinct element
    /// expression), with their printed form.
    pub elems: Vec<(Expr, String, Int)>,
    /// The facts defining the variables and elements.
    pub side: Vec<Bool>,
    /// The products of two symbolic factors encoded so far (`a * b`), for
    /// [`super::lemma`].
    pub products: Vec<(Expr, Expr)>,
    /// The divisions and remainders by a symbolic divisor encoded so far, with the
    /// term that holds their value (the expression itself, or the `let` defined by it).
    pub divisions: Vec<Division>,
    fresh: u32,
}

/// `q` is `a / b`, `ceil(a / b)` or `a % b`.
#[derive(Clone, Debug)]
pub struct Division {
    /// Which of the three.
    pub kind: DivKind,
    /// The dividend.
    pub a: Expr,
    /// The divisor.
    pub b: Expr,
    /// What holds the value: the expression, or the variable defined by it.
    pub q: Expr,
}

/// The kind of a [`Division`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DivKind {
    /// `a / b` (Euclidean: the floor for `b > 0`).
    Floor,
    /// `ceil(a / b)`.
    Ceil,
    /// `a % b`.
    Rem,
}

impl<'a> Enc<'a> {
    /// A fresh translation.
    pub fn new(p: &'a Protocol, defs: &'a Defs) -> Self {
        Enc {
            p,
            defs,
            vars: Vec::new(),
            index: HashMap::new(),
            elems: Vec::new(),
            side: Vec::new(),
            products: Vec::new(),
            divisions: Vec::new(),
            fresh: 0,
        }
    }

    /// Whether variable `v` has been read.
    pub fn reads(&self, v: VarId) -> bool {
        self.index.contains_key(&v)
    }

    /// The constant of a variable, defining it on first use.
    pub fn var(&mut self, v: VarId) -> Int {
        if let Some(x) = self.index.get(&v) {
            return x.clone();
        }
        let var = &self.p.vars[v];
        if let VarKind::Const(c) = var.kind {
            return Int::from_i64(c);
        }
        let x = Int::new_const(format!("{}#{v}", var.name));
        self.index.insert(v, x.clone());
        self.vars.push((v, x.clone()));
        let fact = match &var.kind {
            VarKind::World { lo, hi } => Bool::and(&[x.ge(*lo), x.le(*hi)]),
            VarKind::Param {
                domain: Some((lo, hi)),
            } => Bool::and(&[x.ge(*lo), x.le(*hi)]),
            VarKind::Param { domain: None } | VarKind::Me => {
                let world = self.var(self.p.world);
                Bool::and(&[x.ge(0), x.lt(&world)])
            }
            VarKind::Const(_) => Bool::from_bool(true),
            // The call index: 0.. (below `calls <= N` when declared).
            VarKind::Call => match self.p.calls {
                Some(c) => Bool::and(&[x.ge(0), x.lt(c.max)]),
                None => x.ge(0),
            },
            VarKind::Derived(e) => {
                self.note_division(e, Expr::Var(v));
                let e = self.expr(e);
                x.eq(&e)
            }
            VarKind::Block => match &self.p.blocks {
                Some(b) => {
                    let c = self.expr(&b.count);
                    Bool::and(&[x.ge(0), x.lt(&c)])
                }
                None => x.eq(Int::from_i64(0)),
            },
            VarKind::Loop => match self.defs.loops.get(&v) {
                Some(r) => self.range(&x, r),
                None => Bool::from_bool(true),
            },
            VarKind::Local => match self.defs.lets.get(&v) {
                Some(e) => {
                    self.note_division(e, Expr::Var(v));
                    let e = self.expr(e);
                    x.eq(&e)
                }
                None => Bool::from_bool(true),
            },
        };
        self.side.push(fact);
        x
    }

    /// The values a loop variable `x` takes over `r`.
    fn range(&mut self, x: &Int, r: &Range) -> Bool {
        let world = self.var(self.p.world);
        match r {
            Range::Ranks => Bool::and(&[x.ge(0), x.lt(&world)]),
            Range::Peers => {
                let me = self.var(self.p.me);
                Bool::and(&[x.ge(0), x.lt(&world), x.eq(&me).not()])
            }
            Range::Span { lo, hi, step } => {
                let (l, h) = (self.expr(lo), self.expr(hi));
                let mut parts = vec![x.ge(&l), x.lt(&h)];
                match step.as_const() {
                    Some(1) => {}
                    Some(c) => parts.push(
                        (x.clone() - l)
                            .modulo(Int::from_i64(c))
                            .eq(Int::from_i64(0)),
                    ),
                    None => {
                        // x = lo + k * step for some trip k >= 0 (exact, nonlinear).
                        self.fresh += 1;
                        let k = Int::new_const(format!("trip#{}", self.fresh));
                        let s = self.expr(step);
                        parts.push(k.ge(0));
                        parts.push(x.eq(l + k * s));
                    }
                }
                Bool::and(&parts)
            }
            // The same values whichever the order.
            Range::Seq(q) if !q.geometric => self.range(
                x,
                &Range::Span {
                    lo: q.lo.clone(),
                    hi: q.hi.clone(),
                    step: q.step.clone(),
                },
            ),
            Range::Seq(q) => {
                let (l, h) = (self.expr(&q.lo), self.expr(&q.hi));
                let mut parts = vec![x.ge(&l), x.lt(&h)];
                // x = lo * f^k for some k: one case per power of a constant factor
                // (exact); a symbolic factor keeps only the bounds.
                if let Some(f) = q.step.as_const().filter(|f| *f >= 2) {
                    let mut cases = Vec::new();
                    let mut c: i64 = 1;
                    loop {
                        cases.push(x.eq(l.clone() * Int::from_i64(c)));
                        match c.checked_mul(f) {
                            Some(n) => c = n,
                            None => break,
                        }
                    }
                    parts.push(Bool::or(&cases));
                }
                Bool::and(&parts)
            }
        }
    }

    /// Whether `e` is a constant (a literal or a `const`).
    pub fn is_const(&self, e: &Expr) -> bool {
        match e {
            Expr::Int(_) => true,
            Expr::Var(v) => matches!(self.p.vars[*v].kind, VarKind::Const(_)),
            Expr::Neg(a) => self.is_const(a),
            Expr::Bin(op, a, b) if !op.is_bitwise() => self.is_const(a) && self.is_const(b),
            _ => false,
        }
    }

    /// Records `e` if it is a division or remainder by a symbolic divisor, its value
    /// held by `q`.
    fn note_division(&mut self, e: &Expr, q: Expr) {
        let (kind, a, b) = match e {
            Expr::Bin(BinOp::Div, a, b) => (DivKind::Floor, a, b),
            Expr::Bin(BinOp::Mod, a, b) => (DivKind::Rem, a, b),
            Expr::CeilDiv(a, b) => (DivKind::Ceil, a, b),
            _ => return,
        };
        let seen = self.divisions.iter().any(|d| d.q == q && d.kind == kind);
        if !seen && !self.is_const(b) {
            self.divisions.push(Division {
                kind,
                a: (**a).clone(),
                b: (**b).clone(),
                q,
            });
        }
    }

    /// An expression, with collc's Euclidean division and remainder (SMT-LIB's
    /// `div`/`mod` are Euclidean too) and `ceil`.
    pub fn expr(&mut self, e: &Expr) -> Int {
        self.note_division(e, e.clone());
        if let Expr::Bin(BinOp::Mul, a, b) = e {
            let pair = ((**a).clone(), (**b).clone());
            if !self.is_const(a) && !self.is_const(b) && !self.products.contains(&pair) {
                self.products.push(pair);
            }
        }
        match e {
            Expr::Int(v) => Int::from_i64(*v),
            Expr::Var(v) => self.var(*v),
            Expr::Array(a, idx) => {
                // Keyed by the IR (variable ids), not the text: sibling loops
                // may reuse a loop variable's name.
                if let Some((_, _, x)) = self.elems.iter().find(|(k, _, _)| k == e) {
                    return x.clone();
                }
                for i in idx {
                    self.expr(i);
                }
                let shown = collc_spec::print::expr_to_string(self.p, e);
                let x = Int::new_const(format!("{shown}#elem{}", self.elems.len()));
                let (lo, hi) = self.p.arrays[*a].domain;
                self.side.push(Bool::and(&[x.ge(lo), x.le(hi)]));
                self.elems.push((e.clone(), shown, x.clone()));
                x
            }
            Expr::Neg(a) => -self.expr(a),
            Expr::Rank(a) => self.expr(a),
            Expr::Bin(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div => x.div(&y),
                    BinOp::Mod => x.modulo(&y),
                    // Bit operations on the 64-bit two's complement image (exact for
                    // the values the language allows).
                    // The shift amount's own goal checks it; here it is assumed in range.
                    BinOp::Shl => {
                        self.side.push(shift_ok(&y));
                        Int::from_bv(&bv(&x).bvshl(bv(&y)), true)
                    }
                    BinOp::Shr => {
                        self.side.push(shift_ok(&y));
                        Int::from_bv(&bv(&x).bvashr(bv(&y)), true)
                    }
                    BinOp::And => Int::from_bv(&bv(&x).bvand(bv(&y)), true),
                    BinOp::Xor => Int::from_bv(&bv(&x).bvxor(bv(&y)), true),
                    BinOp::Or => Int::from_bv(&bv(&x).bvor(bv(&y)), true),
                }
            }
            Expr::Pow2(a) => {
                let k = self.expr(a);
                self.side.push(shift_ok(&k));
                Int::from_bv(&BV::from_u64(1, 64).bvshl(bv(&k)), true)
            }
            Expr::Log2(a) => {
                // A fresh k in 0..=62 with x = 2^k (the argument's own goal checks that
                // x is a power of two; here it is assumed).
                let x = self.expr(a);
                self.fresh += 1;
                let k = Int::new_const(format!("log2#{}", self.fresh));
                let two_k = Int::from_bv(&BV::from_u64(1, 64).bvshl(bv(&k)), true);
                self.side.push(Bool::and(&[shift_ok(&k), x.eq(&two_k)]));
                k
            }
            Expr::CeilDiv(a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                let up = -((-x.clone()).div(&y));
                y.gt(0).ite(&up, &x.div(&y))
            }
            Expr::Min(a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                x.le(&y).ite(&x, &y)
            }
            Expr::Max(a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                x.ge(&y).ite(&x, &y)
            }
        }
    }

    /// A condition.
    pub fn cond(&mut self, c: &Cond) -> Bool {
        match c {
            Cond::Bool(b) => Bool::from_bool(*b),
            Cond::Cmp(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                match op {
                    CmpOp::Ge => x.ge(&y),
                    CmpOp::Le => x.le(&y),
                    CmpOp::Gt => x.gt(&y),
                    CmpOp::Lt => x.lt(&y),
                    CmpOp::Eq => x.eq(&y),
                    CmpOp::Ne => x.eq(&y).not(),
                }
            }
            Cond::Not(x) => self.cond(x).not(),
            Cond::And(xs) => {
                let v: Vec<Bool> = xs.iter().map(|x| self.cond(x)).collect();
                Bool::and(&v)
            }
            Cond::Or(xs) => {
                let v: Vec<Bool> = xs.iter().map(|x| self.cond(x)).collect();
                Bool::or(&v)
            }
        }
    }
}

/// The 64-bit two's complement image of an integer.
fn bv(x: &Int) -> BV {
    BV::from_int(x, 64)
}

/// `0 <= k <= 62`.
fn shift_ok(k: &Int) -> Bool {
    Bool::and(&[k.ge(0), k.le(collc_spec::eval::MAX_SHIFT)])
}

/// `x` is a power of two (1, 2, 4, ...).
pub fn is_pow2(x: &Int) -> Bool {
    let b = bv(x);
    let below = bv(&(x.clone() - Int::from_i64(1)));
    Bool::and(&[x.ge(1), b.bvand(&below).eq(BV::from_u64(0, 64))])
}
