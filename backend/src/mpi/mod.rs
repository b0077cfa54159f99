//! The MPI backend: a verified protocol as a C++ program over MPI-3 one-sided communication
//! (RMA), built with `mpicxx` and run with `mpirun`, on one machine or on a cluster.
//!
//! * [`emit`] prints the program. Its kernel comes from the shared C++ statement walker
//!   ([`crate::cpp::walk`], the same one the Ascend/host generator uses) driven by the MPI
//!   dialect ([`dialect::Mpi`]); around it go `Args`, `setup()`, `prepare()` and `check()`
//!   ([`program`]), in the shape `backend/runtime/mpi/README.md` prescribes (the hand-written
//!   `backend/runtime/mpi/examples/*.cpp` are the references).
//! * [`build`] finds the OpenMPI tools and compiles a program with `mpicxx`, cached by content
//!   hash, against the embedded runtime (`collc_mpi.hpp`, `collc_mpi_main.hpp`).
//! * [`run()`] is the whole pipeline in one call (bind, emit, build, launch, verdict), next to
//!   [`crate::host::run`].
//! * [`launch`] runs it under `mpirun` for K back-to-back calls through one signal window,
//!   reads the launcher's JSON line (outputs checked against the collective's semantics,
//!   every credit cell back at zero), and enforces a wall-clock deadline by killing the whole
//!   process group (mpirun and every rank), so a rank that hangs or dies never leaves
//!   processes behind.
//!
//! # How the protocol maps onto MPI-3 RMA (and why it keeps its ordering guarantees)
//!
//! The full argument, with MPI-3.1 section references for the unified and the separate
//! window model, is the header comment of `backend/runtime/mpi/collc_mpi.hpp` (§1-§3). In
//! short:
//!
//! | `.coll` | generated call | MPI-3 realisation | why it is ordered |
//! |---|---|---|---|
//! | `notify s[i] @ r += v` | `collc_mpi::notify_add` | `MPI_Win_sync` (all windows), `MPI_Accumulate(MPI_SUM)`, `MPI_Win_flush(r)` | sync = release of local stores (separate model: private → public copy, §11.5.4/§11.7); accumulates are atomic per element (§11.7.1); the flush completes the credit at the target |
//! | `notify s[i] @ r = v` | `collc_mpi::notify_set` | same with `MPI_REPLACE` | a cell gets Set only or AtomicAdd only (verifier obligation `op-exclusivity`), as `accumulate_ops=same_op_no_op` requires |
//! | `notify s[i] -= N` (local) | `notify_add(.., ctx.me, ..)` | accumulate to self | never a load/store on a cell a peer's accumulate may target (§11.7) |
//! | `wait s[i] >= k` | `collc_mpi::wait` | poll `MPI_Fetch_and_op(MPI_NO_OP)` + `MPI_Win_flush_local(me)`, backoff, deadline; then `MPI_Win_sync` | atomic read of the current value (a read is complete when the value is here: local completion); the sync is the acquire (peers' flushed puts become visible to local loads) |
//! | `get` | `collc_mpi::get` | `MPI_Get` + `MPI_Win_flush_local(peer)` | complete on return: the data is here, so the read of the target is over before the next notify (a "read done" credit) |
//! | `put` | `collc_mpi::put` | `MPI_Put` + `MPI_Win_flush(peer)` | complete at origin *and target* on return, so the next notify, which publishes it, is ordered after the data (MPI orders nothing between a put and a later accumulate without a flush) |
//! | `put .. @ me` | `collc_mpi::put` to self | `MPI_Put` | separate model: no local store into a window peers may put into (§11.7) |
//! | `copy`, `reduce` | `copy_local`, `reduce` | loads/stores on this rank's window copy and tiles | released/acquired by the notify/wait around them |
//! | `fence` | (comment) | — | every RMA call is complete on return; program order suffices |
//! | `blocks` | `kernel()` loops over blocks | — | blocks of a rank run one after another; block b synchronises with block b of its peers through its own lanes (a block waiting for a later block of its own rank would deadlock and hit the wait deadline) |
//!
//! The walker's ordering analysis (publish before a notify, acquire after a wait) is kept in
//! the output as comments naming the runtime guarantee that provides it.

pub mod build;
pub mod dialect;
pub mod launch;
pub(crate) mod program;
pub mod run;
pub mod table;
pub mod traced;

pub use run::{run, MpiOptions, MpiReport, MpiRunError};
pub use table::table;
pub use traced::{run_traced, MpiTraced};

use crate::cpp::walk::{self, semantics_text};
use crate::cpp::{Kernel, Writer};
use collc_grammar::{Diagnostic, Source};
use collc_spec::ir::{Decl, SignalKind, VarKind};
use program::Names;

/// The first line the MPI dialect writes; [`emit`] replaces everything before it (the
/// walker's header, written for the `pto::comm` targets) with the MPI header.
pub(crate) const INCLUDE_MARKER: &str = "#include \"collc_mpi.hpp\"";

/// Options of [`emit`].
#[derive(Debug, Clone, Default)]
pub struct EmitOptions<'a> {
    /// The source text (for `.coll` line numbers in comments), if available.
    pub source: Option<&'a Source>,
    /// Lines to stamp into the header as a warning (e.g. why the protocol is unverified).
    pub warning: Vec<String>,
    /// The largest world size the program accepts (see `crate::cpp::EmitOptions`).
    pub world_limit: Option<i64>,
}

/// Emits the MPI program (one `.cpp`) of a protocol.
pub fn emit(p: &collc_spec::Validated, opts: &EmitOptions) -> Result<String, Vec<Diagnostic>> {
    let k = Kernel::new(
        p,
        &crate::cpp::EmitOptions {
            source: opts.source,
            warning: opts.warning.clone(),
            world_limit: opts.world_limit,
        },
    )?;
    let names = Names::of(&k);
    // The code after the kernel first: it marks the integer helpers it uses, which the walker
    // prints in front of the kernel.
    let mut tail = Writer::default();
    tail.line("");
    program::kernel(p, &mut tail);
    tail.line("");
    program::setup(&k, &names, &mut tail);
    tail.line("");
    program::begin_call(&k, &names, &mut tail);
    program::prepare(&k, &names, &mut tail);
    tail.line("");
    program::check(&k, &names, &mut tail);
    tail.line("");
    tail.line("}  // namespace collc_program");
    tail.line("");
    tail.line("#ifndef COLLC_NO_MAIN  // lets a benchmark include several programs");
    tail.line("#include \"collc_mpi_main.hpp\"");
    tail.line("#endif");

    let body = walk::emit_kernel(&k, &dialect::Mpi)?;
    let at = body
        .find(&format!("\n{INCLUDE_MARKER}\n"))
        .map(|i| i + 1)
        .or_else(|| body.starts_with(INCLUDE_MARKER).then_some(0))
        .expect("the MPI dialect writes the include marker");
    let mut out = Writer::default();
    header(&k, &mut out);
    let mut text = out.finish();
    text.push_str(&body[at..]);
    text.push_str(&tail.finish());
    Ok(text)
}

/// The header comment of a generated program.
fn header(k: &Kernel, w: &mut Writer) {
    let p = k.p;
    let file = k.source.map_or("(IR)".to_string(), |s| s.name.clone());
    w.line(format!(
        "// Generated by collc from {file}. Do not edit: edit the .coll and re-emit."
    ));
    w.line("//");
    w.line(format!("// collective {}: {}", p.name, semantics_text(p)));
    w.line("// Target: MPI-3 RMA, one process per rank: `mpicxx -I backend/runtime/mpi prog.cpp -o prog`,");
    w.line("//         `mpirun -np P ./prog --calls K --param NAME=V ...` (or `collc run --target mpi`).");
    if !k.warning.is_empty() {
        w.line("//");
        for l in &k.warning {
            w.line(format!("// WARNING: {l}"));
        }
    }
    w.line("//");
    w.line("// Symmetric objects (declared by setup() in this order on every rank):");
    for d in &p.decls {
        header_object(k, *d, w);
    }
    ordering_notes(w);
}

/// The header comment's line for one declaration (none for the others).
fn header_object(k: &Kernel, d: Decl, w: &mut Writer) {
    let p = k.p;
    match d {
        Decl::Signal(s) => {
            let sig = &p.signals[s];
            let dims = program::dims_text(p, &sig.dims);
            let kind = match sig.kind {
                SignalKind::Credit => "credit cells, all back at 0 after every call",
                SignalKind::Value => "value cells: notify_set only, never reset",
            };
            let life = if p.signal_per_call(s) {
                "; per call: one run of cells per call"
            } else {
                ""
            };
            w.line(format!(
                "//   signal {}{}: int32 cells in the one signal window ({kind}{life})",
                sig.name, dims
            ));
        }
        Decl::Window(x) => {
            let win = &p.windows[x];
            let dims = program::dims_text(p, &win.dims);
            let life = if p.window_per_call(x) {
                "per call: one MPI window per call, allocated up front"
            } else {
                "reused: one window for every call"
            };
            w.line(format!(
                "//   window {}: {}{} (MPI_Win_allocate; {life})",
                win.name,
                win.elem.as_str(),
                dims
            ));
        }
        Decl::Tile(t) => {
            w.line(format!(
                "//   tile {}: {}[{}] (rank-local scratch, not a window)",
                p.tiles[t].name,
                p.tiles[t].elem.as_str(),
                k.tiles[t.index()].cap
            ));
        }
        Decl::Array(a) => {
            let arr = &p.arrays[a];
            let dims = program::dims_text(p, &arr.dims);
            w.line(format!(
                "//   host array {}: int{} (rank-local input, staged by prepare())",
                arr.name, dims
            ));
        }
        Decl::Var(v) => {
            let var = &p.vars[v];
            match var.kind {
                VarKind::World { lo, hi } => {
                    w.line(format!(
                        "//   ranks {} in {lo}..={hi}: mpirun -np",
                        var.name
                    ));
                }
                VarKind::Param {
                    domain: Some((lo, hi)),
                } => {
                    w.line(format!(
                        "//   param {}: int in {lo}..={hi}: --param {}=V (required)",
                        var.name, var.name
                    ));
                }
                VarKind::Param { domain: None } => {
                    w.line(format!(
                        "//   param {}: rank: --param {}=R (default 0)",
                        var.name, var.name
                    ));
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// The header comment's account of the ordering under the MPI-3.1 memory model.
fn ordering_notes(w: &mut Writer) {
    w.line("//");
    w.line(
        "// Ordering under the MPI-3.1 memory model (unified and separate windows alike). The full",
    );
    w.line("// argument, with section references, is the header comment of collc_mpi.hpp (sections 1-3):");
    w.line("//   notify @ r += v  collc_mpi::notify_add: MPI_Win_sync on every window (release: local stores");
    w.line("//                    reach the public copy, 3(a)); MPI_Accumulate(MPI_SUM) (atomic, commutes");
    w.line("//                    with the owner's -N reset, 3(b)); MPI_Win_flush(r) (complete at the target, 3(c)).");
    w.line("//   notify @ r = v   collc_mpi::notify_set: the same with MPI_REPLACE; a cell is written with Set");
    w.line("//                    only or AtomicAdd only (verifier: op-exclusivity; accumulate_ops, 3(b)).");
    w.line("//   notify -= N      local reset: an accumulate to self, never a store (3(b)).");
    w.line("//   wait >= k        collc_mpi::wait: polls MPI_Fetch_and_op(MPI_NO_OP) + MPI_Win_flush_local(me)");
    w.line("//                    (atomic read of the current value, 3(b),(c)), then MPI_Win_sync on every");
    w.line("//                    window (acquire, 3(a)); deadline COLLC_MPI_WAIT_TIMEOUT_MS -> report, exit 3.");
    w.line("//   get              MPI_Get + MPI_Win_flush_local(peer): the data is here on return, so the");
    w.line("//                    read of the target is over before any later notify (3(c)).");
    w.line("//   put              MPI_Put + MPI_Win_flush(peer): complete at origin and target on return, so");
    w.line("//                    the notify that publishes it is ordered after the data (3(c)).");
    w.line("//   put .. @ me      stays an MPI_Put: no local store into a window peers may put into (2).");
    w.line("//   copy / reduce    loads and stores on this rank's window copy and tiles.");
    w.line(
        "//   fence            program order: every RMA call above is complete on return (3(c)).",
    );
    w.line("//   blocks           kernel() runs the blocks of a rank one after another.");
    w.line(
        "// Runtime checks (COLLC_CHECK) guard every index, rank and slice the .coll does not make",
    );
    w.line("// trivially safe; a failure aborts the job with exit code 4.");
    w.line("");
}
