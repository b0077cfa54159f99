//! The MPI-3 RMA dialect of the C++ walker ([`crate::cpp::walk`]): the kernel body of a
//! generated MPI program, on top of `backend/runtime/mpi/collc_mpi.hpp`.
//!
//! The walker decides control flow, lets, guards, runtime index checks and where ordering is
//! needed (publish before a notify, acquire after a wait, `fence`). Under MPI every one of
//! those ordering points is already provided by the runtime call next to it (see the mapping
//! table in [`super`]), so this dialect prints them as comments that name the runtime's
//! guarantee instead of emitting fences.

use super::program::{self, Names};
use crate::cpp::walk::{CellRef, DataKind, DataOp, Dialect, GmRef, Loc};
use crate::cpp::{Kernel, Writer};
use crate::layout::BufferSource;
use collc_spec::ir::{CmpOp, NotifyOp, ReduceOp, VarKind};

/// The MPI dialect.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mpi;

/// `base + off` with the parentheses `off` needs.
pub(crate) fn plus(base: &str, off: &str) -> String {
    if off == "0" {
        base.to_string()
    } else if off.contains(' ') {
        format!("{base} + ({off})")
    } else {
        format!("{base} + {off}")
    }
}

/// The local pointer of a window location on this rank.
fn local_ptr(k: &Kernel, g: &GmRef) -> String {
    let t = k.p.windows[g.window].elem.cpp();
    plus(&format!("{}.local<{t}>()", g.name), &g.offset)
}

fn op_name(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "collc_mpi::ReduceOp::Sum",
        ReduceOp::Max => "collc_mpi::ReduceOp::Max",
        ReduceOp::Min => "collc_mpi::ReduceOp::Min",
        ReduceOp::Prod => "collc_mpi::ReduceOp::Prod",
    }
}

fn cmp_name(cmp: CmpOp) -> &'static str {
    match cmp {
        CmpOp::Ge => "collc_mpi::Cmp::GE",
        CmpOp::Le => "collc_mpi::Cmp::LE",
        CmpOp::Eq => "collc_mpi::Cmp::EQ",
        CmpOp::Ne => "collc_mpi::Cmp::NE",
        CmpOp::Gt => "collc_mpi::Cmp::GT",
        CmpOp::Lt => "collc_mpi::Cmp::LT",
    }
}

/// `if (r == me) { local } else { remote }`.
fn unless_me(w: &mut Writer, r: &str, local: &str, remote: &str) {
    w.open(format!("if ({} == ctx.me)", rank_int(r)));
    w.line(local);
    w.reopen("else");
    w.line(remote);
    w.close();
}

/// A copy between two window slices: local, a get or a put depending on the ranks.
fn copy_gm(k: &Kernel, w: &mut Writer, n: &str, d: &GmRef, s: &GmRef) {
    let copy = format!(
        "collc_mpi::copy_local({}, {}, {n});",
        local_ptr(k, d),
        local_ptr(k, s)
    );
    match (&d.rank, &s.rank) {
        (None, None) => w.line(copy),
        // A get from this rank itself is a local copy (MPI_Get with overlapping
        // origin and target memory would be erroneous).
        (None, Some(r)) => {
            let get = format!(
                "collc_mpi::get({}, {}, {}, {}, {n});",
                local_ptr(k, d),
                rank_int(r),
                s.name,
                s.offset
            );
            unless_me(w, r, &copy, &get);
        }
        // A put to this rank itself stays an MPI_Put (no local store into a window
        // peers may put into, separate model), unless it is a move inside one window.
        (Some(r), _) => {
            let put = format!(
                "collc_mpi::put({}, {}, {}, {}, {n});",
                local_ptr(k, s),
                rank_int(r),
                d.name,
                d.offset
            );
            if d.window == s.window {
                unless_me(w, r, &copy, &put);
            } else {
                w.line(put);
            }
        }
    }
}

/// `dst = dst op src` with a remote source: through the staging tile, kStage elements at a
/// time.
fn reduce_remote(k: &Kernel, w: &mut Writer, n: &str, r: ReduceOp, d: &str, g: &GmRef) {
    let rank = rank_int(g.rank.as_deref().unwrap_or("ctx.me"));
    k.helper("min");
    w.open("");
    let t = k.p.windows[g.window].elem.cpp();
    w.line(format!("{t}* const dst_gm = {d};"));
    let total = if n.contains(' ') {
        w.line(format!("const int64_t k_n = {n};"));
        "k_n".to_string()
    } else {
        n.to_string()
    };
    w.open(format!(
        "for (int64_t k_off = 0; k_off < {total}; k_off += kStage)"
    ));
    w.line(format!(
        "const int64_t k_len = collc_min(kStage, {total} - k_off);"
    ));
    w.line(format!(
        "collc_mpi::get(stage_a, {rank}, {}, {} + k_off, k_len);",
        g.name,
        if g.offset.contains(' ') {
            format!("({})", g.offset)
        } else {
            g.offset.clone()
        }
    ));
    w.line(format!(
        "collc_mpi::reduce({}, dst_gm + k_off, stage_a, k_len);",
        op_name(r)
    ));
    w.close();
    w.close();
}

fn rank_int(r: &str) -> String {
    format!("static_cast<int>({r})")
}

impl Dialect for Mpi {
    fn describe(&self) -> String {
        "MPI-3 RMA, one process per rank (collc_mpi.hpp + collc_mpi_main.hpp; mpicxx / mpirun)"
            .to_string()
    }

    fn includes(&self, k: &Kernel, w: &mut Writer) {
        // The first line is the marker `emit` cuts the walker's (pto-specific) header at.
        w.line(super::INCLUDE_MARKER);
        w.line("");
        w.line("#include <algorithm>");
        w.line("#include <cstring>");
        w.line("");
        w.line("// Runtime checks of indices, ranks and slices the .coll does not make trivially safe:");
        w.line(
            "// a failure aborts the whole job with exit code 4 (collc_mpi::contract_violation).",
        );
        w.line("#ifndef COLLC_CHECK");
        w.line("#define COLLC_CHECK(cond, what) \\");
        w.line("    do {                        \\");
        w.line("        if (!(cond)) ::collc_mpi::contract_violation((what), #cond); \\");
        w.line("    } while (0)");
        w.line("#endif");
        w.line("");
        w.line("namespace collc_program {");
        w.line("");
        w.line(format!(
            "constexpr const char* kName = {};",
            crate::cpp::c_string(&k.p.name)
        ));
        w.line("");
        program::args_struct(k, &Names::of(k), w);
    }

    fn open_entry(&self, k: &Kernel, w: &mut Writer, maybe_unused: &dyn Fn(BufferSource) -> bool) {
        let p = k.p;
        let names = Names::of(k);
        w.line(
            "// One block of the protocol on this rank: body, then epilogue (kernel() below runs",
        );
        w.line("// every block of the rank in turn).");
        w.open("inline void kernel_block(const collc_mpi::Ctx& ctx, const Args& args, [[maybe_unused]] int64_t collc_block)");
        w.line("[[maybe_unused]] const collc_mpi::Window& collc_sigwin = *args.sigwin;");
        for b in &k.abi.buffers {
            let attr = if maybe_unused(b.source) {
                "[[maybe_unused]] "
            } else {
                ""
            };
            match b.source {
                BufferSource::Signal(s) => w.line(format!(
                    "{attr}const MPI_Aint {} = args.{};  // signal {}: first cell in the signal window",
                    k.signal_names[s.index()],
                    names.signal_field(s),
                    p.signals[s].name
                )),
                BufferSource::Window(x) => w.line(format!(
                    "{attr}const collc_mpi::Window& {} = *args.{};  // window {}",
                    k.window_names[x.index()],
                    names.window_field(x),
                    p.windows[x].name
                )),
                BufferSource::Array(a) => w.line(format!(
                    "{attr}const int64_t* const {} = args.{};  // host array {} (this rank's)",
                    k.array_names[a.index()],
                    names.array_field(a),
                    p.arrays[a].name
                )),
            }
        }
        for v in &k.abi.scalars {
            let var = &p.vars[*v];
            let attr = if k.used.contains(v) {
                ""
            } else {
                "[[maybe_unused]] "
            };
            match var.kind {
                VarKind::World { .. } => w.line(format!(
                    "{attr}const int64_t {} = ctx.np;  // ranks {} (mpirun -np)",
                    k.var(*v),
                    var.name
                )),
                _ => w.line(format!(
                    "{attr}const int64_t {} = args.{};  // param {}",
                    k.var(*v),
                    names.param_field(*v),
                    var.name
                )),
            }
        }
    }

    fn rank_id(&self) -> String {
        "static_cast<int64_t>(ctx.me)".to_string()
    }

    fn block_idx(&self) -> String {
        "collc_block".to_string()
    }

    fn block_num(&self) -> String {
        "args.collc_blocks".to_string()
    }

    fn early_return(&self, w: &mut Writer) {
        w.line("return;");
    }

    fn scratch(&self, k: &Kernel, w: &mut Writer) {
        if k.tiles.is_empty() && k.stages == 0 {
            return;
        }
        let names = Names::of(k);
        w.line("");
        w.line(
            "// ---- scratch tiles: rank-local memory (Session::local_buffer), not windows ----",
        );
        for (i, t) in k.tiles.iter().enumerate() {
            let i = collc_spec::ir::TileId::new(i);
            w.line(format!(
                "{}* const {} = args.{};  // tile {}: {}[{}]",
                k.p.tiles[i].elem.cpp(),
                t.name,
                names.tile_field(i),
                k.p.tiles[i].name,
                k.p.tiles[i].elem.as_str(),
                t.cap
            ));
        }
        for n in ["stage_a", "stage_b"].iter().take(k.stages) {
            w.line(format!(
                "[[maybe_unused]] {}* const {n} = args.{n};  // staging for remote reductions",
                k.stage_elem.cpp()
            ));
        }
    }

    fn publish(&self, _k: &Kernel, w: &mut Writer, data_written: bool) {
        if data_written {
            w.line(
                "// release: every get/put above is complete (flushed) and notify_* starts with \
                 MPI_Win_sync on every window (collc_mpi.hpp 3(a),(c))",
            );
        }
    }

    fn acquire(&self, _k: &Kernel, w: &mut Writer) {
        w.line(
            "// acquire: wait ended with MPI_Win_sync on every window: peers' flushed puts are \
             visible to local loads (collc_mpi.hpp 3(a))",
        );
    }

    fn fence(&self, w: &mut Writer) {
        w.line("// fence: program order (every RMA call above is complete on return, collc_mpi.hpp 3(c))");
    }

    fn trace_fence(&self, w: &mut Writer) {
        w.line("COLLC_TRACE_FENCE();");
    }

    fn trace_data(&self, _k: &Kernel, w: &mut Writer, op: &DataOp) {
        let pe = |g: &GmRef| g.rank.as_deref().map_or("ctx.me".to_string(), rank_int);
        if let Loc::Gm(s) = &op.src {
            w.line(format!(
                "COLLC_TRACE_GET({}, {}, {}, {});",
                s.name,
                pe(s),
                s.offset,
                op.len
            ));
        }
        if let Loc::Gm(d) = &op.dst {
            w.line(format!(
                "COLLC_TRACE_PUT({}, {}, {}, {});",
                d.name,
                pe(d),
                d.offset,
                op.len
            ));
        }
    }

    fn notify(
        &self,
        _k: &Kernel,
        w: &mut Writer,
        cell: &CellRef,
        target: Option<&str>,
        op: NotifyOp,
        value: &str,
    ) {
        let pe = match target {
            Some(t) => rank_int(t),
            None => "ctx.me".to_string(),
        };
        let f = match op {
            NotifyOp::AtomicAdd => "notify_add",
            NotifyOp::Set => "notify_set",
        };
        w.line(format!(
            "collc_mpi::{f}(collc_sigwin, {pe}, {}, {value});",
            plus(&cell.name, &cell.flat)
        ));
    }

    fn wait(&self, k: &Kernel, w: &mut Writer, cell: &CellRef, cmp: CmpOp, threshold: &str) {
        let name = &k.p.signals[cell.signal].name;
        let step = format!("wait {name}[{}] {} {threshold}", cell.flat, cmp.as_str());
        w.line(format!(
            "collc_mpi::wait(collc_sigwin, {}, {}, {threshold}, {});",
            plus(&cell.name, &cell.flat),
            cmp_name(cmp),
            crate::cpp::c_string(&step)
        ));
    }

    fn supports_tile_offsets(&self) -> bool {
        true
    }

    fn data(&self, k: &Kernel, w: &mut Writer, op: &DataOp) {
        let n = &op.len;
        // A tile is a plain pointer here, so a slice is the pointer plus its offset (the
        // walker passes the destination's and the source's; a copy/reduce has at most one
        // of each).
        let dst_tile = |t: usize| plus(&k.tiles[t].name, &op.dst_tile_offset);
        let src_tile = |t: usize| plus(&k.tiles[t].name, &op.src_tile_offset);
        match (&op.kind, &op.dst, &op.src) {
            // ---- copies ----
            (DataKind::Copy, Loc::Tile(d), Loc::Tile(s)) => {
                w.line(format!(
                    "collc_mpi::copy_local({}, {}, {n});",
                    dst_tile(d.index()),
                    src_tile(s.index())
                ));
            }
            (DataKind::Copy, Loc::Tile(d), Loc::Gm(s)) => match &s.rank {
                None => w.line(format!(
                    "collc_mpi::copy_local({}, {}, {n});",
                    dst_tile(d.index()),
                    local_ptr(k, s)
                )),
                Some(r) => w.line(format!(
                    "collc_mpi::get({}, {}, {}, {}, {n});",
                    dst_tile(d.index()),
                    rank_int(r),
                    s.name,
                    s.offset
                )),
            },
            (DataKind::Copy, Loc::Gm(d), Loc::Tile(s)) => match &d.rank {
                None => w.line(format!(
                    "collc_mpi::copy_local({}, {}, {n});",
                    local_ptr(k, d),
                    src_tile(s.index())
                )),
                Some(r) => w.line(format!(
                    "collc_mpi::put({}, {}, {}, {}, {n});",
                    src_tile(s.index()),
                    rank_int(r),
                    d.name,
                    d.offset
                )),
            },
            (DataKind::Copy, Loc::Gm(d), Loc::Gm(s)) => copy_gm(k, w, n, d, s),
            // ---- reductions: dst = dst op src (dst always local) ----
            (DataKind::Reduce(r), dst, src) => {
                let d = match dst {
                    Loc::Tile(t) => dst_tile(t.index()),
                    Loc::Gm(g) => local_ptr(k, g),
                };
                match src {
                    Loc::Tile(t) => w.line(format!(
                        "collc_mpi::reduce({}, {d}, {}, {n});",
                        op_name(*r),
                        src_tile(t.index())
                    )),
                    Loc::Gm(g) if g.rank.is_none() => w.line(format!(
                        "collc_mpi::reduce({}, {d}, {}, {n});",
                        op_name(*r),
                        local_ptr(k, g)
                    )),
                    Loc::Gm(g) => reduce_remote(k, w, n, *r, &d, g),
                }
            }
        }
    }

    fn end_kernel(&self, _w: &mut Writer) {}

    fn call_index(&self, _k: &Kernel, w: &mut Writer, name: &str) {
        w.line(format!(
            "const int64_t {name} = static_cast<int64_t>(ctx.call);  // the call index: the launcher counts this rank's calls"
        ));
    }

    fn calls_bound(&self, w: &mut Writer, max: i64, what: &str) {
        w.line(format!(
            "// {what}: the verified domain is at most {max} back-to-back calls; call {} is refused.",
            max.saturating_add(1)
        ));
        self.check(
            w,
            &format!("ctx.call < {max}"),
            &format!("a call past {what}, outside the verified domain"),
        );
    }

    fn check(&self, w: &mut Writer, cond: &str, what: &str) {
        w.line(format!(
            "COLLC_CHECK({cond}, {});",
            crate::cpp::c_string(what)
        ));
    }
}
