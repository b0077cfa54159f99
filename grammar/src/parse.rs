//! From source text to [`ast::File`]: input limits, the pest parse, syntax
//! diagnostics, and the tree walk that builds the AST.

use crate::ast::*;
use crate::diag::{Diagnostic, Span};
use pest::iterators::Pair;
use std::iter::Peekable;

#[derive(pest_derive::Parser)]
#[grammar = "coll.pest"]
pub(crate) struct CollParser;

/// Largest accepted source file (bytes).
pub const MAX_SOURCE_BYTES: usize = 1 << 20;
/// Deepest accepted nesting of brackets, braces and parentheses.
pub const MAX_NESTING: usize = 64;
/// Deepest accepted expression, condition or statement tree (`else if` arms
/// count as levels). With [`MAX_NESTING`] this bounds every recursion over the
/// AST and the IR, so no accepted input can exhaust a thread's stack, and no
/// refused one is ever built deep (its recursive drop could).
pub const MAX_TREE_DEPTH: usize = 200;

/// Decodes raw file bytes, reporting non-UTF-8 input as a diagnostic. Its
/// label's span is an offset into the *lossily* decoded text
/// (`String::from_utf8_lossy`), where the first invalid sequence is the
/// replacement character `U+FFFD`: render it against that text.
#[allow(clippy::result_large_err)] // once per file; a diagnostic is the error
pub fn decode(bytes: Vec<u8>) -> Result<String, Diagnostic> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
        Diagnostic::error(
            "input::not-utf8",
            format!(
                "file is not valid UTF-8: invalid byte 0x{:02x} at offset {at} (line {line})",
                bytes[at]
            ),
        )
        .with_primary(
            Span::new(at, at + char::REPLACEMENT_CHARACTER.len_utf8()),
            "not UTF-8",
        )
        .with_help(".coll files must be UTF-8 text")
    })
}

/// Parses a whole file. Returns the AST, or the diagnostics: input limits
/// (`input::*`), every syntax error found with statement-level recovery (at
/// most [`crate::MAX_SYNTAX_ERRORS`]), or the builder's own (`parse::int-too-large`,
/// `input::too-deep`), all of them.
pub fn parse(text: &str) -> Result<File, Vec<Diagnostic>> {
    if let Some(d) = check_limits(text) {
        return Err(vec![d]);
    }
    let mut pairs = crate::syntax::parse_file(text)?;
    let Some(file) = pairs.next() else {
        return Err(vec![Diagnostic::error("parse::syntax", "empty parse")]);
    };
    let mut b = Builder { diags: Vec::new() };
    let ast = b.file(file);
    if b.diags.is_empty() {
        Ok(ast)
    } else {
        Err(b.diags)
    }
}

/// Rejects inputs that are empty, too large or too deeply nested before pest sees them.
fn check_limits(text: &str) -> Option<Diagnostic> {
    if text.len() > MAX_SOURCE_BYTES {
        return Some(
            Diagnostic::error(
                "input::too-large",
                format!(
                    "file is {} bytes, over the limit of {} bytes",
                    text.len(),
                    MAX_SOURCE_BYTES
                ),
            )
            .with_help(
                "a .coll file describes one protocol; split generated inputs or shrink them",
            ),
        );
    }
    let mut depth = 0usize;
    let mut in_comment = false;
    let mut prev = '\0';
    let mut meaningful = false;
    for (i, c) in text.char_indices() {
        if in_comment {
            if c == '\n' {
                in_comment = false;
            }
            prev = c;
            continue;
        }
        if c == '/' && prev == '/' {
            in_comment = true;
            prev = '\0';
            continue;
        }
        if !c.is_whitespace() && c != '/' {
            meaningful = true;
        }
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(
                        Diagnostic::error(
                            "input::too-deep",
                            format!("nesting deeper than {MAX_NESTING} levels"),
                        )
                        .with_primary(Span::new(i, i + 1), "this bracket is too deep")
                        .with_help("flatten the expression or the blocks"),
                    );
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        prev = c;
    }
    if !meaningful {
        return Some(
            Diagnostic::error("parse::empty", "file contains no collective")
                .with_primary(Span::new(0, 0), "expected `collective NAME: KIND(...) { ... }`")
                .with_help("start the file with e.g. `collective barrier: barrier() { ranks P in 1..=16; body { } }`"),
        );
    }
    None
}

/// The children of a pair, without the keyword tokens (`K_*` rules).
fn inner(p: Pair<'_, Rule>) -> impl Iterator<Item = Pair<'_, Rule>> {
    p.into_inner()
        .filter(|q| keyword_text(q.as_rule()).is_none())
}

/// The text of a keyword rule, `None` for every other rule.
pub(crate) fn keyword_text(r: Rule) -> Option<&'static str> {
    Some(match r {
        Rule::K_COLLECTIVE => "collective",
        Rule::K_RANKS => "ranks",
        Rule::K_PARAM => "param",
        Rule::K_CONST => "const",
        Rule::K_LET => "let",
        Rule::K_BLOCKS => "blocks",
        Rule::K_SIGNAL => "signal",
        Rule::K_WINDOW => "window",
        Rule::K_TILE => "tile",
        Rule::K_ARRAY => "array",
        Rule::K_REQUIRE => "require",
        Rule::K_BODY => "body",
        Rule::K_EPILOGUE => "epilogue",
        Rule::K_FOR => "for",
        Rule::K_IN => "in",
        Rule::K_PEERS => "peers",
        Rule::K_IF => "if",
        Rule::K_ELSE => "else",
        Rule::K_RETURN => "return",
        Rule::K_NOTIFY => "notify",
        Rule::K_WAIT => "wait",
        Rule::K_COPY => "copy",
        Rule::K_GET => "get",
        Rule::K_PUT => "put",
        Rule::K_REDUCE => "reduce",
        Rule::K_FENCE => "fence",
        Rule::K_STEP => "step",
        Rule::K_AS => "as",
        Rule::K_VALUE => "value",
        Rule::K_PER => "per",
        Rule::K_CALL => "call",
        Rule::K_REUSED => "reused",
        Rule::K_MONOTONIC => "monotonic",
        Rule::K_CALLS => "calls",
        Rule::K_TRUE => "true",
        Rule::K_FALSE => "false",
        Rule::K_RANK => "rank",
        Rule::K_INT => "int",
        Rule::K_F32 => "f32",
        Rule::K_F64 => "f64",
        Rule::K_I32 => "i32",
        Rule::K_I64 => "i64",
        Rule::K_TYPE => "type",
        Rule::K_OP => "op",
        _ => return None,
    })
}

/// A `lifetime` pair: which one, and where.
fn lifetime(p: &Pair<Rule>) -> (Lifetime, Span) {
    let which = match p.clone().into_inner().next().map(|q| q.as_rule()) {
        Some(Rule::per_call) => Lifetime::PerCall,
        _ => Lifetime::Reused,
    };
    (which, span(p))
}

/// An operand of an expression and the depth of its tree.
type Operand = (Expr, usize);

/// The binary operator a rule is, if it is one.
fn bin_op(rule: Rule) -> Option<BinOp> {
    Some(match rule {
        Rule::add => BinOp::Add,
        Rule::sub => BinOp::Sub,
        Rule::mul => BinOp::Mul,
        Rule::div => BinOp::Div,
        Rule::rem => BinOp::Mod,
        Rule::shl => BinOp::Shl,
        Rule::shr => BinOp::Shr,
        Rule::bit_and => BinOp::And,
        Rule::bit_xor => BinOp::Xor,
        Rule::bit_or => BinOp::Or,
        _ => return None,
    })
}

/// Shunting-yard over an expression's operands and operators, iterative; depth
/// tracked to refuse degenerate trees (past [`MAX_TREE_DEPTH`] a placeholder is
/// built and `too_deep` records where).
fn climb(
    operands: Vec<Operand>,
    ops: Vec<(BinOp, Span)>,
    too_deep: &mut Option<Span>,
) -> (Expr, usize) {
    let mut out: Vec<(Expr, usize)> = Vec::new();
    let mut stack: Vec<(BinOp, Span)> = Vec::new();
    let mut operands = operands.into_iter();
    out.push(operands.next().expect("grammar: expression has an operand"));
    for op in ops {
        while let Some(&top) = stack.last() {
            if top.0.precedence() >= op.0.precedence() {
                stack.pop();
                reduce(&mut out, top, too_deep);
            } else {
                break;
            }
        }
        stack.push(op);
        out.push(operands.next().expect("grammar: operand after operator"));
    }
    while let Some(top) = stack.pop() {
        reduce(&mut out, top, too_deep);
    }
    out.pop().expect("shunting-yard: one result")
}

/// Applies operator `op` (written at `at`) to the two operands on top of `out`.
fn reduce(out: &mut Vec<(Expr, usize)>, (op, at): (BinOp, Span), too_deep: &mut Option<Span>) {
    let (b, db) = out.pop().expect("shunting-yard: an operand per operator");
    let (a, da) = out.pop().expect("shunting-yard: an operand per operator");
    let s = a.span.join(b.span);
    let depth = da.max(db) + 1;
    if depth > MAX_TREE_DEPTH {
        too_deep.get_or_insert(at);
        out.push((
            Expr {
                kind: ExprKind::Int(0),
                span: s,
            },
            1,
        ));
        return;
    }
    out.push((
        Expr {
            kind: ExprKind::Bin(op, Box::new(a), Box::new(b)),
            span: s,
        },
        depth,
    ));
}

/// The span of a pair, without the blanks and comments pest includes after a
/// trailing repetition (`sig[0] ` in `sig[0] + 1`).
fn span(p: &Pair<Rule>) -> Span {
    let s = p.as_span();
    Span::new(s.start(), code_end(s.get_input(), s.start(), s.end()))
}

/// The end of the code in `text[start..end]`: trailing whitespace and `//`
/// comments are cut off. (No string literals: every `//` starts a comment.)
fn code_end(text: &str, start: usize, mut end: usize) -> usize {
    // Fast paths (almost every pair): ends on code, or no comment inside.
    if text[start..end]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_whitespace())
    {
        return end;
    }
    if !text[start..end].contains("//") {
        return start + text[start..end].trim_end().len();
    }
    loop {
        let trimmed = start + text[start..end].trim_end().len();
        let line_start = text[..trimmed].rfind('\n').map_or(0, |i| i + 1);
        match text[line_start.max(start)..trimmed].find("//") {
            Some(i) if trimmed > start => end = line_start.max(start) + i,
            _ => return trimmed,
        }
    }
}

struct Builder {
    diags: Vec<Diagnostic>,
}

impl Builder {
    fn ident(&self, p: Pair<Rule>) -> Ident {
        Ident {
            name: p.as_str().to_string(),
            span: span(&p),
        }
    }

    fn file(&mut self, p: Pair<Rule>) -> File {
        let coll = p
            .into_inner()
            .next()
            .expect("grammar: file holds a collective");
        let sp = span(&coll);
        let mut it = inner(coll);
        let name = self.ident(it.next().expect("grammar: collective name"));
        let sem = it.next().expect("grammar: semantics");
        let sem_span = span(&sem);
        let mut sem_it = inner(sem);
        let kind = self.ident(sem_it.next().expect("grammar: semantics kind"));
        let args = sem_it.map(|a| self.ident(a)).collect();
        let semantics = Semantics {
            kind,
            args,
            span: sem_span,
        };
        let items = it.map(|i| self.item(i)).collect();
        File {
            name,
            semantics,
            items,
            span: sp,
        }
    }

    fn item(&mut self, p: Pair<Rule>) -> Item {
        let sp = span(&p);
        let rule = p.as_rule();
        let mut it = inner(p);
        let kind = match rule {
            Rule::ranks_decl => self.ranks_item(it),
            Rule::param_decl => self.param_item(it),
            Rule::const_decl | Rule::let_decl => {
                let name = self.ident(it.next().expect("name"));
                let value = self.expr(it.next().expect("value"));
                if rule == Rule::const_decl {
                    ItemKind::Const { name, value }
                } else {
                    ItemKind::Let { name, value }
                }
            }
            Rule::blocks_decl => {
                let name = self.ident(it.next().expect("name"));
                let lo = self.expr(it.next().expect("lo"));
                let hi = self.expr(it.next().expect("hi"));
                ItemKind::Blocks { name, lo, hi }
            }
            Rule::signal_decl => self.signal_item(it),
            Rule::window_decl | Rule::tile_decl => self.buffer_item(rule, it),
            Rule::type_decl => {
                let name = self.ident(it.next().expect("name"));
                let types = it
                    .map(|q| Ident {
                        name: q.as_str().trim().to_string(),
                        span: span(&q),
                    })
                    .collect();
                ItemKind::Type { name, types }
            }
            Rule::op_decl => {
                let name = self.ident(it.next().expect("name"));
                let ops = it.map(|q| self.ident(q)).collect();
                ItemKind::Op { name, ops }
            }
            Rule::array_decl => {
                let name = self.ident(it.next().expect("name"));
                let dims = self.dims(it.next().expect("dims"));
                let domain = self.domain(it.next().expect("domain"));
                ItemKind::Array { name, dims, domain }
            }
            Rule::require_decl => ItemKind::Require(self.cond(it.next().expect("cond"))),
            Rule::calls_decl => ItemKind::Calls(self.expr(it.next().expect("bound"))),
            Rule::body_decl => ItemKind::Body(self.block(it.next().expect("block"), 0)),
            Rule::epilogue_decl => ItemKind::Epilogue(self.block(it.next().expect("block"), 0)),
            r => unreachable!("grammar: unexpected item {r:?}"),
        };
        Item { kind, span: sp }
    }

    fn ranks_item<'i>(&mut self, mut it: impl Iterator<Item = Pair<'i, Rule>>) -> ItemKind {
        let name = self.ident(it.next().expect("name"));
        let d = it.next().expect("domain");
        let domain = match d.as_rule() {
            Rule::at_least => RankDomain::AtLeast {
                span: span(&d),
                lo: self.expr(inner(d).next().expect("lo")),
            },
            _ => RankDomain::Range(self.domain(d)),
        };
        ItemKind::Ranks { name, domain }
    }

    fn param_item<'i>(&mut self, mut it: impl Iterator<Item = Pair<'i, Rule>>) -> ItemKind {
        let name = self.ident(it.next().expect("name"));
        let ty = it
            .next()
            .expect("type")
            .into_inner()
            .next()
            .expect("type kind");
        let ty = match ty.as_rule() {
            Rule::rank_type => ParamType::Rank(span(&ty)),
            _ => ParamType::Int(self.domain(inner(ty).next().expect("domain"))),
        };
        ItemKind::Param { name, ty }
    }

    fn signal_item<'i>(&mut self, mut it: impl Iterator<Item = Pair<'i, Rule>>) -> ItemKind {
        let name = self.ident(it.next().expect("name"));
        let dims = self.dims(it.next().expect("dims"));
        let mut value = false;
        let mut monotonic = None;
        let mut lifetimes = Vec::new();
        for q in it {
            match q.as_rule() {
                Rule::value_marker => value = true,
                Rule::monotonic => monotonic = Some(span(&q)),
                _ => lifetimes.push(lifetime(&q)),
            }
        }
        ItemKind::Signal {
            name,
            dims,
            value,
            monotonic,
            lifetimes,
        }
    }

    /// A window or a tile (`rule` says which).
    fn buffer_item<'i>(
        &mut self,
        rule: Rule,
        mut it: impl Iterator<Item = Pair<'i, Rule>>,
    ) -> ItemKind {
        let name = self.ident(it.next().expect("name"));
        let elem = it.next().expect("element type");
        let elem = Ident {
            name: elem.as_str().trim().to_string(),
            span: span(&elem),
        };
        let dims = self.dims(it.next().expect("dims"));
        if rule == Rule::window_decl {
            let lifetimes = it.map(|q| lifetime(&q)).collect();
            ItemKind::Window {
                name,
                elem,
                dims,
                lifetimes,
            }
        } else {
            ItemKind::Tile { name, elem, dims }
        }
    }

    fn dims(&mut self, p: Pair<Rule>) -> Vec<Expr> {
        inner(p).map(|e| self.expr(e)).collect()
    }

    fn domain(&mut self, p: Pair<Rule>) -> Domain {
        let sp = span(&p);
        let mut it = inner(p);
        let lo = self.expr(it.next().expect("lo"));
        let hi = self.expr(it.next().expect("hi"));
        Domain { lo, hi, span: sp }
    }

    fn block(&mut self, p: Pair<Rule>, depth: usize) -> Block {
        let sp = span(&p);
        let stmts = inner(p).map(|s| self.stmt(s, depth)).collect();
        Block { stmts, span: sp }
    }

    fn stmt(&mut self, p: Pair<Rule>, depth: usize) -> Stmt {
        let sp = span(&p);
        let rule = p.as_rule();
        let mut it = inner(p).peekable();
        let kind = match rule {
            Rule::let_stmt => {
                let name = self.ident(it.next().expect("name"));
                StmtKind::Let {
                    name,
                    value: self.expr(it.next().expect("value")),
                }
            }
            Rule::notify_stmt | Rule::wait_stmt => self.signal_stmt(rule, &mut it),
            Rule::copy_stmt => {
                let dst = self.region(it.next().expect("dst"));
                let src = self.region(it.next().expect("src"));
                StmtKind::Copy { dst, src }
            }
            Rule::get_stmt => {
                let dst = self.region(it.next().expect("dst"));
                let src = self.region(it.next().expect("src"));
                let from = self.at(it.next().expect("at"));
                StmtKind::Get { dst, src, from }
            }
            Rule::put_stmt => {
                let dst = self.region(it.next().expect("dst"));
                let to = self.at(it.next().expect("at"));
                let src = self.region(it.next().expect("src"));
                StmtKind::Put { dst, to, src }
            }
            Rule::reduce_stmt => {
                let op = self.ident(it.next().expect("op"));
                let dst = self.region(it.next().expect("dst"));
                let mut next = it.next().expect("src");
                let mut to = None;
                if next.as_rule() == Rule::reduce_to {
                    to = Some(self.at(next));
                    next = it.next().expect("src");
                }
                let src = self.region(next);
                let from = it.next().map(|a| self.at(a));
                StmtKind::Reduce {
                    op,
                    dst,
                    src,
                    from,
                    to,
                }
            }
            Rule::fence_stmt => StmtKind::Fence,
            Rule::for_stmt => self.for_stmt(it, depth),
            Rule::if_stmt => self.if_stmt(it, sp, depth),
            Rule::return_stmt => StmtKind::Return {
                cond: self.cond(it.next().expect("cond")),
            },
            r => unreachable!("grammar: unexpected statement {r:?}"),
        };
        Stmt { kind, span: sp }
    }

    /// A notify or a wait (`rule` says which).
    fn signal_stmt<'i>(
        &mut self,
        rule: Rule,
        it: &mut Peekable<impl Iterator<Item = Pair<'i, Rule>>>,
    ) -> StmtKind {
        let cell = self.cell(it.next().expect("cell"));
        let target = if it.peek().map(|p| p.as_rule()) == Some(Rule::at) {
            Some(self.at(it.next().expect("at")))
        } else {
            None
        };
        let op = it.next().expect("op");
        let value = self.expr(it.next().expect("value"));
        if rule == Rule::notify_stmt {
            let op = match op.as_str() {
                "+=" => NotifyOpAst::Add,
                "-=" => NotifyOpAst::Sub,
                _ => NotifyOpAst::Set,
            };
            StmtKind::Notify {
                cell,
                target,
                op,
                value,
            }
        } else {
            StmtKind::Wait {
                cell,
                target,
                cmp: cmp_op(op.as_str()),
                threshold: value,
            }
        }
    }

    fn for_stmt<'i>(
        &mut self,
        mut it: impl Iterator<Item = Pair<'i, Rule>>,
        depth: usize,
    ) -> StmtKind {
        let var = self.ident(it.next().expect("var"));
        // A `loop_range` holds one kind, then `rev_suffix` for `(...).rev()`.
        let parts: Vec<Pair<Rule>> = it.next().expect("range").into_inner().collect();
        let rev = parts.iter().any(|q| q.as_rule() == Rule::rev_suffix);
        let range = parts.into_iter().next().expect("range kind");
        let rs = span(&range);
        let range = match range.as_rule() {
            Rule::peers_range => LoopRange::Peers(rs),
            Rule::all_ranks_range => LoopRange::Ranks(rs),
            _ => {
                let mut r = inner(range);
                let lo = self.expr(r.next().expect("lo"));
                let hi = self.expr(r.next().expect("hi"));
                let (step, geometric) = match r.next() {
                    Some(s) if s.as_rule() == Rule::geo_step => {
                        (Some(self.expr(inner(s).next().expect("factor"))), true)
                    }
                    Some(s) => (Some(self.expr(s)), false),
                    None => (None, false),
                };
                LoopRange::Span {
                    lo,
                    hi,
                    step,
                    geometric,
                    rev,
                    span: rs,
                }
            }
        };
        let body = self.block(it.next().expect("body"), depth + 1);
        StmtKind::For { var, range, body }
    }

    /// An `if` with its `else if` arms (nested) and its `else`; a chain nesting
    /// deeper than [`MAX_TREE_DEPTH`] is refused with `input::too-deep` (and a
    /// placeholder statement).
    fn if_stmt<'i>(
        &mut self,
        mut it: impl Iterator<Item = Pair<'i, Rule>>,
        sp: Span,
        depth: usize,
    ) -> StmtKind {
        let cond = self.cond(it.next().expect("grammar: if condition"));
        let then_block = self.block(it.next().expect("grammar: then block"), depth + 1);
        // `else if` arms and the final `else`, flat in the parse tree; the AST nests them.
        let rest: Vec<Pair<Rule>> = it.collect();
        let arms = rest.iter().filter(|q| q.as_rule() == Rule::else_if).count();
        if depth + arms > MAX_TREE_DEPTH {
            let nth = MAX_TREE_DEPTH.saturating_sub(depth);
            let at = rest
                .iter()
                .filter(|q| q.as_rule() == Rule::else_if)
                .nth(nth)
                .map_or(sp, |q| {
                    let s = span(q);
                    Span::new(s.start, s.start + "else".len())
                });
            self.diags.push(
                Diagnostic::error(
                    "input::too-deep",
                    format!(
                        "`else if` chain of {arms} arms nests deeper than {MAX_TREE_DEPTH} levels"
                    ),
                )
                .with_primary(at, "this `else if` is too deep")
                .with_help("split the chain, e.g. into separate `if` statements"),
            );
            return StmtKind::Fence;
        }
        let mut else_block: Option<Block> = None;
        for (k, q) in rest.into_iter().enumerate().rev() {
            let qs = span(&q);
            if q.as_rule() == Rule::else_block {
                let b = inner(q).next().expect("grammar: else block");
                else_block = Some(self.block(b, depth + 1));
                continue;
            }
            // `else if c { ... }`: the nested `if` statement runs from its `if`
            // to the end of the chain, as if it had been written `else { if ... }`.
            let if_start = qs.start + keyword_after_else(q.as_str());
            let end = else_block.as_ref().map_or(qs.end, |b| b.span.end);
            let mut qi = inner(q);
            let c = self.cond(qi.next().expect("grammar: else-if condition"));
            let t = self.block(qi.next().expect("grammar: else-if block"), depth + k + 2);
            let nested = Stmt {
                kind: StmtKind::If {
                    cond: c,
                    then_block: t,
                    else_block: else_block.take(),
                },
                span: Span::new(if_start, end),
            };
            else_block = Some(Block {
                span: nested.span,
                stmts: vec![nested],
            });
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        }
    }

    fn at(&mut self, p: Pair<Rule>) -> Expr {
        self.expr(inner(p).next().expect("at expr"))
    }

    fn cell(&mut self, p: Pair<Rule>) -> CellRef {
        let sp = span(&p);
        let mut it = inner(p);
        let name = self.ident(it.next().expect("name"));
        let index = it.map(|e| self.expr(e)).collect();
        CellRef {
            name,
            index,
            span: sp,
        }
    }

    fn region(&mut self, p: Pair<Rule>) -> Region {
        let sp = span(&p);
        let mut it = inner(p);
        let name = self.ident(it.next().expect("name"));
        let mut index = Vec::new();
        let mut lo = None;
        let mut hi = None;
        for q in it {
            if q.as_rule() == Rule::slice {
                for b in inner(q) {
                    let r = b.as_rule();
                    let e = self.expr(inner(b).next().expect("bound"));
                    if r == Rule::slice_lo {
                        lo = Some(e);
                    } else {
                        hi = Some(e);
                    }
                }
            } else {
                index.push(self.expr(q));
            }
        }
        Region {
            name,
            index,
            lo,
            hi,
            span: sp,
        }
    }

    /// Builds a condition, refusing (with `input::too-deep`) one that nests deeper
    /// than [`MAX_TREE_DEPTH`] through `!` and parentheses.
    fn cond(&mut self, p: Pair<Rule>) -> Cond {
        let sp = span(&p);
        let mut too_deep = None;
        let (c, depth) = self.cond_d(p, &mut too_deep);
        if depth > MAX_TREE_DEPTH {
            too_deep.get_or_insert(sp);
        }
        match too_deep {
            Some(at) => {
                self.diags.push(
                    Diagnostic::error(
                        "input::too-deep",
                        format!("condition nests deeper than {MAX_TREE_DEPTH} levels"),
                    )
                    .with_primary(at, format!("more than {MAX_TREE_DEPTH} levels deep here"))
                    .with_help("simplify the condition: `!!c` is `c`"),
                );
                Cond {
                    kind: CondKind::Bool(true),
                    span: sp,
                }
            }
            None => c,
        }
    }

    /// A condition and its depth; past the limit, records where and builds a placeholder.
    fn cond_d(&mut self, p: Pair<Rule>, too_deep: &mut Option<Span>) -> (Cond, usize) {
        let sp = span(&p);
        let placeholder = |span| {
            (
                Cond {
                    kind: CondKind::Bool(true),
                    span,
                },
                1,
            )
        };
        match p.as_rule() {
            Rule::cond | Rule::cond_and => {
                let is_or = p.as_rule() == Rule::cond;
                let mut depth = 0;
                let mut parts: Vec<Cond> = Vec::new();
                for q in inner(p) {
                    let (c, d) = self.cond_d(q, too_deep);
                    depth = depth.max(d);
                    parts.push(c);
                }
                if parts.len() == 1 {
                    return (parts.pop().expect("one part"), depth);
                }
                if depth + 1 > MAX_TREE_DEPTH {
                    too_deep.get_or_insert(sp);
                    return placeholder(sp);
                }
                (
                    Cond {
                        kind: if is_or {
                            CondKind::Or(parts)
                        } else {
                            CondKind::And(parts)
                        },
                        span: sp,
                    },
                    depth + 1,
                )
            }
            Rule::cond_not => {
                let mut nots: Vec<Span> = Vec::new();
                let mut atom = None;
                for q in inner(p) {
                    if q.as_rule() == Rule::not_op {
                        nots.push(span(&q));
                    } else {
                        atom = Some(self.cond_d(q, too_deep));
                    }
                }
                let (mut c, mut depth) = atom.expect("grammar: a condition after its `!`s");
                if !nots.is_empty() && depth + nots.len() > MAX_TREE_DEPTH {
                    let k = (nots.len() + depth)
                        .saturating_sub(MAX_TREE_DEPTH + 1)
                        .min(nots.len() - 1);
                    too_deep.get_or_insert(nots[k]);
                    return placeholder(sp);
                }
                for _ in 0..nots.len() {
                    c = Cond {
                        kind: CondKind::Not(Box::new(c)),
                        span: sp,
                    };
                    depth += 1;
                }
                (c, depth)
            }
            Rule::bool_lit => (
                Cond {
                    kind: CondKind::Bool(p.as_str() == "true"),
                    span: sp,
                },
                1,
            ),
            Rule::compare => {
                let mut it = inner(p);
                let a = self.expr(it.next().expect("grammar: comparison lhs"));
                let op = cmp_op(it.next().expect("grammar: comparison operator").as_str());
                let b = self.expr(it.next().expect("grammar: comparison rhs"));
                (
                    Cond {
                        kind: CondKind::Cmp(op, a, b),
                        span: sp,
                    },
                    1,
                )
            }
            r => unreachable!("grammar: unexpected condition {r:?}"),
        }
    }

    /// Builds an expression by precedence climbing over the flat operand/operator list.
    fn expr(&mut self, p: Pair<Rule>) -> Expr {
        let sp = span(&p);
        // Where the tree first grows deeper than MAX_TREE_DEPTH. From then on only
        // placeholders are built, so a degenerate input never becomes a deep tree
        // (whose recursive drop alone could exhaust the stack).
        let mut too_deep: Option<Span> = None;
        let (operands, ops) = self.flatten(p, &mut too_deep);
        let (e, depth) = climb(operands, ops, &mut too_deep);
        if depth > MAX_TREE_DEPTH {
            too_deep.get_or_insert(sp);
        }
        if let Some(at) = too_deep {
            self.diags.push(
                Diagnostic::error(
                    "input::too-deep",
                    format!("expression nests deeper than {MAX_TREE_DEPTH} levels"),
                )
                .with_primary(at, format!("more than {MAX_TREE_DEPTH} levels deep here"))
                .with_help("introduce `let` bindings for parts of it"),
            );
            return Expr {
                kind: ExprKind::Int(0),
                span: sp,
            };
        }
        e
    }

    /// An expression's operands, each with its prefix negations and its depth, and
    /// the operators between them.
    fn flatten(
        &mut self,
        p: Pair<Rule>,
        too_deep: &mut Option<Span>,
    ) -> (Vec<Operand>, Vec<(BinOp, Span)>) {
        let mut operands: Vec<(Expr, usize)> = Vec::new();
        let mut ops: Vec<(BinOp, Span)> = Vec::new();
        let mut negs: Vec<Span> = Vec::new();
        for q in inner(p) {
            if q.as_rule() == Rule::neg {
                negs.push(span(&q));
            } else if let Some(op) = bin_op(q.as_rule()) {
                ops.push((op, span(&q)));
            } else {
                let (mut e, mut d) = self.operand(q);
                if !negs.is_empty() && d + negs.len() > MAX_TREE_DEPTH {
                    // negs[k] is the first `-` (from the inside) that is too deep.
                    let k = (negs.len() + d)
                        .saturating_sub(MAX_TREE_DEPTH + 1)
                        .min(negs.len() - 1);
                    too_deep.get_or_insert(negs[k]);
                    negs.clear();
                    e = Expr {
                        kind: ExprKind::Int(0),
                        span: e.span,
                    };
                    d = 1;
                }
                for n in negs.drain(..).rev() {
                    let s = n.join(e.span);
                    e = Expr {
                        kind: ExprKind::Neg(Box::new(e)),
                        span: s,
                    };
                    d += 1;
                }
                operands.push((e, d));
            }
        }
        (operands, ops)
    }

    fn operand(&mut self, p: Pair<Rule>) -> (Expr, usize) {
        let sp = span(&p);
        match p.as_rule() {
            Rule::int_lit => {
                let digits: String = p.as_str().chars().filter(|c| *c != '_').collect();
                let v = match digits.parse::<i64>() {
                    Ok(v) if v <= i64::from(i32::MAX) * 4 => v,
                    _ => {
                        self.diags.push(
                            Diagnostic::error(
                                "parse::int-too-large",
                                "integer literal is too large",
                            )
                            .with_primary(sp, "larger than 8589934588")
                            .with_help(
                                "integers are at most 4 * 2147483647 = 8589934588 \
                                 (signal cells are int32)",
                            ),
                        );
                        0
                    }
                };
                (
                    Expr {
                        kind: ExprKind::Int(v),
                        span: sp,
                    },
                    1,
                )
            }
            Rule::ident => (
                Expr {
                    kind: ExprKind::Name(self.ident(p)),
                    span: sp,
                },
                1,
            ),
            Rule::indexed | Rule::call => {
                let is_call = p.as_rule() == Rule::call;
                let mut it = inner(p);
                let name = self.ident(it.next().expect("name"));
                let mut depth = 1;
                let args: Vec<Expr> = it.map(|e| self.expr(e)).collect();
                for a in &args {
                    depth = depth.max(expr_depth_hint(a) + 1);
                }
                let kind = if is_call {
                    ExprKind::Call(name, args)
                } else {
                    ExprKind::Indexed(name, args)
                };
                (Expr { kind, span: sp }, depth)
            }
            Rule::expr => {
                let inner = self.expr(p);
                let d = expr_depth_hint(&inner) + 1;
                (
                    Expr {
                        kind: ExprKind::Paren(Box::new(inner)),
                        span: sp,
                    },
                    d,
                )
            }
            r => unreachable!("grammar: unexpected operand {r:?}"),
        }
    }
}

/// Offset of the `if` in the text of an `else if` arm (after `else`, blanks and comments).
fn keyword_after_else(arm: &str) -> usize {
    let mut i = "else".len();
    let b = arm.as_bytes();
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
        } else if arm[i..].starts_with("//") {
            i += arm[i..].find('\n').map_or(arm.len() - i, |n| n + 1);
        } else {
            break;
        }
    }
    i.min(arm.len())
}

/// Depth of an already-built expression (bounded by construction).
fn expr_depth_hint(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Name(_) => 1,
        ExprKind::Neg(a) | ExprKind::Paren(a) => 1 + expr_depth_hint(a),
        ExprKind::Bin(_, a, b) => 1 + expr_depth_hint(a).max(expr_depth_hint(b)),
        ExprKind::Indexed(_, xs) | ExprKind::Call(_, xs) => {
            1 + xs.iter().map(expr_depth_hint).max().unwrap_or(0)
        }
    }
}

fn cmp_op(s: &str) -> CmpOp {
    match s {
        ">=" => CmpOp::Ge,
        "<=" => CmpOp::Le,
        "==" => CmpOp::Eq,
        "!=" => CmpOp::Ne,
        ">" => CmpOp::Gt,
        _ => CmpOp::Lt,
    }
}

/// Every `// ...` comment in the text, as (span, text without the slashes), in order.
/// The language has no string literals, so this scan is exact.
pub fn comments(text: &str) -> Vec<(Span, String)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(i) = line.find("//") {
            let body = line[i..].trim_end_matches(['\n', '\r']);
            out.push((
                Span::new(offset + i, offset + i + body.len()),
                body.to_string(),
            ));
        }
        offset += line.len();
    }
    out
}
