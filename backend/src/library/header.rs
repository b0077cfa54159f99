//! The library's public C header `NAME.h`: status codes, the configuration struct (one
//! parameter struct per collective), the communicator, one function per collective, each
//! documented with its domain and its errors.

use super::api::{Coll, Kind};
use super::LibTarget;
use crate::cpp::Writer;

/// The status codes: (suffix, value, meaning). The runtimes use the same numbers
/// (`collc::lib::Status` in `collc/host_lib.hpp`, `collc_mpi::lib::Status`).
pub const STATUS: &[(&str, i32, &str)] = &[
    ("OK", 0, "success"),
    ("EINVAL", 1, "null communicator, configuration or buffer; rank outside 0..P-1"),
    ("EDOMAIN", 2, "P or a parameter outside the verified domain, a `require` that fails, a root other than the communicator's"),
    ("ESIZE", 3, "a buffer smaller than the collective needs"),
    ("EMISMATCH", 4, "ranks called different collectives at the same call index"),
    ("ETIMEOUT", 5, "a wait was not satisfied within wait_timeout_ms (a peer never called, or died)"),
    ("EKERNEL", 6, "a runtime check inside the kernel failed"),
    ("EBROKEN", 7, "another rank's call failed (the next call recovers the communicator), or the communicator cannot be used again (its recovery failed): free it"),
    ("EBUSY", 8, "host: this rank is already in a call on another thread"),
    ("ESYSTEM", 9, "allocation, thread or MPI failure"),
    ("ERESIDUE", 10, "comm_free found credit cells not back at 0"),
];

/// The C prototype of a collective's call (without `NAME_API` and `;`).
pub fn prototype(name: &str, target: LibTarget, c: &Coll) -> String {
    let rank = match target {
        LibTarget::Host => ", int rank",
        LibTarget::Mpi => "",
    };
    let t = c.elem().cpp();
    let bufs = match c.kind {
        Kind::Barrier => String::new(),
        Kind::Allreduce { .. } => format!(", {t}* data, size_t count"),
        Kind::Broadcast { .. } | Kind::Reduce { .. } => {
            format!(", {t}* data, size_t count, int root")
        }
        Kind::Gather { .. } | Kind::Scatter { .. } => format!(
            ", const {t}* input, size_t input_count, {t}* output, size_t output_count, int root"
        ),
        Kind::Exchange { .. } => {
            format!(", const {t}* input, size_t input_count, {t}* output, size_t output_count")
        }
        Kind::ReduceScatter { .. } => {
            format!(", const {t}* send, size_t send_count, {t}* recv, size_t recv_count")
        }
        Kind::AllToAllV { .. } => format!(", const {t}* send, size_t send_count, const int32_t* send_counts, {t}* recv, size_t recv_count, int32_t* recv_counts"),
    };
    format!("int {name}_{}({name}_comm* comm{rank}{bufs})", c.func)
}

/// The header comment's paragraph on ranks, windows and staging.
fn intro_doc(name: &str, target: LibTarget, w: &mut Writer) {
    match target {
        LibTarget::Host => {
            w.line(" * Ranks are threads of this process. Create one communicator for P ranks; then each");
            w.line(" * rank's thread calls the collectives with its rank, back to back, in the same order on");
            w.line(" * every rank (one call per rank at a time). The communicator owns one symmetric window");
            w.line(" * per rank (signals and data windows, allocated and zeroed once, reused by every call as");
            w.line(" * verified); a call copies the caller's input into it before the kernel and the output");
            w.line(" * back after it, on the calling thread. The caller owns its buffers.");
        }
        LibTarget::Mpi => {
            w.line(" * Ranks are the processes of an MPI communicator. Create one collc communicator on it");
            w.line(format!(
                " * (collective: every process calls {name}_comm_create with the same configuration);"
            ));
            w.line(
                " * then every process calls the collectives back to back in the same order. The",
            );
            w.line(" * communicator owns the RMA windows (MPI_Win_allocate, zeroed once, one lock_all epoch,");
            w.line(" * reused by every call as verified); a call copies the caller's input into its window");
            w.line(" * before the kernel and the output back after it (staging: user buffers are never");
            w.line(
                " * registered as windows); an input only its own process reads (an allgather or",
            );
            w.line(" * all_to_all that pushes from it) is read from the caller's buffer during the call");
            w.line(" * instead of copied, and an output only its own process reaches (an allgather that");
            w.line(" * gets into it, an allreduce whose peers put into a scratch window) is written into the");
            w.line(" * caller's buffer during the call (after a failed call its content is unspecified).");
            w.line(" * A process may hold several collc communicators (each on its own duplicate of the MPI");
            w.line(" * communicator given, with its own windows) and call them alternately, from one thread");
            w.line(" * at a time.");
        }
    }
}

/// The header comment's paragraph on errors and what follows one.
fn errors_doc(name: &str, target: LibTarget, w: &mut Writer) {
    w.line(format!(
        " * Errors: every function returns a status; {name}_last_error() describes the last failure of"
    ));
    w.line(" * the calling thread. A call never hangs: a wait that is never satisfied ends after");
    w.line(" * wait_timeout_ms with ETIMEOUT, and a bad argument on a valid rank is found by its peers");
    match target {
        LibTarget::Host => {
            w.line(" * (peers blocked in the same call, or entering a call before they returned from one since,");
            w.line(" * return at once with EBROKEN). After a failure (a bad argument, a mismatch, a timeout, on");
            w.line(" * any rank) the next call of each rank recovers the communicator: it waits, up to");
            w.line(" * wait_timeout_ms, until every rank has come to its own next");
            w.line(" * call, the windows and call counts are zeroed, and the call runs from the state the");
            w.line(" * communicator was created in. If a rank does not come within wait_timeout_ms, the");
            w.line(" * communicator refuses every later call (EBROKEN): free it.");
        }
        LibTarget::Mpi => {
            w.line(" * in its call record at their call's entry or within about a millisecond of a pending");
            w.line(" * wait (they return EBROKEN). After a failure (a bad argument, a mismatch, a timeout,");
            w.line(" * here or on a peer) the next call on each process recovers the communicator: it waits,");
            w.line(" * up to wait_timeout_ms, until every process has come to its own next call, every");
            w.line(" * process zeroes its windows and call records, and the call runs from the state the");
            w.line(" * communicator was created in. If a process does not come within wait_timeout_ms, the");
            w.line(" * communicator refuses every later call (EBROKEN): free it.");
        }
    }
}

/// The parameter struct of each collective and the communicator's configuration.
fn config_types(name: &str, target: LibTarget, colls: &[Coll], w: &mut Writer) {
    for c in colls {
        w.line(format!(
            "/* Parameters of {name}_{} ({}), fixed for the communicator's lifetime: back-to-back calls are",
            c.func,
            c.p().name
        ));
        w.line(" * verified for one parameter assignment. */");
        w.line("typedef struct {");
        let params = c.params();
        if params.is_empty() {
            w.line("    int64_t unused_; /* no parameters */");
        }
        let per_call = c.count_param(target);
        for (v, cname) in &params {
            let more = if per_call == Some(*v) {
                ": the largest of a call (windows are sized for it once; each call passes its own)"
            } else {
                ""
            };
            w.line(format!(
                "    int64_t {cname}; /* {}{more} */",
                c.param_doc(*v)
            ));
        }
        w.line(format!("}} {name}_{}_params;", c.cfg));
        w.line("");
    }
    w.line("/* The communicator's configuration. */");
    w.line("typedef struct {");
    for c in colls {
        w.line(format!("    {name}_{f}_params {f};", f = c.cfg));
    }
    w.line(match target {
        LibTarget::Host => "    int64_t wait_timeout_ms; /* a wait not satisfied after this long fails the call (0: $COLLC_TWAIT_TIMEOUT_MS, else 10000) */",
        LibTarget::Mpi => "    int64_t wait_timeout_ms; /* a wait not satisfied after this long fails the call (0: $COLLC_MPI_WAIT_TIMEOUT_MS, else 20000) */",
    });
    w.line(format!("}} {name}_config;"));
    w.line("");
}

/// The communicator handle, `NAME_comm_create` and `NAME_comm_free`.
fn lifetime_fns(name: &str, up: &str, target: LibTarget, colls: &[Coll], w: &mut Writer) {
    w.line(format!("typedef struct {name}_comm {name}_comm;"));
    w.line("");
    let (create, lo_hi) = match target {
        LibTarget::Host => (
            format!("int {name}_comm_create(int nranks, const {name}_config* config, {name}_comm** comm)"),
            "nranks",
        ),
        LibTarget::Mpi => (
            format!("int {name}_comm_create(MPI_Comm mpi_comm, const {name}_config* config, {name}_comm** comm)"),
            "the MPI communicator's size",
        ),
    };
    w.line(format!(
        "/* Creates a communicator ({lo_hi} ranks) for the configuration; *comm is NULL on failure."
    ));
    for c in colls {
        let (lo, limit) = c.world();
        w.line(format!(
            " * {}: P in {lo}..={limit} (the verified world limit), and every parameter in its domain.",
            c.cfg
        ));
    }
    w.line(" * Errors: EINVAL (null pointer), EDOMAIN (P or a parameter outside the verified domain, a");
    w.line(" * `require` that fails), ESYSTEM. */");
    w.line(format!("{up}_API {create};"));
    w.line("");
    w.line("/* Frees the communicator (MPI: collective). Call when no call is in flight. Returns ERESIDUE");
    w.line(" * if a credit cell is not back at 0 (host: every rank's cells; MPI: this process's). NULL is a no-op. */");
    w.line(format!("{up}_API int {name}_comm_free({name}_comm* comm);"));
    w.line("");
}

/// `NAME.h`.
pub fn header(name: &str, target: LibTarget, colls: &[Coll]) -> String {
    let up = name.to_uppercase();
    let mut w = Writer::default();
    w.line(format!(
        "/* {name}.h: generated by collc (`collc emit --target {} --lib {name}`). Do not edit. */",
        target.name()
    ));
    w.line("/*");
    for c in colls {
        let src = c.k.source.map_or("(IR)".to_string(), |s| s.name.clone());
        w.line(format!(
            " * {name}_{}: collective {} from {src}, verified before packaging.",
            c.func,
            c.p().name
        ));
    }
    w.line(" *");
    intro_doc(name, target, &mut w);
    w.line(" *");
    errors_doc(name, target, &mut w);
    w.line(" */");
    w.line(format!("#ifndef {up}_H"));
    w.line(format!("#define {up}_H"));
    w.line("");
    w.line("#include <stddef.h>");
    w.line("#include <stdint.h>");
    if target == LibTarget::Mpi {
        w.line("#include <mpi.h>");
    }
    w.line("");
    w.line(format!(
        "#define {up}_API __attribute__((visibility(\"default\")))"
    ));
    w.line("");
    w.line("#ifdef __cplusplus");
    w.line("extern \"C\" {");
    w.line("#endif");
    w.line("");
    w.line("/* Status codes. */");
    for (s, v, what) in STATUS {
        w.line(format!("#define {up}_{s} {v} /* {what} */"));
    }
    w.line("");
    config_types(name, target, colls, &mut w);
    lifetime_fns(name, &up, target, colls, &mut w);
    for (_, ms) in super::kinds(colls) {
        if ms.len() > 1 {
            several_doc(name, &up, target, &ms, &mut w);
            continue;
        }
        let c = ms[0];
        doc(name, target, c, &mut w);
        w.line(format!("{up}_API {};", prototype(name, target, c)));
        for n in counts(c) {
            if c.count_param(target).is_some() {
                w.line(format!(
                    "/* Elements {} holds at the largest count of a call, the configured one (0 for a NULL comm). */",
                    n.what
                ));
            } else {
                w.line(format!(
                    "/* Elements {} needs for the communicator's parameters (0 for a NULL comm). */",
                    n.what
                ));
            }
            w.line(format!(
                "{up}_API size_t {name}_{}_{}(const {name}_comm* comm);",
                c.func, n.suffix
            ));
        }
        w.line("");
    }
    w.line("/* Name of a status code. */");
    w.line(format!("{up}_API const char* {name}_strerror(int status);"));
    w.line("/* The calling thread's last error message (\"\" if none). */");
    w.line(format!("{up}_API const char* {name}_last_error(void);"));
    w.line("");
    w.line("#ifdef __cplusplus");
    w.line("}");
    w.line("#endif");
    w.line("");
    w.line(format!("#endif /* {up}_H */"));
    w.finish()
}

/// A kind with several protocols: its function, `_pin`, `_protocol` and the counts.
fn several_doc(name: &str, up: &str, target: LibTarget, ms: &[&Coll], w: &mut Writer) {
    let f = &ms[0].func;
    w.line(format!(
        "/* {name}_{f}: one of {} verified {f} protocols runs each call, chosen by the call's count and P:",
        ms.len()
    ));
    w.line(format!(
        " * the one the decision table prefers (`collc tune`; README.md, {name}.tune), else the first of"
    ));
    w.line(
        " * these, in order, that can serve the call (the count in its domain, its `require`s, its",
    );
    w.line(" * windows; P in its domain):");
    for c in ms {
        w.line(format!(
            " *   {} (configured by config.{}; {}),",
            c.cfg,
            c.cfg,
            c.count_param(target)
                .map_or(String::new(), |v| c.param_doc(v))
        ));
    }
    if target == LibTarget::Host {
        w.line(" * (host: each protocol's count in its domain and at most the configured one),");
    }
    w.line(" * each as documented for a single protocol: every rank passes the same arguments, and a call");
    w.line(" * whose count no protocol serves fails as the preferred one would. A protocol that does not run");
    w.line(" * with the configuration (P, a `require`) is set aside at creation; if none of a kind runs,");
    w.line(" * creation fails (EDOMAIN).");
    w.line(" * Errors: EINVAL, EDOMAIN, ESIZE, EMISMATCH, ETIMEOUT, EKERNEL, EBROKEN. */");
    w.line(format!("{up}_API {};", prototype(name, target, ms[0])));
    match target {
        LibTarget::Mpi => {
            w.line(format!(
                "/* Every later {name}_{f} call on this process runs `protocol` (a collective name above), or the"
            ));
            w.line(" * decision table's choice again for NULL; every process must pin alike (EMISMATCH). EINVAL for");
        }
        LibTarget::Host => {
            w.line(format!(
                "/* Every later {name}_{f} call on any rank runs `protocol` (a collective name above), or the"
            ));
            w.line(" * decision table's choice again for NULL; call it while no call is in flight. EINVAL for");
        }
    }
    w.line(" * another name, EDOMAIN for a protocol set aside at creation. */");
    w.line(format!(
        "{up}_API int {name}_{f}_pin({name}_comm* comm, const char* protocol);"
    ));
    w.line(format!(
        "/* The protocol a {name}_{f} call with this count argument runs here (NULL: none can serve it). */"
    ));
    w.line(format!(
        "{up}_API const char* {name}_{f}_protocol({name}_comm* comm, size_t count);"
    ));
    for n in counts(ms[0]) {
        w.line(format!(
            "/* Elements {} holds at the largest count a call may pass (the largest over the protocols). */",
            n.what
        ));
        w.line(format!(
            "{up}_API size_t {name}_{f}_{}(const {name}_comm* comm);",
            n.suffix
        ));
    }
    w.line("");
}

/// reduce_scatter's and all_to_all_v's calls: rows or blocks of rows per rank.
fn blocks_doc(name: &str, c: &Coll, w: &mut Writer) {
    let p = c.p();
    match c.kind {
        Kind::ReduceScatter { data } => {
            let op = match p.semantics {
                collc_spec::ir::Semantics::ReduceScatter { op, .. } => {
                    format!("{op:?}").to_lowercase()
                }
                _ => String::new(),
            };
            w.line(format!(
            "/* {name}_{}: send holds P rows of M elements (window `{}`, P * M = send_count needed); recv[0..M)",
            c.func, p.windows[data].name
        ));
            w.line(format!(
            " * becomes the element-wise {op} over every rank's send row `rank` (ESIZE if send_count < P * M"
        ));
            w.line(" * or recv_count < M).");
        }
        Kind::AllToAllV {
            input,
            target: out,
            send_counts,
            recv_counts,
        } => {
            let (lo, hi) = p.arrays[send_counts].domain;
            w.line(format!(
            "/* {name}_{}: send holds P blocks of R rows (window `{}`); block j goes to rank j, whose",
            c.func, p.windows[input].name
        ));
            w.line(format!(
            " * recv block `rank` (window `{}`) receives it; send_counts[j] (P entries, each in {lo}..={hi}, the",
            p.windows[out].name
        ));
            w.line(format!(
            " * verified domain of `{}`, else EDOMAIN) is how many rows of block j are valid; recv_counts[j]",
            p.arrays[send_counts].name
        ));
            w.line(format!(
            " * (P entries, value signal `{}`) becomes min(rank j's send_counts[rank], R): only those rows of",
            p.signals[recv_counts].name
        ));
            w.line(" * recv block j are defined. ESIZE if send_count or recv_count is smaller than the window;");
            w.line(" * EINVAL for a NULL counts array.");
        }
        _ => {}
    }
}

fn doc(name: &str, target: LibTarget, c: &Coll, w: &mut Writer) {
    let who = match target {
        LibTarget::Host => "rank `rank`",
        LibTarget::Mpi => "this process",
    };
    let p = c.p();
    let size = c.count_param(target);
    match c.kind {
        Kind::Allreduce { .. } | Kind::Broadcast { .. } | Kind::Reduce { .. } if size.is_some() => {
            if let Some(size) = size {
                per_call_doc(name, c, size, w)
            }
        }
        Kind::Barrier => {
            w.line(format!(
                "/* {name}_{}: {who} returns once every rank has entered this call.",
                c.func
            ));
        }
        Kind::Allreduce { data } => {
            let op = match p.semantics {
                collc_spec::ir::Semantics::Allreduce { op, .. } => format!("{op:?}").to_lowercase(),
                _ => String::new(),
            };
            w.line(format!(
                "/* {name}_{}: data[0..N) becomes the element-wise {op} over every rank's data[0..N), N = the element count of",
                c.func
            ));
            w.line(format!(
                " * window `{}` for the communicator's parameters; count is data's capacity (ESIZE if < N).",
                p.windows[data].name
            ));
        }
        Kind::Broadcast { root, data } => {
            w.line(format!(
                "/* {name}_{}: every rank's data[0..N) becomes the root's, N = the element count of window `{}`;",
                c.func, p.windows[data].name
            ));
            w.line(format!(
                " * count is data's capacity (ESIZE if < N); root must equal the configuration's `{}` (EDOMAIN).",
                p.vars[root].name
            ));
        }
        Kind::Exchange {
            input,
            target: out,
            all_to_all,
        } => {
            let what = if all_to_all {
                "row j of output becomes rank j's input row `rank`"
            } else {
                "row j of output becomes rank j's input"
            };
            w.line(format!(
                "/* {name}_{}: {what}; input holds window `{}`'s elements, output window `{}`'s",
                c.func, p.windows[input].name, p.windows[out].name
            ));
            w.line(" * (ESIZE if a count is smaller).");
        }
        Kind::Reduce { .. } => reduce_doc(name, c, w),
        Kind::Gather { .. } | Kind::Scatter { .. } => rooted_doc(name, c, w),
        Kind::ReduceScatter { .. } | Kind::AllToAllV { .. } => blocks_doc(name, c, w),
    }
    if let (
        Some(v),
        Kind::Exchange { .. }
        | Kind::ReduceScatter { .. }
        | Kind::AllToAllV { .. }
        | Kind::Gather { .. }
        | Kind::Scatter { .. },
    ) = (size, c.kind)
    {
        per_call_rows_doc(c, v, w);
    }
    if let Some(b) = &p.calls {
        w.line(format!(
            " * At most {} calls of {name}_{} per communicator (`calls <= {}`, {}, the verified domain):",
            b.max,
            c.func,
            b.max,
            c.k.at(b.span)
        ));
        w.line(" * the next one returns EDOMAIN without touching the communicator.");
    }
    let busy = match target {
        LibTarget::Host => ", EBUSY",
        LibTarget::Mpi => "",
    };
    w.line(format!(
        " * Errors: EINVAL, EDOMAIN, ESIZE, EMISMATCH, ETIMEOUT, EKERNEL, EBROKEN{busy}. */"
    ));
}

/// The reduction operator of an allreduce, reduce or reduce_scatter, lower case.
fn op_name(p: &collc_spec::Validated) -> String {
    p.reduce_op()
        .map(|op| format!("{op:?}").to_lowercase())
        .unwrap_or_default()
}

/// A reduce of a fixed count.
fn reduce_doc(name: &str, c: &Coll, w: &mut Writer) {
    let p = c.p();
    let Kind::Reduce { root, data } = c.kind else {
        return;
    };
    w.line(format!(
        "/* {name}_{}: the root's data[0..N) becomes the element-wise {} over every rank's data[0..N),",
        c.func,
        op_name(p)
    ));
    w.line(format!(
        " * N = the element count of window `{}` (the other ranks' data is left as it was); count is",
        p.windows[data].name
    ));
    w.line(format!(
        " * data's capacity (ESIZE if < N); root must equal the configuration's `{}` (EDOMAIN).",
        p.vars[root].name
    ));
}

/// gather's and scatter's calls: the root's P rows, one per rank.
fn rooted_doc(name: &str, c: &Coll, w: &mut Writer) {
    let p = c.p();
    let (what, only) = match c.kind {
        Kind::Gather { .. } => (
            "row j of the root's output becomes rank j's input",
            "output is read on the root only",
        ),
        _ => (
            "every rank's output becomes row `rank` of the root's input",
            "input is read on the root only",
        ),
    };
    let (input, out, root) = match c.kind {
        Kind::Gather {
            input,
            target,
            root,
        }
        | Kind::Scatter {
            input,
            target,
            root,
        } => (input, target, root),
        _ => return,
    };
    w.line(format!(
        "/* {name}_{}: {what}; input holds window `{}`'s elements, output window `{}`'s",
        c.func, p.windows[input].name, p.windows[out].name
    ));
    w.line(format!(
        " * (ESIZE if a count is smaller); {only} (another rank may pass NULL and 0); root must"
    ));
    w.line(format!(
        " * equal the configuration's `{}` (EDOMAIN).",
        p.vars[root].name
    ));
}

/// An allreduce, broadcast or reduce that takes its element count per call.
fn per_call_doc(name: &str, c: &Coll, v: collc_spec::ir::VarId, w: &mut Writer) {
    let p = c.p();
    let n = &p.vars[v].name;
    let lo = match p.vars[v].kind {
        collc_spec::ir::VarKind::Param {
            domain: Some((lo, _)),
        } => lo,
        _ => 1,
    };
    let what = match c.kind {
        Kind::Allreduce { .. } => format!(
            "data[0..count) becomes the element-wise {} over every rank's data[0..count)",
            op_name(p)
        ),
        Kind::Reduce { .. } => format!(
            "the root's data[0..count) becomes the element-wise {} over every rank's data[0..count) (the others' data is left as it was)",
            op_name(p)
        ),
        _ => "every rank's data[0..count) becomes the root's".to_string(),
    };
    w.line(format!(
        "/* {name}_{}: {what}. count is this call's element count (`{n}` of the protocol), in",
        c.func
    ));
    w.line(format!(
        " * {lo}..=config.{}.{} (EDOMAIN otherwise, or if a `require` fails at that count); every rank passes",
        c.func,
        c.k.var(v)
    ));
    w.line(" * the same count (EMISMATCH). A call at another count than the previous one first waits until every");
    w.line(" * rank has entered it.");
    if let Some(root) = c.root() {
        w.line(format!(
            " * root must equal the configuration's `{}` (EDOMAIN).",
            p.vars[root].name
        ));
    }
}

/// A collective with `[..][m]` windows that takes its row length `m` per call.
fn per_call_rows_doc(c: &Coll, v: collc_spec::ir::VarId, w: &mut Writer) {
    let p = c.p();
    let m = &p.vars[v].name;
    let lo = match p.vars[v].kind {
        collc_spec::ir::VarKind::Param {
            domain: Some((lo, _)),
        } => lo,
        _ => 1,
    };
    let arg = match c.kind {
        Kind::ReduceScatter { .. } => "recv_count is",
        Kind::AllToAllV { .. } => "send_count is the input's rows times",
        Kind::Gather { .. } => "input_count is",
        Kind::Scatter { .. } => "output_count is",
        _ => "input_count is the input's rows times",
    };
    w.line(format!(
        " * Per call: {arg} this call's `{m}` (the protocol's row length), in {lo}..=config.{}.{}",
        c.func,
        c.k.var(v)
    ));
    w.line(" * (EDOMAIN otherwise, for a count that is not a whole number of rows, or if a `require` fails");
    w.line(" * at that length); the other buffers must hold the windows at that length (ESIZE). Every rank");
    w.line(" * passes the same counts (EMISMATCH). A call at another length than the previous one first");
    w.line(" * waits until every rank has entered it.");
}

/// One element-count query function of a collective (`NAME_<func>_<suffix>(comm)`).
#[derive(Debug, Clone, Copy)]
pub struct Count {
    /// The function's suffix (`count`, `input_count`, ...).
    pub suffix: &'static str,
    /// The buffer it sizes.
    pub what: &'static str,
    /// The window behind it.
    pub window: collc_spec::ir::WindowId,
    /// True when the buffer is one rank's row of the window (its elements / P).
    pub per_rank: bool,
}

/// The element-count query functions of a collective.
pub fn counts(c: &Coll) -> Vec<Count> {
    let n = |suffix, what, window, per_rank| Count {
        suffix,
        what,
        window,
        per_rank,
    };
    match c.kind {
        Kind::Barrier => Vec::new(),
        Kind::Allreduce { data } | Kind::Broadcast { data, .. } | Kind::Reduce { data, .. } => {
            vec![n("count", "data", data, false)]
        }
        Kind::Exchange { input, target, .. }
        | Kind::Gather { input, target, .. }
        | Kind::Scatter { input, target, .. } => vec![
            n("input_count", "input", input, false),
            n("output_count", "output", target, false),
        ],
        Kind::ReduceScatter { data } => vec![
            n("send_count", "send", data, false),
            n("recv_count", "recv", data, true),
        ],
        Kind::AllToAllV { input, target, .. } => vec![
            n("send_count", "send", input, false),
            n("recv_count", "recv", target, false),
        ],
    }
}

/// `NAME_strerror` (from [`STATUS`]) and `NAME_last_error`.
pub fn errors(name: &str, w: &mut Writer) {
    w.open(format!(
        "extern \"C\" const char* {name}_strerror(int status)"
    ));
    w.line("switch (status) {");
    for (s, v, what) in STATUS {
        w.line(format!(
            "    case {v}: return {};",
            crate::cpp::c_string(&format!("{s}: {what}"))
        ));
    }
    w.line("    default: return \"unknown status\";");
    w.line("}");
    w.close();
    w.line(format!(
        "extern \"C\" const char* {name}_last_error(void) {{ return last_error().c_str(); }}"
    ));
}
