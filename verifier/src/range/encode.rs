//! Z3 encoding of IR expressions and conditions for the range obligations:
//! every variable is a Z3 constant, created on first use together with the
//! facts that define it (its domain, its `let`, its loop range), so a query
//! holds exactly the variables its goal and path depend on.

use collc_spec::ir::{BinOp, CmpOp, Cond, Expr, Protocol, Range, VarId, VarKind};
use std::collections::HashMap;
use z3::ast::{Bool, Int};

/// What the walker knows about the statement-level names of a protocol.
#[derive(Default)]
pub struct Defs {
    /// The value of every statement `let`.
    pub lets: HashMap<VarId, Expr>,
    /// The range of every loop variable.
    pub loops: HashMap<VarId, Range>,
}

/// One query's translation: Z3 constants for the variables read so far and
/// the facts defining them.
pub struct Enc<'a> {
    p: &'a Protocol,
    defs: &'a Defs,
    /// The constant of every variable read so far, in order of first use.
    pub vars: Vec<(VarId, Int)>,
    index: HashMap<VarId, Int>,
    /// Host-array elements read so far (one constant per distinct element
    /// expression), with their printed form.
    pub elems: Vec<(Expr, String, Int)>,
    /// The facts defining the variables and elements.
    pub side: Vec<Bool>,
    fresh: u32,
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
        }
    }

    /// An expression, with collc's Euclidean division and remainder (SMT-LIB's
    /// `div`/`mod` are Euclidean too) and `ceil`.
    pub fn expr(&mut self, e: &Expr) -> Int {
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
                }
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
