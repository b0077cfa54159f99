//! The `pto::comm` dialect: the kernel shape of pypto's host builtin collectives
//! (`backend/runtime/examples/*_kernel.cpp` are the hand-written references). The same
//! source builds for Ascend (`__CCE_AICORE__`: real pto headers) and for CPU threads
//! (collc's runtime), through the one include `collc/pto_comm.hpp`.

use super::walk::{CellRef, DataKind, DataOp, Dialect, GmRef, Loc};
use super::{Kernel, Target, Writer};
use crate::layout::BufferSource;
use collc_spec::ir::{CmpOp, ElemType, NotifyOp, ReduceOp, VarKind};

/// The `pto::comm` dialect.
#[derive(Debug, Clone, Copy)]
pub struct Pto {
    /// Which build the user asked for (only the header differs).
    pub target: Target,
}

fn plus(base: &str, off: &str) -> String {
    if off == "0" {
        base.to_string()
    } else if off.contains(' ') {
        format!("{base} + ({off})")
    } else {
        format!("{base} + {off}")
    }
}

fn gm_ptr(g: &GmRef) -> String {
    let local = plus(&g.name, &g.offset);
    match &g.rank {
        Some(r) => format!("CommRemotePtr(ctx, {local}, {r})"),
        None => local,
    }
}

fn len32(len: &str) -> String {
    if len.parse::<i64>().is_ok() {
        len.to_string()
    } else {
        format!("static_cast<int32_t>({len})")
    }
}

fn op_fn(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "collc::TADD",
        ReduceOp::Max => "collc::TMAX",
        ReduceOp::Min => "collc::TMIN",
        ReduceOp::Prod => "collc::TMUL",
    }
}

/// The element types of collc's that pto-isa's A2/A3 vector tile instructions TADD, TMUL,
/// TMAX and TMIN take (their `static_assert`s in `include/pto/npu/a2a3/`: int16, int32,
/// half and float; neither double nor int64): `--target ascend` refuses a `reduce` of the
/// others. Tested against the real headers (backend/tests/ascend_real.rs).
pub const ASCEND_REDUCE_TYPES: [ElemType; 2] = [ElemType::F32, ElemType::I32];

impl Dialect for Pto {
    fn cannot_reduce(&self, t: ElemType) -> Option<&'static str> {
        (self.target == Target::Ascend && !ASCEND_REDUCE_TYPES.contains(&t)).then_some(
            "pto-isa's A2/A3 tile instructions TADD, TMUL, TMAX and TMIN take int16, int32, half and float tiles only",
        )
    }

    fn describe(&self) -> String {
        match self.target {
            Target::Ascend => {
                "Ascend pto::comm (this same source also builds for CPU threads against \
                               collc/pto_comm_cpu.hpp: `collc emit --target host`)"
                    .to_string()
            }
            Target::Host => {
                "CPU threads via collc's pto::comm runtime (collc/pto_comm_cpu.hpp); this \
                             same source builds for Ascend (`collc emit --target ascend`)"
                    .to_string()
            }
        }
    }

    fn includes(&self, _k: &Kernel, w: &mut Writer) {
        w.line("#include \"collc/pto_comm.hpp\"");
    }

    fn open_entry(&self, k: &Kernel, w: &mut Writer, maybe_unused: &dyn Fn(BufferSource) -> bool) {
        let p = k.p;
        w.open("extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args)");
        w.line("// ---- args block ----");
        let mut slot = 0;
        for b in &k.abi.buffers {
            let (name, what) = match b.source {
                BufferSource::Signal(s) => (
                    k.signal_names[s.index()].clone(),
                    format!("signal {}", p.signals[s].name),
                ),
                BufferSource::Window(x) => (
                    k.window_names[x.index()].clone(),
                    format!("window {}", p.windows[x].name),
                ),
                BufferSource::Array(a) => (
                    k.array_names[a.index()].clone(),
                    format!("array {}", p.arrays[a].name),
                ),
            };
            let attr = if maybe_unused(b.source) {
                "[[maybe_unused]] "
            } else {
                ""
            };
            let ty = b.elem.cpp();
            let cst = if matches!(b.source, BufferSource::Array(_)) {
                "const "
            } else {
                ""
            };
            w.line(format!(
                "{attr}__gm__ {cst}{ty}* {name} = reinterpret_cast<__gm__ {cst}{ty}*>(args[{slot}]);  // {what}"
            ));
            slot += 1;
        }
        for v in &k.abi.scalars {
            let var = &p.vars[*v];
            let what = match var.kind {
                VarKind::World { .. } => format!("ranks {} (nranks)", var.name),
                _ => format!("param {}", var.name),
            };
            w.line(format!(
                "const int64_t {} = args[{slot}];  // {what}",
                k.var(*v)
            ));
            slot += 1;
        }
        w.line(format!(
            "__gm__ CommContext* ctx = reinterpret_cast<__gm__ CommContext*>(args[{slot}]);"
        ));
    }

    fn rank_id(&self) -> String {
        "static_cast<int64_t>(ctx->rankId)".to_string()
    }

    fn block_idx(&self) -> String {
        "static_cast<int64_t>(get_block_idx(args))".to_string()
    }

    fn block_num(&self) -> String {
        "static_cast<int64_t>(get_block_num(args))".to_string()
    }

    fn early_return(&self, w: &mut Writer) {
        w.line("pipe_barrier(PIPE_ALL);");
        w.line("return;");
    }

    fn scratch(&self, k: &Kernel, w: &mut Writer) {
        if k.tiles.is_empty() && k.stages == 0 {
            return;
        }
        w.line("");
        w.line(format!(
            "// ---- scratch tiles (Unified Buffer, {} bytes) ----",
            k.ub_bytes()
        ));
        for (i, t) in k.tiles.iter().enumerate() {
            w.line(format!(
                "collc::Tile<{}, {}> {}(0x{:x});  // tile {}",
                k.p.tiles[i].elem.cpp(),
                t.cap,
                t.name,
                t.ub,
                k.p.tiles[i].name
            ));
        }
        let names = ["stage_a", "stage_b"];
        for (i, n) in names.iter().enumerate().take(k.stages) {
            w.line(format!(
                "collc::Tile<{}, kStage> {n}(0x{:x});  // staging for window-to-window moves",
                k.stage_elem.cpp(),
                k.stage_ub(i)
            ));
        }
    }

    fn publish(&self, _k: &Kernel, w: &mut Writer, data_written: bool) {
        if super::mutate::active(super::mutate::Mutation::DropPublish) {
            return;
        }
        if w.last() != "pipe_barrier(PIPE_ALL);" {
            w.line("pipe_barrier(PIPE_ALL);");
        }
        if data_written {
            w.line("dsb(DSB_DDR);  // the notify below publishes this rank's data writes");
        }
    }

    fn acquire(&self, k: &Kernel, w: &mut Writer) {
        let target = k
            .window_names
            .first()
            .or(k.signal_names.first())
            .cloned()
            .unwrap_or_else(|| "args".to_string());
        w.line("pipe_barrier(PIPE_ALL);");
        w.line(format!(
            "dcci({target}, cache_line_t::ENTIRE_DATA_CACHE);  // reads below see what peers wrote before notifying"
        ));
    }

    fn fence(&self, w: &mut Writer) {
        if w.last() != "pipe_barrier(PIPE_ALL);" {
            w.line("pipe_barrier(PIPE_ALL);");
        }
    }

    fn trace_fence(&self, w: &mut Writer) {
        w.line("COLLC_TRACE_FENCE();");
    }

    fn trace_data(&self, _k: &Kernel, w: &mut Writer, op: &DataOp) {
        let l = len32(&op.len);
        if let Loc::Gm(s) = &op.src {
            w.line(format!("COLLC_TRACE_GET({}, {l});", gm_ptr(s)));
        }
        if let Loc::Gm(d) = &op.dst {
            w.line(format!("COLLC_TRACE_PUT({}, {l});", gm_ptr(d)));
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
        let local = plus(&cell.name, &cell.flat);
        let ptr = match target {
            Some(t) => format!("CommRemotePtr(ctx, {local}, {t})"),
            None => local,
        };
        let op = match op {
            NotifyOp::AtomicAdd => "AtomicAdd",
            NotifyOp::Set => "Set",
        };
        w.line(format!("pto::comm::Signal cell({ptr});"));
        w.line(format!(
            "pto::comm::TNOTIFY(cell, {value}, pto::comm::NotifyOp::{op});"
        ));
    }

    fn wait(&self, _k: &Kernel, w: &mut Writer, cell: &CellRef, cmp: CmpOp, threshold: &str) {
        let cmp = match cmp {
            CmpOp::Ge => "GE",
            CmpOp::Le => "LE",
            CmpOp::Eq => "EQ",
            CmpOp::Ne => "NE",
            CmpOp::Gt => "GT",
            CmpOp::Lt => "LT",
        };
        w.line(format!(
            "pto::comm::Signal cell({});",
            plus(&cell.name, &cell.flat)
        ));
        w.line(format!(
            "pto::comm::TWAIT(cell, {threshold}, pto::comm::WaitCmp::{cmp});"
        ));
    }

    fn data(&self, k: &Kernel, w: &mut Writer, op: &DataOp) {
        let l = len32(&op.len);
        let tile = |t: usize| k.tiles[t].name.clone();
        let off = |o: &str| len32(o);
        let at = |f: &str| format!("{f}_AT");
        let (od, os) = (op.dst_tile_offset.as_str(), op.src_tile_offset.as_str());
        match (&op.kind, &op.dst, &op.src) {
            (DataKind::Copy, Loc::Tile(d), Loc::Tile(s)) => {
                if od == "0" && os == "0" {
                    w.line(format!(
                        "collc::TMOV({}, {}, {l});",
                        tile(d.index()),
                        tile(s.index())
                    ));
                } else {
                    w.line(format!(
                        "collc::TMOV_AT({}, {}, {}, {}, {l});",
                        tile(d.index()),
                        off(od),
                        tile(s.index()),
                        off(os)
                    ));
                }
            }
            (DataKind::Copy, Loc::Tile(d), Loc::Gm(s)) => {
                if od == "0" {
                    w.line(format!(
                        "collc::TLOAD({}, {}, {l});",
                        tile(d.index()),
                        gm_ptr(s)
                    ));
                } else {
                    w.line(format!(
                        "collc::TLOAD_AT({}, {}, {}, {l});",
                        tile(d.index()),
                        off(od),
                        gm_ptr(s)
                    ));
                }
            }
            (DataKind::Copy, Loc::Gm(d), Loc::Tile(s)) => {
                if os == "0" {
                    w.line(format!(
                        "collc::TSTORE_N({}, {}, {l});",
                        gm_ptr(d),
                        tile(s.index())
                    ));
                } else {
                    w.line(format!(
                        "collc::TSTORE_AT({}, {}, {}, {l});",
                        gm_ptr(d),
                        tile(s.index()),
                        off(os)
                    ));
                }
            }
            (DataKind::Reduce(r), Loc::Tile(d), Loc::Tile(s)) => {
                if od == "0" && os == "0" {
                    w.line(format!(
                        "{}({d}, {d}, {}, {l});",
                        op_fn(*r),
                        tile(s.index()),
                        d = tile(d.index())
                    ));
                } else {
                    w.line(format!(
                        "{}({d}, {od}, {d}, {od}, {}, {}, {l});",
                        at(op_fn(*r)),
                        tile(s.index()),
                        off(os),
                        d = tile(d.index()),
                        od = off(od)
                    ));
                }
            }
            (DataKind::Reduce(r), Loc::Tile(d), Loc::Gm(s)) => {
                w.line(format!("collc::TLOAD(stage_a, {}, {l});", gm_ptr(s)));
                if od == "0" {
                    w.line(format!(
                        "{}({d}, {d}, stage_a, {l});",
                        op_fn(*r),
                        d = tile(d.index())
                    ));
                } else {
                    w.line(format!(
                        "{}({d}, {od}, {d}, {od}, stage_a, 0, {l});",
                        at(op_fn(*r)),
                        d = tile(d.index()),
                        od = off(od)
                    ));
                }
            }
            (DataKind::Reduce(r), Loc::Gm(d), Loc::Tile(s)) => {
                reduce_into_window(k, w, op, *r, d, tile(s.index()));
            }
            (kind, Loc::Gm(d), Loc::Gm(s)) => window_to_window(k, w, op, kind, d, s),
        }
    }

    fn supports_tile_offsets(&self) -> bool {
        true
    }

    fn end_kernel(&self, w: &mut Writer) {
        w.line("pipe_barrier(PIPE_ALL);");
    }

    fn call_index(&self, k: &Kernel, w: &mut Writer, name: &str) {
        let slot = k.abi.buffers.len() + k.abi.scalars.len() + 1;
        w.line("#if defined(__CCE_AICORE__)");
        w.line(format!(
            "const int64_t {name} = args[{slot}];  // the call index: the host keeps one counter per rank and passes it after the context"
        ));
        w.line("#else");
        w.line("// The call index: one thread runs every call of this (rank, block), so a thread-local");
        w.line(
            "// counter is this rank's count of calls so far (a new run starts new threads at 0).",
        );
        w.line("static thread_local int64_t collc_calls_made = 0;");
        w.line(format!("const int64_t {name} = collc_calls_made++;"));
        w.line("#endif");
    }
}

/// A reduce of tile `s_tile` into window region `d`: through the staging tile.
fn reduce_into_window(
    k: &Kernel,
    w: &mut Writer,
    op: &DataOp,
    r: ReduceOp,
    d: &GmRef,
    s_tile: String,
) {
    let l = len32(&op.len);
    let os = op.src_tile_offset.as_str();
    w.open("");
    let t = k.p.windows[d.window].elem.cpp();
    w.line(format!("__gm__ {t}* dst_gm = {};", gm_ptr(d)));
    w.line(format!("collc::TLOAD(stage_a, dst_gm, {l});"));
    if os == "0" {
        w.line(format!("{}(stage_a, stage_a, {}, {l});", op_fn(r), s_tile));
    } else {
        w.line(format!(
            "{}_AT(stage_a, 0, stage_a, 0, {}, {}, {l});",
            op_fn(r),
            s_tile,
            len32(os)
        ));
    }
    w.line(format!("collc::TSTORE_N(dst_gm, stage_a, {l});"));
    w.close();
}

/// A copy or reduce from window to window: chunks of kStage through the staging tile(s).
fn window_to_window(
    k: &Kernel,
    w: &mut Writer,
    op: &DataOp,
    kind: &DataKind,
    d: &GmRef,
    s: &GmRef,
) {
    k.helper("min");
    w.open("");
    let t = k.p.windows[d.window].elem.cpp();
    w.line(format!("__gm__ {t}* dst_gm = {};", gm_ptr(d)));
    w.line(format!("__gm__ {t}* src_gm = {};", gm_ptr(s)));
    let n = if op.len.contains(' ') {
        w.line(format!("const int64_t k_n = {};", op.len));
        "k_n".to_string()
    } else {
        op.len.clone()
    };
    w.open(format!(
        "for (int64_t k_off = 0; k_off < {n}; k_off += kStage)"
    ));
    w.line(format!(
        "const int32_t k_len = static_cast<int32_t>(collc_min(kStage, {n} - k_off));"
    ));
    match kind {
        DataKind::Copy => {
            w.line("collc::TLOAD(stage_a, src_gm + k_off, k_len);");
            w.line("collc::TSTORE_N(dst_gm + k_off, stage_a, k_len);");
        }
        DataKind::Reduce(r) => {
            w.line("collc::TLOAD(stage_a, dst_gm + k_off, k_len);");
            w.line("collc::TLOAD(stage_b, src_gm + k_off, k_len);");
            w.line(format!("{}(stage_a, stage_a, stage_b, k_len);", op_fn(*r)));
            w.line("collc::TSTORE_N(dst_gm + k_off, stage_a, k_len);");
        }
    }
    w.close();
    w.close();
}
