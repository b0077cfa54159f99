//! What every collective must compute, written once (LANGUAGE.md §6).
//!
//! For a protocol's [`Semantics`], its concrete sizes ([`Shape`]) and one call's host arrays,
//! [`inputs`] says which windows the host stages with a rank's input before the call, and
//! [`outputs`] says, for every rank, exactly what each output element must hold after it:
//! which (source rank, input window, element) contributions, and how they combine (a copy of
//! one, or a reduction). A `barrier()` has no data; [`Meaning::Barrier`] is its rule.
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
    /// The broadcast root (0 for other kinds).
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
        let root = match p.semantics {
            Semantics::Broadcast { root, .. } => b.env.get(root).unwrap_or(0).max(0) as usize,
            _ => 0,
        };
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
    /// `barrier()`, the stamp rule: every rank stamps its entry into call k (host side,
    /// before the call starts); when call k ends on any rank, every rank's stamp of call k is
    /// visible there (no rank leaves a call before every rank has entered it).
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
        Semantics::Allreduce { data, .. } | Semantics::ReduceScatter { data, .. } => vec![*data],
        Semantics::Broadcast { data, .. } => {
            if r == shape.root {
                vec![*data]
            } else {
                Vec::new()
            }
        }
        Semantics::Allgather { input, .. }
        | Semantics::AllToAll { input, .. }
        | Semantics::AllToAllV { input, .. } => vec![*input],
        Semantics::Barrier => Vec::new(),
    }
}

/// The reduction operator of the kind (what payloads must be exact under), if any.
pub fn reduce_op(p: &Protocol) -> Option<ReduceOp> {
    match p.semantics {
        Semantics::Allreduce { op, .. } | Semantics::ReduceScatter { op, .. } => Some(op),
        _ => None,
    }
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
    } = &p.semantics
    else {
        return Err(ShapeError("not an all_to_all_v protocol".into()));
    };
    let np = shape.world as u64;
    let tname = &p.windows[*target].name;
    let len = shape.window_len[*target];
    let row = shape.window_row[*target];
    if len == 0 || !len.is_multiple_of(np * row) {
        return Err(ShapeError(format!(
            "all_to_all_v: `{tname}` has {len} elements, not {np} blocks of whole rows of {row} elements"
        )));
    }
    let block = len / np;
    let ilen = shape.window_len[*input];
    if ilen != len {
        return Err(ShapeError(format!(
            "all_to_all_v: `{}` has {ilen} elements but `{tname}` has {len}; both must be {np} blocks of {} rows of {row}",
            p.windows[*input].name,
            block / row
        )));
    }
    let sc = shape.array_len[*send_counts];
    if sc != np {
        return Err(ShapeError(format!(
            "all_to_all_v: send-counts array `{}` has {sc} entries, not one per rank ({np})",
            p.arrays[*send_counts].name
        )));
    }
    let rc = shape.signal_len[*recv_counts];
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
    let len = shape.window_len[w];
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
    let np = shape.world;
    let all = |w: WindowId, offset: i64| -> Vec<Source> {
        (0..np)
            .map(|q| Source {
                rank: q,
                window: w,
                offset,
            })
            .collect()
    };
    let one = |rank: usize, window: WindowId, offset: i64| Want {
        combine: Combine::Copy,
        sources: vec![Source {
            rank,
            window,
            offset,
        }],
    };
    let seg = |window: WindowId, lo: u64, hi: u64, want: Option<Want>| Segment {
        window,
        lo,
        hi,
        want,
    };
    let mut per_rank = Vec::with_capacity(np);
    for r in 0..np {
        let mut out = RankOutputs::default();
        match &p.semantics {
            Semantics::Barrier => return Ok(Meaning::Barrier),
            Semantics::Allreduce { op, data } => {
                let want = Want {
                    combine: Combine::Reduce(*op),
                    sources: all(*data, 0),
                };
                out.segments
                    .push(seg(*data, 0, shape.window_len[*data], Some(want)));
            }
            Semantics::Broadcast { data, .. } => {
                let want = one(shape.root, *data, 0);
                out.segments
                    .push(seg(*data, 0, shape.window_len[*data], Some(want)));
            }
            Semantics::ReduceScatter { op, data } => {
                let m = rows_of(p, shape, *data, "reduce_scatter")?;
                let want = Want {
                    combine: Combine::Reduce(*op),
                    sources: all(*data, 0),
                };
                let lo = r as u64 * m;
                out.segments.push(seg(*data, lo, lo + m, Some(want)));
            }
            Semantics::Allgather { input, target } => {
                let m = rows_of(p, shape, *target, "allgather")?;
                if shape.window_len[*input] != m {
                    return Err(ShapeError(format!(
                        "allgather: `{}` has {} elements but each row of `{}` has {m}",
                        p.windows[*input].name, shape.window_len[*input], p.windows[*target].name
                    )));
                }
                for j in 0..np {
                    let lo = j as u64 * m;
                    out.segments
                        .push(seg(*target, lo, lo + m, Some(one(j, *input, -(lo as i64)))));
                }
            }
            Semantics::AllToAll { input, target } => {
                let m = rows_of(p, shape, *target, "all_to_all")?;
                if shape.window_len[*input] != shape.window_len[*target] {
                    return Err(ShapeError(format!(
                        "all_to_all: `{}` has {} elements but `{}` has {}; both must be {np} rows of {m}",
                        p.windows[*input].name,
                        shape.window_len[*input],
                        p.windows[*target].name,
                        shape.window_len[*target]
                    )));
                }
                for j in 0..np {
                    let lo = j as u64 * m;
                    let src = r as u64 * m;
                    let want = one(j, *input, src as i64 - lo as i64);
                    out.segments.push(seg(*target, lo, lo + m, Some(want)));
                }
            }
            Semantics::AllToAllV {
                input,
                target,
                send_counts,
                recv_counts,
            } => {
                let lay = a2av_blocks(p, shape)?;
                for j in 0..np {
                    let sent = array(j, *send_counts, r as u64).ok_or_else(|| {
                        ShapeError(format!(
                            "all_to_all_v: rank {j} has no `{}[{r}]`",
                            p.arrays[*send_counts].name
                        ))
                    })?;
                    let value = sent.min(lay.rows as i64);
                    out.cells.push(Cell {
                        signal: *recv_counts,
                        index: j as u64,
                        value,
                        from: j,
                        sent: (*send_counts, sent),
                    });
                    let rows = value.clamp(0, lay.rows as i64) as u64;
                    let lo = j as u64 * lay.block;
                    let mid = lo + rows * lay.row;
                    let src = r as u64 * lay.block;
                    if rows > 0 {
                        let want = one(j, *input, src as i64 - lo as i64);
                        out.segments.push(seg(*target, lo, mid, Some(want)));
                    }
                    if mid < lo + lay.block {
                        out.segments.push(seg(*target, mid, lo + lay.block, None));
                    }
                }
            }
        }
        per_rank.push(out);
    }
    Ok(Meaning::Data(per_rank))
}

/// The windows and value signals whose content the host reads after a call (the outputs).
pub fn output_windows(p: &Protocol) -> Vec<WindowId> {
    match &p.semantics {
        Semantics::Allreduce { data, .. }
        | Semantics::Broadcast { data, .. }
        | Semantics::ReduceScatter { data, .. } => vec![*data],
        Semantics::Allgather { target, .. }
        | Semantics::AllToAll { target, .. }
        | Semantics::AllToAllV { target, .. } => vec![*target],
        Semantics::Barrier => Vec::new(),
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
        crate::check(src).protocol.expect("checks")
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
}
