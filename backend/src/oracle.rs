//! The semantics oracle of host runs: distinct per-(rank, call) payloads for a collective's
//! inputs, and the check of every collected output against the collective's definition
//! (`Semantics` in the IR).
//!
//! Payloads are exact in f32 whatever the reduction order: sums of small integers (below
//! 2^24 for 16 ranks), and for `prod` powers of two. So outputs are compared with `==`.
//!
//! | semantics | staged (every call) | collected and checked |
//! |---|---|---|
//! | allreduce(op, data) | `data` | `data` = op over ranks |
//! | broadcast(root, data) | `data` (every rank; non-roots get their own, wrong, values) | `data` = root's |
//! | reduce_scatter(op, data) | `data` `[P][m]` | row `r` of rank `r` = op over ranks of row `r` |
//! | allgather(input, target) | `input` | `target` row `j` = rank `j`'s `input` |
//! | all_to_all(input, target) | `input` `[P][m]` | `target` row `j` = rank `j`'s `input` row `r` |
//! | all_to_all_v(input, target, sc, rc) | `input`, host array `sc` | `rc[j]` = min(rank `j`'s `sc[r]`, rows per block); that many rows of `target` block `j` = rank `j`'s `input` block `r` |
//! | barrier() | host stamps | every rank's stamp of the call is visible, all ranks arrived |
//!
//! Host arrays are staged for every protocol (values inside their domain, varying per call).

use crate::host::job::{Job, JobBuffer, Outcome};
use crate::layout::{Abi, BufferSource, Elem};
use collc_spec::eval::Bindings;
use collc_spec::ir::{Protocol, ReduceOp, Semantics};

/// What a job stages and collects, in args order.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The ABI.
    pub abi: Abi,
    /// Elements per buffer.
    pub counts: Vec<u64>,
    /// Staged per call.
    pub stage: Vec<bool>,
    /// Collected per call.
    pub collect: Vec<bool>,
    /// P.
    pub nranks: usize,
    /// K.
    pub calls: usize,
}

/// The value of element `i` of input `salt` of rank `r` in call `k`.
pub fn input_value(op: Option<ReduceOp>, salt: usize, r: usize, k: usize, i: usize) -> f32 {
    match op {
        Some(ReduceOp::Prod) => [1.0, 2.0, 0.5, -1.0, -2.0, 4.0][(r * 3 + k * 5 + i + salt) % 6],
        _ => ((r + 1) * 7 + (k % 64) * 1031 + (i % 1021) + salt * 13) as f32,
    }
}

/// The value of element `i` of host array `a` (domain `lo..=hi`) of rank `r` in call `k`.
pub fn array_value(lo: i64, hi: i64, a: usize, r: usize, k: usize, i: usize) -> i64 {
    let span = (hi - lo + 1).max(1) as u64;
    lo + ((r * 5 + k * 3 + i * 7 + a * 11) as u64 % span) as i64
}

fn op_of(p: &Protocol) -> Option<ReduceOp> {
    match p.semantics {
        Semantics::Allreduce { op, .. } | Semantics::ReduceScatter { op, .. } => Some(op),
        _ => None,
    }
}

fn fold(op: ReduceOp, xs: impl Iterator<Item = f32>) -> f32 {
    let mut acc: Option<f32> = None;
    for x in xs {
        acc = Some(match acc {
            None => x,
            Some(a) => op.apply(a, x),
        });
    }
    acc.unwrap_or(0.0)
}

/// Which windows are inputs (staged) and outputs (collected).
fn roles(p: &Protocol, src: BufferSource) -> (bool, bool) {
    use BufferSource::*;
    match (&p.semantics, src) {
        (_, Array(_)) => (true, false),
        (Semantics::Allreduce { data, .. }, Window(w))
        | (Semantics::Broadcast { data, .. }, Window(w))
        | (Semantics::ReduceScatter { data, .. }, Window(w))
            if w == *data =>
        {
            (true, true)
        }
        (Semantics::Allgather { input, target }, Window(w))
        | (Semantics::AllToAll { input, target }, Window(w))
        | (Semantics::AllToAllV { input, target, .. }, Window(w)) => (w == *input, w == *target),
        (Semantics::AllToAllV { recv_counts, .. }, Signal(s)) => (false, s == *recv_counts),
        _ => (false, false),
    }
}

/// Builds the job (buffers, scalars, staged payloads) of `calls` calls.
pub fn build_job(p: &Protocol, b: &Bindings, calls: usize) -> Result<(Job, Plan), String> {
    let abi = Abi::of(p);
    let counts = abi
        .element_counts(p, b)
        .map_err(|e| format!("cannot size the buffers: {e}"))?;
    let mut stage = Vec::new();
    let mut collect = Vec::new();
    let mut buffers = Vec::new();
    for (i, buf) in abi.buffers.iter().enumerate() {
        let (s, c) = roles(p, buf.source);
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
    let op = op_of(p);
    let mut inputs = Vec::with_capacity(calls * nranks);
    for k in 0..calls {
        for r in 0..nranks {
            let mut img = Vec::new();
            for (i, buf) in abi.buffers.iter().enumerate() {
                if !stage[i] {
                    continue;
                }
                let n = counts[i] as usize;
                let start = img.len();
                match buf.source {
                    BufferSource::Window(w) => {
                        for e in 0..n {
                            img.extend_from_slice(&input_value(op, w, r, k, e).to_le_bytes());
                        }
                    }
                    BufferSource::Array(a) => {
                        let (lo, hi) = p.arrays[a].domain;
                        for e in 0..n {
                            img.extend_from_slice(&array_value(lo, hi, a, r, k, e).to_le_bytes());
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
        barrier_check: matches!(p.semantics, Semantics::Barrier),
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

fn f32_at(b: &[u8], i: usize) -> f32 {
    f32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
}
fn i32_at(b: &[u8], i: usize) -> i32 {
    i32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
}

/// Checks every collected output of a run against the collective's semantics.
pub fn check(p: &Protocol, b: &Bindings, plan: &Plan, job: &Job, out: &Outcome) -> Check {
    let mut c = Check::default();
    let n_ranks = plan.nranks;
    let op = op_of(p);
    let slot_of = |src: BufferSource| plan.abi.buffer_slot(src).expect("buffer of the protocol");
    let count = |src: BufferSource| plan.counts[slot_of(src)] as usize;
    let arrays_of = |r: usize, k: usize, a: usize| -> Vec<i64> {
        // Recompute the staged array (same function as build_job).
        let (lo, hi) = p.arrays[a].domain;
        (0..count(BufferSource::Array(a)))
            .map(|e| array_value(lo, hi, a, r, k, e))
            .collect()
    };
    let _ = job;
    if matches!(p.semantics, Semantics::Barrier) {
        if out.barrier_errors != 0 {
            c.bad(format!(
                "{} barrier violation(s): a rank left a call before every rank had entered it (host stamps)",
                out.barrier_errors
            ));
        }
        c.compared = (plan.calls * n_ranks) as u64;
        return c;
    }
    for k in 0..plan.calls {
        for r in 0..n_ranks {
            let Some(Some(img)) = out.outputs.get(k * n_ranks + r) else {
                c.missing += 1;
                continue;
            };
            let views = split(plan, img);
            let view = |src: BufferSource| views[slot_of(src)].expect("collected");
            let cmp = |c: &mut Check, name: &str, i: usize, got: f32, want: f32| {
                c.compared += 1;
                if got != want && !(got.is_nan() && want.is_nan()) {
                    c.bad(format!(
                        "call {k} rank {r}: {name}[{i}] = {got}, want {want}"
                    ));
                }
            };
            match &p.semantics {
                Semantics::Allreduce { op: rop, data } => {
                    let src = BufferSource::Window(*data);
                    let v = view(src);
                    for i in 0..count(src) {
                        let want =
                            fold(*rop, (0..n_ranks).map(|q| input_value(op, *data, q, k, i)));
                        cmp(&mut c, &p.windows[*data].name, i, f32_at(v, i), want);
                    }
                }
                Semantics::Broadcast { root, data } => {
                    let root = b.env.get(*root).unwrap_or(0) as usize;
                    let src = BufferSource::Window(*data);
                    let v = view(src);
                    for i in 0..count(src) {
                        cmp(
                            &mut c,
                            &p.windows[*data].name,
                            i,
                            f32_at(v, i),
                            input_value(op, *data, root, k, i),
                        );
                    }
                }
                Semantics::ReduceScatter { op: rop, data } => {
                    let src = BufferSource::Window(*data);
                    let v = view(src);
                    let m = count(src) / n_ranks;
                    for i in r * m..(r + 1) * m {
                        let want =
                            fold(*rop, (0..n_ranks).map(|q| input_value(op, *data, q, k, i)));
                        cmp(&mut c, &p.windows[*data].name, i, f32_at(v, i), want);
                    }
                }
                Semantics::Allgather { input, target } => {
                    let v = view(BufferSource::Window(*target));
                    let m = count(BufferSource::Window(*target)) / n_ranks;
                    let m_in = count(BufferSource::Window(*input));
                    for j in 0..n_ranks {
                        for i in 0..m.min(m_in) {
                            let want = input_value(op, *input, j, k, i);
                            cmp(
                                &mut c,
                                &p.windows[*target].name,
                                j * m + i,
                                f32_at(v, j * m + i),
                                want,
                            );
                        }
                    }
                }
                Semantics::AllToAll { input, target } => {
                    let v = view(BufferSource::Window(*target));
                    let m = count(BufferSource::Window(*target)) / n_ranks;
                    let m_in = count(BufferSource::Window(*input)) / n_ranks;
                    for j in 0..n_ranks {
                        for i in 0..m.min(m_in) {
                            let want = input_value(op, *input, j, k, r * m_in + i);
                            cmp(
                                &mut c,
                                &p.windows[*target].name,
                                j * m + i,
                                f32_at(v, j * m + i),
                                want,
                            );
                        }
                    }
                }
                Semantics::AllToAllV {
                    input,
                    target,
                    send_counts,
                    recv_counts,
                } => {
                    let tv = view(BufferSource::Window(*target));
                    let rc = view(BufferSource::Signal(*recv_counts));
                    let tdims = &p.windows[*target].dims;
                    let row = tdims
                        .last()
                        .and_then(|d| collc_spec::eval::eval(p, d, &b.env).ok())
                        .unwrap_or(1)
                        .max(1) as usize;
                    let block = count(BufferSource::Window(*target)) / n_ranks;
                    let block_in = count(BufferSource::Window(*input)) / n_ranks;
                    let rows_per_block = (block / row) as i64;
                    let n_rc = count(BufferSource::Signal(*recv_counts));
                    for j in 0..n_ranks {
                        let sent = arrays_of(j, k, *send_counts).get(r).copied().unwrap_or(0);
                        let want_rows = sent.min(rows_per_block);
                        if n_rc == n_ranks {
                            c.compared += 1;
                            let got = i32_at(rc, j);
                            if i64::from(got) != want_rows {
                                c.bad(format!(
                                    "call {k} rank {r}: {}[{j}] = {got}, want {want_rows}",
                                    p.signals[*recv_counts].name
                                ));
                            }
                        }
                        for ii in 0..want_rows.max(0) as usize {
                            for e in 0..row {
                                let at = j * block + ii * row + e;
                                let want =
                                    input_value(op, *input, j, k, r * block_in + ii * row + e);
                                cmp(&mut c, &p.windows[*target].name, at, f32_at(tv, at), want);
                            }
                        }
                    }
                }
                Semantics::Barrier => {}
            }
        }
    }
    c
}

/// Element type helper for callers that read collected buffers.
pub fn elem_of(plan: &Plan, slot: usize) -> Elem {
    plan.abi.buffers[slot].elem
}
