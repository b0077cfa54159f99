//! The kernel's outline: which function, the args block, the rank-uniform values, the guards,
//! `me` and the block index, the tiles, then the body and the epilogue.

use crate::cpp::{all_kids, call, field, kids, line, text, unsupported, Cpp};
use crate::expr::{cond, expr, strip, Scope, C, E};
use crate::layout::{norm, Buf, BufKind, Dialect, DimsOf, Layout};
use crate::model::L;
use crate::stmt::Reader;
use collc_grammar::Diagnostic;
use std::collections::BTreeMap;
use tree_sitter::Node;

type R<T> = Result<T, Diagnostic>;

/// A rank-uniform top-level value.
#[derive(Debug, Clone)]
pub enum Top {
    /// `const NAME = v;`
    Const(String, i64),
    /// `let NAME = e;`
    Let(String, E),
}

/// What the outline reader found.
#[derive(Debug, Clone, Default)]
pub struct Outline {
    /// Buffers by C++ name, in args order (signals, windows, arrays as they appear).
    pub buffers: Vec<(String, BufKind, &'static str)>,
    /// The world size's name.
    pub world: String,
    /// Scalar parameters in args order.
    pub params: Vec<String>,
    /// Host arrays (C++ name).
    pub arrays: Vec<String>,
    /// Rank-uniform constants and lets, in order.
    pub tops: Vec<Top>,
    /// Constants outside the kernel (namespace scope): name -> value.
    pub globals: BTreeMap<String, i64>,
    /// The guard's disjuncts.
    pub guards: Vec<(C, usize)>,
    /// The block index name and the blocks-count guard's bound, if any.
    pub block: Option<String>,
    /// Tiles: C++ name -> capacity (None for staging tiles).
    pub tiles: Vec<(String, Option<i64>)>,
    /// The body and the epilogue.
    pub body: Vec<L>,
    /// The epilogue.
    pub epilogue: Vec<L>,
    /// The line of the kernel function.
    pub line: usize,
    /// pypto: the host values read from tensor shapes (declared `param` outside the code).
    pub host: Vec<String>,
    /// pypto: the block count's name (`get_block_num(args)`).
    pub block_count: Option<String>,
    /// A pypto builtin kernel (`ChipTensor` args).
    pub pypto: bool,
    /// `calls <= N` read from the kernel (`COLLC_CALLS_BOUND`).
    pub calls: Option<i64>,
}

/// Finds the kernel function: `kernel_entry` (pto::comm) or `kernel_block` (MPI).
pub fn find_kernel<'t>(cpp: &'t Cpp) -> R<(Node<'t>, Dialect)> {
    let mut found = None;
    visit(cpp.tree.root_node(), &mut |n| {
        if found.is_none() && n.kind() == "function_definition" {
            let name = field(n, "declarator")
                .and_then(|d| field(d, "declarator"))
                .map(|d| text(d, &cpp.text).to_string())
                .unwrap_or_default();
            match name.as_str() {
                "kernel_entry" => found = Some((n, Dialect::Pto)),
                "kernel_block" => found = Some((n, Dialect::Mpi)),
                _ => {}
            }
        }
    });
    found.ok_or_else(|| {
        Diagnostic::error(
            "lift::no-kernel",
            "no `kernel_entry(int64_t* args)` (pto::comm) or `kernel_block` (collc MPI) function in the file",
        )
        .with_help("docs/lift.md describes the kernel shape collc lift reads")
    })
}

fn visit<'t>(n: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    f(n);
    let mut c = n.walk();
    let ks: Vec<Node<'t>> = n.named_children(&mut c).collect();
    for k in ks {
        visit(k, f);
    }
}

/// Namespace-scope `constexpr` integers.
fn globals(cpp: &Cpp) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    visit(cpp.tree.root_node(), &mut |n| {
        let t = text(n, &cpp.text).trim_start();
        let t = t.strip_prefix("static ").unwrap_or(t).trim_start();
        if n.kind() == "declaration" && t.starts_with("constexpr") {
            let parent_fn = {
                let mut p = n.parent();
                let mut inside = false;
                while let Some(x) = p {
                    if x.kind() == "function_definition" {
                        inside = true;
                    }
                    p = x.parent();
                }
                inside
            };
            if parent_fn {
                return;
            }
            if let Some(d) = field(n, "declarator") {
                let name = field(d, "declarator").map(|x| text(x, &cpp.text).to_string());
                let v = field(d, "value").and_then(|v| text(v, &cpp.text).parse::<i64>().ok());
                if let (Some(name), Some(v)) = (name, v) {
                    out.insert(name, v);
                }
            }
        }
    });
    out
}

fn slot_of(n: Node, src: &str) -> Option<usize> {
    // args[i], possibly under casts.
    let n = strip(n, src);
    if n.kind() == "call_expression" {
        let a = field(n, "arguments").map(kids)?;
        return a.first().and_then(|x| slot_of(*x, src));
    }
    if n.kind() == "subscript_expression"
        && field(n, "argument").map(|a| text(a, src)) == Some("args")
    {
        return field(n, "indices")
            .map(kids)
            .and_then(|k| k.first().map(|x| text(*x, src).to_string()))
            .and_then(|t| t.parse().ok());
    }
    None
}

/// The outline being read: the source, pypto's scan of the file, the declarations'
/// dimensions, and what has been found so far.
struct Reading<'a, 't> {
    src: &'a str,
    px: &'a crate::pypto::Px<'t>,
    dims: &'a DimsOf<'a>,
    pypto: bool,
    o: Outline,
    layout: Layout,
    scope: Scope,
}

/// The C++ name a declarator declares (under pointers and references).
fn declared_name<'t>(mut nm: Node<'t>) -> Node<'t> {
    while matches!(nm.kind(), "pointer_declarator" | "reference_declarator") {
        match kids(nm).last() {
            Some(x) => nm = *x,
            None => break,
        }
    }
    nm
}

/// Reads the kernel. `dims(name, kind)` gives a buffer's dimensions (`.coll` text).
pub fn outline(
    cpp: &Cpp,
    dims: &DimsOf,
    given: &crate::pypto::Given,
) -> R<(Outline, Layout, Dialect)> {
    let (f, dialect) = find_kernel(cpp)?;
    let src = cpp.text.as_str();
    let body = field(f, "body").ok_or_else(|| unsupported(f, src, "a kernel without a body"))?;
    let pypto = crate::pypto::is_pypto(cpp);
    let px = if pypto {
        crate::pypto::scan(cpp, given.host.clone(), given.arrays.clone())
    } else {
        crate::pypto::scan(cpp, Default::default(), Default::default())
    };
    let mut r = Reading {
        src,
        px: &px,
        dims,
        pypto,
        o: Outline {
            globals: globals(cpp),
            line: line(f),
            pypto,
            ..Outline::default()
        },
        layout: Layout::default(),
        scope: Scope::default(),
    };
    r.bind_host_and_globals();
    let mut items: Vec<Node> = all_kids(body)
        .into_iter()
        .filter(|k| k.kind() != "comment")
        .collect();
    if pypto {
        items = crate::pypto::flatten(items, src)?;
        for n in &items {
            if n.kind() == "declaration" && text(*n, src).contains("->buffer.addr") {
                r.px_top(*n)?;
            }
        }
    }
    let mut i = r.before_me(&items)?;
    r.set_world();
    i += r.after_me(&items[i..])?;
    r.body_and_epilogue(body, &items[i..], dialect)
}

impl Reading<'_, '_> {
    /// `me`, the host values (pypto) and the namespace-scope constants.
    fn bind_host_and_globals(&mut self) {
        let (o, scope) = (&mut self.o, &mut self.scope);
        scope.names.insert("me".into(), "me".into());
        for h in &self.px.host {
            scope.bind(h);
            o.host.push(h.clone());
        }
        for (k, v) in &o.globals {
            if k != "kMaxSupportedRanks" && k != "kStage" && !self.px.host.contains(k) {
                scope.bind(k);
                o.tops.push(Top::Const(k.clone(), *v));
            }
        }
    }

    /// Before `me`: args, rank-uniform values, guards. Returns how many items were read.
    fn before_me(&mut self, items: &[Node]) -> R<usize> {
        let src = self.src;
        for (i, n) in items.iter().enumerate() {
            let n = *n;
            if self.pypto && self.px_top(n)? {
                continue;
            }
            let me = match n.kind() {
                "declaration" => self.top_declaration(n)?,
                "if_statement" => {
                    self.guard_statement(n)?;
                    false
                }
                _ => {
                    return Err(unsupported(
                        n,
                        src,
                        "a statement before `me` other than args, constants and guards",
                    ))
                }
            };
            if me {
                return Ok(i + 1);
            }
        }
        Err(Diagnostic::error(
            "lift::no-rank",
            format!(
                "line {}: the kernel never reads its rank (`ctx->rankId`)",
                self.o.line
            ),
        ))
    }

    /// A declaration before `me`: an args buffer, the world size, a parameter, a constant or
    /// a `let`. Returns whether it is `me`.
    fn top_declaration(&mut self, n: Node) -> R<bool> {
        let src = self.src;
        let t = text(n, src);
        let d = field(n, "declarator").ok_or_else(|| unsupported(n, src, "a declaration"))?;
        let v = field(d, "value")
            .ok_or_else(|| unsupported(n, src, "a declaration without a value"))?;
        let nm = field(d, "declarator").ok_or_else(|| unsupported(n, src, "a declarator"))?;
        let nm = declared_name(nm);
        if nm.kind() == "qualified_identifier" || t.contains("CommContext") {
            return Ok(false); // the CommContext*
        }
        let name = text(nm, src).to_string();
        let vt = text(v, src).replace(' ', "");
        if vt.contains("->rankId") || vt.contains("ctx.me") {
            self.scope.names.insert(name, "me".into());
            return Ok(true);
        }
        if name == "collc_sigwin" || self.args_buffer(t, &name)? {
            return Ok(false);
        }
        let (o, scope) = (&mut self.o, &mut self.scope);
        if vt == "ctx.np" {
            o.world = name.clone();
            scope.bind(&name);
        } else if slot_of(v, src).is_some() || vt.starts_with("args.p_") {
            o.params.push(name.clone());
            scope.bind(&name);
        } else {
            let e = expr(v, src, scope)?;
            scope.bind(&name);
            if t.trim_start().starts_with("constexpr") || t.contains("] constexpr") {
                match e {
                    E::Int(c) => o.tops.push(Top::Const(name, c)),
                    _ => return Err(unsupported(n, src, "a constexpr that is not a literal")),
                }
            } else {
                o.tops.push(Top::Let(name, e));
            }
        }
        Ok(false)
    }

    /// A buffer of collc's args block (by its C++ type): a signal, a window or a host array.
    /// Returns whether `t` declared one.
    fn args_buffer(&mut self, t: &str, name: &str) -> R<bool> {
        let (k, what) = if t.contains("int32_t*") || t.contains("MPI_Aint") {
            (BufKind::Signal, "signal")
        } else if t.contains("float*") || t.contains("collc_mpi::Window&") {
            (BufKind::Window, "window")
        } else if t.contains("int64_t*") {
            (BufKind::Window, "array")
        } else {
            return Ok(false);
        };
        if what == "array" {
            self.scope.arrays.insert(name.to_string(), name.to_string());
            self.o.arrays.push(name.to_string());
        } else {
            self.add_buf(name, k)?;
        }
        self.o.buffers.push((name.to_string(), k, what));
        Ok(true)
    }

    /// Records buffer `name` of kind `k` with the dimensions the declarations give it.
    fn add_buf(&mut self, name: &str, kind: BufKind) -> R<()> {
        let (cname, ds) = (self.dims)(name, kind)?;
        self.layout.bufs.insert(
            name.to_string(),
            Buf {
                name: cname,
                dims: ds,
                kind,
            },
        );
        Ok(())
    }

    /// A guard before `me`: `if (COND) { pipe_barrier(PIPE_ALL); return; }`.
    fn guard_statement(&mut self, n: Node) -> R<()> {
        let src = self.src;
        let then = field(n, "consequence").ok_or_else(|| unsupported(n, src, "a guard"))?;
        let body: Vec<String> = if then.kind() == "compound_statement" {
            kids(then)
                .iter()
                .map(|k| text(*k, src).replace(' ', ""))
                .collect()
        } else {
            vec![text(then, src).replace(' ', "")]
        };
        let ok = body.last().is_some_and(|l| l == "return;")
            && body[..body.len() - 1]
                .iter()
                .all(|l| l == "pipe_barrier(PIPE_ALL);");
        if !ok || field(n, "alternative").is_some() {
            return Err(unsupported(
                n,
                src,
                "a statement before `me` other than args, constants and guards",
            ));
        }
        let c = field(n, "condition").ok_or_else(|| unsupported(n, src, "a guard"))?;
        guard(c, src, &mut self.scope, &mut self.o)
    }

    /// pto: the world size is the scalar the guard bounds by kMaxSupportedRanks, else the
    /// first.
    fn set_world(&mut self) {
        let o = &mut self.o;
        if o.world.is_empty() {
            o.world = o.params.first().cloned().unwrap_or_default();
            if let Some(w) = world_from_guards(o) {
                o.world = w;
            }
            o.params.retain(|p| *p != o.world);
        }
        self.scope.world = o.world.clone();
    }

    /// After `me`: the call index, the block index, tiles. Returns how many items were read.
    fn after_me(&mut self, items: &[Node]) -> R<usize> {
        let src = self.src;
        for (i, n) in items.iter().enumerate() {
            let n = *n;
            if let Some(name) = call_index(n, src) {
                self.scope.names.insert(name, "call".into());
                continue;
            }
            if n.kind() != "declaration" {
                return Ok(i);
            }
            let t = text(n, src).to_string();
            let d = field(n, "declarator").ok_or_else(|| unsupported(n, src, "a declaration"))?;
            let nm = field(d, "declarator").ok_or_else(|| unsupported(n, src, "a declarator"))?;
            let name = text(declared_name(nm), src).to_string();
            if t.contains("get_block_idx") || t.contains("collc_block") {
                self.o.block = Some(name.clone());
                self.scope.bind(&name);
                self.scope.block = Some(name);
            } else if t.contains("Tile<") || t.contains("float* const") {
                self.tile(n, &t, name)?;
            } else {
                return Ok(i);
            }
        }
        Ok(items.len())
    }

    /// A tile declaration (`Tile<...>` or a staging tile).
    fn tile(&mut self, n: Node, t: &str, name: String) -> R<()> {
        let stage = t.contains("kStage") || name.starts_with("stage_");
        let kind = if stage { BufKind::Stage } else { BufKind::Tile };
        let cap = if stage {
            None
        } else {
            tile_cap(t, &self.o.globals)
        };
        let (cname, ds) = match (stage, cap, (self.dims)(&name, kind)) {
            (true, _, _) => (name.clone(), vec!["kStage".to_string()]),
            (false, _, Ok(d)) => d,
            (false, Some(c), Err(_)) => (name.clone(), vec![c.to_string()]),
            (false, None, Err(_)) => {
                return Err(unsupported(
                    n,
                    self.src,
                    "a tile whose size is not a literal or a known constant",
                ))
            }
        };
        self.layout.bufs.insert(
            name.clone(),
            Buf {
                name: cname,
                dims: ds,
                kind,
            },
        );
        self.o.tiles.push((name, cap));
        Ok(())
    }

    /// The body and the epilogue (`rest`: the items after the outline's).
    fn body_and_epilogue(
        mut self,
        body: Node,
        rest: &[Node],
        dialect: Dialect,
    ) -> R<(Outline, Layout, Dialect)> {
        let src = self.src;
        let mut rest = rest.to_vec();
        if dialect == Dialect::Pto {
            match rest.last() {
                Some(l) if text(*l, src).replace(' ', "") == "pipe_barrier(PIPE_ALL);" => {
                    rest.pop();
                }
                _ => {
                    return Err(Diagnostic::error(
                        "lift::ordering",
                        format!(
                            "line {}: the kernel does not end with `pipe_barrier(PIPE_ALL);`",
                            self.o.line
                        ),
                    ))
                }
            }
        }
        if self.pypto {
            px_tiles(body, src, self.px, &mut self.o, &mut self.layout);
        }
        let mut o = self.o;
        let mut reader = Reader::new(src, &self.layout, dialect, self.scope);
        if self.pypto {
            reader = reader.with_px(self.px);
        }
        let blocks = rest.iter().all(|n| n.kind() == "compound_statement");
        if blocks && (rest.len() == 1 || rest.len() == 2) {
            o.body = reader.block(rest[0])?;
            if let Some(e) = rest.get(1) {
                o.epilogue = reader.block(*e)?;
            }
        } else {
            let mut out = Vec::new();
            reader.list(&rest, &mut out)?;
            o.body = out;
        }
        o.calls = reader.calls_bound;
        Ok((o, self.layout, dialect))
    }

    /// A statement of a pypto kernel before `me` that is not collc's: the `ChipTensor`s, the
    /// buffers inside them, the host values read from their shapes, the block index and
    /// count. Returns whether `n` was one.
    fn px_top(&mut self, n: Node) -> R<bool> {
        let (src, px) = (self.src, self.px);
        let t = text(n, src).replace(' ', "");
        if n.kind() == "declaration" && t.contains("get_block_num(args)") {
            let name = field(n, "declarator")
                .and_then(|d| field(d, "declarator"))
                .map(|x| text(x, src).to_string())
                .unwrap_or_default();
            if !px.host.contains(&name) {
                return Err(unsupported(
                    n,
                    src,
                    &format!("the block count: declare `param {name}: int in 1..=HI;`"),
                ));
            }
            self.o.block_count = Some(name);
            return Ok(true);
        }
        if let Some(w) = crate::pypto::host_stmt(n, src, &px.host) {
            if let Some(bad) = w.iter().find(|x| !px.host.contains(*x)) {
                return Err(unsupported(
                    n,
                    src,
                    &format!("a value computed from a tensor's shape that the declarations do not give: declare `param {bad}: int in LO..=HI;`"),
                ));
            }
            return Ok(true);
        }
        if n.kind() == "expression_statement" && crate::pypto::core_setup(n, src) {
            return Ok(true);
        }
        if n.kind() != "declaration" {
            return Ok(false);
        }
        let Some(d) = field(n, "declarator") else {
            return Ok(false);
        };
        let name = text(declared_name(field(d, "declarator").unwrap_or(d)), src).to_string();
        if t.contains("ChipTensor*") {
            return Ok(true);
        }
        if t.contains("->buffer.addr") {
            self.px_buffer(&t, name)?;
            return Ok(true);
        }
        if t.contains("get_block_idx(args)") {
            self.o.block = Some(name.clone());
            self.scope.bind(&name);
            self.scope.block = Some(name);
            return Ok(true);
        }
        Ok(false)
    }

    /// A pypto buffer inside a `ChipTensor` (`t->buffer.addr`): a host array, a signal or a
    /// window (each read once).
    fn px_buffer(&mut self, t: &str, name: String) -> R<()> {
        if self.layout.bufs.contains_key(&name) || self.scope.arrays.contains_key(&name) {
            return Ok(());
        }
        if self.px.arrays.contains(&name) {
            // A host array the kernel reads (`array NAME: int[d] in LO..=HI;`).
            self.scope.arrays.insert(name.clone(), name.clone());
            self.o.arrays.push(name.clone());
            self.o.buffers.push((name, BufKind::Window, "array"));
            return Ok(());
        }
        let (kind, what) = if t.starts_with("int32_t*") {
            (BufKind::Signal, "signal")
        } else {
            (BufKind::Window, "window")
        };
        self.add_buf(&name, kind)?;
        self.o.buffers.push((name, kind, what));
        Ok(())
    }
}

/// pypto's tiles: every declaration in the kernel of a `using` alias of `pto::Tile`.
fn px_tiles(body: Node, src: &str, px: &crate::pypto::Px, o: &mut Outline, layout: &mut Layout) {
    fn visit<'t>(n: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
        f(n);
        for k in kids(n) {
            visit(k, f);
        }
    }
    visit(body, &mut |n| {
        if n.kind() != "declaration" {
            return;
        }
        let ty = field(n, "type").map(|t| text(t, src)).unwrap_or("").trim();
        let Some(crate::pypto::Alias::Tile(cap)) = px.aliases.get(ty).copied() else {
            return;
        };
        let Some(name) = field(n, "declarator")
            .and_then(|d| field(d, "declarator"))
            .map(|x| text(x, src).to_string())
        else {
            return;
        };
        if layout.bufs.contains_key(&name) {
            return;
        }
        let dims = cap.map(|c| c.to_string()).unwrap_or_default();
        layout.bufs.insert(
            name.clone(),
            Buf {
                name: name.clone(),
                dims: vec![dims],
                kind: BufKind::Tile,
            },
        );
        o.tiles.push((name, cap));
    });
}

/// The call index's C++ name, if `n` declares it: `const int64_t c =
/// static_cast<int64_t>(ctx.call);` (MPI) or, on pto::comm, the `#if defined(__CCE_AICORE__)`
/// choice between `args[i]` and the thread's count `collc_calls_made++`.
fn call_index(n: Node, src: &str) -> Option<String> {
    let decl = |d: Node| -> Option<(String, String)> {
        let i = field(d, "declarator").filter(|x| x.kind() == "init_declarator")?;
        let name = field(i, "declarator").map(|x| text(x, src).to_string())?;
        let value = field(i, "value").map(|x| text(x, src).replace(' ', ""))?;
        Some((name, value))
    };
    match n.kind() {
        "declaration" => {
            let (name, value) = decl(n)?;
            (value == "static_cast<int64_t>(ctx.call)").then_some(name)
        }
        "preproc_if" => {
            let cond = field(n, "condition").map(|c| text(c, src).replace(' ', ""));
            if cond.as_deref() != Some("defined(__CCE_AICORE__)") {
                return None;
            }
            let decls = |p: Node| -> Vec<(String, String)> {
                kids(p)
                    .into_iter()
                    .filter(|k| k.kind() == "declaration")
                    .filter_map(decl)
                    .collect()
            };
            let dev = decls(n);
            let host = decls(field(n, "alternative")?);
            let [(name, slot)] = dev.as_slice() else {
                return None;
            };
            let ok = slot.starts_with("args[")
                && host.len() == 2
                && host[0] == ("collc_calls_made".to_string(), "0".to_string())
                && host[1] == (name.clone(), "collc_calls_made++".to_string());
            ok.then(|| name.clone())
        }
        _ => None,
    }
}

fn tile_cap(t: &str, globals: &BTreeMap<String, i64>) -> Option<i64> {
    let inner = t.split_once('<')?.1.split_once('>')?.0;
    let n = inner.split(',').nth(1)?.trim();
    n.parse().ok().or_else(|| globals.get(n).copied())
}

fn world_from_guards(o: &Outline) -> Option<String> {
    o.guards.iter().find_map(|(c, _)| match c {
        C::Cmp(">", E::Name(x), E::Name(k)) if k == "kMaxSupportedRanks" => Some(x.clone()),
        _ => None,
    })
}

fn guard(c: Node, src: &str, scope: &mut Scope, o: &mut Outline) -> R<()> {
    let mut s = scope.clone();
    s.bind("kMaxSupportedRanks");
    s.bind("get_block_num");
    let c = cpp_guard(c, src, &s)?;
    for d in c.disjuncts() {
        if d != shape_check() {
            o.guards.push((d, 0));
        }
    }
    Ok(())
}

/// The stand-in for a guard disjunct that checks a tensor's shape (dropped).
fn shape_check() -> C {
    C::Cmp("!=", E::Name("collc_shape".into()), E::Int(0))
}

/// A guard condition, with `get_block_num(args)` / `args.collc_blocks` read as the name
/// `collc_blocks`.
fn cpp_guard(n: Node, src: &str, s: &Scope) -> R<C> {
    let n = strip(n, src);
    let n = if n.kind() == "condition_clause" {
        field(n, "value").map(|v| strip(v, src)).unwrap_or(n)
    } else {
        n
    };
    if n.kind() == "binary_expression" && field(n, "operator").map(|o| text(o, src)) == Some("||") {
        let l = field(n, "left").ok_or_else(|| unsupported(n, src, "a guard"))?;
        let r = field(n, "right").ok_or_else(|| unsupported(n, src, "a guard"))?;
        return Ok(C::Or(
            Box::new(cpp_guard(l, src, s)?),
            Box::new(cpp_guard(r, src, s)?),
        ));
    }
    let t = text(n, src).replace(' ', "");
    if t.contains("->ndims") || t.contains("->shapes") {
        // pypto: the host's check of a tensor's shape; the declarations give the shapes.
        return Ok(shape_check());
    }
    if t.contains("get_block_num(args)") || t.contains("args.collc_blocks") {
        if let Some(r) = field(n, "right") {
            return Ok(C::Cmp(
                "!=",
                E::Name("collc_blocks".into()),
                expr(r, src, s)?,
            ));
        }
    }
    if let Some((f, _)) = call(n, src) {
        return Err(unsupported(n, src, &format!("a guard calling `{f}`")));
    }
    cond(n, src, s)
}

/// The `.coll` dimensions of a buffer from the args comment of the file (`args[i]  credit
/// signal sig[P] (int32 cells)`, `window data: f32[n] per call`, ...): name -> (decl text).
pub fn comment_decls(text_: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for l in text_.lines() {
        let l = l.trim_start();
        let Some(rest) = l.strip_prefix("//") else {
            continue;
        };
        let rest = rest.trim();
        let Some(after) = rest.strip_prefix("args[") else {
            continue;
        };
        let Some((_, decl)) = after.split_once(']') else {
            continue;
        };
        let decl = decl.trim();
        let (kw, body) = if let Some(b) = decl.strip_prefix("credit signal ") {
            ("signal", b)
        } else if let Some(b) = decl.strip_prefix("monotonic signal ") {
            ("monotonic", b)
        } else if let Some(b) = decl.strip_prefix("value signal ") {
            ("value", b)
        } else if let Some(b) = decl.strip_prefix("window ") {
            ("window", b)
        } else if let Some(b) = decl.strip_prefix("host array ") {
            ("array", b)
        } else {
            continue;
        };
        let name: String = body
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        let text = match kw {
            "signal" => format!("signal {};", norm(strip_paren(body))),
            "monotonic" => format!("signal {} monotonic;", norm(strip_paren(body))),
            "value" => {
                let per_call = body.contains("per call");
                format!(
                    "signal {} as value{};",
                    norm(strip_paren(body)),
                    if per_call { " per call" } else { " reused" }
                )
            }
            "window" => {
                let b = norm(strip_paren(body));
                if b.ends_with("per call") || b.ends_with("reused") {
                    format!("window {b};")
                } else {
                    format!("window {b} reused;")
                }
            }
            _ => {
                let b = norm(strip_paren(body)).replacen("int64[", "int[", 1);
                format!("array {b};")
            }
        };
        out.insert(name, text);
    }
    out
}

/// The text before a trailing ` (...)` remark (outside brackets).
fn strip_paren(s: &str) -> &str {
    let mut depth = 0i32;
    let b = s.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b' ' if depth == 0 && b.get(i + 1) == Some(&b'(') => return &s[..i],
            _ => {}
        }
    }
    s
}

/// The dimension texts inside a declaration's first `[..]...[..]` run.
pub fn dims_of_decl(decl: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(start) = decl.find('[') else {
        return out;
    };
    let mut depth = 0;
    let mut cur = String::new();
    for ch in decl[start..].chars() {
        match ch {
            '[' => {
                if depth > 0 {
                    cur.push(ch);
                }
                depth += 1;
            }
            ']' => {
                depth -= 1;
                if depth == 0 {
                    out.push(norm(&cur));
                    cur.clear();
                } else {
                    cur.push(ch);
                }
            }
            ' ' if depth == 0 => {}
            _ if depth == 0 => break,
            _ => cur.push(ch),
        }
    }
    out
}
