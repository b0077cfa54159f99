//! The statements of pypto's builtin kernels (see `crate::pypto`): `GlobalTensor` views and
//! `pto::Tile` moves (`TLOAD`, `TSTORE`, `TPUT`, `TGET`, `TADD`...), pipe flags, cache
//! maintenance, helper functions (inlined), `constexpr bool` dispatch, counters (`int32_t
//! expected = 2; ... ++expected;` once per iteration), clamps (`x = e; if (x > k) x = k;`) and
//! the statements that compute host values from tensor shapes.

use super::{Ptr, Reader, R};
use crate::cpp::{call, field, kids, line, text};
use crate::expr::{strip, E};
use crate::layout::BufKind;
use crate::model::{Move, Reg, L, S};
use crate::pypto::{host_stmt, Alias};
use tree_sitter::Node;

/// The deepest helper-call nesting the lifter inlines.
const MAX_INLINE: usize = 8;

impl<'a> Reader<'a> {
    /// Reads one pypto statement into `out`; `Ok(false)` when it is not one of pypto's forms
    /// (the caller reads it as collc's). `next` is the statement after it, consumed (and
    /// `*skip` set) when the two are one form.
    pub(super) fn px_item(
        &mut self,
        n: Node,
        next: Option<Node>,
        skip: &mut bool,
        out: &mut Vec<L>,
    ) -> R<bool> {
        let Some(px) = self.px else {
            return Ok(false);
        };
        let src = self.src;
        match n.kind() {
            "alias_declaration" | "static_assert_declaration" | "using_declaration" => {
                return Ok(true)
            }
            "declaration" if text(n, src).starts_with("static_assert") => return Ok(true),
            _ => {}
        }
        if let Some(w) = host_stmt(n, src, &px.host) {
            if let Some(bad) = w.iter().find(|x| !px.host.contains(*x)) {
                return Err(self.bad(
                    n,
                    &format!("a value computed from a tensor's shape that the declarations do not give: declare `param {bad}: int in LO..=HI;`"),
                ));
            }
            return Ok(true);
        }
        match n.kind() {
            "declaration" => self.px_declaration(n, next, skip, out),
            "expression_statement" => self.px_expression(n, out),
            "if_statement" => {
                let c = field(n, "condition").map(|c| text(strip(c, src), src).trim().to_string());
                let c = c.map(|c| c.trim_matches(['(', ')', ' ']).to_string());
                let Some(v) = c.and_then(|c| px.bools.get(&c).copied()) else {
                    return Ok(false);
                };
                let taken = if v {
                    field(n, "consequence")
                } else {
                    field(n, "alternative").and_then(|a| kids(a).first().copied())
                };
                if let Some(t) = taken {
                    let items = if t.kind() == "compound_statement" {
                        kids(t)
                    } else {
                        vec![t]
                    };
                    self.list(&items, out)?;
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn px_declaration(
        &mut self,
        n: Node,
        next: Option<Node>,
        skip: &mut bool,
        out: &mut Vec<L>,
    ) -> R<bool> {
        let src = self.src;
        let Some(px) = self.px else {
            return Ok(false);
        };
        let ty = field(n, "type").map(|t| text(t, src)).unwrap_or("").trim();
        let decl = field(n, "declarator").ok_or_else(|| self.bad(n, "a declaration"))?;
        let alias = px
            .aliases
            .get(ty.rsplit("::").next().unwrap_or(ty))
            .copied();
        if let Some(a) = alias {
            self.px_typed(n, decl, a)?;
            return Ok(true);
        }
        if text(n, src).contains("->buffer.addr") {
            return Ok(true); // a buffer (registered with the outline)
        }
        if decl.kind() != "init_declarator" || ty.ends_with("Signal") {
            return Ok(false);
        }
        let Some(nm) = field(decl, "declarator").filter(|d| d.kind() == "identifier") else {
            return Ok(false);
        };
        if field(decl, "value").is_some_and(|v| v.kind() == "argument_list") {
            return Ok(false);
        }
        let name = text(nm, src).to_string();
        let value = field(decl, "value").ok_or_else(|| self.bad(n, "an initialiser"))?;
        let muts = px.mutated.get(&name).copied().unwrap_or(0);
        if muts == 0 {
            if text(n, src).trim_start().starts_with("constexpr")
                || text(n, src).contains(" constexpr ")
            {
                if let E::Int(_) = self.e(value)? {
                    // a local constant: a `let` of its literal
                } else {
                    return Err(self.bad(n, "a constexpr that is not a literal"));
                }
            }
            let v = self.e(value)?;
            self.scope.bind_let(&name);
            let name = self.scope.coll(&name);
            self.lets.insert(name.clone(), v.clone());
            out.push(L::new(S::Let { name, value: v }, line(n)));
            return Ok(true);
        }
        // `T x = e; if (x > k) x = k;`: `let x = min(e, k)`.
        if let Some(k) = next.and_then(|x| self.clamp_of(x, &name)) {
            if muts == 1 {
                let v = self.e(value)?;
                let k = self.e(k)?;
                *skip = true;
                self.scope.bind_let(&name);
                let name = self.scope.coll(&name);
                out.push(L::new(
                    S::Let {
                        name,
                        value: E::Fun("min", Box::new(v), Box::new(k)),
                    },
                    line(n),
                ));
                return Ok(true);
            }
        }
        // A counter: every mutation is a `++x;` statement (read by the loops that hold them).
        let v = self.e(value)?;
        self.counters.insert(name.clone());
        self.scope.aliases.insert(name, v);
        Ok(true)
    }

    /// A declaration of a view, shape, stride or tile (a `using` alias of pto's types).
    fn px_typed(&mut self, n: Node, decl: Node, a: Alias) -> R<()> {
        let src = self.src;
        let Some(px) = self.px else {
            return Ok(());
        };
        let name = field(decl, "declarator")
            .map(|d| text(d, src).to_string())
            .ok_or_else(|| self.bad(n, "a view"))?;
        let args = self.ctor_args(decl);
        match a {
            Alias::Stride => {}
            Alias::Tile(_) => {
                // `T t(rows, cols)`: cols valid columns (until `SetValidShape`).
                if let [_, c] = args.as_slice() {
                    let v = self.arg_e(n, c)?;
                    self.px_valid.insert(name, v);
                }
            }
            Alias::Shape => {
                let last = args.last().ok_or_else(|| self.bad(n, "a shape"))?;
                let len = self.arg_e(n, last)?;
                self.px_shapes.insert(name, len);
            }
            Alias::Global => {
                let (p, s) = match args.as_slice() {
                    [p, s, _] => (p, s),
                    _ => {
                        return Err(
                            self.bad(n, "a global view other than `G g(ptr, shape, stride)`")
                        )
                    }
                };
                let ptr = match p {
                    Arg::Node(x) => self.ptr(*x)?,
                    Arg::Name(x) => self.ptr_named(n, x)?,
                };
                let len = match s {
                    Arg::Name(s) => self.px_shapes.get(s).cloned(),
                    Arg::Node(s) => match call(*s, src) {
                        // `G g(p, Shape(1, 1, 1, 1, len), Stride(...))`
                        Some((f, a)) if px.aliases.get(&f) == Some(&Alias::Shape) => {
                            a.last().map(|l| self.e(*l)).transpose()?
                        }
                        _ => self.px_shapes.get(text(*s, src)).cloned(),
                    },
                }
                .ok_or_else(|| {
                    self.bad(
                        n,
                        "a global view whose shape the lifter has not seen declared",
                    )
                })?;
                self.px_views.insert(name, (ptr, len));
            }
        }
        Ok(())
    }

    /// `k` of `if (x > k) x = k;` (no else).
    fn clamp_of<'n>(&self, n: Node<'n>, x: &str) -> Option<Node<'n>> {
        let src = self.src;
        if n.kind() != "if_statement" || field(n, "alternative").is_some() {
            return None;
        }
        let c = strip(field(n, "condition")?, src);
        let c = if c.kind() == "condition_clause" {
            strip(field(c, "value")?, src)
        } else {
            c
        };
        let op = field(c, "operator").map(|o| text(o, src))?;
        let l = text(strip(field(c, "left")?, src), src);
        let k = strip(field(c, "right")?, src);
        let body = field(n, "consequence")?;
        let stmt = if body.kind() == "compound_statement" {
            match kids(body).as_slice() {
                [s] => *s,
                _ => return None,
            }
        } else {
            body
        };
        let a = kids(stmt).first().copied()?;
        let ok = op == ">"
            && l == x
            && a.kind() == "assignment_expression"
            && field(a, "operator").map(|o| text(o, src)) == Some("=")
            && field(a, "left").map(|o| text(o, src)) == Some(x)
            && field(a, "right").map(|r| text(strip(r, src), src)) == Some(text(k, src));
        ok.then_some(k)
    }

    fn px_expression(&mut self, n: Node, out: &mut Vec<L>) -> R<bool> {
        let src = self.src;
        let Some(c) = kids(n).first().copied() else {
            return Ok(false);
        };
        match c.kind() {
            "update_expression" => {
                let x = field(c, "argument").map(|a| text(a, src).to_string());
                let x = x.filter(|x| self.counters.contains(x));
                let Some(x) = x else {
                    return Err(self.bad(n, "an increment of something not a counter"));
                };
                if !text(c, src).contains("++") {
                    return Err(self.bad(n, "a counter that is decremented"));
                }
                let v = self.scope.aliases.get(&x).cloned().unwrap_or(E::Int(0));
                self.scope.aliases.insert(x, E::plus(v, E::Int(1)));
                return Ok(true);
            }
            "assignment_expression" => {
                let l = field(c, "left").ok_or_else(|| self.bad(n, "an assignment"))?;
                let r = field(c, "right").ok_or_else(|| self.bad(n, "an assignment"))?;
                let lt = text(l, src);
                if lt.ends_with(".ColMaskInternal") {
                    let t = lt.trim_end_matches(".ColMaskInternal").to_string();
                    let v = self.e(r)?;
                    self.px_valid.insert(t, v);
                    return Ok(true);
                }
                if self.ptrs.contains_key(lt) {
                    let p = self.ptr(r)?;
                    self.ptrs.insert(lt.to_string(), p);
                    return Ok(true);
                }
                return Err(self.bad(n, "an assignment the lifter cannot follow (only pointer variables and tile masks are reassigned)"));
            }
            _ => {}
        }
        let Some((f, args)) = call(c, src) else {
            return Ok(false);
        };
        let short = f.split('<').next().unwrap_or(&f).to_string();
        let short = short.as_str();
        match short {
            "set_flag" | "wait_flag" | "TASSIGN" | "dsb" | "dcci" | "set_mask_norm"
            | "set_vector_mask" => Ok(true),
            "pipe_barrier" => {
                out.push(L::new(S::Fence, line(n)));
                Ok(true)
            }
            _ if f.ends_with(".SetValidShape") => {
                let t = f.trim_end_matches(".SetValidShape").to_string();
                let last = args.last().ok_or_else(|| self.bad(n, "a valid shape"))?;
                let v = self.e(*last)?;
                self.px_valid.insert(t, v);
                Ok(true)
            }
            "TLOAD" | "TSTORE" | "pto::comm::TPUT" | "pto::comm::TGET" | "TADD" | "TMAX"
            | "TMIN" | "TMUL" => {
                let atomic = f
                    .split_once('<')
                    .map(|(_, t)| t.trim_end_matches('>').trim());
                let s = match atomic {
                    None => self.px_data(c, short, &args)?,
                    Some(t) if short == "pto::comm::TPUT" && t.ends_with("AtomicType::AtomicAdd") => {
                        self.px_accumulate(c, &args)?
                    }
                    Some(_) => return Err(self.bad(c, "a data call with template arguments other than TPUT's `AtomicType::AtomicAdd`")),
                };
                out.push(L::new(s, line(n)));
                Ok(true)
            }
            _ if self.px.is_some_and(|p| p.helpers.contains_key(short)) => {
                self.inline(c, short, &args, out)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// A view's pointer and length.
    fn view_of(&self, n: Node) -> R<(Ptr, E)> {
        self.px_views
            .get(text(strip(n, self.src), self.src))
            .cloned()
            .ok_or_else(|| self.bad(n, "a global view the lifter has not seen declared"))
    }

    fn tile_reg(&self, n: Node, len: &E) -> R<Reg> {
        let t = text(strip(n, self.src), self.src);
        let ok = self
            .layout
            .bufs
            .get(t)
            .is_some_and(|b| b.kind == BufKind::Tile);
        if !ok {
            return Err(self.bad(n, "a tile the lifter has not seen declared"));
        }
        let p = Ptr {
            buf: t.to_string(),
            flat: E::Int(0),
            rank: None,
        };
        self.region(n, &p, len)
    }

    /// `pto::comm::TPUT<pto::AtomicType::AtomicAdd>(dst, src, tile)`: a reduction (sum) of a
    /// local window view into a peer's (`reduce sum DST @ RANK <- SRC`).
    fn px_accumulate(&self, c: Node, args: &[Node]) -> R<S> {
        if args.len() != 3 {
            return Err(self.bad(c, "a data call with an unexpected number of arguments"));
        }
        let (dp, dlen) = self.view_of(args[0])?;
        let (sp, slen) = self.view_of(args[1])?;
        let (Some(r), None) = (dp.rank.clone(), sp.rank.clone()) else {
            return Err(self.bad(
                c,
                "an atomic TPUT that is not from a local window view into a peer's",
            ));
        };
        let dst = self.region(args[0], &dp, &dlen)?;
        let src = self.region(args[1], &sp, &slen)?;
        if !dst.gm || !src.gm {
            return Err(self.bad(c, "a view of something not a window"));
        }
        Ok(S::Data {
            kind: Move::Accumulate("sum", r),
            dst,
            src,
        })
    }

    fn px_data(&self, c: Node, f: &str, args: &[Node]) -> R<S> {
        let arity = |k: usize| {
            if args.len() == k {
                Ok(())
            } else {
                Err(self.bad(c, "a data call with an unexpected number of arguments"))
            }
        };
        let win = |n: Node| -> R<(Reg, Option<E>)> {
            let (p, len) = self.view_of(n)?;
            let r = self.region(n, &p, &len)?;
            if !r.gm {
                return Err(self.bad(n, "a view of something not a window"));
            }
            Ok((r, p.rank))
        };
        Ok(match f {
            "TLOAD" => {
                arity(2)?;
                let (src, rank) = win(args[1])?;
                let dst = self.tile_reg(args[0], &src.len)?;
                S::Data {
                    kind: rank.map_or(Move::Copy, Move::Get),
                    dst,
                    src,
                }
            }
            "TSTORE" => {
                arity(2)?;
                let (dst, rank) = win(args[0])?;
                let src = self.tile_reg(args[1], &dst.len)?;
                S::Data {
                    kind: rank.map_or(Move::Copy, Move::Put),
                    dst,
                    src,
                }
            }
            "pto::comm::TPUT" | "pto::comm::TGET" => {
                arity(3)?;
                let (dst, dr) = win(args[0])?;
                let (src, sr) = win(args[1])?;
                let kind = match (dr, sr) {
                    (None, None) => Move::Copy,
                    (Some(r), None) => Move::Put(r),
                    (None, Some(r)) => Move::Get(r),
                    _ => return Err(self.bad(c, "a move between two remote windows")),
                };
                S::Data { kind, dst, src }
            }
            op => {
                arity(3)?;
                if text(args[0], self.src) != text(args[1], self.src) {
                    return Err(
                        self.bad(c, "a reduction whose destination is not its first operand")
                    );
                }
                let t = text(strip(args[0], self.src), self.src);
                let len = self.px_valid.get(t).cloned().ok_or_else(|| {
                    self.bad(c, "a reduction over a tile whose valid length the lifter has not seen set (`SetValidShape`)")
                })?;
                let op = match op {
                    "TADD" => "sum",
                    "TMAX" => "max",
                    "TMIN" => "min",
                    _ => "prod",
                };
                S::Data {
                    kind: Move::Reduce(op, None),
                    dst: self.tile_reg(args[0], &len)?,
                    src: self.tile_reg(args[2], &len)?,
                }
            }
        })
    }

    /// Inlines a helper function: pointer parameters bound to pointers, the `CommContext`
    /// dropped, scalars bound to their argument's value.
    fn inline(&mut self, c: Node, name: &str, args: &[Node], out: &mut Vec<L>) -> R<()> {
        let src = self.src;
        let Some(def) = self.px.and_then(|p| p.helpers.get(name).copied()) else {
            return Err(self.bad(c, "a call the lifter does not know"));
        };
        if self.depth >= MAX_INLINE {
            return Err(self.bad(c, "helper calls nested too deeply"));
        }
        let params = field(def, "declarator")
            .and_then(|d| field(d, "parameters"))
            .map(kids)
            .unwrap_or_default();
        if params.len() != args.len() {
            return Err(self.bad(c, "a helper call with the wrong number of arguments"));
        }
        let saved = (self.scope.clone(), self.cells.clone(), self.ptrs.clone());
        let mut bind = Vec::new();
        for (p, a) in params.iter().zip(args) {
            let pt = text(*p, src);
            let mut d = field(*p, "declarator").ok_or_else(|| self.bad(*p, "a parameter"))?;
            while matches!(d.kind(), "pointer_declarator" | "reference_declarator") {
                match kids(d).last() {
                    Some(x) => d = *x,
                    None => break,
                }
            }
            let pn = text(d, src).to_string();
            if pt.contains("CommContext") {
                continue;
            }
            if pt.contains('*') {
                bind.push((pn, None, Some(self.ptr(*a)?)));
            } else {
                bind.push((pn, Some(self.e(*a)?), None));
            }
        }
        for (pn, v, p) in bind {
            self.scope.names.remove(&pn);
            if let Some(v) = v {
                self.scope.aliases.insert(pn, v);
            } else if let Some(p) = p {
                self.scope.aliases.remove(&pn);
                self.ptrs.insert(pn, p);
            }
        }
        let body = field(def, "body").ok_or_else(|| self.bad(def, "a helper without a body"))?;
        self.inlined += 1;
        self.scope.suffix = format!("_{}", self.inlined);
        self.depth += 1;
        let r = self.list(&kids(body), out);
        self.depth -= 1;
        (self.scope, self.cells, self.ptrs) = saved;
        r
    }

    fn ptr_named(&self, n: Node, x: &str) -> R<Ptr> {
        if let Some(p) = self.ptrs.get(x) {
            return Ok(p.clone());
        }
        if self.layout.bufs.contains_key(x) {
            return Ok(Ptr {
                buf: x.to_string(),
                flat: E::Int(0),
                rank: None,
            });
        }
        Err(self.bad(n, "a pointer the lifter cannot follow"))
    }

    fn arg_e(&self, n: Node, a: &Arg) -> R<E> {
        match a {
            Arg::Node(x) => self.e(*x),
            Arg::Name(x) => self
                .scope
                .aliases
                .get(x)
                .cloned()
                .or_else(|| self.scope.names.get(x).map(|v| E::Name(v.clone())))
                .ok_or_else(|| self.bad(n, "a name the lifter has not bound")),
        }
    }

    /// A constructor's arguments: `T x(a, b)` parses as an initialiser with an argument list,
    /// or (all names) as a function declaration whose "parameters" are the names.
    fn ctor_args<'n>(&self, decl: Node<'n>) -> Vec<Arg<'n>> {
        let src = self.src;
        if decl.kind() == "init_declarator" {
            if let Some(v) = field(decl, "value").filter(|v| v.kind() == "argument_list") {
                return kids(v).into_iter().map(Arg::Node).collect();
            }
        }
        if decl.kind() == "function_declarator" {
            if let Some(ps) = field(decl, "parameters") {
                return kids(ps)
                    .into_iter()
                    .map(|p| match p.kind() {
                        "parameter_declaration" => Arg::Name(text(p, src).trim().to_string()),
                        _ => Arg::Node(p),
                    })
                    .collect();
            }
        }
        Vec::new()
    }

    /// Sets each counter of a loop body (`loop_counters`) to its value at the top of the
    /// iteration `var`; returns (counter, increments, value before the loop).
    pub(super) fn enter_counters(
        &mut self,
        items: &[Node],
        var: &str,
        lo: &E,
        step: &E,
    ) -> R<Vec<(String, i64, E)>> {
        let mut out = Vec::new();
        for (c, k) in self.loop_counters(items)? {
            let v0 = self.scope.aliases.get(&c).cloned().unwrap_or(E::Int(0));
            let at = times(k, index(var, lo, step));
            self.scope
                .aliases
                .insert(c.clone(), E::plus(v0.clone(), at));
            out.push((c, k, v0));
        }
        Ok(out)
    }

    /// Sets each counter to its value after the loop.
    pub(super) fn leave_counters(&mut self, cs: Vec<(String, i64, E)>, lo: &E, hi: &E, step: &E) {
        for (c, k, v0) in cs {
            let t = times(k, trips(lo, hi, step));
            self.scope.aliases.insert(c, E::plus(v0, t));
        }
    }

    /// The loop's counters: `++c;` statements directly in its body (once each per
    /// iteration); a counter incremented deeper is refused.
    pub(super) fn loop_counters(&self, items: &[Node]) -> R<Vec<(String, i64)>> {
        let src = self.src;
        let mut found: Vec<(String, i64)> = Vec::new();
        for it in items {
            let inc = (it.kind() == "expression_statement")
                .then(|| kids(*it).first().copied())
                .flatten()
                .filter(|c| c.kind() == "update_expression")
                .and_then(|c| field(c, "argument"))
                .map(|a| text(a, src).to_string());
            match inc {
                Some(x) if self.counters.contains(&x) => {
                    match found.iter_mut().find(|(y, _)| *y == x) {
                        Some(e) => e.1 += 1,
                        None => found.push((x, 1)),
                    }
                }
                _ => {
                    let t = text(*it, src);
                    if let Some(c) = self
                        .counters
                        .iter()
                        .find(|c| t.contains(&format!("++{c}")) || t.contains(&format!("{c}++")))
                    {
                        return Err(self.bad(
                            *it,
                            &format!("counter `{c}` incremented other than once per iteration at the loop's top level"),
                        ));
                    }
                }
            }
        }
        Ok(found)
    }
}

/// A constructor argument: an expression, or a name the grammar read as a parameter.
pub(super) enum Arg<'n> {
    Node(Node<'n>),
    Name(String),
}

/// `max(0, ceil((hi - lo) / step))`: the iterations of `for (v = lo; v < hi; v += step)`.
fn trips(lo: &E, hi: &E, step: &E) -> E {
    let span = E::Bin("-", Box::new(hi.clone()), Box::new(lo.clone()));
    let span = if *lo == E::Int(0) { hi.clone() } else { span };
    let n = if *step == E::Int(1) {
        span
    } else {
        E::Fun("ceil", Box::new(span), Box::new(step.clone()))
    };
    E::Fun("max", Box::new(E::Int(0)), Box::new(n))
}

/// `k * e` (`e` when `k` is 1).
fn times(k: i64, e: E) -> E {
    if k == 1 {
        e
    } else {
        E::Bin("*", Box::new(E::Int(k)), Box::new(e))
    }
}

/// `(v - lo) / step`: the iteration index of `v`.
fn index(var: &str, lo: &E, step: &E) -> E {
    let v = E::Name(var.to_string());
    let d = if *lo == E::Int(0) {
        v
    } else {
        E::Bin("-", Box::new(v), Box::new(lo.clone()))
    };
    if *step == E::Int(1) {
        d
    } else {
        E::Bin("/", Box::new(d), Box::new(step.clone()))
    }
}

/// Whether a lifted block does anything (a loop of only lets is dropped: cache flushes).
pub(super) fn effectful(body: &[L]) -> bool {
    body.iter().any(|l| !matches!(l.s, S::Let { .. }))
}
