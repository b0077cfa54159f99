//! Signals: the notifies and waits of a process, with credit provenance,
//! value-cell origins, stale reads of a cached cell (relaxed), sticky polling,
//! and the barrier checks a passing wait makes.

use super::credit;
use super::state::{
    cell_mut, join, Cell, Memory, OldCell, Origin, Outcome, PendingWait, State, Status, Unit,
    UnitKey,
};
use super::{fmt_call, Machine};
use crate::code::Instr;
use crate::report::{EvKind, Finding};
use collc_spec::ir::*;
use std::rc::Rc;

impl Machine<'_> {
    /// One credit unit as findings name it: `rank 1's credit +1 of call 2 (`stmt`)`.
    fn credit_text(&self, u: &Unit) -> String {
        format!(
            "{}'s credit {:+} of call {} (`{}`)",
            self.proc_name(u.writer as usize),
            u.amount,
            fmt_call(u.call),
            self.code.stmts[u.stmt as usize].text
        )
    }

    /// The wait a running process is blocked at or about to pass: (cell, cmp, threshold)
    /// (resolved once per version of the process, [`Proc::wait`](super::state::Proc)).
    pub(super) fn pending_wait(&self, s: &State, p: usize) -> PendingWait {
        s.procs[p].wait.get(|| self.resolve_wait(s, p)).clone()
    }

    fn resolve_wait(&self, s: &State, p: usize) -> PendingWait {
        let pr = &s.procs[p];
        if pr.status != Status::Run {
            return None;
        }
        if let Instr::Wait {
            signal,
            index,
            cmp,
            threshold,
            ..
        } = &self.code.instrs[pr.pc as usize]
        {
            let ctx = self.ctx(s, p);
            let (r, _) = self.who(p);
            Some((|| {
                let c = self.cell_index(r, *signal, index, &ctx, s.procs[p].call)?;
                let k = ctx.eval(threshold)?;
                Ok((c, *cmp, k))
            })())
        } else {
            None
        }
    }

    fn cached_floor(&self, s: &State, p: usize, cell: usize) -> Option<u32> {
        s.procs[p]
            .cache
            .iter()
            .find(|(c, _)| *c as usize == cell)
            .map(|x| x.1)
    }

    /// The oldest cached stale version (not the current one) a wait may pass on.
    pub(super) fn stale_choice(
        &self,
        s: &State,
        p: usize,
        cell: usize,
        cmp: CmpOp,
        k: i64,
    ) -> Option<usize> {
        let floor = self.cached_floor(s, p, cell)?;
        let c = &s.cells[cell];
        c.history.iter().position(|h| {
            h.version >= floor && self.wait_holds(cell, cmp, h.value, k) && h.value != c.value
        })
    }

    /// Sticky polling: the blocked wait of `p` caches the cell's current (failing) value
    /// and keeps re-reading it.
    pub(super) fn pin(&self, s: &mut State, p: usize, out: &mut Outcome) {
        let Some(Ok((cell, cmp, k))) = self.pending_wait(s, p) else {
            return;
        };
        let value = self.held(cell, s.cells[cell].value);
        let pr = &mut s.procs[p];
        pr.pin = Some(value);
        let call = pr.call;
        let stmt = self.instr_stmt(pr.pc);
        self.event(out, p, call, stmt, || {
            (
                EvKind::WaitPinned {
                    cell: self.cell_name(cell),
                    threshold: k,
                    value,
                },
                format!(
                    "{} {} {k} polls and caches {value}; the poll keeps re-reading the cached line (sticky polling)",
                    self.cell_name(cell),
                    cmp.as_str()
                ),
            )
        });
    }

    /// The target rank, cell and value of the notify at the process's pc.
    pub(super) fn notify_args(&self, s: &State, p: usize) -> Result<(usize, usize, i64), String> {
        let Instr::Notify {
            signal,
            index,
            target,
            value,
            ..
        } = &self.code.instrs[s.procs[p].pc as usize]
        else {
            return Err("internal: no notify at the program counter".to_string());
        };
        let (r, _) = self.who(p);
        let ctx = self.ctx(s, p);
        let to = match target {
            Some(t) => self.rank(ctx.eval(t)?)?,
            None => r,
        };
        let cell = self.cell_index(to, *signal, index, &ctx, s.procs[p].call)?;
        let v = ctx.eval(value)?;
        if v < i32::MIN as i64 || v > i32::MAX as i64 {
            return Err(format!("notify value {v} does not fit an int32 cell"));
        }
        Ok((to, cell, v))
    }

    pub(super) fn rank(&self, x: i64) -> Result<usize, String> {
        if x < 0 || x as usize >= self.code.world {
            Err(format!("rank {x} is outside 0..{}", self.code.world))
        } else {
            Ok(x as usize)
        }
    }

    pub(super) fn notify(&self, s: &mut State, p: usize, n: &Notice, out: &mut Outcome) {
        let (cell, v) = (n.cell, n.v);
        let call = s.procs[p].call;
        let keep_history = self.memory == Memory::Relaxed
            && s.procs
                .iter()
                .any(|q| q.cache.iter().any(|(c, _)| *c as usize == cell));
        let before = s.cells[cell].value;
        let after = match n.op {
            NotifyOp::AtomicAdd => before.checked_add(v),
            NotifyOp::Set => Some(v),
        };
        // In the wrap-around mode a monotonic cell's int32 value wraps as the hardware's
        // does (its state keeps the credits' sum, see `wrap`).
        let fits = |a: &i64| self.wraps(cell) || (*a >= i32::MIN as i64 && *a <= i32::MAX as i64);
        let Some(after) = after.filter(fits) else {
            self.fault(
                s,
                p,
                Some(n.stmt),
                format!("{} overflows int32", self.cell_name(cell)),
                out,
            );
            return;
        };
        if keep_history {
            let c = &s.cells[cell];
            let old = OldCell {
                version: c.version,
                value: c.value,
                units: c.units.clone(),
                clock: c.clock.clone(),
                origin: c.origin,
            };
            cell_mut(&mut s.cells, cell).history.push(old);
        }
        let lost = self.write_cell(s, p, n, after);
        let pr = &mut s.procs[p];
        pr.seq += 1;
        pr.bump = true;
        if self.memory == Memory::Relaxed {
            let ver = s.cells[cell].version;
            if let Some(e) = s.procs[p]
                .cache
                .iter_mut()
                .find(|(c, _)| *c as usize == cell)
            {
                e.1 = ver;
            }
            self.prune_history(s, cell);
        }
        let (before, after) = (self.held(cell, before), self.held(cell, after));
        self.notify_event(p, call, n, (before, after), out);
        if !lost.is_empty() {
            self.lost_credit(p, call, n, &lost, out);
        }
    }

    /// Writes `after` into the notified cell with the notifier's clock, and its
    /// origin (a value cell) or credit unit (a credit cell): the credits a `Set`
    /// erases before any wait counted them are returned.
    fn write_cell(&self, s: &mut State, p: usize, n: &Notice, after: i64) -> Vec<Unit> {
        let (call, seq) = (s.procs[p].call, s.procs[p].seq);
        let (stmt, v) = (n.stmt, n.v);
        let mut lost = Vec::new();
        let pclock = &s.procs[p].clock;
        let c = cell_mut(&mut s.cells, n.cell);
        c.value = after;
        if self.memory == Memory::Relaxed {
            c.version += 1;
        }
        match n.op {
            NotifyOp::AtomicAdd => join(&mut c.clock, pclock),
            NotifyOp::Set => c.clock.clone_from(pclock),
        }
        if !self.is_credit(n.cell) {
            c.origin = Some(Origin {
                call,
                writer: p as u16,
                stmt,
            });
            return lost;
        }
        let clock = self.clocks.borrow_mut().intern(pclock);
        let unit = |amount| Unit {
            call,
            writer: p as u16,
            seq,
            stmt,
            clock,
            amount,
            counted: 0,
        };
        match n.op {
            NotifyOp::AtomicAdd if v > 0 => credit::add(&mut c.units, unit(v)),
            NotifyOp::AtomicAdd => credit::take_back(&mut c.units, unit(v)),
            NotifyOp::Set => {
                for u in c.units.drain(..) {
                    if u.amount > 0 && (u.call > call || (u.call == call && u.counted == 0)) {
                        lost.push(u);
                    }
                }
                if v != 0 {
                    c.units.push(unit(v));
                }
            }
        }
        lost
    }

    /// The event of a notify that moved its cell from `before` to `after`.
    fn notify_event(
        &self,
        p: usize,
        call: u16,
        n: &Notice,
        (before, after): (i64, i64),
        out: &mut Outcome,
    ) {
        let (cell, v) = (n.cell, n.v);
        self.event(out, p, call, Some(n.stmt), || {
            (
                EvKind::Notify {
                    to: n.to as u32,
                    cell: self.cell_name(cell),
                    before,
                    after,
                },
                format!(
                    "{} {}: {before} -> {after}",
                    self.cell_name(cell),
                    match n.op {
                        NotifyOp::Set => format!("= {v}"),
                        NotifyOp::AtomicAdd if v < 0 => format!("-= {}", -v),
                        NotifyOp::AtomicAdd => format!("+= {v}"),
                    }
                ),
            )
        });
    }

    /// The finding of a `Set` that erased credits no wait had counted (`lost`).
    fn lost_credit(&self, p: usize, call: u16, n: &Notice, lost: &[Unit], out: &mut Outcome) {
        let what: Vec<String> = lost.iter().map(|u| self.credit_text(u)).collect();
        let f = Finding::new(
            "sim::lost-credit",
            format!(
                "{} (call {}) sets {} to {} and erases {} no wait has counted yet",
                self.proc_name(p),
                fmt_call(call),
                self.cell_name(n.cell),
                n.v,
                what.join(" and ")
            ),
            self.stmt_span(n.stmt),
        )
        .note("a credit erased by `Set` is never sent again, so the wait that needs it can hang; reset with `-= N` (AtomicAdd), which commutes with early credits");
        self.mark_last(out, "sim::lost-credit");
        out.findings.push(f);
    }

    pub(super) fn prune_history(&self, s: &mut State, cell: usize) {
        let min_floor = s
            .procs
            .iter()
            .flat_map(|q| q.cache.iter())
            .filter(|(c, _)| *c as usize == cell)
            .map(|x| x.1)
            .min();
        let keep = |h: &OldCell| min_floor.is_some_and(|f| h.version >= f);
        if s.cells[cell].history.iter().all(keep) {
            return;
        }
        cell_mut(&mut s.cells, cell).history.retain(keep);
    }

    pub(super) fn wait_pass(&self, s: &mut State, p: usize, w: &Pass, out: &mut Outcome) {
        let (cell, call) = (w.cell, s.procs[p].call);
        // The version read, shared (not copied): dropped before the cell is written.
        let src: Rc<Cell> = Rc::clone(&s.cells[cell]);
        let hist = if w.stale {
            self.stale_choice(s, p, cell, w.cmp, w.k)
        } else {
            None
        };
        let (value, units, clock, version, origin) = match hist {
            Some(i) => {
                let h = &src.history[i];
                (h.value, &h.units[..], &h.clock, h.version, h.origin)
            }
            None => (
                src.value,
                &src.units[..],
                &src.clock,
                src.version,
                src.origin,
            ),
        };
        // In the wrap-around mode the state keeps the credits of the simulated calls: the
        // wait needs its threshold less the cell's start value, and a pass the int32 wrap
        // alone allows is a finding of its own.
        let wrapped = self.wrapped_pass(p, call, cell, w.cmp, w.k, value, w.stmt);
        let seen = Seen {
            p,
            call,
            value: self.held(cell, value),
            hist,
        };
        // Credit provenance: the shortest prefix (oldest call first) reaching the threshold.
        let base = self.base(cell);
        let need = match w.cmp {
            CmpOp::Ge | CmpOp::Eq => Some(w.k - base),
            CmpOp::Gt => Some(w.k + 1 - base),
            _ => None,
        };
        let mut stale_findings: Vec<Finding> = wrapped.into_iter().collect();
        // What the wait acquires: on a credit cell, the clocks of the credit units it
        // counts (the notifies it synchronises with); otherwise the cell's release clock.
        // (Joined into the waiter's clock as found: joins commute.)
        let mut acquired_units = false;
        // The keys of the units the wait counts, marked once `src` is dropped.
        let mut mark: Option<(u128, Mark)> = None;
        if let (true, Some(need)) = (self.is_credit(cell) && stale_findings.is_empty(), need) {
            acquired_units = true;
            if need > 0 {
                let (finding, m) = self.count_credits(s, w, &seen, units, need);
                stale_findings.extend(finding);
                mark = m;
            }
        }
        if !acquired_units {
            join(&mut s.procs[p].clock, clock);
        }
        drop(src);
        if let Some((bit, m)) = mark {
            mark_counted(cell_mut(&mut s.cells, cell), bit, m);
        }
        if self.memory == Memory::Relaxed {
            self.cache_read(s, p, cell, version);
        }
        self.pass_event(s, w, &seen, out);
        for f in stale_findings {
            self.mark_last(out, "sim::stale-pass");
            out.findings.push(f);
        }
        if !self.is_credit(cell) {
            let reader = || {
                format!(
                    "{} (call {}) passes `{}` on",
                    self.proc_name(p),
                    fmt_call(call),
                    self.code.stmts[w.stmt as usize].text
                )
            };
            self.observe_value(cell, seen.value, origin, call, &reader, Some(w.stmt), out);
        }
    }

    /// The credits a passing wait counts (of `units`, the version it read; `need` of
    /// them reach its threshold): their clocks join the waiter's, a stale pass is a
    /// finding, and the units not yet counted by the waiter are returned to be marked.
    fn count_credits(
        &self,
        s: &mut State,
        w: &Pass,
        seen: &Seen,
        units: &[Unit],
        need: i64,
    ) -> (Option<Finding>, Option<(u128, Mark)>) {
        let (p, call) = (seen.p, seen.call);
        // The shortest prefix reaching the threshold, `units[..n]`.
        let mut sum = 0i64;
        let mut n = 0;
        for u in units {
            sum += u.amount;
            n += 1;
            if sum >= need {
                break;
            }
        }
        let bit = 1u128 << (p % 128);
        let monotonic = self.is_monotonic(w.cell);
        // The call whose credits the wait counts: its own, or an earlier one when
        // its threshold lags behind by whole calls.
        let target = match units[..n].last() {
            Some(u) if monotonic && sum >= need && u.call < call => {
                self.lag_target(w.cell, need, call)
            }
            _ => call,
        };
        let counts = Counts {
            n,
            monotonic,
            call: target,
            reached: sum >= need,
        };
        let counted = || {
            units[..n]
                .iter()
                .enumerate()
                .filter(|(i, u)| counts.counts(*i, u))
                .map(|(_, u)| u)
        };
        let finding = self.stale_pass(w, seen, target, bit, counted);
        let own = &mut s.procs[p].clock;
        let clocks = self.clocks.borrow();
        for u in counted() {
            join(own, clocks.get(u.clock));
        }
        if !counted().any(|u| u.counted & bit == 0) {
            return (finding, None);
        }
        // The cell's current units are the ones read unless the read was stale:
        // then the counted units are marked by key (both lists sorted by key,
        // `insert_unit`, so one merge walk: linear, not units × counted).
        let mark = match seen.hist {
            None => Mark::Current(counts),
            Some(_) => Mark::Keys(counted().map(|u| u.key()).collect()),
        };
        (finding, Some((bit, mark)))
    }

    /// The stale pass a wait makes by counting `counted` (the credits it counts, of
    /// call `target`; `bit` is the waiter's mark): credits of another call, or none
    /// that is new to the waiter.
    fn stale_pass<'u, I: Iterator<Item = &'u Unit>>(
        &self,
        w: &Pass,
        seen: &Seen,
        target: u16,
        bit: u128,
        counted: impl Fn() -> I,
    ) -> Option<Finding> {
        let is_foreign = |u: &&Unit| u.amount > 0 && u.call != target;
        let fresh = counted().any(|u| u.amount > 0 && u.counted & bit == 0);
        let wait_desc = || {
            format!(
                "{} (call {}) passed `{}` ({} {} {}, value {}{})",
                self.proc_name(seen.p),
                fmt_call(seen.call),
                self.code.stmts[w.stmt as usize].text,
                self.cell_name(w.cell),
                w.cmp.as_str(),
                self.compared(w.k),
                seen.value,
                if w.stale {
                    ", read from a stale cached line"
                } else {
                    ""
                }
            )
        };
        if counted().any(|u| is_foreign(&u)) {
            let what: Vec<String> = counted()
                .filter(is_foreign)
                .map(|u| self.credit_text(u))
                .collect();
            let f = Finding::new(
                "sim::stale-pass",
                format!("{} by counting {}", wait_desc(), what.join(" and ")),
                self.stmt_span(w.stmt),
            )
            .note("credits of another call satisfied this wait: the signal was not back at zero between calls, or a fast peer's next-call credit was counted");
            Some(f)
        } else if !fresh {
            let f = Finding::new(
                "sim::stale-pass",
                format!("{} without any new credit: every credit it counted was already counted by an earlier wait of this process", wait_desc()),
                self.stmt_span(w.stmt),
            )
            .note("the threshold grows slower than the credits, so this wait synchronises nothing (e.g. `+= epoch` with `>= epoch`)");
            Some(f)
        } else {
            None
        }
    }

    /// Records in the process's cache the version of `cell` it read (relaxed model).
    fn cache_read(&self, s: &mut State, p: usize, cell: usize, version: u32) {
        let pr = &mut s.procs[p];
        match pr.cache.iter_mut().find(|(c, _)| *c as usize == cell) {
            Some(e) => e.1 = version,
            None => {
                pr.cache.push((cell as u32, version));
                pr.cache.sort();
            }
        }
        self.prune_history(s, cell);
    }

    /// The event of a passing wait.
    fn pass_event(&self, s: &State, w: &Pass, seen: &Seen, out: &mut Outcome) {
        let cell = w.cell;
        let value = seen.value;
        let cur = self.held(cell, s.cells[cell].value);
        let k = self.compared(w.k);
        self.event(out, seen.p, seen.call, Some(w.stmt), || {
            (
                EvKind::WaitPass {
                    cell: self.cell_name(cell),
                    threshold: k,
                    value,
                },
                format!(
                    "{} {} {k} passes: value {value}{}{}",
                    self.cell_name(cell),
                    w.cmp.as_str(),
                    if w.stale {
                        format!(" (stale; the cell holds {cur})")
                    } else {
                        String::new()
                    },
                    self.units_desc(&s.cells[cell])
                ),
            )
        });
    }
}

impl Machine<'_> {
    /// The call whose credits a wait on monotonic `cell` that needs `need` of them counts,
    /// at most its own (`call`): with N credits per call the `need`-th credit is one of
    /// call ceil(need / N) - 1. A threshold that lags behind by whole calls (a writer's
    /// `wait done >= call - 1` throttling a double buffer: done's credit of call c - 2)
    /// counts that earlier call's credits; its reaching unit must be of that call.
    fn lag_target(&self, cell: usize, need: i64, call: u16) -> u16 {
        let per_call = self.mono_per_call();
        let Some(n) = per_call
            .and_then(|v| v.get(cell).copied())
            .filter(|n| *n > 0)
        else {
            return call;
        };
        let target = (need + n - 1) / n - 1;
        u16::try_from(target.clamp(0, i64::from(call))).unwrap_or(call)
    }
}

/// Which units of the shortest prefix `units[..n]` reaching a passing wait's threshold
/// the wait counts: all of them; on a monotonic cell (an epoch counter holds every
/// earlier call's credits) the units of the waiter's call (or of the call its lagging
/// threshold counts, [`Machine::lag_target`]) and the unit that reaches the
/// threshold whatever its call (so a wait whose threshold is reached by credits of another
/// call than that one, earlier or later, is a stale pass). `reached` is false when
/// the prefix falls short (a `>` wait passing by the value alone).
#[derive(Clone, Copy)]
struct Counts {
    n: usize,
    monotonic: bool,
    call: u16,
    reached: bool,
}

impl Counts {
    /// Whether unit `i` of the prefix is counted.
    fn counts(&self, i: usize, u: &Unit) -> bool {
        i < self.n && (!self.monotonic || u.call == self.call || (self.reached && i + 1 == self.n))
    }
}

/// The units a passing wait marks as counted by the waiter: by their place in the cell
/// (the cell's current units were read), or by key (a stale version was read).
enum Mark {
    Current(Counts),
    Keys(Vec<UnitKey>),
}

/// A notify: `op v` into `cell`, which is on rank `to`, at statement `stmt`.
pub(super) struct Notice {
    pub to: usize,
    pub cell: usize,
    pub op: NotifyOp,
    pub v: i64,
    pub stmt: u32,
}

/// A wait that passes: on `cell cmp k`, at statement `stmt`.
pub(super) struct Pass {
    pub cell: usize,
    pub cmp: CmpOp,
    pub k: i64,
    pub stmt: u32,
    /// It reads a stale cached version of the cell (relaxed model).
    pub stale: bool,
}

/// What a passing wait saw: process `p` in `call` read `value` (as the program sees
/// it), from the cell's history entry `hist` when it read a stale version.
struct Seen {
    p: usize,
    call: u16,
    value: i64,
    hist: Option<usize>,
}

/// Marks with the waiter's `bit` the units of `c` its wait counted.
fn mark_counted(c: &mut Cell, bit: u128, mark: Mark) {
    match mark {
        Mark::Current(counts) => {
            for (i, u) in c.units.iter_mut().enumerate().take(counts.n) {
                if counts.counts(i, u) {
                    u.counted |= bit;
                }
            }
        }
        Mark::Keys(counted_keys) => {
            debug_assert!(counted_keys.is_sorted());
            let mut j = 0;
            for u in c.units.iter_mut() {
                while j < counted_keys.len() && counted_keys[j] < u.key() {
                    j += 1;
                }
                if j == counted_keys.len() {
                    break;
                }
                if counted_keys[j] == u.key() {
                    u.counted |= bit;
                }
            }
        }
    }
}
