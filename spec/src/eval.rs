//! Concrete evaluation of IR expressions, and binding a protocol's parameters
//! to values (domains and `require`s checked). Used by the simulator, the cost
//! model and the backends.

use crate::ir::*;
use std::collections::BTreeMap;
use std::fmt;

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// A variable has no value in this environment.
    Unbound(String),
    /// Division or remainder by zero, or `ceil(a / 0)`.
    DivByZero,
    /// The result does not fit in 64 bits.
    Overflow,
    /// A host array element was read where arrays are not available.
    NoArray(String),
    /// A host array index is out of bounds.
    ArrayIndex(String, i64),
    /// A shift amount (`<<`, `>>`, `pow2`) outside `0..=62`.
    Shift(i64),
    /// `log2` of a value that is not a power of two.
    Log2(i64),
    /// A numeric loop whose step is not positive, or a power-of-two loop whose
    /// factor is below 2 or whose start is below 1: (start, step).
    Step(i64, i64),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unbound(n) => write!(f, "`{n}` has no value here"),
            EvalError::DivByZero => write!(f, "division by zero"),
            EvalError::Overflow => write!(f, "arithmetic overflow"),
            EvalError::NoArray(n) => write!(f, "host array `{n}` is not available here"),
            EvalError::ArrayIndex(n, i) => write!(f, "index {i} out of bounds of host array `{n}`"),
            EvalError::Shift(k) => write!(f, "shift by {k}, outside 0..={MAX_SHIFT}"),
            EvalError::Log2(x) => write!(f, "log2 of {x}, which is not a power of two"),
            EvalError::Step(lo, s) => write!(f, "a loop from {lo} with step {s} never ends"),
        }
    }
}

/// Values of variables (indexed by [`VarId`]) and of the host arrays of one rank.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `values[v]` is the value of variable `v`, if bound.
    pub values: Vec<Option<i64>>,
    /// Flattened host arrays of the current rank, by [`ArrayId`] (empty if unavailable).
    pub arrays: Vec<Vec<i64>>,
}

impl Env {
    /// An empty environment for a protocol.
    pub fn new(p: &Protocol) -> Self {
        Env {
            values: vec![None; p.vars.len()],
            arrays: Vec::new(),
        }
    }
    /// Binds a variable.
    pub fn set(&mut self, v: VarId, x: i64) {
        self.values[v.index()] = Some(x);
    }
    /// Unbinds a variable.
    pub fn unset(&mut self, v: VarId) {
        self.values[v.index()] = None;
    }
    /// The value of a variable.
    pub fn get(&self, v: VarId) -> Option<i64> {
        self.values.get(v.index()).copied().flatten()
    }
    /// Binds every `const`, and every top-level `let` that evaluates from what is bound
    /// so far (in declaration order); a `let` that does not evaluate stays unbound.
    pub fn set_top_level(&mut self, p: &Protocol) {
        for (id, v) in crate::id::enumerate(&p.vars) {
            match &v.kind {
                VarKind::Const(c) => self.set(id, *c),
                VarKind::Derived(e) => {
                    if let Ok(x) = eval(p, e, self) {
                        self.set(id, x);
                    }
                }
                _ => {}
            }
        }
    }
}

fn ck(x: Option<i64>) -> Result<i64, EvalError> {
    x.ok_or(EvalError::Overflow)
}

/// Evaluates an expression.
pub fn eval(p: &Protocol, e: &Expr, env: &Env) -> Result<i64, EvalError> {
    Ok(match e {
        Expr::Int(v) => *v,
        Expr::Var(v) => env
            .get(*v)
            .ok_or_else(|| EvalError::Unbound(p.vars[*v].name.clone()))?,
        Expr::Array(a, idx) => {
            let arr = &p.arrays[*a];
            let data = env
                .arrays
                .get(a.index())
                .filter(|d| !d.is_empty())
                .ok_or_else(|| EvalError::NoArray(arr.name.clone()))?;
            let mut flat = 0i64;
            for (i, x) in idx.iter().enumerate() {
                let d = eval(p, &arr.dims[i], env)?;
                let x = eval(p, x, env)?;
                if x < 0 || x >= d {
                    return Err(EvalError::ArrayIndex(arr.name.clone(), x));
                }
                flat = ck(flat.checked_mul(d))? + x;
            }
            *data
                .get(flat as usize)
                .ok_or(EvalError::ArrayIndex(arr.name.clone(), flat))?
        }
        Expr::Neg(a) => ck(eval(p, a, env)?.checked_neg())?,
        Expr::Rank(a) => eval(p, a, env)?,
        Expr::Bin(op, a, b) => bin(*op, eval(p, a, env)?, eval(p, b, env)?)?,
        Expr::Log2(a) => log2(eval(p, a, env)?)?,
        Expr::Pow2(a) => bin(BinOp::Shl, 1, eval(p, a, env)?)?,
        Expr::CeilDiv(a, b) => {
            let a = eval(p, a, env)?;
            let b = eval(p, b, env)?;
            if b == 0 {
                return Err(EvalError::DivByZero);
            }
            ceil_div(a, b).ok_or(EvalError::Overflow)?
        }
        Expr::Min(a, b) => eval(p, a, env)?.min(eval(p, b, env)?),
        Expr::Max(a, b) => eval(p, a, env)?.max(eval(p, b, env)?),
    })
}

/// The values of a [`Seq`] range in an environment.
pub fn seq_values(p: &Protocol, s: &Seq, env: &Env) -> Result<SeqValues, EvalError> {
    SeqValues::new(
        eval(p, &s.lo, env)?,
        eval(p, &s.hi, env)?,
        eval(p, &s.step, env)?,
        s.geometric,
        s.rev,
    )
}

/// The largest shift amount (`<<`, `>>`, `pow2`): results stay in 64 bits.
pub const MAX_SHIFT: i64 = 62;

/// `a op b` with the language's semantics: floor division, Euclidean remainder,
/// shifts by `0..=MAX_SHIFT` only (`<<` overflow-checked, `>>` arithmetic, i.e. floor
/// division by a power of two), bitwise operators on two's complement.
pub fn bin(op: BinOp, a: i64, b: i64) -> Result<i64, EvalError> {
    let shift = |b: i64| {
        if (0..=MAX_SHIFT).contains(&b) {
            Ok(b as u32)
        } else {
            Err(EvalError::Shift(b))
        }
    };
    Ok(match op {
        BinOp::Add => ck(a.checked_add(b))?,
        BinOp::Sub => ck(a.checked_sub(b))?,
        BinOp::Mul => ck(a.checked_mul(b))?,
        BinOp::Div | BinOp::Mod if b == 0 => return Err(EvalError::DivByZero),
        BinOp::Div => ck(a.checked_div_euclid(b))?,
        BinOp::Mod => ck(a.checked_rem_euclid(b))?,
        BinOp::Shl => {
            let k = shift(b)?;
            let r = a << k;
            if r >> k != a {
                return Err(EvalError::Overflow);
            }
            r
        }
        BinOp::Shr => a >> shift(b)?,
        BinOp::And => a & b,
        BinOp::Xor => a ^ b,
        BinOp::Or => a | b,
    })
}

/// `log2(x)` for a power of two `x`; anything else is an error.
pub fn log2(x: i64) -> Result<i64, EvalError> {
    if x >= 1 && x & (x - 1) == 0 {
        Ok(i64::from(x.trailing_zeros()))
    } else {
        Err(EvalError::Log2(x))
    }
}

/// The values of a [`Seq`] range, in visiting order, for concrete bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqValues {
    lo: i64,
    step: i64,
    geometric: bool,
    rev: bool,
    len: i64,
}

impl SeqValues {
    /// The values of `lo..hi step s` (or `step *s` when `geometric`), reversed when
    /// `rev`. A step below 1, or a geometric factor below 2 or start below 1, is an
    /// error (the loop would not end, or would repeat a value).
    pub fn new(lo: i64, hi: i64, step: i64, geometric: bool, rev: bool) -> Result<Self, EvalError> {
        let len = if geometric {
            if step < 2 || lo < 1 {
                return Err(EvalError::Step(lo, step));
            }
            let (mut n, mut x) = (0i64, lo);
            while x < hi {
                n += 1;
                match x.checked_mul(step) {
                    Some(y) => x = y,
                    None => break,
                }
            }
            n
        } else {
            if step < 1 {
                return Err(EvalError::Step(lo, step));
            }
            if hi <= lo {
                0
            } else {
                ceil_div(ck(hi.checked_sub(lo))?, step).ok_or(EvalError::Overflow)?
            }
        };
        Ok(SeqValues {
            lo,
            step,
            geometric,
            rev,
            len,
        })
    }
    /// How many values.
    pub fn len(&self) -> i64 {
        self.len
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The `k`-th value visited (`0 <= k < len`).
    pub fn nth(&self, k: i64) -> i64 {
        let j = if self.rev { self.len - 1 - k } else { k };
        if self.geometric {
            // In range by construction: lo * step^j < hi for j < len.
            (0..j).fold(self.lo, |x, _| x.saturating_mul(self.step))
        } else {
            self.lo.saturating_add(j.saturating_mul(self.step))
        }
    }
    /// Every value, in visiting order.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        (0..self.len).map(|k| self.nth(k))
    }
}

/// `ceil(a / b)` for integers (b != 0), rounding towards +infinity.
pub fn ceil_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div_euclid(b)?;
    if q.checked_mul(b)? == a {
        Some(q)
    } else if b > 0 {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

/// Evaluates a condition.
pub fn eval_cond(p: &Protocol, c: &Cond, env: &Env) -> Result<bool, EvalError> {
    Ok(match c {
        Cond::Bool(b) => *b,
        Cond::Cmp(op, a, b) => op.holds(eval(p, a, env)?, eval(p, b, env)?),
        Cond::Not(c) => !eval_cond(p, c, env)?,
        Cond::And(cs) => {
            for c in cs {
                if !eval_cond(p, c, env)? {
                    return Ok(false);
                }
            }
            true
        }
        Cond::Or(cs) => {
            for c in cs {
                if eval_cond(p, c, env)? {
                    return Ok(true);
                }
            }
            false
        }
    })
}

/// Why a parameter assignment is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindError {
    /// A parameter was given that the protocol does not declare.
    Unknown(String),
    /// A parameter has no value and no default.
    Missing(String),
    /// A value lies outside the declared domain.
    OutOfDomain {
        name: String,
        value: i64,
        lo: i64,
        hi: i64,
    },
    /// A `require` does not hold.
    Requirement(String),
    /// A derived value could not be computed.
    Eval(String, EvalError),
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindError::Unknown(n) => write!(f, "the protocol has no parameter `{n}`"),
            BindError::Missing(n) => {
                write!(f, "parameter `{n}` needs a value (pass --param {n}=VALUE)")
            }
            BindError::OutOfDomain {
                name,
                value,
                lo,
                hi,
            } => {
                write!(
                    f,
                    "parameter `{name}` = {value} is outside its domain {lo}..={hi}"
                )
            }
            BindError::Requirement(c) => {
                write!(f, "requirement `{c}` does not hold for these parameters")
            }
            BindError::Eval(n, e) => write!(f, "cannot compute `{n}`: {e}"),
        }
    }
}

/// A complete, checked parameter assignment.
#[derive(Debug, Clone)]
pub struct Bindings {
    /// Values of the world size, parameters, constants and derived lets.
    pub env: Env,
    /// The world size.
    pub world: i64,
    /// Blocks per rank (1 when the protocol is not multicore).
    pub blocks: i64,
}

/// Binds parameters by name. Rank parameters default to 0; others are required.
/// Checks domains (rank parameters must lie in `0..P`) and every `require`.
pub fn bind(p: &Protocol, given: &BTreeMap<String, i64>) -> Result<Bindings, BindError> {
    for name in given.keys() {
        let known = p.inputs().iter().any(|v| &p.vars[*v].name == name);
        if !known {
            return Err(BindError::Unknown(name.clone()));
        }
    }
    let mut env = Env::new(p);
    let mut world = 0;
    for (id, var) in crate::id::enumerate(&p.vars) {
        match &var.kind {
            VarKind::World { lo, hi } => {
                let v = *given
                    .get(&var.name)
                    .ok_or_else(|| BindError::Missing(var.name.clone()))?;
                if v < *lo || v > *hi {
                    return Err(BindError::OutOfDomain {
                        name: var.name.clone(),
                        value: v,
                        lo: *lo,
                        hi: *hi,
                    });
                }
                world = v;
                env.set(id, v);
            }
            VarKind::Param { domain } => {
                let (lo, hi) = domain.unwrap_or((0, world - 1));
                let v = match (given.get(&var.name), domain) {
                    (Some(v), _) => *v,
                    (None, None) => 0,
                    (None, Some(_)) => return Err(BindError::Missing(var.name.clone())),
                };
                if v < lo || v > hi {
                    return Err(BindError::OutOfDomain {
                        name: var.name.clone(),
                        value: v,
                        lo,
                        hi,
                    });
                }
                env.set(id, v);
            }
            VarKind::Const(c) => env.set(id, *c),
            VarKind::Derived(e) => {
                let v = eval(p, e, &env).map_err(|err| BindError::Eval(var.name.clone(), err))?;
                env.set(id, v);
            }
            _ => {}
        }
    }
    for r in &p.requires {
        let ok = eval_cond(p, &r.cond, &env).map_err(|e| BindError::Eval("require".into(), e))?;
        if !ok {
            return Err(BindError::Requirement(crate::print::cond_to_string(
                p, &r.cond,
            )));
        }
    }
    let blocks = match &p.blocks {
        Some(b) => eval(p, &b.count, &env).map_err(|e| BindError::Eval("blocks".into(), e))?,
        None => 1,
    };
    Ok(Bindings { env, world, blocks })
}
