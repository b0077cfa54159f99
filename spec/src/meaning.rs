//! What every collective must compute, written once (LANGUAGE.md §6).
//!
//! For a protocol's [`Semantics`], its concrete sizes ([`Shape`]) and one call's host arrays,
//! [`inputs`] says which windows the host stages with a rank's input before the call, and
//! [`outputs`] says, for every rank, exactly what each output element must hold after it:
//! which (source rank, input window, element) contributions, and how they combine (a copy of
//! one, or a reduction). A barrier (`barrier()`, or `barrier(blk)` per lane) has no data; [`Meaning::Barrier`] and
//! [`barrier_peers`] are its rule.
//!
//! Every consumer derives its check from this module and nothing else:
//!
//! * the simulator (`collc_sim`) compares symbolic provenance (who contributed which element
//!   of which call) with the [`Segment`]s;
//! * the host runner (`collc_backend::oracle`) stages payloads into the [`inputs`] and folds
//!   the [`Want`]s over the same payloads to get the expected floats;
//! * the MPI runner (`collc_backend::mpi`) gets the same segments as a table generated from
//!   this module (one per run), interpreted by its C++ runtime.
//!
//! Shapes that do not match the kind (e.g. an allgather `input` shorter than a row of
//! `target`) have no meaning: [`outputs`] returns a [`ShapeError`] and every consumer reports
//! it instead of comparing part of the data.

use crate::eval::{eval, Bindings, EvalError};
use crate::ir::{ArrayId, Protocol, ReduceOp, Semantics, SignalId, WindowId};

/// Concrete sizes of a protocol's objects under bound parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// P.
    pub world: usize,
    /// The root of a rooted kind (broadcast, reduce, gather, scatter; 0 for other kinds).
    pub root: usize,
    /// Elements of every window (row-major product of its dimensions).
    pub window_len: Vec<u64>,
    /// The last dimension of every window (1 for a 0-dimensional window).
    pub window_row: Vec<u64>,
    /// Cells of every signal.
    pub signal_len: Vec<u64>,
    /// Elements of every host array.
    pub array_len: Vec<u64>,
}

fn dims(p: &Protocol, b: &Bindings, ds: &[crate::ir::Expr]) -> Result<(u64, u64), EvalError> {
    let mut n: u64 = 1;
    let mut last: u64 = 1;
    for d in ds {
        let v = u64::try_from(eval(p, d, &b.env)?.max(0)).map_err(|_| EvalError::Overflow)?;
        n = n.checked_mul(v).ok_or(EvalError::Overflow)?;
        last = v;
    }
    Ok((n, last))
}

impl Shape {
    /// The shape of `p` under bound parameters.
    pub fn of(p: &Protocol, b: &Bindings) -> Result<Shape, EvalError> {
        let mut window_len = Vec::new();
        let mut window_row = Vec::new();
        for w in &p.windows {
            let (n, last) = dims(p, b, &w.dims)?;
            window_len.push(n);
            window_row.push(last.max(1));
        }
        let signal_len = p
            .signals
            .iter()
            .map(|s| dims(p, b, &s.dims).map(|d| d.0))
            .collect::<Result<_, _>>()?;
        let array_len = p
            .arrays
            .iter()
            .map(|a| dims(p, b, &a.dims).map(|d| d.0))
            .collect::<Result<_, _>>()?;
        let root = p
            .semantics
            .root()
            .map_or(0, |root| b.env.get(root).unwrap_or(0).max(0) as usize);
        if let Some((ws, row)) = a2av_row(p, &|v| b.env.get(v)) {
            for w in ws {
                window_row[w.index()] = row;
            }
        }
        Ok(Shape {
            world: b.world.max(1) as usize,
            root,
            window_len,
            window_row,
            signal_len,
            array_len,
        })
    }
}

/// How the contributions of one output element combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// The element is a copy of its one source.
    Copy,
    /// The element is the reduction of its sources (in any order).
    Reduce(ReduceOp),
}

/// One contribution: element `e + offset` of rank `rank`'s input `window` (in the same call)
/// contributes to output element `e`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// The contributing rank.
    pub rank: usize,
    /// Its input window (staged before the call).
    pub window: WindowId,
    /// Input element = output element + offset.
    pub offset: i64,
}

/// What the elements of a segment must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    /// How the sources combine.
    pub combine: Combine,
    /// The contributions, by rank.
    pub sources: Vec<Source>,
}

/// Elements `lo..hi` of one output window of one rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The output window.
    pub window: WindowId,
    /// First element.
    pub lo: u64,
    /// One past the last element.
    pub hi: u64,
    /// What they must hold; `None`: unspecified (read, never compared), e.g. the rows of an
    /// all_to_all_v block past the count its sender published.
    pub want: Option<Want>,
}

/// A value signal cell that must hold a value after the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The signal.
    pub signal: SignalId,
    /// The cell.
    pub index: u64,
    /// The value.
    pub value: i64,
    /// The rank whose count it is (all_to_all_v: the sender).
    pub from: usize,
    /// The host array entry the value derives from: (array, its value).
    pub sent: (ArrayId, i64),
}

/// Everything one rank's outputs of one call must satisfy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RankOutputs {
    /// Output window segments, in window-element order.
    pub segments: Vec<Segment>,
    /// Value signal cells.
    pub cells: Vec<Cell>,
}

/// The meaning of a call, per kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meaning {
    /// Outputs per rank.
    Data(Vec<RankOutputs>),
    /// `barrier()` and `barrier(blk)`, the stamp rule: every rank stamps its entry into call
    /// k (host side, before the call starts); when call k ends on any rank, every rank's stamp
    /// of call k is visible there (no rank leaves a call before every rank has entered it).
    /// Per process (one block of one rank), the stricter rule of [`barrier_peers`] holds; a
    /// rank's call ends when all its blocks have, so either declaration implies this one.
    Barrier,
}

/// Shapes that give the kind no meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

impl std::fmt::Display for ShapeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ShapeError {}

/// The windows rank `r` stages with its own input before every call (the host writes every
/// element; no other window is written by the host). Host arrays are staged on every rank.
pub fn inputs(p: &Protocol, shape: &Shape, r: usize) -> Vec<WindowId> {
    match &p.semantics {
        Semantics::Allreduce { data, .. }
        | Semantics::ReduceScatter { data, .. }
        | Semantics::Reduce { data, .. } => vec![*data],
        Semantics::Broadcast { data, .. } | Semantics::Scatter { input: data, .. } => {
            if r == shape.root {
                vec![*data]
            } else {
                Vec::new()
            }
        }
        Semantics::Allgather { input, .. }
        | Semantics::Gather { input, .. }
        | Semantics::AllToAll { input, .. }
        | Semantics::AllToAllV { input, .. } => vec![*input],
        Semantics::Barrier { .. } => Vec::new(),
    }
}

/// The reduction operator of the kind (what payloads must be exact under), if any.
pub fn reduce_op(p: &Protocol) -> Option<ReduceOp> {
    p.reduce_op()
}

/// An all_to_all_v's declared row length (`all_to_all_v(.., ROW)`) under `value`, with the
/// windows it is the row of (input and target): it stands for their last dimension.
pub fn a2av_row(
    p: &Protocol,
    value: &dyn Fn(crate::ir::VarId) -> Option<i64>,
) -> Option<(Vec<WindowId>, u64)> {
    let Semantics::AllToAllV {
        input,
        target,
        row: Some(row),
        ..
    } = &p.semantics
    else {
        return None;
    };
    let len = value(*row)?.max(1) as u64;
    Some((vec![*input, *target], len))
}

/// The all_to_all_v block layout: `P` blocks of `rows` rows of `row` elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocks {
    /// Elements per block.
    pub block: u64,
    /// Elements per row (`target`'s last dimension).
    pub row: u64,
    /// Rows per block (R).
    pub rows: u64,
}

/// The block layout of an all_to_all_v protocol, or why its shapes have no meaning.
pub fn a2av_blocks(p: &Protocol, shape: &Shape) -> Result<Blocks, ShapeError> {
    let Semantics::AllToAllV {
        input,
        target,
        send_counts,
        recv_counts,
        ..
    } = &p.semantics
    else {
        return Err(ShapeError("not an all_to_all_v protocol".into()));
    };
    let np = shape.world as u64;
    let tname = &p.windows[*target].name;
    let len = shape.window_len[target.index()];
    let row = shape.window_row[target.index()];
    if len == 0 || !len.is_multiple_of(np * row) {
        return Err(ShapeError(format!(
            "all_to_all_v: `{tname}` has {len} elements, not {np} blocks of whole rows of {row} elements"
        )));
    }
    let block = len / np;
    let ilen = shape.window_len[input.index()];
    if ilen != len {
        return Err(ShapeError(format!(
            "all_to_all_v: `{}` has {ilen} elements but `{tname}` has {len}; both must be {np} blocks of {} rows of {row}",
            p.windows[*input].name,
            block / row
        )));
    }
    let sc = shape.array_len[send_counts.index()];
    if sc != np {
        return Err(ShapeError(format!(
            "all_to_all_v: send-counts array `{}` has {sc} entries, not one per rank ({np})",
            p.arrays[*send_counts].name
        )));
    }
    let rc = shape.signal_len[recv_counts.index()];
    if rc != np {
        return Err(ShapeError(format!(
            "all_to_all_v: receive-counts signal `{}` has {rc} cells, not one per rank ({np})",
            p.signals[*recv_counts].name
        )));
    }
    Ok(Blocks {
        block,
        row,
        rows: block / row,
    })
}

/// `[P][m]`: the row length of a window split into one row per rank.
fn rows_of(p: &Protocol, shape: &Shape, w: WindowId, kind: &str) -> Result<u64, ShapeError> {
    let len = shape.window_len[w.index()];
    let np = shape.world as u64;
    if !len.is_multiple_of(np) {
        return Err(ShapeError(format!(
            "{kind}: `{}` has {len} elements, not {np} rows (one per rank)",
            p.windows[w].name
        )));
    }
    Ok(len / np)
}

/// What every rank's outputs of one call must be. `array(rank, array, index)` is the value of
/// a host array of that rank in this call (all_to_all_v's send counts).
pub fn outputs(
    p: &Protocol,
    shape: &Shape,
    array: &dyn Fn(usize, ArrayId, u64) -> Option<i64>,
) -> Result<Meaning, ShapeError> {
    if p.semantics.is_barrier() {
        return Ok(Meaning::Barrier);
    }
    let per_rank = (0..shape.world)
        .map(|r| rank_outputs(p, shape, array, r))
        .collect::<Result<_, _>>()?;
    Ok(Meaning::Data(per_rank))
}

/// A barrier's rule per process: when block `b` of rank r leaves call k, the entry into call k
/// of each block this returns, of every other rank, is ordered before that exit (by a notify ->
/// wait chain), with `blocks` blocks per rank. `barrier()`: every block (all blocks of all
/// ranks meet); `barrier(blk)`: block `b` alone (a per-lane barrier: the blocks of one index
/// meet across the ranks, and the lanes are not synchronised with each other). Empty for the
/// kinds with data.
pub fn barrier_peers(p: &Protocol, blocks: usize, b: usize) -> std::ops::Range<usize> {
    match p.semantics {
        Semantics::Barrier { lane: None } => 0..blocks,
        Semantics::Barrier { lane: Some(_) } => b..b + 1,
        _ => 0..0,
    }
}

/// Every rank's `w` with the given element offset (the sources of a reduction).
fn all(np: usize, w: WindowId, offset: i64) -> Vec<Source> {
    (0..np)
        .map(|q| Source {
            rank: q,
            window: w,
            offset,
        })
        .collect()
}

/// A copy of element `e + offset` of `rank`'s `window`.
fn one(rank: usize, window: WindowId, offset: i64) -> Want {
    Want {
        combine: Combine::Copy,
        sources: vec![Source {
            rank,
            window,
            offset,
        }],
    }
}

fn seg(window: WindowId, lo: u64, hi: u64, want: Option<Want>) -> Segment {
    Segment {
        window,
        lo,
        hi,
        want,
    }
}

/// `data` as a whole: the op-reduction of every rank's `data`.
fn reduced(shape: &Shape, op: ReduceOp, data: WindowId) -> Segment {
    let want = Want {
        combine: Combine::Reduce(op),
        sources: all(shape.world, data, 0),
    };
    seg(data, 0, shape.window_len[data.index()], Some(want))
}

/// Rank `r`'s outputs of one call (the kinds with data).
fn rank_outputs(
    p: &Protocol,
    shape: &Shape,
    array: &dyn Fn(usize, ArrayId, u64) -> Option<i64>,
    r: usize,
) -> Result<RankOutputs, ShapeError> {
    let mut out = RankOutputs::default();
    let root = r == shape.root;
    match &p.semantics {
        Semantics::Barrier { .. } => {}
        Semantics::Allreduce { op, data } => out.segments.push(reduced(shape, *op, *data)),
        Semantics::Reduce { op, data, .. } => {
            if root {
                out.segments.push(reduced(shape, *op, *data));
            }
        }
        Semantics::Broadcast { data, .. } => {
            let want = one(shape.root, *data, 0);
            out.segments
                .push(seg(*data, 0, shape.window_len[data.index()], Some(want)));
        }
        Semantics::ReduceScatter { op, data } => {
            let m = rows_of(p, shape, *data, "reduce_scatter")?;
            let want = Want {
                combine: Combine::Reduce(*op),
                sources: all(shape.world, *data, 0),
            };
            let lo = r as u64 * m;
            out.segments.push(seg(*data, lo, lo + m, Some(want)));
        }
        Semantics::Allgather { input, target } => {
            out.segments = gathered(p, shape, *input, *target, "allgather")?;
        }
        Semantics::Gather { input, target, .. } => {
            let rows = gathered(p, shape, *input, *target, "gather")?;
            if root {
                out.segments = rows;
            }
        }
        Semantics::Scatter { input, target, .. } => {
            out.segments.push(scattered(p, shape, *input, *target, r)?);
        }
        Semantics::AllToAll { input, target } => {
            out.segments = exchanged(p, shape, *input, *target, r)?;
        }
        Semantics::AllToAllV {
            send_counts,
            recv_counts,
            input,
            target,
            ..
        } => {
            let lay = a2av_blocks(p, shape)?;
            for j in 0..shape.world {
                let sent = array(j, *send_counts, r as u64).ok_or_else(|| {
                    ShapeError(format!(
                        "all_to_all_v: rank {j} has no `{}[{r}]`",
                        p.arrays[*send_counts].name
                    ))
                })?;
                let (cell, segs) = a2av_block(&lay, (*input, *target), j, r, sent);
                out.cells.push(Cell {
                    signal: *recv_counts,
                    sent: (*send_counts, sent),
                    ..cell
                });
                out.segments.extend(segs);
            }
        }
    }
    Ok(out)
}

/// `target` = `[P][m]`, row j a copy of rank j's `input` (m elements).
fn gathered(
    p: &Protocol,
    shape: &Shape,
    input: WindowId,
    target: WindowId,
    kind: &str,
) -> Result<Vec<Segment>, ShapeError> {
    let m = rows_of(p, shape, target, kind)?;
    if shape.window_len[input.index()] != m {
        return Err(ShapeError(format!(
            "{kind}: `{}` has {} elements but each row of `{}` has {m}",
            p.windows[input].name,
            shape.window_len[input.index()],
            p.windows[target].name
        )));
    }
    Ok((0..shape.world)
        .map(|j| {
            let lo = j as u64 * m;
            seg(target, lo, lo + m, Some(one(j, input, -(lo as i64))))
        })
        .collect())
}

/// Rank r's `target` (m elements) = row r of the root's `input` (`[P][m]`).
fn scattered(
    p: &Protocol,
    shape: &Shape,
    input: WindowId,
    target: WindowId,
    r: usize,
) -> Result<Segment, ShapeError> {
    let m = rows_of(p, shape, input, "scatter")?;
    if shape.window_len[target.index()] != m {
        return Err(ShapeError(format!(
            "scatter: `{}` has {} elements but each row of `{}` has {m}",
            p.windows[target].name,
            shape.window_len[target.index()],
            p.windows[input].name
        )));
    }
    let want = one(shape.root, input, r as i64 * m as i64);
    Ok(seg(target, 0, m, Some(want)))
}

/// Rank r's `target` row j = row r of rank j's `input` (both `[P][m]`).
fn exchanged(
    p: &Protocol,
    shape: &Shape,
    input: WindowId,
    target: WindowId,
    r: usize,
) -> Result<Vec<Segment>, ShapeError> {
    let np = shape.world;
    let m = rows_of(p, shape, target, "all_to_all")?;
    if shape.window_len[input.index()] != shape.window_len[target.index()] {
        return Err(ShapeError(format!(
            "all_to_all: `{}` has {} elements but `{}` has {}; both must be {np} rows of {m}",
            p.windows[input].name,
            shape.window_len[input.index()],
            p.windows[target].name,
            shape.window_len[target.index()]
        )));
    }
    Ok((0..np)
        .map(|j| {
            let lo = j as u64 * m;
            let src = r as u64 * m;
            seg(
                target,
                lo,
                lo + m,
                Some(one(j, input, src as i64 - lo as i64)),
            )
        })
        .collect())
}

/// Block j of rank r's all_to_all_v `target`, rank j having sent `sent` rows: the count
/// cell (signal and array left for the caller) and the segments.
fn a2av_block(
    lay: &Blocks,
    (input, target): (WindowId, WindowId),
    j: usize,
    r: usize,
    sent: i64,
) -> (Cell, Vec<Segment>) {
    let value = sent.min(lay.rows as i64);
    let cell = Cell {
        signal: SignalId::new(0),
        index: j as u64,
        value,
        from: j,
        sent: (ArrayId::new(0), sent),
    };
    let rows = value.clamp(0, lay.rows as i64) as u64;
    let lo = j as u64 * lay.block;
    let mid = lo + rows * lay.row;
    let src = r as u64 * lay.block;
    let mut segs = Vec::new();
    if rows > 0 {
        let want = one(j, input, src as i64 - lo as i64);
        segs.push(seg(target, lo, mid, Some(want)));
    }
    if mid < lo + lay.block {
        segs.push(seg(target, mid, lo + lay.block, None));
    }
    (cell, segs)
}

/// The windows and value signals whose content the host reads after a call (the outputs).
pub fn output_windows(p: &Protocol) -> Vec<WindowId> {
    match &p.semantics {
        Semantics::Allreduce { data, .. }
        | Semantics::Broadcast { data, .. }
        | Semantics::ReduceScatter { data, .. }
        | Semantics::Reduce { data, .. } => vec![*data],
        Semantics::Allgather { target, .. }
        | Semantics::Gather { target, .. }
        | Semantics::Scatter { target, .. }
        | Semantics::AllToAll { target, .. }
        | Semantics::AllToAllV { target, .. } => vec![*target],
        Semantics::Barrier { .. } => Vec::new(),
    }
}

/// The value signals whose cells the host reads after a call.
pub fn output_signals(p: &Protocol) -> Vec<SignalId> {
    match &p.semantics {
        Semantics::AllToAllV { recv_counts, .. } => vec![*recv_counts],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn protocol(src: &str) -> Protocol {
        crate::lowered(src).protocol.expect("checks")
    }

    fn shape(p: &Protocol, params: &[(&str, i64)]) -> Shape {
        let m: BTreeMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Shape::of(p, &crate::eval::bind(p, &m).expect("binds")).expect("sizes")
    }

    const A2A: &str = "collective a: all_to_all(input, target) {
        ranks P in 1..=8; param m: int in 1..=64; param k: int in 1..=64;
        window input: f32[P][k]; window target: f32[P][m];
        body { } epilogue { } }";

    #[test]
    fn all_to_all_reads_row_r_of_every_peer() {
        let p = protocol(A2A);
        let s = shape(&p, &[("P", 3), ("m", 4), ("k", 4)]);
        let Ok(Meaning::Data(out)) = outputs(&p, &s, &|_, _, _| None) else {
            panic!("a meaning");
        };
        // Rank 2's row 1 (elements 4..8) is rank 1's input row 2 (elements 8..12).
        let seg = &out[2].segments[1];
        assert_eq!((seg.lo, seg.hi), (4, 8));
        let want = seg.want.as_ref().expect("compared");
        assert_eq!(want.sources.len(), 1);
        assert_eq!(want.sources[0].rank, 1);
        assert_eq!(seg.lo as i64 + want.sources[0].offset, 8);
    }

    #[test]
    fn mismatched_shapes_have_no_meaning() {
        let p = protocol(A2A);
        let s = shape(&p, &[("P", 2), ("m", 4), ("k", 3)]);
        let e = outputs(&p, &s, &|_, _, _| None).expect_err("input rows differ from target rows");
        assert!(e.0.contains("both must be 2 rows of 4"), "{e}");

        let p = protocol(
            "collective g: allgather(input, target) {
            ranks P in 1..=8; param m: int in 1..=64; param k: int in 1..=64;
            window input: f32[k]; window target: f32[P][m];
            body { } epilogue { } }",
        );
        let s = shape(&p, &[("P", 2), ("m", 4), ("k", 3)]);
        let e = outputs(&p, &s, &|_, _, _| None).expect_err("input shorter than a row");
        assert!(e.0.contains("each row of `target` has 4"), "{e}");
    }

    fn data(p: &Protocol, s: &Shape) -> Vec<RankOutputs> {
        match outputs(p, s, &|_, _, _| None) {
            Ok(Meaning::Data(out)) => out,
            other => panic!("a data meaning, got {other:?}"),
        }
    }

    #[test]
    fn reduce_fills_only_the_root() {
        let p = protocol(
            "collective r: reduce(max, root, data) {
            ranks P in 1..=8; param root: rank; param n: int in 1..=64;
            window data: f32[n]; body { } epilogue { } }",
        );
        let s = shape(&p, &[("P", 3), ("n", 5), ("root", 2)]);
        assert_eq!(
            inputs(&p, &s, 0),
            vec![WindowId::new(0)],
            "every rank stages its data"
        );
        let out = data(&p, &s);
        assert!(out[0].segments.is_empty() && out[1].segments.is_empty());
        let seg = &out[2].segments[0];
        assert_eq!((seg.lo, seg.hi), (0, 5));
        let want = seg.want.as_ref().expect("compared");
        assert_eq!(want.combine, Combine::Reduce(ReduceOp::Max));
        let ranks: Vec<usize> = want.sources.iter().map(|x| x.rank).collect();
        assert_eq!(ranks, vec![0, 1, 2]);
    }

    #[test]
    fn gather_fills_the_root_and_scatter_every_rank() {
        let p = protocol(
            "collective g: gather(root, input, target) {
            ranks P in 1..=8; param root: rank; param m: int in 1..=64;
            window input: f32[m]; window target: f32[P][m]; body { } epilogue { } }",
        );
        let s = shape(&p, &[("P", 3), ("m", 4), ("root", 1)]);
        let out = data(&p, &s);
        assert!(out[0].segments.is_empty() && out[2].segments.is_empty());
        // The root's row 2 (elements 8..12) is rank 2's input (elements 0..4).
        let seg = &out[1].segments[2];
        let src = seg.want.as_ref().expect("compared").sources[0];
        assert_eq!((seg.lo, src.rank, seg.lo as i64 + src.offset), (8, 2, 0));

        let p = protocol(
            "collective s: scatter(root, input, target) {
            ranks P in 1..=8; param root: rank; param m: int in 1..=64;
            window input: f32[P][m]; window target: f32[m]; body { } epilogue { } }",
        );
        let s = shape(&p, &[("P", 3), ("m", 4), ("root", 1)]);
        assert_eq!(
            inputs(&p, &s, 1),
            vec![WindowId::new(0)],
            "the root stages its input"
        );
        assert!(inputs(&p, &s, 0).is_empty());
        let out = data(&p, &s);
        // Rank 2's target (elements 0..4) is the root's input row 2 (elements 8..12).
        let seg = &out[2].segments[0];
        let src = seg.want.as_ref().expect("compared").sources[0];
        assert_eq!((seg.lo, seg.hi, src.rank, src.offset), (0, 4, 1, 8));
        let mut short = s.clone();
        short.window_len[1] = 3;
        let e = outputs(&p, &short, &|_, _, _| None).expect_err("target shorter than a row");
        assert!(
            e.0.contains("`target` has 3 elements but each row of `input` has 4"),
            "{e}"
        );
    }
}
