//! The pypto builtin ABI (`collc emit --target ascend --abi pypto`): the kernel takes exactly
//! the args block pypto's runtime hands its host collective builtins
//! (`python/pypto/runtime/builtins/collectives/<name>/templates/{entry,kernel}.cpp.in` in
//! hw-native-sys/pypto), so it can stand in for the hand-written `kernel.cpp` of that builtin:
//!
//! ```text
//! args[0 .. T-1]  __gm__ ChipTensor*   the builtin's tensors: its windows in the order of the
//!                                      collective's roles (input, target / data), then the signal
//! args[T]         nranks               the rank count
//! args[T+1]       __gm__ CommContext*  this rank's context
//! ```
//!
//! A buffer's address is `buffer.addr + start_offset` (elements); the protocol's parameters
//! are derived the way the builtins derive them ([`Derive`]): from the tensors' shapes, the
//! launch's block count, and for a broadcast's root pypto's compile-time `kRoot` (the macro
//! `COLLC_PYPTO_ROOT`). A protocol that does not have a builtin's args (other buffers, host
//! arrays, value signals, a parameter no builtin arg determines) is refused with
//! `backend::pypto-abi`, naming what does not fit. `docs/pypto-abi.md` documents the mapping.
//!
//! Everything but the entry is the `pto::comm` dialect ([`super::pto::Pto`]); [`cpu_shim`]
//! wraps the same source for the CPU launcher (tests run it on threads).

use super::pto::Pto;
use super::walk::{self, CellRef, DataOp, Dialect};
use super::{EmitOptions, Kernel, Target, Writer};
use crate::layout::BufferSource;
use collc_grammar::{Diagnostic, Span};
use collc_spec::ir::Id;
use collc_spec::ir::{
    CmpOp, Expr, NotifyOp, Protocol, Semantics, SignalKind, VarId, VarKind, WindowId,
};

/// The diagnostic code of a protocol without a pypto builtin counterpart.
pub const CODE: &str = "backend::pypto-abi";

/// How a scalar of the protocol is obtained from the pypto args block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derive {
    /// `nranks` (`args[T]`).
    Nranks,
    /// The element count of tensor `i` (product of its shapes): a one-dimensional window's
    /// length (pypto's `numel`).
    Numel(usize),
    /// The last dimension of tensor `i`: a row width (pypto's `row_elems`, `SIZE`).
    LastDim(usize),
    /// The columns of the signal tensor `i`: `shapes[ndims-1]` if it has two or more
    /// dimensions, else 1 (pypto's `signal_stride`).
    SignalCols(usize),
    /// The rows per rank of tensor `i`, `shapes[0] / nranks` (pypto's all_to_all_v
    /// `max_recv = target.shape[0] / nranks`).
    RowsPerRank(usize),
    /// The launch's block count, `get_block_num(args)` (pypto's `core_num`).
    BlockNum,
    /// The broadcast root: pypto's compile-time `kRoot = {{root_cpp}}`, here the macro
    /// `COLLC_PYPTO_ROOT`.
    Root,
}

/// How a protocol maps onto a pypto builtin's args.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The builtin (`builtin.tensor.<name>`).
    pub builtin: &'static str,
    /// Its templates' directory under `python/pypto/runtime/builtins/collectives/`.
    pub dir: &'static str,
    /// The tensors, in args order.
    pub tensors: Vec<BufferSource>,
    /// The index in `tensors` of the credit signal.
    pub signal: usize,
    /// The shape pypto passes for each tensor (row-major, `tensors` order): the `.coll`
    /// dimensions, except all_to_all_v's `[P][R][m]` windows, which pypto passes as
    /// `[P * R, m]` (`[NR * max_recv, SIZE]`).
    pub shapes: Vec<Vec<Expr>>,
    /// Every scalar input of the protocol (world size first) and how it is derived.
    pub scalars: Vec<(VarId, Derive)>,
}

fn refuse(p: &Protocol, at: Span, label: &str, what: String) -> Vec<Diagnostic> {
    vec![Diagnostic::error(
        CODE,
        format!("`{}` has no pypto builtin counterpart: {what}", p.name),
    )
    .with_primary(at, label.to_string())
    .with_help(
        "`--abi pypto` maps barrier, broadcast, allreduce (mesh, multicore, ring), reduce_scatter, \
         allgather, all_to_all and all_to_all_v protocols whose buffers are the builtin's tensors \
         (docs/pypto-abi.md); emit with the collc ABI (no `--abi`) otherwise",
    )]
}

/// A builtin's args before the protocol is fitted to them.
struct Builtin {
    /// `builtin.tensor.<name>`.
    name: &'static str,
    /// Its templates' directory.
    dir: &'static str,
    /// The data windows (before the signal).
    windows: Vec<WindowId>,
    /// The tensors after the signal (all_to_all_v's send_counts and recv_counts).
    after: Vec<BufferSource>,
}

impl Builtin {
    fn new(name: &'static str, dir: &'static str, windows: Vec<WindowId>) -> Self {
        Builtin {
            name,
            dir,
            windows,
            after: vec![],
        }
    }
}

/// The pypto builtin a protocol's collective kind stands in for.
fn builtin(p: &Protocol) -> Result<Builtin, Vec<Diagnostic>> {
    Ok(match &p.semantics {
        Semantics::Reduce { .. } | Semantics::Gather { .. } | Semantics::Scatter { .. } => {
            let kind = p.semantics.kind();
            return Err(refuse(
                p,
                p.span,
                "this collective",
                format!("pypto has no `{kind}` builtin"),
            ));
        }
        Semantics::Barrier { lane: Some(v) } => {
            return Err(refuse(
                p,
                p.vars[*v].span,
                "the per-lane barrier's block variable",
                "pypto's only barrier, builtin.tensor.barrier (pld.tensor.barrier), synchronises \
                 every rank through one cell per rank (a [NR, 1] signal) and has no per-lane or \
                 per-block form, so a `barrier(blk)` protocol would be emitted as a barrier it \
                 is not"
                    .to_string(),
            ));
        }
        Semantics::Barrier { lane: None } => {
            Builtin::new("builtin.tensor.barrier", "barrier", vec![])
        }
        Semantics::Broadcast { data, .. } => {
            Builtin::new("builtin.tensor.broadcast", "broadcast", vec![*data])
        }
        Semantics::ReduceScatter { data, .. } => Builtin::new(
            "builtin.tensor.reduce_scatter",
            "reduce_scatter",
            vec![*data],
        ),
        Semantics::Allgather { input, target } => Builtin::new(
            "builtin.tensor.allgather",
            "allgather",
            vec![*input, *target],
        ),
        Semantics::AllToAll { input, target } => Builtin::new(
            "builtin.tensor.all_to_all",
            "all_to_all",
            vec![*input, *target],
        ),
        Semantics::AllToAllV {
            input,
            target,
            send_counts,
            recv_counts,
            ..
        } => Builtin {
            after: vec![
                BufferSource::Array(*send_counts),
                BufferSource::Signal(*recv_counts),
            ],
            ..Builtin::new(
                "builtin.tensor.all_to_all_v",
                "all_to_all_v",
                vec![*input, *target],
            )
        },
        Semantics::Allreduce { data, .. } => {
            let ring = p.blocks.is_none()
                && p.signals.len() == 1
                && p.signals[0].dims.len() == 2
                && !matches!(p.signals[0].dims[0], Expr::Var(v) if v == p.world);
            if ring {
                Builtin::new(
                    "builtin.tensor.allreduce_ring",
                    "allreduce_ring",
                    vec![*data],
                )
            } else {
                Builtin::new("builtin.tensor.allreduce", "allreduce", vec![*data])
            }
        }
    })
}

/// The protocol's host arrays and windows must be the builtin's tensors.
fn check_arrays_and_windows(p: &Protocol, b: &Builtin) -> Result<(), Vec<Diagnostic>> {
    let passed_array = |a: usize| b.after.contains(&BufferSource::Array(Id::new(a)));
    if let Some((_, a)) = p.arrays.iter().enumerate().find(|(i, _)| !passed_array(*i)) {
        return Err(refuse(
            p,
            a.span,
            "no builtin arg carries this",
            format!(
                "{} passes no host array{}, and this protocol declares {}",
                b.name,
                if b.after.is_empty() {
                    ""
                } else {
                    " but send_counts"
                },
                a.name
            ),
        ));
    }
    if p.windows.len() != b.windows.len() {
        let extra = collc_spec::id::enumerate(&p.windows).find(|(i, _)| !b.windows.contains(i));
        return Err(refuse(
            p,
            extra.map_or(p.span, |(_, w)| w.span),
            "not a tensor of the builtin",
            format!(
                "{} takes {} data tensor(s), and this protocol declares {} window(s)",
                b.name,
                b.windows.len(),
                p.windows.len()
            ),
        ));
    }
    Ok(())
}

/// The one credit signal of the builtin (the signals other than the ones passed after it),
/// and no call index. Returns the signal.
fn own_signal(p: &Protocol, b: &Builtin) -> Result<usize, Vec<Diagnostic>> {
    let own: Vec<usize> = (0..p.signals.len())
        .filter(|s| !b.after.contains(&BufferSource::Signal(Id::new(*s))))
        .collect();
    if own.len() != 1 || p.signals[own[0]].kind != SignalKind::Credit {
        let extra = own
            .iter()
            .map(|s| &p.signals[*s])
            .find(|s| s.kind != SignalKind::Credit)
            .or(own.get(1).map(|s| &p.signals[*s]));
        return Err(refuse(
            p,
            extra.map_or(p.span, |s| s.span),
            "the builtin has no tensor for this signal",
            format!(
                "{} takes one credit signal tensor, and this protocol declares {} signal(s){}",
                b.name,
                own.len(),
                if own.iter().any(|s| p.signals[*s].kind != SignalKind::Credit) {
                    " (a value signal among them)"
                } else {
                    ""
                }
            ),
        ));
    }
    if let Some(c) = p.call {
        return Err(refuse(
            p,
            p.vars[c].span,
            "the builtin's args block has no call index",
            format!(
                "{} is called with tensors, nranks and the CommContext only: a protocol that reads the call index `{}` needs collc's args block (`--abi collc`)",
                b.name,
                p.var_name(c)
            ),
        ));
    }
    Ok(own[0])
}

/// Dimensions may use the world size and the parameters only (the shim and the size guard
/// evaluate them before the rank-uniform values exist).
fn check_dims(p: &Protocol, tensors: &[BufferSource]) -> Result<(), Vec<Diagnostic>> {
    for b in tensors {
        for d in dims(p, *b) {
            let mut bad = None;
            d.for_each_var(&mut |v| {
                if matches!(p.vars[v].kind, VarKind::Const(_) | VarKind::Derived(_)) {
                    bad = Some(v);
                }
            });
            if let Some(v) = bad {
                return Err(refuse(
                    p,
                    p.vars[v].span,
                    "not a world size or parameter",
                    format!(
                        "a tensor dimension uses `{}`; the pypto ABI needs dimensions of the world size and parameters only",
                        p.vars[v].name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The pypto builtin a protocol stands in for, and how its args map.
pub fn plan(p: &Protocol) -> Result<Plan, Vec<Diagnostic>> {
    let b = builtin(p)?;
    check_arrays_and_windows(p, &b)?;
    let own = own_signal(p, &b)?;
    let mut tensors: Vec<BufferSource> =
        b.windows.iter().map(|w| BufferSource::Window(*w)).collect();
    tensors.push(BufferSource::Signal(Id::new(own)));
    let signal = tensors.len() - 1;
    tensors.extend(b.after.iter().copied());
    check_dims(p, &tensors)?;
    let mut plan = Plan {
        builtin: b.name,
        dir: b.dir,
        tensors,
        signal,
        shapes: vec![],
        scalars: vec![],
    };
    plan.shapes = plan.tensors.iter().map(|t| plan.shape(p, *t)).collect();
    for v in p.inputs() {
        match plan.derive(p, v) {
            Some(d) => plan.scalars.push((v, d)),
            None => {
                let var = &p.vars[v];
                return Err(refuse(
                    p,
                    var.span,
                    "no builtin arg determines this",
                    format!(
                        "no arg of {} determines param `{}` (the builtin passes its tensors' shapes, nranks, the block count{})",
                        plan.builtin,
                        var.name,
                        if matches!(p.semantics, Semantics::Broadcast { .. }) {
                            " and the compile-time root"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
    }
    Ok(plan)
}

impl Plan {
    /// all_to_all_v's windows `[P][R][m...]` (tensors after the signal mark all_to_all_v),
    /// which pypto passes as `[NR * max_recv, SIZE]`.
    fn blocked(&self, p: &Protocol, b: BufferSource) -> bool {
        let a2av = self.tensors.len() > self.signal + 1;
        let ds = dims(p, b);
        a2av && matches!(b, BufferSource::Window(_))
            && ds.len() >= 3
            && matches!(ds[0], Expr::Var(v) if v == p.world)
    }

    /// The shape pypto passes for tensor `b`.
    fn shape(&self, p: &Protocol, b: BufferSource) -> Vec<Expr> {
        let ds = dims(p, b);
        if !self.blocked(p, b) {
            return ds.to_vec();
        }
        let mut s = vec![Expr::Bin(
            collc_spec::ir::BinOp::Mul,
            Box::new(ds[0].clone()),
            Box::new(ds[1].clone()),
        )];
        s.extend(ds[2..].iter().cloned());
        s
    }

    /// How scalar input `v` is derived from the builtin's args (None: no arg determines it).
    fn derive(&self, p: &Protocol, v: VarId) -> Option<Derive> {
        let var = &p.vars[v];
        let sig_ix = self.signal;
        let last_is = |i: usize| matches!(self.shapes[i].last(), Some(Expr::Var(x)) if *x == v);
        if v == p.world {
            return Some(Derive::Nranks);
        }
        if matches!(var.kind, VarKind::Param { domain: None }) {
            return matches!(p.semantics, Semantics::Broadcast { root, .. } if root == v)
                .then_some(Derive::Root);
        }
        if matches!(&p.blocks, Some(b) if matches!(b.count, Expr::Var(c) if c == v)) {
            return Some(Derive::BlockNum);
        }
        // A window's last dimension, else all_to_all_v's rows per rank (pypto's
        // `max_recv`, from the target's first dimension), else the signal's columns.
        (0..sig_ix)
            .find(|&i| last_is(i))
            .map(|i| {
                if self.shapes[i].len() == 1 {
                    Derive::Numel(i)
                } else {
                    Derive::LastDim(i)
                }
            })
            .or_else(|| {
                (0..sig_ix)
                    .rev()
                    .find(|&i| {
                        let t = self.tensors[i];
                        self.blocked(p, t) && matches!(dims(p, t)[1], Expr::Var(x) if x == v)
                    })
                    .map(Derive::RowsPerRank)
            })
            .or_else(|| {
                (self.shapes[sig_ix].len() >= 2 && last_is(sig_ix))
                    .then_some(Derive::SignalCols(sig_ix))
            })
    }
}

/// Emits the pypto-ABI kernel of a protocol (the Ascend source; the CPU shim compiles the
/// same text).
pub fn emit(p: &collc_spec::Validated, opts: &EmitOptions) -> Result<String, Vec<Diagnostic>> {
    emit_form(p, opts, false)
}

/// The kernel (`template`: in its template form, before the placeholders of the element type
/// and the reduction).
fn emit_form(
    p: &collc_spec::Validated,
    opts: &EmitOptions,
    template: bool,
) -> Result<String, Vec<Diagnostic>> {
    let plan = plan(p)?;
    let pto = crate::ranks::PTO_MAX_RANKS;
    let opts = EmitOptions {
        world_limit: Some(opts.world_limit.map_or(pto, |l| l.min(pto))),
        ..opts.clone()
    };
    let k = Kernel::new(p, &opts)?;
    let d = Pypto {
        pto: Pto {
            target: Target::Ascend,
        },
        plan,
        template,
    };
    let text = walk::emit_kernel(&k, &d)?;
    let mut listing = Writer::default();
    d.args_comment(&k, &mut listing);
    Ok(replace_args_listing(&text, &listing.finish()))
}

/// collc's Ascend adapter (`collc/pto_comm_ascend.hpp`), carried inline by a template.
const ASCEND_ADAPTER: &str = include_str!("../../runtime/collc/pto_comm_ascend.hpp");

/// Renders a template as pypto does (`_render_builtin_template`: every `{{NAME}}` replaced by
/// its value, as plain text).
pub fn render_template(template: &str, vars: &[(&str, &str)]) -> String {
    vars.iter().fold(template.to_string(), |t, (k, v)| {
        t.replace(&placeholder(k), v)
    })
}

/// The values pypto's codegen renders a protocol's template with: `float` (FP32), the
/// reduction's tile instruction, the broadcast root `root` (a bound value) and the
/// builtin's package.
pub fn pypto_values(p: &Protocol, root: Option<i64>) -> Vec<(&'static str, String)> {
    let inst = match p.semantics {
        collc_spec::ir::Semantics::Allreduce { op, .. }
        | collc_spec::ir::Semantics::ReduceScatter { op, .. } => reduce_inst(op),
        _ => "TADD",
    };
    let dir = plan(p).map(|pl| pl.dir).unwrap_or("");
    vec![
        (
            "template_package",
            format!("runtime/builtins/collectives/{dir}"),
        ),
        ("dtype_cpp", WINDOW_ELEM_CPP.to_string()),
        ("reduce_inst", inst.to_string()),
        ("root_cpp", root.unwrap_or(0).to_string()),
    ]
}

/// A template placeholder of pypto's builtin kernels (`{{NAME}}`, rendered by pypto's
/// `_render_builtin_template` as plain text substitution).
fn placeholder(name: &str) -> String {
    format!("{{{{{name}}}}}")
}

/// The C++ spelling of the element type pypto's templates are rendered with (FP32), and of
/// collc's `f32`.
const WINDOW_ELEM_CPP: &str = "float";

/// The tile instruction of a reduction operator (what pypto renders `{{reduce_inst}}` as).
fn reduce_inst(op: collc_spec::ir::ReduceOp) -> &'static str {
    use collc_spec::ir::ReduceOp;
    match op {
        ReduceOp::Sum => "TADD",
        ReduceOp::Prod => "TMUL",
        ReduceOp::Max => "TMAX",
        ReduceOp::Min => "TMIN",
    }
}

/// The pypto template of a protocol (`collc emit --target ascend --abi pypto -o
/// kernel.cpp.in`): the kernel of [`emit`] with pypto's own placeholders where pypto's
/// template for that builtin has them — `{{template_package}}` (header), `{{dtype_cpp}}` (the
/// windows' element type), `{{root_cpp}}` (a broadcast's root) and, for
/// `builtin.tensor.allreduce`, `{{reduce_inst}}` (the reduction's tile instruction; the
/// synchronisation the verifier checked does not depend on the operator) — and
/// self-contained: collc's adapter inline, then pto-isa's and simpler's headers (simpler's
/// `tensor.h`, `platform_comm/comm_context.h`, `intrinsic.h`; pto-isa's
/// `pto/comm/pto_comm_inst.hpp`), none of whose types it declares.
pub fn emit_template(
    p: &collc_spec::Validated,
    opts: &EmitOptions,
) -> Result<String, Vec<Diagnostic>> {
    // pypto renders `{{dtype_cpp}}` as `float` (FP32; `half` for the allreduce): the template
    // stands for the f32 kernel (a `type` parameter's f32 instance).
    if let Some(w) = p.windows.iter().find(|w| w.elem.cpp() != WINDOW_ELEM_CPP) {
        return Err(refuse(
            p,
            w.span,
            "not f32",
            format!(
                "pypto renders a template's `{{{{dtype_cpp}}}}` as float or half, and window `{}` holds {}",
                w.name,
                w.elem.as_str()
            ),
        ));
    }
    let text = emit_form(p, opts, true)?;
    let reduce = match (plan(p)?.builtin, &p.semantics) {
        ("builtin.tensor.allreduce", collc_spec::ir::Semantics::Allreduce { op, .. }) => {
            Some(reduce_inst(*op))
        }
        _ => None,
    };
    let mut words = Vec::new();
    if !p.windows.is_empty() {
        words.push((WINDOW_ELEM_CPP, placeholder("dtype_cpp")));
    }
    let reduce_call = reduce.map(|r| format!("collc::{r}"));
    if let Some(r) = &reduce_call {
        words.push((r.as_str(), format!("collc::{}", placeholder("reduce_inst"))));
    }
    let header = format!(
        "// Rendered by pypto from {}.\n",
        placeholder("template_package")
    );
    Ok(header + &replace_code_words(&text, &words))
}

/// Replaces whole words (C++ identifiers, `::`-qualified names included) in the code of
/// `text`: outside `//` comments and string literals.
fn replace_code_words(text: &str, words: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let mut in_str = false;
        let mut i = 0;
        let b = line.as_bytes();
        while i < b.len() {
            let c = b[i];
            if in_str {
                if c == b'\\' && i + 1 < b.len() {
                    out.push_str(&line[i..i + 2]);
                    i += 2;
                    continue;
                }
                in_str = c != b'"';
            } else if c == b'"' {
                in_str = true;
            } else if line[i..].starts_with("//") {
                out.push_str(&line[i..]);
                break;
            } else if let Some((w, to)) = words.iter().find(|(w, _)| {
                line[i..].starts_with(w)
                    && !(i > 0 && ident_byte(b.get(i - 1).copied()))
                    && !ident_byte(b.get(i + w.len()).copied())
            }) {
                out.push_str(to);
                i += w.len();
                continue;
            }
            let ch = line[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn ident_byte(c: Option<u8>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
}

/// Replaces the walker's description of the collc args block in the header comment (from
/// the line `// Args block (` to the line ending in `CommContext* of this rank`) with
/// `listing`; without those lines (a walker that words its header differently) the listing
/// goes in front of the first `#include`, so the pypto layout is always described.
fn replace_args_listing(text: &str, listing: &str) -> String {
    let start = text.find("\n// Args block (").map(|i| i + 1);
    let end = start.and_then(|s| {
        text[s..]
            .find("CommContext* of this rank\n")
            .map(|e| s + e + "CommContext* of this rank\n".len())
    });
    match (start, end) {
        (Some(s), Some(e)) => format!("{}{listing}{}", &text[..s], &text[e..]),
        _ => match text.find("#include") {
            Some(i) => format!("{}{listing}\n{}", &text[..i], &text[i..]),
            None => format!("{listing}{text}"),
        },
    }
}

/// The C++ name of tensor `b`'s `ChipTensor*`.
fn tensor_name(k: &Kernel, b: BufferSource) -> String {
    let base = match b {
        BufferSource::Window(w) => &k.window_names[w.index()],
        BufferSource::Signal(s) => &k.signal_names[s.index()],
        BufferSource::Array(a) => &k.array_names[a.index()],
    };
    format!("collc_{base}_tensor")
}

fn buffer_name<'k>(k: &'k Kernel, b: BufferSource) -> &'k str {
    match b {
        BufferSource::Window(w) => &k.window_names[w.index()],
        BufferSource::Signal(s) => &k.signal_names[s.index()],
        BufferSource::Array(a) => &k.array_names[a.index()],
    }
}

fn dims(p: &Protocol, b: BufferSource) -> &[Expr] {
    match b {
        BufferSource::Window(w) => &p.windows[w].dims,
        BufferSource::Signal(s) => &p.signals[s].dims,
        BufferSource::Array(a) => &p.arrays[a].dims,
    }
}

fn elem(p: &Protocol, b: BufferSource) -> &'static str {
    match b {
        BufferSource::Signal(_) => "int32_t",
        BufferSource::Window(w) => p.windows[w].elem.cpp(),
        // pypto's all_to_all_v reads send_counts as an int32 tensor.
        BufferSource::Array(_) => "int32_t",
    }
}

fn product(k: &Kernel, ds: &[Expr]) -> String {
    let parts: Vec<String> = ds
        .iter()
        .map(|d| {
            let s = k.expr(d);
            if s.contains(' ') {
                format!("({s})")
            } else {
                s
            }
        })
        .collect();
    if parts.is_empty() {
        "1".to_string()
    } else {
        parts.join(" * ")
    }
}

/// The pypto-ABI dialect: the `pto::comm` dialect with pypto's entry.
struct Pypto {
    pto: Pto,
    plan: Plan,
    /// The template form ([`emit_template`]): collc's adapter inline, `{{root_cpp}}`.
    template: bool,
}

impl Pypto {
    /// The header comment's description of pypto's args block.
    fn args_comment(&self, k: &Kernel, w: &mut Writer) {
        let p = k.p;
        w.line(format!(
            "// Args block (pypto's {}: ChipTensor* per tensor, then nranks, then CommContext*):",
            self.plan.builtin
        ));
        for (i, b) in self.plan.tensors.iter().enumerate() {
            let what = match b {
                BufferSource::Window(x) => format!(
                    "window {} ({})",
                    p.windows[*x].name,
                    p.windows[*x].elem.as_str()
                ),
                BufferSource::Signal(s) => {
                    format!("credit signal {} (int32 cells)", p.signals[*s].name)
                }
                BufferSource::Array(a) => format!("array {}", p.arrays[*a].name),
            };
            w.line(format!(
                "//   args[{i}]  ChipTensor* of {what}: buffer.addr + start_offset"
            ));
        }
        let t = self.plan.tensors.len();
        w.line(format!("//   args[{t}]  nranks ({})", p.vars[p.world].name));
        w.line(format!("//   args[{}]  CommContext* of this rank", t + 1));
        for (v, how) in &self.plan.scalars {
            let from = match how {
                Derive::Nranks => continue,
                Derive::Numel(i) => format!(
                    "the element count of {}",
                    buffer_name(k, self.plan.tensors[*i])
                ),
                Derive::LastDim(i) => format!(
                    "the last dimension of {}",
                    buffer_name(k, self.plan.tensors[*i])
                ),
                Derive::SignalCols(i) => format!(
                    "the columns of {} (1 if one-dimensional)",
                    buffer_name(k, self.plan.tensors[*i])
                ),
                Derive::RowsPerRank(i) => format!(
                    "the first dimension of {} / nranks (pypto's max_recv)",
                    buffer_name(k, self.plan.tensors[*i])
                ),
                Derive::BlockNum => "the launch's block count, get_block_num(args)".to_string(),
                Derive::Root if self.template => {
                    format!("{} (pypto's compile-time kRoot)", placeholder("root_cpp"))
                }
                Derive::Root => "COLLC_PYPTO_ROOT (pypto's compile-time kRoot)".to_string(),
            };
            w.line(format!("//   param {} = {from}", p.vars[*v].name));
        }
    }

    /// The protocol's scalars, each derived from the args block as the plan says.
    fn derived_scalars(&self, k: &Kernel, w: &mut Writer) {
        let p = k.p;
        for (v, how) in &self.plan.scalars {
            let name = k.var(*v);
            let pname = &p.vars[*v].name;
            let tn = |i: &usize| tensor_name(k, self.plan.tensors[*i]);
            let (value, why) = match how {
                Derive::Nranks => continue,
                Derive::Numel(i) => (format!("collc_numel({})", tn(i)), "element count"),
                Derive::LastDim(i) => (format!("collc_last_dim({})", tn(i)), "last dimension"),
                Derive::SignalCols(i) => {
                    (format!("collc_signal_cols({})", tn(i)), "signal columns")
                }
                Derive::RowsPerRank(i) => (
                    format!("collc_rows_per_rank({}, {})", tn(i), k.var(p.world)),
                    "rows per rank (max_recv)",
                ),
                Derive::BlockNum => (
                    "static_cast<int64_t>(get_block_num(args))".to_string(),
                    "the launch's block count",
                ),
                Derive::Root if self.template => (
                    format!("static_cast<int64_t>({})", placeholder("root_cpp")),
                    "pypto's compile-time kRoot",
                ),
                Derive::Root => (
                    "static_cast<int64_t>(COLLC_PYPTO_ROOT)".to_string(),
                    "pypto's compile-time kRoot",
                ),
            };
            w.line(format!(
                "const int64_t {name} = {value};  // param {pname}: {why}"
            ));
        }
    }

    /// The early return unless the tensors hold the .coll buffers.
    fn size_guard(&self, k: &Kernel, w: &mut Writer) {
        let p = k.p;
        // The tensors must hold the .coll buffers: checked where the domains hold (the
        // walker's guards refuse the rest), rank-uniform like pypto's shape guards.
        let mut ok = Vec::new();
        for (v, _) in &self.plan.scalars {
            match p.vars[*v].kind {
                VarKind::World { lo, .. } => ok.push(format!(
                    "{n} >= {} && {n} <= kMaxSupportedRanks",
                    lo.max(1),
                    n = k.var(*v)
                )),
                VarKind::Param {
                    domain: Some((lo, hi)),
                } => ok.push(format!(
                    "{n} >= {} && {n} <= {}",
                    super::int_lit(lo),
                    super::int_lit(hi),
                    n = k.var(*v)
                )),
                _ => {}
            }
        }
        let small: Vec<String> = self
            .plan
            .tensors
            .iter()
            .map(|b| {
                format!(
                    "collc_numel({}) < {}",
                    tensor_name(k, *b),
                    product(k, dims(p, *b))
                )
            })
            .collect();
        w.line("// The tensors must hold the .coll buffers (shapes are the same on every rank).");
        w.open(format!(
            "if (({}) && ({}))",
            ok.join(" && "),
            small.join(" || ")
        ));
        self.pto.early_return(w);
        w.close();
    }
}

impl Dialect for Pypto {
    fn trace_fence(&self, w: &mut Writer) {
        self.pto.trace_fence(w);
    }

    fn trace_data(&self, k: &Kernel, w: &mut Writer, op: &DataOp) {
        self.pto.trace_data(k, w, op);
    }

    fn call_index(&self, _k: &Kernel, w: &mut Writer, name: &str) {
        // `plan` refuses protocols that read the call index; never reached.
        w.line(format!(
            "#error \"collc: {name}: pypto's args block has no call index\""
        ));
    }

    fn describe(&self) -> String {
        format!(
            "Ascend pto::comm with the args block of pypto's {} (drop-in for \
             python/pypto/runtime/builtins/collectives/{}/templates/kernel.cpp.in; docs/pypto-abi.md)",
            self.plan.builtin, self.plan.dir
        )
    }

    fn includes(&self, k: &Kernel, w: &mut Writer) {
        if self.template {
            w.line("// ---- collc/pto_comm_ascend.hpp (collc's tile adapter), inline ----");
            for l in ASCEND_ADAPTER.lines() {
                w.line(l);
            }
            w.line("// ---- end of collc/pto_comm_ascend.hpp ----");
            w.line("");
            w.line(
                "#include \"tensor.h\"  // simpler's ChipTensor (the tensors of pypto's args block)",
            );
        } else {
            self.pto.includes(k, w);
            w.line("#if defined(__CCE_AICORE__) || defined(__CPU_SIM)");
            w.line(
                "#include \"tensor.h\"  // simpler's ChipTensor (the tensors of pypto's args block)",
            );
            w.line("#else");
            w.line("#include \"collc/chip_tensor.hpp\"  // the same layout for CPU builds (collc's pypto shim)");
            w.line("#endif");
        }
        if !self.template && self.plan.scalars.iter().any(|(_, d)| *d == Derive::Root) {
            w.line("");
            w.line("#ifndef COLLC_PYPTO_ROOT");
            w.line("#error \"define COLLC_PYPTO_ROOT: the broadcast root (pypto's compile-time kRoot = {{root_cpp}})\"");
            w.line("#endif");
        }
        w.line("");
        w.line("namespace {");
        w.line("// Element count of a tensor (product of its shapes; saturates instead of overflowing).");
        w.open("inline int64_t collc_numel(__gm__ ChipTensor* t)");
        w.line("int64_t n = 1;");
        w.open("for (uint32_t d = 0; d < t->ndims && d < MAX_TENSOR_DIMS; ++d)");
        w.line("const int64_t s = static_cast<int64_t>(t->shapes[d]);");
        w.line("n = (s != 0 && n > INT64_MAX / s) ? INT64_MAX : n * s;");
        w.close();
        w.line("return n;");
        w.close();
        let uses = |f: &dyn Fn(&Derive) -> bool| self.plan.scalars.iter().any(|(_, d)| f(d));
        if uses(&|d| matches!(d, Derive::LastDim(_))) {
            w.line("// Last dimension of a tensor (0 without dimensions).");
            w.open("inline int64_t collc_last_dim(__gm__ ChipTensor* t)");
            w.line("if (t->ndims == 0 || t->ndims > MAX_TENSOR_DIMS) return 0;");
            w.line("return static_cast<int64_t>(t->shapes[t->ndims - 1]);");
            w.close();
        }
        if uses(&|d| matches!(d, Derive::RowsPerRank(_))) {
            w.line("// Rows per rank of a [nranks * rows, ...] tensor: shapes[0] / nranks (pypto's max_recv; 0 if none).");
            w.open("inline int64_t collc_rows_per_rank(__gm__ ChipTensor* t, int64_t nranks)");
            w.line("if (t->ndims == 0 || t->ndims > MAX_TENSOR_DIMS || nranks <= 0) return 0;");
            w.line("return static_cast<int64_t>(t->shapes[0]) / nranks;");
            w.close();
        }
        if uses(&|d| matches!(d, Derive::SignalCols(_))) {
            w.line("// Columns of a signal tensor: its last dimension, 1 if one-dimensional (pypto's signal_stride).");
            w.open("inline int64_t collc_signal_cols(__gm__ ChipTensor* t)");
            w.line("if (t->ndims < 2 || t->ndims > MAX_TENSOR_DIMS) return 1;");
            w.line("return static_cast<int64_t>(t->shapes[t->ndims - 1]);");
            w.close();
        }
        w.line("}  // namespace");
    }

    fn open_entry(&self, k: &Kernel, w: &mut Writer, maybe_unused: &dyn Fn(BufferSource) -> bool) {
        let p = k.p;
        w.open("extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args)");
        w.line(format!(
            "// ---- args block (pypto's {}) ----",
            self.plan.builtin
        ));
        for (i, b) in self.plan.tensors.iter().enumerate() {
            w.line(format!(
                "__gm__ ChipTensor* {} = reinterpret_cast<__gm__ ChipTensor*>(args[{i}]);",
                tensor_name(k, *b)
            ));
        }
        let t = self.plan.tensors.len();
        w.line(format!(
            "const int64_t {} = static_cast<int64_t>(args[{t}]);  // ranks {} (nranks)",
            k.var(p.world),
            p.vars[p.world].name
        ));
        w.line(format!(
            "__gm__ CommContext* ctx = reinterpret_cast<__gm__ CommContext*>(args[{}]);",
            t + 1
        ));
        for b in &self.plan.tensors {
            let attr = if maybe_unused(*b) {
                "[[maybe_unused]] "
            } else {
                ""
            };
            let ty = elem(k.p, *b);
            let tn = tensor_name(k, *b);
            w.line(format!(
                "{attr}__gm__ {ty}* {} = reinterpret_cast<__gm__ {ty}*>({tn}->buffer.addr) + {tn}->start_offset;",
                buffer_name(k, *b)
            ));
        }
        self.derived_scalars(k, w);
        self.size_guard(k, w);
    }

    fn rank_id(&self) -> String {
        self.pto.rank_id()
    }
    fn block_idx(&self) -> String {
        self.pto.block_idx()
    }
    fn block_num(&self) -> String {
        self.pto.block_num()
    }
    fn early_return(&self, w: &mut Writer) {
        self.pto.early_return(w)
    }
    fn scratch(&self, k: &Kernel, w: &mut Writer) {
        self.pto.scratch(k, w)
    }
    fn publish(&self, k: &Kernel, w: &mut Writer, data_written: bool) {
        self.pto.publish(k, w, data_written)
    }
    fn acquire(&self, k: &Kernel, w: &mut Writer) {
        self.pto.acquire(k, w)
    }
    fn fence(&self, w: &mut Writer) {
        self.pto.fence(w)
    }
    fn notify(
        &self,
        k: &Kernel,
        w: &mut Writer,
        cell: &CellRef,
        target: Option<&str>,
        op: NotifyOp,
        value: &str,
    ) {
        self.pto.notify(k, w, cell, target, op, value)
    }
    fn wait(&self, k: &Kernel, w: &mut Writer, cell: &CellRef, cmp: CmpOp, threshold: &str) {
        self.pto.wait(k, w, cell, cmp, threshold)
    }
    fn data(&self, k: &Kernel, w: &mut Writer, op: &DataOp) {
        self.pto.data(k, w, op)
    }
    fn end_kernel(&self, w: &mut Writer) {
        self.pto.end_kernel(w)
    }
    fn supports_tile_offsets(&self) -> bool {
        self.pto.supports_tile_offsets()
    }
    fn cannot_reduce(&self, t: collc_spec::ir::ElemType) -> Option<&'static str> {
        self.pto.cannot_reduce(t)
    }
}

/// The CPU test build of a pypto-ABI kernel: `kernel` (the text [`emit`] produced) renamed
/// to `collc_pypto_kernel_entry`, and a `kernel_entry` with the collc host ABI
/// (`collc/host_launch.hpp`) that builds the pypto args block — one `ChipTensor` per tensor
/// whose `buffer.addr` is the rank's window base and `start_offset` the buffer's element
/// offset in it (the call's instance of a `per call` buffer), row-major shapes of the
/// `.coll` dimensions, then nranks and the `CommContext*` — and calls it. `root`: the value
/// of `COLLC_PYPTO_ROOT` for a broadcast.
pub fn cpu_shim(
    p: &collc_spec::Validated,
    kernel: &str,
    root: Option<i64>,
) -> Result<String, Vec<Diagnostic>> {
    let plan = plan(p)?;
    let k = Kernel::new(p, &EmitOptions::default())?;
    let mut w = Writer::default();
    w.line(
        "// collc pypto shim (CPU builds only): runs a pypto-ABI kernel under the collc launcher.",
    );
    if let Some(r) = root {
        w.line(format!("#define COLLC_PYPTO_ROOT {}", super::int_lit(r)));
    }
    w.line("#include <vector>");
    w.line("#define kernel_entry collc_pypto_kernel_entry");
    let mut text = w.finish();
    text.push_str(kernel);
    let mut w = Writer::default();
    w.line("#undef kernel_entry");
    w.line("");
    w.open("extern \"C\" void kernel_entry(int64_t* args)");
    let ctx = k.abi.ctx_slot();
    w.line(format!(
        "CommContext* collc_ctx = reinterpret_cast<CommContext*>(args[{ctx}]);"
    ));
    w.line("const uint64_t collc_base = collc_ctx->windowsIn[collc_ctx->rankId];");
    let nb = k.abi.buffers.len();
    for (i, v) in k.abi.scalars.iter().enumerate() {
        w.line(format!(
            "[[maybe_unused]] const int64_t {} = args[{}];",
            k.var(*v),
            nb + i
        ));
    }
    let t = plan.tensors.len();
    w.line(format!("ChipTensor collc_tensors[{t}] = {{}};"));
    // In pto-isa's CPU simulation (collc/pto_sim_bridge.hpp) the incoming args block also
    // holds simpler's LocalContext* and GlobalContext*, which pypto's kernels read there.
    w.line("#if defined(__CPU_SIM)");
    w.line("int64_t collc_args[SPMD_GLOBAL_CONTEXT_INDEX + 1] = {};");
    w.line("collc_args[SPMD_LOCAL_CONTEXT_INDEX] = args[SPMD_LOCAL_CONTEXT_INDEX];");
    w.line("collc_args[SPMD_GLOBAL_CONTEXT_INDEX] = args[SPMD_GLOBAL_CONTEXT_INDEX];");
    w.line("#else");
    w.line(format!("int64_t collc_args[{}] = {{}};", t + 2));
    w.line("#endif");
    for (i, b) in plan.tensors.iter().enumerate() {
        shim_tensor(&k, &mut w, &plan, i, *b);
    }
    w.line(format!("collc_args[{t}] = {};", k.var(p.world)));
    w.line(format!("collc_args[{}] = args[{ctx}];", t + 1));
    w.line("collc_pypto_kernel_entry(collc_args);");
    w.close();
    text.push_str(&w.finish());
    Ok(text)
}

/// The shim's `ChipTensor` `i` of the args block (tensor `b` of the plan): a host array's
/// int32 copy, or the buffer inside the rank's window; row-major shapes.
fn shim_tensor(k: &Kernel, w: &mut Writer, plan: &Plan, i: usize, b: BufferSource) {
    let p = k.p;
    let slot = k.abi.buffer_slot(b).unwrap_or(0);
    let ds = &plan.shapes[i];
    let n = product(k, dims(p, b));
    if let BufferSource::Array(_) = b {
        // A host array (the launcher's int64 copy, outside the window) becomes the
        // builtin's int32 tensor: a copy that lives until the kernel returns.
        w.line(format!(
            "std::vector<int32_t> collc_array_{i}(static_cast<size_t>({n}));"
        ));
        w.line(format!(
            "for (size_t collc_j = 0; collc_j < collc_array_{i}.size(); ++collc_j) collc_array_{i}[collc_j] = static_cast<int32_t>(reinterpret_cast<const int64_t*>(args[{slot}])[collc_j]);"
        ));
    }
    w.open("");
    w.line(format!("ChipTensor& collc_t = collc_tensors[{i}];"));
    if let BufferSource::Array(_) = b {
        w.line(format!(
            "collc_t.buffer.addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(collc_array_{i}.data()));  // {}",
            buffer_name(k, b)
        ));
        w.line(format!(
            "collc_t.buffer.size = collc_array_{i}.size() * sizeof(int32_t);"
        ));
        w.line("collc_t.start_offset = 0;");
    } else {
        w.line(format!(
            "const uint64_t collc_addr = static_cast<uint64_t>(args[{slot}]);  // {}",
            buffer_name(k, b)
        ));
        w.line(format!(
            "const uint64_t collc_bytes = sizeof({}) * static_cast<uint64_t>({n});",
            elem(k.p, b),
        ));
        w.line("collc_t.buffer.addr = collc_base;");
        w.line("collc_t.buffer.size = collc_addr - collc_base + collc_bytes;");
        w.line(format!(
            "collc_t.start_offset = (collc_addr - collc_base) / sizeof({});",
            elem(k.p, b)
        ));
    }
    w.line(format!("collc_t.ndims = {};", ds.len()));
    for (j, d) in ds.iter().enumerate() {
        w.line(format!(
            "collc_t.shapes[{j}] = static_cast<uint32_t>({});",
            k.expr(d)
        ));
    }
    w.line("uint32_t collc_stride = 1;");
    w.open(format!(
        "for (int collc_d = {} - 1; collc_d >= 0; --collc_d)",
        ds.len()
    ));
    w.line("collc_t.strides[collc_d] = collc_stride;");
    w.line("collc_stride *= collc_t.shapes[collc_d];");
    w.close();
    w.line("collc_t.extent_elem_cache = collc_stride;");
    w.line("collc_t.is_contiguous = true;");
    w.line(format!(
        "collc_args[{i}] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&collc_t));"
    ));
    w.close();
}

#[cfg(test)]
mod tests {
    use super::replace_args_listing;

    #[test]
    fn the_collc_listing_is_replaced_in_place() {
        let text = "// head\n// Args block (collc ...):\n//   args[0]  x\n//   args[1]  CommContext* of this rank\n//\n#include \"a\"\n";
        let out = replace_args_listing(text, "// pypto listing\n");
        assert_eq!(out, "// head\n// pypto listing\n//\n#include \"a\"\n");
    }

    #[test]
    fn without_the_collc_listing_the_pypto_one_goes_before_the_includes() {
        let text = "// head\n#include \"a\"\n";
        let out = replace_args_listing(text, "// pypto listing\n");
        assert_eq!(out, "// head\n// pypto listing\n\n#include \"a\"\n");
    }
}
