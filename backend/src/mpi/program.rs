//! The parts of a generated MPI program around the kernel: the `Args` struct, `setup()`
//! (parameters, rank-uniform values, symmetric objects), `begin_call()` (per-call
//! instances), the block loop `kernel()`, and `prepare()` / `check()`. What the collective
//! computes is not generated here: `prepare()` and `check()` hand the program's windows and
//! signal cells to the runtime's `collc_mpi::oracle`, which stages and checks what the run's
//! table says (generated from `collc_spec::meaning` by [`crate::mpi::table`]).

use crate::cpp::{c_string, int_lit, Kernel, Writer};
use collc_spec::ir::*;
use collc_spec::print::{cond_to_string, expr_to_string};

/// Field names of `Args`, derived from the kernel's C++ names.
pub(crate) struct Names<'k, 'a> {
    k: &'k Kernel<'a>,
}

impl<'k, 'a> Names<'k, 'a> {
    pub(crate) fn of(k: &'k Kernel<'a>) -> Self {
        Names { k }
    }
    pub(crate) fn signal_field(&self, s: SignalId) -> String {
        format!("sig_{}", self.k.signal_names[s.index()])
    }
    pub(crate) fn window_field(&self, w: WindowId) -> String {
        format!("win_{}", self.k.window_names[w.index()])
    }
    /// The per-call instances of a `per call` window (one MPI window per call).
    pub(crate) fn window_calls(&self, w: WindowId) -> String {
        format!("wins_{}", self.k.window_names[w.index()])
    }
    /// The first cell of instance 0 of a `per call` value signal.
    pub(crate) fn signal_first(&self, s: SignalId) -> String {
        format!("sig0_{}", self.k.signal_names[s.index()])
    }
    pub(crate) fn window_len(&self, w: WindowId) -> String {
        format!("len_{}", self.k.window_names[w.index()])
    }
    pub(crate) fn array_field(&self, a: ArrayId) -> String {
        format!("arr_{}", self.k.array_names[a.index()])
    }
    pub(crate) fn array_len(&self, a: ArrayId) -> String {
        format!("alen_{}", self.k.array_names[a.index()])
    }
    pub(crate) fn signal_cells(&self, s: SignalId) -> String {
        format!("cells_{}", self.k.signal_names[s.index()])
    }
    pub(crate) fn param_field(&self, v: VarId) -> String {
        format!("p_{}", self.k.var(v))
    }
    pub(crate) fn tile_field(&self, t: TileId) -> String {
        format!("tile_{}", self.k.tiles[t.index()].name)
    }
}

pub(crate) fn dims_text(p: &Protocol, dims: &[Expr]) -> String {
    dims.iter()
        .map(|d| format!("[{}]", expr_to_string(p, d)))
        .collect::<Vec<_>>()
        .join("")
}

/// `(d0) * (d1) * ...` as C++.
fn product(k: &Kernel, dims: &[Expr]) -> String {
    if dims.is_empty() {
        return "1".to_string();
    }
    dims.iter()
        .map(|d| {
            let s = k.expr(d);
            if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                s
            } else {
                format!("({s})")
            }
        })
        .collect::<Vec<_>>()
        .join(" * ")
}

/// The `Args` struct: everything `kernel()`, `prepare()` and `check()` need.
pub(crate) fn args_struct(k: &Kernel, n: &Names, w: &mut Writer) {
    let p = k.p;
    let outer = w;
    let mut inner = Writer::default();
    let w = &mut inner;
    w.line("// Everything the kernel needs: window handles, signal cell bases, params (setup() fills it).");
    w.open("struct Args");
    w.line("collc_mpi::Window* sigwin = nullptr;  // THE signal window: every signal array is a run of int32 cells in it");
    for d in &p.decls {
        args_field(k, n, *d, w);
    }
    for s in ["stage_a", "stage_b"].iter().take(k.stages) {
        w.line(format!(
            "{}* {s} = nullptr;  // staging buffer (rank-local) for remote reductions",
            k.stage_elem.cpp()
        ));
    }
    w.line("int64_t collc_blocks = 1;  // blocks per rank (run one after another by kernel())");
    if p.semantics.root().is_some() {
        let kind = p.semantics.kind();
        w.line(format!("int64_t collc_root = 0;  // the {kind} root"));
    }
    if p.semantics.is_barrier() {
        w.line("// Harness only (the barrier's stamp rule, block_enter() / block_leave()):");
        w.line("collc_mpi::Window* collc_arrivals = nullptr;  // int32[np * blocks] on rank 0: calls entered by block b of rank q, at q * blocks + b");
        w.line("mutable bool collc_stamps = false;  // from prepare() to check(): a library (no prepare()) and a kernel() timed alone do not stamp");
        w.line("mutable long collc_early = 0;  // (block, peer block) pairs of this call whose exit came before the entry it waits for");
        w.line("mutable char collc_early_msg[200] = {};  // the first of them");
    }
    w.close();
    // `struct Args { ... };`: the writer closes blocks with `}`.
    for line in inner.finish().lines() {
        if line == "}" {
            outer.line("};");
        } else {
            outer.line(line);
        }
    }
}

/// The fields of `Args` one declaration adds.
fn args_field(k: &Kernel, n: &Names, d: Decl, w: &mut Writer) {
    let p = k.p;
    match d {
        Decl::Signal(s) => {
            let sig = &p.signals[s];
            let kind = match sig.kind {
                SignalKind::Credit => "credit signal",
                SignalKind::Value => "value signal (Set only, never reset)",
            };
            w.line(format!(
                "MPI_Aint {} = 0;  // {kind} {}{}: first cell",
                n.signal_field(s),
                sig.name,
                dims_text(p, &sig.dims)
            ));
            w.line(format!(
                "int64_t {} = 0;  // its cell count",
                n.signal_cells(s)
            ));
            if p.signal_per_call(s) {
                w.line(format!(
                    "MPI_Aint {} = 0;  // per call: instance 0's first cell; call k's is + k * cells (begin_call)",
                    n.signal_first(s)
                ));
            }
        }
        Decl::Window(x) => {
            let win = &p.windows[x];
            w.line(format!(
                "collc_mpi::Window* {} = nullptr;  // window {}: {}{} (MPI_Win_allocate)",
                n.window_field(x),
                win.name,
                win.elem.as_str(),
                dims_text(p, &win.dims)
            ));
            w.line(format!(
                "int64_t {} = 0;  // its element count",
                n.window_len(x)
            ));
            if p.window_per_call(x) {
                w.line(format!(
                    "std::vector<collc_mpi::Window*> {};  // per call: one window per call; begin_call(k) selects instance k",
                    n.window_calls(x)
                ));
            }
        }
        Decl::Array(a) => {
            let arr = &p.arrays[a];
            w.line(format!(
                "int64_t* {} = nullptr;  // host array {}: int{} in {}..={} (rank-local input)",
                n.array_field(a),
                arr.name,
                dims_text(p, &arr.dims),
                arr.domain.0,
                arr.domain.1
            ));
            w.line(format!(
                "int64_t {} = 0;  // its element count",
                n.array_len(a)
            ));
        }
        Decl::Tile(t) => {
            let tile = &p.tiles[t];
            w.line(format!(
                "{}* {} = nullptr;  // tile {}: {}{} (rank-local, not a window)",
                tile.elem.cpp(),
                n.tile_field(t),
                tile.name,
                tile.elem.as_str(),
                dims_text(p, &tile.dims)
            ));
        }
        Decl::Var(v) if matches!(p.vars[v].kind, VarKind::Param { .. }) => {
            w.line(format!(
                "int64_t {} = 0;  // param {}",
                n.param_field(v),
                p.vars[v].name
            ));
        }
        _ => {}
    }
}

/// `setup()`: reads and checks the parameters (so the kernel's guards never fire), computes
/// the rank-uniform values, declares the symmetric objects in declaration order.
pub(crate) fn setup(k: &Kernel, n: &Names, w: &mut Writer) {
    let p = k.p;
    w.line("// Reads and checks the parameters (mpirun -np, --param), computes the rank-uniform values");
    w.line("// and declares the symmetric objects, in the same order and sizes on every rank.");
    w.open("void setup(collc_mpi::Session& s, Args& args)");
    w.line("args.sigwin = s.signal_window();");
    for d in &p.decls {
        setup_decl(k, n, *d, w);
    }
    for st in ["stage_a", "stage_b"].iter().take(k.stages) {
        w.line(format!(
            "args.{st} = s.local_buffer<{}>(\"collc_{st}\", kStage);",
            k.stage_elem.cpp()
        ));
    }
    if let Some(root) = p.semantics.root() {
        let world = k.var(p.world);
        let kind = p.semantics.kind();
        w.line(format!("args.collc_root = {};", k.var(root)));
        w.line(format!(
            "if (args.collc_root < 0 || args.collc_root >= {world}) collc_mpi::usage_error(\"{kind} root %lld is not a rank\", static_cast<long long>(args.collc_root));"
        ));
    }
    if p.semantics.is_barrier() {
        w.line("args.collc_arrivals = s.buffer<int32_t>(\"collc_arrivals\", MPI_Aint(s.np()) * (args.collc_blocks > 0 ? args.collc_blocks : 1));");
    }
    w.close();
}

/// What `setup()` does for one declaration.
fn setup_decl(k: &Kernel, n: &Names, d: Decl, w: &mut Writer) {
    let p = k.p;
    match d {
        Decl::Var(v) => setup_var(k, n, v, w),
        Decl::Require(i) => {
            let r = &p.requires[i];
            let text = format!("require {};", cond_to_string(p, &r.cond));
            w.line(format!(
                "if (!({})) collc_mpi::usage_error(\"%s\", {});",
                k.cond(&r.cond),
                c_string(&format!("{text} does not hold for these parameters"))
            ));
        }
        Decl::Calls | Decl::Type | Decl::Op => {}
        Decl::Blocks => {
            if let Some(b) = &p.blocks {
                w.line(format!(
                    "args.collc_blocks = {};  // blocks {} in 0..{}",
                    k.expr(&b.count),
                    p.vars[b.var].name,
                    expr_to_string(p, &b.count)
                ));
                w.line(
                    "if (args.collc_blocks < 0) collc_mpi::usage_error(\"negative block count\");",
                );
            }
        }
        Decl::Signal(s) => {
            let sig = &p.signals[s];
            let f = match sig.kind {
                // A monotonic signal keeps its count: exempt from the all-zero check.
                SignalKind::Credit if sig.monotonic => "value_signal",
                SignalKind::Credit => "signal",
                SignalKind::Value if p.signal_per_call(s) => "value_signal_per_call",
                SignalKind::Value => "value_signal",
            };
            let count = n.signal_cells(s);
            let field = if p.signal_per_call(s) {
                n.signal_first(s)
            } else {
                n.signal_field(s)
            };
            declare(
                k,
                w,
                "signal",
                &sig.name,
                &sig.dims,
                &count,
                &format!("{field} = s.{f}"),
            );
        }
        Decl::Window(x) => {
            let win = &p.windows[x];
            let t = win.elem.cpp();
            let alloc = if p.window_per_call(x) {
                format!("{} = s.buffers_per_call<{t}>", n.window_calls(x))
            } else {
                format!("{} = s.buffer<{t}>", n.window_field(x))
            };
            declare(
                k,
                w,
                "window",
                &win.name,
                &win.dims,
                &n.window_len(x),
                &alloc,
            );
        }
        Decl::Array(a) => {
            let arr = &p.arrays[a];
            let field = n.array_field(a);
            let what = format!("{field} = s.local_buffer<int64_t>");
            declare(k, w, "array", &arr.name, &arr.dims, &n.array_len(a), &what);
        }
        Decl::Tile(t) => {
            let info = &k.tiles[t.index()];
            w.line(format!(
                "args.{} = s.local_buffer<{}>({}, {});",
                n.tile_field(t),
                p.tiles[t].elem.cpp(),
                c_string(&p.tiles[t].name),
                info.cap
            ));
        }
    }
}

/// `setup()` for one variable: reads, checks and names it.
fn setup_var(k: &Kernel, n: &Names, v: VarId, w: &mut Writer) {
    let p = k.p;
    let var = &p.vars[v];
    let c = k.var(v);
    match &var.kind {
        VarKind::World { lo, hi } => {
            w.line(format!(
                "[[maybe_unused]] const int64_t {c} = s.np();  // ranks {} in {lo}..={hi}",
                var.name
            ));
            let lim = k.world_limit;
            let why = if lim < *hi {
                format!(
                    "; the verdict covers {} <= {lim} of the declared {lo}..={hi}",
                    var.name
                )
            } else {
                String::new()
            };
            w.line(format!(
                "if ({c} < {} || {c} > {}) collc_mpi::usage_error(\"ranks {} = %lld is outside {lo}..={lim} (mpirun -np{why})\", static_cast<long long>({c}));",
                int_lit(*lo),
                int_lit(lim),
                var.name
            ));
        }
        VarKind::Param {
            domain: Some((lo, hi)),
        } => {
            w.line(format!(
                "if (!s.has_param({})) collc_mpi::usage_error(\"missing --param {}=VALUE (param {}: int in {lo}..={hi})\");",
                c_string(&var.name),
                var.name,
                var.name
            ));
            w.line(format!(
                "[[maybe_unused]] const int64_t {c} = s.param_i64({}, 0);",
                c_string(&var.name)
            ));
            w.line(format!(
                "if ({c} < {} || {c} > {}) collc_mpi::usage_error(\"--param {}=%lld is outside {lo}..={hi}\", static_cast<long long>({c}));",
                int_lit(*lo),
                int_lit(*hi),
                var.name
            ));
            w.line(format!("args.{} = {c};", n.param_field(v)));
        }
        VarKind::Param { domain: None } => {
            let world = k.var(p.world);
            w.line(format!(
                "[[maybe_unused]] const int64_t {c} = s.param_i64({}, 0);  // param {}: rank (default 0)",
                c_string(&var.name),
                var.name
            ));
            w.line(format!(
                "if ({c} < 0 || {c} >= {world}) collc_mpi::usage_error(\"--param {}=%lld is not a rank in 0..%lld\", static_cast<long long>({c}), static_cast<long long>({world}));",
                var.name
            ));
            w.line(format!("args.{} = {c};", n.param_field(v)));
        }
        VarKind::Const(x) => {
            w.line(format!(
                "[[maybe_unused]] constexpr int64_t {c} = {};  // const {}",
                int_lit(*x),
                var.name
            ));
        }
        VarKind::Derived(e) => {
            w.line(format!(
                "[[maybe_unused]] const int64_t {c} = {};  // let {} = {}",
                k.expr(e),
                var.name,
                expr_to_string(p, e)
            ));
        }
        _ => {}
    }
}

/// `args.COUNT = dims product; (checked); args.ALLOC(name, max(1, count));`
fn declare(
    k: &Kernel,
    w: &mut Writer,
    what: &str,
    name: &str,
    dims: &[Expr],
    count: &str,
    alloc: &str,
) {
    w.line(format!("args.{count} = {};", product(k, dims)));
    w.line(format!(
        "if (args.{count} < 0) collc_mpi::usage_error(\"{what} {name} has a negative dimension\");"
    ));
    w.line(format!(
        "args.{alloc}({}, std::max<int64_t>(1, args.{count}));",
        c_string(name)
    ));
}

/// `begin_call()`: selects call `call`'s instance of every `per call` window and value signal
/// (the launcher calls it before `prepare()`; `kernel()`, `prepare()` and `check()` then see
/// only the call's own buffers). Empty when every buffer is reused (always emitted, so a
/// host embedding the program, e.g. the bench server, can call it).
pub(crate) fn begin_call(k: &Kernel, n: &Names, w: &mut Writer) {
    let p = k.p;
    let mut lines = Vec::new();
    for d in &p.decls {
        match *d {
            Decl::Window(x) if p.window_per_call(x) => lines.push(format!(
                "args.{} = args.{}[static_cast<size_t>(call)];",
                n.window_field(x),
                n.window_calls(x)
            )),
            Decl::Signal(s) if p.signal_per_call(s) => lines.push(format!(
                "args.{} = args.{} + MPI_Aint(call) * MPI_Aint(args.{});",
                n.signal_field(s),
                n.signal_first(s),
                n.signal_cells(s)
            )),
            _ => {}
        }
    }
    if lines.is_empty() {
        w.line("// Every buffer is reused: nothing to select per call.");
        w.line("void begin_call(Args& args, int call) { (void)args; (void)call; }");
        w.line("");
        return;
    }
    w.line("// Call `call`'s own instance of every `per call` buffer (allocated up front by setup(), one");
    w.line(
        "// per call, never used by another call): peers address the same instance, so nothing of",
    );
    w.line("// call k can race with call k+1 on it.");
    w.open("void begin_call(Args& args, int call)");
    for l in lines {
        w.line(l);
    }
    w.close();
    w.line("");
}

/// `kernel()`: every block of this rank, in turn (for a barrier, between its stamp hooks).
pub(crate) fn kernel(p: &Protocol, w: &mut Writer) {
    if p.semantics.is_barrier() {
        block_stamps(p, w);
    }
    w.line("// The protocol on this rank: its blocks one after another (block b synchronises with");
    w.line("// block b of every peer through its own lanes).");
    w.open("void kernel(const collc_mpi::Ctx& ctx, const Args& args)");
    if p.semantics.is_barrier() {
        w.open("for (int64_t b = 0; b < args.collc_blocks; ++b)");
        w.line("if (args.collc_stamps) block_enter(ctx, args, b);");
        w.line("kernel_block(ctx, args, b);");
        w.line("if (args.collc_stamps) block_leave(ctx, args, b);");
        w.close();
    } else {
        w.line("for (int64_t b = 0; b < args.collc_blocks; ++b) kernel_block(ctx, args, b);");
    }
    w.close();
}

/// A barrier's stamp rule per block (`collc_spec::meaning::barrier_peers`, the rule the host
/// target checks with its enter/leave hooks): `block_enter()` counts block b's entry into the
/// call on rank 0, flushed before the block's first notify; `block_leave()` requires, when
/// block b leaves call c, that every block it synchronises with on every other rank (`barrier()`:
/// every block; `barrier(blk)`: block b) has entered call c, and records a violation for
/// `check()` otherwise. Only between `prepare()` and `check()` (a run's call): a library never
/// calls them, and a benchmark timing `kernel()` alone is not stamped.
fn block_stamps(p: &Protocol, w: &mut Writer) {
    let (lo, hi) = match p.semantics {
        Semantics::Barrier { lane: Some(_) } => ("b", "b + 1"),
        _ => ("0", "args.collc_blocks"),
    };
    w.line("// The barrier's stamp rule, per block: block b of rank q counts its entries into calls in");
    w.line("// rank 0's collc_arrivals[q * blocks + b] (flushed before its first notify).");
    w.open("inline void block_enter(const collc_mpi::Ctx& ctx, const Args& args, int64_t b)");
    w.line("collc_mpi::harness_add_i32(*args.collc_arrivals, 0, MPI_Aint(ctx.me * args.collc_blocks + b), 1);");
    w.close();
    w.line("");
    w.line(format!(
        "// When block b leaves call c, the blocks [{lo}, {hi}) of every other rank have entered call c."
    ));
    w.open("inline void block_leave(const collc_mpi::Ctx& ctx, const Args& args, int64_t b)");
    w.open("for (int q = 0; q < ctx.np; ++q)");
    w.line("if (q == ctx.me) continue;");
    w.open(format!("for (int64_t l = {lo}; l < {hi}; ++l)"));
    w.line("const int32_t entered = collc_mpi::harness_read_i32(*args.collc_arrivals, 0, MPI_Aint(q * args.collc_blocks + l));");
    w.line("if (entered > ctx.call) continue;");
    w.line("if (args.collc_early++ > 0) continue;");
    w.line("snprintf(args.collc_early_msg, sizeof args.collc_early_msg, \"barrier left early: block %lld left the call before block %lld of rank %d had entered it (%d calls entered)\",");
    w.line("         static_cast<long long>(b), static_cast<long long>(l), q, entered);");
    w.close();
    w.close();
    w.close();
    w.line("");
}

/// `DECL[] = {items};  // comment` and the `pointer, length` arguments that pass it
/// (`nullptr, 0` for no items: C++ has no empty arrays).
fn c_array(w: &mut Writer, decl: &str, items: Vec<String>, comment: &str) -> String {
    if items.is_empty() {
        return "nullptr, 0".to_string();
    }
    let name = decl.rsplit(' ').next().unwrap_or(decl);
    w.line(format!(
        "{decl}[] = {{{}}};  // {comment}",
        items.join(", ")
    ));
    format!("{name}, sizeof {name} / sizeof {name}[0]")
}

/// This call's instance of every window, by WindowId.
fn windows_array(p: &Protocol, n: &Names, w: &mut Writer) -> String {
    let items = (0..p.windows.len())
        .map(|x| format!("args.{}", n.window_field(Id::new(x))))
        .collect();
    let what = "by WindowId (this call's instances)";
    c_array(w, "collc_mpi::Window* const wins", items, what)
}

/// `prepare()`: this rank's inputs of call `ctx.call` (the table's inputs, the payload
/// convention of `collc_mpi::oracle`), written with plain stores into its own windows (the
/// kernel's first notify publishes them); host arrays on every rank.
pub(crate) fn prepare(k: &Kernel, n: &Names, w: &mut Writer) {
    let p = k.p;
    w.line("// Inputs of call ctx.call (the run's oracle table): plain stores into this rank's own windows;");
    w.line("// the kernel's first notify publishes them (release, collc_mpi.hpp 3(a)).");
    w.open("void prepare(const collc_mpi::Ctx& ctx, const Args& args)");
    if p.semantics.is_barrier() {
        w.line("args.collc_stamps = true;  // the barrier's stamp rule (block_enter() / block_leave())");
    } else if p.windows.is_empty() && p.arrays.is_empty() {
        w.line("(void)args;  // nothing to stage");
    }
    let wins = windows_array(p, n, w);
    w.line(format!("collc_mpi::oracle::stage(ctx, {wins});"));
    for d in &p.decls {
        if let Decl::Array(a) = *d {
            let (lo, hi) = p.arrays[a].domain;
            w.line(format!(
                "for (int64_t i = 0; i < args.{}; ++i) args.{}[i] = collc_mpi::oracle::array_value({}, {}, {a}, ctx.me, ctx.call, i);",
                n.array_len(a),
                n.array_field(a),
                int_lit(lo),
                int_lit(hi)
            ));
        }
    }
    w.close();
}

/// `check()`: this rank's outputs of call `ctx.call` against the run's oracle table (the
/// collective's meaning); for a barrier, the early block exits `block_leave()` recorded.
pub(crate) fn check(k: &Kernel, n: &Names, w: &mut Writer) {
    let p = k.p;
    w.line(
        "// Outputs of call ctx.call against the run's oracle table (exact: the payloads are small",
    );
    w.line("// integers or powers of two).");
    w.open("void check(const collc_mpi::Ctx& ctx, const Args& args, collc_mpi::Checker& chk)");
    let wins = windows_array(p, n, w);
    let items = (0..p.signals.len())
        .map(|s| format!("args.{}", n.signal_field(Id::new(s))))
        .collect();
    let what = "first cells by SignalId (this call's instances)";
    let sigs = c_array(w, "const MPI_Aint sigs", items, what);
    w.line(format!(
        "collc_mpi::oracle::check(ctx, {wins}, *args.sigwin, {sigs}, chk);"
    ));
    if p.semantics.is_barrier() {
        w.line(
            "// The barrier's stamp rule (block_leave() above): the block exits of this call that",
        );
        w.line("// came before a block they wait for had entered it.");
        w.open("if (args.collc_early > 0)");
        w.line("char msg[300];");
        w.line("snprintf(msg, sizeof msg, \"%s; %ld (block, peer block) pair(s) left early in this call\", args.collc_early_msg, args.collc_early);");
        w.line("chk.fail(msg);");
        w.line("args.collc_early = 0;");
        w.close();
        w.line("args.collc_stamps = false;  // until the next prepare(): a kernel() timed alone is not stamped");
    }
    w.close();
}
