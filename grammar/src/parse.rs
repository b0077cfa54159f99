//! From source text to [`ast::File`]: input limits, the pest parse, syntax
//! diagnostics, and the tree walk that builds the AST.

use crate::ast::*;
use crate::diag::{floor_char_boundary, Diagnostic, Span};
use pest::iterators::Pair;
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "coll.pest"]
struct CollParser;

/// Largest accepted source file (bytes).
pub const MAX_SOURCE_BYTES: usize = 1 << 20;
/// Deepest accepted nesting of brackets, braces and parentheses.
pub const MAX_NESTING: usize = 64;
/// Deepest accepted expression tree or `else if` chain.
pub const MAX_TREE_DEPTH: usize = 200;

/// Decodes raw file bytes, reporting non-UTF-8 input as a diagnostic.
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
        .with_help(".coll files must be UTF-8 text")
    })
}

/// Parses a whole file. Returns the AST, or every syntax diagnostic found
/// (pest stops at the first syntax error; the builder reports all its own).
pub fn parse(text: &str) -> Result<File, Vec<Diagnostic>> {
    if let Some(d) = check_limits(text) {
        return Err(vec![d]);
    }
    let mut pairs = match CollParser::parse(Rule::file, text) {
        Ok(p) => p,
        Err(e) => return Err(vec![syntax_error(text, e)]),
    };
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
                    "file is {} bytes; the limit is {} bytes",
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

fn rule_name(r: &Rule) -> Option<&'static str> {
    Some(match r {
        Rule::ident => "identifier",
        Rule::int_lit => "integer",
        Rule::expr | Rule::slice_lo | Rule::slice_hi => "expression",
        Rule::cond | Rule::compare => "condition",
        Rule::cmp_op => "comparison (`>=`, `==`, ...)",
        Rule::notify_op => "`+=`, `-=` or `=`",
        Rule::semantics => "collective kind",
        Rule::param_type => "`rank` or `int in LO..=HI`",
        Rule::elem_type => "`f32`",
        Rule::block => "`{`",
        Rule::at => "`@ rank`",
        Rule::cell => "signal cell",
        Rule::region => "data region `buf[..]`",
        Rule::domain => "domain `LO..=HI`",
        Rule::loop_range => "`peers`, `ranks` or `LO..HI`",
        Rule::EOI => "end of file",
        Rule::keyword | Rule::WHITESPACE | Rule::COMMENT => return None,
        _ => return None,
    })
}

/// Turns a pest error into a diagnostic with a clamped span and the expected tokens.
fn syntax_error(text: &str, e: pest::error::Error<Rule>) -> Diagnostic {
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<String> = Vec::new();
    if let pest::error::ErrorVariant::ParsingError { positives, .. } = &e.variant {
        for r in positives {
            if let Some(n) = rule_name(r) {
                expected.push(n.to_string());
            }
        }
    }
    // Re-parse with error detail to learn the literal tokens pest tried there.
    pest::set_error_detail(true);
    if let Err(e2) = CollParser::parse(Rule::file, text) {
        if let Some(attempts) = e2.parse_attempts() {
            for t in attempts.expected_tokens() {
                let s = t.to_string();
                let s = s.trim();
                if s.is_empty() || s == "//" || s.len() > 12 {
                    continue;
                }
                expected.push(format!("`{s}`"));
            }
        }
    }
    pest::set_error_detail(false);
    expected.sort();
    expected.dedup();
    let at_eof = text[pos.min(text.len())..].trim().is_empty();
    let span = label_span(text, pos);
    let found = if at_eof {
        "end of file".to_string()
    } else {
        let rest = &text[pos..];
        let tok: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace())
            .take(16)
            .collect();
        format!("`{tok}`")
    };
    let message = if expected.is_empty() {
        format!("syntax error: unexpected {found}")
    } else {
        format!(
            "syntax error: expected {}, found {found}",
            join_or(&expected)
        )
    };
    Diagnostic::error("parse::syntax", message)
        .with_primary(
            span,
            if at_eof {
                "file ends here"
            } else {
                "unexpected here"
            },
        )
        .with_help("see spec/LANGUAGE.md for the grammar")
}

fn join_or(items: &[String]) -> String {
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        _ => format!(
            "{} or {}",
            items[..items.len() - 1].join(", "),
            items[items.len() - 1]
        ),
    }
}

/// A one-character span at `pos`, moved back onto the last visible character when
/// `pos` is at end of file (a label at the very end would not be shown).
fn label_span(text: &str, pos: usize) -> Span {
    let pos = floor_char_boundary(text, pos);
    let trimmed = text.trim_end().len();
    if pos >= trimmed {
        let end = trimmed;
        let last = text[..end].chars().next_back().map_or(0, char::len_utf8);
        return Span::new(end - last, end);
    }
    let len = text[pos..].chars().next().map_or(0, char::len_utf8);
    Span::new(pos, pos + len)
}

fn span(p: &Pair<Rule>) -> Span {
    let s = p.as_span();
    Span::new(s.start(), s.end())
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
        let mut it = coll.into_inner();
        let name = self.ident(it.next().expect("grammar: collective name"));
        let sem = it.next().expect("grammar: semantics");
        let sem_span = span(&sem);
        let mut sem_it = sem.into_inner();
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
        let mut it = p.into_inner();
        let kind = match rule {
            Rule::ranks_decl => {
                let name = self.ident(it.next().expect("name"));
                let domain = self.domain(it.next().expect("domain"));
                ItemKind::Ranks { name, domain }
            }
            Rule::param_decl => {
                let name = self.ident(it.next().expect("name"));
                let ty = it
                    .next()
                    .expect("type")
                    .into_inner()
                    .next()
                    .expect("type kind");
                let ty = match ty.as_rule() {
                    Rule::rank_type => ParamType::Rank(span(&ty)),
                    _ => ParamType::Int(self.domain(ty.into_inner().next().expect("domain"))),
                };
                ItemKind::Param { name, ty }
            }
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
            Rule::signal_decl => {
                let name = self.ident(it.next().expect("name"));
                let dims = self.dims(it.next().expect("dims"));
                let value = it.next().is_some();
                ItemKind::Signal { name, dims, value }
            }
            Rule::window_decl | Rule::tile_decl => {
                let name = self.ident(it.next().expect("name"));
                let _elem = it.next();
                let dims = self.dims(it.next().expect("dims"));
                if rule == Rule::window_decl {
                    ItemKind::Window { name, dims }
                } else {
                    ItemKind::Tile { name, dims }
                }
            }
            Rule::array_decl => {
                let name = self.ident(it.next().expect("name"));
                let dims = self.dims(it.next().expect("dims"));
                let domain = self.domain(it.next().expect("domain"));
                ItemKind::Array { name, dims, domain }
            }
            Rule::require_decl => ItemKind::Require(self.cond(it.next().expect("cond"))),
            Rule::body_decl => ItemKind::Body(self.block(it.next().expect("block"), 0)),
            Rule::epilogue_decl => ItemKind::Epilogue(self.block(it.next().expect("block"), 0)),
            r => unreachable!("grammar: unexpected item {r:?}"),
        };
        Item { kind, span: sp }
    }

    fn dims(&mut self, p: Pair<Rule>) -> Vec<Expr> {
        p.into_inner().map(|e| self.expr(e)).collect()
    }

    fn domain(&mut self, p: Pair<Rule>) -> Domain {
        let sp = span(&p);
        let mut it = p.into_inner();
        let lo = self.expr(it.next().expect("lo"));
        let hi = self.expr(it.next().expect("hi"));
        Domain { lo, hi, span: sp }
    }

    fn block(&mut self, p: Pair<Rule>, depth: usize) -> Block {
        let sp = span(&p);
        let stmts = p.into_inner().map(|s| self.stmt(s, depth)).collect();
        Block { stmts, span: sp }
    }

    fn stmt(&mut self, p: Pair<Rule>, depth: usize) -> Stmt {
        let sp = span(&p);
        let rule = p.as_rule();
        let mut it = p.into_inner().peekable();
        let kind = match rule {
            Rule::let_stmt => {
                let name = self.ident(it.next().expect("name"));
                StmtKind::Let {
                    name,
                    value: self.expr(it.next().expect("value")),
                }
            }
            Rule::notify_stmt | Rule::wait_stmt => {
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
                let src = self.region(it.next().expect("src"));
                let from = it.next().map(|a| self.at(a));
                StmtKind::Reduce { op, dst, src, from }
            }
            Rule::fence_stmt => StmtKind::Fence,
            Rule::for_stmt => {
                let var = self.ident(it.next().expect("var"));
                let range = it
                    .next()
                    .expect("range")
                    .into_inner()
                    .next()
                    .expect("range kind");
                let rs = span(&range);
                let range = match range.as_rule() {
                    Rule::peers_range => LoopRange::Peers(rs),
                    Rule::all_ranks_range => LoopRange::Ranks(rs),
                    _ => {
                        let mut r = range.into_inner();
                        let lo = self.expr(r.next().expect("lo"));
                        let hi = self.expr(r.next().expect("hi"));
                        let step = r.next().map(|s| self.expr(s));
                        LoopRange::Span {
                            lo,
                            hi,
                            step,
                            span: rs,
                        }
                    }
                };
                let body = self.block(it.next().expect("body"), depth);
                StmtKind::For { var, range, body }
            }
            Rule::if_stmt => {
                if depth > MAX_TREE_DEPTH {
                    self.diags.push(
                        Diagnostic::error(
                            "input::too-deep",
                            format!("`else if` chain longer than {MAX_TREE_DEPTH}"),
                        )
                        .with_primary(sp, "this `if` is too deep"),
                    );
                    return Stmt {
                        kind: StmtKind::Fence,
                        span: sp,
                    };
                }
                let cond = self.cond(it.next().expect("cond"));
                let then_block = self.block(it.next().expect("then"), depth);
                let else_block = it.next().map(|e| {
                    if e.as_rule() == Rule::if_stmt {
                        let s = self.stmt(e, depth + 1);
                        Block {
                            span: s.span,
                            stmts: vec![s],
                        }
                    } else {
                        self.block(e, depth)
                    }
                });
                StmtKind::If {
                    cond,
                    then_block,
                    else_block,
                }
            }
            Rule::return_stmt => StmtKind::Return {
                cond: self.cond(it.next().expect("cond")),
            },
            r => unreachable!("grammar: unexpected statement {r:?}"),
        };
        Stmt { kind, span: sp }
    }

    fn at(&mut self, p: Pair<Rule>) -> Expr {
        self.expr(p.into_inner().next().expect("at expr"))
    }

    fn cell(&mut self, p: Pair<Rule>) -> CellRef {
        let sp = span(&p);
        let mut it = p.into_inner();
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
        let mut it = p.into_inner();
        let name = self.ident(it.next().expect("name"));
        let mut index = Vec::new();
        let mut lo = None;
        let mut hi = None;
        for q in it {
            if q.as_rule() == Rule::slice {
                for b in q.into_inner() {
                    let r = b.as_rule();
                    let e = self.expr(b.into_inner().next().expect("bound"));
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

    fn cond(&mut self, p: Pair<Rule>) -> Cond {
        let sp = span(&p);
        match p.as_rule() {
            Rule::cond | Rule::cond_and => {
                let is_or = p.as_rule() == Rule::cond;
                let mut parts: Vec<Cond> = p.into_inner().map(|c| self.cond(c)).collect();
                if parts.len() == 1 {
                    return parts.pop().expect("one part");
                }
                Cond {
                    kind: if is_or {
                        CondKind::Or(parts)
                    } else {
                        CondKind::And(parts)
                    },
                    span: sp,
                }
            }
            Rule::cond_not => {
                let mut nots = 0;
                let mut atom = None;
                for q in p.into_inner() {
                    if q.as_rule() == Rule::not_op {
                        nots += 1;
                    } else {
                        atom = Some(self.cond(q));
                    }
                }
                let mut c = atom.expect("grammar: cond atom");
                for _ in 0..nots {
                    c = Cond {
                        kind: CondKind::Not(Box::new(c)),
                        span: sp,
                    };
                }
                c
            }
            Rule::bool_lit => Cond {
                kind: CondKind::Bool(p.as_str() == "true"),
                span: sp,
            },
            Rule::compare => {
                let mut it = p.into_inner();
                let a = self.expr(it.next().expect("lhs"));
                let op = cmp_op(it.next().expect("op").as_str());
                let b = self.expr(it.next().expect("rhs"));
                Cond {
                    kind: CondKind::Cmp(op, a, b),
                    span: sp,
                }
            }
            r => unreachable!("grammar: unexpected condition {r:?}"),
        }
    }

    /// Builds an expression by precedence climbing over the flat operand/operator list.
    fn expr(&mut self, p: Pair<Rule>) -> Expr {
        let sp = span(&p);
        // Flatten: operands with their prefix negations, and the operators between them.
        let mut operands: Vec<(Expr, usize)> = Vec::new();
        let mut ops: Vec<BinOp> = Vec::new();
        let mut negs: Vec<Span> = Vec::new();
        for q in p.into_inner() {
            match q.as_rule() {
                Rule::neg => negs.push(span(&q)),
                Rule::add | Rule::sub | Rule::mul | Rule::div | Rule::rem => {
                    ops.push(match q.as_rule() {
                        Rule::add => BinOp::Add,
                        Rule::sub => BinOp::Sub,
                        Rule::mul => BinOp::Mul,
                        Rule::div => BinOp::Div,
                        _ => BinOp::Mod,
                    })
                }
                _ => {
                    let (mut e, mut d) = self.operand(q);
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
        }
        // Shunting-yard, iterative; depth tracked to refuse degenerate trees.
        let mut out: Vec<(Expr, usize)> = Vec::new();
        let mut stack: Vec<BinOp> = Vec::new();
        let mut operands = operands.into_iter();
        let reduce = |out: &mut Vec<(Expr, usize)>, op: BinOp| {
            let (b, db) = out.pop().expect("rhs");
            let (a, da) = out.pop().expect("lhs");
            let s = a.span.join(b.span);
            out.push((
                Expr {
                    kind: ExprKind::Bin(op, Box::new(a), Box::new(b)),
                    span: s,
                },
                da.max(db) + 1,
            ));
        };
        out.push(operands.next().expect("grammar: expression has an operand"));
        for op in ops {
            while let Some(&top) = stack.last() {
                if top.precedence() >= op.precedence() {
                    stack.pop();
                    reduce(&mut out, top);
                } else {
                    break;
                }
            }
            stack.push(op);
            out.push(operands.next().expect("grammar: operand after operator"));
        }
        while let Some(top) = stack.pop() {
            reduce(&mut out, top);
        }
        let (e, depth) = out.pop().expect("result");
        if depth > MAX_TREE_DEPTH {
            self.diags.push(
                Diagnostic::error(
                    "input::too-deep",
                    format!("expression deeper than {MAX_TREE_DEPTH} operators"),
                )
                .with_primary(sp, "this expression is too deep")
                .with_help("introduce `let` bindings for parts of it"),
            );
            return Expr {
                kind: ExprKind::Int(0),
                span: sp,
            };
        }
        e
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
                            .with_primary(sp, "does not fit the 33-bit range collc accepts")
                            .with_help("literals must be at most 8589934588"),
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
                let mut it = p.into_inner();
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
