//! The IR printer. Its output is canonical `.coll` text that parses and lowers
//! back to the same IR (spans aside). With the original source it also keeps
//! the file's comments and single blank lines, and what the IR does not record
//! of the text — constant expressions (`const CHUNK = 16384 / 4;`), domain
//! bounds written with constants, omitted slice bounds (`data[..]`) — which is
//! what `collc fmt` does.

use crate::ir::*;
use collc_grammar::ast;
use collc_grammar::ast::NEG_PRECEDENCE;
use collc_grammar::Span;
use std::collections::HashMap;

mod head;
pub use head::{stmt_head, Credit, Head, Style};

/// Prints a protocol as canonical `.coll` text.
pub fn print(p: &Protocol) -> String {
    Printer::new(p, None, None).run()
}

/// Prints a protocol as canonical `.coll` text, keeping the comments and blank
/// lines of `source` (the text it was lowered from) and the forms of its
/// constants, domains and slices.
pub fn format_with_source(p: &Protocol, source: &str) -> String {
    let file = collc_grammar::parse(source).ok();
    Printer::new(p, Some(source), file.as_ref()).run()
}

/// Prints the semantics clause, e.g. `allreduce(sum, data)` or `barrier()`.
pub fn semantics_to_string(p: &Protocol) -> String {
    Printer::new(p, None, None).semantics()
}

/// Prints one expression.
pub fn expr_to_string(p: &Protocol, e: &Expr) -> String {
    let mut s = String::new();
    write_expr(p, e, 0, &mut s);
    s
}

/// Prints one condition.
pub fn cond_to_string(p: &Protocol, c: &Cond) -> String {
    let mut s = String::new();
    write_cond(p, c, 0, &mut s);
    s
}

/// Prints a signal cell reference like `sig[me][blk]`.
pub fn cell_to_string(p: &Protocol, signal: SignalId, index: &[Expr]) -> String {
    let mut s = p.signals[signal].name.clone();
    for i in index {
        s.push('[');
        write_expr(p, i, 0, &mut s);
        s.push(']');
    }
    s
}

/// Prints a region like `data[base .. base + len]`.
pub fn region_to_string(p: &Protocol, r: &Region) -> String {
    let mut s = p.buffer_name(r.buffer).to_string();
    for i in &r.index {
        s.push('[');
        write_expr(p, i, 0, &mut s);
        s.push(']');
    }
    s.push('[');
    write_expr(p, &r.lo, 0, &mut s);
    s.push_str(" .. ");
    write_expr(p, &r.hi, 0, &mut s);
    s.push(']');
    s
}

fn write_expr(p: &Protocol, e: &Expr, min_prec: u8, out: &mut String) {
    match e {
        Expr::Int(v) => {
            if *v < 0 {
                out.push_str(&format!("({v})"));
            } else {
                out.push_str(&v.to_string());
            }
        }
        Expr::Var(v) => out.push_str(&p.vars[*v].name),
        Expr::Array(a, idx) => {
            out.push_str(&p.arrays[*a].name);
            for i in idx {
                out.push('[');
                write_expr(p, i, 0, out);
                out.push(']');
            }
        }
        Expr::Neg(a) => {
            // Unary minus binds tighter than any binary operator.
            let wrap = min_prec >= NEG_PRECEDENCE;
            if wrap {
                out.push('(');
            }
            out.push('-');
            write_expr(p, a, NEG_PRECEDENCE, out);
            if wrap {
                out.push(')');
            }
        }
        Expr::Bin(op, a, b) => {
            let prec = op.precedence();
            let wrap = prec < min_prec;
            if wrap {
                out.push('(');
            }
            write_expr(p, a, operand_prec(*op, ir_bin_op(a), prec), out);
            out.push(' ');
            out.push_str(op.as_str());
            out.push(' ');
            // Left-associative: the right operand needs parentheses at equal precedence.
            write_expr(p, b, operand_prec(*op, ir_bin_op(b), prec + 1), out);
            if wrap {
                out.push(')');
            }
        }
        Expr::CeilDiv(a, b) => {
            out.push_str("ceil(");
            let div = BinOp::Div.precedence();
            write_expr(p, a, div, out);
            out.push_str(" / ");
            write_expr(p, b, div + 1, out);
            out.push(')');
        }
        Expr::Min(a, b) | Expr::Max(a, b) => {
            out.push_str(if matches!(e, Expr::Min(..)) {
                "min("
            } else {
                "max("
            });
            write_expr(p, a, 0, out);
            out.push_str(", ");
            write_expr(p, b, 0, out);
            out.push(')');
        }
        Expr::Log2(a) | Expr::Pow2(a) => {
            out.push_str(if matches!(e, Expr::Log2(_)) {
                "log2("
            } else {
                "pow2("
            });
            write_expr(p, a, 0, out);
            out.push(')');
        }
        Expr::Rank(a) => {
            out.push_str("rank(");
            write_expr(p, a, 0, out);
            out.push(')');
        }
    }
}

/// The precedence an operand of `op` must reach to print without parentheses.
/// An operand that mixes bit operations with arithmetic (`P & (P - 1)`,
/// `(a + b) << 2`) is always parenthesised, as clippy's `precedence` lint asks
/// of Rust: the author's parentheses survive formatting, and text without them
/// gains them.
fn operand_prec(op: BinOp, operand: Option<BinOp>, prec: u8) -> u8 {
    match operand {
        Some(inner) if inner.is_bitwise() != op.is_bitwise() => u8::MAX,
        _ => prec,
    }
}

/// The operator of an IR expression that is a binary operation.
fn ir_bin_op(e: &Expr) -> Option<BinOp> {
    match e {
        Expr::Bin(op, ..) => Some(*op),
        _ => None,
    }
}

/// The operator of an AST expression that is a binary operation, looking
/// through parentheses.
fn ast_bin_op(e: &ast::Expr) -> Option<BinOp> {
    match &e.kind {
        ast::ExprKind::Bin(op, ..) => Some(*op),
        ast::ExprKind::Paren(a) => ast_bin_op(a),
        _ => None,
    }
}

/// Condition precedence: 0 = or, 1 = and, 2 = atom.
fn write_cond(p: &Protocol, c: &Cond, min_prec: u8, out: &mut String) {
    match c {
        Cond::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Cond::Cmp(op, a, b) => {
            write_expr(p, a, 0, out);
            out.push(' ');
            out.push_str(op.as_str());
            out.push(' ');
            write_expr(p, b, 0, out);
        }
        Cond::Not(inner) => {
            out.push('!');
            match **inner {
                Cond::Bool(_) | Cond::Not(_) => write_cond(p, inner, 2, out),
                _ => {
                    out.push('(');
                    write_cond(p, inner, 0, out);
                    out.push(')');
                }
            }
        }
        Cond::And(cs) | Cond::Or(cs) => {
            let (prec, sep) = if matches!(c, Cond::And(_)) {
                (1, " && ")
            } else {
                (0, " || ")
            };
            // A nested connective of the same kind must keep its parentheses to print back the same tree.
            let wrap = prec < min_prec || cs.len() < 2;
            if wrap {
                out.push('(');
            }
            for (i, x) in cs.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                write_cond(p, x, prec + 1, out);
            }
            if wrap {
                out.push(')');
            }
        }
    }
}

/// Prints a loop range: `peers`, `ranks`, `lo..hi`, `lo..hi step s`,
/// `lo..hi step *s`, or one of the last three as `(...).rev()`.
pub fn range_to_string(p: &Protocol, range: &Range) -> String {
    let e = |x: &Expr| expr_to_string(p, x);
    match range {
        Range::Peers => "peers".to_string(),
        Range::Ranks => "ranks".to_string(),
        Range::Span { lo, hi, step } => {
            let step = (*step != Expr::Int(1)).then(|| e(step));
            span_text(&e(lo), &e(hi), step.as_deref(), false, false)
        }
        Range::Seq(q) => {
            let step = (q.geometric || q.step != Expr::Int(1)).then(|| e(&q.step));
            span_text(&e(&q.lo), &e(&q.hi), step.as_deref(), q.geometric, q.rev)
        }
    }
}

/// A counted loop's range from its printed bounds: `lo..hi`, `lo..hi step s` (`step`
/// given), `lo..hi step *s` (`geometric`), or one of them as `(...).rev()` (`rev`). The
/// IR's ranges ([`range_to_string`]) and the lifter's recovered loops print with it.
pub fn span_text(lo: &str, hi: &str, step: Option<&str>, geometric: bool, rev: bool) -> String {
    let base = match step {
        Some(s) if geometric => format!("{lo}..{hi} step *{s}"),
        Some(s) => format!("{lo}..{hi} step {s}"),
        None => format!("{lo}..{hi}"),
    };
    if rev {
        format!("({base}).rev()")
    } else {
        base
    }
}

/// Prints an AST expression canonically: spacing and parentheses as
/// [`write_expr`] would print its lowered form, names and literals as written.
fn write_ast_expr(e: &ast::Expr, min_prec: u8, out: &mut String) {
    use ast::ExprKind as K;
    match &e.kind {
        K::Int(v) => out.push_str(&v.to_string()),
        K::Name(id) => out.push_str(&id.name),
        K::Indexed(id, idx) => {
            out.push_str(&id.name);
            for i in idx {
                out.push('[');
                write_ast_expr(i, 0, out);
                out.push(']');
            }
        }
        K::Paren(a) => write_ast_expr(a, min_prec, out),
        K::Neg(a) => {
            let wrap = min_prec >= NEG_PRECEDENCE;
            if wrap {
                out.push('(');
            }
            out.push('-');
            write_ast_expr(a, NEG_PRECEDENCE, out);
            if wrap {
                out.push(')');
            }
        }
        K::Bin(op, a, b) => {
            let prec = op.precedence();
            let wrap = prec < min_prec;
            if wrap {
                out.push('(');
            }
            write_ast_expr(a, operand_prec(*op, ast_bin_op(a), prec), out);
            out.push(' ');
            out.push_str(op.as_str());
            out.push(' ');
            write_ast_expr(b, operand_prec(*op, ast_bin_op(b), prec + 1), out);
            if wrap {
                out.push(')');
            }
        }
        K::Call(f, args) => {
            out.push_str(&f.name);
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_ast_expr(a, 0, out);
            }
            out.push(')');
        }
    }
}

fn ast_expr_to_string(e: &ast::Expr) -> String {
    let mut s = String::new();
    write_ast_expr(e, 0, &mut s);
    s
}

/// A region, with its slice bounds left out where the source left them out.
fn region_as_written(p: &Protocol, r: &Region, written: Option<&ast::Region>) -> String {
    let Some(w) = written else {
        return region_to_string(p, r);
    };
    let mut s = p.buffer_name(r.buffer).to_string();
    for i in &r.index {
        s.push('[');
        write_expr(p, i, 0, &mut s);
        s.push(']');
    }
    s.push('[');
    if w.lo.is_some() {
        write_expr(p, &r.lo, 0, &mut s);
        s.push(' ');
    }
    s.push_str("..");
    if w.hi.is_some() {
        s.push(' ');
        write_expr(p, &r.hi, 0, &mut s);
    }
    s.push(']');
    s
}

/// Every statement of an AST block, nested ones included, by start offset.
fn index_stmts<'a>(b: &'a ast::Block, out: &mut HashMap<usize, &'a ast::Stmt>) {
    for s in &b.stmts {
        out.insert(s.span.start, s);
        match &s.kind {
            ast::StmtKind::For { body, .. } => index_stmts(body, out),
            ast::StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                index_stmts(then_block, out);
                if let Some(e) = else_block {
                    index_stmts(e, out);
                }
            }
            _ => {}
        }
    }
}

struct Printer<'a> {
    p: &'a Protocol,
    /// The parsed source, for what the IR does not keep (see the module doc).
    items: HashMap<usize, &'a ast::Item>,
    stmts: HashMap<usize, &'a ast::Stmt>,
    source: Option<&'a str>,
    comments: Vec<(Span, String)>,
    next_comment: usize,
    out: String,
    /// End of the last thing printed (source offset), for blank-line and trailing-comment decisions.
    last_end: usize,
}

const INDENT: &str = "    ";

impl<'a> Printer<'a> {
    fn new(p: &'a Protocol, source: Option<&'a str>, file: Option<&'a ast::File>) -> Self {
        let comments = source.map(collc_grammar::comments).unwrap_or_default();
        let mut items = HashMap::new();
        let mut stmts = HashMap::new();
        for item in file.iter().flat_map(|f| &f.items) {
            items.insert(item.span.start, item);
            if let ast::ItemKind::Body(b) | ast::ItemKind::Epilogue(b) = &item.kind {
                index_stmts(b, &mut stmts);
            }
        }
        Printer {
            p,
            items,
            stmts,
            source,
            comments,
            next_comment: 0,
            out: String::new(),
            last_end: 0,
        }
    }

    fn run(mut self) -> String {
        let p = self.p;
        self.leading(p.span.start, 0);
        self.out
            .push_str(&format!("collective {}: {} {{\n", p.name, self.semantics()));
        self.last_end = p.span.start;
        for d in &p.decls {
            let (span, text) = self.decl(*d);
            self.leading(span.start, 1);
            self.line(1, &text, span);
        }
        self.section("body", &p.body);
        if !p.epilogue.stmts.is_empty() || p.epilogue.span != Span::default() {
            self.section("epilogue", &p.epilogue);
        }
        self.leading(p.span.end.saturating_sub(1), 1);
        self.out.push('}');
        self.last_end = p.span.end;
        self.trailing(p.span.end);
        self.out.push('\n');
        self.leading(usize::MAX, 0);
        self.out
    }

    fn section(&mut self, name: &str, b: &Block) {
        if self.source.is_none() {
            self.out.push('\n');
        }
        self.leading(b.span.start, 1);
        self.out.push_str(&format!("{INDENT}{name}"));
        self.braced(b, 1);
        self.trailing(b.span.end);
        self.out.push('\n');
    }

    /// Prints ` { ... }` after a head already printed at `indent`: `{}` for a
    /// block without statements or comments.
    fn braced(&mut self, b: &Block, indent: usize) {
        // Comments are sorted: look at the first pending one after the `{`.
        let pending = &self.comments[self.next_comment..];
        let after_open = pending.partition_point(|(c, _)| c.start <= b.span.start);
        let comment_inside = pending
            .get(after_open)
            .is_some_and(|(c, _)| c.start < b.span.end);
        if b.stmts.is_empty() && !comment_inside {
            self.out.push_str(" {}");
            self.last_end = b.span.end;
            return;
        }
        self.out.push_str(" {");
        self.last_end = b.span.start + 1;
        self.trailing(b.span.start + 1);
        self.out.push('\n');
        self.block_body(b, indent + 1);
        self.leading(b.span.end.saturating_sub(1), indent + 1);
        self.out.push_str(&INDENT.repeat(indent));
        self.out.push('}');
        self.last_end = b.span.end;
    }

    fn semantics(&self) -> String {
        let p = self.p;
        let w = |id: WindowId| {
            p.windows
                .get(id.index())
                .map_or("?", |b| b.name.as_str())
                .to_string()
        };
        match &p.semantics {
            Semantics::Allreduce { op, data } => {
                format!("allreduce({}, {})", op_text(p, *op), w(*data))
            }
            Semantics::ReduceScatter { op, data } => {
                format!("reduce_scatter({}, {})", op_text(p, *op), w(*data))
            }
            Semantics::Broadcast { root, data } => {
                format!("broadcast({}, {})", p.vars[*root].name, w(*data))
            }
            Semantics::Allgather { input, target } => {
                format!("allgather({}, {})", w(*input), w(*target))
            }
            Semantics::AllToAll { input, target } => {
                format!("all_to_all({}, {})", w(*input), w(*target))
            }
            Semantics::AllToAllV {
                input,
                target,
                send_counts,
                recv_counts,
                row,
            } => format!(
                "all_to_all_v({}, {}, {}, {}{})",
                w(*input),
                w(*target),
                p.arrays[*send_counts].name,
                p.signals[*recv_counts].name,
                row.map_or(String::new(), |r| format!(", {}", p.vars[r].name))
            ),
            Semantics::Barrier { lane } => {
                format!("barrier({})", lane.map_or("", |b| p.vars[b].name.as_str()))
            }
            Semantics::Reduce { op, root, data } => {
                let root = &p.vars[*root].name;
                format!("reduce({}, {root}, {})", op_text(p, *op), w(*data))
            }
            Semantics::Gather {
                root,
                input,
                target,
            } => format!(
                "gather({}, {}, {})",
                p.vars[*root].name,
                w(*input),
                w(*target)
            ),
            Semantics::Scatter {
                root,
                input,
                target,
            } => format!(
                "scatter({}, {}, {})",
                p.vars[*root].name,
                w(*input),
                w(*target)
            ),
        }
    }

    fn dims(&self, dims: &[Expr]) -> String {
        dims.iter()
            .map(|d| format!("[{}]", expr_to_string(self.p, d)))
            .collect()
    }

    fn decl(&self, d: Decl) -> (Span, String) {
        let p = self.p;
        match d {
            Decl::Var(v) => self.var_decl(v),
            Decl::Blocks => {
                let b = p.blocks.as_ref().expect("Decl::Blocks implies blocks");
                let var = &p.vars[b.var];
                (
                    var.span,
                    format!("blocks {} in 0..{};", var.name, expr_to_string(p, &b.count)),
                )
            }
            Decl::Require(i) => {
                let r = &p.requires[i];
                (r.span, format!("require {};", cond_to_string(p, &r.cond)))
            }
            Decl::Type => {
                let t = p
                    .elem_param
                    .as_ref()
                    .expect("Decl::Type implies elem_param");
                let list: Vec<&str> = t.types.iter().map(|e| e.as_str()).collect();
                (t.span, format!("type {} in {};", t.name, list.join(" | ")))
            }
            Decl::Op => {
                let o = p.op_param.as_ref().expect("Decl::Op implies op_param");
                let list: Vec<&str> = o.ops.iter().map(|e| e.as_str()).collect();
                (o.span, format!("op {} in {};", o.name, list.join(" | ")))
            }
            Decl::Calls => {
                let c = p.calls.expect("Decl::Calls implies calls");
                let bound = match self.items.get(&c.span.start).map(|i| &i.kind) {
                    Some(ast::ItemKind::Calls(e)) => ast_expr_to_string(e),
                    _ => c.max.to_string(),
                };
                (c.span, format!("calls <= {bound};"))
            }
            Decl::Signal(s) => {
                let sg = &p.signals[s];
                let value = if sg.kind == SignalKind::Value {
                    " as value"
                } else if sg.monotonic {
                    " monotonic"
                } else {
                    ""
                };
                (
                    sg.span,
                    format!(
                        "signal {}{}{value}{};",
                        sg.name,
                        self.dims(&sg.dims),
                        lifetime_text(sg.lifetime)
                    ),
                )
            }
            Decl::Window(w) => {
                let b = &p.windows[w];
                (
                    b.span,
                    format!(
                        "window {}: {}{}{};",
                        b.name,
                        elem_text(p, b),
                        self.dims(&b.dims),
                        lifetime_text(b.lifetime)
                    ),
                )
            }
            Decl::Tile(t) => {
                let b = &p.tiles[t];
                (
                    b.span,
                    format!(
                        "tile {}: {}{};",
                        b.name,
                        elem_text(p, b),
                        self.dims(&b.dims)
                    ),
                )
            }
            Decl::Array(a) => self.array_decl(a),
        }
    }

    /// A variable's declaration, its domain and value as written where the item says.
    fn var_decl(&self, v: VarId) -> (Span, String) {
        let p = self.p;
        let var = &p.vars[v];
        let written = self.items.get(&var.span.start).map(|i| &i.kind);
        let domain = |lo: &i64, hi: &i64| match written {
            Some(ast::ItemKind::Param {
                name,
                ty: ast::ParamType::Int(domain),
            }) if name.name == var.name => format!(
                "{}..={}",
                ast_expr_to_string(&domain.lo),
                ast_expr_to_string(&domain.hi)
            ),
            _ => format!("{lo}..={hi}"),
        };
        let text = match &var.kind {
            VarKind::World { lo, hi } => match written {
                Some(ast::ItemKind::Ranks {
                    name,
                    domain: ast::RankDomain::Range(d),
                }) if name.name == var.name && *hi < MAX_WORLD => format!(
                    "ranks {} in {}..={};",
                    var.name,
                    ast_expr_to_string(&d.lo),
                    ast_expr_to_string(&d.hi)
                ),
                Some(ast::ItemKind::Ranks {
                    name,
                    domain: ast::RankDomain::AtLeast { lo: e, .. },
                }) if name.name == var.name => {
                    format!("ranks {} >= {};", var.name, ast_expr_to_string(e))
                }
                _ if *hi >= MAX_WORLD => format!("ranks {} >= {lo};", var.name),
                _ => format!("ranks {} in {lo}..={hi};", var.name),
            },
            VarKind::Param { domain: None } => format!("param {}: rank;", var.name),
            VarKind::Param {
                domain: Some((lo, hi)),
            } => format!("param {}: int in {};", var.name, domain(lo, hi)),
            VarKind::Const(c) => match written {
                Some(ast::ItemKind::Const { name, value }) if name.name == var.name => {
                    format!("const {} = {};", var.name, ast_expr_to_string(value))
                }
                _ => format!("const {} = {c};", var.name),
            },
            VarKind::Derived(e) => format!("let {} = {};", var.name, expr_to_string(p, e)),
            _ => String::new(),
        };
        (var.span, text)
    }

    fn array_decl(&self, a: ArrayId) -> (Span, String) {
        let p = self.p;
        let ar = &p.arrays[a];
        let domain = match self.items.get(&ar.span.start).map(|i| &i.kind) {
            Some(ast::ItemKind::Array { name, domain, .. }) if name.name == ar.name => {
                format!(
                    "{}..={}",
                    ast_expr_to_string(&domain.lo),
                    ast_expr_to_string(&domain.hi)
                )
            }
            _ => format!("{}..={}", ar.domain.0, ar.domain.1),
        };
        (
            ar.span,
            format!("array {}: int{} in {domain};", ar.name, self.dims(&ar.dims)),
        )
    }

    /// Emits the comments that start before `pos`, each on its own line, and
    /// a blank line where the source had one.
    fn leading(&mut self, pos: usize, indent: usize) {
        let Some(src) = self.source else { return };
        loop {
            let next = self
                .comments
                .get(self.next_comment)
                .filter(|(s, _)| s.start < pos)
                .cloned();
            let upto = next.as_ref().map_or(pos.min(src.len()), |(s, _)| s.start);
            if upto > self.last_end
                && upto <= src.len()
                && blank_line_between(&src[self.last_end..upto])
                && !self.out.ends_with("{\n")
                && !self.out.is_empty()
            {
                self.out.push('\n');
            }
            let Some((span, text)) = next else { break };
            self.out.push_str(&INDENT.repeat(indent));
            self.out.push_str(&text);
            self.out.push('\n');
            // A comment from inside the previous item is emitted late; the
            // position never moves back.
            self.last_end = self.last_end.max(span.end);
            self.next_comment += 1;
        }
    }

    /// Appends a comment that sits on the same source line right after `end`.
    fn trailing(&mut self, end: usize) {
        let Some(src) = self.source else { return };
        if let Some((span, text)) = self.comments.get(self.next_comment).cloned() {
            if span.start >= end && !src[end.min(src.len())..span.start].contains('\n') {
                self.out.push_str("  ");
                self.out.push_str(&text);
                self.next_comment += 1;
                self.last_end = span.end;
            }
        }
    }

    fn line(&mut self, indent: usize, text: &str, span: Span) {
        self.out.push_str(&INDENT.repeat(indent));
        self.out.push_str(text);
        self.last_end = span.end;
        self.trailing(span.end);
        self.out.push('\n');
    }

    fn block_body(&mut self, b: &Block, indent: usize) {
        for s in &b.stmts {
            self.stmt(s, indent);
        }
    }

    fn open(&mut self, indent: usize, head: &str, span_start: usize, body: &Block) {
        self.leading(span_start, indent);
        self.out.push_str(&INDENT.repeat(indent));
        self.out.push_str(head);
        self.braced(body, indent);
    }

    /// The text of a statement that is one line (`None`: a `for` or an `if`), its
    /// regions as written.
    fn simple(&self, s: &Stmt) -> Option<String> {
        if matches!(s.kind, StmtKind::For { .. } | StmtKind::If { .. }) {
            return None;
        }
        Some(self.head(s))
    }

    /// The head of a statement ([`stmt_head`]), its regions as written: the regions of
    /// the statement the source has at its offset, when the source is known.
    fn head(&self, s: &Stmt) -> String {
        let written = match self.stmts.get(&s.span.start).map(|w| &w.kind) {
            Some(
                ast::StmtKind::Copy { dst, src }
                | ast::StmtKind::Get { dst, src, .. }
                | ast::StmtKind::Put { dst, src, .. }
                | ast::StmtKind::Reduce { dst, src, .. },
            ) => Some((dst, src)),
            _ => None,
        };
        head::head(self.p, &s.kind, Style::Source, &|r, side| {
            let w = written.map(|(d, s)| if side == head::Side::Dst { d } else { s });
            region_as_written(self.p, r, w)
        })
    }

    fn stmt(&mut self, s: &Stmt, indent: usize) {
        if let Some(t) = self.simple(s) {
            self.leading(s.span.start, indent);
            self.line(indent, &t, s.span);
            return;
        }
        match &s.kind {
            StmtKind::For { body, .. } => {
                let head = self.head(s);
                self.open(indent, &head, s.span.start, body);
                self.trailing(s.span.end);
                self.out.push('\n');
            }
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                let head = self.head(s);
                self.open(indent, &head, s.span.start, then_block);
                let mut els = else_block.as_ref();
                while let Some(e) = els {
                    if let [inner @ Stmt {
                        kind:
                            StmtKind::If {
                                then_block,
                                else_block,
                                ..
                            },
                        ..
                    }] = e.stmts.as_slice()
                    {
                        let head = self.head(inner);
                        self.out.push_str(&format!(" else {head}"));
                        self.braced(then_block, indent);
                        els = else_block.as_ref();
                    } else {
                        self.out.push_str(" else");
                        self.braced(e, indent);
                        els = None;
                    }
                }
                self.trailing(s.span.end);
                self.out.push('\n');
            }
            _ => {}
        }
    }
}

/// True when the text between two items contains an empty line (ignoring comments).
fn blank_line_between(text: &str) -> bool {
    // The first segment ends the previous item's line and the last one is the
    // indentation of the next item: only whole lines in between count.
    let lines: Vec<&str> = text.split('\n').collect();
    lines.len() >= 3
        && lines[1..lines.len() - 1]
            .iter()
            .any(|l| l.trim().is_empty())
}

/// ` per call`, ` reused` or nothing, as declared.
fn lifetime_text(l: Option<Lifetime>) -> &'static str {
    match l {
        None => "",
        Some(Lifetime::Reused) => " reused",
        Some(Lifetime::PerCall) => " per call",
    }
}

/// A buffer's element type as written: the type parameter's name or the scalar type.
fn elem_text(p: &Protocol, b: &Buffer) -> String {
    match (&p.elem_param, b.generic) {
        (Some(t), true) => t.name.clone(),
        _ => b.elem.as_str().to_string(),
    }
}

/// A reduction's operator as written: the `op` parameter's name (every reduction names it
/// when it is declared) or the operator.
fn op_text(p: &Protocol, op: ReduceOp) -> String {
    match &p.op_param {
        Some(o) => o.name.clone(),
        None => op.as_str().to_string(),
    }
}
