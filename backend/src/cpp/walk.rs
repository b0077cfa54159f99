//! The target-neutral statement walker of the C++ backends.
//!
//! It owns the kernel's shape — header comment, args decoding order, rank-uniform values,
//! guards, `me`/block, body in braces, epilogue in braces — and everything about control
//! flow (`for`, `if`, `let`, `return if`), runtime index checks, and the **ordering
//! analysis**:
//!
//! * *publish*: before a notify (hoisted in front of a loop that only notifies), all data
//!   stores must have drained. The walker tracks whether global-memory data may have been
//!   written since the last publish (`dirty`, true at entry: the host's staged inputs) and asks
//!   the dialect for a publish fence with `data_written = dirty`.
//! * *acquire*: after a wait (hoisted behind a loop that only waits), reads of data the wait
//!   released must not hit stale cache lines; the dialect emits its invalidation.
//!
//! A [`Dialect`] supplies the target-specific pieces: includes, the entry signature and args
//! decoding, the rank/block intrinsics, early return, scratch tiles, notify, wait, fences
//! and data movement. The `pto::comm` dialect (Ascend and CPU threads) is
//! [`crate::cpp::pto::Pto`]; an MPI dialect implements the same trait.

use super::{c_string, int_lit, Kernel, Writer};
use crate::layout::{AbiBuffer, BufferSource};
use collc_grammar::Diagnostic;
use collc_spec::ir::*;
use collc_spec::print::{cond_to_string, expr_to_string, stmt_head, Style};
use std::collections::HashSet;

/// A signal cell: `name + flat`.
#[derive(Debug, Clone)]
pub struct CellRef {
    /// The signal.
    pub signal: SignalId,
    /// C++ name of the signal's base pointer.
    pub name: String,
    /// C++ flat index expression.
    pub flat: String,
}

/// A window location: `name + offset`, on rank `rank` (`None`: this rank).
#[derive(Debug, Clone)]
pub struct GmRef {
    /// The window.
    pub window: WindowId,
    /// C++ name of the window's base pointer.
    pub name: String,
    /// C++ element offset expression.
    pub offset: String,
    /// C++ rank expression of a remote access.
    pub rank: Option<String>,
}

/// One end of a data movement.
#[derive(Debug, Clone)]
pub enum Loc {
    /// Global memory (a window).
    Gm(GmRef),
    /// A private tile (its element offset, `"0"` unless the dialect supports tile offsets, is
    /// in [`DataOp::dst_tile_offset`] / [`DataOp::src_tile_offset`]; multi-dimensional tiles
    /// are addressed flat).
    Tile(TileId),
}

/// What a data statement does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    /// `dst = src`
    Copy,
    /// `dst = dst op src`
    Reduce(ReduceOp),
}

/// A data statement with resolved locations.
#[derive(Debug, Clone)]
pub struct DataOp {
    /// Copy or reduce.
    pub kind: DataKind,
    /// Destination.
    pub dst: Loc,
    /// Source.
    pub src: Loc,
    /// C++ element count expression.
    pub len: String,
    /// C++ element offset of the destination tile slice (`"0"`: first element, or not a tile).
    pub dst_tile_offset: String,
    /// C++ element offset of the source tile slice (`"0"`: first element, or not a tile).
    pub src_tile_offset: String,
}

/// The target-specific half of the C++ generator.
pub trait Dialect {
    /// One line naming the target, for the header comment.
    fn describe(&self) -> String;
    /// Include lines and file-scope constants (before the anonymous-namespace helpers).
    fn includes(&self, k: &Kernel, w: &mut Writer);
    /// The entry signature (opened block) and the args decoding: buffers, scalars, context.
    fn open_entry(&self, k: &Kernel, w: &mut Writer, maybe_unused: &dyn Fn(BufferSource) -> bool);
    /// C++ expression of this rank's id (int64_t).
    fn rank_id(&self) -> String;
    /// C++ expression of this block's index (int64_t).
    fn block_idx(&self) -> String;
    /// C++ expression of the launched block count (int64_t).
    fn block_num(&self) -> String;
    /// Statements ending the kernel early.
    fn early_return(&self, w: &mut Writer);
    /// Declarations of the scratch tiles.
    fn scratch(&self, k: &Kernel, w: &mut Writer);
    /// The fence before a notify; `data_written`: data may have been stored since the last one.
    fn publish(&self, k: &Kernel, w: &mut Writer, data_written: bool);
    /// The fence/invalidation after a wait.
    fn acquire(&self, k: &Kernel, w: &mut Writer);
    /// The `.coll` `fence`.
    fn fence(&self, w: &mut Writer);
    /// The trace point of a `.coll` `fence` (after [`Dialect::fence`]).
    fn trace_fence(&self, w: &mut Writer);
    /// The trace points of a data statement's window accesses (before [`Dialect::data`]):
    /// a read of the source if it is a window, then a write of the destination if it is one.
    fn trace_data(&self, k: &Kernel, w: &mut Writer, op: &DataOp);
    /// `cell (@ target) op= value`.
    fn notify(
        &self,
        k: &Kernel,
        w: &mut Writer,
        cell: &CellRef,
        target: Option<&str>,
        op: NotifyOp,
        value: &str,
    );
    /// `wait cell cmp threshold`.
    fn wait(&self, k: &Kernel, w: &mut Writer, cell: &CellRef, cmp: CmpOp, threshold: &str);
    /// A copy or reduction.
    fn data(&self, k: &Kernel, w: &mut Writer, op: &DataOp);
    /// The last statements of the kernel (then the walker closes the entry block).
    fn end_kernel(&self, w: &mut Writer);
    /// Declares `const int64_t NAME` = the call index (0 in this rank's first call), kept
    /// by the runtime across calls (only for protocols that read `call`).
    fn call_index(&self, k: &Kernel, w: &mut Writer, name: &str);
    /// True if [`Dialect::data`] handles tile slices that do not start at element 0 (and
    /// multi-dimensional tiles with a non-zero row); otherwise the walker refuses them with
    /// `backend::unsupported`.
    fn supports_tile_offsets(&self) -> bool {
        false
    }
    /// Why the target's tile instructions cannot reduce elements of type `t` (None: they
    /// can); the walker refuses such a `reduce` with `backend::elem-type`, never converting.
    fn cannot_reduce(&self, _t: ElemType) -> Option<&'static str> {
        None
    }
    /// The refusal of a call past `calls <= max` (`what` names the declaration and where it
    /// is): the CPU runtime refuses it, an Ascend host must (the kernel cannot count calls).
    fn calls_bound(&self, w: &mut Writer, max: i64, what: &str) {
        w.line(format!(
            "// {what}: the verified domain is at most {max} back-to-back calls on one signal buffer."
        ));
        w.line(format!(
            "// The host must not launch call {} (on Ascend that is the host's duty; the CPU build refuses it).",
            max.saturating_add(1)
        ));
        w.line(format!("COLLC_CALLS_BOUND({max}, {});", c_string(what)));
    }
    /// The check statement for a runtime condition (`what` is the `.coll` text).
    fn check(&self, w: &mut Writer, cond: &str, what: &str) {
        w.line(format!("COLLC_CHECK({cond}, {});", c_string(what)));
    }
}

/// Emits a whole kernel.
pub fn emit_kernel(k: &Kernel, d: &dyn Dialect) -> Result<String, Vec<Diagnostic>> {
    let p = k.p;
    let (used_signals, used_windows, used_arrays) = used_buffers(p);

    // The function first (it decides which helpers are needed), then the file around it.
    let mut f = Writer::default();
    let maybe_unused = |b: BufferSource| match b {
        BufferSource::Signal(s) => !used_signals.contains(&s),
        BufferSource::Window(x) => !used_windows.contains(&x),
        BufferSource::Array(a) => !used_arrays.contains(&a),
    };
    d.open_entry(k, &mut f, &maybe_unused);
    rank_uniform_values(k, &mut f);

    // Guards.
    f.line("");
    f.line("// ---- guards: rank-uniform values only, before the first notify ----");
    let guards = guards(k, d);
    let n = guards.len();
    for (i, (c, why)) in guards.iter().enumerate() {
        let head = if i == 0 { "if (" } else { "    " };
        let tail = if i + 1 == n { ") {" } else { " ||" };
        f.line(format!("{head}{c}{tail}  // {why}"));
    }
    f.indent_in();
    d.early_return(&mut f);
    f.close();

    // This rank and block.
    f.line("");
    this_rank(k, d, &mut f);
    body_and_epilogue(k, d, &mut f)?;
    let function = f.finish();

    let mut text = file_head(k, d);
    text.push_str(&function);
    Ok(text)
}

/// The rank-uniform values: the protocol's constants and `let`s.
fn rank_uniform_values(k: &Kernel, f: &mut Writer) {
    let p = k.p;
    let consts: Vec<VarId> = p
        .decls
        .iter()
        .filter_map(|x| match x {
            Decl::Var(v) if matches!(p.vars[*v].kind, VarKind::Const(_) | VarKind::Derived(_)) => {
                Some(*v)
            }
            _ => None,
        })
        .collect();
    if !consts.is_empty() {
        f.line("");
        f.line("// ---- rank-uniform values ----");
        for v in consts {
            let attr = if k.used.contains(&v) {
                ""
            } else {
                "[[maybe_unused]] "
            };
            let var = &p.vars[v];
            let at = k.at(var.span);
            match &var.kind {
                VarKind::Const(c) => f.line(format!(
                    "{attr}constexpr int64_t {} = {};  // {at}  const {} = {c};",
                    k.var(v),
                    int_lit(*c),
                    var.name
                )),
                VarKind::Derived(e) => f.line(format!(
                    "{attr}const int64_t {} = {};  // {at}  let {} = {};",
                    k.var(v),
                    k.expr(e),
                    var.name,
                    expr_to_string(p, e)
                )),
                _ => {}
            }
        }
    }
}

/// The guards the kernel checks before its first notify, each with what it
/// enforces: the world size, the parameters' domains, the `require`s and the
/// block count.
fn guards(k: &Kernel, d: &dyn Dialect) -> Vec<(String, String)> {
    let p = k.p;
    let mut guards: Vec<(String, String)> = Vec::new();
    let world = &p.vars[p.world];
    if let VarKind::World { lo, hi } = world.kind {
        let why = if k.world_limit < hi {
            format!(
                "ranks {} in {lo}..={} of the declared {lo}..={hi} (kMaxSupportedRanks)",
                world.name, k.world_limit
            )
        } else {
            format!("ranks {} in {lo}..={hi}", world.name)
        };
        guards.push((
            format!(
                "{w} < {} || {w} > kMaxSupportedRanks",
                int_lit(lo.max(1)),
                w = k.var(p.world)
            ),
            why,
        ));
    }
    for v in p.inputs().into_iter().skip(1) {
        let var = &p.vars[v];
        if let VarKind::Param { domain } = var.kind {
            match domain {
                Some((lo, hi)) => guards.push((
                    format!(
                        "{n} < {} || {n} > {}",
                        int_lit(lo),
                        int_lit(hi),
                        n = k.var(v)
                    ),
                    format!("param {}: int in {lo}..={hi}", var.name),
                )),
                None => guards.push((
                    format!("{n} < 0 || {n} >= {}", k.var(p.world), n = k.var(v)),
                    format!("param {}: rank", var.name),
                )),
            }
        }
    }
    for r in &p.requires {
        guards.push((
            format!("!({})", k.cond(&r.cond)),
            format!("require {};", cond_to_string(p, &r.cond)),
        ));
    }
    if let Some(b) = &p.blocks {
        guards.push((
            format!("{} != {}", d.block_num(), k.expr(&b.count)),
            format!(
                "blocks {} in 0..{} (the launch's core count)",
                p.vars[b.var].name,
                expr_to_string(p, &b.count)
            ),
        ));
    }
    guards
}

/// This rank's and block's indices, the call index, the scratch space and the
/// calls bound.
fn this_rank(k: &Kernel, d: &dyn Dialect, f: &mut Writer) {
    let p = k.p;
    let me_attr = if k.used.contains(&p.me) {
        ""
    } else {
        "[[maybe_unused]] "
    };
    f.line(format!(
        "{me_attr}const int64_t {} = {};",
        k.var(p.me),
        d.rank_id()
    ));
    if let Some(b) = &p.blocks {
        let attr = if k.used.contains(&b.var) {
            ""
        } else {
            "[[maybe_unused]] "
        };
        f.line(format!(
            "{attr}const int64_t {} = {};",
            k.var(b.var),
            d.block_idx()
        ));
    }
    if let Some(c) = p.call {
        d.call_index(k, f, k.var(c));
    }
    d.scratch(k, f);
    if let Some(b) = &p.calls {
        let what = format!("calls <= {} ({})", b.max, k.at(b.span));
        d.calls_bound(f, b.max, &what);
    }
}

/// The body and the epilogue, and the end of the kernel.
fn body_and_epilogue(k: &Kernel, d: &dyn Dialect, f: &mut Writer) -> Result<(), Vec<Diagnostic>> {
    let p = k.p;
    let mut st = State {
        k,
        d,
        rank_vars: HashSet::new(),
        dirty: true,
        hoisted_notify: false,
        in_wait_loop: false,
        tile_offsets: Vec::new(),
        errors: Vec::new(),
    };
    st.rank_vars.insert(p.me);
    for v in p.inputs().into_iter().skip(1) {
        if matches!(p.vars[v].kind, VarKind::Param { domain: None }) {
            st.rank_vars.insert(v);
        }
    }

    f.line("");
    f.line(format!("// ---- body ({}) ----", k.at(p.body.span)));
    f.open("");
    st.block(f, &p.body);
    f.close();
    f.line("");
    f.line(format!("// ---- epilogue ({}) ----", k.at(p.epilogue.span)));
    f.open("");
    st.block(f, &p.epilogue);
    f.close();
    d.end_kernel(f);
    f.close();
    if !st.errors.is_empty() {
        return Err(st.errors);
    }
    Ok(())
}

/// The file around the kernel's function: header, includes, limits and helpers.
fn file_head(k: &Kernel, d: &dyn Dialect) -> String {
    let mut out = Writer::default();
    header(k, d, &mut out);
    d.includes(k, &mut out);
    out.line("");
    out.line("namespace {");
    out.line(format!(
        "constexpr int64_t kMaxSupportedRanks = {};  // the largest P the verdict covers and the target addresses",
        int_lit(k.world_limit)
    ));
    if k.stages > 0 {
        out.line(format!(
            "constexpr int32_t kStage = {};  // elements per staging tile (window-to-window moves)",
            k.stage_cap
        ));
    }
    helpers(k, &mut out);
    out.line("}  // namespace");
    out.line("");
    out.finish()
}

fn header(k: &Kernel, d: &dyn Dialect, w: &mut Writer) {
    let p = k.p;
    let file = k.source.map_or("(IR)".to_string(), |s| s.name.clone());
    w.line(format!(
        "// Generated by collc from {file}. Do not edit: edit the .coll and re-emit."
    ));
    w.line("//");
    w.line(format!("// collective {}: {}", p.name, semantics_text(p)));
    w.line(format!("// Target: {}", d.describe()));
    if !k.warning.is_empty() {
        w.line("//");
        for l in &k.warning {
            w.line(format!("// WARNING: {l}"));
        }
    }
    w.line("//");
    w.line("// Args block (collc host ABI v2, collc/host_launch.hpp; a `per call` buffer is the call's own):");
    let mut slot = 0;
    for b in &k.abi.buffers {
        let what = buffer_text(p, b);
        w.line(format!("//   args[{slot}]  {what}"));
        slot += 1;
    }
    for v in &k.abi.scalars {
        let what = if *v == p.world {
            format!("{} (rank count, nranks)", p.vars[*v].name)
        } else {
            format!("param {}", p.vars[*v].name)
        };
        w.line(format!("//   args[{slot}]  {what}"));
        slot += 1;
    }
    w.line(format!("//   args[{slot}]  CommContext* of this rank"));
    w.line("//");
    w.line("// Ordering inserted by collc (the .coll `fence` is pipe_barrier(PIPE_ALL)):");
    w.line(
        "//   before a notify: pipe_barrier(PIPE_ALL), plus dsb(DSB_DDR) when data may have been",
    );
    w.line("//     stored since the last notify (the notify publishes it);");
    w.line(
        "//   after a wait: pipe_barrier(PIPE_ALL) and dcci(cache_line_t::ENTIRE_DATA_CACHE), so",
    );
    w.line("//     reads of data the wait released do not hit stale cache lines.");
    if k.ub_bytes() > super::UB_BYTES {
        w.line(format!(
            "// NOTE: the tiles need {} bytes of Unified Buffer at the parameter domains' maximum; an",
            k.ub_bytes()
        ));
        w.line(format!(
            "// Ascend AIV core has {} bytes: the Ascend build needs smaller tiles or domains.",
            super::UB_BYTES
        ));
    }
    w.line(
        "// Runtime checks (COLLC_CHECK) guard every index, rank and slice the .coll does not make",
    );
    w.line("// trivially safe; they abort a CPU run loudly and compile to nothing on Ascend.");
    w.line("");
}

/// What a buffer of the args block is, for the header's comment.
fn buffer_text(p: &Protocol, b: &AbiBuffer) -> String {
    match b.source {
        BufferSource::Signal(s) => {
            let sig = &p.signals[s];
            let dims: Vec<String> = sig
                .dims
                .iter()
                .map(|d| format!("[{}]", expr_to_string(p, d)))
                .collect();
            let kind = if b.is_credit_signal {
                "credit signal"
            } else if sig.monotonic {
                "monotonic signal"
            } else {
                "value signal"
            };
            let life = if b.per_call { ", per call" } else { "" };
            format!("{kind} {}{} (int32 cells{life})", sig.name, dims.join(""))
        }
        BufferSource::Window(x) => {
            let win = &p.windows[x];
            let dims: Vec<String> = win
                .dims
                .iter()
                .map(|d| format!("[{}]", expr_to_string(p, d)))
                .collect();
            let life = if b.per_call { " per call" } else { "" };
            let t = win.elem.as_str();
            format!("window {}: {t}{}{life}", win.name, dims.join(""))
        }
        BufferSource::Array(a) => {
            let arr = &p.arrays[a];
            let dims: Vec<String> = arr
                .dims
                .iter()
                .map(|d| format!("[{}]", expr_to_string(p, d)))
                .collect();
            format!(
                "host array {}: int64{} in {}..={} (staged by the host)",
                arr.name,
                dims.join(""),
                arr.domain.0,
                arr.domain.1
            )
        }
    }
}

/// `allreduce(sum, data)` etc.
pub fn semantics_text(p: &Protocol) -> String {
    match p.op_param {
        // The instance's operator, not the parameter (the code computes that one).
        Some(_) => collc_spec::print::semantics_to_string(&p.op_instance()),
        None => collc_spec::print::semantics_to_string(p),
    }
}

fn helpers(k: &Kernel, w: &mut Writer) {
    let h = k.helpers.borrow();
    if h.is_empty() {
        return;
    }
    w.line("");
    w.line("// Integer helpers with the semantics of collc_spec::eval (int64 arithmetic).");
    if h.contains("div") {
        w.line("// Euclidean division: a == collc_div(a, b) * b + collc_mod(a, b), 0 <= collc_mod(a, b) < |b|.");
        w.line("inline int64_t collc_div(int64_t a, int64_t b) {");
        w.line("    COLLC_CHECK(b != 0, \"division by zero\");");
        w.line("    const int64_t q = a / b;");
        w.line("    return (a % b < 0) ? (b > 0 ? q - 1 : q + 1) : q;");
        w.line("}");
    }
    if h.contains("mod") {
        w.line("inline int64_t collc_mod(int64_t a, int64_t b) {");
        w.line("    COLLC_CHECK(b != 0, \"remainder by zero\");");
        w.line("    const int64_t r = a % b;");
        w.line("    return r < 0 ? (b > 0 ? r + b : r - b) : r;");
        w.line("}");
    }
    if h.contains("ceil_div") {
        w.line("// ceil(a / b), rounding towards +infinity.");
        w.line("inline int64_t collc_ceil_div(int64_t a, int64_t b) {");
        w.line("    COLLC_CHECK(b != 0, \"ceil(a / 0)\");");
        w.line("    int64_t q = a / b;");
        w.line("    if (a % b < 0) q = b > 0 ? q - 1 : q + 1;  // Euclidean quotient");
        w.line("    return (q * b == a || b < 0) ? q : q + 1;");
        w.line("}");
    }
    if h.contains("shift") {
        w.line("// Shifts by 0..=62; `>>` is arithmetic (floor division by 2^b).");
        w.line("inline int64_t collc_shl(int64_t a, int64_t b) {");
        w.line("    COLLC_CHECK(0 <= b && b <= 62, \"shift amount outside 0..=62\");");
        w.line("    return (int64_t)((uint64_t)a << b);");
        w.line("}");
        w.line("inline int64_t collc_shr(int64_t a, int64_t b) {");
        w.line("    COLLC_CHECK(0 <= b && b <= 62, \"shift amount outside 0..=62\");");
        w.line("    return a >= 0 ? a >> b : ~((~a) >> b);");
        w.line("}");
    }
    if h.contains("log2") {
        w.line("// log2 of a power of two (exact).");
        w.line("inline int64_t collc_log2(int64_t x) {");
        w.line("    COLLC_CHECK(x >= 1 && (x & (x - 1)) == 0, \"log2 of a value that is not a power of two\");");
        w.line("    int64_t k = 0;");
        w.line("    while (x > 1) { x >>= 1; ++k; }");
        w.line("    return k;");
        w.line("}");
    }
    if h.contains("seq") {
        w.line(
            "// `lo..hi step s` / `step *s` ranges: how many values, and the j-th ascending one.",
        );
        w.line("inline int64_t collc_seq_len(int64_t lo, int64_t hi, int64_t s, bool geometric) {");
        w.line("    COLLC_CHECK(geometric ? (s >= 2 && lo >= 1) : s >= 1, \"a loop step that never ends\");");
        w.line("    if (!geometric) return hi > lo ? (hi - lo + s - 1) / s : 0;");
        w.line("    int64_t n = 0;");
        w.line("    for (int64_t x = lo; x < hi;) { ++n; if (x > INT64_MAX / s) break; x *= s; }");
        w.line("    return n;");
        w.line("}");
        w.line("inline int64_t collc_seq_at(int64_t lo, int64_t s, bool geometric, int64_t j) {");
        w.line("    if (!geometric) return lo + j * s;");
        w.line("    while (j-- > 0) lo *= s;");
        w.line("    return lo;");
        w.line("}");
    }
    if h.contains("min") {
        w.line("inline int64_t collc_min(int64_t a, int64_t b) { return a < b ? a : b; }");
    }
    if h.contains("max") {
        w.line("inline int64_t collc_max(int64_t a, int64_t b) { return a > b ? a : b; }");
    }
    if h.contains("in") {
        w.line("// 0 <= x < n");
        w.line("inline bool collc_in(int64_t x, int64_t n) { return 0 <= x && x < n; }");
    }
    if h.contains("slice") {
        w.line("// 0 <= lo <= hi <= n");
        w.line("inline bool collc_slice(int64_t lo, int64_t hi, int64_t n) { return 0 <= lo && lo <= hi && hi <= n; }");
    }
}

fn used_buffers(p: &Protocol) -> (HashSet<SignalId>, HashSet<WindowId>, HashSet<ArrayId>) {
    let mut u = Used::default();
    u.block(&p.body);
    u.block(&p.epilogue);
    for v in &p.vars {
        if let VarKind::Derived(e) = &v.kind {
            u.expr(e);
        }
    }
    (u.sigs, u.wins, u.arrs)
}

/// The signals, windows and host arrays statements and expressions use.
#[derive(Default)]
struct Used {
    sigs: HashSet<SignalId>,
    wins: HashSet<WindowId>,
    arrs: HashSet<ArrayId>,
}

impl Used {
    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Int(_) | Expr::Var(_) => {}
            Expr::Array(x, idx) => {
                self.arrs.insert(*x);
                idx.iter().for_each(|i| self.expr(i));
            }
            Expr::Neg(x) | Expr::Rank(x) | Expr::Log2(x) | Expr::Pow2(x) => self.expr(x),
            Expr::Bin(_, x, y) | Expr::CeilDiv(x, y) | Expr::Min(x, y) | Expr::Max(x, y) => {
                self.expr(x);
                self.expr(y);
            }
        }
    }

    fn cond(&mut self, c: &Cond) {
        match c {
            Cond::Bool(_) => {}
            Cond::Cmp(_, x, y) => {
                self.expr(x);
                self.expr(y);
            }
            Cond::Not(c) => self.cond(c),
            Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| self.cond(c)),
        }
    }

    fn region(&mut self, r: &Region) {
        if let BufferRef::Window(x) = r.buffer {
            self.wins.insert(x);
        }
        r.index.iter().for_each(|i| self.expr(i));
        self.expr(&r.lo);
        self.expr(&r.hi);
    }

    fn block(&mut self, b: &Block) {
        for st in &b.stmts {
            self.stmt(st);
        }
    }

    fn stmt(&mut self, st: &Stmt) {
        match &st.kind {
            StmtKind::Let { value, .. } => self.expr(value),
            StmtKind::Notify {
                signal,
                index,
                target,
                value,
                ..
            } => {
                self.sigs.insert(*signal);
                index.iter().for_each(|i| self.expr(i));
                target.iter().for_each(|t| self.expr(t));
                self.expr(value);
            }
            StmtKind::Wait {
                signal,
                index,
                threshold,
                ..
            } => {
                self.sigs.insert(*signal);
                index.iter().for_each(|i| self.expr(i));
                self.expr(threshold);
            }
            StmtKind::Copy { dst, src } => {
                self.region(dst);
                self.region(src);
            }
            StmtKind::Get { dst, src, from: e } | StmtKind::Put { dst, to: e, src } => {
                self.region(dst);
                self.region(src);
                self.expr(e);
            }
            StmtKind::Reduce { dst, src, from, .. } => {
                self.region(dst);
                self.region(src);
                from.iter().for_each(|f| self.expr(f));
            }
            StmtKind::Fence => {}
            StmtKind::For { range, body, .. } => {
                if let Range::Span { lo, hi, step } | Range::Seq(Seq { lo, hi, step, .. }) = range {
                    self.expr(lo);
                    self.expr(hi);
                    self.expr(step);
                }
                self.block(body);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.cond(cond);
                self.block(then_block);
                else_block.iter().for_each(|e| self.block(e));
            }
            StmtKind::Return { cond } => self.cond(cond),
        }
    }
}

/// True if data may be stored to global memory by the statement itself (not nested ones).
fn stores_gm(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Copy { dst, .. }
        | StmtKind::Get { dst, .. }
        | StmtKind::Put { dst, .. }
        | StmtKind::Reduce { dst, .. } => super::is_window(dst),
        _ => false,
    }
}

/// True if every statement of the block (recursively) is a notify (or a let / loop / if of
/// notifies).
fn only(b: &Block, pred: &dyn Fn(&StmtKind) -> bool) -> bool {
    !b.stmts.is_empty()
        && b.stmts.iter().all(|s| match &s.kind {
            StmtKind::Let { .. } => true,
            StmtKind::For { body, .. } => only(body, pred),
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                only(then_block, pred)
                    && else_block
                        .as_ref()
                        .is_none_or(|e| e.stmts.is_empty() || only(e, pred))
            }
            k => pred(k),
        })
        && b.stmts
            .iter()
            .any(|s| !matches!(s.kind, StmtKind::Let { .. }))
}

fn is_notify(k: &StmtKind) -> bool {
    matches!(k, StmtKind::Notify { .. })
}
fn is_wait(k: &StmtKind) -> bool {
    matches!(k, StmtKind::Wait { .. })
}

/// May data be unpublished after the block, given `dirty` before it?
fn flow(b: &Block, mut dirty: bool) -> bool {
    for s in &b.stmts {
        dirty = match &s.kind {
            StmtKind::Notify { .. } => false,
            StmtKind::For { body, .. } => {
                let entry = loop_entry(body, dirty);
                dirty || flow(body, entry)
            }
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => flow(then_block, dirty) || else_block.as_ref().map_or(dirty, |e| flow(e, dirty)),
            _ => dirty || stores_gm(s),
        };
    }
    dirty
}

/// The (fixpoint) dirty state at the top of a loop body.
fn loop_entry(body: &Block, dirty: bool) -> bool {
    dirty || flow(body, dirty)
}

struct State<'k, 'a> {
    k: &'k Kernel<'a>,
    d: &'k dyn Dialect,
    /// Variables known to lie in `0..P`.
    rank_vars: HashSet<VarId>,
    /// Data may have been stored since the last publish.
    dirty: bool,
    /// Inside a notify-only loop whose publish was emitted in front of it.
    hoisted_notify: bool,
    /// Inside a wait-only loop (acquire after the loop).
    in_wait_loop: bool,
    /// Tile offsets of the data statement being lowered (dst, then src).
    tile_offsets: Vec<String>,
    /// Refusals (tile slices the dialect cannot address).
    errors: Vec<Diagnostic>,
}

impl State<'_, '_> {
    fn block(&mut self, w: &mut Writer, b: &Block) {
        let sole = b.stmts.len() == 1;
        let waits = |s: &Stmt| match &s.kind {
            StmtKind::For { body, .. } => only(body, &is_wait),
            k => is_wait(k),
        };
        for s in super::mutate::block(&b.stmts, &waits).iter() {
            self.stmt(w, s, sole);
        }
    }

    fn comment(&self, w: &mut Writer, s: &Stmt, text: String) {
        w.line(format!("// {}  {}", self.k.at(s.span), text));
    }

    fn stmt(&mut self, w: &mut Writer, s: &Stmt, sole: bool) {
        let k = self.k;
        let p = k.p;
        match &s.kind {
            StmtKind::Let { var, value } => self.let_stmt(w, s, *var, value),
            StmtKind::Notify {
                signal,
                index,
                target,
                op,
                value,
            } => {
                let text = stmt_head(p, &s.kind, Style::Comment);
                let (index, target, value) =
                    &super::mutate::notify(index, target.as_ref(), *op, value);
                if !self.hoisted_notify {
                    self.d.publish(k, w, self.dirty);
                    self.dirty = false;
                }
                self.comment(w, s, text.clone());
                let braces = !sole;
                if braces {
                    w.open("");
                }
                let mut checks = Vec::new();
                let cell = self.cell(*signal, index, &mut checks);
                let t = target.as_ref().map(|t| {
                    self.rank_check(t, &mut checks);
                    k.expr(t)
                });
                self.emit_checks(w, &checks, &text);
                let v = match value.as_const() {
                    Some(c) if i32::try_from(c).is_ok() => c.to_string(),
                    _ => format!("static_cast<int32_t>({})", k.expr(value)),
                };
                self.d.notify(k, w, &cell, t.as_deref(), *op, &v);
                if braces {
                    w.close();
                }
            }
            StmtKind::Wait {
                signal,
                index,
                cmp,
                threshold,
            } => self.wait(w, s, sole, (*signal, index), *cmp, threshold),
            StmtKind::Copy { dst, src } => {
                let text = stmt_head(p, &s.kind, Style::Comment);
                self.data(w, s, text, DataKind::Copy, dst, None, src, None);
            }
            StmtKind::Get { dst, src, from } => {
                let text = stmt_head(p, &s.kind, Style::Comment);
                self.data(w, s, text, DataKind::Copy, dst, None, src, Some(from));
            }
            StmtKind::Put { dst, to, src } => {
                let text = stmt_head(p, &s.kind, Style::Comment);
                self.data(w, s, text, DataKind::Copy, dst, Some(to), src, None);
            }
            StmtKind::Reduce {
                to: Some(_), op, ..
            } => self.unsupported_remote_reduce(s, *op),
            StmtKind::Reduce { dst, .. } if self.refuses_reduce(s, dst) => {}
            StmtKind::Reduce {
                op, dst, src, from, ..
            } => {
                let text = stmt_head(p, &s.kind, Style::Comment);
                let kind = DataKind::Reduce(*op);
                self.data(w, s, text, kind, dst, None, src, from.as_ref());
            }
            StmtKind::Fence => {
                self.comment(w, s, stmt_head(p, &s.kind, Style::Comment));
                if !super::mutate::active(super::mutate::Mutation::DropFence) {
                    self.d.fence(w);
                    self.d.trace_fence(w);
                }
            }
            StmtKind::For { var, range, body } => self.for_loop(w, s, *var, range, body),
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_chain(w, s, cond, then_block, else_block.as_ref()),
            StmtKind::Return { cond } => {
                self.comment(w, s, stmt_head(p, &s.kind, Style::Comment));
                w.open(format!("if ({})", k.cond(cond)));
                self.d.early_return(w);
                w.close();
            }
        }
    }

    /// A wait on `cell`: its index checks, the dialect's wait and (outside a
    /// wait loop) the acquire after it.
    fn wait(
        &mut self,
        w: &mut Writer,
        s: &Stmt,
        sole: bool,
        (signal, index): (SignalId, &[Expr]),
        cmp: CmpOp,
        threshold: &Expr,
    ) {
        let k = self.k;
        let p = k.p;
        let text = stmt_head(p, &s.kind, Style::Comment);
        self.comment(w, s, text.clone());
        let braces = !sole;
        if braces {
            w.open("");
        }
        let mut checks = Vec::new();
        let cell = self.cell(signal, index, &mut checks);
        self.emit_checks(w, &checks, &text);
        let t = match threshold.as_const() {
            Some(c) if i32::try_from(c).is_ok() => c.to_string(),
            _ => format!("static_cast<int32_t>({})", k.expr(threshold)),
        };
        self.d.wait(k, w, &cell, cmp, &t);
        if braces {
            w.close();
        }
        if !self.in_wait_loop {
            self.d.acquire(k, w);
        }
    }

    /// An `if` with its `else if` arms (printed flat) and its `else`; the data is
    /// dirty after it if it is after some arm (or before it, with no final `else`).
    fn if_chain(
        &mut self,
        w: &mut Writer,
        s: &Stmt,
        cond: &Cond,
        then_block: &Block,
        else_block: Option<&Block>,
    ) {
        let k = self.k;
        let p = k.p;
        self.comment(w, s, stmt_head(p, &s.kind, Style::Comment));
        let d0 = self.dirty;
        w.open(format!("if ({})", k.cond(cond)));
        self.block(w, then_block);
        let mut out = self.dirty;
        let mut else_block = else_block;
        let mut has_final_else = false;
        while let Some(e) = else_block {
            self.dirty = d0;
            // `else if` chains print flat.
            if let [Stmt {
                kind:
                    StmtKind::If {
                        cond,
                        then_block,
                        else_block: next,
                    },
                ..
            }] = e.stmts.as_slice()
            {
                w.reopen(&format!("else if ({})", k.cond(cond)));
                self.block(w, then_block);
                else_block = next.as_ref();
            } else {
                w.reopen("else");
                self.block(w, e);
                has_final_else = true;
                else_block = None;
            }
            out |= self.dirty;
        }
        w.close();
        self.dirty = out || (!has_final_else && d0);
    }

    /// A `let`: a `const int64_t`, with the `.coll` text in its comment.
    fn let_stmt(&self, w: &mut Writer, s: &Stmt, var: VarId, value: &Expr) {
        let k = self.k;
        let p = k.p;
        let attr = if k.used.contains(&var) {
            ""
        } else {
            "[[maybe_unused]] "
        };
        w.line(format!(
            "{attr}const int64_t {} = {};  // {}  {}",
            k.var(var),
            k.expr(value),
            k.at(s.span),
            stmt_head(p, &s.kind, Style::Comment)
        ));
    }

    /// Refuses a reduction of an element type the dialect's tile instructions do not take
    /// (`backend::elem-type`); returns whether it did.
    fn refuses_reduce(&mut self, s: &Stmt, dst: &Region) -> bool {
        let p = self.k.p;
        let t = match dst.buffer {
            BufferRef::Window(w) => p.windows[w].elem,
            BufferRef::Tile(t) => p.tiles[t].elem,
        };
        let Some(why) = self.d.cannot_reduce(t) else {
            return false;
        };
        self.errors.push(
            Diagnostic::error(
                "backend::elem-type",
                format!(
                    "this target cannot reduce {} elements: {why}",
                    t.as_str()
                ),
            )
            .with_primary(s.span, format!("a reduction of {}", t.as_str()))
            .with_help("emit another instance (`--elem`), or another target (`--target host`, `--target mpi`); a type is never converted"),
        );
        true
    }

    /// A reduction into a peer's window: refused (no target emits it yet).
    fn unsupported_remote_reduce(&mut self, s: &Stmt, op: ReduceOp) {
        // A reduction into a peer's window is verified and simulated; no target emits it yet.
        self.errors.push(
            Diagnostic::error(
                "backend::unsupported",
                format!("a reduction into a peer's window (`reduce {} ... @ ...`) is not emitted by any target yet", op.as_str()),
            )
            .with_primary(s.span, "reduce into a peer's window")
            .with_help("`collc verify` and `collc sim` judge it; emission (TPUT<AtomicType::AtomicAdd>, MPI_Accumulate, an atomic host loop) is not written yet"),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn data(
        &mut self,
        w: &mut Writer,
        s: &Stmt,
        text: String,
        kind: DataKind,
        dst: &Region,
        to: Option<&Expr>,
        src: &Region,
        from: Option<&Expr>,
    ) {
        self.comment(w, s, text.clone());
        let mut checks = Vec::new();
        let len = self.len_of(dst);
        self.tile_offsets.clear();
        let dst_loc = self.loc(dst, to, &mut checks);
        let dst_tile_offset = match dst_loc {
            Loc::Tile(_) => self.tile_offsets.pop().unwrap_or_else(|| "0".into()),
            Loc::Gm(_) => "0".into(),
        };
        let src_loc = self.loc(src, from, &mut checks);
        let src_tile_offset = match src_loc {
            Loc::Tile(_) => self.tile_offsets.pop().unwrap_or_else(|| "0".into()),
            Loc::Gm(_) => "0".into(),
        };
        if (dst_tile_offset != "0" || src_tile_offset != "0") && !self.d.supports_tile_offsets() {
            self.errors.push(
                Diagnostic::error(
                    "backend::unsupported",
                    format!("`{text}` addresses a tile slice that does not start at element 0, which this target does not support"),
                )
                .with_primary(s.span, "tile slice with an offset")
                .with_help("use a separate tile, or move the data through a window"),
            );
        }
        // Both regions must have the same length.
        let src_len = self.len_of(src);
        if src_len != len {
            checks.push(format!("{len} == {src_len}"));
        }
        self.emit_checks(w, &checks, &text);
        let op = DataOp {
            kind,
            dst: dst_loc,
            src: src_loc,
            len,
            dst_tile_offset,
            src_tile_offset,
        };
        self.d.trace_data(self.k, w, &op);
        self.d.data(self.k, w, &op);
        if stores_gm(s) {
            self.dirty = true;
        }
    }

    fn len_of(&self, r: &Region) -> String {
        let k = self.k;
        // `x[lo .. lo + len]` has length `len`.
        if let Expr::Bin(BinOp::Add, a, b) = &r.hi {
            if **a == r.lo {
                return k.expr(b);
            }
        }
        match r.lo.as_const() {
            Some(0) => k.expr(&r.hi),
            _ => {
                let hi = k.expr(&r.hi);
                let lo = k.expr(&Expr::Bin(
                    BinOp::Add,
                    Box::new(Expr::Int(0)),
                    Box::new(r.lo.clone()),
                ));
                let lo = lo.trim_start_matches("0 + ").to_string();
                if lo.contains(' ') {
                    format!("{hi} - ({lo})")
                } else {
                    format!("{hi} - {lo}")
                }
            }
        }
    }

    fn loc(&mut self, r: &Region, rank: Option<&Expr>, checks: &mut Vec<String>) -> Loc {
        let k = self.k;
        let dims = k.p.buffer_dims(r.buffer);
        for (i, x) in r.index.iter().enumerate() {
            self.index_check(x, &dims[i], checks);
        }
        let last = dims.last().expect("buffers have at least one dimension");
        match r.buffer {
            BufferRef::Window(wid) => {
                let lo_const = r.lo.as_const();
                let hi_const = r.hi.as_const();
                let last_const = last.as_const();
                let trivially = matches!((lo_const, hi_const, last_const), (Some(a), Some(b), Some(c)) if 0 <= a && a <= b && b <= c)
                    || (lo_const == Some(0) && r.hi == *last);
                if !trivially {
                    k.helper("slice");
                    checks.push(format!(
                        "collc_slice({}, {}, {})",
                        k.expr(&r.lo),
                        k.expr(&r.hi),
                        k.expr(last)
                    ));
                }
                let rank = rank.map(|x| {
                    self.rank_check(x, checks);
                    k.expr(x)
                });
                // Element offset: flat(index) * last + lo.
                let offset = if r.index.is_empty() {
                    k.expr(&r.lo)
                } else {
                    let mut idx = r.index.clone();
                    idx.push(r.lo.clone());
                    k.flat(&idx, dims)
                };
                let offset = offset
                    .strip_suffix(" + 0")
                    .map_or(offset.clone(), str::to_string);
                Loc::Gm(GmRef {
                    window: wid,
                    name: k.window_names[wid.index()].clone(),
                    offset,
                    rank,
                })
            }
            BufferRef::Tile(t) => {
                let cap = k.tiles[t.index()].cap;
                let last_const = last.as_const();
                let trivially = matches!((r.lo.as_const(), r.hi.as_const(), last_const), (Some(a), Some(b), Some(c)) if 0 <= a && a <= b && b <= c && b <= cap)
                    || (r.lo.as_const() == Some(0)
                        && r.hi == *last
                        && r.index.is_empty()
                        && last_const.is_some_and(|c| c <= cap));
                if !trivially {
                    k.helper("slice");
                    checks.push(format!(
                        "collc_slice({}, {}, {})",
                        k.expr(&r.lo),
                        k.expr(&r.hi),
                        k.expr(last)
                    ));
                }
                let offset = if r.index.is_empty() {
                    k.expr(&r.lo)
                } else {
                    let mut idx = r.index.clone();
                    idx.push(r.lo.clone());
                    k.flat(&idx, dims)
                };
                let offset = offset
                    .strip_suffix(" + 0")
                    .map_or(offset.clone(), str::to_string);
                self.tile_offsets.push(offset);
                Loc::Tile(t)
            }
        }
    }

    fn cell(&mut self, signal: SignalId, index: &[Expr], checks: &mut Vec<String>) -> CellRef {
        let k = self.k;
        let dims = &k.p.signals[signal].dims;
        for (x, d) in index.iter().zip(dims) {
            self.index_check(x, d, checks);
        }
        CellRef {
            signal,
            name: k.signal_names[signal.index()].clone(),
            flat: k.flat(index, dims),
        }
    }

    fn strip(e: &Expr) -> &Expr {
        match e {
            Expr::Rank(a) => Self::strip(a),
            _ => e,
        }
    }

    fn index_check(&self, x: &Expr, dim: &Expr, checks: &mut Vec<String>) {
        let k = self.k;
        let x = Self::strip(x);
        if let (Some(a), Some(b)) = (x.as_const(), dim.as_const()) {
            if 0 <= a && a < b {
                return;
            }
        }
        if let (Expr::Var(v), Expr::Var(world)) = (x, dim) {
            if *world == k.p.world && self.rank_vars.contains(v) {
                return;
            }
        }
        k.helper("in");
        checks.push(format!("collc_in({}, {})", k.expr(x), k.expr(dim)));
    }

    fn rank_check(&self, x: &Expr, checks: &mut Vec<String>) {
        self.index_check(x, &Expr::Var(self.k.p.world), checks);
    }

    fn emit_checks(&self, w: &mut Writer, checks: &[String], text: &str) {
        if checks.is_empty() {
            return;
        }
        let mut unique: Vec<&str> = Vec::new();
        for c in checks {
            if !unique.contains(&c.as_str()) {
                unique.push(c);
            }
        }
        let what = format!("{text} (index, rank or slice out of range)");
        self.d.check(w, &unique.join(" && "), &what);
    }

    /// A loop's C++ head (opened): the variable over the ranks, a span or a sequence's
    /// values. True when it opened an extra scope for the bounds it computes first.
    fn loop_head(&mut self, w: &mut Writer, var: VarId, range: &Range) -> bool {
        let k = self.k;
        let p = k.p;
        let v = k.var(var).to_string();
        let world = k.var(p.world).to_string();
        let mut extra = false;
        match range {
            Range::Peers | Range::Ranks => {
                self.rank_vars.insert(var);
                w.open(format!("for (int64_t {v} = 0; {v} < {world}; ++{v})"));
                if matches!(range, Range::Peers) {
                    w.line(format!("if ({v} == {}) continue;", k.var(p.me)));
                }
            }
            Range::Span { lo, hi, step } => {
                let simple = |e: &Expr| matches!(e, Expr::Int(_) | Expr::Var(_));
                let mut hi_s = k.expr(hi);
                let mut step_s = k.expr(step);
                if !simple(hi) || !simple(step) {
                    w.open("");
                    extra = true;
                    if !simple(hi) {
                        w.line(format!("const int64_t collc_{v}_end = {hi_s};"));
                        hi_s = format!("collc_{v}_end");
                    }
                    if !simple(step) {
                        w.line(format!("const int64_t collc_{v}_step = {step_s};"));
                        step_s = format!("collc_{v}_step");
                    }
                }
                let inc = if step.as_const() == Some(1) {
                    format!("++{v}")
                } else {
                    format!("{v} += {step_s}")
                };
                w.open(format!(
                    "for (int64_t {v} = {}; {v} < {hi_s}; {inc})",
                    k.expr(lo)
                ));
            }
            Range::Seq(q) => {
                // An index over the values; the variable is the j-th (reversed: from the end).
                k.helper("seq");
                w.open("");
                extra = true;
                w.line(format!("const int64_t collc_{v}_lo = {};", k.expr(&q.lo)));
                w.line(format!(
                    "const int64_t collc_{v}_step = {};",
                    k.expr(&q.step)
                ));
                w.line(format!(
                    "const int64_t collc_{v}_n = collc_seq_len(collc_{v}_lo, {}, collc_{v}_step, {});",
                    k.expr(&q.hi),
                    q.geometric
                ));
                w.open(format!(
                    "for (int64_t collc_{v}_j = 0; collc_{v}_j < collc_{v}_n; ++collc_{v}_j)"
                ));
                let j = if q.rev {
                    format!("collc_{v}_n - 1 - collc_{v}_j")
                } else {
                    format!("collc_{v}_j")
                };
                w.line(format!(
                    "const int64_t {v} = collc_seq_at(collc_{v}_lo, collc_{v}_step, {}, {j});",
                    q.geometric
                ));
            }
        }
        extra
    }

    fn for_loop(&mut self, w: &mut Writer, s: &Stmt, var: VarId, range: &Range, body: &Block) {
        let k = self.k;
        let p = k.p;
        let head_text = stmt_head(p, &s.kind, Style::Comment);
        let notify_only = only(body, &is_notify);
        let wait_only = only(body, &is_wait);
        let hoist_publish = notify_only && !self.hoisted_notify;
        if hoist_publish {
            self.d.publish(k, w, self.dirty);
            self.dirty = false;
        }
        self.comment(w, s, head_text);
        let saved_rank_vars = self.rank_vars.clone();
        let extra_close = self.loop_head(w, var, range);
        let dirty_in = self.dirty;
        let saved_hoist = self.hoisted_notify;
        let saved_wait = self.in_wait_loop;
        if notify_only {
            self.hoisted_notify = true;
        }
        if wait_only {
            self.in_wait_loop = true;
        }
        self.dirty = loop_entry(body, dirty_in);
        self.block(w, body);
        let body_out = self.dirty;
        self.hoisted_notify = saved_hoist;
        self.in_wait_loop = saved_wait;
        w.close();
        if extra_close {
            w.close();
        }
        self.rank_vars = saved_rank_vars;
        self.dirty = if notify_only {
            dirty_in && !hoist_publish
        } else {
            dirty_in || body_out
        };
        if wait_only && !self.in_wait_loop {
            self.d.acquire(k, w);
        }
    }
}

impl Writer {
    /// A writer continuing `text` at indentation `indent`.
    pub fn from_text(text: String, indent: usize) -> Writer {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        Writer { lines, indent }
    }
    /// One more level of indentation.
    pub fn indent_in(&mut self) {
        self.indent += 1;
    }
}
