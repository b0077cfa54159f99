//! `collc emit --target mpi --pmpi FILE... -o DIR`: `libcollc_pmpi.so`, MPI's profiling
//! interface answering MPI collectives with verified protocols, for programs run unchanged
//! with `LD_PRELOAD`.
//!
//! Each protocol is packaged as its own collc MPI library (`DIR/impl<i>/libpmpi<i>.so`,
//! [`super::install`]); the generated `collc_pmpi.cpp` defines the intercepted `MPI_*`
//! functions over them and over the fixed runtime `collc_pmpi.hpp` (its header comment is
//! the contract: what is served, what passes through and why, the counters).
//!
//! Served: `MPI_Barrier` (a barrier protocol), `MPI_Allreduce` (an allreduce whose count is
//! per call, on a predefined datatype of an element type it lists and an operator it lists
//! — each pair packaged as its own library; `MPI_IN_PLACE` included), `MPI_Bcast` (a
//! broadcast whose count is per call, on its datatype, any root: one collc communicator per
//! root), `MPI_Reduce_scatter_block`, `MPI_Allgather` and `MPI_Alltoall` (a protocol of that
//! kind whose row length is per call, [`Coll::row_param`]; `MPI_IN_PLACE` included) and
//! `MPI_Alltoallv` (an all_to_all_v whose row length is per call: the largest count over
//! every rank, agreed by one `PMPI_Allreduce`, sets the row length; `MPI_IN_PLACE` passes
//! through).

use super::api::{Coll, Kind};
use super::{collectives, install, Installed, LibError, LibTarget, Member, BUILD_FLAGS};
use crate::cpp::Writer;
use collc_spec::ir::{ElemType, ReduceOp, VarKind};
use std::path::Path;

/// The fixed runtime of the PMPI library.
pub const RUNTIME: &str = include_str!("../../runtime/mpi/collc_pmpi.hpp");

fn mpi_op(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "MPI_SUM",
        ReduceOp::Max => "MPI_MAX",
        ReduceOp::Min => "MPI_MIN",
        ReduceOp::Prod => "MPI_PROD",
    }
}

/// One packaged protocol the shim can serve a collective with.
struct Served<'a> {
    lib: String,
    coll: Coll<'a>,
}

/// The configuration of protocol `s` for a communicator: its count parameter at the
/// largest count, its root at `root`, every other parameter at the bottom of its domain.
fn config(s: &Served, w: &mut Writer) {
    let c = &s.coll;
    let lib = &s.lib;
    w.line(format!("{lib}_config cfg;"));
    w.line("std::memset(&cfg, 0, sizeof cfg);");
    for (v, name) in c.params() {
        let var = &c.p().vars[v];
        let value = match var.kind {
            _ if Some(v) == c.row_param() => {
                let hi = match var.kind {
                    VarKind::Param {
                        domain: Some((_, hi)),
                    } => hi,
                    _ => i64::MAX,
                };
                match c.kind {
                    Kind::Allreduce { .. } | Kind::Broadcast { .. } => {
                        format!("collc_pmpi::max_count({hi}LL)")
                    }
                    _ => format!(
                        "collc_pmpi::max_row({hi}LL, collc_pmpi::comm_size(comm) * {}LL)",
                        block_rows(c).unwrap_or(1)
                    ),
                }
            }
            VarKind::Param {
                domain: Some((lo, _)),
            } => format!("{lo}LL"),
            _ => "root".to_string(),
        };
        w.line(format!("cfg.{}.{name} = {value};", c.func));
    }
    w.line(format!("{lib}_comm* made = nullptr;"));
    w.line(format!(
        "return {lib}_comm_create(comm, &cfg, &made) == 0 ? static_cast<void*>(made) : nullptr;"
    ));
}

/// `pmpi<i>_comm_free` as `int (*)(void*)`, and `create_pmpi<i>(comm, root)`.
fn free_fn(s: &Served, w: &mut Writer) {
    w.line(format!(
        "static int free_{lib}(void* c) {{ return {lib}_comm_free(static_cast<{lib}_comm*>(c)); }}",
        lib = s.lib
    ));
    w.open(format!(
        "[[maybe_unused]] static void* create_{}(MPI_Comm comm, [[maybe_unused]] int root)",
        s.lib
    ));
    config(s, w);
    w.close();
}

fn barrier(s: Option<&Served>, w: &mut Writer) {
    w.open("extern \"C\" int MPI_Barrier(MPI_Comm comm)");
    w.line("using namespace collc_pmpi;");
    w.line("if (depth() > 0) return PMPI_Barrier(comm);");
    w.line("const int why = comm_reason(comm);");
    w.line("if (why >= 0) { pass(kBarrier, Reason(why)); return PMPI_Barrier(comm); }");
    match s {
        None => w.line("pass(kBarrier, kNoProtocol);"),
        Some(s) => {
            w.line(format!(
                "void* c = instance(comm, kBarrier, 0, free_{lib}, [&] {{ return create_{lib}(comm, 0); }});",
                lib = s.lib
            ));
            w.line("if (c == nullptr) { pass(kBarrier, kCreate); return PMPI_Barrier(comm); }");
            w.line("Inside in;");
            w.line(format!(
                "if ({}_{}(static_cast<{}_comm*>(c)) != 0) return MPI_ERR_OTHER;",
                s.lib, s.coll.func, s.lib
            ));
            w.line("++stats().served[kBarrier];");
            w.line("return MPI_SUCCESS;");
        }
    }
    w.line("return PMPI_Barrier(comm);");
    w.close();
}

/// The datatype test of an element type (the predefined datatypes of that C type).
fn mpi_match(t: ElemType) -> String {
    let names: &[&str] = match t {
        ElemType::F32 => &["MPI_FLOAT"],
        ElemType::F64 => &["MPI_DOUBLE"],
        ElemType::I32 => &["MPI_INT", "MPI_INT32_T"],
        ElemType::I64 => &["MPI_LONG", "MPI_LONG_LONG", "MPI_INT64_T"],
    };
    let tests: Vec<String> = names.iter().map(|n| format!("datatype == {n}")).collect();
    format!("({})", tests.join(" || "))
}

/// One intercepted collective the shim can serve: its C signature and PMPI arguments, the
/// C++ that defines `datatype`, `count` (the row length) and `np` from them (or sets `why`
/// to a reason to pass through), the fit test of `count` (`{hi}`: the top of the row
/// length's domain) and the library call (`{t}` element type, `{lib}` library, `{f}`
/// function, `c` the collc communicator).
struct Entry {
    name: &'static str,
    coll: &'static str,
    params: &'static str,
    args: &'static str,
    prelude: &'static str,
    fit: &'static str,
    call: &'static str,
}

const ALLREDUCE: Entry = Entry {
    name: "MPI_Allreduce",
    coll: "kAllreduce",
    params: "const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm",
    args: "sendbuf, recvbuf, count, datatype, op, comm",
    prelude: "",
    fit: "count > 0 && count <= collc_pmpi::max_count({hi}LL)",
    call: "if (sendbuf != MPI_IN_PLACE) std::memcpy(recvbuf, sendbuf, size_t(count) * sizeof({t}));\n        Inside in;\n        if ({lib}_{f}(static_cast<{lib}_comm*>(c), static_cast<{t}*>(recvbuf), size_t(count)) != 0) return MPI_ERR_OTHER;",
};

const BCAST: Entry = Entry {
    name: "MPI_Bcast",
    coll: "kBcast",
    params: "void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm",
    args: "buffer, count, datatype, root, comm",
    prelude: "",
    fit: "count > 0 && count <= collc_pmpi::max_count({hi}LL)",
    call: "Inside in;\n        if ({lib}_{f}(static_cast<{lib}_comm*>(c), static_cast<{t}*>(buffer), size_t(count), root) != 0) return MPI_ERR_OTHER;",
};

/// MPI_IN_PLACE: the input is row `me` of recvbuf, read before the call writes recvbuf: an
/// input read in place keeps the output copied out after the protocol (the library writes
/// an output in place only apart from an input read in place), and a staged one is copied
/// into its window before the protocol starts writing.
const ALLGATHER: Entry = Entry {
    name: "MPI_Allgather",
    coll: "kAllgather",
    params: "const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm",
    args: "sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm",
    prelude: "[[maybe_unused]] const MPI_Datatype datatype = recvtype;\n    [[maybe_unused]] const int count = recvcount;\n    [[maybe_unused]] const int np = comm_size(comm);\n    if (why < 0 && sendbuf != MPI_IN_PLACE && (sendtype != recvtype || sendcount != recvcount)) why = kDatatype;",
    fit: "count > 0 && count <= collc_pmpi::max_row({hi}LL, np)",
    call: "const {t}* in = sendbuf == MPI_IN_PLACE ? static_cast<const {t}*>(recvbuf) + size_t(comm_rank(comm)) * size_t(count) : static_cast<const {t}*>(sendbuf);\n        Inside in_;\n        if ({lib}_{f}(static_cast<{lib}_comm*>(c), in, size_t(count), static_cast<{t}*>(recvbuf), size_t(np) * size_t(count)) != 0) return MPI_ERR_OTHER;",
};

/// MPI_IN_PLACE: the input is recvbuf, read before the call writes it (as for
/// [`ALLGATHER`]: read in place with the output copied out after the protocol, or staged
/// before it).
const ALLTOALL: Entry = Entry {
    name: "MPI_Alltoall",
    coll: "kAlltoall",
    params: "const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm",
    args: "sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm",
    prelude: "[[maybe_unused]] const MPI_Datatype datatype = recvtype;\n    [[maybe_unused]] const int count = recvcount;\n    [[maybe_unused]] const int np = comm_size(comm);\n    if (why < 0 && sendbuf != MPI_IN_PLACE && (sendtype != recvtype || sendcount != recvcount)) why = kDatatype;",
    fit: "count > 0 && count <= collc_pmpi::max_row({hi}LL, np)",
    call: "const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;\n        Inside in_;\n        if ({lib}_{f}(static_cast<{lib}_comm*>(c), static_cast<const {t}*>(in), size_t(np) * size_t(count), static_cast<{t}*>(recvbuf), size_t(np) * size_t(count)) != 0) return MPI_ERR_OTHER;",
};

/// MPI_IN_PLACE: the input is recvbuf's P rows; the result goes to its first row.
const REDUCE_SCATTER_BLOCK: Entry = Entry {
    name: "MPI_Reduce_scatter_block",
    coll: "kReduceScatterBlock",
    params: "const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm",
    args: "sendbuf, recvbuf, recvcount, datatype, op, comm",
    prelude: "[[maybe_unused]] const int count = recvcount;\n    [[maybe_unused]] const int np = comm_size(comm);",
    fit: "count > 0 && count <= collc_pmpi::max_row({hi}LL, np)",
    call: "const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;\n        Inside in_;\n        if ({lib}_{f}(static_cast<{lib}_comm*>(c), static_cast<const {t}*>(in), size_t(np) * size_t(count), static_cast<{t}*>(recvbuf), size_t(count)) != 0) return MPI_ERR_OTHER;",
};

/// Counts differ from rank to rank: `count` is the largest over every rank's send and
/// receive counts, agreed by one PMPI_Allreduce before the fit test (so every rank decides
/// alike); the protocol moves P blocks of `{rows}` rows of ceil(count / {rows}) elements,
/// staged through scratch buffers at the caller's displacements.
const ALLTOALLV: Entry = Entry {
    name: "MPI_Alltoallv",
    coll: "kAlltoallv",
    params: "const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm",
    args: "sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm",
    prelude: "[[maybe_unused]] const MPI_Datatype datatype = recvtype;\n    [[maybe_unused]] const int np = comm_size(comm);\n    [[maybe_unused]] long long count = 0;\n    if (why < 0 && sendbuf == MPI_IN_PLACE) why = kInPlace;\n    if (why < 0 && sendtype != recvtype) why = kDatatype;",
    fit: "(count = agreed_count(sendcounts, recvcounts, np, comm)) > 0 && ceil_div(count, {rows}) <= collc_pmpi::max_row({hi}LL, np * {rows})",
    call: "const long long m = ceil_div(count, {rows});\n        const size_t block = size_t({rows}) * size_t(m);\n        std::vector<{t}> s(static_cast<size_t>(np) * block), r(static_cast<size_t>(np) * block);\n        std::vector<int32_t> sc(static_cast<size_t>(np)), rc(static_cast<size_t>(np));\n        for (int j = 0; j < np; ++j) { std::memcpy(&s[size_t(j) * block], static_cast<const {t}*>(sendbuf) + sdispls[j], size_t(sendcounts[j]) * sizeof({t})); sc[size_t(j)] = int32_t(ceil_div(sendcounts[j], m)); }\n        {\n            Inside in_;\n            if ({lib}_{f}(static_cast<{lib}_comm*>(c), s.data(), s.size(), sc.data(), r.data(), r.size(), rc.data()) != 0) return MPI_ERR_OTHER;\n        }\n        for (int j = 0; j < np; ++j) std::memcpy(static_cast<{t}*>(recvbuf) + rdispls[j], &r[size_t(j) * block], size_t(recvcounts[j]) * sizeof({t}));",
};

/// The intercepted function a kind of protocol serves (a barrier's is fixed).
fn entry_of(k: &Kind) -> Option<&'static Entry> {
    match k {
        // MPI_Reduce, MPI_Gather and MPI_Scatter are not intercepted (yet): Open MPI's run.
        Kind::Barrier | Kind::Reduce { .. } | Kind::Gather { .. } | Kind::Scatter { .. } => None,
        Kind::Allreduce { .. } => Some(&ALLREDUCE),
        Kind::Broadcast { .. } => Some(&BCAST),
        Kind::ReduceScatter { .. } => Some(&REDUCE_SCATTER_BLOCK),
        Kind::Exchange {
            all_to_all: false, ..
        } => Some(&ALLGATHER),
        Kind::Exchange {
            all_to_all: true, ..
        } => Some(&ALLTOALL),
        Kind::AllToAllV { .. } => Some(&ALLTOALLV),
    }
}

/// One candidate protocol `k` of collective `e`: the datatype, the op (a reducing kind),
/// the count, then the collc communicator; `miss` keeps the furthest reason reached
/// (datatype < op < count < create-failed).
fn candidate(s: &Served, k: usize, e: &Entry, op: Option<ReduceOp>, w: &mut Writer) {
    let t = s.coll.elem();
    let root = if e.coll == "kBcast" { "root" } else { "0" };
    let fill = |text: &str| {
        text.replace("{t}", t.cpp())
            .replace("{lib}", &s.lib)
            .replace("{f}", &s.coll.func)
            .replace("{hi}", &domain_hi(&s.coll).to_string())
            .replace("{rows}", &block_rows(&s.coll).unwrap_or(1).to_string())
    };
    w.open(format!("if ({})", mpi_match(t)));
    if let Some(op) = op {
        w.line("if (miss < kOp) miss = kOp;");
        w.open(format!("if (op == {})", mpi_op(op)));
    }
    w.line("if (miss < kCount) miss = kCount;");
    w.open(format!("if ({})", fill(e.fit)));
    w.line(format!(
        "void* c = instance(comm, {k} * kNColl + {}, {root}, free_{lib}, [&] {{ return create_{lib}(comm, {root}); }});",
        e.coll,
        lib = s.lib
    ));
    w.open("if (c == nullptr)");
    w.line("miss = kCreate;");
    w.reopen("else");
    w.line(fill(e.call));
    w.line(format!("++stats().served[{}];", e.coll));
    w.line("return MPI_SUCCESS;");
    w.close();
    w.close();
    if op.is_some() {
        w.close();
    }
    w.close();
}

/// `MPI_<collective>`: the candidates in order, else PMPI with the furthest reason.
fn intercepted(e: &Entry, served: &[&Served], w: &mut Writer) {
    w.open(format!("extern \"C\" int {}({})", e.name, e.params));
    w.line("using namespace collc_pmpi;");
    w.line(format!("if (depth() > 0) return P{}({});", e.name, e.args));
    w.line("int why = comm_reason(comm);");
    if !e.prelude.is_empty() {
        w.line(e.prelude);
    }
    w.line(format!(
        "int miss = {};",
        if served.is_empty() {
            "kNoProtocol"
        } else {
            "kDatatype"
        }
    ));
    w.open("if (why < 0)");
    for (k, s) in served.iter().enumerate() {
        candidate(s, k, e, s.coll.p().reduce_op(), w);
    }
    w.line("why = miss;");
    w.close();
    w.line(format!("pass({}, Reason(why));", e.coll));
    w.line(format!("return P{}({});", e.name, e.args));
    w.close();
}

/// The top of the row length's domain.
fn domain_hi(c: &Coll) -> i64 {
    c.row_param()
        .and_then(|v| match c.p().vars[v].kind {
            VarKind::Param {
                domain: Some((_, hi)),
            } => Some(hi),
            _ => None,
        })
        .unwrap_or(0)
}

/// The rows of one block of an all_to_all_v's input window (`[P][R][m]`: R at the
/// configuration, the bottom of its domain), when they are known before creation and fit
/// the send counts' domain.
fn block_rows(c: &Coll) -> Option<i64> {
    let p = c.p();
    let Kind::AllToAllV {
        input, send_counts, ..
    } = c.kind
    else {
        return Some(1);
    };
    let dims = &p.windows[input].dims;
    let mut rows = 1i64;
    for d in dims.get(1..dims.len().saturating_sub(1))? {
        rows = rows.checked_mul(match d {
            collc_spec::ir::Expr::Int(n) => *n,
            collc_spec::ir::Expr::Var(v) => match p.vars[*v].kind {
                VarKind::Param {
                    domain: Some((lo, _)),
                } => lo,
                VarKind::Const(n) => n,
                _ => return None,
            },
            _ => return None,
        })?;
    }
    let (lo, hi) = p.arrays[send_counts].domain;
    (dims.len() >= 2 && rows >= 1 && lo <= 0 && hi >= rows).then_some(rows)
}

fn lifecycle(w: &mut Writer) {
    w.open(
        "extern \"C\" int MPI_Init_thread(int* argc, char*** argv, int required, int* provided)",
    );
    w.line("const int r = PMPI_Init_thread(argc, argv, required, provided);");
    w.line("collc_pmpi::thread_multiple() = r == MPI_SUCCESS && *provided == MPI_THREAD_MULTIPLE;");
    w.line("return r;");
    w.close();
    w.open("extern \"C\" int MPI_Finalize(void)");
    w.line("collc_pmpi::report();");
    w.line("collc_pmpi::finalize();");
    w.line("return PMPI_Finalize();");
    w.close();
}

/// The shim's source over the packaged protocols.
fn shim(served: &[Served]) -> String {
    let mut w = Writer::default();
    w.line("// Generated by collc emit --target mpi --pmpi: MPI collectives answered by verified");
    w.line("// protocols (collc_pmpi.hpp says what is served and what passes through).");
    w.line("#include \"collc_pmpi.hpp\"");
    for s in served {
        w.line(format!("#include \"{}.h\"", s.lib));
    }
    w.line("");
    for s in served {
        free_fn(s, &mut w);
    }
    let pick = |f: fn(&Kind) -> bool| served.iter().find(|s| f(&s.coll.kind));
    barrier(pick(|k| matches!(k, Kind::Barrier)), &mut w);
    for e in [
        &ALLREDUCE,
        &BCAST,
        &REDUCE_SCATTER_BLOCK,
        &ALLGATHER,
        &ALLTOALL,
        &ALLTOALLV,
    ] {
        let mine: Vec<&Served> = served
            .iter()
            .filter(|s| entry_of(&s.coll.kind).is_some_and(|x| x.name == e.name))
            .filter(|s| s.coll.row_param().is_some() && block_rows(&s.coll).is_some())
            .collect();
        intercepted(e, &mine, &mut w);
    }
    lifecycle(&mut w);
    w.finish()
}

/// Every element type and every operator a protocol lists is its own library (verification
/// is the same for each: the signal discipline depends on neither); a protocol without
/// windows (a barrier) is packaged once, one that does not reduce once per type.
fn instances(members: &[Member]) -> Vec<(usize, collc_spec::Validated)> {
    let mut variants = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let p = m.protocol;
        let types = if p.windows.is_empty() {
            vec![None]
        } else {
            p.elem_types().into_iter().map(Some).collect()
        };
        let ops: Vec<Option<ReduceOp>> = match p.reduce_ops() {
            ops if ops.is_empty() => vec![None],
            ops => ops.into_iter().map(Some).collect(),
        };
        for t in types {
            let q = t.and_then(|t| p.with_elem(t)).unwrap_or_else(|| p.clone());
            for o in &ops {
                let r = o.and_then(|o| q.with_op(o)).unwrap_or_else(|| q.clone());
                variants.push((i, r));
            }
        }
    }
    variants
}

/// Packages each protocol as `DIR/impl<i>/`, writes the shim and builds
/// `DIR/libcollc_pmpi.so`.
pub fn install_pmpi(members: &[Member], dir: &Path) -> Result<Installed, LibError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| LibError::Io(format!("cannot create `{}`: {e}", dir.display())))?;
    let dir = dir
        .canonicalize()
        .map_err(|e| LibError::Io(format!("`{}`: {e}", dir.display())))?;
    let variants = instances(members);
    let mut served = Vec::new();
    let mut link = Vec::new();
    let mut files = Vec::new();
    for (j, (i, q)) in variants.iter().enumerate() {
        let m = Member {
            protocol: q,
            source: members[*i].source,
            warning: members[*i].warning.clone(),
            world_limit: members[*i].world_limit,
        };
        let lib = format!("pmpi{j}");
        let sub = dir.join(format!("impl{j}"));
        install(std::slice::from_ref(&m), &lib, LibTarget::Mpi, &sub).map_err(|e| match e {
            LibError::Refused { diagnostics, .. } => LibError::Refused {
                member: *i,
                diagnostics,
            },
            e => e,
        })?;
        let coll = collectives(std::slice::from_ref(&m), &lib)?
            .into_iter()
            .next()
            .expect("one collective per member");
        link.push(format!("-I{}", sub.display()));
        link.push(format!("-L{}", sub.display()));
        link.push(format!("-l{lib}"));
        link.push(format!("-Wl,-rpath,$ORIGIN/impl{j}"));
        files.push(format!("impl{j}/lib{lib}.so"));
        served.push(Served { lib, coll });
    }
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(|e| LibError::Io(e.to_string()))?;
    let write = |name: &str, text: &str| {
        std::fs::write(src.join(name), text)
            .map_err(|e| LibError::Io(format!("cannot write `{name}`: {e}")))
    };
    write("collc_pmpi.hpp", RUNTIME)?;
    write("collc_pmpi.cpp", &shim(&served))?;
    files.push("src/collc_pmpi.cpp".into());
    let library = dir.join("libcollc_pmpi.so");
    let mpicxx = crate::mpi::build::find_toolchain()
        .map_err(|e| LibError::Build(e.to_string()))?
        .mpicxx
        .to_string_lossy()
        .into_owned();
    let mut args: Vec<String> = BUILD_FLAGS
        .iter()
        .filter(|f| !f.starts_with("-fvisibility"))
        .map(|s| s.to_string())
        .collect();
    args.push(format!("-I{}", src.display()));
    args.push(src.join("collc_pmpi.cpp").to_string_lossy().into_owned());
    args.extend(link);
    args.push("-o".into());
    args.push(library.to_string_lossy().into_owned());
    let command = super::compile(&mpicxx, &args)?;
    files.push("libcollc_pmpi.so".into());
    Ok(Installed {
        dir,
        library,
        command,
        files,
    })
}
