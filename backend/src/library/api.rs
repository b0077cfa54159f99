//! What a library call looks like for one collective: its function name, its parameter
//! struct, its buffer arguments and which windows they are staged into or collected from
//! (the collective's meaning, `collc_spec::meaning::{inputs, output_windows}`).

use crate::cpp::Kernel;
use crate::layout::BufferSource;
use collc_grammar::Diagnostic;
use collc_spec::ir::Id;
use collc_spec::ir::{
    ArrayId, BufferRef, ElemType, Expr, Protocol, Semantics, SignalId, Stmt, StmtKind, VarId,
    VarKind, WindowId,
};
use collc_spec::visit::each_stmt;

/// The kinds a library packages and how their buffers are passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `NAME_barrier(comm[, rank])`.
    Barrier,
    /// `NAME_allreduce(comm[, rank], data, count)`: `data` in and out.
    Allreduce {
        /// The window.
        data: WindowId,
    },
    /// `NAME_broadcast(comm[, rank], data, count, root)`: the root's `data` in, every rank's out.
    Broadcast {
        /// The root parameter.
        root: VarId,
        /// The window.
        data: WindowId,
    },
    /// `NAME_allgather` / `NAME_all_to_all(comm[, rank], input, input_count, output,
    /// output_count)`.
    Exchange {
        /// Input window.
        input: WindowId,
        /// Output window.
        target: WindowId,
        /// True for all_to_all (input and output the same size), false for allgather
        /// (output = P rows of the input).
        all_to_all: bool,
    },
    /// `NAME_reduce_scatter(comm[, rank], send, send_count, recv, recv_count)`: `send` (P
    /// rows) staged into the window, row `rank` of the reduction collected into `recv`.
    ReduceScatter {
        /// The window (`[P][m]`).
        data: WindowId,
    },
    /// `NAME_reduce(comm[, rank], data, count, root)`: every rank's `data` in, the reduction
    /// out on the root only (the other ranks' `data` is left as it was).
    Reduce {
        /// The root parameter.
        root: VarId,
        /// The window.
        data: WindowId,
    },
    /// `NAME_gather(comm[, rank], input, input_count, output, output_count, root)`: every
    /// rank's `input` in; `output` (P input rows) out on the root only, where alone it is
    /// read (another rank may pass NULL and 0).
    Gather {
        /// The root parameter.
        root: VarId,
        /// Input window.
        input: WindowId,
        /// Output window (`[P][m]` on the root).
        target: WindowId,
    },
    /// `NAME_scatter(comm[, rank], input, input_count, output, output_count, root)`: the
    /// root's `input` (P rows) in, where alone it is read (another rank may pass NULL and
    /// 0); every rank's `output` (its row) out.
    Scatter {
        /// The root parameter.
        root: VarId,
        /// Input window (`[P][m]` on the root).
        input: WindowId,
        /// Output window.
        target: WindowId,
    },
    /// `NAME_all_to_all_v(comm[, rank], send, send_count, send_counts, recv, recv_count,
    /// recv_counts)`: P blocks of rows in and out, P counts in and out.
    AllToAllV {
        /// Input window.
        input: WindowId,
        /// Output window.
        target: WindowId,
        /// The host array of send counts (P entries).
        send_counts: ArrayId,
        /// The value signal of receive counts (P cells).
        recv_counts: SignalId,
    },
}

/// One collective of a library.
pub struct Coll<'a> {
    /// The generator's view of the protocol (C++ names, ABI).
    pub k: Kernel<'a>,
    /// The function suffix: the kind's name (`allreduce`, `broadcast`, ...).
    pub func: String,
    /// How its buffers are passed.
    pub kind: Kind,
    /// Index in the library (its collective id in the call ring).
    pub index: usize,
    /// Its field in the configuration struct and the suffix of its parameter struct: the
    /// kind's name, or the protocol's name when the library holds several protocols of the
    /// kind (`NAME_config.allreduce_ring`, chosen per call: `super::table`).
    pub cfg: String,
    /// Instances of each `per call` buffer, used in rotation (the protocol's
    /// `per_call_rotation`, verified by the caller); 1 when it has none.
    pub rotation: u32,
}

/// How a protocol reaches one window ([`Coll::read_in_place`], [`Coll::write_in_place`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    /// Some statement writes it: the destination of a `copy`, `get`, `put` or `reduce`.
    pub written: bool,
    /// The runtime reaches it rather than its own rank's local pointer: the destination of a
    /// `put` or of a `reduce ... @ q` into a peer, the source of a `get` or a
    /// `reduce ... <- ... @ q`, even with `q` = `me` (an RMA operation, or a peer's
    /// shared-memory pointer, on the window's own memory).
    pub shared: bool,
    /// The runtime reaches it at a rank other than the root: some such statement's rank is
    /// not the root parameter itself (always, for a kind without a root).
    pub beyond_root: bool,
}

impl<'a> Coll<'a> {
    /// The root parameter of a rooted kind (broadcast, reduce, gather, scatter).
    pub fn root(&self) -> Option<VarId> {
        match self.kind {
            Kind::Broadcast { root, .. }
            | Kind::Reduce { root, .. }
            | Kind::Gather { root, .. }
            | Kind::Scatter { root, .. } => Some(root),
            _ => None,
        }
    }

    /// Which side of the call only the root uses: (its input is read on the root only — a
    /// broadcast's data, a scatter's input; its output is written on the root only — a
    /// reduce's data, a gather's output). The one definition the staging of both targets and
    /// the argument checks follow.
    pub fn root_only(&self) -> (bool, bool) {
        match self.kind {
            Kind::Broadcast { .. } | Kind::Scatter { .. } => (true, false),
            Kind::Reduce { .. } | Kind::Gather { .. } => (false, true),
            _ => (false, false),
        }
    }

    /// Whether the root leaves its output in its window after a call, copying nothing out: a
    /// broadcast's root ends the call with its data window holding its own input (the kind's
    /// postcondition at the root, which the gate proves), which is the caller's buffer
    /// already.
    pub fn root_skips_copy_out(&self) -> bool {
        matches!(self.kind, Kind::Broadcast { .. })
    }

    /// The C++ guards of a call's staging (into the windows, out of them) for a rank named
    /// `me` and a root named `root`: [`Coll::root_only`] and [`Coll::root_skips_copy_out`].
    /// The one definition the staging of both targets follows.
    pub fn staging_guards(&self, me: &str, root: &str) -> (String, String) {
        let (i, o) = self.root_only();
        let on_root = format!("if ({me} == {root}) ");
        let out = if o {
            on_root.clone()
        } else if self.root_skips_copy_out() {
            format!("if ({me} != {root}) ")
        } else {
            String::new()
        };
        (if i { on_root } else { String::new() }, out)
    }

    /// Describes `p` for a library, or says why it cannot be packaged.
    pub fn new(k: Kernel<'a>, index: usize) -> Result<Coll<'a>, Vec<Diagnostic>> {
        let p = k.p;
        let (func, kind) = kind_of(p);
        if p.per_call_rotation.is_none() {
            if let Some(w) = Id::range(p.windows.len()).find(|&w| p.window_per_call(w)) {
                return Err(vec![per_call(p, &p.windows[w].name, p.windows[w].span)]);
            }
            if let Some(s) = Id::range(p.signals.len()).find(|&s| p.signal_per_call(s)) {
                return Err(vec![per_call(p, &p.signals[s].name, p.signals[s].span)]);
            }
        }
        let passed = |a: usize| matches!(kind, Kind::AllToAllV { send_counts, .. } if send_counts == Id::new(a));
        if (0..p.arrays.len()).any(|a| !passed(a)) {
            return Err(vec![Diagnostic::error(
                "lib::unsupported-kind",
                format!(
                    "collective `{}` reads host arrays other than all_to_all_v's send counts; a library does not pass them",
                    p.name
                ),
            )
            .with_primary(p.span, "this collective")]);
        }
        Ok(Coll {
            k,
            func: func.to_string(),
            cfg: func.to_string(),
            kind,
            index,
            rotation: p.per_call_rotation.unwrap_or(1).max(1),
        })
    }

    /// The protocol.
    pub fn p(&self) -> &'a collc_spec::Validated {
        self.k.p
    }

    /// The element type of the buffers the call passes (the kind's data or input window).
    pub fn elem(&self) -> ElemType {
        let w = match self.kind {
            Kind::Allreduce { data }
            | Kind::Broadcast { data, .. }
            | Kind::Reduce { data, .. }
            | Kind::ReduceScatter { data } => Some(data),
            Kind::Exchange { input, .. }
            | Kind::AllToAllV { input, .. }
            | Kind::Gather { input, .. }
            | Kind::Scatter { input, .. } => Some(input),
            Kind::Barrier => None,
        };
        w.map(|w| self.p().windows[w].elem).unwrap_or_default()
    }

    /// The parameters a caller sets (every `param`, declaration order): (var, C name).
    pub fn params(&self) -> Vec<(VarId, String)> {
        self.p()
            .inputs()
            .into_iter()
            .skip(1)
            .map(|v| (v, self.k.var(v).to_string()))
            .collect()
    }

    /// The windows a call stages from or collects into: the data window, or input and output.
    pub fn staged(&self) -> Vec<WindowId> {
        match self.kind {
            Kind::Barrier => Vec::new(),
            Kind::Allreduce { data }
            | Kind::Broadcast { data, .. }
            | Kind::Reduce { data, .. }
            | Kind::ReduceScatter { data } => vec![data],
            // The window whose last dimension is the row length first (a scatter's output).
            Kind::Scatter { input, target, .. } => vec![target, input],
            Kind::Exchange { input, target, .. }
            | Kind::AllToAllV { input, target, .. }
            | Kind::Gather { input, target, .. } => vec![input, target],
        }
    }

    /// The input window an MPI library call reads straight from the caller's buffer instead
    /// of staging a copy into the window (allgather, all_to_all, all_to_all_v): one that the
    /// protocol only ever reads on its own rank, as the source of a `copy`, a `put` or a
    /// local `reduce` (the generated code reads those through the window's local pointer,
    /// which the call points at the caller's buffer). Never when a statement writes it (the
    /// caller's input is not the library's to write) or the runtime reaches it
    /// ([`Reach::shared`]). `None` for the other kinds, whose input window is also their
    /// output ([`Coll::write_in_place`]).
    pub fn read_in_place(&self) -> Option<WindowId> {
        let input = match self.kind {
            Kind::Exchange { input, .. } | Kind::AllToAllV { input, .. } => input,
            _ => return None,
        };
        let r = self.reach(input);
        (!r.written && !r.shared).then_some(input)
    }

    /// The output window an MPI library call writes straight into the caller's buffer instead
    /// of copying it out of the window after the kernel: an allreduce's or broadcast's data
    /// window (then also the input: the caller's buffer already holds it, nothing is staged),
    /// an allgather's, all_to_all's, all_to_all_v's or scatter's target, when the runtime never reaches
    /// it ([`Reach::shared`]): every access is a load or store of its own rank through the
    /// window's local pointer (a `copy`, the destination of a `get`, a local `reduce`, the
    /// source of a `put`), which the call points at the caller's buffer. A window a peer puts
    /// into, gets from or reduces into (through RMA or its shared-memory pointer) keeps the
    /// copy: those reach the window's own memory. What the window held before the call does
    /// not matter: a verified protocol's outputs are the call's sources (the simulator checks
    /// their provenance), never the window's earlier content. `None` for reduce_scatter (its
    /// output is one row of the data window), reduce and gather (their output is the root's
    /// only: another rank may pass no buffer) and barrier.
    pub fn write_in_place(&self) -> Option<WindowId> {
        let out = match self.kind {
            Kind::Allreduce { data } | Kind::Broadcast { data, .. } => data,
            Kind::Exchange { target, .. }
            | Kind::AllToAllV { target, .. }
            | Kind::Scatter { target, .. } => target,
            Kind::ReduceScatter { .. }
            | Kind::Reduce { .. }
            | Kind::Gather { .. }
            | Kind::Barrier => return None,
        };
        (!self.reach(out).shared).then_some(out)
    }

    /// The output window a broadcast writes straight into the caller's buffer on every rank
    /// but the root, when [`Coll::write_in_place`] does not hold because the runtime reaches
    /// it, but only at the root ([`Reach::beyond_root`]: every get from it, put or reduce into
    /// it names the root as its rank). Every other rank's window is then its own loads and
    /// stores, as [`Coll::write_in_place`] requires; the root's stays the window's memory,
    /// which its peers read (and the root copies nothing out:
    /// [`Coll::root_skips_copy_out`]).
    pub fn write_in_place_off_root(&self) -> Option<WindowId> {
        let Kind::Broadcast { data, .. } = self.kind else {
            return None;
        };
        let r = self.reach(data);
        (r.shared && !r.beyond_root).then_some(data)
    }

    /// How the protocol's statements (body and epilogue) reach window `w`.
    fn reach(&self, w: WindowId) -> Reach {
        let w = BufferRef::Window(w);
        let root = self.root();
        let is_root = |e: &Expr| {
            let e = match e {
                Expr::Rank(x) => &**x,
                e => e,
            };
            matches!(e, Expr::Var(v) if Some(*v) == root)
        };
        let mut r = Reach::default();
        let mut visit = |s: &Stmt| {
            // (written, the rank the runtime reaches it at)
            let (written, at) = match &s.kind {
                StmtKind::Copy { dst, .. } => (dst.buffer == w, None),
                StmtKind::Put { dst, to, .. } => (dst.buffer == w, (dst.buffer == w).then_some(to)),
                StmtKind::Get { dst, src, from } => {
                    (dst.buffer == w, (src.buffer == w).then_some(from))
                }
                StmtKind::Reduce {
                    dst, src, from, to, ..
                } => {
                    let at = match (from, to) {
                        (Some(q), _) if src.buffer == w => Some(q),
                        (_, Some(q)) if dst.buffer == w => Some(q),
                        _ => None,
                    };
                    (dst.buffer == w, at)
                }
                _ => (false, None),
            };
            r.written |= written;
            if let Some(q) = at {
                r.shared = true;
                r.beyond_root |= !is_root(q);
            }
        };
        let p = self.p();
        each_stmt(&p.body, &mut visit);
        each_stmt(&p.epilogue, &mut visit);
        r
    }

    /// The parameter that is the element count of each call in both libraries (the host
    /// library's per-call count): [`Coll::row_param`] of an allreduce, broadcast or reduce
    /// whose data window is 1-D (`T[n]`).
    pub fn size_param(&self) -> Option<VarId> {
        let one_dim = match self.kind {
            Kind::Allreduce { data } | Kind::Broadcast { data, .. } | Kind::Reduce { data, .. } => {
                self.p().windows[data].dims.len() == 1
            }
            _ => false,
        };
        self.row_param().filter(|_| one_dim)
    }

    /// The parameter a library of `target` takes per call: [`Coll::size_param`] (host) or
    /// [`Coll::row_param`] (MPI).
    pub fn count_param(&self, target: super::LibTarget) -> Option<VarId> {
        match target {
            super::LibTarget::Host => self.size_param(),
            super::LibTarget::Mpi => self.row_param(),
        }
    }

    /// The parameter that is the row length of each call, when the collective takes its
    /// count per call (MPI library): an integer parameter `m` that is the last dimension of
    /// every window the call stages or collects (`[m]`, `[P][m]`, `[P][R][m]`: leading
    /// dimensions that do not read `m`), that sizes nothing else that must stay fixed for
    /// the communicator's lifetime (signal arrays, the block count, host arrays, other
    /// windows), and where the protocol carries no state from call to call beyond credits
    /// that return to zero (no `monotonic` signal, no read of `call`, no value signal but
    /// all_to_all_v's receive counts, which every sender writes each call before the barrier
    /// its receiver waits on). Windows are sized for the configured `m` (the largest) once;
    /// a call runs the protocol at its own `m`, after every peer has left every earlier call
    /// when `m` changes. `None`: the count is fixed at creation.
    pub fn row_param(&self) -> Option<VarId> {
        let p = self.p();
        let staged = self.staged();
        let v = match p.windows[*staged.first()?].dims.last() {
            Some(collc_spec::ir::Expr::Var(v)) => *v,
            _ => return None,
        };
        if !matches!(p.vars[v].kind, VarKind::Param { domain: Some(_) }) {
            return None;
        }
        let reads = |e: &collc_spec::ir::Expr| reads_var(p, e, v);
        let row_of_m = |w: &WindowId| match p.windows[*w].dims.split_last() {
            Some((collc_spec::ir::Expr::Var(x), lead)) => *x == v && !lead.iter().any(reads),
            _ => false,
        };
        if !staged.iter().all(row_of_m) {
            return None;
        }
        let counts = match self.kind {
            Kind::AllToAllV { recv_counts, .. } => Some(recv_counts),
            _ => None,
        };
        let carries_state = p.call.is_some()
            || collc_spec::id::enumerate(&p.signals).any(|(i, s)| {
                s.monotonic || (s.kind == collc_spec::ir::SignalKind::Value && Some(i) != counts)
            });
        let fixed_dims_read_it = p.signals.iter().any(|s| s.dims.iter().any(reads))
            || p.arrays.iter().any(|a| a.dims.iter().any(reads))
            || p.blocks.as_ref().is_some_and(|b| reads(&b.count))
            || collc_spec::id::enumerate(&p.windows)
                .any(|(w, win)| !staged.contains(&w) && win.dims.iter().any(reads));
        (!carries_state && !fixed_dims_read_it).then_some(v)
    }

    /// One line describing a parameter's domain.
    pub fn param_doc(&self, v: VarId) -> String {
        let var = &self.p().vars[v];
        match var.kind {
            VarKind::Param {
                domain: Some((lo, hi)),
            } => format!("param {}: int in {lo}..={hi}", var.name),
            _ => format!("param {}: rank in 0..P", var.name),
        }
    }

    /// The args slot of a window.
    pub fn slot(&self, w: WindowId) -> usize {
        self.k
            .abi
            .buffer_slot(BufferSource::Window(w))
            .unwrap_or_default()
    }

    /// The world size's declared domain and the verified limit: (lo, limit).
    pub fn world(&self) -> (i64, i64) {
        match self.p().vars[self.p().world].kind {
            VarKind::World { lo, .. } => (lo.max(1), self.k.world_limit),
            _ => (1, self.k.world_limit),
        }
    }
}

/// The function suffix and the call shape of a protocol's kind.
fn kind_of(p: &Protocol) -> (&'static str, Kind) {
    match &p.semantics {
        Semantics::Reduce { root, data, .. } => (
            "reduce",
            Kind::Reduce {
                root: *root,
                data: *data,
            },
        ),
        Semantics::Gather {
            root,
            input,
            target,
        } => (
            "gather",
            Kind::Gather {
                root: *root,
                input: *input,
                target: *target,
            },
        ),
        Semantics::Scatter {
            root,
            input,
            target,
        } => (
            "scatter",
            Kind::Scatter {
                root: *root,
                input: *input,
                target: *target,
            },
        ),
        Semantics::Barrier { .. } => ("barrier", Kind::Barrier),
        Semantics::Allreduce { data, .. } => ("allreduce", Kind::Allreduce { data: *data }),
        Semantics::Broadcast { root, data } => (
            "broadcast",
            Kind::Broadcast {
                root: *root,
                data: *data,
            },
        ),
        Semantics::Allgather { input, target } => (
            "allgather",
            Kind::Exchange {
                input: *input,
                target: *target,
                all_to_all: false,
            },
        ),
        Semantics::AllToAll { input, target } => (
            "all_to_all",
            Kind::Exchange {
                input: *input,
                target: *target,
                all_to_all: true,
            },
        ),
        Semantics::ReduceScatter { data, .. } => {
            ("reduce_scatter", Kind::ReduceScatter { data: *data })
        }
        Semantics::AllToAllV {
            input,
            target,
            send_counts,
            recv_counts,
            ..
        } => (
            "all_to_all_v",
            Kind::AllToAllV {
                input: *input,
                target: *target,
                send_counts: *send_counts,
                recv_counts: *recv_counts,
            },
        ),
    }
}

fn per_call(p: &Protocol, name: &str, span: collc_grammar::Span) -> Diagnostic {
    Diagnostic::error(
        "lib::per-call-buffer",
        format!(
            "collective `{}`: `{name}` is declared `per call` (a fresh buffer every call), and no reuse distance was verified for it; a library reuses its buffers for an unbounded number of calls",
            p.name
        ),
    )
    .with_primary(span, "declared per call")
    .with_help("package it with `collc emit --lib`, which verifies the protocol with its `per call` buffers rotated over 2 instances (Protocol::with_per_call_rotation); or declare it `reused` and verify the protocol under that contract (e.g. examples/broadcast_read_complete.coll is the reused-window broadcast)")
}

/// Why a protocol with `per call` buffers is not packaged: it is not verified safe when its
/// `per call` buffers are [`super::ROTATION`] instances used in rotation (`blockers`: the
/// gate's reasons, one line each).
pub fn per_call_reuse_refused(p: &Protocol, k: u32, blockers: &[String]) -> Diagnostic {
    let (name, span) = (0..p.windows.len())
        .find(|&w| p.window_per_call(Id::new(w)))
        .map(|w| (p.windows[w].name.as_str(), p.windows[w].span))
        .or_else(|| {
            (0..p.signals.len())
                .find(|&s| p.signal_per_call(Id::new(s)))
                .map(|s| (p.signals[s].name.as_str(), p.signals[s].span))
        })
        .unwrap_or((p.name.as_str(), p.span));
    Diagnostic::error(
        "lib::per-call-reuse",
        format!(
            "collective `{}`: a library holds `{name}` (declared `per call`) as {k} instances used in rotation, so call c+{k} reuses call c's buffer, and the protocol is not verified safe at that reuse distance: {}",
            p.name,
            if blockers.is_empty() {
                "no obligation named".to_string()
            } else {
                blockers.join("; ")
            }
        ),
    )
    .with_primary(span, "declared per call")
    .with_help(format!(
        "make a rank unable to start call c+{k} before every peer is done with call c's `{name}` (e.g. a read-complete round, as examples/broadcast_read_complete.coll does), or declare it `reused` and verify the protocol under that contract"
    ))
}

/// Whether `e` reads variable `v`, directly or through top-level `let`s.
fn reads_var(p: &Protocol, e: &collc_spec::ir::Expr, v: VarId) -> bool {
    let mut found = false;
    e.for_each_var(&mut |x| {
        if x == v {
            found = true;
        } else if let VarKind::Derived(d) = &p.vars[x].kind {
            found |= reads_var(p, d, v);
        }
    });
    found
}
