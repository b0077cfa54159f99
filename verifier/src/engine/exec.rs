//! Abstract execution: for one configuration (values of the enumerated parameters),
//! runs the body and the epilogue of every (rank, block) with the remaining
//! parameters symbolic, and records every notify, wait and fence as an [`Event`]
//! with its cell, its value as a [`Lin`], its path condition and the summarised
//! loops around it. Loops over ranks are unrolled (P is concrete); loops over
//! numeric ranges are summarised (the loop variable becomes an iteration atom and
//! the loop contributes once per iteration) unless their variable selects a cell,
//! a target or a branch, in which case a concrete trip count is unrolled. A branch on a
//! comparison of the loop variable with a loop-invariant value (`if t >= K`) splits a
//! loop whose trip count is symbolic at the iteration where the comparison changes: two
//! summarised loops, `0..m` and `m..trip` with `m = clamp(threshold, 0, trip)`, in each of
//! which the branch is decided ([`Pin`]).

use crate::engine::sym::{union, Atom, AtomId, CondV, Guard, Lin, Syms};
use crate::planning::TABLE;
use collc_grammar::Span;
use collc_spec::ir::*;
use collc_spec::visit::{self, Visit};
use std::collections::{BTreeSet, HashMap};

/// Trip counts up to this are unrolled outright.
pub const UNROLL_SMALL: i64 = 64;
/// Trip counts up to this are unrolled when a loop cannot be summarised.
pub const UNROLL_MAX: i64 = 4096;
/// A summarised loop is split at most this many times (at most `2^SPLIT_MAX` pieces): the
/// cut points of `if t == T - 1` (two), `if t >= a && t < b` (two) and so on.
pub const SPLIT_MAX: usize = 4;
pub use crate::planning::{declared_world, enumerated_world, enumerated_worlds};

/// How the declared domain is written in a scope: `P in 1..=65536` or `P >= 1`.
pub fn world_text(p: &Protocol) -> String {
    let (lo, hi) = declared_world(p);
    let w = p.var_name(p.world);
    if hi >= MAX_WORLD {
        format!("{w} >= {lo}")
    } else {
        format!("{w} in {lo}..={hi}")
    }
}

/// Body or epilogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Section {
    /// The body.
    Body,
    /// The epilogue.
    Epilogue,
}

/// A signal cell: signal, owner rank, index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell {
    /// The signal.
    pub signal: SignalId,
    /// The rank whose window holds it.
    pub owner: u32,
    /// The index.
    pub index: Idx,
}

/// A cell index of at most [`MAX_DIMS`] coordinates, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Idx {
    n: u8,
    v: [i64; MAX_DIMS],
}

/// Signals may have at most this many dimensions (more is reported as unsupported).
pub const MAX_DIMS: usize = 4;

impl std::ops::Deref for Idx {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        &self.v[..self.n as usize]
    }
}

impl std::fmt::Debug for Idx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", &**self)
    }
}

impl Idx {
    /// From a slice (None when it is too long).
    pub fn new(xs: &[i64]) -> Option<Idx> {
        if xs.len() > MAX_DIMS {
            return None;
        }
        let mut v = [0; MAX_DIMS];
        v[..xs.len()].copy_from_slice(xs);
        Some(Idx {
            n: xs.len() as u8,
            v,
        })
    }
}

/// What an event does.
#[derive(Clone, Debug)]
pub enum EvKind {
    /// A notify.
    Notify {
        /// Set or AtomicAdd.
        op: NotifyOp,
        /// The value (may contain iteration atoms).
        value: Lin,
        /// True when the target is another rank.
        remote: bool,
    },
    /// A wait.
    Wait {
        /// The comparison.
        cmp: CmpOp,
        /// The threshold (may contain iteration atoms).
        thr: Lin,
    },
    /// A fence.
    Fence,
}

/// One statement execution (or one per iteration of its summarised loops).
#[derive(Clone, Debug)]
pub struct Event {
    /// (rank, block).
    pub actor: (u32, u32),
    /// What.
    pub kind: EvKind,
    /// The cell (none for fences).
    pub cell: Option<Cell>,
    /// The statement.
    pub span: Span,
    /// Body or epilogue.
    pub section: Section,
    /// Path condition.
    pub guard: Guard,
    /// Innermost summarised loop.
    pub frame: Option<u32>,
    /// Program order within the actor.
    pub seq: u32,
}

/// A summarised loop.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Its iteration atom.
    pub iter: AtomId,
    /// Its trip count.
    pub trip: Lin,
    /// The enclosing summarised loop.
    pub parent: Option<u32>,
    /// The `for` statement.
    pub span: Span,
    /// `lo` (the variable is `lo + step * iter`).
    pub lo: Lin,
    /// `step`.
    pub step: Lin,
    /// Iterations of the written loop before this one's first: a piece of a split loop
    /// starts `off` iterations in (0 for a loop that is not split).
    pub off: Lin,
}

/// An executed `return if`.
#[derive(Clone, Debug)]
pub struct ReturnEv {
    /// (rank, block).
    pub actor: (u32, u32),
    /// The statement.
    pub span: Span,
    /// Its condition's value.
    pub cond: CondV,
}

/// Why abstract execution stopped.
#[derive(Clone, Debug)]
pub enum Stop {
    /// A form the method does not cover.
    Unsupported(String, Span),
    /// These parameters must be concrete here.
    Need(Vec<VarId>, String, Span),
    /// This iteration atom escaped into a cell, target or branch.
    Iter(AtomId, String, Span),
}

/// The result of one configuration.
#[derive(Debug)]
pub struct Run {
    /// Atoms and conditions.
    pub syms: Syms,
    /// Values of the enumerated parameters, in declaration order.
    pub config: Vec<(VarId, i64)>,
    /// Symbolic `require`s.
    pub assumptions: Vec<crate::engine::sym::CondId>,
    /// Every event.
    pub events: Vec<Event>,
    /// Summarised loops.
    pub frames: Vec<Frame>,
    /// Executed returns.
    pub returns: Vec<ReturnEv>,
    /// World size.
    pub world: i64,
    /// Blocks per rank.
    pub blocks: i64,
}

/// Which parameters are enumerated and which are symbolic.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Enumerated (world size first), in declaration order.
    pub enumerated: Vec<VarId>,
    /// Kept symbolic.
    pub symbolic: Vec<VarId>,
}

fn vars_of(p: &Protocol, e: &Expr, out: &mut BTreeSet<VarId>) {
    e.for_each_var(&mut |v| {
        if out.insert(v) {
            if let VarKind::Derived(d) = &p.vars[v].kind {
                vars_of(p, d, out);
            }
        }
    });
}

impl Plan {
    /// The initial plan: the world size, rank parameters and whatever the block
    /// count reads are enumerated; everything else is symbolic.
    pub fn initial(p: &Protocol) -> Plan {
        let mut need = BTreeSet::new();
        if let Some(b) = &p.blocks {
            vars_of(p, &b.count, &mut need);
        }
        let mut enumerated = Vec::new();
        let mut symbolic = Vec::new();
        for v in p.inputs() {
            let small = match &p.vars[v].kind {
                VarKind::World { .. } | VarKind::Param { domain: None } => true,
                _ => need.contains(&v),
            };
            if small {
                enumerated.push(v);
            } else {
                symbolic.push(v);
            }
        }
        Plan {
            enumerated,
            symbolic,
        }
    }
    /// Moves parameters to the enumerated set (if their domains are small).
    pub fn promote(&mut self, p: &Protocol, vars: &[VarId]) -> Result<(), String> {
        for v in vars {
            if self.enumerated.contains(v) {
                continue;
            }
            let size = match &p.vars[*v].kind {
                VarKind::Param {
                    domain: Some((lo, hi)),
                } => hi - lo + 1,
                _ => i64::MAX,
            };
            if size > TABLE.enum_limit {
                return Err(format!(
                    "`{}` would have to be enumerated, but its domain has {size} values (limit {}); \
                     narrow its domain to at most {} values, or keep it out of cell indices, targets and branch conditions",
                    p.var_name(*v),
                    TABLE.enum_limit,
                    TABLE.enum_limit
                ));
            }
            self.symbolic.retain(|x| x != v);
            self.enumerated.push(*v);
        }
        let order = p.inputs();
        self.enumerated
            .sort_by_key(|v| order.iter().position(|x| x == v));
        Ok(())
    }
    /// What the plan enumerates, as a scope's part ([`crate::report::scope::Enumeration`]).
    pub fn coverage(&self, p: &Protocol) -> crate::report::scope::Enumeration {
        use crate::report::scope::Over;
        let capped = || Some((TABLE.enum_world_max, world_text(p)));
        let vars = self
            .enumerated
            .iter()
            .map(|v| {
                let over = match &p.vars[*v].kind {
                    VarKind::World { .. } => match enumerated_world(p) {
                        Some((lo, hi)) if hi < declared_world(p).1 => Over::World {
                            range: Some((lo, hi)),
                            capped: capped(),
                        },
                        Some((lo, hi)) => Over::World {
                            range: Some((lo, hi)),
                            capped: None,
                        },
                        None => Over::World {
                            range: None,
                            capped: capped(),
                        },
                    },
                    VarKind::Param {
                        domain: Some((lo, hi)),
                    } => Over::Domain(*lo, *hi),
                    _ => Over::Ranks(p.var_name(p.world).to_string()),
                };
                (p.var_name(*v).to_string(), over)
            })
            .collect();
        crate::report::scope::Enumeration {
            vars,
            blocks: p.blocks.as_ref().map(|b| {
                (
                    p.var_name(b.var).to_string(),
                    collc_spec::print::expr_to_string(p, &b.count),
                )
            }),
            symbolic: self
                .symbolic
                .iter()
                .map(|v| p.var_name(*v).to_string())
                .collect(),
        }
    }
    /// The plan as a scope (the report's `method` starts with it).
    pub fn scope(&self, p: &Protocol) -> crate::report::scope::Scope {
        crate::report::scope::Scope::of(crate::report::scope::Covered::Enumeration(
            self.coverage(p),
        ))
    }
    /// The plan in words: `enumerated: P over 1..=16, root over 0..P; symbolic: n`.
    pub fn describe(&self, p: &Protocol) -> String {
        self.scope(p).to_string()
    }
    /// Number of configurations (an upper bound; `require`s may drop some).
    pub fn count(&self, p: &Protocol) -> u64 {
        self.count_at(p, &enumerated_worlds(p))
    }
    /// [`Plan::count`] with the world size over `worlds`.
    pub fn count_at(&self, p: &Protocol, worlds: &[i64]) -> u64 {
        let mut total = 0u64;
        for &w in worlds {
            let mut n = 1u64;
            for v in &self.enumerated {
                let size = match &p.vars[*v].kind {
                    VarKind::World { .. } => 1,
                    VarKind::Param {
                        domain: Some((lo, hi)),
                    } => (hi - lo + 1).max(0) as u64,
                    _ => w.max(0) as u64,
                };
                n = n.saturating_mul(size);
            }
            total = total.saturating_add(n);
        }
        total
    }
}

/// A callback over configurations; returns false to stop.
pub type ConfigFn<'a> = dyn FnMut(&[(VarId, i64)]) -> bool + 'a;

/// Calls `f` with every configuration of the plan: the world size running over `worlds`
/// (in that order), then the other enumerated parameters ascending in declaration order.
/// `f` returns false to stop.
pub fn configs_at(p: &Protocol, plan: &Plan, worlds: &[i64], f: &mut ConfigFn) {
    let mut cur: Vec<(VarId, i64)> = Vec::new();
    fn rec(
        p: &Protocol,
        plan: &Plan,
        worlds: &[i64],
        i: usize,
        cur: &mut Vec<(VarId, i64)>,
        f: &mut ConfigFn,
    ) -> bool {
        if i == plan.enumerated.len() {
            return f(cur);
        }
        let v = plan.enumerated[i];
        let world = cur.iter().find(|x| x.0 == p.world).map_or(1, |x| x.1);
        let values: Box<dyn Iterator<Item = i64>> = match &p.vars[v].kind {
            VarKind::World { .. } => Box::new(worlds.iter().copied()),
            VarKind::Param {
                domain: Some((lo, hi)),
            } => Box::new(*lo..=*hi),
            _ => Box::new(0..world),
        };
        for x in values {
            cur.push((v, x));
            let go = rec(p, plan, worlds, i + 1, cur, f);
            cur.pop();
            if !go {
                return false;
            }
        }
        true
    }
    rec(p, plan, worlds, 0, &mut cur, f);
}

#[derive(Clone, Debug)]
pub(crate) enum Val {
    V(Lin),
    Bad(Stop),
}

/// Runs one configuration. `Ok(None)` when a `require` rules it out.
pub fn run(p: &Protocol, config: &[(VarId, i64)]) -> Result<Option<Run>, Stop> {
    // Pass 1 tightens the bounds of symbolic parameters from the `require`s;
    // pass 2 evaluates everything with the tightened bounds.
    let mut bounds: HashMap<VarId, (i64, i64)> = HashMap::new();
    for (id, v) in collc_spec::id::enumerate(&p.vars) {
        if let VarKind::Param {
            domain: Some((lo, hi)),
        } = v.kind
        {
            if !config.iter().any(|x| x.0 == id) {
                bounds.insert(id, (lo, hi));
            }
        }
    }
    if let Some(c) = p.call {
        bounds.insert(c, crate::engine::call::call_bounds(p));
    }
    for _pass in 0..2 {
        let mut syms = Syms::with_bounds(bounds.clone());
        let (env, assumptions) = match setup(p, config, &mut syms)? {
            Some(x) => x,
            None => return Ok(None),
        };
        let mut changed = false;
        for c in &assumptions {
            for (v, lo, hi) in tighten(&syms, *c) {
                if let Some(b) = bounds.get_mut(&v) {
                    let nb = (b.0.max(lo), b.1.min(hi));
                    if nb != *b {
                        *b = nb;
                        changed = true;
                    }
                    if b.0 > b.1 {
                        return Ok(None);
                    }
                }
            }
        }
        if changed && _pass == 0 {
            continue;
        }
        return execute(p, config, syms, env, assumptions).map(Some);
    }
    Ok(None)
}

/// Bounds implied by a condition of the form `k*x + c >= 0` or `== 0`.
pub(crate) fn tighten(s: &Syms, c: crate::engine::sym::CondId) -> Vec<(VarId, i64, i64)> {
    use crate::engine::sym::Formula;
    let mut out = Vec::new();
    match &s.conds[c as usize] {
        Formula::Ge0(l) | Formula::Eq0(l) if l.t.len() == 1 => {
            let (a, k) = l.t[0];
            if let Atom::Param(v) = s.atoms[a as usize] {
                let eq = matches!(s.conds[c as usize], Formula::Eq0(_));
                // k*x >= -c
                let c0 = l.c;
                if k > 0 {
                    let lo = collc_spec::eval::ceil_div(-c0, k).unwrap_or(i64::MIN);
                    let hi = if eq { (-c0).div_euclid(k) } else { i64::MAX };
                    out.push((v, lo, hi));
                } else if k < 0 {
                    // x <= c0 / (-k)
                    let hi = c0.div_euclid(-k);
                    let lo = if eq {
                        collc_spec::eval::ceil_div(c0, -k).unwrap_or(i64::MIN)
                    } else {
                        i64::MIN
                    };
                    out.push((v, lo, hi));
                }
            }
        }
        Formula::And(xs) => {
            for x in xs {
                out.extend(tighten(s, *x));
            }
        }
        _ => {}
    }
    out
}

pub(crate) type Setup = (Vec<Option<Val>>, Vec<crate::engine::sym::CondId>);

pub(crate) fn setup(
    p: &Protocol,
    config: &[(VarId, i64)],
    syms: &mut Syms,
) -> Result<Option<Setup>, Stop> {
    let mut env: Vec<Option<Val>> = vec![None; p.vars.len()];
    for (a, arr) in collc_spec::id::enumerate(&p.arrays) {
        syms.array_bounds.insert(a, arr.domain);
    }
    for (id, v) in collc_spec::id::enumerate(&p.vars) {
        match &v.kind {
            VarKind::World { .. } | VarKind::Param { .. } | VarKind::Call => {
                let val = match config.iter().find(|x| x.0 == id) {
                    Some((_, x)) => Lin::k(*x),
                    None => syms.param(id),
                };
                env[id.index()] = Some(Val::V(val));
            }
            VarKind::Const(c) => env[id.index()] = Some(Val::V(Lin::k(*c))),
            VarKind::Derived(e) => {
                let mut ev = Evaluator {
                    p,
                    syms,
                    env: &env,
                    rank: None,
                };
                let val = match ev.expr(e, v.span) {
                    Ok(l) => {
                        name_atom(syms, &l, &v.name);
                        Val::V(l)
                    }
                    Err(s) => Val::Bad(s),
                };
                env[id.index()] = Some(val);
            }
            _ => {}
        }
    }
    let mut assumptions = Vec::new();
    for r in &p.requires {
        let mut ev = Evaluator {
            p,
            syms,
            env: &env,
            rank: None,
        };
        match ev.cond(&r.cond, r.span)? {
            CondV::Const(true) => {}
            CondV::Const(false) => return Ok(None),
            CondV::Sym(c) => assumptions.push(c),
        }
    }
    Ok(Some((env, assumptions)))
}

pub(crate) fn name_atom(syms: &mut Syms, l: &Lin, name: &str) {
    if l.c == 0 && l.t.len() == 1 && l.t[0].1 == 1 {
        let a = l.t[0].0;
        if !matches!(syms.atoms[a as usize], Atom::Param(_) | Atom::Iter(_)) {
            syms.names.entry(a).or_insert_with(|| name.to_string());
        }
    }
}

pub(crate) struct Evaluator<'a> {
    pub(crate) p: &'a Protocol,
    pub(crate) syms: &'a mut Syms,
    pub(crate) env: &'a [Option<Val>],
    pub(crate) rank: Option<u32>,
}

/// The reason for a value that depends on the iteration of a loop the
/// verifier keeps symbolic (what [`Stop::Iter`] means when nothing unrolls it).
pub fn symbolic_iteration(what: &str) -> String {
    format!(
        "{what} depends on the iteration of a loop kept symbolic; select cells, targets and \
         branches by ranks (`for p in peers`), parameters or a loop with a constant trip count \
         of at most {UNROLL_MAX}"
    )
}

/// The value of a bit operation, `log2` or `pow2` on concrete operands; an operand
/// out of its domain (a shift past 62, `log2` of a non-power of two) stops the
/// analysis with the value (the `index-range` obligation reports it as a violation).
fn bits(r: Result<i64, collc_spec::eval::EvalError>, span: Span) -> Result<i64, Stop> {
    r.map_err(|e| Stop::Unsupported(format!("{e} for some parameter value"), span))
}

/// A value the analysis needs concretely: its constant, or the loop iteration to
/// unroll ([`Stop::Iter`]) or the parameters to enumerate ([`Stop::Need`]) first.
/// Bit operations, `log2`, `pow2`, cell indices and targets take this route: the
/// symbolic arithmetic has no closed form for them.
fn concrete_lin(syms: &Syms, l: &Lin, what: &str, span: Span) -> Result<i64, Stop> {
    if let Some(c) = l.as_const() {
        return Ok(c);
    }
    let its = syms.deps(l);
    if let Some(j) = its.last() {
        return Err(Stop::Iter(*j, what.to_string(), span));
    }
    let ps = params_of(syms, l);
    if ps.is_empty() {
        return Err(Stop::Unsupported(
            format!(
                "{what} depends on host-array values; index cells and pick targets by ranks, \
                 loop variables and parameters, and pass host-array values as notify values"
            ),
            span,
        ));
    }
    Err(Stop::Need(ps, what.to_string(), span))
}

fn overflow(span: Span) -> Stop {
    Stop::Unsupported(
        "arithmetic that overflows 64 bits or divides by zero for some parameter value; \
         keep divisors positive (e.g. `max(1, d)`) and the domains small enough for products to fit"
            .into(),
        span,
    )
}

impl Evaluator<'_> {
    pub(crate) fn expr(&mut self, e: &Expr, span: Span) -> Result<Lin, Stop> {
        Ok(match e {
            Expr::Int(v) => Lin::k(*v),
            Expr::Var(v) => match &self.env[v.index()] {
                Some(Val::V(l)) => l.clone(),
                Some(Val::Bad(s)) => return Err(s.clone()),
                None => {
                    return Err(Stop::Unsupported(
                        format!(
                        "`{}` has no value here; read only names declared before this statement",
                        self.p.var_name(*v)
                    ),
                        span,
                    ))
                }
            },
            Expr::Array(a, idx) => self.array(*a, idx, span)?,
            Expr::Neg(a) => self.expr(a, span)?.scale(-1).ok_or(overflow(span))?,
            Expr::Rank(a) => self.expr(a, span)?,
            Expr::Bin(op, a, b) => {
                let a = self.expr(a, span)?;
                let b = self.expr(b, span)?;
                self.bin(*op, &a, &b, span)?
            }
            Expr::Log2(a) => self.log_pow(true, a, span)?,
            Expr::Pow2(a) => self.log_pow(false, a, span)?,
            Expr::CeilDiv(a, b) => {
                let a = self.expr(a, span)?;
                let b = self.expr(b, span)?;
                self.syms.ceil_div(&a, &b).ok_or(overflow(span))?
            }
            Expr::Min(a, b) => {
                let a = self.expr(a, span)?;
                let b = self.expr(b, span)?;
                self.syms.min(&a, &b).ok_or(overflow(span))?
            }
            Expr::Max(a, b) => {
                let a = self.expr(a, span)?;
                let b = self.expr(b, span)?;
                self.syms.max(&a, &b).ok_or(overflow(span))?
            }
        })
    }

    /// A host array element of the actor's rank: an atom, at a concrete index in bounds.
    fn array(&mut self, a: ArrayId, idx: &[Expr], span: Span) -> Result<Lin, Stop> {
        let Some(rank) = self.rank else {
            return Err(Stop::Unsupported(
                "a host array read outside the body; read host arrays in the body only".into(),
                span,
            ));
        };
        let arr = &self.p.arrays[a];
        let mut flat: i64 = 0;
        for (i, x) in idx.iter().enumerate() {
            let d = self.expr(&arr.dims[i], span)?;
            let x = self.expr(x, span)?;
            let (Some(d), Some(x)) = (d.as_const(), x.as_const()) else {
                return Err(Stop::Unsupported(
                    format!("a symbolic index into host array `{}`", arr.name),
                    span,
                ));
            };
            if x < 0 || x >= d {
                return Err(Stop::Unsupported(
                    format!("index {x} is outside host array `{}`", arr.name),
                    span,
                ));
            }
            flat = flat
                .checked_mul(d)
                .and_then(|f| f.checked_add(x))
                .ok_or(overflow(span))?;
        }
        Ok(Lin::atom(self.syms.intern(Atom::Elem(
            a,
            rank,
            flat as u32,
        ))))
    }

    /// A binary operation; a bitwise one on concrete operands, or symbolic in bit mode.
    fn bin(&mut self, op: BinOp, a: &Lin, b: &Lin, span: Span) -> Result<Lin, Stop> {
        let r = match op {
            BinOp::Add => a.add(b),
            BinOp::Sub => a.sub(b),
            BinOp::Mul => self.syms.mul(a, b),
            BinOp::Div => self.syms.div(a, b),
            BinOp::Mod => self.syms.rem(a, b),
            BinOp::Shl | BinOp::Shr | BinOp::And | BinOp::Xor | BinOp::Or
                if self.syms.bits && (a.as_const().is_none() || b.as_const().is_none()) =>
            {
                crate::engine::param::bits::binop(self.syms, op, a, b)
            }
            BinOp::Shl | BinOp::Shr | BinOp::And | BinOp::Xor | BinOp::Or => {
                let what = format!("an operand of `{}`", op.as_str());
                let x = concrete_lin(self.syms, a, &what, span)?;
                let y = concrete_lin(self.syms, b, &what, span)?;
                Some(Lin::k(bits(collc_spec::eval::bin(op, x, y), span)?))
            }
        };
        r.ok_or(overflow(span))
    }

    /// `log2(a)` (`log`) or `pow2(a)`: concrete, or symbolic in bit mode.
    fn log_pow(&mut self, log: bool, a: &Expr, span: Span) -> Result<Lin, Stop> {
        let what = if log {
            "the argument of `log2`"
        } else {
            "the argument of `pow2`"
        };
        let x = self.expr(a, span)?;
        if self.syms.bits && x.as_const().is_none() {
            return crate::engine::param::bits::log_pow(self.syms, log, &x).ok_or_else(|| {
                Stop::Unsupported(
                    format!("{what} is not a power of two of a loop or parameter"),
                    span,
                )
            });
        }
        let x = concrete_lin(self.syms, &x, what, span)?;
        Ok(Lin::k(bits(
            if log {
                collc_spec::eval::log2(x)
            } else {
                collc_spec::eval::bin(BinOp::Shl, 1, x)
            },
            span,
        )?))
    }

    pub(crate) fn cond(&mut self, c: &Cond, span: Span) -> Result<CondV, Stop> {
        Ok(match c {
            Cond::Bool(b) => CondV::Const(*b),
            Cond::Cmp(op, a, b) => {
                let a = self.expr(a, span)?;
                let b = self.expr(b, span)?;
                self.syms.cmp(*op, &a, &b).ok_or(overflow(span))?
            }
            Cond::Not(x) => {
                let v = self.cond(x, span)?;
                self.syms.not(v)
            }
            Cond::And(xs) | Cond::Or(xs) => {
                let mut vs = Vec::new();
                for x in xs {
                    vs.push(self.cond(x, span)?);
                }
                self.syms.junction(matches!(c, Cond::And(_)), vs)
            }
        })
    }
}

/// Parameters (symbolic) that a Lin reads, directly or inside atoms.
pub fn params_of(s: &Syms, l: &Lin) -> Vec<VarId> {
    let mut out = BTreeSet::new();
    fn atom(s: &Syms, a: AtomId, out: &mut BTreeSet<VarId>) {
        match &s.atoms[a as usize] {
            Atom::Param(v) => {
                out.insert(*v);
            }
            Atom::Elem(..) | Atom::Iter(_) => {}
            Atom::CeilDiv(x, y)
            | Atom::Div(x, y)
            | Atom::Mod(x, y)
            | Atom::Min(x, y)
            | Atom::Max(x, y)
            | Atom::Mul(x, y) => {
                lin(s, x, out);
                lin(s, y, out);
            }
            Atom::Tri(x) => lin(s, x, out),
            Atom::Bit(_, x, y) => {
                lin(s, x, out);
                lin(s, y, out);
            }
            Atom::Ind(g) => g.iter().for_each(|c| cond(s, *c, out)),
            Atom::Guarded(g, x) => {
                g.iter().for_each(|c| cond(s, *c, out));
                atom(s, *x, out);
            }
        }
    }
    fn lin(s: &Syms, l: &Lin, out: &mut BTreeSet<VarId>) {
        l.t.iter().for_each(|(a, _)| atom(s, *a, out));
    }
    fn cond(s: &Syms, c: crate::engine::sym::CondId, out: &mut BTreeSet<VarId>) {
        use crate::engine::sym::Formula;
        match &s.conds[c as usize] {
            Formula::Ge0(l) | Formula::Eq0(l) => lin(s, l, out),
            Formula::Not(x) => cond(s, *x, out),
            Formula::And(xs) | Formula::Or(xs) => xs.iter().for_each(|x| cond(s, *x, out)),
        }
    }
    lin(s, l, &mut out);
    out.into_iter().collect()
}

/// A numeric loop past its bounds' evaluation.
struct SpanLoop<'b> {
    var: VarId,
    lo: Lin,
    step: Lin,
    trip: Lin,
    body: &'b Block,
    span: Span,
    /// Iterations of the written loop before this piece's first (0 unless split).
    off: Lin,
    /// The branch conditions decided in this loop (a piece of a split loop), each
    /// over the loop's own iteration index.
    pins: Vec<Pin>,
}

/// A branch condition decided in one piece of a split loop: `a·i + r >= 0`, with `i`
/// the piece's iteration index, is `truth` for every iteration of the piece.
#[derive(Clone, Debug)]
struct Pin {
    a: i64,
    r: Lin,
    truth: bool,
}

impl Pin {
    /// The pin seen from a piece that starts `off` iterations later (`i = off + j`).
    fn shifted(&self, off: &Lin) -> Option<Pin> {
        Some(Pin {
            a: self.a,
            r: self.r.axpy(self.a, off)?,
            truth: self.truth,
        })
    }
}

struct Exec<'a> {
    p: &'a Protocol,
    syms: Syms,
    env: Vec<Option<Val>>,
    events: Vec<Event>,
    frames: Vec<Frame>,
    returns: Vec<ReturnEv>,
    world: i64,
    // per actor
    actor: (u32, u32),
    guard: Guard,
    frame: Option<u32>,
    section: Section,
    returned: bool,
    sym_depth: u32,
    seq: u32,
    occurrence: HashMap<(usize, Option<u32>), u32>,
    dims: Vec<Option<Vec<Option<i64>>>>,
    relevant: Vec<bool>,
    frame_ix: HashMap<FrameKey, u32>,
    /// The pins of the summarised loops being executed, with their iteration atoms.
    pins: Vec<(AtomId, Pin)>,
    /// Every split made so far, kept across actors: (the `for` statement's start, `a`,
    /// `r`) for `a·i + r >= 0` over the written loop's iteration index `i`. Every actor
    /// splits that loop there, so that its pieces are the same loops on every actor
    /// (and pair round by round); a split is exact whatever the loop's body.
    cuts: Vec<(usize, i64, Lin)>,
    /// The branch condition behind the last [`Stop::Iter`] of a branch, with its atom.
    branch: Option<(AtomId, crate::engine::sym::CondId)>,
}

type FrameKey = (usize, Option<u32>, u32, Lin, Lin, Lin);

fn execute(
    p: &Protocol,
    config: &[(VarId, i64)],
    syms: Syms,
    env: Vec<Option<Val>>,
    assumptions: Vec<crate::engine::sym::CondId>,
) -> Result<Run, Stop> {
    let world = config.iter().find(|x| x.0 == p.world).map_or(1, |x| x.1);
    let mut ex = Exec {
        p,
        syms,
        env,
        events: Vec::new(),
        frames: Vec::new(),
        returns: Vec::new(),
        world,
        actor: (0, 0),
        guard: Vec::new(),
        frame: None,
        section: Section::Body,
        returned: false,
        sym_depth: 0,
        seq: 0,
        occurrence: HashMap::new(),
        dims: vec![None; p.signals.len()],
        relevant: relevant(p),
        frame_ix: HashMap::new(),
        pins: Vec::new(),
        branch: None,
        cuts: Vec::new(),
    };
    let blocks = match &p.blocks {
        Some(b) => {
            let l = ex.eval(&b.count, p.span)?;
            match l.as_const() {
                Some(c) => c,
                None => {
                    return Err(Stop::Need(
                        params_of(&ex.syms, &l),
                        "the block count".into(),
                        p.span,
                    ))
                }
            }
        }
        None => 1,
    };
    let base = ex.env.clone();
    // A split found on one actor is made on every actor: run again from the start
    // while the runs find new ones (at most `SPLIT_MAX` per loop, so this ends).
    loop {
        let known = ex.cuts.len();
        run_actors(&mut ex, &base, world, blocks)?;
        if ex.cuts.len() == known {
            break;
        }
        // The atoms interned so far stay (unused ones change nothing).
        ex.events.clear();
        ex.returns.clear();
        ex.frames.clear();
        ex.frame_ix.clear();
    }
    Ok(Run {
        syms: ex.syms,
        config: config.to_vec(),
        assumptions,
        events: ex.events,
        frames: ex.frames,
        returns: ex.returns,
        world,
        blocks,
    })
}

/// Runs the body and the epilogue of every (rank, block).
fn run_actors(ex: &mut Exec, base: &[Option<Val>], world: i64, blocks: i64) -> Result<(), Stop> {
    let p = ex.p;
    for r in 0..world {
        for b in 0..blocks.max(0) {
            ex.env.clone_from_slice(base);
            ex.env[p.me.index()] = Some(Val::V(Lin::k(r)));
            if let Some(bl) = &p.blocks {
                ex.env[bl.var.index()] = Some(Val::V(Lin::k(b)));
            }
            ex.actor = (r as u32, b as u32);
            ex.guard.clear();
            ex.frame = None;
            ex.returned = false;
            ex.sym_depth = 0;
            ex.seq = 0;
            ex.occurrence.clear();
            ex.section = Section::Body;
            ex.block(&p.body)?;
            if !ex.returned {
                ex.section = Section::Epilogue;
                ex.block(&p.epilogue)?;
            }
        }
    }
    Ok(())
}

/// Variables whose values can matter for signals: read by notifies, waits, returns,
/// and the bounds and conditions of loops and branches that contain them (closed over
/// `let`s). Other `let`s (data offsets and lengths) are not evaluated.
pub(crate) fn relevant(p: &Protocol) -> Vec<bool> {
    let mut walk = Relevant {
        r: vec![false; p.vars.len()],
        lets: Vec::new(),
    };
    walk.visit_block(&p.body);
    walk.visit_block(&p.epilogue);
    let Relevant { mut r, lets } = walk;
    loop {
        let mut changed = false;
        for (v, e) in &lets {
            if r[v.index()] {
                e.for_each_var(&mut |x| {
                    if !r[x.index()] {
                        r[x.index()] = true;
                        changed = true;
                    }
                });
            }
        }
        if !changed {
            break;
        }
    }
    r
}

/// The walk of [`relevant`]: the variables read where they can matter, and the `let`s.
struct Relevant {
    r: Vec<bool>,
    lets: Vec<(VarId, Expr)>,
}

impl Visit for Relevant {
    fn visit_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, value } => self.lets.push((*var, value.clone())),
            StmtKind::Notify { .. } | StmtKind::Wait { .. } | StmtKind::Return { .. } => {
                visit::walk_stmt(self, s)
            }
            StmtKind::For { range, body, .. } => {
                if interesting(body) {
                    self.visit_range(range);
                }
                self.visit_block(body);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                if interesting(then_block) || else_block.as_ref().is_some_and(interesting) {
                    self.visit_cond(cond);
                }
                self.visit_block(then_block);
                if let Some(e) = else_block {
                    self.visit_block(e);
                }
            }
            _ => {}
        }
    }
    fn visit_expr(&mut self, e: &Expr) {
        e.for_each_var(&mut |v| self.r[v.index()] = true);
    }
}

/// True when `b` holds a notify, a wait, a fence or a return (nested blocks included).
pub(crate) fn interesting(b: &Block) -> bool {
    visit::any_stmt(b, &mut |s| {
        matches!(
            s.kind,
            StmtKind::Notify { .. }
                | StmtKind::Wait { .. }
                | StmtKind::Fence
                | StmtKind::Return { .. }
        )
    })
}

impl Exec<'_> {
    fn eval(&mut self, e: &Expr, span: Span) -> Result<Lin, Stop> {
        match e {
            Expr::Int(v) => return Ok(Lin::k(*v)),
            Expr::Var(v) => {
                if let Some(Val::V(l)) = &self.env[v.index()] {
                    return Ok(l.clone());
                }
            }
            _ => {}
        }
        let mut ev = Evaluator {
            p: self.p,
            syms: &mut self.syms,
            env: &self.env,
            rank: Some(self.actor.0),
        };
        ev.expr(e, span)
    }
    fn eval_cond(&mut self, c: &Cond, span: Span) -> Result<CondV, Stop> {
        let mut ev = Evaluator {
            p: self.p,
            syms: &mut self.syms,
            env: &self.env,
            rank: Some(self.actor.0),
        };
        ev.cond(c, span)
    }
    /// A value that must be concrete (cell index, target rank).
    fn concrete(&mut self, e: &Expr, what: &str, span: Span) -> Result<i64, Stop> {
        let l = self.eval(e, span)?;
        concrete_lin(&self.syms, &l, what, span)
    }

    fn cell(
        &mut self,
        signal: SignalId,
        index: &[Expr],
        owner: u32,
        span: Span,
    ) -> Result<Cell, Stop> {
        let mut idx = [0i64; MAX_DIMS];
        if index.len() > MAX_DIMS {
            return Err(Stop::Unsupported(
                format!(
                    "a signal with more than {MAX_DIMS} dimensions; flatten it to at most {MAX_DIMS}"
                ),
                span,
            ));
        }
        if self.dims[signal.index()].is_none() {
            let mut ds = Vec::new();
            for d in &self.p.signals[signal].dims {
                ds.push(self.eval(d, span)?.as_const());
            }
            self.dims[signal.index()] = Some(ds);
        }
        for (k, e) in index.iter().enumerate() {
            let i = match e {
                Expr::Int(v) => *v,
                Expr::Var(v) => match &self.env[v.index()] {
                    Some(Val::V(l)) if l.t.is_empty() => l.c,
                    _ => self.concrete(e, "a signal index", span)?,
                },
                _ => self.concrete(e, "a signal index", span)?,
            };
            let d = self.dims[signal.index()].as_ref().and_then(|ds| ds[k]);
            if i < 0 || d.is_some_and(|d| i >= d) {
                return Err(Stop::Unsupported(
                    format!(
                        "index {i} is outside dimension {} of `{}` (size {}); `collc check` names \
                         the parameter values that take it out of range",
                        k,
                        self.p.signals[signal].name,
                        d.map_or("?".into(), |x| x.to_string())
                    ),
                    span,
                ));
            }
            idx[k] = i;
        }
        Ok(Cell {
            signal,
            owner,
            index: Idx::new(&idx[..index.len()]).unwrap_or_else(|| Idx::new(&[]).expect("empty")),
        })
    }

    fn push(&mut self, kind: EvKind, cell: Option<Cell>, span: Span) {
        self.events.push(Event {
            actor: self.actor,
            kind,
            cell,
            span,
            section: self.section,
            guard: self.guard.clone(),
            frame: self.frame,
            seq: self.seq,
        });
        self.seq += 1;
    }

    fn block(&mut self, b: &Block) -> Result<(), Stop> {
        for s in &b.stmts {
            if self.returned {
                break;
            }
            self.stmt(s)?;
        }
        Ok(())
    }

    fn with_guard(
        &mut self,
        c: CondV,
        span: Span,
        f: impl FnOnce(&mut Self) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        match c {
            CondV::Const(true) => f(self),
            CondV::Const(false) => Ok(()),
            CondV::Sym(id) => {
                let id = match self.pinned(id) {
                    Some(CondV::Const(truth)) => return if truth { f(self) } else { Ok(()) },
                    Some(CondV::Sym(rest)) => rest,
                    None => id,
                };
                if let Some(&j) = self.syms.cond_deps(id).last() {
                    self.branch = Some((j, id));
                    return Err(Stop::Iter(j, "a branch condition".into(), span));
                }
                let saved = self.guard.clone();
                self.guard = union(&self.guard, &vec![id]);
                self.sym_depth += 1;
                let r = f(self);
                self.sym_depth -= 1;
                self.guard = saved;
                r
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Stop> {
        match &s.kind {
            StmtKind::Let { var, value } => {
                if !self.relevant[var.index()] {
                    return Ok(());
                }
                let v = match self.eval(value, s.span) {
                    Ok(l) => {
                        let name = self.p.var_name(*var).to_string();
                        name_atom(&mut self.syms, &l, &name);
                        Val::V(l)
                    }
                    Err(e) => Val::Bad(e),
                };
                self.env[var.index()] = Some(v);
            }
            StmtKind::Notify {
                signal,
                index,
                target,
                op,
                value,
            } => {
                let owner = match target {
                    Some(t) => self.notify_target(t, s.span)?,
                    None => self.actor.0,
                };
                let cell = self.cell(*signal, index, owner, s.span)?;
                let value = self.eval(value, s.span)?;
                let remote = owner != self.actor.0;
                self.push(
                    EvKind::Notify {
                        op: *op,
                        value,
                        remote,
                    },
                    Some(cell),
                    s.span,
                );
            }
            StmtKind::Wait {
                signal,
                index,
                cmp,
                threshold,
            } => {
                let cell = self.cell(*signal, index, self.actor.0, s.span)?;
                let thr = self.eval(threshold, s.span)?;
                self.push(EvKind::Wait { cmp: *cmp, thr }, Some(cell), s.span);
            }
            StmtKind::Fence => self.push(EvKind::Fence, None, s.span),
            StmtKind::Copy { .. }
            | StmtKind::Get { .. }
            | StmtKind::Put { .. }
            | StmtKind::Reduce { .. } => {}
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                if !interesting(then_block) && !else_block.as_ref().is_some_and(interesting) {
                    return Ok(());
                }
                let c = self.eval_cond(cond, s.span)?;
                self.with_guard(c, s.span, |x| x.block(then_block))?;
                if let Some(e) = else_block {
                    let nc = self.syms.not(c);
                    self.with_guard(nc, s.span, |x| x.block(e))?;
                }
            }
            StmtKind::Return { cond } => self.early_return(cond, s.span)?,
            StmtKind::For { var, range, body } => {
                if interesting(body) {
                    self.for_loop(*var, range, body, s.span)?;
                }
            }
        }
        Ok(())
    }

    /// A notify's target rank, which must be concrete and exist.
    fn notify_target(&mut self, t: &Expr, span: Span) -> Result<u32, Stop> {
        let t = self.concrete(t, "a notify target", span)?;
        if t < 0 || t >= self.world {
            return Err(Stop::Unsupported(
                format!(
                    "notify target rank {t} does not exist (P = {}); reduce it \
                     modulo P (`rank((...) % P)`)",
                    self.world
                ),
                span,
            ));
        }
        Ok(t as u32)
    }

    /// `return if cond`: recorded; a return that fires ends the actor's body, one that may
    /// fire guards the rest by its negation. Only at the top level of the body.
    fn early_return(&mut self, cond: &Cond, span: Span) -> Result<(), Stop> {
        let c = self.eval_cond(cond, span)?;
        self.returns.push(ReturnEv {
            actor: self.actor,
            span,
            cond: c,
        });
        if c != CondV::Const(false) && self.sym_depth > 0 {
            return Err(Stop::Unsupported(
                "an early return under a symbolic condition; write `return if` at \
                 the top level of the body, folding the condition into it"
                    .into(),
                span,
            ));
        }
        match c {
            CondV::Const(true) => self.returned = true,
            CondV::Const(false) => {}
            CondV::Sym(id) => {
                let n = self.syms.not(CondV::Sym(id));
                if let CondV::Sym(nid) = n {
                    self.guard = union(&self.guard, &vec![nid]);
                }
            }
        }
        Ok(())
    }

    fn for_loop(
        &mut self,
        var: VarId,
        range: &Range,
        body: &Block,
        span: Span,
    ) -> Result<(), Stop> {
        match range {
            Range::Peers | Range::Ranks => {
                for q in 0..self.world {
                    if matches!(range, Range::Peers) && q == self.actor.0 as i64 {
                        continue;
                    }
                    self.env[var.index()] = Some(Val::V(Lin::k(q)));
                    self.block(body)?;
                }
                Ok(())
            }
            Range::Seq(q) => self.seq_loop(var, q, body, span),
            Range::Span { lo, hi, step } => {
                let lo = self.eval(lo, span)?;
                let hi = self.eval(hi, span)?;
                let step = self.eval(step, span)?;
                if step.as_const().is_some_and(|x| x <= 0) {
                    return Err(Stop::Unsupported(
                        "a loop step that is not positive; write a positive step".into(),
                        span,
                    ));
                }
                let trip = self.syms.trip(&lo, &hi, &step).ok_or(overflow(span))?;
                let l = SpanLoop {
                    var,
                    lo,
                    step,
                    trip,
                    body,
                    span,
                    off: Lin::k(0),
                    pins: Vec::new(),
                };
                match l.trip.as_const().filter(|n| *n <= UNROLL_SMALL) {
                    Some(n) => self.unroll(var, &l.lo, &l.step, n, body, span),
                    None => self.summarise(&l),
                }
            }
        }
    }

    /// A power-of-two or reversed loop, unrolled: its values have no affine closed form.
    fn seq_loop(&mut self, var: VarId, q: &Seq, body: &Block, span: Span) -> Result<(), Stop> {
        let what = "a bound of a power-of-two or reversed loop";
        let lo = self.concrete(&q.lo, what, span)?;
        let hi = self.concrete(&q.hi, what, span)?;
        let step = self.concrete(&q.step, what, span)?;
        let vals = collc_spec::eval::SeqValues::new(lo, hi, step, q.geometric, q.rev)
            .map_err(|e| Stop::Unsupported(e.to_string(), span))?;
        if vals.len() > UNROLL_MAX {
            return Err(Stop::Unsupported(
                format!(
                    "a reversed loop of {} iterations (at most {UNROLL_MAX} are unrolled)",
                    vals.len()
                ),
                span,
            ));
        }
        for v in vals.iter() {
            self.env[var.index()] = Some(Val::V(Lin::k(v)));
            self.block(body)?;
        }
        Ok(())
    }

    /// The frame of a summarised loop. The k-th execution of this loop (under the same
    /// enclosing frame) shares its frame and iteration atom with every other actor's k-th
    /// execution when the bounds agree, so equal cells look equal.
    fn loop_frame(&mut self, l: &SpanLoop) -> u32 {
        let occ = {
            let n = self
                .occurrence
                .entry((l.span.start, self.frame))
                .or_insert(0);
            *n += 1;
            *n
        };
        let key = (
            l.span.start,
            self.frame,
            occ,
            l.trip.clone(),
            l.lo.clone(),
            l.step.clone(),
        );
        if let Some(f) = self.frame_ix.get(&key) {
            return *f;
        }
        let iter = self.syms.new_iter(l.trip.clone(), l.var);
        self.frames.push(Frame {
            iter,
            trip: l.trip.clone(),
            parent: self.frame,
            span: l.span,
            lo: l.lo.clone(),
            step: l.step.clone(),
            off: l.off.clone(),
        });
        let f = self.frames.len() as u32 - 1;
        self.frame_ix.insert(key, f);
        f
    }

    /// A loop kept symbolic: its body once, with the variable `lo + step * i` for the
    /// frame's iteration atom `i`. When the body needs the iteration concrete, it is
    /// undone, then split at a branch on the loop variable ([`Exec::split`]), or unrolled
    /// (trip count at most `UNROLL_MAX`), or the trip count's parameters are asked for, or
    /// it is unsupported.
    fn summarise(&mut self, l: &SpanLoop) -> Result<(), Stop> {
        if let Some(cut) = self.pending_cut(l) {
            return self.split(l, cut);
        }
        let mark = self.events.len();
        let seq = self.seq;
        let saved_frame = self.frame;
        let fid = self.loop_frame(l);
        let iter = self.frames[fid as usize].iter;
        self.frame = Some(fid);
        let sv = self
            .syms
            .mul(&l.step, &Lin::atom(iter))
            .ok_or(overflow(l.span))?;
        let val = l.lo.add(&sv).ok_or(overflow(l.span))?;
        self.env[l.var.index()] = Some(Val::V(val));
        let pins = self.pins.len();
        self.pins.extend(l.pins.iter().map(|p| (iter, p.clone())));
        self.branch = None;
        let r = self.block(l.body);
        self.pins.truncate(pins);
        self.frame = saved_frame;
        let Err(Stop::Iter(j, what, sp)) = r else {
            return r;
        };
        if j != iter {
            return Err(Stop::Iter(j, what, sp));
        }
        self.events.truncate(mark);
        self.seq = seq;
        let branch = self.branch.take().filter(|(b, _)| *b == iter);
        if let Some((_, c)) = branch.filter(|_| !self.promotable(&l.trip)) {
            return match self.split_form(c, iter) {
                Some(cut) if l.pins.len() < SPLIT_MAX => {
                    self.register(l, &cut);
                    self.split(l, cut)
                }
                cut => Err(self.unsplit(l, c, cut.is_some(), sp)),
            };
        }
        let name = self.p.var_name(l.var);
        match l.trip.as_const() {
            Some(n) if n <= UNROLL_MAX => self.unroll(l.var, &l.lo, &l.step, n, l.body, l.span),
            // Enumerate what the trip count reads, then unroll.
            None if !params_of(&self.syms, &l.trip).is_empty() => Err(Stop::Need(
                params_of(&self.syms, &l.trip),
                format!("the trip count of the loop over `{name}` (its variable selects {what})"),
                sp,
            )),
            _ => Err(Stop::Unsupported(
                format!(
                    "{what} depends on the loop variable `{name}` of a loop whose trip count `{}` is symbolic or over {UNROLL_MAX}; \
                     select cells and targets by ranks (`for p in peers`) or by a loop with a constant trip count of at most {UNROLL_MAX}",
                    crate::engine::sym::Printer { syms: &self.syms, p: self.p }.lin(&l.trip)
                ),
                sp,
            )),
        }
    }

    /// Why a branch condition `c` on the variable of loop `l` (trip count symbolic) is not
    /// split: it needs more than `SPLIT_MAX` cut points (`over`), or a comparison in it
    /// is not of the loop variable with a loop-invariant value.
    fn unsplit(&self, l: &SpanLoop, c: crate::engine::sym::CondId, over: bool, sp: Span) -> Stop {
        let name = self.p.var_name(l.var);
        let cond = crate::engine::sym::Printer {
            syms: &self.syms,
            p: self.p,
        }
        .cond(c);
        let why = if over {
            format!("cuts the loop over `{name}` at more than {SPLIT_MAX} points (the most a loop with a symbolic trip count is split at)")
        } else {
            format!("is not made of comparisons of `{name}` with loop-invariant values (`{name} >= K`, `{name} == T - 1`, joined by `&&`, `||`, `!`)")
        };
        Stop::Unsupported(
            format!(
                "the branch condition `{cond}` (over the iteration index of `{name}`) {why}; write the loop as consecutive loops over the ranges the condition selects (`for {name} in 0..K {{ .. }} for {name} in K..T {{ .. }}`), or give its trip count a small domain"
            ),
            sp,
        )
    }

    /// True when the trip count is concrete or its parameters can be enumerated (then
    /// the loop is unrolled, not split: the finer analysis).
    fn promotable(&self, trip: &Lin) -> bool {
        if trip.as_const().is_some() {
            return true;
        }
        let vars = params_of(&self.syms, trip);
        !vars.is_empty()
            && vars.iter().all(|v| match self.p.vars[*v].kind {
                VarKind::Param {
                    domain: Some((lo, hi)),
                } => hi - lo < TABLE.enum_limit,
                _ => false,
            })
    }

    /// Records a split of loop `l` (`a·j + r >= 0` over its own iteration index) for every
    /// actor, as a cut over the written loop's index (`r - a·off`), unless it reads an
    /// iteration atom (an enclosing loop's: other actors' atoms differ) or the loop has
    /// its `SPLIT_MAX` cuts.
    fn register(&mut self, l: &SpanLoop, (a, r): &(i64, Lin)) {
        let Some(r0) = r.axpy(-a, &l.off) else {
            return;
        };
        let here = self.cuts.iter().filter(|c| c.0 == l.span.start).count();
        if here < SPLIT_MAX
            && self.syms.deps(&r0).is_empty()
            && !self.cuts.contains(&(l.span.start, *a, r0.clone()))
        {
            self.cuts.push((l.span.start, *a, r0));
        }
    }

    /// The first cut recorded for loop `l` that its pieces have not made yet, over `l`'s
    /// own iteration index.
    fn pending_cut(&self, l: &SpanLoop) -> Option<(i64, Lin)> {
        if l.pins.len() >= SPLIT_MAX {
            return None;
        }
        self.cuts
            .iter()
            .filter(|c| c.0 == l.span.start)
            .filter_map(|(_, a, r0)| Some((*a, r0.axpy(*a, &l.off)?)))
            .find(|(a, r)| !l.pins.iter().any(|p| p.a == *a && p.r == *r))
    }

    /// The truth of `l >= 0` that a pin of an enclosing piece decides: a pin
    /// `a·i + r0 >= 0` decides `a·i + r >= 0` when `r - r0` is a literal of the right
    /// sign, and `-a·i + r >= 0` (its negation when `r = -r0 - 1`) likewise.
    fn pin_ge(&self, l: &Lin) -> Option<bool> {
        self.pins.iter().rev().find_map(|(iter, p)| {
            let (a, r) = l.split(*iter);
            if a == p.a {
                // a·i + r = (a·i + r0) + d
                let d = r.sub(&p.r)?.as_const()?;
                return match p.truth {
                    true => (d >= 0).then_some(true),
                    false => (d <= 0).then_some(false),
                };
            }
            if a == -p.a && a != 0 {
                // -(a·i + r0) + e with e = r + r0: true iff a·i + r0 <= e
                let e = r.add(&p.r)?.as_const()?;
                return match p.truth {
                    true => (e <= -1).then_some(false),
                    false => (e >= -1).then_some(true),
                };
            }
            None
        })
    }

    /// A branch condition with what the pins of the enclosing pieces decide put in: each
    /// comparison `l >= 0` a pin decides, and `l == 0` as `l >= 0 && -l >= 0`, through
    /// `!`, `&&` and `||`. `None` when no pin changes it.
    fn pinned(&mut self, c: crate::engine::sym::CondId) -> Option<CondV> {
        if self.pins.is_empty() {
            return None;
        }
        let v = self.reduce(c)?;
        (v != CondV::Sym(c)).then_some(v)
    }

    fn reduce(&mut self, c: crate::engine::sym::CondId) -> Option<CondV> {
        use crate::engine::sym::Formula;
        Some(match self.syms.conds[c as usize].clone() {
            Formula::Ge0(l) => self.pin_ge(&l).map_or(CondV::Sym(c), CondV::Const),
            Formula::Eq0(l) => {
                let neg = l.scale(-1)?;
                match (self.pin_ge(&l), self.pin_ge(&neg)) {
                    (Some(false), _) | (_, Some(false)) => CondV::Const(false),
                    (Some(true), Some(true)) => CondV::Const(true),
                    (Some(true), None) => self.syms.formula(Formula::Ge0(neg)),
                    (None, Some(true)) => self.syms.formula(Formula::Ge0(l)),
                    (None, None) => CondV::Sym(c),
                }
            }
            Formula::Not(x) => {
                let v = self.reduce(x)?;
                self.syms.not(v)
            }
            Formula::And(xs) | Formula::Or(xs) => {
                let and = matches!(self.syms.conds[c as usize], Formula::And(_));
                let mut vs = Vec::new();
                for x in xs {
                    vs.push(self.reduce(x)?);
                }
                self.syms.junction(and, vs)
            }
        })
    }

    /// A cut point of a branch condition: the first comparison in it (through `!`, `&&`,
    /// `||`; `l == 0` is `l >= 0` and `-l >= 0`) that no pin decides and that compares the
    /// loop variable with a loop-invariant value, as `a·i + r >= 0` over the iteration
    /// atom `iter` (`a != 0`, `r` free of `iter`).
    fn split_form(&self, c: crate::engine::sym::CondId, iter: AtomId) -> Option<(i64, Lin)> {
        use crate::engine::sym::Formula;
        let cut = |l: &Lin| -> Option<(i64, Lin)> {
            if self.pin_ge(l).is_some() {
                return None;
            }
            let (a, r) = l.split(iter);
            (a != 0 && !self.syms.deps(&r).contains(&iter)).then_some((a, r))
        };
        match &self.syms.conds[c as usize] {
            Formula::Ge0(l) => cut(l),
            Formula::Eq0(l) => cut(l).or_else(|| cut(&l.scale(-1)?)),
            Formula::Not(x) => self.split_form(*x, iter),
            Formula::And(xs) | Formula::Or(xs) => xs.iter().find_map(|x| self.split_form(*x, iter)),
        }
    }

    /// Splits a summarised loop at the iteration where `a·i + r >= 0` changes: `m` is
    /// `ceil(-r / a)` (a > 0: false before, true from there) or `floor(r / -a) + 1`
    /// (a < 0: true before, false from there), clamped to `0..=trip`. Each piece is
    /// summarised with the condition decided (and the loop's earlier pins shifted).
    fn split(&mut self, l: &SpanLoop, (a, r): (i64, Lin)) -> Result<(), Stop> {
        let ov = || overflow(l.span);
        let m = if a > 0 {
            self.syms.ceil_div(&r.scale(-1).ok_or(ov())?, &Lin::k(a))
        } else {
            self.syms
                .div(&r, &Lin::k(-a))
                .and_then(|q| q.add(&Lin::k(1)))
        }
        .ok_or(ov())?;
        let m = self.syms.min(&l.trip, &m).ok_or(ov())?;
        let m = self.syms.max(&Lin::k(0), &m).ok_or(ov())?;
        let rest = l.trip.sub(&m).ok_or(ov())?;
        for (off, trip, truth) in [(Lin::k(0), m.clone(), a < 0), (m, rest, a > 0)] {
            let lo = self.syms.mul(&l.step, &off).ok_or(ov())?;
            let lo = l.lo.add(&lo).ok_or(ov())?;
            if let Some(n) = trip.as_const().filter(|n| *n <= UNROLL_SMALL) {
                self.unroll(l.var, &lo, &l.step, n, l.body, l.span)?;
                continue;
            }
            let mut pins = Vec::new();
            for p in &l.pins {
                pins.push(p.shifted(&off).ok_or(ov())?);
            }
            pins.push(
                Pin {
                    a,
                    r: r.clone(),
                    truth,
                }
                .shifted(&off)
                .ok_or(ov())?,
            );
            let piece = SpanLoop {
                var: l.var,
                lo,
                step: l.step.clone(),
                trip,
                body: l.body,
                span: l.span,
                off: l.off.add(&off).ok_or(ov())?,
                pins,
            };
            self.summarise(&piece)?;
        }
        Ok(())
    }

    fn unroll(
        &mut self,
        var: VarId,
        lo: &Lin,
        step: &Lin,
        n: i64,
        body: &Block,
        span: Span,
    ) -> Result<(), Stop> {
        for i in 0..n {
            let v = lo
                .add(&self.syms.mul(step, &Lin::k(i)).ok_or(overflow(span))?)
                .ok_or(overflow(span))?;
            self.env[var.index()] = Some(Val::V(v));
            self.block(body)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipeline whose sender waits only from round K on (`if t >= K`), with a symbolic
    /// chunk count T and the root a rank parameter.
    fn branch_pipeline() -> collc_spec::Validated {
        let text = "collective c: barrier() {
            ranks P in 2..=3;
            param root: rank;
            param T: int in 1..=100000;
            param K: int in 1..=100000;
            signal full[P];
            signal ack[P];
            body {
                for t in 0..T {
                    if me == root {
                        if t >= K {
                            for q in peers { wait ack[q] >= t - K + 1; }
                        }
                        for q in peers { notify full[root] @ q += 1; }
                    } else {
                        wait full[root] >= t + 1;
                        notify ack[me] @ root += 1;
                    }
                }
            }
            epilogue {
                if me == root { for q in peers { notify ack[q] -= T; } }
                else { notify full[root] -= T; }
            }
        }";
        collc_spec::front(&crate::Ranges, text)
            .protocol
            .expect("the case validates")
    }

    #[test]
    fn a_branch_on_the_loop_variable_splits_the_loop_on_every_actor() {
        let p = branch_pipeline();
        let (root, world) = (1, 3);
        let config = vec![
            (p.world, world),
            (
                VarId::new(p.vars.iter().position(|v| v.name == "root").expect("root")),
                root,
            ),
        ];
        let run = run(&p, &config).expect("runs").expect("admitted");
        // Two pieces, 0..m and m..T, shared by every actor (the root splits, the peers
        // split at the root's cut): every event is in one of them, and no actor's event
        // is in a loop that is not split.
        let used: BTreeSet<u32> = run.events.iter().filter_map(|e| e.frame).collect();
        assert_eq!(used.len(), 2, "{:?}", run.frames);
        let pieces: Vec<&Frame> = used.iter().map(|f| &run.frames[*f as usize]).collect();
        assert!(pieces[0].off.is_zero());
        assert_eq!(
            pieces[1].off, pieces[0].trip,
            "the second piece starts where the first ends"
        );
        let total = pieces[0].trip.add(&pieces[1].trip).expect("sum");
        assert_eq!(total.t.len(), 1, "m + (T - m) = T: {total:?}");
        // The root's waits are in the second piece only, under no condition on the round.
        let waits: Vec<&Event> = run
            .events
            .iter()
            .filter(|e| e.actor.0 == root as u32 && matches!(e.kind, EvKind::Wait { .. }))
            .collect();
        assert_eq!(waits.len(), 2, "one per peer");
        for w in waits {
            assert_eq!(w.frame, used.iter().nth(1).copied());
            assert!(w.guard.iter().all(|c| run.syms.cond_deps(*c).is_empty()));
        }
        for r in 0..world as u32 {
            let frames: BTreeSet<u32> = run
                .events
                .iter()
                .filter(|e| e.actor.0 == r)
                .filter_map(|e| e.frame)
                .collect();
            assert_eq!(frames, used, "rank {r} runs the same pieces");
        }
    }

    /// An equality of the loop variable with a loop-invariant value (`t == 3`) splits the
    /// loop at its point (e00edef): the enumerated route runs it with T symbolic instead of
    /// asking for T's values.
    #[test]
    fn a_branch_on_an_equality_with_the_loop_variable_is_split() {
        let text = "collective c: barrier() {
            ranks P in 2..=2;
            param T: int in 1..=100000;
            signal s[P];
            body {
                for t in 0..T {
                    if t == 3 { notify s[me] @ rank(1 - me) += 1; }
                }
                wait s[1 - me] >= 1;
            }
            epilogue { notify s[1 - me] -= 1; }
        }";
        let p = collc_spec::front(&crate::Ranges, text)
            .protocol
            .expect("the case validates");
        let config = vec![(p.world, 2)];
        match run(&p, &config) {
            Ok(Some(_)) => {}
            other => panic!("expected the loop to be split at `t == 3`: {other:?}"),
        }
    }
}
