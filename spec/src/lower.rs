//! Lowering from the AST to the protocol IR: name resolution, typing (ranks vs
//! counts), domain and shape checks. Every problem becomes a [`Diagnostic`];
//! lowering keeps going after an error so that one run reports them all.

use crate::ir::*;
use collc_grammar::ast;
use collc_grammar::suggest::closest;
use collc_grammar::{Diagnostic, Fix, Span};
use std::collections::HashMap;

mod decl;
mod elem;
mod epoch;
mod exprs;
mod ops;
mod semantics;
mod stmts;

pub use semantics::kind_names;

/// Lowers a parsed file to a validated protocol, or returns every error found.
/// Warnings are returned alongside a successful result.
pub fn lower(file: &ast::File) -> Result<(Protocol, Vec<Diagnostic>), Vec<Diagnostic>> {
    let mut l = Lowerer::new();
    let proto = l.file(file);
    if !l.diags.iter().any(|d| d.is_error()) {
        l.diags.extend(epoch::check(&proto));
    }
    if l.diags.iter().any(|d| d.is_error()) {
        Err(l.diags)
    } else {
        Ok((proto, l.diags))
    }
}

#[derive(Clone, Copy, Debug)]
enum Name {
    Var(VarId),
    Signal(SignalId),
    Window(WindowId),
    Tile(TileId),
    Array(ArrayId),
}

/// What an expression reads, for placement checks.
#[derive(Clone, Copy, Default, Debug)]
struct Deps {
    me: bool,
    block: bool,
    loop_var: bool,
    array: bool,
    /// Reads a name whose declaration had an error: its value and type are
    /// unknown, so checks that need them stay silent instead of cascading.
    poison: bool,
}

impl Deps {
    fn or(self, o: Deps) -> Deps {
        Deps {
            me: self.me || o.me,
            block: self.block || o.block,
            loop_var: self.loop_var || o.loop_var,
            array: self.array || o.array,
            poison: self.poison || o.poison,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Count,
    Rank,
    Any,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    TopLevel,
    Body,
    Epilogue,
}

struct Lowerer {
    diags: Vec<Diagnostic>,
    vars: Vec<Var>,
    var_deps: Vec<Deps>,
    scopes: Vec<HashMap<String, (Name, Span)>>,
    signals: Vec<Signal>,
    windows: Vec<Buffer>,
    tiles: Vec<Buffer>,
    arrays: Vec<Array>,
    requires: Vec<Require>,
    decls: Vec<Decl>,
    world: Option<VarId>,
    me: VarId,
    /// The call index, created when first read.
    call: Option<VarId>,
    calls: Option<CallsBound>,
    elem_param: Option<ElemParam>,
    op_param: Option<OpParam>,
    /// Where a reduction names a fixed operator (refused when an `op` parameter exists).
    fixed_ops: Vec<Span>,
    blocks: Option<Blocks>,
    region: Section,
    loop_depth: usize,
    /// Where each signal's, window's, tile's and array's name was written, for
    /// "declared here" labels that point at one name rather than a whole line.
    name_spans: HashMap<(NameKind, usize), Span>,
    /// A variable standing for anything that failed to lower (see [`Deps::poison`]).
    poison: Option<VarId>,
    /// The `body` and `epilogue` keywords seen so far.
    body_keyword: Option<Span>,
    epilogue_keyword: Option<Span>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum NameKind {
    Signal,
    Window,
    Tile,
    Array,
}

/// What a name is, for labels like "`data` is a window".
fn what_is(n: Option<Name>) -> &'static str {
    match n {
        Some(Name::Var(_)) => "a number",
        Some(Name::Signal(_)) => "a signal",
        Some(Name::Window(_)) => "a window",
        Some(Name::Tile(_)) => "a tile",
        Some(Name::Array(_)) => "a host array",
        None => "not declared",
    }
}

fn err(code: &str, msg: impl Into<String>, span: Span, label: impl Into<String>) -> Diagnostic {
    Diagnostic::error(code, msg).with_primary(span, label)
}

impl Lowerer {
    fn new() -> Self {
        let mut l = Lowerer {
            diags: Vec::new(),
            vars: Vec::new(),
            var_deps: Vec::new(),
            scopes: vec![HashMap::new()],
            signals: Vec::new(),
            windows: Vec::new(),
            tiles: Vec::new(),
            arrays: Vec::new(),
            requires: Vec::new(),
            decls: Vec::new(),
            world: None,
            me: VarId::new(0),
            call: None,
            calls: None,
            elem_param: None,
            op_param: None,
            fixed_ops: Vec::new(),
            blocks: None,
            region: Section::TopLevel,
            loop_depth: 0,
            name_spans: HashMap::new(),
            poison: None,
            body_keyword: None,
            epilogue_keyword: None,
        };
        l.me = l.add_var(
            "me",
            VarKind::Me,
            Ty::Rank,
            Span::default(),
            Deps {
                me: true,
                ..Deps::default()
            },
        );
        l
    }

    fn add_var(&mut self, name: &str, kind: VarKind, ty: Ty, span: Span, deps: Deps) -> VarId {
        self.vars.push(Var {
            name: name.to_string(),
            kind,
            ty,
            span,
        });
        self.var_deps.push(deps);
        VarId::new(self.vars.len() - 1)
    }

    /// The call index variable (created on first use).
    fn call_var(&mut self) -> VarId {
        match self.call {
            Some(v) => v,
            None => {
                let v = self.add_var(
                    "call",
                    VarKind::Call,
                    Ty::Int,
                    Span::default(),
                    Deps {
                        me: true,
                        ..Deps::default()
                    },
                );
                self.call = Some(v);
                v
            }
        }
    }

    /// An expression that stands for a value whose declaration was wrong: it
    /// reads a poisoned variable, so no later check complains about it again.
    fn poisoned_expr(&mut self) -> Expr {
        let v = match self.poison {
            Some(v) => v,
            None => {
                let v = self.add_var(
                    "<error>",
                    VarKind::Local,
                    Ty::Int,
                    Span::default(),
                    Deps {
                        poison: true,
                        ..Deps::default()
                    },
                );
                self.poison = Some(v);
                v
            }
        };
        Expr::Var(v)
    }

    /// Marks a variable as poisoned (its declaration had an error).
    fn poison_var(&mut self, v: VarId) {
        self.var_deps[v.index()].poison = true;
    }

    fn lookup(&self, name: &str) -> Option<Name> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .map(|(n, _)| *n)
    }

    /// The one lifetime of a window or value signal; more than one is refused.
    fn lifetime(
        &mut self,
        name: &ast::Ident,
        written: &[(ast::Lifetime, Span)],
    ) -> Option<Lifetime> {
        let (first, first_span) = written.first()?;
        if let Some((second, sp)) = written.get(1) {
            let text = |l: &ast::Lifetime| match l {
                ast::Lifetime::Reused => "reused",
                ast::Lifetime::PerCall => "per call",
            };
            let (code, msg) = if first == second {
                (
                    "type::lifetime-conflict",
                    format!("`{}` declares `{}` twice", name.name, text(first)),
                )
            } else {
                (
                    "type::lifetime-conflict",
                    format!(
                        "`{}` is declared both `{}` and `{}`",
                        name.name,
                        text(first),
                        text(second)
                    ),
                )
            };
            self.diags.push(
                err(code, msg, *sp, "second lifetime")
                    .with_label(*first_span, "first lifetime")
                    .with_help("keep one: `reused` (one buffer for every call) or `per call` (a fresh buffer for each call)"),
            );
        }
        Some(match first {
            ast::Lifetime::Reused => Lifetime::Reused,
            ast::Lifetime::PerCall => Lifetime::PerCall,
        })
    }

    /// Declares a name in the innermost scope; names may not shadow visible names.
    fn declare(&mut self, id: &ast::Ident, n: Name) {
        if id.name == "me" {
            self.diags.push(
                err(
                    "resolve::reserved-name",
                    "`me` is reserved",
                    id.span,
                    "cannot be declared",
                )
                .with_help("`me` always names the executing rank; pick another name"),
            );
            return;
        }
        if let Some((_, prev)) = self.scopes.iter().rev().find_map(|s| s.get(&id.name)) {
            let mut d = err(
                "resolve::duplicate-name",
                format!("`{}` is already defined", id.name),
                id.span,
                "defined again here",
            )
            .with_help("names may not shadow each other; rename one of them");
            if *prev != Span::default() {
                d = d.with_label(*prev, "first defined here");
            }
            self.diags.push(d);
            return;
        }
        self.scopes
            .last_mut()
            .expect("scope stack")
            .insert(id.name.clone(), (n, id.span));
    }

    fn file(&mut self, f: &ast::File) -> Protocol {
        let mut body: Option<Block> = None;
        let mut epilogue: Option<Block> = None;
        for item in &f.items {
            self.item(item, &mut body, &mut epilogue);
        }
        let world = match self.world {
            Some(w) => w,
            None => {
                self.diags.push(
                    err(
                        "structure::missing-ranks",
                        "the collective does not declare its ranks",
                        f.name.span,
                        "in this collective",
                    )
                    .with_help("add `ranks P in 1..=16;` as its first declaration"),
                );
                self.add_var(
                    "P",
                    VarKind::World { lo: 1, hi: 1 },
                    Ty::Int,
                    Span::default(),
                    Deps::default(),
                )
            }
        };
        let body = body.unwrap_or_else(|| {
            self.diags.push(
                err(
                    "structure::missing-body",
                    "the collective has no body",
                    f.name.span,
                    "in this collective",
                )
                .with_help("add `body { ... }` with the protocol's notifies and waits"),
            );
            Block::default()
        });
        let semantics = self.semantics(&f.semantics);
        self.semantics_elems(&semantics);
        self.op_param_used(&semantics);
        Protocol {
            name: f.name.name.clone(),
            semantics,
            vars: std::mem::take(&mut self.vars),
            world,
            me: self.me,
            call: self.call,
            calls: self.calls,
            blocks: self.blocks.take(),
            requires: std::mem::take(&mut self.requires),
            signals: std::mem::take(&mut self.signals),
            windows: std::mem::take(&mut self.windows),
            tiles: std::mem::take(&mut self.tiles),
            elem_param: self.elem_param.take(),
            op_param: self.op_param.take(),
            arrays: std::mem::take(&mut self.arrays),
            decls: std::mem::take(&mut self.decls),
            body,
            epilogue: epilogue.unwrap_or_default(),
            span: f.span,
            per_call_rotation: None,
        }
    }

    /// The world size's domain: constant, at least 1, non-empty and at most
    /// [`MAX_WORLD`]. `>= LO` is `LO..=MAX_WORLD`. A domain reaching outside
    /// `1..=MAX_WORLD` is an error and clamped (so later checks still see its bounds).
    fn world_domain(&mut self, d: &ast::RankDomain) -> Option<(i64, i64)> {
        let (lo, hi, lo_span, hi_span) = match d {
            ast::RankDomain::Range(r) => {
                let lo = self.const_expr(&r.lo);
                let hi = self.const_expr(&r.hi);
                (lo?, hi?, r.lo.span, r.hi.span)
            }
            ast::RankDomain::AtLeast { lo, .. } => {
                (self.const_expr(lo)?, MAX_WORLD, lo.span, lo.span)
            }
        };
        if lo > hi {
            self.diags.push(
                err(
                    "domain::empty",
                    format!("the domain {lo}..={hi} is empty"),
                    d.span(),
                    "lower bound exceeds upper bound",
                )
                .with_help("write the domain as LO..=HI with LO <= HI"),
            );
            return None;
        }
        let out_of_range = |what: String, span, label: &str| {
            err("domain::out-of-range", what, span, label).with_help(format!(
                "a world has 1 to {MAX_WORLD} ranks (int32): write `ranks P in LO..=HI;` with 1 <= LO <= HI <= {MAX_WORLD}, or `ranks P >= LO;`"
            ))
        };
        if lo < 1 {
            self.diags.push(out_of_range(
                format!("the world size's domain starts at {lo}"),
                lo_span,
                "a world has at least 1 rank",
            ));
        }
        if hi > MAX_WORLD {
            self.diags.push(out_of_range(
                format!("the world size's domain goes to {hi}, above the largest world size {MAX_WORLD}"),
                hi_span,
                "above the largest world size",
            ));
        }
        // Clamped, so that later checks still see the bounds (an error was reported).
        let (lo, hi) = (lo.max(1), hi.min(MAX_WORLD));
        (lo <= hi).then_some((lo, hi))
    }

    /// `calls <= N;`: a constant N >= 1, declared once.
    fn calls_decl(&mut self, e: &ast::Expr, span: Span) {
        if let Some(prev) = self.calls {
            self.diags.push(
                err(
                    "structure::duplicate-calls",
                    "`calls` is declared twice",
                    span,
                    "second declaration",
                )
                .with_label(prev.span, "first declaration")
                .with_help("a protocol promises one number of back-to-back calls"),
            );
            return;
        }
        let Some(max) = self.const_expr(e) else {
            return;
        };
        if max < 1 {
            self.diags.push(
                err(
                    "domain::out-of-range",
                    format!("`calls <= {max}` promises no call"),
                    e.span,
                    "at least 1",
                )
                .with_help(
                    "write `calls <= N;` with N >= 1: the most back-to-back calls one rank makes",
                ),
            );
            return;
        }
        self.calls = Some(CallsBound { max, span });
        self.decls.push(Decl::Calls);
    }

    fn const_domain(&mut self, d: &ast::Domain) -> Option<(i64, i64)> {
        let lo = self.const_expr(&d.lo)?;
        let hi = self.const_expr(&d.hi)?;
        if lo > hi {
            self.diags.push(
                err(
                    "domain::empty",
                    format!("the domain {lo}..={hi} is empty"),
                    d.span,
                    "lower bound exceeds upper bound",
                )
                .with_help("write the domain as LO..=HI with LO <= HI"),
            );
            return None;
        }
        Some((lo, hi))
    }

    /// Lowers an expression that must be a compile-time constant and folds it.
    fn const_expr(&mut self, e: &ast::Expr) -> Option<i64> {
        let (x, _, deps) = self.expr(e, Want::Count)?;
        if deps.poison {
            return None;
        }
        match self.fold(&x) {
            Ok(v) => Some(v),
            Err(crate::eval::EvalError::DivByZero) => {
                self.diags.push(
                    err(
                        "domain::division-by-zero",
                        "division by zero in a constant",
                        e.span,
                        "divides by zero",
                    )
                    .with_help("`/`, `%` and `ceil(a / b)` need a non-zero divisor"),
                );
                None
            }
            // Already reported where the shift or `log2` is (`check_const_bits`).
            Err(crate::eval::EvalError::Shift(_) | crate::eval::EvalError::Log2(_)) => None,
            Err(crate::eval::EvalError::Overflow) => {
                self.diags.push(
                    err(
                        "domain::overflow",
                        "a constant overflows 64-bit arithmetic",
                        e.span,
                        "too large",
                    )
                    .with_help("collc computes with 64-bit integers; make the constant smaller"),
                );
                None
            }
            Err(er) => {
                let why = match &er {
                    crate::eval::EvalError::Unbound(name) => {
                        format!("`{name}` is known only when the kernel runs")
                    }
                    crate::eval::EvalError::NoArray(name) => {
                        format!("host array `{name}` differs from rank to rank")
                    }
                    other => format!("not a constant: {other}"),
                };
                self.diags.push(
                    err("type::not-constant", "expected a constant", e.span, why).with_help(
                        "a `const` or a domain takes only integer literals and other `const`s",
                    ),
                );
                None
            }
        }
    }

    fn require_world(&mut self, span: Span, what: &str) {
        if self.world.is_none() {
            self.diags.push(
                err(
                    "structure::ranks-first",
                    format!("{what} before `ranks`"),
                    span,
                    "declared before the world size",
                )
                .with_help(
                    "declare `ranks P in 1..=16;` before parameters, signals, buffers and the body",
                ),
            );
        }
    }

    /// A declaration's dimensions. A wrong one is replaced by a poisoned
    /// placeholder, so the rank of the declaration stays as written and its uses
    /// are not reported again.
    fn dims(&mut self, dims: &[ast::Expr]) -> Vec<Expr> {
        dims.iter()
            .map(|d| match self.uniform_expr(d, "a dimension") {
                Some(x) => x,
                None => self.poisoned_expr(),
            })
            .collect()
    }

    /// A rank-uniform count: may read parameters, constants and top-level lets only.
    fn uniform_expr(&mut self, e: &ast::Expr, what: &str) -> Option<Expr> {
        self.uniform_typed(e, what, Want::Count).map(|(x, _)| x)
    }

    /// As [`Self::uniform_expr`], for any type; returns the type too.
    fn uniform_typed(&mut self, e: &ast::Expr, what: &str, want: Want) -> Option<(Expr, Ty)> {
        let (x, ty, deps) = self.expr(e, want)?;
        if !deps.poison && (deps.me || deps.block || deps.loop_var || deps.array) {
            let who = if deps.me {
                "`me`"
            } else if deps.block {
                "the block index"
            } else if deps.loop_var {
                "a loop variable"
            } else {
                "a host array"
            };
            self.diags.push(
                err(
                    "place::not-uniform",
                    format!("{what} must be the same on every rank"),
                    e.span,
                    format!("depends on {who}"),
                )
                .with_help("use only parameters, constants and top-level `let`s here"),
            );
            return None;
        }
        Some((x, ty))
    }

    fn window_arg(&mut self, a: &ast::Ident) -> Option<WindowId> {
        match self.lookup(&a.name) {
            Some(Name::Window(w)) => Some(w),
            other @ Some(_) => {
                self.diags.push(
                    err(
                        "type::expected-window",
                        format!("`{}` is not a window", a.name),
                        a.span,
                        format!("this is {}", what_is(other)),
                    )
                    .with_help("the collective's data lives in `window NAME: f32[...];`"),
                );
                None
            }
            None => {
                self.unknown(a);
                None
            }
        }
    }

    fn unknown(&mut self, a: &ast::Ident) {
        let mut d = err(
            "resolve::unknown-name",
            format!("unknown name `{}`", a.name),
            a.span,
            "not declared",
        );
        let mut known: Vec<String> = self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        if self.region != Section::TopLevel {
            known.push("me".to_string());
        }
        if let Some(best) = closest(&a.name, &known) {
            d = d.with_help(format!("did you mean `{best}`?"));
            let fix = Fix::replace(format!("replace with `{best}`"), a.span, best);
            d = d.with_fix(fix);
        } else {
            d = d.with_help("declare it with `param`, `const`, `let`, `signal`, `window`, `tile` or `array` before use");
        }
        self.diags.push(d);
    }

    fn block(&mut self, b: &ast::Block) -> Block {
        self.scopes.push(HashMap::new());
        let stmts = b.stmts.iter().filter_map(|s| self.stmt(s)).collect();
        self.scopes.pop();
        Block {
            stmts,
            span: b.span,
        }
    }

    fn rank_target(&mut self, e: &ast::Expr) -> Option<Expr> {
        self.expr(e, Want::Rank).map(|(x, _, _)| x)
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Option<Stmt> {
        use ast::StmtKind as K;
        let kind = match &s.kind {
            K::Let { name, value } => self.let_stmt(name, value)?,
            K::Notify {
                cell,
                target,
                op,
                value,
            } => self.notify_stmt(cell, target.as_ref(), op, value)?,
            K::Wait {
                cell,
                target,
                cmp,
                threshold,
            } => {
                let (signal, index) = self.cell(cell)?;
                if let Some(t) = target {
                    self.diags.push(
                        err("place::remote-wait", "a wait must poll a local cell", t.span.join(cell.span), "this cell is on another rank")
                            .with_help("TWAIT only reads the executing rank's own signal memory; drop `@ ...` and let the peer notify this rank"),
                    );
                    return None;
                }
                let (t, _, _) = self.expr(threshold, Want::Count)?;
                StmtKind::Wait {
                    signal,
                    index,
                    cmp: *cmp,
                    threshold: t,
                }
            }
            K::Copy { dst, src } => {
                let d = self.region(dst, false)?;
                let s2 = self.region(src, false)?;
                self.same_elem(&d, &s2, s.span)?;
                StmtKind::Copy { dst: d, src: s2 }
            }
            K::Get { dst, src, from } => {
                let d = self.region(dst, false)?;
                let s2 = self.region(src, true)?;
                let f = self.rank_target(from)?;
                self.same_elem(&d, &s2, s.span)?;
                StmtKind::Get {
                    dst: d,
                    src: s2,
                    from: f,
                }
            }
            K::Put { dst, to, src } => {
                let d = self.region(dst, true)?;
                let t = self.rank_target(to)?;
                let s2 = self.region(src, false)?;
                self.same_elem(&d, &s2, s.span)?;
                StmtKind::Put {
                    dst: d,
                    to: t,
                    src: s2,
                }
            }
            K::Reduce {
                op,
                dst,
                src,
                from,
                to,
            } => self.reduce_stmt(op, (dst, src), (from.as_ref(), to.as_ref()), s.span)?,
            K::Fence => StmtKind::Fence,
            K::For { var, range, body } => self.for_stmt(var, range, body)?,
            K::If {
                cond,
                then_block,
                else_block,
            } => {
                let c = self.cond(cond);
                let t = self.block(then_block);
                let e = else_block.as_ref().map(|b| self.block(b));
                StmtKind::If {
                    cond: c?.0,
                    then_block: t,
                    else_block: e,
                }
            }
            K::Return { cond } => self.return_stmt(cond, s.span)?,
        };
        Some(Stmt { kind, span: s.span })
    }

    /// Lowers `lo..hi [step s | step *f]`, reversed when `rev`: a [`Range::Span`] when
    /// ascending and additive, else a [`Range::Seq`]. A constant step below 1, or a
    /// constant factor below 2 or start below 1 of a power-of-two loop, is an error.
    fn span_range(
        &mut self,
        lo: &ast::Expr,
        hi: &ast::Expr,
        step: Option<&ast::Expr>,
        geometric: bool,
        rev: bool,
    ) -> Option<Range> {
        let lo2 = self.loop_bound(lo);
        let hi2 = self.loop_bound(hi);
        let st = match step {
            Some(s) => self.loop_bound(s).inspect(|x| {
                let least = if geometric { 2 } else { 1 };
                if let Some(c) = self.const_value(x).filter(|c| *c < least) {
                    let (msg, help) = if geometric {
                        (
                            "a power-of-two loop's factor must be at least 2",
                            "`step *f` multiplies: `for d in 1..P step *2` visits 1, 2, 4, ... below P",
                        )
                    } else {
                        (
                            "a loop step must be positive",
                            "loops count upwards; for a descending loop write `(lo..hi).rev()`",
                        )
                    };
                    self.diags.push(
                        err("domain::out-of-range", msg, s.span, format!("this is {c}"))
                            .with_help(help),
                    );
                }
            }),
            None => Some(Expr::Int(1)),
        };
        if geometric {
            if let Some(c) = lo2
                .as_ref()
                .and_then(|x| self.const_value(x))
                .filter(|c| *c < 1)
            {
                self.diags.push(
                    err(
                        "domain::out-of-range",
                        "a power-of-two loop must start at 1 or more",
                        lo.span,
                        format!("this is {c}; multiplying it never reaches the bound"),
                    )
                    .with_help("start the loop at 1: `for d in 1..P step *2`"),
                );
            }
        }
        let (lo, hi, step) = (lo2?, hi2?, st?);
        Some(if geometric || rev {
            Range::Seq(Seq {
                lo,
                hi,
                step,
                geometric,
                rev,
            })
        } else {
            Range::Span { lo, hi, step }
        })
    }

    fn loop_bound(&mut self, e: &ast::Expr) -> Option<Expr> {
        let (x, _, deps) = self.expr(e, Want::Count)?;
        if deps.loop_var {
            self.diags.push(
                err("place::loop-bound", "a loop bound depends on a loop variable", e.span, "varies with an enclosing loop")
                    .with_help("loop bounds may use parameters, `me` and the block index, so trip counts stay closed-form; index inside the loop instead"),
            );
            return None;
        }
        Some(x)
    }

    fn cell(&mut self, c: &ast::CellRef) -> Option<(SignalId, Vec<Expr>)> {
        let sig = match self.lookup(&c.name.name) {
            Some(Name::Signal(s)) => s,
            other @ Some(_) => {
                self.diags.push(
                    err(
                        "type::expected-signal",
                        format!("`{}` is not a signal", c.name.name),
                        c.name.span,
                        format!(
                            "this is {}; notify and wait need a signal cell",
                            what_is(other)
                        ),
                    )
                    .with_help("declare it with `signal NAME[...];`"),
                );
                return None;
            }
            None => {
                self.unknown(&c.name);
                return None;
            }
        };
        let want = self.signals[sig].dims.len();
        if c.index.len() != want {
            self.diags.push(
                err(
                    "shape::signal-dims",
                    format!(
                        "`{}` has {want} dimension(s), indexed with {}",
                        c.name.name,
                        c.index.len()
                    ),
                    c.span,
                    format!("expected {want} index(es)"),
                )
                .with_label(
                    self.name_spans
                        .get(&(NameKind::Signal, sig.index()))
                        .copied()
                        .unwrap_or(self.signals[sig].span),
                    format!("declared with {want} dimension(s) here"),
                )
                .with_help(format!(
                    "write one index per dimension: `{}{}`",
                    c.name.name,
                    "[..]".repeat(want)
                )),
            );
            return None;
        }
        let mut idx = Vec::new();
        for (k, e) in c.index.iter().enumerate() {
            let (x, _, _) = self.expr(e, Want::Any)?;
            self.check_const_index(&x, &self.signals[sig].dims[k].clone(), e.span, &c.name.name);
            idx.push(x);
        }
        Some((sig, idx))
    }

    /// Reports a constant index outside a dimension: outside its constant size,
    /// or at or beyond the largest value its parameter can take.
    fn check_const_index(&mut self, x: &Expr, dim: &Expr, span: Span, name: &str) {
        // `rank(c)` into a dimension of the world size: the rank check says it.
        if matches!(x, Expr::Rank(_)) && matches!(dim, Expr::Var(v) if Some(*v) == self.world) {
            return;
        }
        let Some(i) = self.const_value(x) else {
            return;
        };
        if i < 0 {
            self.diags.push(
                err(
                    "domain::index-out-of-range",
                    format!("negative index {i} into `{name}`"),
                    span,
                    "indices count from 0",
                )
                .with_help("indices count from 0 and stay below the dimension's size"),
            );
        } else if let Some(d) = self.const_value(dim) {
            if i >= d {
                self.diags.push(
                    err(
                        "domain::index-out-of-range",
                        format!("index {i} is outside `{name}`'s dimension of size {d}"),
                        span,
                        format!("valid indices are 0..{d}"),
                    )
                    .with_help("indices count from 0 and stay below the dimension's size"),
                );
            }
        } else if let Some((size, hi)) = self.var_upper_bound(dim) {
            if i >= hi {
                self.diags.push(
                    err(
                        "domain::index-out-of-range",
                        format!(
                            "index {i} is outside `{name}`'s dimension `{size}`, which is at most {hi}"
                        ),
                        span,
                        format!("out of range for every `{size}` in its domain"),
                    )
                    .with_help(format!(
                        "valid indices are 0..{size}; widen `{size}`'s domain or use a smaller index"
                    )),
                );
            }
        }
    }

    /// Reports a slice whose constant bounds are negative, reversed, or past a
    /// constant last dimension.
    fn check_const_slice(&mut self, r: &ast::Region, lo: &Expr, hi: &Expr, dim: Option<&Expr>) {
        let (l, h) = (self.const_value(lo), self.const_value(hi));
        let d = dim.and_then(|d| self.const_value(d));
        let problem = match (l, h, d) {
            (Some(l), _, _) if l < 0 => Some(format!("the slice starts at {l}, before 0")),
            (Some(l), Some(h), _) if l > h => {
                Some(format!("the slice starts at {l}, after its end {h}"))
            }
            (_, Some(h), Some(d)) if h > d => Some(format!(
                "the slice ends at {h}, past the dimension's size {d}"
            )),
            _ => None,
        };
        if let Some(msg) = problem {
            self.diags.push(
                err(
                    "domain::slice-out-of-range",
                    format!("slice of `{}` out of range: {msg}", r.name.name),
                    r.span,
                    "out of range",
                )
                .with_help("a slice `lo .. hi` needs 0 <= lo <= hi <= the last dimension's size"),
            );
        }
    }

    /// The value of an expression made of literals and (sound) `const`s.
    fn const_value(&self, e: &Expr) -> Option<i64> {
        self.fold(e).ok()
    }

    /// Folds an expression made of literals and `const`s, with the arithmetic
    /// of [`crate::eval::eval`]. Costs only the size of the expression (lowering
    /// calls it for every constant index and slice bound).
    fn fold(&self, e: &Expr) -> Result<i64, crate::eval::EvalError> {
        use crate::eval::EvalError as E;
        let ck = |x: Option<i64>| x.ok_or(E::Overflow);
        Ok(match e {
            Expr::Int(v) => *v,
            Expr::Var(v) => match self.vars[*v].kind {
                VarKind::Const(c) if !self.var_deps[v.index()].poison => c,
                _ => return Err(E::Unbound(self.vars[*v].name.clone())),
            },
            Expr::Array(a, _) => return Err(E::NoArray(self.arrays[*a].name.clone())),
            Expr::Neg(a) => ck(self.fold(a)?.checked_neg())?,
            Expr::Rank(a) => self.fold(a)?,
            Expr::Bin(op, a, b) => crate::eval::bin(*op, self.fold(a)?, self.fold(b)?)?,
            Expr::Log2(a) => crate::eval::log2(self.fold(a)?)?,
            Expr::Pow2(a) => crate::eval::bin(BinOp::Shl, 1, self.fold(a)?)?,
            Expr::CeilDiv(a, b) => {
                let (a, b) = (self.fold(a)?, self.fold(b)?);
                if b == 0 {
                    return Err(E::DivByZero);
                }
                ck(crate::eval::ceil_div(a, b))?
            }
            Expr::Min(a, b) => self.fold(a)?.min(self.fold(b)?),
            Expr::Max(a, b) => self.fold(a)?.max(self.fold(b)?),
        })
    }

    /// A shift by a constant outside `0..=62`, or `log2` of a constant that is not a
    /// power of two: an error at `span` (the symbolic cases are range obligations).
    fn check_const_bits(&mut self, e: &Expr, span: Span) {
        use crate::eval::{EvalError as E, MAX_SHIFT};
        let (arg, is_log) = match e {
            Expr::Bin(BinOp::Shl | BinOp::Shr, _, k) | Expr::Pow2(k) => (k, false),
            Expr::Log2(x) => (x, true),
            _ => return,
        };
        let Some(c) = self.const_value(arg) else {
            return;
        };
        let checked = if is_log {
            crate::eval::log2(c)
        } else {
            crate::eval::bin(BinOp::Shl, 1, c)
        };
        match checked {
            Err(E::Shift(k)) if !is_log => self.diags.push(
                err(
                    "domain::shift-out-of-range",
                    format!("shift by {k}"),
                    span,
                    format!("the shift amount is {k}, outside 0..={MAX_SHIFT}"),
                )
                .with_help(format!(
                    "shift amounts are 0..={MAX_SHIFT} (results stay in 64 bits)"
                )),
            ),
            Err(E::Log2(x)) => self.diags.push(
                err(
                    "domain::log2-not-power-of-two",
                    format!("`log2({x})`: {x} is not a power of two"),
                    span,
                    format!("{x} is not 1, 2, 4, 8, ..."),
                )
                .with_help(
                    "`log2` is exact: its argument must be a power of two (require it, \
                     e.g. `require P & (P - 1) == 0;`, or loop with `step *2`)",
                ),
            ),
            _ => {}
        }
    }

    /// For a dimension that is exactly the world size or an integer parameter:
    /// its name and the largest value its domain allows.
    fn var_upper_bound(&self, e: &Expr) -> Option<(String, i64)> {
        let Expr::Var(v) = e else { return None };
        if self.var_deps[v.index()].poison {
            return None;
        }
        let var = &self.vars[*v];
        match var.kind {
            VarKind::World { hi, .. } => Some((var.name.clone(), hi)),
            VarKind::Param {
                domain: Some((_, hi)),
            } => Some((var.name.clone(), hi)),
            _ => None,
        }
    }

    fn region(&mut self, r: &ast::Region, remote: bool) -> Option<Region> {
        let buffer = match self.lookup(&r.name.name) {
            Some(Name::Window(w)) => BufferRef::Window(w),
            Some(Name::Tile(t)) => {
                if remote {
                    self.diags.push(
                        err(
                            "place::remote-tile",
                            format!("`{}` is a private tile", r.name.name),
                            r.span,
                            "tiles cannot be read or written remotely",
                        )
                        .with_help("only `window`s are symmetric and reachable with `@ rank`"),
                    );
                    return None;
                }
                BufferRef::Tile(t)
            }
            other @ Some(_) => {
                self.diags.push(
                    err(
                        "type::expected-buffer",
                        format!("`{}` is not a window or tile", r.name.name),
                        r.name.span,
                        format!("this is {}; data movement needs a buffer", what_is(other)),
                    )
                    .with_help(
                        "declare it with `window NAME: f32[...];` or `tile NAME: f32[...];`",
                    ),
                );
                return None;
            }
            None => {
                self.unknown(&r.name);
                return None;
            }
        };
        let (dims, decl) = match buffer {
            BufferRef::Window(w) => (
                self.windows[w].dims.clone(),
                self.name_spans.get(&(NameKind::Window, w.index())).copied(),
            ),
            BufferRef::Tile(t) => (
                self.tiles[t].dims.clone(),
                self.name_spans.get(&(NameKind::Tile, t.index())).copied(),
            ),
        };
        let decl = decl.unwrap_or_default();
        if r.index.len() + 1 != dims.len() {
            self.diags.push(
                err(
                    "shape::region-dims",
                    format!(
                        "`{}` has {} dimension(s), addressed with {}",
                        r.name.name,
                        dims.len(),
                        r.index.len() + 1
                    ),
                    r.span,
                    format!(
                        "expected {} index(es) and a slice",
                        dims.len().saturating_sub(1)
                    ),
                )
                .with_label(
                    decl,
                    format!("declared with {} dimension(s) here", dims.len()),
                )
                .with_help("index all dimensions but the last, then slice: `buf[i][lo .. hi]`"),
            );
            return None;
        }
        let mut index = Vec::new();
        for (k, e) in r.index.iter().enumerate() {
            let (x, _, _) = self.expr(e, Want::Any)?;
            self.check_const_index(&x, &dims[k], e.span, &r.name.name);
            index.push(x);
        }
        let lo = match &r.lo {
            Some(e) => self.expr(e, Want::Count)?.0,
            None => Expr::Int(0),
        };
        let hi = match &r.hi {
            Some(e) => self.expr(e, Want::Count)?.0,
            None => dims.last().cloned().unwrap_or(Expr::Int(0)),
        };
        self.check_const_slice(r, &lo, &hi, dims.last());
        Some(Region {
            buffer,
            index,
            lo,
            hi,
        })
    }

    fn cond(&mut self, c: &ast::Cond) -> Option<(Cond, Deps)> {
        use ast::CondKind as K;
        Some(match &c.kind {
            K::Bool(b) => (Cond::Bool(*b), Deps::default()),
            K::Cmp(op, a, b) => {
                let (x, _, da) = self.expr(a, Want::Any)?;
                let (y, _, db) = self.expr(b, Want::Any)?;
                (Cond::Cmp(*op, x, y), da.or(db))
            }
            K::Not(inner) => {
                let (x, d) = self.cond(inner)?;
                (Cond::Not(Box::new(x)), d)
            }
            K::And(cs) | K::Or(cs) => {
                let mut out = Vec::new();
                let mut deps = Deps::default();
                let mut ok = true;
                for c in cs {
                    match self.cond(c) {
                        Some((x, d)) => {
                            out.push(x);
                            deps = deps.or(d);
                        }
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                (
                    if matches!(c.kind, K::And(_)) {
                        Cond::And(out)
                    } else {
                        Cond::Or(out)
                    },
                    deps,
                )
            }
        })
    }

    /// Lowers and types an expression. `want` says what the position needs:
    /// a count (a bare rank is an error), a rank (an int is an error) or either.
    fn expr(&mut self, e: &ast::Expr, want: Want) -> Option<(Expr, Ty, Deps)> {
        let (x, ty, deps) = self.expr_inner(e)?;
        if deps.poison {
            return Some((x, ty, deps));
        }
        match (want, ty) {
            (Want::Count, Ty::Rank) => {
                self.diags.push(
                    err("type::expected-count", "expected a count, found a rank", e.span, "this is a rank")
                        .with_help("ranks name processes; use an arithmetic expression (e.g. `root + 0`) if you really mean its number"),
                );
                None
            }
            (Want::Rank, Ty::Int) => {
                self.diags.push(
                    err("type::expected-rank", "expected a rank, found an integer", e.span, "this is an integer")
                        .with_help("wrap it as `rank(...)` to use an integer as a rank, or loop over `peers` / `ranks`"),
                );
                None
            }
            _ => Some((x, ty, deps)),
        }
    }

    fn expr_inner(&mut self, e: &ast::Expr) -> Option<(Expr, Ty, Deps)> {
        use ast::ExprKind as K;
        Some(match &e.kind {
            K::Int(v) => (Expr::Int(*v), Ty::Int, Deps::default()),
            K::Paren(a) => self.expr_inner(a)?,
            K::Name(id) => self.name_expr(id)?,
            K::Indexed(id, idx) => self.indexed_expr(e, id, idx)?,
            K::Neg(a) => {
                let (x, _, d) = self.expr_inner(a)?;
                (Expr::Neg(Box::new(x)), Ty::Int, d)
            }
            K::Bin(op, a, b) => {
                let (x, _, da) = self.expr_inner(a)?;
                let (y, _, db) = self.expr_inner(b)?;
                let ex = Expr::Bin(*op, Box::new(x), Box::new(y));
                if op.is_bitwise() {
                    self.check_const_bits(&ex, e.span);
                }
                (ex, Ty::Int, da.or(db))
            }
            K::Call(f, args) => self.call_expr(e, f, args)?,
        })
    }
}

/// The built-in functions, as the help of an unknown one lists them.
const FUNCTIONS: &str = "ceil(a / b), min(a, b), max(a, b), rank(e), log2(e), pow2(e)";

fn strip_parens(e: &ast::Expr) -> &ast::Expr {
    match &e.kind {
        ast::ExprKind::Paren(a) => strip_parens(a),
        _ => e,
    }
}
