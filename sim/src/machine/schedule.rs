//! Scheduling: the actions enabled in a state, performing one, what a
//! terminal state means (deadlock, leftover credit, termination), and running a
//! process's local instructions between two notifies or waits.

use super::footprint::DryOp;
use super::state::{Action, Memory, Outcome, Proc, State, Status};
use super::{fmt_call, Machine};
use crate::code::{Instr, LoopKind};
use crate::report::{EvKind, Finding};

impl Machine<'_> {
    /// Every enabled action, in a fixed order.
    pub fn enabled(&self, s: &State) -> Vec<Action> {
        let mut v = Vec::new();
        for p in 0..s.procs.len() {
            if s.procs[p].status != Status::Run {
                continue;
            }
            match self.pending_wait(s, p) {
                None => v.push(Action::Run(p as u16)),
                Some(Err(_)) => v.push(Action::Run(p as u16)),
                Some(Ok((cell, cmp, k))) => {
                    if s.procs[p].pin.is_some() {
                        // The poll re-reads its cached failing value: nothing can move it.
                        continue;
                    }
                    if self.wait_holds(cell, cmp, s.cells[cell].value, k) {
                        v.push(Action::Run(p as u16));
                    } else if self.sticky() {
                        v.push(Action::Pin(p as u16));
                    }
                    if self.memory == Memory::Relaxed
                        && self.stale_choice(s, p, cell, cmp, k).is_some()
                    {
                        v.push(Action::Stale(p as u16));
                    }
                }
            }
        }
        // Pinning matters only if some cell may still change: when no process can run,
        // the state is a deadlock as it stands.
        if !v
            .iter()
            .any(|a| matches!(a, Action::Run(_) | Action::Stale(_)))
        {
            v.retain(|a| !matches!(a, Action::Pin(_)));
        }
        if self.memory == Memory::Relaxed {
            for (p, pr) in s.procs.iter().enumerate() {
                if !pr.pending.is_empty() {
                    v.push(Action::Drain(p as u16));
                }
            }
        }
        v
    }

    /// Sticky polling is in effect (it needs the relaxed model's caches).
    pub fn sticky(&self) -> bool {
        self.sticky_poll && self.memory == Memory::Relaxed
    }

    /// True when every process finished every call.
    pub fn all_finished(&self, s: &State) -> bool {
        s.procs.iter().all(|p| p.status == Status::Finished)
    }

    /// True when some process stopped on a runtime error.
    pub fn faulted(&self, s: &State) -> bool {
        s.procs.iter().any(|p| p.status == Status::Fault)
    }

    /// True when no process can move (only buffered writes may still drain).
    pub fn stuck(&self, enabled: &[Action]) -> bool {
        !enabled.iter().any(|a| !matches!(a, Action::Drain(_)))
    }

    /// Checks a terminal state: a deadlock if some process has not finished, else
    /// every credit cell must be zero.
    pub fn terminal(&self, s: &State, out: &mut Outcome) {
        if self.faulted(s) {
            return;
        }
        if !self.all_finished(s) {
            let mut lines = Vec::new();
            let mut span = None;
            let mut pinned_any = false;
            for p in 0..s.procs.len() {
                let pr = &s.procs[p];
                match self.pending_wait(s, p) {
                    Some(Ok((cell, cmp, k))) => {
                        let c = &s.cells[cell];
                        let held_now = self.held(cell, c.value);
                        let k = self.compared(k);
                        let stmt = self.instr_stmt(pr.pc);
                        span = span.or(stmt.and_then(|x| self.stmt_span(x)));
                        let held = match pr.pin {
                            Some(v) => {
                                pinned_any = true;
                                format!(
                                    "; it is blocked on a stale cached value {v} (sticky polling: the poll keeps re-reading its cached line), the cell itself holds {}",
                                    held_now
                                )
                            }
                            None => format!("; the cell holds {}", held_now),
                        };
                        lines.push(format!(
                            "{} (call {}) waits at {} for {} {} {k}{held}{}",
                            self.proc_name(p),
                            fmt_call(pr.call),
                            stmt.map(|x| self.stmt_desc(x)).unwrap_or_default(),
                            self.cell_name(cell),
                            cmp.as_str(),
                            self.units_desc(c)
                        ));
                        self.event(out, p, pr.call, stmt, || {
                            (
                                EvKind::WaitBlocked {
                                    cell: self.cell_name(cell),
                                    threshold: k,
                                    value: held_now,
                                },
                                match pr.pin {
                                    Some(v) => format!(
                                        "blocked forever: {} {} {k}, re-reads a stale cached {v} (the cell holds {})",
                                        self.cell_name(cell),
                                        cmp.as_str(),
                                        held_now
                                    ),
                                    None => format!(
                                        "blocked forever: {} {} {k}, holds {}",
                                        self.cell_name(cell),
                                        cmp.as_str(),
                                        held_now
                                    ),
                                },
                            )
                        });
                    }
                    _ => {
                        let what = match pr.status {
                            Status::Finished => "has finished every call".to_string(),
                            Status::CallDone => format!(
                                "finished call {} and waits for its rank's other blocks",
                                fmt_call(pr.call)
                            ),
                            _ => "is stopped".to_string(),
                        };
                        lines.push(format!("{} {what}", self.proc_name(p)));
                    }
                }
            }
            let mut f = Finding::new(
                "sim::deadlock",
                if pinned_any {
                    "deadlock: every live process waits for a cell that can no longer change, or is blocked on a stale cached value it cannot invalidate while it polls"
                } else {
                    "deadlock: every live process waits for a cell that can no longer change"
                }
                .to_string(),
                span,
            );
            f.notes = lines;
            self.mark_last(out, "sim::deadlock");
            out.findings.push(f);
            return;
        }
        let mut bad = Vec::new();
        let mut span = None;
        for (i, c) in s.cells.iter().enumerate() {
            if c.value != 0 && self.is_credit(i) && !self.is_monotonic(i) {
                if let Some(u) = c.units.first() {
                    span = span.or(self.stmt_span(u.stmt));
                }
                bad.push(format!(
                    "{} = {}{}",
                    self.cell_name(i),
                    c.value,
                    self.units_desc(c)
                ));
            }
        }
        if !bad.is_empty() {
            let mut f = Finding::new(
                "sim::nonzero-exit",
                format!(
                    "after {} call(s) {} credit cell(s) are not zero; the next call would start from stale credits",
                    self.calls,
                    bad.len()
                ),
                span,
            );
            f.notes = bad;
            out.findings.push(f);
        }
    }

    /// Performs one action.
    pub fn step(&self, s: &mut State, a: Action, out: &mut Outcome) {
        match a {
            Action::Run(p) => {
                self.run_step(s, p as usize, false, out);
            }
            Action::Stale(p) => {
                let p = p as usize;
                self.exec_visible(s, p, Some(()), out);
                self.run_invisible(s, p, out);
            }
            Action::Drain(p) => {
                self.drain_one(s, p as usize, out);
            }
            Action::Pin(p) => self.pin(s, p as usize, out),
        }
    }

    /// One `Run` transition of process `p`: its notify or wait, then its local
    /// instructions up to the next notify or wait. With `dry` the notify or wait
    /// has no effect (a wait always passes): it is only recorded and returned,
    /// which is how [`Machine::footprints`] learns each process's sequence of
    /// transitions.
    pub(super) fn run_step(
        &self,
        s: &mut State,
        p: usize,
        dry: bool,
        out: &mut Outcome,
    ) -> Option<DryOp> {
        let op = if dry {
            let op = self.dry_visible(s, p, out);
            s.procs[p].steps += 1;
            op
        } else {
            self.exec_visible(s, p, None, out);
            None
        };
        self.run_invisible(s, p, out);
        op
    }

    /// The process's epoch for a recorded event, starting a new one after a release.
    pub(super) fn epoch(pr: &mut Proc, p: usize) -> u32 {
        if pr.bump {
            pr.clock[p] += 1;
            pr.bump = false;
        }
        pr.clock[p]
    }

    pub(super) fn fault(
        &self,
        s: &mut State,
        p: usize,
        stmt: Option<u32>,
        msg: String,
        out: &mut Outcome,
    ) {
        let pr = &mut s.procs[p];
        pr.status = Status::Fault;
        let call = pr.call;
        let f = Finding::new(
            "sim::runtime-error",
            format!("{} (call {}): {msg}", self.proc_name(p), fmt_call(call)),
            stmt.and_then(|x| self.stmt_span(x)),
        );
        self.event(out, p, call, stmt, || (EvKind::Fault, msg));
        self.mark_last(out, "sim::runtime-error");
        out.findings.push(f);
    }

    /// Executes the notify or wait at the process's pc, and counts the transition in
    /// the process (`Proc::steps`, with the program counter's step: one write). The
    /// count comes after the notify or wait (which do not read it): writing the
    /// process first would drop the wait it resolved for the enabled set
    /// (`Proc::wait`), shared with the state stepped from.
    fn exec_visible(&self, s: &mut State, p: usize, stale: Option<()>, out: &mut Outcome) {
        let pc = s.procs[p].pc as usize;
        let advance = match &self.code.instrs[pc] {
            Instr::Notify { op, stmt, .. } => match self.notify_args(s, p) {
                Ok((to, cell, v)) => {
                    self.notify(s, p, to, cell, *op, v, *stmt, out);
                    1
                }
                Err(m) => {
                    self.fault(s, p, Some(*stmt), m, out);
                    0
                }
            },
            Instr::Wait { stmt, .. } => {
                let stmt = *stmt;
                match self.pending_wait(s, p) {
                    Some(Ok((cell, cmp, k))) => {
                        self.wait_pass(s, p, cell, cmp, k, stmt, stale.is_some(), out);
                        1
                    }
                    Some(Err(m)) => {
                        self.fault(s, p, Some(stmt), m, out);
                        0
                    }
                    None => 0,
                }
            }
            _ => 0,
        };
        let pr = &mut s.procs[p];
        pr.pc += advance;
        pr.steps += 1;
    }

    /// Runs local instructions until the next notify, wait or the end of the call.
    /// The program counter is kept here and stored into the process when something
    /// else writes it, before anything else reads the state, and at the end: a jump
    /// alone does not write (and so copy) the process.
    pub(super) fn run_invisible(&self, s: &mut State, p: usize, out: &mut Outcome) {
        let mut pc = s.procs[p].pc;
        // Stores the program counter, when it moved.
        let sync = |s: &mut State, pc: u32| {
            if s.procs[p].pc != pc {
                s.procs[p].pc = pc;
            }
        };
        loop {
            if s.procs[p].status != Status::Run {
                return sync(s, pc);
            }
            out.instrs += 1;
            match &self.code.instrs[pc as usize] {
                Instr::Notify { .. } | Instr::Wait { .. } => return sync(s, pc),
                Instr::Let { slot, value } => match self.ctx(s, p).eval(value) {
                    Ok(v) => {
                        pc += 1;
                        let pr = &mut s.procs[p];
                        pr.slots[*slot as usize] = v;
                        pr.pc = pc;
                    }
                    Err(m) => {
                        sync(s, pc);
                        return self.fault(s, p, None, m, out);
                    }
                },
                Instr::Kill { slots } => {
                    pc += 1;
                    let pr = &mut s.procs[p];
                    for x in slots {
                        pr.slots[*x as usize] = 0;
                    }
                    pr.pc = pc;
                }
                Instr::LoopInit {
                    var,
                    hi,
                    step,
                    kind,
                    exit,
                    stmt,
                    outer,
                } => {
                    let (r, _) = self.who(p);
                    let world = self.code.world as i64;
                    let ctx = self.ctx(s, p);
                    let res: Result<(i64, i64, i64), String> = match kind {
                        LoopKind::Peers => Ok((if r == 0 { 1 } else { 0 }, world, 1)),
                        LoopKind::Ranks => Ok((0, world, 1)),
                        LoopKind::Span { lo, hi, step } => (|| {
                            let st = ctx.eval(step)?;
                            if st <= 0 {
                                return Err(format!("loop step {st} is not positive"));
                            }
                            Ok((ctx.eval(lo)?, ctx.eval(hi)?, st))
                        })(),
                        LoopKind::Seq {
                            lo,
                            hi,
                            step,
                            geometric,
                            rev,
                        } => ctx
                            .seq(lo, hi, step, *geometric, *rev)
                            .map(|q| (0, q.len(), 1)),
                    };
                    let (first, h, st) = match res {
                        Ok(x) => x,
                        Err(m) => {
                            sync(s, pc);
                            return self.fault(s, p, Some(*stmt), m, out);
                        }
                    };
                    let trip = if h > first {
                        (h - first + st - 1) / st
                    } else {
                        0
                    };
                    if trip > self.limits.max_trip {
                        out.stop = Some(format!(
                            "`{}` would run {trip} iterations on {} (limit {} per loop): the protocol is too large for these parameters; choose smaller ones",
                            self.code.stmts[*stmt as usize].text,
                            self.proc_name(p),
                            self.limits.max_trip
                        ));
                        let pr = &mut s.procs[p];
                        pr.status = Status::Fault;
                        pr.pc = pc;
                        return;
                    }
                    // The whole nest: this loop's trip times the iterations the enclosing
                    // loops have left (their full trips the first time this loop is reached).
                    let nest = outer.iter().fold(trip.max(1) as i128, |acc, &(v, hv, sv)| {
                        let pr = &s.procs[p];
                        let (v, hv, sv) = (
                            pr.slots[v as usize] as i128,
                            pr.slots[hv as usize] as i128,
                            (pr.slots[sv as usize] as i128).max(1),
                        );
                        acc * ((hv - v + sv - 1) / sv).max(1)
                    });
                    if !outer.is_empty() && trip > 0 && nest > self.limits.max_nest as i128 {
                        out.stop = Some(format!(
                            "`{}` nested in {} enclosing loop(s) would run {nest} iterations on {} (limit {} for a loop nest, --max-steps): the protocol is too large for these parameters; choose smaller ones",
                            self.code.stmts[*stmt as usize].text,
                            outer.len(),
                            self.proc_name(p),
                            self.limits.max_nest
                        ));
                        let pr = &mut s.procs[p];
                        pr.status = Status::Fault;
                        pr.pc = pc;
                        return;
                    }
                    if first < h {
                        pc += 1;
                        let pr = &mut s.procs[p];
                        pr.slots[*var as usize] = first;
                        pr.slots[*hi as usize] = h;
                        pr.slots[*step as usize] = st;
                        pr.pc = pc;
                    } else {
                        pc = *exit;
                    }
                }
                Instr::LoopNext {
                    var,
                    hi,
                    step,
                    peers,
                    body,
                } => {
                    let (r, _) = self.who(p);
                    let pr = &s.procs[p];
                    let mut v = pr.slots[*var as usize] + pr.slots[*step as usize];
                    if *peers && v == r as i64 {
                        v += 1;
                    }
                    if v < pr.slots[*hi as usize] {
                        pc = *body;
                        let pr = &mut s.procs[p];
                        pr.slots[*var as usize] = v;
                        pr.pc = pc;
                    } else {
                        pc += 1;
                    }
                }
                Instr::JumpIfNot { cond, target } => match self.ctx(s, p).cond(cond) {
                    Ok(true) => pc += 1,
                    Ok(false) => pc = *target,
                    Err(m) => {
                        sync(s, pc);
                        return self.fault(s, p, None, m, out);
                    }
                },
                Instr::Jump { target } => pc = *target,
                Instr::Return { cond, stmt } => match self.ctx(s, p).cond(cond) {
                    Ok(true) => {
                        sync(s, pc);
                        let call = s.procs[p].call;
                        self.event(out, p, call, Some(*stmt), || {
                            (
                                EvKind::Return,
                                "returns early (skips the rest of the call and the epilogue)"
                                    .into(),
                            )
                        });
                        self.end_call(s, p, out);
                        return;
                    }
                    Ok(false) => pc += 1,
                    Err(m) => {
                        sync(s, pc);
                        return self.fault(s, p, Some(*stmt), m, out);
                    }
                },
                Instr::EndBody => pc += 1,
                Instr::EndCall => {
                    sync(s, pc);
                    self.end_call(s, p, out);
                    return;
                }
                Instr::Fence { stmt } => {
                    let stmt = *stmt;
                    if self.memory == Memory::Relaxed {
                        sync(s, pc);
                        while !s.procs[p].pending.is_empty() {
                            self.drain_one(s, p, out);
                        }
                        s.procs[p].cache.clear();
                        let cells: Vec<usize> = (0..s.cells.len())
                            .filter(|c| !s.cells[*c].history.is_empty())
                            .collect();
                        for c in cells {
                            self.prune_history(s, c);
                        }
                    }
                    let call = s.procs[p].call;
                    self.event(out, p, call, Some(stmt), || (EvKind::Fence, "fence".into()));
                    pc += 1;
                }
                Instr::Copy { dst, src, stmt } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    sync(s, pc);
                    if let Err(m) = self.data_op(s, p, dst, r, src, r, None, stmt, "copy", out) {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    pc += 1;
                }
                Instr::Get {
                    dst,
                    src,
                    from,
                    stmt,
                } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    sync(s, pc);
                    let res = self.ctx(s, p).eval(from).and_then(|x| self.rank(x));
                    let res = res
                        .and_then(|f| self.data_op(s, p, dst, r, src, f, None, stmt, "get", out));
                    if let Err(m) = res {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    pc += 1;
                }
                Instr::Put { dst, to, src, stmt } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    sync(s, pc);
                    let res = self.ctx(s, p).eval(to).and_then(|x| self.rank(x));
                    let res = res
                        .and_then(|t| self.data_op(s, p, dst, t, src, r, None, stmt, "put", out));
                    if let Err(m) = res {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    pc += 1;
                }
                Instr::Reduce {
                    op,
                    dst,
                    src,
                    from,
                    stmt,
                } => {
                    let stmt = *stmt;
                    let (r, _) = self.who(p);
                    sync(s, pc);
                    let res = match from {
                        Some(f) => self.ctx(s, p).eval(f).and_then(|x| self.rank(x)),
                        None => Ok(r),
                    };
                    let res = res.and_then(|f| {
                        self.data_op(s, p, dst, r, src, f, Some(*op), stmt, "reduce", out)
                    });
                    if let Err(m) = res {
                        return self.fault(s, p, Some(stmt), m, out);
                    }
                    pc += 1;
                }
            }
        }
    }
}
