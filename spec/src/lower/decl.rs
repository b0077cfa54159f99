//! Declarations (LANGUAGE.md §3): one method per kind of item, and the body and epilogue
//! sections.

use super::{err, Deps, Lowerer, Name, NameKind, Section, Want};
use crate::ir::*;
use collc_grammar::ast;
use collc_grammar::Span;

impl Lowerer {
    pub(super) fn item(
        &mut self,
        item: &ast::Item,
        body: &mut Option<Block>,
        epilogue: &mut Option<Block>,
    ) {
        use ast::ItemKind as K;
        if !matches!(item.kind, K::Body(_) | K::Epilogue(_)) {
            self.decl_after_body(item.span);
        }
        let span = item.span;
        match &item.kind {
            K::Ranks { name, domain } => self.ranks_decl(name, domain, span),
            K::Param { name, ty } => self.param_decl(name, ty, span),
            K::Const { name, value } => {
                let c = self.const_expr(value);
                let kind = VarKind::Const(c.unwrap_or(0));
                self.var_decl(name, kind, Ty::Int, span, c.is_some());
            }
            K::Let { name, value } => {
                let x = self.uniform_typed(value, "a top-level `let`", Want::Any);
                let ok = x.is_some();
                let (x, ty) = x.unwrap_or((Expr::Int(0), Ty::Int));
                self.var_decl(name, VarKind::Derived(x), ty, span, ok);
            }
            K::Blocks { name, lo, hi } => self.blocks_decl(name, lo, hi, span),
            K::Signal {
                name,
                dims,
                value,
                monotonic,
                lifetimes,
            } => {
                let kind = if *value {
                    SignalKind::Value
                } else {
                    SignalKind::Credit
                };
                self.signal_decl(name, dims, kind, monotonic.is_some(), lifetimes, span);
            }
            K::Window {
                name,
                elem,
                dims,
                lifetimes,
            } => self.buffer_decl(name, elem, dims, Some(lifetimes), span),
            K::Tile { name, elem, dims } => self.buffer_decl(name, elem, dims, None, span),
            K::Array { name, dims, domain } => self.array_decl(name, dims, domain, span),
            K::Require(c) => self.require_decl(c, span),
            K::Calls(e) => self.calls_decl(e, span),
            K::Type { name, types } => self.type_decl(name, types, span),
            K::Op { name, ops } => self.op_decl(name, ops, span),
            K::Body(b) => {
                if let Some(blk) = self.section(b, true, span, body.is_some()) {
                    *body = Some(blk);
                }
            }
            K::Epilogue(b) => {
                if let Some(blk) = self.section(b, false, span, body.is_some()) {
                    *epilogue = Some(blk);
                }
            }
        }
    }

    /// Declarations precede the body: the body can only use names declared before it, and
    /// the canonical form (`collc fmt`) is declarations, body, epilogue.
    fn decl_after_body(&mut self, span: Span) {
        let Some(section) = self.body_keyword.or(self.epilogue_keyword) else {
            return;
        };
        let what = if self.body_keyword.is_some() {
            "body"
        } else {
            "epilogue"
        };
        self.diags.push(
            err(
                "structure::decl-after-body",
                format!("a declaration after the `{what}`"),
                span,
                "declared after the body",
            )
            .with_label(section, format!("the `{what}` starts here"))
            .with_help("move every declaration before `body { ... }`"),
        );
    }

    /// A variable declaration (poisoned when its definition is wrong, `!ok`).
    fn var_decl(&mut self, name: &ast::Ident, kind: VarKind, ty: Ty, span: Span, ok: bool) {
        let v = self.add_var(&name.name, kind, ty, span, Deps::default());
        if !ok {
            self.poison_var(v);
        }
        self.declare(name, Name::Var(v));
        self.decls.push(Decl::Var(v));
    }

    fn ranks_decl(&mut self, name: &ast::Ident, domain: &ast::RankDomain, span: Span) {
        if let Some(w) = self.world {
            let prev = self.vars[w].span;
            self.diags.push(
                err(
                    "structure::duplicate-ranks",
                    "the world size is declared twice",
                    span,
                    "second declaration",
                )
                .with_label(prev, "first declaration")
                .with_help("a collective has exactly one `ranks` declaration"),
            );
            return;
        }
        let dom = self.world_domain(domain);
        let (lo, hi) = dom.unwrap_or((1, 1));
        let v = self.add_var(
            &name.name,
            VarKind::World { lo, hi },
            Ty::Int,
            span,
            Deps::default(),
        );
        if dom.is_none() {
            self.poison_var(v);
        }
        self.world = Some(v);
        self.declare(name, Name::Var(v));
        self.decls.push(Decl::Var(v));
    }

    fn param_decl(&mut self, name: &ast::Ident, ty: &ast::ParamType, span: Span) {
        self.require_world(span, "parameter");
        let mut ok = true;
        let (kind, t) = match ty {
            ast::ParamType::Rank(_) => (VarKind::Param { domain: None }, Ty::Rank),
            ast::ParamType::Int(d) => {
                let dom = self.const_domain(d);
                ok = dom.is_some();
                (
                    VarKind::Param {
                        domain: Some(dom.unwrap_or((0, 0))),
                    },
                    Ty::Int,
                )
            }
        };
        self.var_decl(name, kind, t, span, ok);
    }

    fn blocks_decl(&mut self, name: &ast::Ident, lo: &ast::Expr, hi: &ast::Expr, span: Span) {
        self.require_world(span, "`blocks`");
        if let Some(b) = &self.blocks {
            let first = self.vars[b.var].span;
            self.diags.push(
                err(
                    "structure::duplicate-blocks",
                    "`blocks` is declared twice",
                    span,
                    "second declaration",
                )
                .with_label(first, "first declaration")
                .with_help("a collective runs one set of blocks per rank"),
            );
            return;
        }
        if let Some(l) = self.const_expr(lo) {
            if l != 0 {
                self.diags.push(
                    err(
                        "domain::out-of-range",
                        "block indices start at 0",
                        lo.span,
                        format!("this is {l}"),
                    )
                    .with_help("write `blocks blk in 0..C;`"),
                );
            }
        }
        let count = self
            .uniform_expr(hi, "the block count")
            .unwrap_or(Expr::Int(1));
        let v = self.add_var(
            &name.name,
            VarKind::Block,
            Ty::Int,
            span,
            Deps {
                block: true,
                ..Deps::default()
            },
        );
        self.declare(name, Name::Var(v));
        self.blocks = Some(Blocks { var: v, count });
        self.decls.push(Decl::Blocks);
    }

    fn signal_decl(
        &mut self,
        name: &ast::Ident,
        dims: &[ast::Expr],
        kind: SignalKind,
        monotonic: bool,
        lifetimes: &[(ast::Lifetime, Span)],
        span: Span,
    ) {
        self.require_world(span, "signal");
        let d = self.dims(dims);
        let lifetime = self.lifetime(name, lifetimes);
        if let (SignalKind::Credit, Some((_, sp))) = (kind, lifetimes.first()) {
            self.diags.push(
                err(
                    "type::lifetime-on-credit",
                    format!(
                        "credit signal `{}` cannot declare a lifetime: its cells are the one buffer every call reuses, and the verifier proves that reuse safe",
                        name.name
                    ),
                    *sp,
                    "lifetime on a credit signal",
                )
                .with_help("remove it; if the cells carry values written with `=`, declare the signal `as value` before the lifetime"),
            );
        }
        self.signals.push(Signal {
            name: name.name.clone(),
            dims: d,
            kind,
            lifetime: if kind == SignalKind::Value {
                lifetime
            } else {
                None
            },
            monotonic,
            span,
        });
        let id = SignalId::new(self.signals.len() - 1);
        self.name_spans
            .insert((NameKind::Signal, id.index()), name.span);
        self.declare(name, Name::Signal(id));
        self.decls.push(Decl::Signal(id));
    }

    /// A window (with its `lifetimes`) or a tile (`None`).
    fn buffer_decl(
        &mut self,
        name: &ast::Ident,
        elem: &ast::Ident,
        dims: &[ast::Expr],
        lifetimes: Option<&Vec<(ast::Lifetime, Span)>>,
        span: Span,
    ) {
        self.require_world(span, "buffer");
        let (elem, generic) = self.elem_of(elem);
        let d = self.dims(dims);
        let lifetime = lifetimes.and_then(|l| self.lifetime(name, l));
        let buf = Buffer {
            name: name.name.clone(),
            elem,
            generic,
            dims: d,
            lifetime,
            span,
        };
        if lifetimes.is_some() {
            self.windows.push(buf);
            let id = WindowId::new(self.windows.len() - 1);
            self.name_spans
                .insert((NameKind::Window, id.index()), name.span);
            self.declare(name, Name::Window(id));
            self.decls.push(Decl::Window(id));
        } else {
            self.tiles.push(buf);
            let id = TileId::new(self.tiles.len() - 1);
            self.name_spans
                .insert((NameKind::Tile, id.index()), name.span);
            self.declare(name, Name::Tile(id));
            self.decls.push(Decl::Tile(id));
        }
    }

    fn array_decl(
        &mut self,
        name: &ast::Ident,
        dims: &[ast::Expr],
        domain: &ast::Domain,
        span: Span,
    ) {
        self.require_world(span, "array");
        let d = self.dims(dims);
        let dom = self.const_domain(domain).unwrap_or((0, 0));
        self.arrays.push(Array {
            name: name.name.clone(),
            dims: d,
            domain: dom,
            span,
        });
        let id = ArrayId::new(self.arrays.len() - 1);
        self.name_spans
            .insert((NameKind::Array, id.index()), name.span);
        self.declare(name, Name::Array(id));
        self.decls.push(Decl::Array(id));
    }

    fn require_decl(&mut self, c: &ast::Cond, span: Span) {
        let Some((cond, deps)) = self.cond(c) else {
            return;
        };
        if deps.me || deps.block || deps.array {
            self.diags.push(
                err(
                    "place::not-uniform",
                    "a requirement must be the same on every rank",
                    c.span,
                    "depends on the rank",
                )
                .with_help("requirements constrain parameters only"),
            );
        }
        self.requires.push(Require { cond, span });
        self.decls
            .push(Decl::Require(RequireId::new(self.requires.len() - 1)));
    }

    /// `body { ... }` (`is_body`) or `epilogue { ... }`: its block, or `None` when it is
    /// given twice. `body_seen`: the body came before.
    fn section(
        &mut self,
        b: &ast::Block,
        is_body: bool,
        span: Span,
        body_seen: bool,
    ) -> Option<Block> {
        let what = if is_body { "body" } else { "epilogue" };
        self.require_world(span, what);
        // Point at the keyword: the whole block may span many lines.
        let keyword = Span::new(span.start, span.start + what.len());
        let first = if is_body {
            self.body_keyword
        } else {
            self.epilogue_keyword
        };
        if let Some(first) = first {
            self.diags.push(
                err(
                    "structure::duplicate-block",
                    format!("a second `{what}`"),
                    keyword,
                    "given again here",
                )
                .with_label(first, "first given here")
                .with_help(format!("a collective has one `{what}`; merge the two")),
            );
            return None;
        }
        if is_body {
            self.body_keyword = Some(keyword);
        } else {
            self.epilogue_keyword = Some(keyword);
        }
        if !is_body && !body_seen {
            self.diags.push(
                err(
                    "structure::epilogue-first",
                    "the epilogue comes before the body",
                    keyword,
                    "move it after `body { ... }`",
                )
                .with_help("the epilogue runs after the body; write it last"),
            );
        }
        self.region = if is_body {
            Section::Body
        } else {
            Section::Epilogue
        };
        let blk = self.block(b);
        self.region = Section::TopLevel;
        Some(blk)
    }
}
