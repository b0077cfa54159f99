//! Statement lists of a kernel body: loops, guards, lets, notifies, waits, ordering calls
//! and data moves, for the `pto::comm` and the MPI dialects.

use crate::cpp::{all_kids, call, field, kids, line, text, unsupported};
use crate::expr::{cond, expr, strip, Scope, C, E};
use crate::layout::{unflatten, BufKind, Dialect, Layout};
use crate::model::{Move, Range, Reg, L, S};
use collc_grammar::Diagnostic;
use std::collections::BTreeMap;
use tree_sitter::Node;

mod px;
mod seq;

/// A pointer into a buffer: which, the flat element offset, and the rank if remote.
#[derive(Debug, Clone)]
struct Ptr {
    buf: String,
    flat: E,
    rank: Option<E>,
}

/// The `i`th argument of a call whose shape was matched by name.
/// A call of a staged move: (function, arguments, its statement).
type Call<'t> = (String, Vec<Node<'t>>, Node<'t>);

fn arg<'t>(args: &[Node<'t>], i: usize) -> R<Node<'t>> {
    args.get(i).copied().ok_or_else(|| {
        Diagnostic::error(
            "lift::unsupported",
            "a staged move call with too few arguments",
        )
    })
}

/// Reads statement lists.
pub struct Reader<'a> {
    src: &'a str,
    layout: &'a Layout,
    dialect: Dialect,
    /// Names in scope.
    pub scope: Scope,
    /// `pto::comm::Signal` variables: name -> (signal, index, target).
    cells: BTreeMap<String, (String, Vec<E>, Option<E>)>,
    /// Local pointer variables (`dst_gm`, `src_gm`).
    ptrs: BTreeMap<String, Ptr>,
    /// collc's `collc_seq_len` counts of power-of-two and reversed loops, by name.
    seqs: BTreeMap<String, seq::SeqLen>,
    /// pypto's kernels: the file's helpers, switches and aliases (`None` for collc's).
    px: Option<&'a crate::pypto::Px<'a>>,
    /// pypto: `ShapeDyn` values by name (their length).
    px_shapes: BTreeMap<String, E>,
    /// pypto: `GlobalTensor` views by name (pointer and length).
    px_views: BTreeMap<String, (Ptr, E)>,
    /// pypto: a tile's valid length (`SetValidShape`, `ColMaskInternal`).
    px_valid: BTreeMap<String, E>,
    /// pypto: counters (their current value is the scope's alias).
    counters: std::collections::BTreeSet<String>,
    /// Helper-call nesting.
    depth: usize,
    /// Helper calls inlined so far (their locals' suffix).
    inlined: usize,
    /// `COLLC_CALLS_BOUND(N, "...")` of a kernel collc emitted: `calls <= N`.
    pub calls_bound: Option<i64>,
    /// The values of the `let`s read so far (`.coll` name -> value), to see through them in
    /// pointer offsets.
    lets: BTreeMap<String, E>,
}

type R<T> = Result<T, Diagnostic>;

fn cmp_of(t: &str) -> Option<&'static str> {
    Some(match t.rsplit("::").next()? {
        "GE" => ">=",
        "LE" => "<=",
        "EQ" => "==",
        "NE" => "!=",
        "GT" => ">",
        "LT" => "<",
        _ => return None,
    })
}

fn reduce_of(f: &str) -> Option<&'static str> {
    Some(match f {
        "collc::TADD" | "collc::TADD_AT" | "collc_mpi::ReduceOp::Sum" => "sum",
        "collc::TMAX" | "collc::TMAX_AT" | "collc_mpi::ReduceOp::Max" => "max",
        "collc::TMIN" | "collc::TMIN_AT" | "collc_mpi::ReduceOp::Min" => "min",
        "collc::TMUL" | "collc::TMUL_AT" | "collc_mpi::ReduceOp::Prod" => "prod",
        _ => return None,
    })
}

/// A move into `dst` from `src`, which is on `rank` (None: a local copy).
fn load(dst: Reg, src: Reg, rank: Option<E>) -> S {
    S::Data {
        kind: rank.map_or(Move::Copy, Move::Get),
        dst,
        src,
    }
}

/// A move into `dst`, which is on `rank` (None: a local copy), from `src`.
fn store(dst: Reg, rank: Option<E>, src: Reg) -> S {
    S::Data {
        kind: rank.map_or(Move::Copy, Move::Put),
        dst,
        src,
    }
}

impl<'a> Reader<'a> {
    /// A reader over `src` with the given buffers and names.
    pub fn new(src: &'a str, layout: &'a Layout, dialect: Dialect, scope: Scope) -> Self {
        Reader {
            src,
            layout,
            dialect,
            scope,
            cells: BTreeMap::new(),
            ptrs: BTreeMap::new(),
            seqs: BTreeMap::new(),
            px: None,
            px_shapes: BTreeMap::new(),
            px_views: BTreeMap::new(),
            px_valid: BTreeMap::new(),
            counters: Default::default(),
            depth: 0,
            inlined: 0,
            lets: BTreeMap::new(),
            calls_bound: None,
        }
    }

    /// The same reader for one of pypto's kernels.
    pub fn with_px(mut self, px: &'a crate::pypto::Px<'a>) -> Self {
        self.px = Some(px);
        self
    }

    /// `COLLC_CALLS_BOUND(N, "calls <= N (file.coll:LINE)");`: what `collc emit` writes for
    /// `calls <= N` (the CPU runtime refuses call N + 1; on Ascend it is the host's to refuse).
    fn calls_bound_stmt(&mut self, n: Node) -> R<bool> {
        if n.kind() != "expression_statement" {
            return Ok(false);
        }
        let Some((f, args)) = kids(n).first().and_then(|c| call(*c, self.src)) else {
            return Ok(false);
        };
        if f != "COLLC_CALLS_BOUND" {
            return Ok(false);
        }
        match (args.first().map(|a| self.e(*a)), self.calls_bound) {
            (Some(Ok(E::Int(v))), None) if v >= 1 && args.len() == 2 => {
                self.calls_bound = Some(v);
                Ok(true)
            }
            _ => Err(self.bad(
                n,
                "a calls bound other than one `COLLC_CALLS_BOUND(N, \"...\")` with a literal N >= 1",
            )),
        }
    }

    /// pypto: an offset with no row term is in row 0 (`flag + k` of `flag[2][P]` is
    /// `flag[0][k]`; the verifier's index-range check sees `k` against the row length).
    fn first_row(&self, flat: &E, dims: &[String]) -> Option<Vec<E>> {
        self.px?;
        let mut idx = vec![E::Int(0); dims.len().saturating_sub(1)];
        idx.push(flat.clone());
        Some(idx)
    }

    /// `e` with the names of `let`s replaced by their values.
    fn through_lets(&self, e: &E) -> E {
        let go = |x: &E| Box::new(self.through_lets(x));
        match e {
            E::Name(n) => self.lets.get(n).cloned().unwrap_or_else(|| e.clone()),
            E::Neg(a) => E::Neg(go(a)),
            E::Bin(op, a, b) => E::Bin(op, go(a), go(b)),
            E::Fun1(f, a) => E::Fun1(f, go(a)),
            E::Fun(f, a, b) => E::Fun(f, go(a), go(b)),
            E::Rank(a) => E::Rank(go(a)),
            E::Int(_) | E::Index(..) => e.clone(),
        }
    }

    fn e(&self, n: Node) -> R<E> {
        expr(n, self.src, &self.scope)
    }

    fn c(&self, n: Node) -> R<C> {
        cond(n, self.src, &self.scope)
    }

    fn bad(&self, n: Node, what: &str) -> Diagnostic {
        unsupported(n, self.src, what)
    }

    /// Reads the statements of a compound statement (or a single statement).
    pub fn block(&mut self, n: Node) -> R<Vec<L>> {
        let saved = (self.scope.clone(), self.cells.clone(), self.ptrs.clone());
        let mut out = Vec::new();
        let items = if n.kind() == "compound_statement" {
            kids(n)
        } else {
            vec![n]
        };
        self.list(&items, &mut out)?;
        (self.scope, self.cells, self.ptrs) = saved;
        Ok(out)
    }

    /// Reads a statement list into `out`.
    pub fn list(&mut self, items: &[Node], out: &mut Vec<L>) -> R<()> {
        let mut i = 0;
        while i < items.len() {
            let n = items[i];
            i += 1;
            if self.calls_bound_stmt(n)? {
                continue;
            }
            let mut skip = false;
            if self.px_item(n, items.get(i).copied(), &mut skip, out)? {
                i += usize::from(skip);
                continue;
            }
            match n.kind() {
                "comment" => {}
                "compound_statement" => {
                    if let Some(d) = self.staged_move(n)? {
                        out.push(d);
                    } else {
                        let inner = kids(n);
                        let saved = (self.scope.clone(), self.cells.clone(), self.ptrs.clone());
                        self.list(&inner, out)?;
                        (self.scope, self.cells, self.ptrs) = saved;
                    }
                }
                "declaration" => self.declaration(n, out)?,
                "expression_statement" => {
                    // A staged reduce from global memory: TLOAD(stage_a, ptr) then OP(t, t, stage_a).
                    if let Some(next) = items.get(i) {
                        if let Some(d) = self.stage_load_reduce(n, *next)? {
                            out.push(d);
                            i += 1;
                            continue;
                        }
                    }
                    if let Some(s) = self.expression_statement(n)? {
                        out.push(L::new(s, line(n)));
                    }
                }
                "for_statement" => out.extend(self.for_loop(n)?),
                "if_statement" => out.push(self.if_stmt(n)?),
                _ => return Err(self.bad(n, "a statement the lifter does not accept")),
            }
        }
        Ok(())
    }

    fn declaration(&mut self, n: Node, out: &mut Vec<L>) -> R<()> {
        let src = self.src;
        let ty = field(n, "type").map(|t| text(t, src)).unwrap_or("");
        let decl = field(n, "declarator").ok_or_else(|| self.bad(n, "a declaration"))?;
        if decl.kind() != "init_declarator"
            && !(ty.ends_with("Signal") && decl.kind() == "function_declarator")
        {
            return Err(self.bad(n, "a declaration without an initialiser"));
        }
        let mut name_node = if decl.kind() == "init_declarator" {
            field(decl, "declarator").ok_or_else(|| self.bad(n, "a declarator"))?
        } else {
            decl
        };
        let is_ptr = name_node.kind() == "pointer_declarator";
        while name_node.kind() == "pointer_declarator" || name_node.kind() == "reference_declarator"
        {
            match kids(name_node).last() {
                Some(d) => name_node = *d,
                None => break,
            }
        }
        if ty.ends_with("Signal") && decl.kind() == "function_declarator" {
            // `Signal cell(name);` parses as a function declaration (the most vexing parse).
            let cellname = field(decl, "declarator")
                .map(|d| text(d, src).to_string())
                .unwrap_or_default();
            let params = field(decl, "parameters").ok_or_else(|| self.bad(n, "a signal view"))?;
            let (signal, index, target) = self.reparsed_cell(n, params)?;
            self.cells.insert(cellname, (signal, index, target));
            return Ok(());
        }
        let name = text(name_node, src).to_string();
        let value = field(decl, "value").ok_or_else(|| self.bad(n, "an initialiser"))?;
        if ty.ends_with("Signal") {
            // pto::comm::Signal cell(ptr);
            let arg = kids(value)
                .first()
                .copied()
                .ok_or_else(|| self.bad(n, "a signal view"))?;
            let (signal, index, target) = self.cell(arg)?;
            self.cells.insert(name, (signal, index, target));
            return Ok(());
        }
        if is_ptr {
            let p = self.ptr(value)?;
            self.ptrs.insert(name, p);
            return Ok(());
        }
        if name.starts_with("collc_") && self.seq_len(&name, value)? {
            return Ok(());
        }
        let v = self.e(value)?;
        if name.starts_with("collc_") || name == "k_n" || name == "k_len" {
            // collc's own temporaries (hoisted loop bounds, chunk sizes): the value itself.
            self.scope.aliases.insert(name, v);
            return Ok(());
        }
        let unmutated = self
            .px
            .is_some_and(|p| !p.mutated.contains_key(&name) && !p.host.contains(&name));
        if !unmutated
            && !text(n, src).trim_start().starts_with("const")
            && !text(n, src).contains("const ")
        {
            return Err(self.bad(n, "a mutable variable (only `const` values can be lifted)"));
        }
        self.scope.bind_let(&name);
        let name = self.scope.coll(&name);
        self.lets.insert(name.clone(), v.clone());
        out.push(L::new(S::Let { name, value: v }, line(n)));
        Ok(())
    }

    /// The argument list of a `Signal cell(args)` that C++ reads as a function declaration,
    /// parsed again as an expression at the same byte offsets (everything else blanked).
    fn reparsed_cell(&self, n: Node, params: Node) -> R<(String, Vec<E>, Option<E>)> {
        let (s, e) = (params.start_byte(), params.end_byte());
        let prefix = b"int x =";
        if s < n.start_byte() + prefix.len() {
            return Err(self.bad(n, "a signal view"));
        }
        let mut buf: Vec<u8> = self
            .src
            .bytes()
            .map(|b| if b == b'\n' { b'\n' } else { b' ' })
            .collect();
        buf[s - prefix.len()..s].copy_from_slice(prefix);
        buf[s..e].copy_from_slice(&self.src.as_bytes()[s..e]);
        if e < buf.len() {
            buf[e] = b';';
        }
        let text = String::from_utf8(buf).map_err(|_| self.bad(n, "a signal view"))?;
        let cpp = crate::cpp::parse(&text)?;
        let node = cpp
            .tree
            .root_node()
            .descendant_for_byte_range(s, e)
            .ok_or_else(|| self.bad(n, "a signal view"))?;
        self.cell(node)
    }

    /// A signal cell pointer: `[CommRemotePtr(ctx,] sig + flat [, target)]`.
    fn cell(&self, n: Node) -> R<(String, Vec<E>, Option<E>)> {
        let p = self.ptr(n)?;
        let b = self
            .layout
            .bufs
            .get(&p.buf)
            .filter(|b| b.kind == BufKind::Signal)
            .ok_or_else(|| self.bad(n, "a signal view of something not a signal"))?;
        let idx = unflatten(&p.flat, &b.dims)
            .or_else(|| unflatten(&self.through_lets(&p.flat), &b.dims))
            .or_else(|| self.first_row(&p.flat, &b.dims))
            .ok_or_else(|| {
                self.bad(
                    n,
                    "a cell offset that is not row-major in the signal's dimensions",
                )
            })?;
        Ok((b.name.clone(), idx, p.rank))
    }

    /// A pointer: `CommRemotePtr(ctx, p, r)`, `p + off`, a buffer, a local pointer
    /// variable, or (MPI) `w.local<float>()`.
    fn ptr(&self, n: Node) -> R<Ptr> {
        let src = self.src;
        let n = strip(n, src);
        if let Some((f, args)) = call(n, src) {
            if f == "CommRemotePtr" && args.len() == 3 {
                let mut p = self.ptr(args[1])?;
                if p.rank.is_some() {
                    return Err(self.bad(n, "a remote pointer of a remote pointer"));
                }
                p.rank = Some(self.e(args[2])?);
                return Ok(p);
            }
            if let Some(w) = f.strip_suffix(".local<float>") {
                if self
                    .layout
                    .bufs
                    .get(w)
                    .is_some_and(|b| b.kind == BufKind::Window)
                {
                    return Ok(Ptr {
                        buf: w.to_string(),
                        flat: E::Int(0),
                        rank: None,
                    });
                }
            }
            return Err(self.bad(n, "a pointer the lifter cannot follow"));
        }
        match n.kind() {
            "binary_expression" if field(n, "operator").map(|o| text(o, src)) == Some("+") => {
                let l = field(n, "left").ok_or_else(|| self.bad(n, "an operand"))?;
                let r = field(n, "right").ok_or_else(|| self.bad(n, "an operand"))?;
                let mut p = self.ptr(l)?;
                p.flat = E::plus(p.flat, self.e(r)?);
                Ok(p)
            }
            "identifier" | "type_identifier" => {
                let t = text(n, src);
                if let Some(p) = self.ptrs.get(t) {
                    return Ok(p.clone());
                }
                if self.layout.bufs.contains_key(t) {
                    return Ok(Ptr {
                        buf: t.to_string(),
                        flat: E::Int(0),
                        rank: None,
                    });
                }
                Err(self.bad(n, "a pointer to something not a signal, window or tile"))
            }
            _ => Err(self.bad(n, "a pointer the lifter cannot follow (function pointers and pointer arithmetic other than `base + offset` are not accepted)")),
        }
    }

    /// A region of `len` elements at a pointer.
    fn region(&self, n: Node, p: &Ptr, len: &E) -> R<Reg> {
        let b = self
            .layout
            .bufs
            .get(&p.buf)
            .ok_or_else(|| self.bad(n, "an unknown buffer"))?;
        let gm = b.kind == BufKind::Window;
        if !matches!(b.kind, BufKind::Window | BufKind::Tile) {
            return Err(self.bad(n, "a data move on a signal or staging tile"));
        }
        let mut idx = unflatten(&p.flat, &b.dims)
            .or_else(|| unflatten(&self.through_lets(&p.flat), &b.dims))
            .or_else(|| self.first_row(&p.flat, &b.dims))
            .ok_or_else(|| {
                self.bad(
                    n,
                    "an offset that is not row-major in the buffer's dimensions",
                )
            })?;
        let lo = idx.pop().unwrap_or(E::Int(0));
        Ok(Reg {
            buf: b.name.clone(),
            index: idx,
            lo,
            len: len.clone(),
            gm,
        })
    }

    fn tile_region(&self, n: Node, off: Option<Node>, len: &E) -> R<Reg> {
        let t = text(strip(n, self.src), self.src);
        let mut p = Ptr {
            buf: t.to_string(),
            flat: E::Int(0),
            rank: None,
        };
        if self.dialect == Dialect::Mpi {
            p = self.ptr(n)?;
        }
        if let Some(o) = off {
            p.flat = E::plus(p.flat, self.e(o)?);
        }
        let r = self.region(n, &p, len)?;
        if r.gm {
            return Err(self.bad(n, "a window where a tile is expected"));
        }
        Ok(r)
    }

    fn is_stage(&self, n: Node) -> bool {
        let t = text(strip(n, self.src), self.src);
        self.layout
            .bufs
            .get(t)
            .is_some_and(|b| b.kind == BufKind::Stage)
    }

    fn expression_statement(&mut self, n: Node) -> R<Option<S>> {
        let src = self.src;
        let Some(c) = kids(n).first().copied() else {
            return Ok(None);
        };
        let Some((f, args)) = call(c, src) else {
            return Err(self.bad(n, "an expression statement that is not a known call"));
        };
        let argt = |i: usize| {
            args.get(i)
                .map(|a| text(*a, src).replace(' ', ""))
                .unwrap_or_default()
        };
        let arity = |k: usize| -> R<()> {
            if args.len() == k {
                Ok(())
            } else {
                Err(unsupported(
                    c,
                    src,
                    "a call with an unexpected number of arguments",
                ))
            }
        };
        Ok(Some(match f.as_str() {
            "COLLC_CHECK" => return Ok(None),
            // `calls <= N` of the emitted kernel (a refusal of call N + 1, not a statement).
            "COLLC_CALLS_BOUND" => return Ok(None),
            // Trace points observe a `.coll` fence or a data statement's window access.
            "COLLC_TRACE_FENCE" => return arity(0).map(|()| None),
            "COLLC_TRACE_GET" | "COLLC_TRACE_PUT" => {
                return arity(match self.dialect {
                    Dialect::Pto => 2,
                    Dialect::Mpi => 4,
                })
                .map(|()| None)
            }
            "pipe_barrier" if argt(0) == "PIPE_ALL" => S::Barrier,
            "dsb" if argt(0) == "DSB_DDR" => S::Dsb,
            "dcci" if argt(1).trim_start_matches("cache_line_t::") == "ENTIRE_DATA_CACHE" => {
                S::Dcci
            }
            "pto::comm::TNOTIFY" => {
                arity(3)?;
                let (signal, index, target) = self.view(args[0])?;
                let set = match argt(2).rsplit("::").next() {
                    Some("AtomicAdd") => false,
                    Some("Set") => true,
                    _ => return Err(self.bad(args[2], "a notify op other than AtomicAdd or Set")),
                };
                S::Notify {
                    signal,
                    index,
                    target,
                    set,
                    value: self.e(args[1])?,
                }
            }
            "pto::comm::TWAIT" => {
                arity(3)?;
                let (signal, index, target) = self.view(args[0])?;
                if target.is_some() {
                    return Err(self.bad(args[0], "a wait on a remote cell (waits are local)"));
                }
                let cmp = cmp_of(&argt(2)).ok_or_else(|| self.bad(args[2], "a wait comparison"))?;
                S::Wait {
                    signal,
                    index,
                    cmp,
                    threshold: self.e(args[1])?,
                }
            }
            "collc_mpi::notify_add" | "collc_mpi::notify_set" | "collc_mpi::wait" => {
                arity(if f == "collc_mpi::wait" { 5 } else { 4 })?;
                self.mpi_signal(&f, &args)?
            }
            _ => return self.data(c, &f, &args).map(Some),
        }))
    }

    /// `collc_mpi::notify_add/notify_set(ctx, rank, cell, value)` and
    /// `collc_mpi::wait(ctx, cell, cmp, threshold, what)`, their arity checked.
    fn mpi_signal(&mut self, f: &str, args: &[Node]) -> R<S> {
        let src = self.src;
        let argt = |i: usize| text(args[i], src).replace(' ', "");
        if f == "collc_mpi::wait" {
            let (signal, index, _) = self.cell(args[1])?;
            let cmp = cmp_of(&argt(2)).ok_or_else(|| self.bad(args[2], "a wait comparison"))?;
            return Ok(S::Wait {
                signal,
                index,
                cmp,
                threshold: self.e(args[3])?,
            });
        }
        let (signal, index, _) = self.cell(args[2])?;
        let target = if argt(1) == "ctx.me" {
            None
        } else {
            Some(self.e(args[1])?)
        };
        Ok(S::Notify {
            signal,
            index,
            target,
            set: f.ends_with("set"),
            value: self.e(args[3])?,
        })
    }

    /// `cell` of a TNOTIFY/TWAIT: a `pto::comm::Signal` variable.
    fn view(&self, n: Node) -> R<(String, Vec<E>, Option<E>)> {
        let t = text(n, self.src);
        self.cells
            .get(t)
            .cloned()
            .ok_or_else(|| self.bad(n, "a signal view the lifter has not seen declared"))
    }

    /// A data call (no staging).
    fn data(&self, c: Node, f: &str, args: &[Node]) -> R<S> {
        let got = match self.dialect {
            Dialect::Pto => self.pto_data(c, f, args)?,
            Dialect::Mpi => self.mpi_data(c, f, args)?,
        };
        got.ok_or_else(|| {
            self.bad(
                c,
                "a call the lifter does not know (unknown macro or function)",
            )
        })
    }

    /// Argument `i` of data call `c`.
    fn data_arg<'t>(&self, c: Node, args: &[Node<'t>], i: usize) -> R<Node<'t>> {
        args.get(i)
            .copied()
            .ok_or_else(|| unsupported(c, self.src, "a data call with too few arguments"))
    }

    /// A window region of a pto data call, and the rank it is on (None: this rank's).
    fn gm_region(&self, n: Node, len: &E) -> R<(Reg, Option<E>)> {
        let p = self.ptr(n)?;
        let r = self.region(n, &p, len)?;
        if !r.gm {
            return Err(self.bad(n, "a tile where a window pointer is expected"));
        }
        Ok((r, p.rank))
    }

    /// A `pto::comm` data call (collc's macros); None if `f` is not one.
    fn pto_data(&self, c: Node, f: &str, args: &[Node]) -> R<Option<S>> {
        let n = |i: usize| self.data_arg(c, args, i);
        let len_of = |i: usize| -> R<E> { self.e(n(i)?) };
        Ok(Some(match f {
            "collc::TLOAD" => {
                let len = len_of(2)?;
                let (src, rank) = self.gm_region(n(1)?, &len)?;
                load(self.tile_region(n(0)?, None, &len)?, src, rank)
            }
            "collc::TLOAD_AT" => {
                let len = len_of(3)?;
                let (src, rank) = self.gm_region(n(2)?, &len)?;
                load(self.tile_region(n(0)?, Some(n(1)?), &len)?, src, rank)
            }
            "collc::TSTORE_N" | "collc::TSTORE" => {
                let len = len_of(2)?;
                let (dst, rank) = self.gm_region(n(0)?, &len)?;
                store(dst, rank, self.tile_region(n(1)?, None, &len)?)
            }
            "collc::TSTORE_AT" => {
                let len = len_of(3)?;
                let (dst, rank) = self.gm_region(n(0)?, &len)?;
                store(dst, rank, self.tile_region(n(1)?, Some(n(2)?), &len)?)
            }
            "collc::TMOV" => {
                let len = len_of(2)?;
                load(
                    self.tile_region(n(0)?, None, &len)?,
                    self.tile_region(n(1)?, None, &len)?,
                    None,
                )
            }
            "collc::TMOV_AT" => {
                let len = len_of(4)?;
                load(
                    self.tile_region(n(0)?, Some(n(1)?), &len)?,
                    self.tile_region(n(2)?, Some(n(3)?), &len)?,
                    None,
                )
            }
            g => match reduce_of(g) {
                Some(op) => self.tile_reduce(c, g, op, args)?,
                None => return Ok(None),
            },
        }))
    }

    /// A tile reduction: `OP(dst, dst, src, len)` or `OP_AT(dst, od, dst, od, src, os, len)`.
    fn tile_reduce(&self, c: Node, g: &str, op: &'static str, args: &[Node]) -> R<S> {
        let n = |i: usize| self.data_arg(c, args, i);
        if g.ends_with("_AT") {
            let len = self.e(n(6)?)?;
            return Ok(S::Data {
                kind: Move::Reduce(op, None),
                dst: self.tile_region(n(0)?, Some(n(1)?), &len)?,
                src: self.tile_region(n(4)?, Some(n(5)?), &len)?,
            });
        }
        if text(n(0)?, self.src) != text(n(1)?, self.src) {
            return Err(self.bad(c, "a reduction whose destination is not its first operand"));
        }
        let len = match args.len() {
            4 => self.e(n(3)?)?,
            _ => return Err(self.bad(c, "a reduction without an explicit length")),
        };
        Ok(S::Data {
            kind: Move::Reduce(op, None),
            dst: self.tile_region(n(0)?, None, &len)?,
            src: self.tile_region(n(2)?, None, &len)?,
        })
    }

    /// An MPI data call (`collc_mpi::`); None if `f` is not one.
    fn mpi_data(&self, c: Node, f: &str, args: &[Node]) -> R<Option<S>> {
        let n = |i: usize| self.data_arg(c, args, i);
        let len_of = |i: usize| -> R<E> { self.e(n(i)?) };
        Ok(Some(match f {
            "collc_mpi::copy_local" => {
                let len = len_of(2)?;
                let d = self.any_region(n(0)?, &len)?;
                let s = self.any_region(n(1)?, &len)?;
                load(d, s, None)
            }
            "collc_mpi::get" => {
                let len = len_of(4)?;
                let d = self.any_region(n(0)?, &len)?;
                let s = self.window_at(n(2)?, n(3)?, &len)?;
                load(d, s, Some(self.e(n(1)?)?))
            }
            "collc_mpi::put" => {
                let len = len_of(4)?;
                let s = self.any_region(n(0)?, &len)?;
                let d = self.window_at(n(2)?, n(3)?, &len)?;
                store(d, Some(self.e(n(1)?)?), s)
            }
            "collc_mpi::reduce" => {
                let op = reduce_of(&text(n(0)?, self.src).replace(' ', ""))
                    .ok_or_else(|| self.bad(c, "a reduction operator"))?;
                let len = len_of(3)?;
                S::Data {
                    kind: Move::Reduce(op, None),
                    dst: self.any_region(n(1)?, &len)?,
                    src: self.any_region(n(2)?, &len)?,
                }
            }
            _ => return Ok(None),
        }))
    }

    fn any_region(&self, n: Node, len: &E) -> R<Reg> {
        let p = self.ptr(n)?;
        self.region(n, &p, len)
    }

    fn window_at(&self, w: Node, off: Node, len: &E) -> R<Reg> {
        let p = Ptr {
            buf: text(w, self.src).to_string(),
            flat: self.e(off)?,
            rank: None,
        };
        self.region(w, &p, len)
    }

    /// `TLOAD(stage_a, ptr, l); OP(t, t, stage_a, l);` (or the `_AT` form): a reduce from a window.
    fn stage_load_reduce(&self, a: Node, b: Node) -> R<Option<L>> {
        if self.dialect != Dialect::Pto || b.kind() != "expression_statement" {
            return Ok(None);
        }
        let src = self.src;
        let (Some(ca), Some(cb)) = (kids(a).first().copied(), kids(b).first().copied()) else {
            return Ok(None);
        };
        let (Some((fa, aa)), Some((fb, ab))) = (call(ca, src), call(cb, src)) else {
            return Ok(None);
        };
        if fa != "collc::TLOAD" || aa.len() != 3 || !self.is_stage(aa[0]) {
            return Ok(None);
        }
        let Some(op) = reduce_of(&fb) else {
            return Err(self.bad(b, "a staging load not followed by a reduction"));
        };
        let len = self.e(aa[2])?;
        let p = self.ptr(aa[1])?;
        let srcr = self.region(aa[1], &p, &len)?;
        let dst = if fb.ends_with("_AT") {
            if ab.len() != 7 || !self.is_stage(ab[4]) {
                return Err(self.bad(b, "a staged reduction of unexpected shape"));
            }
            self.tile_region(ab[0], Some(ab[1]), &len)?
        } else {
            if ab.len() != 4 || !self.is_stage(ab[2]) {
                return Err(self.bad(b, "a staged reduction of unexpected shape"));
            }
            self.tile_region(ab[0], None, &len)?
        };
        Ok(Some(L::new(
            S::Data {
                kind: Move::Reduce(op, p.rank),
                dst,
                src: srcr,
            },
            line(a),
        )))
    }

    /// The braced window-to-window (or tile-into-window reduce) moves through staging tiles.
    fn staged_move(&mut self, n: Node) -> R<Option<L>> {
        let src = self.src;
        let items = kids(n);
        let first = match items.first() {
            Some(f) if f.kind() == "declaration" && text(*f, src).contains("dst_gm") => *f,
            _ => return Ok(None),
        };
        let saved = (self.scope.clone(), self.ptrs.clone());
        let r = self.staged_inner(n, first, &items);
        (self.scope, self.ptrs) = saved;
        r.map(Some)
    }

    fn staged_inner<'t>(&mut self, n: Node<'t>, _first: Node<'t>, items: &[Node<'t>]) -> R<L> {
        let mut sink = Vec::new();
        let mut calls: Vec<Call<'t>> = Vec::new();
        let mut bound: Option<E> = None;
        let mut chunked = false;
        for it in items {
            match it.kind() {
                "declaration" => self.declaration(*it, &mut sink)?,
                "expression_statement" => calls.push(self.staged_call(*it)?),
                "for_statement" => {
                    chunked = true;
                    bound = Some(self.chunk_loop(*it, &mut calls)?);
                }
                _ => return Err(self.bad(*it, "a statement in a staged move")),
            }
        }
        if !sink.is_empty() {
            return Err(self.bad(n, "a `let` inside a staged move"));
        }
        let dst = self
            .ptrs
            .get("dst_gm")
            .cloned()
            .ok_or_else(|| self.bad(n, "a staged move without dst_gm"))?;
        if chunked {
            let len = bound.ok_or_else(|| self.bad(n, "a staging loop bound"))?;
            self.staged_chunked(n, &dst, &calls, &len)
        } else {
            self.staged_whole(n, &dst, &calls)
        }
    }

    /// A call statement of a staged move: (function, arguments, statement).
    fn staged_call<'t>(&self, it: Node<'t>) -> R<Call<'t>> {
        let c = kids(it)
            .first()
            .copied()
            .ok_or_else(|| self.bad(it, "a statement"))?;
        let (f, a) = call(c, self.src).ok_or_else(|| self.bad(it, "a call"))?;
        Ok((f, a, it))
    }

    /// `for (int64_t k_off = 0; k_off < N; k_off += kStage) { k_len; calls }`: its calls are
    /// appended to `calls`; returns N.
    fn chunk_loop<'t>(&self, it: Node<'t>, calls: &mut Vec<Call<'t>>) -> R<E> {
        let src = self.src;
        let cnd = field(it, "condition").ok_or_else(|| self.bad(it, "a chunk loop"))?;
        let hi = field(strip(cnd, src), "right").ok_or_else(|| self.bad(it, "a chunk loop"))?;
        let bound = self.e(hi)?;
        let body = field(it, "body").ok_or_else(|| self.bad(it, "a chunk loop body"))?;
        for b in kids(body) {
            match b.kind() {
                "declaration" => {
                    let d = field(b, "declarator").ok_or_else(|| self.bad(b, "a declaration"))?;
                    let nm = field(d, "declarator").map(|x| text(x, src)).unwrap_or("");
                    if nm != "k_len" {
                        return Err(self.bad(b, "a declaration in a staging loop"));
                    }
                }
                "expression_statement" => calls.push(self.staged_call(b)?),
                _ => return Err(self.bad(b, "a statement in a staging loop")),
            }
        }
        Ok(bound)
    }

    /// A chunked staged move (window to window, or a staged reduction) of `len` elements.
    fn staged_chunked(&self, n: Node, dst: &Ptr, calls: &[Call], len: &E) -> R<L> {
        let src = self.src;
        let names: Vec<&str> = calls.iter().map(|c| c.0.as_str()).collect();
        let srcp = self.ptrs.get("src_gm").cloned();
        let region = |p: &Ptr| self.region(n, p, len);
        let data = |kind: Move, dst: Reg, src: Reg| L::new(S::Data { kind, dst, src }, line(n));
        match (self.dialect, names.as_slice(), srcp) {
            (Dialect::Pto, ["collc::TLOAD", "collc::TSTORE_N"], Some(s)) => {
                let kind = match (&dst.rank, &s.rank) {
                    (None, None) => Move::Copy,
                    (None, Some(r)) => Move::Get(r.clone()),
                    (Some(r), None) => Move::Put(r.clone()),
                    _ => return Err(self.bad(n, "a move between two remote windows")),
                };
                Ok(data(kind, region(dst)?, region(&s)?))
            }
            (Dialect::Pto, ["collc::TLOAD", "collc::TLOAD", op, "collc::TSTORE_N"], Some(s)) => {
                let op = reduce_of(op).ok_or_else(|| self.bad(n, "a staged reduction"))?;
                if dst.rank.is_some() {
                    return Err(self.bad(n, "a reduction into a remote window"));
                }
                Ok(data(
                    Move::Reduce(op, s.rank.clone()),
                    region(dst)?,
                    region(&s)?,
                ))
            }
            (Dialect::Mpi, ["collc_mpi::get", "collc_mpi::reduce"], None) => {
                let (_, a, _) = &calls[0];
                let (_, b, _) = &calls[1];
                let op = reduce_of(&text(arg(b, 0)?, src).replace(' ', ""))
                    .ok_or_else(|| self.bad(n, "a reduction operator"))?;
                let off = field(strip(arg(a, 3)?, src), "left")
                    .ok_or_else(|| self.bad(n, "a chunk offset"))?;
                let s = self.window_at(arg(a, 2)?, off, len)?;
                let rank = if text(arg(a, 1)?, src).replace(' ', "") == "ctx.me" {
                    None
                } else {
                    Some(self.e(arg(a, 1)?)?)
                };
                Ok(data(Move::Reduce(op, rank), region(dst)?, s))
            }
            _ => Err(self.bad(n, "a staged move of a shape the lifter does not know")),
        }
    }

    /// `{ dst_gm; TLOAD(stage_a, dst_gm, l); OP(stage_a, stage_a, t, l); TSTORE_N(dst_gm,
    /// stage_a, l); }`: a tile reduced into a window.
    fn staged_whole(&self, n: Node, dst: &Ptr, calls: &[Call]) -> R<L> {
        let names: Vec<&str> = calls.iter().map(|c| c.0.as_str()).collect();
        let op = match names.as_slice() {
            ["collc::TLOAD", op, "collc::TSTORE_N"] => reduce_of(op),
            _ => None,
        };
        let Some(op) = op else {
            return Err(self.bad(n, "a staged move of a shape the lifter does not know"));
        };
        let (_, a, _) = &calls[0];
        let (_, b, _) = &calls[1];
        let len = self.e(arg(a, 2)?)?;
        let t = if b.len() == 7 {
            self.tile_region(arg(b, 4)?, Some(arg(b, 5)?), &len)?
        } else if b.len() == 4 {
            self.tile_region(arg(b, 2)?, None, &len)?
        } else {
            return Err(self.bad(n, "a staged reduction of unexpected shape"));
        };
        Ok(L::new(
            S::Data {
                kind: Move::Reduce(op, None),
                dst: self.region(n, dst, &len)?,
                src: t,
            },
            line(n),
        ))
    }

    fn for_loop(&mut self, n: Node) -> R<Option<L>> {
        if let Some(l) = self.seq_loop(n)? {
            return Ok(Some(l));
        }
        let src = self.src;
        let bad = |what: &str| unsupported(n, src, what);
        let init = field(n, "initializer").ok_or_else(|| bad("a loop without an initialiser"))?;
        let decl = field(init, "declarator").filter(|d| d.kind() == "init_declarator");
        let decl = decl.ok_or_else(|| bad("a loop whose initialiser is not `int64_t v = lo`"))?;
        let var = field(decl, "declarator")
            .map(|v| text(v, src).to_string())
            .ok_or_else(|| bad("a loop variable"))?;
        let lo = self.e(field(decl, "value").ok_or_else(|| bad("a loop start"))?)?;
        let cnd = field(n, "condition")
            .map(|c| strip(c, src))
            .ok_or_else(|| bad("a loop without a condition"))?;
        let cop = field(cnd, "operator").map(|o| text(o, src)).unwrap_or("");
        let cl = field(cnd, "left")
            .map(|l| text(strip(l, src), src))
            .unwrap_or("");
        if cnd.kind() != "binary_expression" || cop != "<" || cl != var {
            return Err(self.bad(cnd, "a loop condition other than `v < bound` (computed or descending bounds are not accepted)"));
        }
        let hi = self.e(field(cnd, "right").ok_or_else(|| bad("a loop bound"))?)?;
        let upd = field(n, "update").ok_or_else(|| bad("a loop without an update"))?;
        let step = match upd.kind() {
            "update_expression" if text(upd, src).contains("++") => E::Int(1),
            "assignment_expression"
                if field(upd, "operator").map(|o| text(o, src)) == Some("+=")
                    && field(upd, "left").map(|l| text(l, src)) == Some(var.as_str()) =>
            {
                self.e(field(upd, "right").ok_or_else(|| bad("a loop step"))?)?
            }
            _ => return Err(self.bad(upd, "a loop update other than `++v` or `v += step`")),
        };
        let body = field(n, "body").ok_or_else(|| bad("a loop body"))?;
        let mut items = if body.kind() == "compound_statement" {
            all_kids(body)
        } else {
            vec![body]
        };
        items.retain(|k| k.kind() != "comment");
        let saved = (self.scope.clone(), self.cells.clone(), self.ptrs.clone());
        self.scope.bind(&var);
        let coll_var = self.scope.coll(&var);
        let mut range = Range::Span(lo.clone(), hi.clone(), step.clone());
        if let Some(first) = items.first().copied() {
            if self.is_skip_me(first, &var) {
                let p_ok = matches!(&hi, E::Name(h) if *h == self.scope.world);
                if lo != E::Int(0) || step != E::Int(1) || !p_ok {
                    return Err(self.bad(
                        first,
                        "a `continue` on `me` in a loop that is not over 0..P",
                    ));
                }
                range = Range::Peers;
                items.remove(0);
            }
        }
        let counters = self.enter_counters(&items, &coll_var, &lo, &step)?;
        let mut out = Vec::new();
        self.list(&items, &mut out)?;
        (self.scope, self.cells, self.ptrs) = saved;
        self.leave_counters(counters, &lo, &hi, &step);
        if self.px.is_some() && !px::effectful(&out) {
            return Ok(None);
        }
        Ok(Some(L::new(
            S::For {
                var: coll_var,
                range,
                body: out,
            },
            line(n),
        )))
    }

    fn is_skip_me(&self, n: Node, var: &str) -> bool {
        if n.kind() != "if_statement" {
            return false;
        }
        let src = self.src;
        let c = field(n, "condition")
            .map(|c| text(c, src).replace([' ', '(', ')'], ""))
            .unwrap_or_default();
        let body = field(n, "consequence");
        let is_continue = body.is_some_and(|b| {
            b.kind() == "continue_statement"
                || (b.kind() == "compound_statement"
                    && kids(b).len() == 1
                    && kids(b)[0].kind() == "continue_statement")
        });
        let me = self
            .scope
            .names
            .iter()
            .find(|(_, v)| v.as_str() == "me")
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| "me".into());
        let is_me = |e: &E| *e == E::Name("me".into());
        let read = field(n, "condition").and_then(|c| self.c(c).ok());
        let by_value = matches!(&read, Some(C::Cmp("==", E::Name(v), m)) if v == var && is_me(m))
            || matches!(&read, Some(C::Cmp("==", m, E::Name(v))) if v == var && is_me(m));
        is_continue && (by_value || c == format!("{var}=={me}") || c == format!("{me}=={var}"))
    }

    fn if_stmt(&mut self, n: Node) -> R<L> {
        let src = self.src;
        let cnode =
            field(n, "condition").ok_or_else(|| self.bad(n, "an if without a condition"))?;
        let then = field(n, "consequence").ok_or_else(|| self.bad(n, "an if without a body"))?;
        // MPI: `if (static_cast<int>(r) == ctx.me) { copy } else { get/put }` is one get/put.
        if self.dialect == Dialect::Mpi && text(cnode, src).contains("ctx.me") {
            let alt = field(n, "alternative").and_then(|a| kids(a).first().copied());
            let alt = alt.ok_or_else(|| self.bad(n, "a `ctx.me` test without an else"))?;
            let remote = self.block(alt)?;
            let local = self.block(then)?;
            return match (remote.as_slice(), local.as_slice()) {
                ([r], [_]) => Ok(L::new(r.s.clone(), line(n))),
                _ => Err(self.bad(n, "a `ctx.me` test that is not collc's get/put-unless-me")),
            };
        }
        let c = self.c(cnode)?;
        // `if (c) { pipe_barrier(PIPE_ALL); return; }` / `if (c) { return; }`: an early return.
        let body = if then.kind() == "compound_statement" {
            kids(then)
        } else {
            vec![then]
        };
        if body.last().is_some_and(|b| b.kind() == "return_statement") {
            let pre: Vec<String> = body[..body.len() - 1]
                .iter()
                .map(|b| text(*b, src).replace(' ', ""))
                .collect();
            let ok = match self.dialect {
                Dialect::Pto => pre == ["pipe_barrier(PIPE_ALL);"],
                Dialect::Mpi => pre.is_empty(),
            };
            if !ok || field(n, "alternative").is_some() {
                return Err(self.bad(
                    n,
                    "an early return other than `if (c) { pipe_barrier(PIPE_ALL); return; }`",
                ));
            }
            return Ok(L::new(S::Return { cond: c }, line(n)));
        }
        let t = self.block(then)?;
        let els = match field(n, "alternative") {
            None => None,
            Some(a) => {
                let inner = kids(a)
                    .first()
                    .copied()
                    .ok_or_else(|| self.bad(a, "an else"))?;
                Some(self.block(inner)?)
            }
        };
        Ok(L::new(
            S::If {
                cond: c,
                then: t,
                els,
            },
            line(n),
        ))
    }
}
