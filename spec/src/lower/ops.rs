//! The reduction-operator parameter (LANGUAGE.md §5.13): `op O in sum | max | min;`, named
//! by the header (`allreduce(O, data)`) and by every `reduce` statement (`reduce O ...`).

use super::{err, Lowerer};
use crate::ir::*;
use collc_grammar::ast;
use collc_grammar::Span;

impl Lowerer {
    /// `op O in sum | max;`: at most one, before the body, each operator once.
    pub(super) fn op_decl(&mut self, name: &ast::Ident, ops: &[ast::Ident], span: Span) {
        if let Some(prev) = &self.op_param {
            self.diags.push(
                err(
                    "structure::duplicate-op",
                    "`op` is declared twice",
                    span,
                    "second declaration",
                )
                .with_label(prev.span, "first declaration")
                .with_help("a protocol has at most one operator parameter"),
            );
            return;
        }
        let mut list: Vec<ReduceOp> = Vec::new();
        for o in ops {
            let Some(op) = ReduceOp::from_name(&o.name) else {
                self.diags.push(
                    err(
                        "type::reduce-op",
                        format!("unknown reduction `{}`", o.name),
                        o.span,
                        "not a reduction",
                    )
                    .with_help("one of: sum, max, min, prod"),
                );
                continue;
            };
            if list.contains(&op) {
                self.diags.push(
                    err(
                        "type::duplicate-op",
                        format!("`{}` is listed twice", o.name),
                        o.span,
                        "listed again",
                    )
                    .with_help("list each operator once"),
                );
                continue;
            }
            list.push(op);
        }
        if ReduceOp::from_name(&name.name).is_some() {
            self.diags.push(
                err(
                    "type::op-name",
                    format!("the operator parameter cannot be named `{}`", name.name),
                    name.span,
                    "an operator's name",
                )
                .with_help("name it `O`"),
            );
            return;
        }
        if list.is_empty() {
            return;
        }
        self.op_param = Some(OpParam {
            name: name.name.clone(),
            ops: list,
            span,
        });
        self.decls.push(Decl::Op);
    }

    /// The operator a `reduce` statement or the header names: a fixed one, or the
    /// parameter's first listed (recorded as generic). `code` names the error family.
    pub(super) fn op_of(&mut self, op: &ast::Ident, code: &str) -> Option<ReduceOp> {
        if let Some(o) = ReduceOp::from_name(&op.name) {
            self.fixed_ops.push(op.span);
            return Some(o);
        }
        if let Some(p) = self.op_param.as_ref().filter(|p| p.name == op.name) {
            return Some(p.ops[0]);
        }
        let help = match &self.op_param {
            Some(p) => format!("one of: sum, max, min, prod, or `{}`", p.name),
            None => "one of: sum, max, min, prod, or an `op` parameter declared before the body"
                .to_string(),
        };
        self.diags.push(
            err(
                code,
                format!("unknown reduction `{}`", op.name),
                op.span,
                "not a reduction",
            )
            .with_help(help),
        );
        None
    }

    /// With an `op` parameter, every reduction names it and the kind reduces: one protocol,
    /// whatever the listed operator (`type::fixed-op`, `type::op-unused`).
    pub(super) fn op_param_used(&mut self, s: &Semantics) {
        let Some(p) = &self.op_param else {
            return;
        };
        let (name, span) = (p.name.clone(), p.span);
        if !matches!(
            s,
            Semantics::Allreduce { .. }
                | Semantics::ReduceScatter { .. }
                | Semantics::Reduce { .. }
        ) {
            self.diags.push(
                err(
                    "type::op-unused",
                    format!(
                        "`{}` does not reduce; the operator parameter has no use",
                        s.kind()
                    ),
                    span,
                    "declared here",
                )
                .with_help("remove the `op` declaration"),
            );
            return;
        }
        for fixed in std::mem::take(&mut self.fixed_ops) {
            self.diags.push(
                err(
                    "type::fixed-op",
                    format!(
                        "a fixed operator in a protocol declared for every operator `{name}` lists"
                    ),
                    fixed,
                    "a fixed operator",
                )
                .with_label(span, "the operator parameter")
                .with_help(format!(
                    "write `{name}`: with an `op` parameter, the header and every `reduce` name it"
                )),
            );
        }
    }
}
