//! Element types (LANGUAGE.md §3): the `type` parameter, the type of each window and tile,
//! and the one rule they obey — data moves only between buffers of the same element type.

use super::{err, Lowerer};
use crate::ir::*;
use collc_grammar::ast;
use collc_grammar::Span;

impl Lowerer {
    /// `type T in f32 | f64;`: at most one, before the buffers that name it, each type once.
    pub(super) fn type_decl(&mut self, name: &ast::Ident, types: &[ast::Ident], span: Span) {
        if let Some(prev) = &self.elem_param {
            self.diags.push(
                err(
                    "structure::duplicate-type",
                    "`type` is declared twice",
                    span,
                    "second declaration",
                )
                .with_label(prev.span, "first declaration")
                .with_help("a protocol has at most one element-type parameter"),
            );
            return;
        }
        let mut list: Vec<ElemType> = Vec::new();
        for t in types {
            let Some(e) = ElemType::from_name(&t.name) else {
                continue;
            };
            if list.contains(&e) {
                self.diags.push(
                    err(
                        "type::duplicate-elem",
                        format!("`{}` is listed twice", t.name),
                        t.span,
                        "listed again",
                    )
                    .with_help("list each element type once"),
                );
                continue;
            }
            list.push(e);
        }
        if ElemType::from_name(&name.name).is_some() {
            self.diags.push(
                err(
                    "type::elem-name",
                    format!("the type parameter cannot be named `{}`", name.name),
                    name.span,
                    "a scalar type's name",
                )
                .with_help("name it `T`"),
            );
            return;
        }
        self.elem_param = Some(ElemParam {
            name: name.name.clone(),
            types: list,
            span,
        });
        self.decls.push(Decl::Type);
    }

    /// The element type a buffer declaration writes, and whether it is the type parameter.
    pub(super) fn elem_of(&mut self, elem: &ast::Ident) -> (ElemType, bool) {
        if let Some(t) = ElemType::from_name(&elem.name) {
            return (t, false);
        }
        match &self.elem_param {
            Some(p) if p.name == elem.name => (p.types.first().copied().unwrap_or_default(), true),
            _ => {
                let help = match &self.elem_param {
                    Some(p) => format!("write `f32`, `f64`, `i32`, `i64` or `{}`", p.name),
                    None => format!(
                        "write `f32`, `f64`, `i32` or `i64`, or declare `type {} in f32 | f64;` before it",
                        elem.name
                    ),
                };
                self.diags.push(
                    err(
                        "type::unknown-elem",
                        format!("unknown element type `{}`", elem.name),
                        elem.span,
                        "not an element type",
                    )
                    .with_help(help),
                );
                (ElemType::default(), false)
            }
        }
    }

    /// A data statement moves elements between buffers of one element type (and the same
    /// generic-ness: a `T` buffer and an `f32` one differ once `T` is another type).
    pub(super) fn same_elem(&mut self, dst: &Region, src: &Region, span: Span) -> Option<()> {
        let key = |l: &Lowerer, b: BufferRef| {
            let buf = match b {
                BufferRef::Window(w) => &l.windows[w],
                BufferRef::Tile(t) => &l.tiles[t],
            };
            (buf.elem, buf.generic, buf.name.clone())
        };
        let (de, dg, dn) = key(self, dst.buffer);
        let (se, sg, sn) = key(self, src.buffer);
        if (de, dg) == (se, sg) {
            return Some(());
        }
        let show = |l: &Lowerer, e: ElemType, g: bool| match (&l.elem_param, g) {
            (Some(p), true) => p.name.clone(),
            _ => e.as_str().to_string(),
        };
        let (dt, st) = (show(self, de, dg), show(self, se, sg));
        self.diags.push(
            err(
                "type::elem-mismatch",
                format!("`{dn}` holds {dt} and `{sn}` holds {st}"),
                span,
                "elements of different types",
            )
            .with_help("data moves between buffers of one element type; it is never converted"),
        );
        None
    }

    /// The windows a kind names (input and target) hold one element type.
    pub(super) fn semantics_elems(&mut self, s: &Semantics) {
        let (a, b) = match *s {
            Semantics::Allgather { input, target }
            | Semantics::AllToAll { input, target }
            | Semantics::Gather { input, target, .. }
            | Semantics::Scatter { input, target, .. } => (input, target),
            Semantics::AllToAllV { input, target, .. } => (input, target),
            _ => return,
        };
        let (Some(x), Some(y)) = (self.windows.get(a.index()), self.windows.get(b.index())) else {
            return;
        };
        if (x.elem, x.generic) != (y.elem, y.generic) {
            let msg = format!("`{}` and `{}` hold different element types", x.name, y.name);
            let (xs, ys) = (x.span, y.span);
            self.diags.push(
                err("type::elem-mismatch", msg, ys, "the target")
                    .with_label(xs, "the input")
                    .with_help("the collective's input and target windows hold one element type"),
            );
        }
    }
}
