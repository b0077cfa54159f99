//! The host side of a call: staging each call's input, ending a rank's call,
//! reading and checking its output against the collective's meaning
//! (`collc_spec::meaning`), including the all-to-all-v layout and counts.

use super::data::Loc;
use super::state::{
    join, mem_mut, Acc, Clock, Memory, Outcome, State, Status, Tiles, CONSUME, STAGE,
};
use super::{fmt_call, Machine};
use crate::report::{EvKind, Finding};
use crate::value::{Contrib, Segs, Val, INITIAL};
use collc_spec::ir::*;
use collc_spec::meaning;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;

/// The memo of [`Machine`]'s outputs by meaning, per (rank, call).
pub(super) type Meanings = RefCell<HashMap<(usize, u16), Result<Rc<meaning::RankOutputs>, String>>>;

/// One expected piece of a rank's output: (window, lo, hi, value relative to lo, or `None`
/// for elements read but not compared).
type Expected = (WindowId, u64, u64, Option<Val>);

impl Machine<'_> {
    pub(super) fn start_call(
        &self,
        s: &mut State,
        p: usize,
        call: u16,
        clock: &Clock,
        out: &mut Outcome,
    ) {
        let (r, b) = self.who(p);
        let pr = &mut s.procs[p];
        pr.status = Status::Run;
        pr.pc = 0;
        pr.call = call;
        pr.slots.iter_mut().for_each(|x| *x = 0);
        pr.slots[self.code.me_slot as usize] = r as i64;
        if let Some(bs) = self.code.blk_slot {
            pr.slots[bs as usize] = b as i64;
        }
        if let Some(cs) = self.code.call_slot {
            pr.slots[cs as usize] = self.first_call + i64::from(call);
        }
        pr.clock = clock.clone();
        pr.seq = 0;
        if self.p.semantics.is_barrier() {
            // The entry is an event of its own (a fresh epoch), so that a peer's exit
            // can be checked to be ordered after it.
            pr.bump = true;
            let e = Self::epoch(pr, p);
            if pr.entries.len() <= call as usize {
                pr.entries.resize(call as usize + 1, 0);
            }
            pr.entries[call as usize] = e;
        }
        pr.tiles = Tiles::new(
            Id::range(self.p.tiles.len())
                .map(|t| Segs::filled(self.code.tile_len(t), Val::garbage(r, call as usize)))
                .collect(),
        );
        self.event(out, p, call, None, || {
            (EvKind::CallStart, format!("enters call {}", fmt_call(call)))
        });
    }

    pub(super) fn end_call(&self, s: &mut State, p: usize, out: &mut Outcome) {
        if self.memory == Memory::Relaxed {
            while !s.procs[p].pending.is_empty() {
                self.drain_one(s, p, out);
            }
        }
        let call = s.procs[p].call;
        self.event(out, p, call, None, || {
            (EvKind::CallEnd, format!("leaves call {}", fmt_call(call)))
        });
        if self.p.semantics.is_barrier() {
            // Checked against happens-before: every process of another rank that the
            // barrier synchronises with this one (`meaning::barrier_peers`: every block,
            // or the same lane) must have entered this call, and its entry must be
            // ordered before this exit by a notify -> wait chain (blocks of one rank
            // enter together, launched by their host). A property of the partial order,
            // so every schedule of one Mazurkiewicz trace agrees (the partial-order
            // reduction relies on it).
            let (me, b) = self.who(p);
            let bl = self.code.blocks;
            let lanes = meaning::barrier_peers(self.p, bl, b);
            for q in 0..s.procs.len() {
                if q / bl == me || !lanes.contains(&(q % bl)) {
                    continue;
                }
                let qp = &s.procs[q];
                let entered = call == 0
                    || (qp.call >= call
                        && qp.entries.get(call as usize).copied().unwrap_or(0) != 0
                        && s.procs[p].clock[q] >= qp.entries[call as usize]);
                let entered_late = qp.call >= call;
                if !entered {
                    let f = Finding::new(
                        "sim::wrong-result",
                        if entered_late {
                            format!(
                                "barrier broken: {} leaves call {} although {}'s entry into it is not ordered before the exit by any notify -> wait chain",
                                self.proc_name(p),
                                fmt_call(call),
                                self.proc_name(q)
                            )
                        } else {
                            format!(
                                "barrier broken: {} leaves call {} before {} has entered it",
                                self.proc_name(p),
                                fmt_call(call),
                                self.proc_name(q)
                            )
                        },
                        None,
                    );
                    self.mark_last(out, "sim::wrong-result");
                    out.findings.push(f);
                    break;
                }
            }
        }
        s.procs[p].status = Status::CallDone;
        let (r, _) = self.who(p);
        let bl = self.code.blocks;
        if (0..bl).all(|b| s.procs[r * bl + b].status == Status::CallDone) {
            self.host_step(s, r, call, out);
        }
    }

    /// The host between two calls of rank `r`: reads (checks) the output of
    /// `call`, stages the next call's input, and launches every block again.
    fn host_step(&self, s: &mut State, r: usize, call: u16, out: &mut Outcome) {
        if let Some(v) = out.accesses.as_ref() {
            out.host_from = Some(v.len());
        }
        let bl = self.code.blocks;
        let b0 = r * bl;
        let mut j = s.procs[b0].clock.clone();
        for b in 1..bl {
            let c = s.procs[b0 + b].clock.clone();
            join(&mut j, &c);
        }
        s.procs[b0].clock = j.clone();
        self.consume(s, r, call, out);
        self.observe_outputs(s, r, call, out);
        let next = call + 1;
        if (next as usize) < self.calls {
            self.stage(s, r, next, out);
            let j = s.procs[b0].clock.clone();
            for b in 0..bl {
                self.start_call(s, b0 + b, next, &j, out);
            }
            for b in 0..bl {
                self.run_invisible(s, b0 + b, out);
            }
        } else {
            for b in 0..bl {
                s.procs[b0 + b].status = Status::Finished;
            }
        }
    }

    /// The sizes the collective's meaning ([`collc_spec::meaning`]) is evaluated at.
    fn shape(&self) -> meaning::Shape {
        let product = |d: &Vec<i64>| d.iter().product::<i64>().max(0) as u64;
        let mut shape = meaning::Shape {
            world: self.code.world,
            root: self.code.root.unwrap_or(0),
            window_len: Id::range(self.p.windows.len())
                .map(|w| self.code.window_len(w))
                .collect(),
            window_row: self
                .code
                .window_dims
                .iter()
                .map(|d| d.last().copied().unwrap_or(1).max(1) as u64)
                .collect(),
            signal_len: self.code.signal_dims.iter().map(product).collect(),
            array_len: self.code.array_dims.iter().map(product).collect(),
        };
        if let Some((ws, row)) = &self.code.a2av_row {
            for w in ws {
                shape.window_row[w.index()] = *row;
            }
        }
        shape
    }

    /// Windows staged with a call's input on rank `r` (the meaning's inputs).
    fn staged(&self, r: usize) -> Vec<WindowId> {
        meaning::inputs(self.p, &self.shape(), r)
    }

    /// Stages rank `r`'s input of `call`, as a write of its block 0 (whose clock is the rank's).
    pub(super) fn stage(&self, s: &mut State, r: usize, call: u16, out: &mut Outcome) {
        let b0 = r * self.code.blocks;
        for w in self.staged(r) {
            let len = self.code.window_len(w);
            let v = Val::one(Contrib {
                rank: r as u16,
                win: w.index() as u16,
                call,
                shift: 0,
            });
            let acc = Acc {
                proc: b0 as u16,
                epoch: Self::epoch(&mut s.procs[b0], b0),
                call,
                what: STAGE,
            };
            let m = self.mi(r, w, call);
            self.event(out, b0, call, None, || {
                (
                    EvKind::Stage,
                    format!(
                        "host stages call {}'s input into {}[0..{len}]",
                        fmt_call(call),
                        self.p.windows[w].name
                    ),
                )
            });
            self.access(&mut s.mem, m, 0, len, acc, true, &s.procs[b0].clock, out);
            mem_mut(&mut s.mem, m).vals = Segs::filled(len, v);
        }
    }

    /// Rank `r`'s outputs of `call` by the collective's meaning ([`collc_spec::meaning`]).
    fn meaning(&self, r: usize, call: u16) -> Result<Rc<meaning::RankOutputs>, String> {
        if let Some(m) = self.meanings.borrow().get(&(r, call)) {
            return m.clone();
        }
        let m = self.compute_meaning(r, call).map(Rc::new);
        self.meanings.borrow_mut().insert((r, call), m.clone());
        m
    }

    fn compute_meaning(&self, r: usize, call: u16) -> Result<meaning::RankOutputs, String> {
        let arrays = |q: usize, a: ArrayId, i: u64| -> Option<i64> {
            self.arrays
                .get(call as usize)?
                .get(q)?
                .get(a.index())?
                .get(i as usize)
                .copied()
        };
        match meaning::outputs(self.p, &self.shape(), &arrays).map_err(|e| e.0)? {
            meaning::Meaning::Data(mut per_rank) if r < per_rank.len() => {
                Ok(per_rank.swap_remove(r))
            }
            _ => Ok(meaning::RankOutputs::default()),
        }
    }

    /// Expected output of rank `r` for a call: (window, lo, hi, provenance of element `e` as
    /// the input element `e + shift` of each contribution). A `None` value is read (for race
    /// detection) but not compared: the rows of an all_to_all_v block past the count its
    /// sender published are don't-care.
    fn expected(&self, r: usize, call: u16) -> Result<Vec<Expected>, String> {
        let out = self.meaning(r, call)?;
        Ok(out
            .segments
            .iter()
            .map(|seg| {
                let want = seg.want.as_ref().map(|w| {
                    Val(w
                        .sources
                        .iter()
                        .map(|src| Contrib {
                            rank: src.rank as u16,
                            win: src.window.index() as u16,
                            call,
                            shift: src.offset,
                        })
                        .collect())
                });
                (seg.window, seg.lo, seg.hi, want)
            })
            .collect())
    }

    /// The block layout of an all_to_all_v protocol's `target` (and `input`).
    fn a2av_layout(&self) -> Result<meaning::Blocks, String> {
        meaning::a2av_blocks(self.p, &self.shape()).map_err(|e| e.0)
    }

    /// Checks rank `r`'s value-signal outputs (all_to_all_v's receive counts) after `call`:
    /// one message per wrong cell.
    fn a2av_counts(
        &self,
        s: &State,
        r: usize,
        call: u16,
        out: &mut Outcome,
    ) -> Result<Vec<String>, String> {
        let want = self.meaning(r, call)?;
        if want.cells.is_empty() {
            return Ok(Vec::new());
        }
        let lay = self.a2av_layout()?;
        let mut bad = Vec::new();
        for cell in &want.cells {
            let (j, sig) = (cell.index as usize, cell.signal);
            let c = self.cell_at(r, sig, j, call);
            if out.accesses.is_some() {
                out.cell_reads.push(c as u32);
            }
            let got = s.cells.get(c).map(|c| c.value).ok_or_else(|| {
                format!(
                    "all_to_all_v: rank {r} has no cell `{}[{j}]`",
                    self.p.signals[sig].name
                )
            })?;
            if got != cell.value {
                let (arr, sent) = cell.sent;
                bad.push(format!(
                    "wrong result: rank {r}'s {}[{j}] after call {} holds {got}; rank {} sent {} row{} (min of its {}[{r}] = {sent} and the {} rows per block)",
                    self.p.signals[sig].name,
                    fmt_call(call),
                    cell.from,
                    cell.value,
                    if cell.value == 1 { "" } else { "s" },
                    self.p.arrays[arr].name,
                    lay.rows
                ));
            }
        }
        Ok(bad)
    }

    fn consume(&self, s: &mut State, r: usize, call: u16, out: &mut Outcome) {
        let b0 = r * self.code.blocks;
        let exp = match self.expected(r, call) {
            Ok(e) => e,
            Err(m) => {
                out.findings
                    .push(Finding::new("sim::runtime-error", m, None));
                return;
            }
        };
        if self.p.semantics.is_barrier() {
            return;
        }
        let a2av = match &self.p.semantics {
            Semantics::AllToAllV { .. } => match self.a2av_layout() {
                Ok(l) => Some(l),
                Err(m) => {
                    out.findings
                        .push(Finding::new("sim::runtime-error", m, None));
                    return;
                }
            },
            _ => None,
        };
        self.event(out, b0, call, None, || {
            (
                EvKind::Consume { ok: true },
                format!("host reads call {}'s output", fmt_call(call)),
            )
        });
        let mut bad: Vec<String> = Vec::new();
        let mut hint = (None, None);
        for (w, lo, hi, want) in &exp {
            let l = Loc {
                rank: r,
                buf: BufferRef::Window(*w),
                lo: *lo,
                hi: *hi,
            };
            let got = self.read(s, b0, &l, CONSUME, out);
            let mut pos = *lo;
            for (n, v) in got {
                if let Some(want) = want {
                    if bad.is_empty() && v != *want {
                        hint = self.wrong_result_hint(s, r, *w, pos, pos + n, call, &v);
                        let mut msg = self.mismatch(r, *w, pos, pos + n, &v, want, call);
                        if let Some(lay) = &a2av {
                            let j = pos / lay.block;
                            let (a, b) = (pos % lay.block, (pos + n - 1) % lay.block);
                            let sent = (*hi - j * lay.block) / lay.row;
                            let _ = write!(
                                msg,
                                " (block {j}, row{} {}; rank {j} sent {sent} row{} of its block {r})",
                                if a / lay.row == b / lay.row { "" } else { "s" },
                                if a / lay.row == b / lay.row {
                                    format!("{}", a / lay.row)
                                } else {
                                    format!("{}..={}", a / lay.row, b / lay.row)
                                },
                                if sent == 1 { "" } else { "s" },
                            );
                        }
                        bad.push(msg);
                    }
                }
                pos += n;
            }
        }
        match self.a2av_counts(s, r, call, out) {
            Ok(m) => bad.extend(m.into_iter().take(1)),
            Err(m) => out
                .findings
                .push(Finding::new("sim::runtime-error", m, None)),
        }
        if !bad.is_empty() {
            self.event(out, b0, call, None, || {
                (
                    EvKind::Consume { ok: false },
                    format!("call {}'s output is wrong", fmt_call(call)),
                )
            });
            self.mark_last(out, "sim::wrong-result");
            for msg in bad {
                let mut f = Finding::new("sim::wrong-result", msg, hint.0);
                f.help.clone_from(&hint.1);
                out.findings.push(f);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mismatch(
        &self,
        r: usize,
        w: WindowId,
        lo: u64,
        hi: u64,
        got: &Val,
        want: &Val,
        call: u16,
    ) -> String {
        let ts = self.code.tile_size.max(1) as u64;
        let tiles = if (hi - 1) / ts == lo / ts {
            format!(" (tile {})", lo / ts)
        } else {
            format!(" (tiles {}..={})", lo / ts, (hi - 1) / ts)
        };
        let mut missing = want.0.clone();
        let mut extra = Vec::new();
        for c in &got.0 {
            if let Some(i) = missing.iter().position(|m| m == c) {
                missing.remove(i);
            } else {
                extra.push(*c);
            }
        }
        let desc = |c: &Contrib| -> String {
            match c.win {
                crate::value::GARBAGE => format!(
                    "uninitialised scratch of rank {} (call {})",
                    c.rank,
                    fmt_call(c.call)
                ),
                INITIAL => format!(
                    "rank {}'s window content from before the first call",
                    c.rank
                ),
                crate::value::FOREIGN_OP => format!(
                    "a `{}` reduction (call {}), which this {} does not compute",
                    crate::value::OPS
                        .get(c.rank as usize)
                        .map_or("?", |o| o.as_str()),
                    fmt_call(c.call),
                    self.p.semantics.kind()
                ),
                w => {
                    let a = lo as i64 + c.shift;
                    format!(
                        "rank {}'s contribution of call {} ({}[{}..{}])",
                        c.rank,
                        fmt_call(c.call),
                        self.p.windows[w as usize].name,
                        a,
                        a + (hi - lo) as i64
                    )
                }
            }
        };
        let mut msg = format!(
            "wrong result: rank {r}'s output {}[{lo}..{hi}]{tiles} after call {}",
            self.p.windows[w].name,
            fmt_call(call)
        );
        if !missing.is_empty() {
            let m: Vec<String> = missing.iter().map(desc).collect();
            let _ = write!(msg, " lacks {}", m.join(", "));
        }
        if !extra.is_empty() {
            let e: Vec<String> = extra.iter().map(desc).collect();
            let _ = write!(
                msg,
                "{} holds {}",
                if missing.is_empty() { "" } else { ";" },
                e.join(", ")
            );
        }
        msg
    }
}
