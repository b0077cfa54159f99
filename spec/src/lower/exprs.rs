//! Expressions whose lowering is more than combining their operands: names, host array
//! reads and function calls.

use super::{err, strip_parens, what_is, Deps, Lowerer, Name, NameKind, Section, FUNCTIONS};
use crate::ir::*;
use collc_grammar::ast;
use collc_grammar::suggest::closest;

impl Lowerer {
    /// A name read as a value: a variable (`me`, `call` built in), known at top level when
    /// it is rank-uniform.
    pub(super) fn name_expr(&mut self, id: &ast::Ident) -> Option<(Expr, Ty, Deps)> {
        let builtin = match id.name.as_str() {
            "me" => Some(Name::Var(self.me)),
            "call" if self.lookup("call").is_none() => Some(Name::Var(self.call_var())),
            _ => None,
        };
        match self.lookup(&id.name).or(builtin) {
            Some(Name::Var(v)) => {
                if self.region == Section::TopLevel
                    && matches!(
                        self.vars[v].kind,
                        VarKind::Me | VarKind::Block | VarKind::Call
                    )
                {
                    self.diags.push(
                        err(
                            "place::not-uniform",
                            format!("`{}` is only known inside the body", id.name),
                            id.span,
                            "used at top level",
                        )
                        .with_help(
                            "declarations are the same on every rank; move this into the body",
                        ),
                    );
                    return None;
                }
                Some((Expr::Var(v), self.vars[v].ty, self.var_deps[v.index()]))
            }
            other @ Some(_) => {
                self.diags.push(
                    err(
                        "type::expected-value",
                        format!("`{}` is not a value", id.name),
                        id.span,
                        format!("this is {}", what_is(other)),
                    )
                    .with_help("index a host array as `name[i]`; signals and buffers are read with wait/get/copy"),
                );
                None
            }
            None => {
                self.unknown(id);
                None
            }
        }
    }

    /// `name[i]...`: a host array read, one index per dimension.
    pub(super) fn indexed_expr(
        &mut self,
        e: &ast::Expr,
        id: &ast::Ident,
        idx: &[ast::Expr],
    ) -> Option<(Expr, Ty, Deps)> {
        let a = match self.lookup(&id.name) {
            Some(Name::Array(a)) => a,
            Some(Name::Signal(_)) => {
                self.diags.push(
                    err(
                        "type::signal-read",
                        format!("signal `{}` cannot be read as a value", id.name),
                        e.span,
                        "signal cell used in an expression",
                    )
                    .with_help("cells are only observed by `wait`"),
                );
                return None;
            }
            other @ Some(_) => {
                self.diags.push(
                    err(
                        "type::expected-array",
                        format!("`{}` is not a host array", id.name),
                        id.span,
                        format!(
                            "this is {}; only host arrays are indexed in expressions",
                            what_is(other)
                        ),
                    )
                    .with_help("declare per-rank inputs with `array NAME: int[...] in LO..=HI;`"),
                );
                return None;
            }
            None => {
                self.unknown(id);
                return None;
            }
        };
        let want = self.arrays[a].dims.len();
        if want != idx.len() {
            self.diags.push(
                err(
                    "shape::array-dims",
                    format!(
                        "`{}` has {want} dimension(s), indexed with {}",
                        id.name,
                        idx.len()
                    ),
                    e.span,
                    format!("expected {want} index(es)"),
                )
                .with_label(
                    self.name_spans
                        .get(&(NameKind::Array, a.index()))
                        .copied()
                        .unwrap_or(self.arrays[a].span),
                    format!("declared with {want} dimension(s) here"),
                )
                .with_help(format!(
                    "write one index per dimension: `{}{}`",
                    id.name,
                    "[..]".repeat(want)
                )),
            );
            return None;
        }
        let mut xs = Vec::new();
        let mut deps = Deps {
            array: true,
            ..Deps::default()
        };
        for (k, i) in idx.iter().enumerate() {
            let (x, _, d) = self.expr_inner(i)?;
            let dim = self.arrays[a].dims[k].clone();
            self.check_const_index(&x, &dim, i.span, &id.name);
            deps = deps.or(d);
            xs.push(x);
        }
        Some((Expr::Array(a, xs), Ty::Int, deps))
    }

    /// A call of a built-in function with its number of arguments.
    pub(super) fn call_expr(
        &mut self,
        e: &ast::Expr,
        f: &ast::Ident,
        args: &[ast::Expr],
    ) -> Option<(Expr, Ty, Deps)> {
        let name = f.name.as_str();
        self.arity(e, f, args.len())?;
        match name {
            "ceil" => {
                let inner = strip_parens(&args[0]);
                let ast::ExprKind::Bin(ast::BinOp::Div, a, b) = &inner.kind else {
                    self.diags.push(
                        err(
                            "type::ceil-form",
                            "`ceil` expects a division",
                            args[0].span,
                            "not of the form `a / b`",
                        )
                        .with_help("write `ceil(a / b)`: collc only has integers"),
                    );
                    return None;
                };
                let (x, _, da) = self.expr_inner(a)?;
                let (y, _, db) = self.expr_inner(b)?;
                Some((Expr::CeilDiv(Box::new(x), Box::new(y)), Ty::Int, da.or(db)))
            }
            "rank" => self.rank_call(&args[0]),
            "log2" | "pow2" => {
                let (x, _, d) = self.expr_inner(&args[0])?;
                let ex = if name == "log2" {
                    Expr::Log2(Box::new(x))
                } else {
                    Expr::Pow2(Box::new(x))
                };
                self.check_const_bits(&ex, e.span);
                Some((ex, Ty::Int, d))
            }
            _ => {
                let (x, _, da) = self.expr_inner(&args[0])?;
                let (y, _, db) = self.expr_inner(&args[1])?;
                let ex = if name == "min" {
                    Expr::Min(Box::new(x), Box::new(y))
                } else {
                    Expr::Max(Box::new(x), Box::new(y))
                };
                Some((ex, Ty::Int, da.or(db)))
            }
        }
    }

    /// `Some(())` when `f` is a built-in function called with `n` arguments, else the
    /// diagnostic.
    fn arity(&mut self, e: &ast::Expr, f: &ast::Ident, n: usize) -> Option<()> {
        let name = f.name.as_str();
        let arity = match name {
            "ceil" | "rank" | "log2" | "pow2" => 1,
            "min" | "max" => 2,
            _ => {
                self.diags.push(
                    err(
                        "resolve::unknown-function",
                        format!("unknown function `{name}`"),
                        f.span,
                        "not a function",
                    )
                    .with_help(
                        match closest(
                            name,
                            &["ceil", "min", "max", "rank", "log2", "pow2"].map(String::from),
                        ) {
                            Some(f) => format!("did you mean `{f}`? functions: {FUNCTIONS}"),
                            None => format!("functions: {FUNCTIONS}"),
                        },
                    ),
                );
                return None;
            }
        };
        if n == arity {
            return Some(());
        }
        let form = match name {
            "ceil" => "ceil(a / b)",
            "rank" => "rank(e)",
            "log2" => "log2(e)",
            "pow2" => "pow2(e)",
            "min" => "min(a, b)",
            _ => "max(a, b)",
        };
        self.diags.push(
            err(
                "type::arity",
                format!("`{name}` takes {arity} argument(s), found {n}"),
                e.span,
                "wrong number of arguments",
            )
            .with_help(format!("write `{form}`")),
        );
        None
    }

    /// `rank(e)`: a constant rank must exist in the largest world.
    fn rank_call(&mut self, arg: &ast::Expr) -> Option<(Expr, Ty, Deps)> {
        let (x, _, d) = self.expr_inner(arg)?;
        // The most ranks there can be: the world size's upper bound.
        let (world, most) = match self.world {
            Some(w) if !self.var_deps[w.index()].poison => match self.vars[w].kind {
                VarKind::World { hi, .. } => (self.vars[w].name.clone(), hi),
                _ => ("P".to_string(), MAX_WORLD),
            },
            _ => ("P".to_string(), MAX_WORLD),
        };
        if let Some(c) = self.const_value(&x) {
            if !(0..most).contains(&c) {
                self.diags.push(
                    err(
                        "domain::out-of-range",
                        format!("rank {c} does not exist"),
                        arg.span,
                        format!("ranks are 0..{world} and `{world}` is at most {most}"),
                    )
                    .with_help(format!("a rank is between 0 and {world}-1")),
                );
            }
        }
        Some((Expr::Rank(Box::new(x)), Ty::Rank, d))
    }
}
