//! Recovering a credit-barrier protocol from C++ (tree-sitter with its C++ grammar).
//!
//! * [`lift`]: a hand-written (or collc-emitted) `pto::comm` host kernel in the style of
//!   pypto's host collectives → a `.coll` protocol (`collc lift FILE.cpp`).
//! * [`validate()`]: static translation validation — the protocol recovered from the source
//!   `collc emit` produced (pto::comm for Ascend and CPU threads, or MPI) must equal the IR
//!   it was emitted from, modulo the orderings the backend documents inserting
//!   (`collc emit --validate`).
//!
//! The accepted C++ is documented in `docs/lift.md`; anything else is an error naming the
//! construct and its line, never a guess.

// Every reader stops at the first construct it cannot follow and returns one diagnostic
// for it: the error is the product, produced once per file.
#![allow(clippy::result_large_err)]

mod canon;
pub mod cpp;
pub mod expr;
mod kernel;
pub mod layout;
pub mod model;
mod order;
pub mod pypto;
mod stmt;
pub mod text;
pub mod validate;

pub use validate::{validate, Validated};

use collc_grammar::Diagnostic;
use collc_spec::ir::Protocol;
use expr::{C, E};
use kernel::{comment_decls, dims_of_decl, Outline, Top};
use layout::{BufKind, Dialect};
use text::{Out, Ranks};

/// A lifted protocol.
#[derive(Debug)]
pub struct Lifted {
    /// The canonical `.coll` text (collc's printer).
    pub coll: String,
    /// The protocol, lowered from `coll` (`collc_spec::lowered`: not validated; the front
    /// end, `collc_spec::front`, validates `coll` like any text).
    pub protocol: Protocol,
    /// For pypto's kernels, whose protocol is printed as recovered (`coll` is that text): the
    /// C++ line of each line of `coll` (0: none), for a source map.
    pub lines: Option<Vec<usize>>,
}

/// Reads the kernel's outline and takes the dialect's orderings out of its body and epilogue.
fn read(
    cpp: &cpp::Cpp,
    dims: &layout::DimsOf,
    given: &pypto::Given,
) -> Result<(Outline, Dialect), Diagnostic> {
    let (mut o, _layout, dialect) = kernel::outline(cpp, dims, given)?;
    // pypto's kernels order with `pipe_barrier` (a fence) where they see fit; collc's
    // publish/acquire discipline is collc's own.
    if dialect == Dialect::Pto && !o.pypto {
        let (body, dirty) = order::normalize(std::mem::take(&mut o.body), true)?;
        let (epi, _) = order::normalize(std::mem::take(&mut o.epilogue), dirty)?;
        o.body = body;
        o.epilogue = epi;
    }
    Ok((o, dialect))
}

/// The body and epilogue as `.coll`, appended to `out` at depth 1.
fn print_blocks(out: &mut Out, o: &Outline, mut ranks: Ranks) {
    ranks.collect(&o.body);
    ranks.collect(&o.epilogue);
    out.line(1, "body {", 0);
    text::block(out, &o.body, 2, &mut ranks);
    out.line(1, "}", 0);
    out.line(0, "", 0);
    out.line(1, "epilogue {", 0);
    text::block(out, &o.epilogue, 2, &mut ranks);
    out.line(1, "}", 0);
    out.line(0, "}", 0);
}

/// Lifts a `pto::comm` kernel (`kernel_entry(int64_t* args)`) to a `.coll` protocol.
pub fn lift(source: &str) -> Result<Lifted, Vec<Diagnostic>> {
    lift_with(source, "")
}

/// Declarations given outside the C++: the lines of `decls` and the file's `// collc: DECL`
/// comment lines, each a `.coll` declaration (`collective NAME: KIND(ARGS)`, `signal ...;`,
/// `window ...;`, `param NAME: ...;`, `calls <= N;`). Returns (the collective line, the
/// declarations by the name they declare, the other lines in order).
fn given_decls(source: &str, decls: &str) -> (Option<String>, Vec<(String, String)>) {
    let mut header = None;
    let mut out = Vec::new();
    let from_src = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("// collc:"));
    let from_file = decls.lines().filter(|l| !l.trim_start().starts_with("//"));
    for l in from_src.chain(from_file) {
        let l = l.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(h) = l.strip_prefix("collective ") {
            header = Some(h.trim().trim_end_matches("{").trim().to_string());
            continue;
        }
        let mut words = l.split(|c: char| !(c.is_alphanumeric() || c == '_'));
        let kw = words.next().unwrap_or("");
        let name = words.find(|w| !w.is_empty()).unwrap_or("").to_string();
        let key = match kw {
            "calls" => "calls".to_string(),
            "require" => format!("require {}", out.len()),
            _ => name,
        };
        out.push((key, l.to_string()));
    }
    (header, out)
}

/// Lifts a kernel with declarations given outside it (`collc lift --decls FILE`; see
/// [`given_decls`]): pypto's kernels read their buffers' shapes at run time, so their
/// declarations cannot come from the code.
pub fn lift_with(source: &str, extra: &str) -> Result<Lifted, Vec<Diagnostic>> {
    let cpp = cpp::parse(source).map_err(|d| vec![d])?;
    let mut decls = comment_decls(source);
    let (given_header, given) = given_decls(source, extra);
    let mut host = pypto::Given::default();
    let mut calls = None;
    for (k, d) in &given {
        if d.starts_with("param ") || d.starts_with("let ") {
            host.host.insert(k.clone());
        }
        if d.starts_with("array ") {
            host.arrays.insert(k.clone());
        }
        if k == "calls" {
            calls = Some(d.clone());
        }
        decls.insert(k.clone(), d.clone());
    }
    let header = given_header.or_else(|| source
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("// collective ").map(str::trim).map(str::to_string)))
        .ok_or_else(|| {
            vec![Diagnostic::error(
                "lift::no-collective",
                "the file does not say which collective it implements: add a comment line `// collective NAME: KIND(ARGS)` (e.g. `// collective barrier: barrier()`)",
            )
            .with_help("docs/lift.md, \"Declarations\"")]
        })?;
    let dims = |name: &str, _k: BufKind| -> Result<(String, Vec<String>), Diagnostic> {
        let d = decls.get(name).ok_or_else(|| {
            Diagnostic::error(
                "lift::no-layout",
                format!("buffer `{name}` has no layout line in the args comment (e.g. `//   args[0]  credit signal {name}[P] (int32 cells)`)"),
            )
            .with_help("docs/lift.md, \"Declarations\"")
        })?;
        Ok((name.to_string(), dims_of_decl(d)))
    };
    let (o, dialect) = read(&cpp, &dims, &host).map_err(|d| vec![d])?;
    if dialect != Dialect::Pto {
        return Err(vec![Diagnostic::error(
            "lift::dialect",
            "collc lift reads pto::comm kernels (`kernel_entry`); MPI programs are only validated (`collc emit --target mpi --validate`)",
        )]);
    }
    let mut out = Out::default();
    let mut ranks = Ranks::default();
    ranks.known.insert("me".into());
    out.line(0, &format!("collective {header} {{"), 0);
    match (calls, o.calls) {
        (Some(c), _) => out.line(1, &c, 0),
        (None, Some(n)) => out.line(1, &format!("calls <= {n};"), 0),
        (None, None) => {}
    }
    declarations(&mut out, &o, &decls, &given, &mut ranks).map_err(|d| vec![d])?;
    out.line(0, "", 0);
    print_blocks(&mut out, &o, ranks);
    let checked = collc_spec::lowered(&out.text);
    match checked.protocol {
        Some(p) if !checked.diagnostics.iter().any(|d| d.is_error()) && o.pypto => Ok(Lifted {
            lines: Some(out.lines.clone()),
            coll: out.text,
            protocol: p,
        }),
        Some(p) if !checked.diagnostics.iter().any(|d| d.is_error()) => Ok(Lifted {
            coll: collc_spec::print::print(&p),
            protocol: p,
            lines: None,
        }),
        _ => Err(recovered_errors(checked.diagnostics, &out, "lift::invalid")),
    }
}

/// The front end's errors on a recovered protocol, re-pointed at the C++: the message names
/// the C++ line the offending `.coll` line came from (the spans were into the recovered
/// text, so they are dropped), and a note shows the recovered text.
fn recovered_errors(diags: Vec<Diagnostic>, out: &Out, code: &str) -> Vec<Diagnostic> {
    diags
        .into_iter()
        .filter(|d| d.is_error())
        .enumerate()
        .map(|(i, d)| {
            let at = d.primary_span().map_or(0, |s| {
                out.text.as_bytes()[..s.start.min(out.text.len())]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
            });
            let cpp = out.lines.get(at).copied().unwrap_or(0);
            let at = if cpp == 0 {
                "the declarations (args comment, guards)".to_string()
            } else {
                format!("line {cpp}")
            };
            let mut e = Diagnostic::error(
                code,
                format!(
                    "{at}: the protocol recovered from the C++ is not valid .coll ({}: {})",
                    d.code, d.message
                ),
            );
            if i == 0 {
                e = e.with_note(format!("recovered:\n{}", out.text));
            }
            if let Some(h) = d.help {
                e = e.with_help(h);
            }
            e
        })
        .collect()
}

/// The host values (declared `param` or `let` outside the code), in the given order, then
/// the given requirements (the callers' contract).
fn given_host(out: &mut Out, o: &Outline, given: &[(String, String)]) {
    for (k, d) in given {
        let host = d.starts_with("param ") || d.starts_with("let ");
        if host && o.host.contains(k) {
            out.line(1, d, 0);
        }
    }
    for (_, d) in given {
        if d.starts_with("require ") {
            out.line(1, d, 0);
        }
    }
}

/// The outline's guards read for the declarations: domains, rank-valued host values, and
/// which guards are the world's, the parameters' or the block count's own.
struct Guards<'a> {
    o: &'a Outline,
    decls: &'a std::collections::BTreeMap<String, String>,
}

impl Guards<'_> {
    /// A name's guarded bounds (lower, upper) and whether a guard says it is a rank
    /// (`x >= world` ends the kernel).
    fn lo_hi(&self, name: &str) -> (Option<i64>, Option<i64>, bool) {
        let o = self.o;
        let (mut lo, mut hi, mut rank) = (None, None, false);
        for (g, _) in &o.guards {
            match g {
                C::Cmp("<", E::Name(x), E::Int(v)) if x == name => lo = Some(*v),
                C::Cmp("<=", E::Name(x), E::Int(v)) if x == name => lo = Some(v + 1),
                C::Cmp(">", E::Name(x), E::Int(v)) if x == name => hi = Some(*v),
                C::Cmp(">=", E::Name(x), E::Int(v)) if x == name => hi = Some(v - 1),
                C::Cmp(">", E::Name(x), E::Name(k)) if x == name => hi = o.globals.get(k).copied(),
                C::Cmp(">=", E::Name(x), E::Name(w)) if x == name && *w == o.world => rank = true,
                _ => {}
            }
        }
        (lo, hi, rank)
    }

    /// A host value declared `param x: rank;`: its range guards are the declaration's.
    fn host_rank(&self, x: &str) -> bool {
        self.o.host.iter().any(|h| h == x)
            && self.decls.get(x).is_some_and(|d| d.contains(": rank"))
    }

    /// A guard that gives the world's or a parameter's domain (printed as the declaration).
    fn bounds_guard(&self, g: &C) -> bool {
        let o = self.o;
        match g {
            C::Cmp(op, E::Name(x), rhs) => {
                (*x == o.world || o.params.contains(x))
                    && matches!(rhs, E::Int(_))
                    && matches!(*op, "<" | "<=" | ">" | ">=")
                    || (*x == o.world && matches!(rhs, E::Name(k) if k == "kMaxSupportedRanks"))
                    || (self.host_rank(x) && matches!(rhs, E::Int(0)) && *op == "<")
                    || ((o.params.contains(x) || self.host_rank(x))
                        && *op == ">="
                        && matches!(rhs, E::Name(w) if *w == o.world))
                    || x == "collc_blocks"
            }
            _ => false,
        }
    }

    /// pypto's guard of the block index against the block count.
    fn on_block(&self, g: &C) -> bool {
        let o = self.o;
        let b = o.block.as_deref().unwrap_or("");
        match g {
            C::Cmp("<", E::Name(x), E::Int(0)) => x == b,
            C::Cmp(">=", E::Name(x), E::Name(n)) => x == b && o.block_count.as_deref() == Some(n),
            _ => false,
        }
    }

    fn need(&self, what: &str) -> Diagnostic {
        Diagnostic::error("lift::domain", format!("line {}: {what}", self.o.line))
            .with_help("the guard `if (x < lo || x > hi) { pipe_barrier(PIPE_ALL); return; }` gives a value's domain")
    }

    /// `ranks`, the host values and given requirements, then the parameters.
    fn world_and_params(
        &self,
        out: &mut Out,
        given: &[(String, String)],
        ranks: &mut Ranks,
    ) -> Result<(), Diagnostic> {
        let o = self.o;
        let (lo, hi, _) = self.lo_hi(&o.world);
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(self.need(&format!(
                "the world size `{}` has no guarded domain (`< lo` and `> kMaxSupportedRanks`)",
                o.world
            )));
        };
        out.line(1, &format!("ranks {} in {lo}..={hi};", o.world), 0);
        given_host(out, o, given);
        for p in &o.params {
            match self.lo_hi(p) {
                (_, _, true) => {
                    ranks.known.insert(p.clone());
                    out.line(1, &format!("param {p}: rank;"), 0);
                }
                (Some(lo), Some(hi), false) => {
                    out.line(1, &format!("param {p}: int in {lo}..={hi};"), 0)
                }
                _ => {
                    return Err(self.need(&format!(
                        "parameter `{p}` has no guarded domain (both a lower and an upper bound)"
                    )))
                }
            }
        }
        Ok(())
    }

    /// The guards that are not domains, as `require`s, then the `blocks` line.
    fn requires_and_blocks(&self, out: &mut Out) -> Result<(), Diagnostic> {
        let o = self.o;
        for (g, _) in &o.guards {
            if self.bounds_guard(g) || (o.block_count.is_some() && self.on_block(g)) {
                continue;
            }
            let r = match g {
                C::Not(c) => c.coll(),
                g => C::Not(Box::new(g.clone())).coll(),
            };
            out.line(1, &format!("require {r};"), 0);
        }
        if let Some(b) = &o.block {
            let n = o.guards.iter().find_map(|(g, _)| match g {
                C::Cmp("!=", E::Name(x), e) if x == "collc_blocks" => Some(e.coll()),
                _ => None,
            });
            let n = n.or_else(|| o.block_count.clone());
            let n = n.ok_or_else(|| self.need("the block index is read but no guard `get_block_num(args) != C` fixes the block count"))?;
            out.line(1, &format!("blocks {b} in 0..{n};"), 0);
        }
        Ok(())
    }
}

/// The declarations of a lifted file: world, params (domains from the guards), constants and
/// lets, requires, blocks, buffers, tiles.
fn declarations(
    out: &mut Out,
    o: &Outline,
    decls: &std::collections::BTreeMap<String, String>,
    given: &[(String, String)],
    ranks: &mut Ranks,
) -> Result<(), Diagnostic> {
    let guards = Guards { o, decls };
    guards.world_and_params(out, given, ranks)?;
    for t in &o.tops {
        match t {
            Top::Const(n, v) => out.line(1, &format!("const {n} = {v};"), 0),
            Top::Let(n, e) => out.line(1, &format!("let {n} = {};", e.coll()), 0),
        }
    }
    guards.requires_and_blocks(out)?;
    for (name, _, _) in &o.buffers {
        if let Some(d) = decls.get(name) {
            out.line(1, d, 0);
        }
    }
    for (t, cap) in &o.tiles {
        if let Some(c) = cap {
            out.line(1, &format!("tile {t}: f32[{c}];"), 0);
        }
    }
    Ok(())
}
