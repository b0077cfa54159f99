//! Statements of the body and epilogue whose lowering is more than checking their
//! operands: `let`, `notify`, `for`, `return if` and `reduce`.

use super::{err, Deps, Lowerer, Name, Section, Want};
use crate::ir::*;
use collc_grammar::ast;
use collc_grammar::Span;
use std::collections::HashMap;

impl Lowerer {
    /// `let name = value;`: the name is declared even when the value is wrong (poisoned,
    /// so its uses are not reported as unknown).
    pub(super) fn let_stmt(&mut self, name: &ast::Ident, value: &ast::Expr) -> Option<StmtKind> {
        let Some((x, ty, deps)) = self.expr(value, Want::Any) else {
            let v = self.add_var(
                &name.name,
                VarKind::Local,
                Ty::Int,
                name.span,
                Deps {
                    poison: true,
                    ..Deps::default()
                },
            );
            self.declare(name, Name::Var(v));
            return None;
        };
        let v = self.add_var(&name.name, VarKind::Local, ty, name.span, deps);
        self.declare(name, Name::Var(v));
        Some(StmtKind::Let { var: v, value: x })
    }

    /// `notify cell [@ target] op value;`: `-= v` is `+= -v`; a constant value fits int32.
    pub(super) fn notify_stmt(
        &mut self,
        cell: &ast::CellRef,
        target: Option<&ast::Expr>,
        op: &ast::NotifyOpAst,
        value: &ast::Expr,
    ) -> Option<StmtKind> {
        let (signal, index) = self.cell(cell)?;
        let target = match target {
            Some(t) => Some(self.rank_target(t)?),
            None => None,
        };
        let (v, _, _) = self.expr(value, Want::Count)?;
        let (op, v) = match op {
            ast::NotifyOpAst::Add => (NotifyOp::AtomicAdd, v),
            ast::NotifyOpAst::Sub => (NotifyOp::AtomicAdd, Expr::Neg(Box::new(v))),
            ast::NotifyOpAst::Set => (NotifyOp::Set, v),
        };
        if let Some(c) = v.as_const() {
            if c < i64::from(i32::MIN) || c > i64::from(i32::MAX) {
                self.diags.push(
                    err(
                        "domain::out-of-range",
                        format!("notify value {c} does not fit an int32 cell"),
                        value.span,
                        "outside -2147483648..=2147483647",
                    )
                    .with_help("signal cells are int32"),
                );
            }
        }
        Some(StmtKind::Notify {
            signal,
            index,
            target,
            op,
            value: v,
        })
    }

    /// `for var in range { body }`: the body is lowered even when the range is wrong, so
    /// its errors are reported too.
    pub(super) fn for_stmt(
        &mut self,
        var: &ast::Ident,
        range: &ast::LoopRange,
        body: &ast::Block,
    ) -> Option<StmtKind> {
        let r = match range {
            ast::LoopRange::Peers(_) => Some(Range::Peers),
            ast::LoopRange::Ranks(_) => Some(Range::Ranks),
            ast::LoopRange::Span {
                lo,
                hi,
                step,
                geometric,
                rev,
                ..
            } => self.span_range(lo, hi, step.as_ref(), *geometric, *rev),
        };
        let ty = match range {
            ast::LoopRange::Span { .. } => Ty::Int,
            _ => Ty::Rank,
        };
        self.scopes.push(HashMap::new());
        let v = self.add_var(
            &var.name,
            VarKind::Loop,
            ty,
            var.span,
            Deps {
                loop_var: true,
                poison: r.is_none(),
                ..Deps::default()
            },
        );
        self.declare(var, Name::Var(v));
        self.loop_depth += 1;
        let b = self.block(body);
        self.loop_depth -= 1;
        self.scopes.pop();
        Some(StmtKind::For {
            var: v,
            range: r?,
            body: b,
        })
    }

    /// `return if cond;`: in the body only, outside loops.
    pub(super) fn return_stmt(&mut self, cond: &ast::Cond, span: Span) -> Option<StmtKind> {
        if self.region != Section::Body {
            self.diags.push(
                err(
                    "place::return-outside-body",
                    "an early return outside the body",
                    span,
                    "only the body may return early",
                )
                .with_help("the epilogue must always run; move the guard to the start of the body"),
            );
        }
        if self.loop_depth > 0 {
            self.diags.push(
                err(
                    "place::return-in-loop",
                    "an early return inside a loop",
                    span,
                    "inside a `for`",
                )
                .with_help("guards belong before the first notify, outside loops"),
            );
        }
        let (c, _) = self.cond(cond)?;
        Some(StmtKind::Return { cond: c })
    }

    /// `reduce OP dst <- src [@ from];` or `reduce OP dst @ to <- src;`: a reduction from a
    /// peer's window into a local region, or into a peer's window from a local source (not
    /// both remote).
    pub(super) fn reduce_stmt(
        &mut self,
        op: &ast::Ident,
        (dst, src): (&ast::Region, &ast::Region),
        (from, to): (Option<&ast::Expr>, Option<&ast::Expr>),
        span: Span,
    ) -> Option<StmtKind> {
        let rop = self.op_of(op, "type::reduce-op")?;
        if let (Some(f), Some(t)) = (from, to) {
            self.diags.push(
                err(
                    "place::remote-both",
                    "a reduce with a remote source and a remote destination",
                    t.span.join(f.span),
                    "both sides are on other ranks",
                )
                .with_help("reduce into a peer's window from a local source (`reduce sum dst @ p <- src;`), or from a peer's window into a local region"),
            );
            return None;
        }
        let d = self.region(dst, to.is_some())?;
        let s2 = self.region(src, from.is_some())?;
        let f = match from {
            Some(f) => Some(self.rank_target(f)?),
            None => None,
        };
        let t = match to {
            Some(t) => Some(self.rank_target(t)?),
            None => None,
        };
        self.same_elem(&d, &s2, span)?;
        Some(StmtKind::Reduce {
            op: rop,
            dst: d,
            src: s2,
            from: f,
            to: t,
        })
    }
}
