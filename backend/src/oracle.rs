//! The payloads and the output check of host runs, derived from the one definition of every
//! collective's meaning ([`collc_spec::meaning`]): the windows it names as a rank's inputs are
//! staged with distinct per-(rank, call) payloads, the outputs it names are collected, and every
//! collected element is compared with the fold of its contributions' payloads.
//!
//! Payloads are exact in every element type whatever the reduction order: sums of small
//! integers (below 2^24 for the 64 ranks a host run has at most), and for `prod` powers of
//! two (on integer types 1, 2, 1, -1, -2, -1: integer products wrap, as MPI's do). So
//! outputs are compared with `==`, in the window's element type ([`Value`]).
//! Host arrays are staged for every protocol (values inside their domain, varying per call).
//! A barrier is checked with per-block host stamps ([`Meaning::Barrier`]'s rule, the blocks
//! of `collc_spec::meaning::barrier_peers`).
//!
//! The MPI runner gets the same definition as a table ([`crate::mpi::table`]); the payload
//! functions here are mirrored by `collc_mpi::oracle` in `backend/runtime/mpi/collc_mpi.hpp`.

use crate::host::job::{Job, JobBuffer, Outcome};
use crate::layout::{Abi, BufferSource, Elem};
use collc_spec::eval::Bindings;
use collc_spec::ir::{ArrayId, ElemType, Protocol, ReduceOp, Semantics};
use collc_spec::meaning::{self, Combine, Meaning, Shape, Want};

/// What a job stages and collects, in args order.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The ABI.
    pub abi: Abi,
    /// Elements per buffer.
    pub counts: Vec<u64>,
    /// Staged per call (on some rank).
    pub stage: Vec<bool>,
    /// Collected per call.
    pub collect: Vec<bool>,
    /// P.
    pub nranks: usize,
    /// K.
    pub calls: usize,
    /// The sizes the meaning is evaluated at.
    pub shape: Shape,
}

/// The value of element `i` of input `salt` of rank `r` in call `k`.
pub fn input_value(op: Option<ReduceOp>, salt: usize, r: usize, k: usize, i: usize) -> f32 {
    match op {
        Some(ReduceOp::Prod) => [1.0, 2.0, 0.5, -1.0, -2.0, 4.0][(r * 3 + k * 5 + i + salt) % 6],
        _ => ((r + 1) * 7 + (k % 64) * 1031 + (i % 1021) + salt * 13) as f32,
    }
}

/// One element of a window, in its element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
    /// `i32`.
    I32(i32),
    /// `i64`.
    I64(i64),
}

impl Value {
    /// The payload of [`input_value`] in element type `t`.
    pub fn input(
        t: ElemType,
        op: Option<ReduceOp>,
        salt: usize,
        r: usize,
        k: usize,
        i: usize,
    ) -> Value {
        let int_prod = || [1, 2, 1, -1, -2, -1][(r * 3 + k * 5 + i + salt) % 6];
        let f = input_value(op, salt, r, k, i);
        let prod = op == Some(ReduceOp::Prod);
        match t {
            ElemType::F32 => Value::F32(f),
            ElemType::F64 => Value::F64(f64::from(f)),
            ElemType::I32 if prod => Value::I32(int_prod()),
            ElemType::I64 if prod => Value::I64(i64::from(int_prod())),
            ElemType::I32 => Value::I32(f as i32),
            ElemType::I64 => Value::I64(f as i64),
        }
    }
    /// `self op x` (integers wrap; max/min ignore a NaN, like `fmax`/`fmin`).
    pub fn reduce(self, op: ReduceOp, x: Value) -> Value {
        use ReduceOp::*;
        match (self, x) {
            (Value::F32(a), Value::F32(b)) => Value::F32(op.apply(a, b)),
            (Value::F64(a), Value::F64(b)) => Value::F64(match op {
                Sum => a + b,
                Max => a.max(b),
                Min => a.min(b),
                Prod => a * b,
            }),
            (Value::I32(a), Value::I32(b)) => Value::I32(match op {
                Sum => a.wrapping_add(b),
                Max => a.max(b),
                Min => a.min(b),
                Prod => a.wrapping_mul(b),
            }),
            (Value::I64(a), Value::I64(b)) => Value::I64(match op {
                Sum => a.wrapping_add(b),
                Max => a.max(b),
                Min => a.min(b),
                Prod => a.wrapping_mul(b),
            }),
            (a, _) => a,
        }
    }
    /// Little-endian bytes.
    pub fn bytes(self) -> Vec<u8> {
        match self {
            Value::F32(v) => v.to_le_bytes().to_vec(),
            Value::F64(v) => v.to_le_bytes().to_vec(),
            Value::I32(v) => v.to_le_bytes().to_vec(),
            Value::I64(v) => v.to_le_bytes().to_vec(),
        }
    }
    /// Element `i` of little-endian bytes `b` holding elements of type `t`.
    pub fn read(t: ElemType, b: &[u8], i: usize) -> Value {
        let n = t.size();
        let x = &b[i * n..i * n + n];
        match t {
            ElemType::F32 => Value::F32(f32::from_le_bytes(x.try_into().expect("4 bytes"))),
            ElemType::F64 => Value::F64(f64::from_le_bytes(x.try_into().expect("8 bytes"))),
            ElemType::I32 => Value::I32(i32::from_le_bytes(x.try_into().expect("4 bytes"))),
            ElemType::I64 => Value::I64(i64::from_le_bytes(x.try_into().expect("8 bytes"))),
        }
    }
    /// Equal, or both NaN.
    pub fn same(self, o: Value) -> bool {
        match (self, o) {
            (Value::F32(a), Value::F32(b)) => a == b || (a.is_nan() && b.is_nan()),
            (Value::F64(a), Value::F64(b)) => a == b || (a.is_nan() && b.is_nan()),
            (a, b) => a == b,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
        }
    }
}

/// The value of element `i` of host array `a` (domain `lo..=hi`) of rank `r` in call `k`.
pub fn array_value(lo: i64, hi: i64, a: usize, r: usize, k: usize, i: usize) -> i64 {
    let span = (hi - lo + 1).max(1) as u64;
    lo + ((r * 5 + k * 3 + i * 7 + a * 11) as u64 % span) as i64
}

/// The host arrays of call `k`, as [`meaning::outputs`] reads them.
pub fn arrays_of_call<'p>(
    p: &'p Protocol,
    shape: &'p Shape,
    k: usize,
) -> impl Fn(usize, ArrayId, u64) -> Option<i64> + 'p {
    move |r, a, i| {
        (i < shape.array_len[a.index()]).then(|| {
            let (lo, hi) = p.arrays[a].domain;
            array_value(lo, hi, a.index(), r, k, i as usize)
        })
    }
}

/// The expected value of element `e` of a segment in call `k`, in element type `t`.
pub fn want_value(t: ElemType, op: Option<ReduceOp>, want: &Want, k: usize, e: u64) -> Value {
    let mut acc: Option<Value> = None;
    for s in &want.sources {
        let i = (e as i64 + s.offset).max(0) as usize;
        let x = Value::input(t, op, s.window.index(), s.rank, k, i);
        acc = Some(match (acc, want.combine) {
            (None, _) | (Some(_), Combine::Copy) => x,
            (Some(a), Combine::Reduce(rop)) => a.reduce(rop, x),
        });
    }
    acc.unwrap_or(match t {
        ElemType::F32 => Value::F32(0.0),
        ElemType::F64 => Value::F64(0.0),
        ElemType::I32 => Value::I32(0),
        ElemType::I64 => Value::I64(0),
    })
}

/// Which buffers are staged on some rank and which are collected (by the meaning).
fn roles(p: &Protocol, shape: &Shape, src: BufferSource) -> (bool, bool) {
    match src {
        BufferSource::Array(_) => (true, false),
        BufferSource::Window(w) => (
            (0..shape.world).any(|r| meaning::inputs(p, shape, r).contains(&w)),
            meaning::output_windows(p).contains(&w),
        ),
        BufferSource::Signal(s) => (false, meaning::output_signals(p).contains(&s)),
    }
}

/// Builds the job (buffers, scalars, staged payloads) of `calls` calls.
pub fn build_job(p: &Protocol, b: &Bindings, calls: usize) -> Result<(Job, Plan), String> {
    let abi = Abi::of(p);
    let counts = abi
        .element_counts(p, b)
        .map_err(|e| format!("cannot size the buffers: {e}"))?;
    let shape = Shape::of(p, b).map_err(|e| format!("cannot size the buffers: {e}"))?;
    // Shapes the collective gives no meaning are refused before anything runs.
    meaning::outputs(p, &shape, &arrays_of_call(p, &shape, 0)).map_err(|e| e.to_string())?;
    let mut stage = Vec::new();
    let mut collect = Vec::new();
    let mut buffers = Vec::new();
    for (i, buf) in abi.buffers.iter().enumerate() {
        let (s, c) = roles(p, &shape, buf.source);
        stage.push(s);
        collect.push(c);
        let bytes = (counts[i] * buf.elem.size()).max(4);
        buffers.push(JobBuffer {
            name: buf.name.clone(),
            bytes,
            kind: u32::from(buf.is_credit_signal),
            per_call: buf.per_call,
            stage: s,
            collect: c,
        });
    }
    let nranks = b.world as usize;
    let stage_ranks = (0..nranks)
        .flat_map(|r| {
            let mine = meaning::inputs(p, &shape, r);
            abi.buffers.iter().map(move |buf| match buf.source {
                BufferSource::Window(w) => mine.contains(&w),
                _ => true,
            })
        })
        .collect();
    let op = meaning::reduce_op(p);
    let mut inputs = Vec::with_capacity(calls * nranks);
    for k in 0..calls {
        for r in 0..nranks {
            let mine = meaning::inputs(p, &shape, r);
            let mut img = Vec::new();
            for (i, buf) in abi.buffers.iter().enumerate() {
                if !stage[i] {
                    continue;
                }
                let n = counts[i] as usize;
                let start = img.len();
                match buf.source {
                    // An input of other ranks only: not written on this one (`stage_ranks`).
                    BufferSource::Window(w) if !mine.contains(&w) => {}
                    BufferSource::Window(w) => {
                        let t = p.windows[w].elem;
                        for e in 0..n {
                            img.extend_from_slice(&Value::input(t, op, w.index(), r, k, e).bytes());
                        }
                    }
                    BufferSource::Array(a) => {
                        let (lo, hi) = p.arrays[a].domain;
                        for e in 0..n {
                            img.extend_from_slice(
                                &array_value(lo, hi, a.index(), r, k, e).to_le_bytes(),
                            );
                        }
                    }
                    BufferSource::Signal(_) => {}
                }
                // Pad to the buffer's byte size (zero-element buffers are 4 bytes).
                img.resize(start + buffers[i].bytes as usize, 0);
            }
            inputs.push(img);
        }
    }
    let job = Job {
        nranks: b.world as i32,
        nblocks: b.blocks as i32,
        ncalls: calls as i32,
        barrier_check: p.semantics.is_barrier(),
        per_lane: matches!(p.semantics, Semantics::Barrier { lane: Some(_) }),
        stage_ranks,
        buffers,
        scalars: abi.scalar_values(b),
        inputs,
        ..Job::default()
    };
    let plan = Plan {
        abi,
        counts,
        stage,
        collect,
        nranks,
        calls,
        shape,
    };
    Ok((job, plan))
}

/// The result of checking a run's outputs.
#[derive(Debug, Clone, Default)]
pub struct Check {
    /// Output elements compared.
    pub compared: u64,
    /// Wrong elements.
    pub wrong: u64,
    /// The first few, as text.
    pub first: Vec<String>,
    /// (call, rank) slots with no collected output.
    pub missing: u64,
}

impl Check {
    fn bad(&mut self, s: String) {
        self.wrong += 1;
        if self.first.len() < 8 {
            self.first.push(s);
        }
    }
}

/// Per-buffer views of one collected image.
fn split<'a>(plan: &Plan, img: &'a [u8]) -> Vec<Option<&'a [u8]>> {
    let mut out = Vec::new();
    let mut off = 0;
    for (i, buf) in plan.abi.buffers.iter().enumerate() {
        if plan.collect[i] {
            let n = (plan.counts[i] * buf.elem.size()).max(4) as usize;
            out.push(Some(&img[off..off + n]));
            off += n;
        } else {
            out.push(None);
        }
    }
    out
}

fn i32_at(b: &[u8], i: usize) -> i32 {
    i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
}

/// Checks every collected output of a run against the collective's meaning.
pub fn check(p: &Protocol, b: &Bindings, plan: &Plan, job: &Job, out: &Outcome) -> Check {
    let _ = (b, job);
    let mut c = Check::default();
    let n_ranks = plan.nranks;
    let op = meaning::reduce_op(p);
    let slot_of = |src: BufferSource| plan.abi.buffer_slot(src).expect("buffer of the protocol");
    for k in 0..plan.calls {
        let arrays = arrays_of_call(p, &plan.shape, k);
        let per_rank = match meaning::outputs(p, &plan.shape, &arrays) {
            Ok(Meaning::Data(per_rank)) => per_rank,
            Ok(Meaning::Barrier) => {
                if k == 0 && out.barrier_errors != 0 {
                    c.bad(format!(
                        "{} barrier violation(s): a block left a call before a block it waits for on another rank had entered it (host stamps)",
                        out.barrier_errors
                    ));
                }
                c.compared += n_ranks as u64;
                continue;
            }
            Err(e) => {
                c.bad(format!("call {k}: {e}"));
                return c;
            }
        };
        for (r, want) in per_rank.iter().enumerate() {
            let Some(Some(img)) = out.outputs.get(k * n_ranks + r) else {
                c.missing += 1;
                continue;
            };
            let views = split(plan, img);
            let view = |src: BufferSource| views[slot_of(src)].expect("collected");
            for seg in &want.segments {
                let Some(w) = &seg.want else { continue };
                let v = view(BufferSource::Window(seg.window));
                let t = p.windows[seg.window].elem;
                for e in seg.lo..seg.hi {
                    let got = Value::read(t, v, e as usize);
                    let want = want_value(t, op, w, k, e);
                    c.compared += 1;
                    if !got.same(want) {
                        c.bad(format!(
                            "call {k} rank {r}: {}[{e}] = {got}, want {want}",
                            p.windows[seg.window].name
                        ));
                    }
                }
            }
            for cell in &want.cells {
                let got = i32_at(view(BufferSource::Signal(cell.signal)), cell.index as usize);
                c.compared += 1;
                if i64::from(got) != cell.value {
                    c.bad(format!(
                        "call {k} rank {r}: {}[{}] = {got}, want {}",
                        p.signals[cell.signal].name, cell.index, cell.value
                    ));
                }
            }
        }
    }
    c
}

/// Element type helper for callers that read collected buffers.
pub fn elem_of(plan: &Plan, slot: usize) -> Elem {
    plan.abi.buffers[slot].elem
}
