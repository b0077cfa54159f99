//! Data movement: resolving a region to a window instance, and the reads,
//! writes and reductions of a put, copy or reduce, with the race checks of
//! every access and the buffered writes of relaxed mode and their draining.

use super::footprint::DataAcc;
use super::state::{
    mem_mut, Acc, InFlight, Memory, Outcome, Pending, Shared, State, WinMem, ACCUM, CONSUME, STAGE,
};
use super::{fmt_call, Machine};
use crate::code::CRegion;
use crate::report::{EvKind, Finding};
use crate::value::{relocate, zip, Val};
use collc_spec::ir::*;

pub(super) struct Loc {
    pub(super) rank: usize,
    pub(super) buf: BufferRef,
    pub(super) lo: u64,
    pub(super) hi: u64,
}

impl Machine<'_> {
    fn region(&self, s: &State, p: usize, reg: &CRegion, rank: usize) -> Result<Loc, String> {
        let ctx = self.ctx(s, p);
        let dims = match reg.buffer {
            BufferRef::Window(w) => &self.code.window_dims[w.index()],
            BufferRef::Tile(t) => &self.code.tile_dims[t.index()],
        };
        let name = self.p.buffer_name(reg.buffer);
        let mut row = 0i64;
        for (k, x) in reg.index.iter().enumerate() {
            let i = ctx.eval(x)?;
            if i < 0 || i >= dims[k] {
                return Err(format!(
                    "index {i} is outside `{name}`'s dimension {k} of size {}",
                    dims[k]
                ));
            }
            row = row * dims[k] + i;
        }
        let last = *dims.last().unwrap_or(&0);
        let (lo, hi) = (ctx.eval(&reg.lo)?, ctx.eval(&reg.hi)?);
        if lo < 0 || hi < lo || hi > last {
            return Err(format!(
                "slice {lo} .. {hi} of `{name}` is outside 0 .. {last}"
            ));
        }
        Ok(Loc {
            rank,
            buf: reg.buffer,
            lo: (row * last + lo) as u64,
            hi: (row * last + hi) as u64,
        })
    }

    fn loc_desc(&self, l: &Loc) -> String {
        let name = self.p.buffer_name(l.buf);
        match l.buf {
            BufferRef::Window(_) => format!("rank {}'s {name}[{}..{}]", l.rank, l.lo, l.hi),
            BufferRef::Tile(_) => format!("{name}[{}..{}]", l.lo, l.hi),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn data_op(
        &self,
        s: &mut State,
        p: usize,
        dst: &CRegion,
        dst_rank: usize,
        src: &CRegion,
        src_rank: usize,
        op: Option<ReduceOp>,
        stmt: u32,
        name: &str,
        out: &mut Outcome,
    ) -> Result<(), String> {
        let d = self.region(s, p, dst, dst_rank)?;
        let sr = self.region(s, p, src, src_rank)?;
        if d.hi - d.lo != sr.hi - sr.lo {
            return Err(format!(
                "`{name}` moves {} elements into a region of {}",
                sr.hi - sr.lo,
                d.hi - d.lo
            ));
        }
        let call = s.procs[p].call;
        // Relaxed: a read of another rank's window is in flight until a fence.
        let remote = sr.rank != self.who(p).0 && matches!(sr.buf, BufferRef::Window(_));
        let in_flight = self.memory == Memory::Relaxed && remote;
        self.event(out, p, call, Some(stmt), || {
            let then = if in_flight {
                " (issued; in flight until a fence or the end of the call)"
            } else {
                ""
            };
            (
                EvKind::Data,
                format!(
                    "{name} {} <- {}{then}",
                    self.loc_desc(&d),
                    self.loc_desc(&sr)
                ),
            )
        });
        if in_flight {
            self.issue_read(s, p, &d, &sr, op, stmt);
            return Ok(());
        }
        let pieces = self.read(s, p, &sr, stmt, out);
        let mut pieces = relocate(pieces, sr.lo, d.lo);
        if let Some(op) = op {
            let cur = self.read(s, p, &d, stmt, out);
            pieces = combine(&cur, &pieces, op, header_op(self.p), call);
        }
        self.write(s, p, &d, pieces, stmt, out);
        Ok(())
    }

    /// A reduction into `dst` on rank `to` (`reduce OP DST @ RANK <- SRC`), atomic per
    /// element. Relaxed, with a window source, it is in flight until a fence like a remote
    /// read (it reads its source and combines when it completes); else it applies at once.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn accumulate(
        &self,
        s: &mut State,
        p: usize,
        dst: &CRegion,
        to: usize,
        src: &CRegion,
        op: ReduceOp,
        stmt: u32,
        out: &mut Outcome,
    ) -> Result<(), String> {
        let d = self.region(s, p, dst, to)?;
        let sr = self.region(s, p, src, self.who(p).0)?;
        if d.hi - d.lo != sr.hi - sr.lo {
            return Err(format!(
                "`reduce` moves {} elements into a region of {}",
                sr.hi - sr.lo,
                d.hi - d.lo
            ));
        }
        if !matches!(d.buf, BufferRef::Window(_)) {
            return Err("`reduce ... @` needs a window destination".into());
        }
        let call = s.procs[p].call;
        let relaxed = self.memory == Memory::Relaxed && matches!(sr.buf, BufferRef::Window(_));
        self.event(out, p, call, Some(stmt), || {
            let then = if relaxed {
                " (issued; in flight until a fence or the end of the call)"
            } else {
                ""
            };
            (
                EvKind::Data,
                format!(
                    "reduce {} {} <- {} (atomic){then}",
                    op.as_str(),
                    self.loc_desc(&d),
                    self.loc_desc(&sr)
                ),
            )
        });
        if relaxed {
            self.issue_read(s, p, &d, &sr, Some(op), stmt);
            return Ok(());
        }
        let pieces = self.read(s, p, &sr, stmt, out);
        self.forward(s, p, &d, out);
        self.apply_accumulate(s, p, &d, relocate(pieces, sr.lo, d.lo), op, stmt, out);
        Ok(())
    }

    /// Combines `pieces` into window region `d` atomically: one accumulation access (see
    /// [`Self::access`]), no plain read of `d`.
    #[allow(clippy::too_many_arguments)]
    fn apply_accumulate(
        &self,
        s: &mut State,
        p: usize,
        d: &Loc,
        pieces: Vec<(u64, Val)>,
        op: ReduceOp,
        stmt: u32,
        out: &mut Outcome,
    ) {
        let BufferRef::Window(w) = d.buf else {
            return;
        };
        let call = s.procs[p].call;
        let acc = Acc {
            proc: p as u16,
            epoch: Self::epoch(&mut s.procs[p], p),
            call,
            what: stmt | ACCUM,
        };
        let m = self.mi(d.rank, w, call);
        self.check_fresh_read(s, p, d, stmt, out);
        let clock = &s.procs[p].clock;
        self.access(&mut s.mem, m, d.lo, d.hi, acc, false, clock, out);
        let cur = s.mem[m].vals.read(d.lo, d.hi);
        let pieces = combine(&cur, &pieces, op, header_op(self.p), call);
        mem_mut(&mut s.mem, m).vals.write(d.lo, &pieces);
    }

    /// Relaxed: queues a remote read behind the process's buffered writes; it reads its
    /// source when it completes ([`Self::drain_one`]).
    fn issue_read(
        &self,
        s: &mut State,
        p: usize,
        d: &Loc,
        sr: &Loc,
        op: Option<ReduceOp>,
        stmt: u32,
    ) {
        let (tile, win) = match d.buf {
            BufferRef::Window(w) => (false, w.index()),
            BufferRef::Tile(t) => (true, t.index()),
        };
        let BufferRef::Window(src) = sr.buf else {
            return;
        };
        s.procs[p].pending.push(Pending {
            rank: d.rank as u16,
            win: win as u16,
            lo: d.lo,
            pieces: Vec::new(),
            stmt,
            read: Some(InFlight {
                rank: sr.rank as u16,
                win: src.index() as u16,
                lo: sr.lo,
                len: sr.hi - sr.lo,
                op,
                tile,
            }),
        });
    }

    /// Relaxed: a process sees its own pending writes (buffered writes, reads in
    /// flight): those to `l` become visible first, with every older one.
    fn forward(&self, s: &mut State, p: usize, l: &Loc, out: &mut Outcome) {
        if self.memory != Memory::Relaxed {
            return;
        }
        let (tile, w) = match l.buf {
            BufferRef::Window(w) => (false, w.index()),
            BufferRef::Tile(t) => (true, t.index()),
        };
        let last = s.procs[p]
            .pending
            .iter()
            .rposition(|x| x.writes(tile, l.rank, w, l.lo, l.hi));
        if let Some(last) = last {
            for _ in 0..=last {
                self.drain_one(s, p, out);
            }
        }
    }

    pub(super) fn read(
        &self,
        s: &mut State,
        p: usize,
        l: &Loc,
        stmt: u32,
        out: &mut Outcome,
    ) -> Vec<(u64, Val)> {
        self.forward(s, p, l, out);
        self.read_visible(s, p, l, stmt, out)
    }

    /// A read of what is visible now (no forwarding of the process's pending writes).
    fn read_visible(
        &self,
        s: &mut State,
        p: usize,
        l: &Loc,
        stmt: u32,
        out: &mut Outcome,
    ) -> Vec<(u64, Val)> {
        match l.buf {
            BufferRef::Tile(t) => s.procs[p].tiles.get(t.index()).read(l.lo, l.hi),
            BufferRef::Window(w) => {
                let acc = Acc {
                    proc: p as u16,
                    epoch: Self::epoch(&mut s.procs[p], p),
                    call: s.procs[p].call,
                    what: stmt,
                };
                let m = self.mi(l.rank, w, s.procs[p].call);
                self.check_fresh_read(s, p, l, stmt, out);
                let clock = &s.procs[p].clock;
                self.access(&mut s.mem, m, l.lo, l.hi, acc, false, clock, out);
                s.mem[m].vals.read(l.lo, l.hi)
            }
        }
    }

    fn write(
        &self,
        s: &mut State,
        p: usize,
        l: &Loc,
        pieces: Vec<(u64, Val)>,
        stmt: u32,
        out: &mut Outcome,
    ) {
        match l.buf {
            BufferRef::Tile(t) => {
                // A read in flight into the tile lands first (program order).
                self.forward(s, p, l, out);
                s.procs[p].tiles.get_mut(t.index()).write(l.lo, &pieces)
            }
            BufferRef::Window(w) => {
                if self.memory == Memory::Relaxed {
                    s.procs[p].pending.push(Pending {
                        rank: l.rank as u16,
                        win: w.index() as u16,
                        lo: l.lo,
                        pieces,
                        stmt,
                        read: None,
                    });
                } else {
                    self.apply_write(s, p, l.rank, w, l.lo, pieces, stmt, out);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_write(
        &self,
        s: &mut State,
        p: usize,
        rank: usize,
        w: WindowId,
        lo: u64,
        pieces: Vec<(u64, Val)>,
        stmt: u32,
        out: &mut Outcome,
    ) {
        let hi = lo + pieces.iter().map(|x| x.0).sum::<u64>();
        let acc = Acc {
            proc: p as u16,
            epoch: Self::epoch(&mut s.procs[p], p),
            call: s.procs[p].call,
            what: stmt,
        };
        let m = self.mi(rank, w, s.procs[p].call);
        self.access(&mut s.mem, m, lo, hi, acc, true, &s.procs[p].clock, out);
        mem_mut(&mut s.mem, m).vals.write(lo, &pieces);
    }

    /// Relaxed: the oldest pending entry of process `p` completes: a buffered write
    /// becomes visible, a read in flight reads its source now and writes its destination.
    pub(super) fn drain_one(&self, s: &mut State, p: usize, out: &mut Outcome) {
        if s.procs[p].pending.is_empty() {
            return;
        }
        let w = s.procs[p].pending.remove(0);
        if let Some(r) = w.read {
            return self.complete_read(s, p, &w, r, out);
        }
        let call = s.procs[p].call;
        let n = w.len();
        self.event(out, p, call, Some(w.stmt), || {
            (
                EvKind::Drain,
                format!(
                    "buffered write to rank {}'s {}[{}..{}] becomes visible",
                    w.rank,
                    self.p.windows[WindowId::new(w.win as usize)].name,
                    w.lo,
                    w.lo + n
                ),
            )
        });
        self.apply_write(
            s,
            p,
            w.rank as usize,
            WindowId::new(w.win as usize),
            w.lo,
            w.pieces,
            w.stmt,
            out,
        );
    }

    /// Relaxed: a read in flight completes: it reads its source as it is now (with the
    /// race check of that moment), then writes its destination, visible at once.
    fn complete_read(&self, s: &mut State, p: usize, w: &Pending, r: InFlight, out: &mut Outcome) {
        let src = Loc {
            rank: r.rank as usize,
            buf: BufferRef::Window(WindowId::new(r.win as usize)),
            lo: r.lo,
            hi: r.lo + r.len,
        };
        let d = Loc {
            rank: w.rank as usize,
            buf: if r.tile {
                BufferRef::Tile(TileId::new(w.win as usize))
            } else {
                BufferRef::Window(WindowId::new(w.win as usize))
            },
            lo: w.lo,
            hi: w.lo + r.len,
        };
        let call = s.procs[p].call;
        self.event(out, p, call, Some(w.stmt), || {
            (
                EvKind::Drain,
                format!(
                    "the read of {} into {} completes",
                    self.loc_desc(&src),
                    self.loc_desc(&d)
                ),
            )
        });
        let pieces = self.read_visible(s, p, &src, w.stmt, out);
        let mut pieces = relocate(pieces, src.lo, d.lo);
        if let (Some(op), Some(_)) = (r.op, self.accumulate_op(w.stmt)) {
            return self.apply_accumulate(s, p, &d, pieces, op, w.stmt, out);
        }
        if let Some(op) = r.op {
            let cur = self.read_visible(s, p, &d, w.stmt, out);
            pieces = combine(&cur, &pieces, op, header_op(self.p), call);
        }
        match d.buf {
            BufferRef::Tile(t) => s.procs[p].tiles.get_mut(t.index()).write(d.lo, &pieces),
            BufferRef::Window(win) => {
                self.apply_write(s, p, d.rank, win, d.lo, pieces, w.stmt, out)
            }
        }
    }

    /// The operator of statement `stmt` when it is a reduction into a peer's window.
    fn accumulate_op(&self, stmt: u32) -> Option<ReduceOp> {
        self.code
            .stmts
            .get(stmt as usize)
            .and_then(|i| i.accumulate)
    }

    /// The operator of an accumulation access (`Acc::what` marked [`ACCUM`]: the combining
    /// access of a reduction into a peer's window, not the read of its source).
    fn accumulation(&self, what: u32) -> Option<ReduceOp> {
        if what >= CONSUME || what & ACCUM == 0 {
            return None;
        }
        self.accumulate_op(what & !ACCUM)
    }

    /// Race check and access recording over `lo..hi` of window memory `m`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn access(
        &self,
        mem: &mut Shared<WinMem>,
        m: usize,
        lo: u64,
        hi: u64,
        acc: Acc,
        write: bool,
        clock: &[u32],
        out: &mut Outcome,
    ) {
        if let Some(v) = out.accesses.as_mut() {
            v.push(DataAcc {
                mem: m as u32,
                lo,
                hi,
                write,
            });
        }
        let mut race: Option<(Acc, bool, u64, u64)> = None;
        let mut pos = lo;
        // Whether recording the access changes nothing (the window then stays shared).
        let mut same = true;
        for (n, rec) in mem[m].acc.pieces(lo, hi) {
            same &= if write {
                rec.write == Some(acc) && rec.reads.is_empty()
            } else {
                rec.reads.contains(&acc)
            };
            if race.is_none() {
                let unordered = |o: &Acc| o.proc != acc.proc && clock[o.proc as usize] < o.epoch;
                // Accumulations are recorded with the reads: one races with an unordered
                // plain read, and with an accumulation of another operator.
                let mine = self.accumulation(acc.what);
                let conflicts = |r: &&Acc| write || mine != self.accumulation(r.what);
                if let Some(w) = rec.write.filter(unordered) {
                    race = Some((w, true, pos, pos + n));
                } else if let Some(r) = rec.reads.iter().filter(conflicts).find(|r| unordered(r)) {
                    race = Some((*r, false, pos, pos + n));
                }
            }
            pos += n;
        }
        if !same {
            mem_mut(mem, m).acc.update(lo, hi, |rec| {
                if write {
                    rec.write = Some(acc);
                    rec.reads.clear();
                } else {
                    match rec.reads.iter_mut().find(|r| r.proc == acc.proc) {
                        Some(r) => *r = acc,
                        None => {
                            rec.reads.push(acc);
                            rec.reads.sort();
                        }
                    }
                }
            });
        }
        if let Some((other, other_write, a, b)) = race {
            let (rank, w) = self.mem_owner(m);
            let win = &self.p.windows[w].name;
            let desc = |x: &Acc, is_write: bool| {
                format!(
                    "{}'s {} ({}, call {})",
                    self.proc_name(x.proc as usize),
                    self.stmt_desc(x.what),
                    match (is_write, self.accumulation(x.what)) {
                        (true, _) => "write",
                        (false, Some(_)) => "atomic accumulation",
                        (false, None) => "read",
                    },
                    fmt_call(x.call)
                )
            };
            let msg = format!(
                "data race on rank {rank}'s {win}[{a}..{b}]: {} is not ordered after {} by any notify -> wait chain",
                desc(&acc, write),
                desc(&other, other_write)
            );
            let span = self.stmt_span(acc.what).or(self.stmt_span(other.what));
            let mut f = Finding::new("sim::data-race", msg, span);
            if let Some(sp) = self.stmt_span(other.what) {
                f.related.push(sp);
            }
            f.help = self.race_help(w, (acc.call, other.call));
            if acc.what == STAGE || other.what == STAGE {
                f.notes.push("the owner rewrites this window with the next call's payload while a peer may still access this call's data".into());
            } else if acc.what == CONSUME || other.what == CONSUME {
                f.notes.push("a fast peer writes the next call's data into this window before its owner has consumed this call's result".into());
            }
            self.mark_last(out, "sim::data-race");
            out.findings.push(f);
        }
    }
}

/// `cur OP new`, element-wise (a set union for max/min, a multiset union otherwise). When
/// the collective reduces with another operator (`header`), every element is marked with
/// `op` ([`crate::value::FOREIGN_OP`]): the result check then reports it as wrong.
fn combine(
    cur: &[(u64, Val)],
    new: &[(u64, Val)],
    op: ReduceOp,
    header: Option<ReduceOp>,
    call: u16,
) -> Vec<(u64, Val)> {
    let idem = matches!(op, ReduceOp::Max | ReduceOp::Min);
    let foreign = header
        .filter(|h| *h != op)
        .and_then(|_| crate::value::OPS.iter().position(|o| *o == op));
    zip(cur, new)
        .into_iter()
        .map(|(n, a, b)| {
            let v = a.combine(&b, idem);
            match foreign {
                Some(k) => (n, v.foreign_op(k, call)),
                None => (n, v),
            }
        })
        .collect()
}

/// The operator the collective reduces with (`allreduce(sum, ...)`), if it has one.
pub(super) fn header_op(p: &Protocol) -> Option<ReduceOp> {
    match &p.semantics {
        Semantics::Allreduce { op, .. }
        | Semantics::ReduceScatter { op, .. }
        | Semantics::Reduce { op, .. } => Some(*op),
        _ => None,
    }
}
