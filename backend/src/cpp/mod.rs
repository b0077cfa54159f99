//! C++ code generation from the protocol IR.
//!
//! * [`walk`] is the target-neutral statement walker: args decoding order, rank-uniform
//!   values, guards, loops, conditionals, lets, runtime index checks, and the ordering
//!   analysis (which notifies publish data writes, which waits release data reads). It calls
//!   a [`walk::Dialect`] for everything target-specific.
//! * [`pto`] is the `pto::comm` dialect: one kernel source that builds for Ascend (real pto
//!   headers) and for CPU threads (collc's runtime in `backend/runtime/collc/`).
//! * [`pypto`] is the same dialect with the args block of pypto's host collective builtins
//!   (`--abi pypto`), and the CPU shim that runs it under the collc launcher.
//!
//! Expressions print to C++ `int64_t` arithmetic with the semantics of
//! `collc_spec::eval`: `/` and `%` are Euclidean (`collc_div`, `collc_mod`), `ceil(a / b)`
//! rounds towards +infinity (`collc_ceil_div`), shifts take amounts in `0..=62` and `>>` is
//! arithmetic (`collc_shl`, `collc_shr`), `log2` is exact (`collc_log2`), and power-of-two
//! or reversed loops count an index over `collc_seq_len` values (`collc_seq_at`). Overflow is not checked in C++ (parameter
//! domains keep every value of the examples far below 2^63).

pub mod mutate;
pub mod pto;
pub mod pypto;
pub mod walk;

use crate::layout::Abi;
use collc_grammar::{Diagnostic, Source, Span};
use collc_spec::eval::{eval, Env};
use collc_spec::ir::*;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};

/// Which build the emitted source is for (the source is the same; the header says which
/// build the user asked for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Ascend `pto::comm` (CCE compiler, real pto headers).
    Ascend,
    /// CPU threads against collc's runtime.
    Host,
}

/// Options of [`emit`].
#[derive(Debug, Clone, Default)]
pub struct EmitOptions<'a> {
    /// The source text (for `.coll` line numbers in comments), if available.
    pub source: Option<&'a Source>,
    /// Lines to stamp into the header as a warning (e.g. why the protocol is unverified).
    pub warning: Vec<String>,
    /// The largest world size the kernel accepts (`kMaxSupportedRanks`): the verdict's
    /// (`collc_verifier::Gate::world_limit`, the largest P every obligation covers).
    /// `None`: the declared domain's upper bound. Never above the declared one.
    pub world_limit: Option<i64>,
}

pub use crate::ranks::world_limit;

/// Capacity (f32 elements) of the staging tiles used for window-to-window data movement.
pub const STAGE_ELEMS: i64 = 4096;
/// Unified Buffer bytes of an Ascend AIV core (tiles must fit).
pub const UB_BYTES: i64 = 192 * 1024;

/// Emits the `pto::comm` kernel for a protocol.
pub fn emit(
    p: &collc_spec::Validated,
    target: Target,
    opts: &EmitOptions,
) -> Result<String, Vec<Diagnostic>> {
    // A `pto::comm` context addresses at most PTO_MAX_RANKS ranks.
    let pto = crate::ranks::PTO_MAX_RANKS;
    let opts = EmitOptions {
        world_limit: Some(opts.world_limit.map_or(pto, |l| l.min(pto))),
        ..opts.clone()
    };
    let k = Kernel::new(p, &opts)?;
    let d = pto::Pto { target };
    walk::emit_kernel(&k, &d)
}

/// A tile's placement.
#[derive(Debug, Clone)]
pub struct TileInfo {
    /// C++ object name.
    pub name: String,
    /// Capacity in elements (compile-time constant).
    pub cap: i64,
    /// Unified-Buffer byte address.
    pub ub: i64,
}

/// Everything the walker and dialects need to know about one protocol.
pub struct Kernel<'a> {
    /// The protocol.
    pub p: &'a collc_spec::Validated,
    /// Its args-block ABI.
    pub abi: Abi,
    /// C++ names of variables, by `VarId`.
    pub var_names: Vec<String>,
    /// C++ names of signals, windows and arrays.
    pub signal_names: Vec<String>,
    /// C++ names of windows.
    pub window_names: Vec<String>,
    /// C++ names of host arrays.
    pub array_names: Vec<String>,
    /// Tiles (names, capacities, UB placement).
    pub tiles: Vec<TileInfo>,
    /// Staging tile capacity, and how many staging tiles the data path needs (0, 1 or 2).
    pub stage_cap: i64,
    /// How many staging tiles are needed.
    pub stages: usize,
    /// The element type of the staging tiles: the windows' (they share one when staging
    /// is needed).
    pub stage_elem: ElemType,
    /// Variables read anywhere.
    pub used: HashSet<VarId>,
    /// Source, for line numbers.
    pub source: Option<&'a Source>,
    /// Warning lines for the header.
    pub warning: Vec<String>,
    /// The largest world size the kernel accepts (`kMaxSupportedRanks`, [`world_limit`]).
    pub world_limit: i64,
    /// Helper functions used by the printed code.
    pub helpers: RefCell<BTreeSet<&'static str>>,
}

/// C++ keywords and names the generated code uses itself; spec names equal to one of these
/// (or starting with `collc_`) get a trailing underscore.
const RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "const",
    "constexpr",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
    "std",
    "pto",
    "collc",
    "args",
    "ctx",
    "cell",
    "stage_a",
    "stage_b",
    "src_gm",
    "dst_gm",
    "k_off",
    "k_len",
    "kMaxSupportedRanks",
    "kStage",
    "main",
    "kernel_entry",
    "CommContext",
    "CommRemotePtr",
    "pipe_barrier",
    "dsb",
    "dcci",
    "get_block_idx",
    "get_block_num",
    "PIPE_ALL",
    "DSB_DDR",
    "ENTIRE_DATA_CACHE",
    "cache_line_t",
    "COLLC_CHECK",
    "INT64_C",
    "min",
    "max",
    "abs",
    "errno",
    "assert",
    "NULL",
    "EOF",
];

fn cpp_ident(name: &str, taken: &HashSet<String>) -> String {
    let mut s = name.to_string();
    if RESERVED.contains(&s.as_str()) || s.starts_with("collc_") || s.starts_with("__") {
        s.push('_');
    }
    while taken.contains(&s) && s != name {
        s.push('_');
    }
    s
}

/// The tiles' compile-time capacities (evaluated with constants only, else bounded over the
/// parameter domains) and Unified Buffer offsets; a tile without such a bound is an error.
fn tile_layout(
    p: &collc_spec::ir::Protocol,
    opts: &EmitOptions<'_>,
    n: &dyn Fn(&str) -> String,
) -> (Vec<TileInfo>, Vec<Diagnostic>) {
    let mut errors = Vec::new();
    // Tiles need compile-time capacities: evaluate with constants only.
    let mut env = Env::new(p);
    env.set_top_level(p);
    let mut tiles = Vec::new();
    let mut ub = 0i64;
    for t in &p.tiles {
        // Multi-dimensional tiles are addressed flat: capacity = product of the dims.
        let mut cap = Some(1i64);
        for d in &t.dims {
            let x = eval(p, d, &env)
                .ok()
                .or_else(|| upper_bound(p, d, world_limit(p, opts.world_limit)));
            cap = match (cap, x) {
                (Some(c), Some(x)) => c.checked_mul(x),
                _ => None,
            };
        }
        match cap {
            Some(cap) if (1..=(1 << 24)).contains(&cap) => {
                tiles.push(TileInfo {
                    name: n(&t.name),
                    cap,
                    ub,
                });
                ub += round256(cap * t.elem.size() as i64);
            }
            _ => errors.push(
                Diagnostic::error(
                    "backend::tile-shape",
                    format!("tile `{}` needs a size bounded by 1..=16777216 elements over the parameter domains for the C++ backends", t.name),
                )
                .with_primary(t.span, "size not bounded")
                .with_help("size tiles with `const` values, e.g. `const TILE = 256; tile acc: f32[TILE];`, or bound the parameters' domains"),
            ),
        }
    }
    (tiles, errors)
}

impl<'a> Kernel<'a> {
    /// Describes a protocol for the walker (public so that other dialects, e.g. the MPI
    /// generator in `crate::mpi`, can drive [`walk::emit_kernel`]).
    pub fn new(
        p: &'a collc_spec::Validated,
        opts: &EmitOptions<'a>,
    ) -> Result<Self, Vec<Diagnostic>> {
        let all: HashSet<String> = p
            .vars
            .iter()
            .map(|v| v.name.clone())
            .chain(p.signals.iter().map(|s| s.name.clone()))
            .chain(p.windows.iter().map(|s| s.name.clone()))
            .chain(p.tiles.iter().map(|s| s.name.clone()))
            .chain(p.arrays.iter().map(|s| s.name.clone()))
            .collect();
        let n = |s: &str| cpp_ident(s, &all);
        let var_names = p.vars.iter().map(|v| n(&v.name)).collect();
        let signal_names = p.signals.iter().map(|v| n(&v.name)).collect();
        let window_names = p.windows.iter().map(|v| n(&v.name)).collect();
        let array_names = p.arrays.iter().map(|v| n(&v.name)).collect();

        let (tiles, mut errors) = tile_layout(p, opts, &n);
        let max_tile = tiles.iter().map(|t| t.cap).max().unwrap_or(0);
        let stage_cap = STAGE_ELEMS.max(max_tile);
        let stages = stages_needed(p);
        let stage_elem = p.windows.first().map(|w| w.elem).unwrap_or_default();
        if let Some(w) = p.windows.iter().find(|w| w.elem != stage_elem) {
            if stages > 0 {
                errors.push(
                    Diagnostic::error(
                        "backend::mixed-elem",
                        format!(
                            "window `{}` holds {} and `{}` holds {}: the C++ backends stage window-to-window moves through one tile type",
                            w.name,
                            w.elem.as_str(),
                            p.windows[0].name,
                            stage_elem.as_str()
                        ),
                    )
                    .with_primary(w.span, "another element type")
                    .with_help("give every window one element type (a `type` parameter), or move data through tiles"),
                );
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut used = HashSet::new();
        collect_used(p, &mut used);
        Ok(Kernel {
            p,
            abi: Abi::of(p),
            var_names,
            signal_names,
            window_names,
            array_names,
            tiles,
            stage_cap,
            stages,
            stage_elem,
            used,
            source: opts.source,
            warning: opts.warning.clone(),
            world_limit: world_limit(p, opts.world_limit),
            helpers: RefCell::new(BTreeSet::new()),
        })
    }

    /// Bytes of Unified Buffer the tiles and staging tiles occupy.
    pub fn ub_bytes(&self) -> i64 {
        let tiles: i64 = self.tiles.iter().map(|t| round256(t.cap * 4)).sum();
        tiles + round256(self.stage_cap * self.stage_elem.size() as i64) * self.stages as i64
    }

    /// UB address of staging tile `i`.
    pub fn stage_ub(&self, i: usize) -> i64 {
        let tiles: i64 = self.tiles.iter().map(|t| round256(t.cap * 4)).sum();
        tiles + round256(self.stage_cap * 4) * i as i64
    }

    /// `file.coll:LINE` of a span, or `LINE ?` without source.
    pub fn at(&self, span: Span) -> String {
        match self.source {
            Some(src) => {
                let (line, _) = src.line_col(span.start);
                let base = std::path::Path::new(&src.name)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_else(|| src.name.clone());
                format!("{base}:{line}")
            }
            None => "(no source)".to_string(),
        }
    }

    /// Marks a helper as used.
    pub fn helper(&self, h: &'static str) {
        self.helpers.borrow_mut().insert(h);
    }

    /// The C++ name of a variable.
    pub fn var(&self, v: VarId) -> &str {
        &self.var_names[v.index()]
    }

    /// The C++ name of a buffer.
    pub fn buffer(&self, b: BufferRef) -> &str {
        match b {
            BufferRef::Window(w) => &self.window_names[w.index()],
            BufferRef::Tile(t) => &self.tiles[t.index()].name,
        }
    }

    /// Prints an expression as C++ `int64_t` arithmetic.
    pub fn expr(&self, e: &Expr) -> String {
        self.expr_prec(e, 0)
    }

    fn expr_prec(&self, e: &Expr, prec: u8) -> String {
        match e {
            Expr::Int(v) => int_lit(*v),
            Expr::Var(v) => self.var(*v).to_string(),
            Expr::Array(a, idx) => {
                let dims = &self.p.arrays[*a].dims;
                format!("{}[{}]", self.array_names[a.index()], self.flat(idx, dims))
            }
            Expr::Rank(a) => self.expr_prec(a, prec),
            Expr::Neg(a) => {
                let inner = self.expr_prec(a, 3);
                let s = if inner.starts_with('-') {
                    format!("-({inner})")
                } else {
                    format!("-{inner}")
                };
                paren(s, prec > 2)
            }
            Expr::Bin(op, a, b) => match op {
                BinOp::Add | BinOp::Sub => {
                    let sym = if *op == BinOp::Add { "+" } else { "-" };
                    let s = format!("{} {sym} {}", self.expr_prec(a, 1), self.expr_prec(b, 2));
                    paren(s, prec > 1)
                }
                BinOp::Mul => {
                    let s = format!("{} * {}", self.expr_prec(a, 2), self.expr_prec(b, 3));
                    paren(s, prec > 2)
                }
                BinOp::Div => {
                    self.helper("div");
                    format!("collc_div({}, {})", self.expr(a), self.expr(b))
                }
                BinOp::Mod => {
                    self.helper("mod");
                    format!("collc_mod({}, {})", self.expr(a), self.expr(b))
                }
                BinOp::Shl | BinOp::Shr => {
                    self.helper("shift");
                    let f = if *op == BinOp::Shl { "shl" } else { "shr" };
                    format!("collc_{f}({}, {})", self.expr(a), self.expr(b))
                }
                // Always parenthesised: C++ binds `&`, `^`, `|` looser than comparisons.
                BinOp::And | BinOp::Xor | BinOp::Or => format!(
                    "({} {} {})",
                    self.expr_prec(a, 3),
                    op.as_str(),
                    self.expr_prec(b, 3)
                ),
            },
            Expr::Log2(a) => {
                self.helper("log2");
                format!("collc_log2({})", self.expr(a))
            }
            Expr::Pow2(a) => {
                self.helper("shift");
                format!("collc_shl(1, {})", self.expr(a))
            }
            Expr::CeilDiv(a, b) => {
                self.helper("ceil_div");
                format!("collc_ceil_div({}, {})", self.expr(a), self.expr(b))
            }
            Expr::Min(a, b) => {
                self.helper("min");
                format!("collc_min({}, {})", self.expr(a), self.expr(b))
            }
            Expr::Max(a, b) => {
                self.helper("max");
                format!("collc_max({}, {})", self.expr(a), self.expr(b))
            }
        }
    }

    /// Prints a condition.
    pub fn cond(&self, c: &Cond) -> String {
        self.cond_prec(c, 0)
    }

    fn cond_prec(&self, c: &Cond, prec: u8) -> String {
        match c {
            Cond::Bool(b) => b.to_string(),
            Cond::Cmp(op, a, b) => {
                let s = format!("{} {} {}", self.expr(a), op.as_str(), self.expr(b));
                paren(s, prec > 2)
            }
            Cond::Not(c) => format!("!({})", self.cond(c)),
            Cond::And(cs) => {
                let s = cs
                    .iter()
                    .map(|c| self.cond_prec(c, 2))
                    .collect::<Vec<_>>()
                    .join(" && ");
                paren(s, prec > 1)
            }
            Cond::Or(cs) => {
                let s = cs
                    .iter()
                    .map(|c| self.cond_prec(c, 1))
                    .collect::<Vec<_>>()
                    .join(" || ");
                paren(s, prec > 0)
            }
        }
    }

    /// Row-major flat index of `idx` in an array of `dims` (only the first `idx.len()` dims
    /// are indexed; trailing dims multiply in).
    pub fn flat(&self, idx: &[Expr], dims: &[Expr]) -> String {
        let mut acc: Option<String> = None;
        for (i, x) in idx.iter().enumerate() {
            let xi = self.expr_prec(x, 1);
            acc = Some(match acc {
                None => xi,
                Some(a) => {
                    let d = self.expr_prec(&dims[i], 3);
                    let a = if a.contains(' ') { format!("({a})") } else { a };
                    format!("{a} * {d} + {xi}")
                }
            });
        }
        acc.unwrap_or_else(|| "0".to_string())
    }
}

/// Which staging tiles the data path needs: 1 for window-to-window copies or reductions
/// involving one tile, 2 for window-to-window reductions.
fn stages_needed(p: &Protocol) -> usize {
    fn walk(b: &Block, n: &mut usize) {
        for s in &b.stmts {
            match &s.kind {
                StmtKind::Copy { dst, src }
                | StmtKind::Get { dst, src, .. }
                | StmtKind::Put { dst, src, .. }
                    if is_window(dst) && is_window(src) =>
                {
                    *n = (*n).max(1);
                }
                StmtKind::Reduce { dst, src, .. } => {
                    let need = match (is_window(dst), is_window(src)) {
                        (true, true) => 2,
                        (false, false) => 0,
                        _ => 1,
                    };
                    *n = (*n).max(need);
                }
                StmtKind::For { body, .. } => walk(body, n),
                StmtKind::If {
                    then_block,
                    else_block,
                    ..
                } => {
                    walk(then_block, n);
                    if let Some(e) = else_block {
                        walk(e, n);
                    }
                }
                _ => {}
            }
        }
    }
    let mut n = 0;
    walk(&p.body, &mut n);
    walk(&p.epilogue, &mut n);
    n
}

/// True if the region is in a window (global memory).
pub fn is_window(r: &Region) -> bool {
    matches!(r.buffer, BufferRef::Window(_))
}

fn collect_used(p: &Protocol, used: &mut HashSet<VarId>) {
    let mut f = |v: VarId| {
        used.insert(v);
    };
    for v in &p.vars {
        if let VarKind::Derived(e) = &v.kind {
            e.for_each_var(&mut f);
        }
    }
    if let Some(b) = &p.blocks {
        b.count.for_each_var(&mut f);
    }
    for r in &p.requires {
        r.cond.for_each_var(&mut f);
    }
    for s in &p.signals {
        s.dims.iter().for_each(|d| d.for_each_var(&mut f));
    }
    for s in &p.windows {
        s.dims.iter().for_each(|d| d.for_each_var(&mut f));
    }
    for s in &p.arrays {
        s.dims.iter().for_each(|d| d.for_each_var(&mut f));
    }
    block_vars(&p.body, &mut f);
    block_vars(&p.epilogue, &mut f);
}

/// Calls `f` on every variable a region reads.
fn region_vars(r: &Region, f: &mut dyn FnMut(VarId)) {
    r.index.iter().for_each(|x| x.for_each_var(f));
    r.lo.for_each_var(f);
    r.hi.for_each_var(f);
}

/// Calls `f` on every variable a block reads or binds.
fn block_vars(b: &Block, f: &mut dyn FnMut(VarId)) {
    for s in &b.stmts {
        stmt_vars(s, f);
    }
}

/// Calls `f` on every variable a statement (and the statements in it) reads or binds.
fn stmt_vars(s: &Stmt, f: &mut dyn FnMut(VarId)) {
    match &s.kind {
        StmtKind::Let { value, .. } => value.for_each_var(f),
        StmtKind::Notify {
            index,
            target,
            value,
            ..
        } => {
            index.iter().for_each(|x| x.for_each_var(f));
            if let Some(t) = target {
                t.for_each_var(f);
            }
            value.for_each_var(f);
        }
        StmtKind::Wait {
            index, threshold, ..
        } => {
            index.iter().for_each(|x| x.for_each_var(f));
            threshold.for_each_var(f);
        }
        StmtKind::Copy { dst, src } => {
            region_vars(dst, f);
            region_vars(src, f);
        }
        StmtKind::Get { dst, src, from } => {
            region_vars(dst, f);
            region_vars(src, f);
            from.for_each_var(f);
        }
        StmtKind::Put { dst, to, src } => {
            region_vars(dst, f);
            region_vars(src, f);
            to.for_each_var(f);
        }
        StmtKind::Reduce {
            dst, src, from, to, ..
        } => {
            region_vars(dst, f);
            region_vars(src, f);
            for x in from.iter().chain(to) {
                x.for_each_var(f);
            }
        }
        StmtKind::Fence => {}
        StmtKind::For { var, range, body } => {
            f(*var);
            if let Range::Span { lo, hi, step } | Range::Seq(Seq { lo, hi, step, .. }) = range {
                lo.for_each_var(f);
                hi.for_each_var(f);
                step.for_each_var(f);
            }
            block_vars(body, f);
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            cond.for_each_var(f);
            block_vars(then_block, f);
            if let Some(e) = else_block {
                block_vars(e, f);
            }
        }
        StmtKind::Return { cond } => cond.for_each_var(f),
    }
}

/// A C++ integer literal.
pub fn int_lit(v: i64) -> String {
    if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
        if v < 0 {
            format!("({v})")
        } else {
            v.to_string()
        }
    } else {
        format!("INT64_C({v})")
    }
}

fn paren(s: String, yes: bool) -> String {
    if yes {
        format!("({s})")
    } else {
        s
    }
}

/// Escapes text for a C string literal.
pub fn c_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            _ => out.push('?'),
        }
    }
    out.push('"');
    out
}

/// Lines with indentation.
#[derive(Debug, Default)]
pub struct Writer {
    lines: Vec<String>,
    indent: usize,
}

impl Writer {
    /// Appends one line at the current indentation (empty: a blank line).
    pub fn line(&mut self, s: impl AsRef<str>) {
        let s = s.as_ref();
        if s.is_empty() {
            self.lines.push(String::new());
        } else {
            self.lines
                .push(format!("{}{}", "    ".repeat(self.indent), s));
        }
    }
    /// Opens a brace block: `head {`.
    pub fn open(&mut self, head: impl AsRef<str>) {
        let head = head.as_ref();
        if head.is_empty() {
            self.line("{");
        } else {
            self.line(format!("{head} {{"));
        }
        self.indent += 1;
    }
    /// Closes a brace block with `}` (or `tail`, e.g. `} else {`, which reopens).
    pub fn close(&mut self) {
        self.indent = self.indent.saturating_sub(1);
        self.line("}");
    }
    /// `} else {` / `} else if (...) {`.
    pub fn reopen(&mut self, s: &str) {
        self.indent = self.indent.saturating_sub(1);
        self.line(format!("}} {s} {{"));
        self.indent += 1;
    }
    /// The last line written, trimmed.
    pub fn last(&self) -> &str {
        // A trace point (`COLLC_TRACE_*`) is no code between two lines: look past it.
        self.lines
            .iter()
            .rev()
            .map(|l| l.trim())
            .find(|l| !l.starts_with("COLLC_TRACE_"))
            .unwrap_or("")
    }
    /// The text.
    pub fn finish(self) -> String {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s
    }
}

/// Rounds a byte count up to a multiple of 256 (tile placement granule).
fn round256(bytes: i64) -> i64 {
    (bytes + 255) / 256 * 256
}

/// The largest value of a rank-uniform expression over the corners of the parameter
/// domains (world size from its lower bound to `world_hi`, `param`s at their bounds; rank
/// parameters at 0 and `world_hi - 1`). Tiles
/// sized by parameters get this capacity; the runtime checks every actual length.
pub fn upper_bound(p: &Protocol, e: &Expr, world_hi: i64) -> Option<i64> {
    // The inputs the expression depends on (through derived lets).
    fn deps(p: &Protocol, e: &Expr, out: &mut Vec<VarId>) {
        e.for_each_var(&mut |v| match &p.vars[v].kind {
            VarKind::Derived(d) => deps(p, d, out),
            VarKind::World { .. } | VarKind::Param { .. } if !out.contains(&v) => out.push(v),
            _ => {}
        });
    }
    let mut ins = Vec::new();
    deps(p, e, &mut ins);
    if ins.len() > 12 {
        return None;
    }
    let corners: Vec<Vec<i64>> = ins
        .iter()
        .map(|v| match p.vars[*v].kind {
            VarKind::World { lo, .. } => vec![lo, world_hi],
            VarKind::Param {
                domain: Some((lo, hi)),
            } => vec![lo, hi],
            _ => vec![0, world_hi - 1],
        })
        .collect();
    let mut best: Option<i64> = None;
    for mask in 0..(1u32 << ins.len()) {
        let mut env = Env::new(p);
        for (i, v) in ins.iter().enumerate() {
            env.set(*v, corners[i][((mask >> i) & 1) as usize]);
        }
        for (id, v) in collc_spec::id::enumerate(&p.vars) {
            match &v.kind {
                VarKind::Const(c) => env.set(id, *c),
                VarKind::Derived(d) => {
                    if let Ok(x) = eval(p, d, &env) {
                        env.set(id, x);
                    }
                }
                _ => {}
            }
        }
        if let Ok(x) = eval(p, e, &env) {
            best = Some(best.map_or(x, |b| b.max(x)));
        }
    }
    best
}
