//! The argument checks every library call makes before it touches a window, and the shape
//! check of creation, written once for both targets: the C++ differs only in how a rank and
//! a window's element count are spelled.

use super::api::{Coll, Kind};
use crate::cpp::Writer;
use collc_spec::ir::WindowId;

/// Null buffers (EINVAL), buffers smaller than their window (ESIZE; a buffer only the root
/// reads or writes is checked on the root only), a root (broadcast, reduce, gather, scatter)
/// other than the configuration's and all_to_all_v send counts outside the verified domain
/// (EDOMAIN), each poisoning the communicator through `comm->comm.poison(code, fmt, ...)`.
/// `rank`: the C++ rank; `len(w)`: window `w`'s element count as a C++ expression;
/// `nranks`: P. `count_is_size`: the call's `count` is its element count (checked against
/// the domain by the caller), not the capacity of `data`.
pub fn arguments(
    name: &str,
    c: &Coll,
    w: &mut Writer,
    rank: &str,
    len: &dyn Fn(WindowId) -> String,
    nranks: &str,
    count_is_size: bool,
) {
    let f = &c.func;
    for b in buffers(c, len, nranks) {
        let (buf, when) = (b.arg, b.only_root(rank));
        w.line(format!("if ({when}{buf} == nullptr) return comm->comm.poison(kEInval, \"{name}_{f}: rank %d: {buf} is NULL\", {rank});"));
    }
    if !count_is_size {
        sizes(name, c, w, rank, len, nranks);
    }
    if let Some(root) = c.root() {
        let field = c.k.var(root);
        let cfg = &c.cfg;
        w.line(format!("if (root != comm->config.{cfg}.{field}) return comm->comm.poison(kEDomain, \"{name}_{f}: rank %d: root %d, but the communicator was configured for root %lld (back-to-back calls are verified for one parameter assignment)\", {rank}, root, static_cast<long long>(comm->config.{cfg}.{field}));"));
    }
    if let Kind::AllToAllV { send_counts, .. } = c.kind {
        let (lo, hi) = c.p().arrays[send_counts].domain;
        for buf in ["send_counts", "recv_counts"] {
            w.line(format!("if ({buf} == nullptr) return comm->comm.poison(kEInval, \"{name}_{f}: rank %d: {buf} is NULL\", {rank});"));
        }
        w.open(format!(
            "for (int collc_j = 0; collc_j < {nranks}; ++collc_j)"
        ));
        w.line(format!("if (send_counts[collc_j] < {lo} || send_counts[collc_j] > {hi}) return comm->comm.poison(kEDomain, \"{name}_{f}: rank %d: send_counts[%d] = %d is outside the verified domain {lo}..={hi}\", {rank}, collc_j, static_cast<int>(send_counts[collc_j]));"));
        w.close();
    }
}

/// At creation: allgather's and gather's output must be P input rows, scatter's input P
/// output rows, all_to_all's input and output the same size (what the collective's meaning
/// needs beyond the domains).
pub fn shape(name: &str, c: &Coll, w: &mut Writer, len: &dyn Fn(WindowId) -> String, nranks: &str) {
    let rows = |of: WindowId, row: WindowId| {
        format!(
            "static_cast<int64_t>({}) != static_cast<int64_t>({}) * static_cast<int64_t>({nranks})",
            len(of),
            len(row)
        )
    };
    let (cond, what) = match c.kind {
        Kind::Gather { input, target, .. } => {
            (rows(target, input), "the output window is not P input rows")
        }
        Kind::Scatter { input, target, .. } => {
            (rows(input, target), "the input window is not P output rows")
        }
        _ => (String::new(), ""),
    };
    if !cond.is_empty() {
        w.line(format!(
            "if ({cond}) return fail(kEDomain, \"{name}_comm_create: {}: {what}\");",
            c.func
        ));
    }
    if let Kind::Exchange {
        input,
        target,
        all_to_all,
    } = c.kind
    {
        let (i, t) = (len(input), len(target));
        let (cond, what) = if all_to_all {
            (
                format!("{i} != {t}"),
                "input and output windows differ in size",
            )
        } else {
            (
                format!("static_cast<int64_t>({t}) != static_cast<int64_t>({i}) * static_cast<int64_t>({nranks})"),
                "the output window is not P input rows",
            )
        };
        w.line(format!(
            "if ({cond}) return fail(kEDomain, \"{name}_comm_create: {}: {what}\");",
            c.func
        ));
    }
}

/// One buffer argument of a call.
struct Buffer {
    /// The argument.
    arg: &'static str,
    /// Its count argument.
    count: &'static str,
    /// The elements it needs (C++).
    need: String,
    /// Read or written on the root only (a gather's output, a scatter's input): another rank
    /// may pass NULL and 0.
    root_only: bool,
}

impl Buffer {
    /// The guard of its checks: `rank == root && ` for a root-only buffer.
    fn only_root(&self, rank: &str) -> String {
        if self.root_only {
            format!("{rank} == root && ")
        } else {
            String::new()
        }
    }
}

/// The buffers of a call.
fn buffers(c: &Coll, len: &dyn Fn(WindowId) -> String, nranks: &str) -> Vec<Buffer> {
    let b = |arg, count, need, root_only| Buffer {
        arg,
        count,
        need,
        root_only,
    };
    match c.kind {
        Kind::Barrier => Vec::new(),
        Kind::Allreduce { data } | Kind::Broadcast { data, .. } | Kind::Reduce { data, .. } => {
            vec![b("data", "count", len(data), false)]
        }
        Kind::Exchange { input, target, .. } => vec![
            b("input", "input_count", len(input), false),
            b("output", "output_count", len(target), false),
        ],
        // Only the root reads a scatter's input and writes a gather's output
        // (`Coll::root_only`).
        Kind::Gather { input, target, .. } | Kind::Scatter { input, target, .. } => {
            let (i, o) = c.root_only();
            vec![
                b("input", "input_count", len(input), i),
                b("output", "output_count", len(target), o),
            ]
        }
        Kind::ReduceScatter { data } => vec![
            b("send", "send_count", len(data), false),
            b(
                "recv",
                "recv_count",
                format!("({}) / {nranks}", len(data)),
                false,
            ),
        ],
        Kind::AllToAllV { input, target, .. } => vec![
            b("send", "send_count", len(input), false),
            b("recv", "recv_count", len(target), false),
        ],
    }
}

/// Buffers smaller than their window (ESIZE, poisoning the communicator); with a per-call
/// count, after the windows are sized for this call.
pub fn sizes(
    name: &str,
    c: &Coll,
    w: &mut Writer,
    rank: &str,
    len: &dyn Fn(WindowId) -> String,
    nranks: &str,
) {
    let f = &c.func;
    for b in buffers(c, len, nranks) {
        let (buf, count, n, when) = (b.arg, b.count, &b.need, b.only_root(rank));
        w.line(format!("if ({when}{count} < static_cast<size_t>({n})) return comm->comm.poison(kESize, \"{name}_{f}: rank %d: {buf} holds %zu elements, the collective needs %llu\", {rank}, {count}, static_cast<unsigned long long>({n}));"));
    }
}
