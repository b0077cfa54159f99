//! Scheduling: the actions enabled in a state, performing one, what a
//! terminal state means (deadlock, leftover credit, termination), and running a
//! process's local instructions between two notifies or waits.

use super::footprint::DryOp;
use super::signal::{Notice, Pass};
use super::state::{Action, Memory, Outcome, Proc, State, Status};
use super::{fmt_call, Machine};
use crate::code::{CCond, CExpr, Instr, LoopKind};
use crate::report::{EvKind, Finding};
use collc_spec::ir::CmpOp;

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
            return self.deadlock(s, out);
        }
        self.leftover_credit(s, out);
    }

    /// Reports a deadlock: what each process waits for, or why it is stopped.
    fn deadlock(&self, s: &State, out: &mut Outcome) {
        let mut lines = Vec::new();
        let mut span = None;
        let mut pinned_any = false;
        for p in 0..s.procs.len() {
            let pr = &s.procs[p];
            match self.pending_wait(s, p) {
                Some(Ok(wait)) => {
                    let stmt = self.instr_stmt(pr.pc);
                    span = span.or(stmt.and_then(|x| self.stmt_span(x)));
                    pinned_any |= pr.pin.is_some();
                    lines.push(self.blocked_wait(s, p, wait, stmt, out));
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
    }

    /// A process blocked forever on its wait (`cell cmp k`) at `stmt`: its event,
    /// and the deadlock's note about it.
    fn blocked_wait(
        &self,
        s: &State,
        p: usize,
        (cell, cmp, k): (usize, CmpOp, i64),
        stmt: Option<u32>,
        out: &mut Outcome,
    ) -> String {
        let pr = &s.procs[p];
        let c = &s.cells[cell];
        let held_now = self.held(cell, c.value);
        let k = self.compared(k);
        let name = self.cell_name(cell);
        let held = match pr.pin {
            Some(v) => format!(
                "; it is blocked on a stale cached value {v} (sticky polling: the poll keeps re-reading its cached line), the cell itself holds {}",
                held_now
            ),
            None => format!("; the cell holds {}", held_now),
        };
        self.event(out, p, pr.call, stmt, || {
            (
                EvKind::WaitBlocked {
                    cell: name.clone(),
                    threshold: k,
                    value: held_now,
                },
                match pr.pin {
                    Some(v) => format!(
                        "blocked forever: {name} {} {k}, re-reads a stale cached {v} (the cell holds {held_now})",
                        cmp.as_str(),
                    ),
                    None => format!("blocked forever: {name} {} {k}, holds {held_now}", cmp.as_str()),
                },
            )
        });
        format!(
            "{} (call {}) waits at {} for {name} {} {k}{held}{}",
            self.proc_name(p),
            fmt_call(pr.call),
            stmt.map(|x| self.stmt_desc(x)).unwrap_or_default(),
            cmp.as_str(),
            self.units_desc(c)
        )
    }

    /// Reports the credit cells a run that finished leaves non-zero.
    fn leftover_credit(&self, s: &State, out: &mut Outcome) {
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
                    let (op, stmt) = (*op, *stmt);
                    self.notify(
                        s,
                        p,
                        &Notice {
                            to,
                            cell,
                            op,
                            v,
                            stmt,
                        },
                        out,
                    );
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
                        let stale = stale.is_some();
                        self.wait_pass(
                            s,
                            p,
                            &Pass {
                                cell,
                                cmp,
                                k,
                                stmt,
                                stale,
                            },
                            out,
                        );
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
        loop {
            if s.procs[p].status != Status::Run {
                return store_pc(s, p, pc);
            }
            out.instrs += 1;
            match self.local(s, p, pc, out) {
                Some(next) => pc = next,
                None => return,
            }
        }
    }

    /// Executes the local instruction at `pc`: the next program counter, or `None`
    /// when the run stops here (with the program counter stored).
    fn local(&self, s: &mut State, p: usize, pc: u32, out: &mut Outcome) -> Option<u32> {
        match &self.code.instrs[pc as usize] {
            Instr::Notify { .. } | Instr::Wait { .. } => {
                store_pc(s, p, pc);
                None
            }
            Instr::Let { slot, value } => self.let_slot(s, p, pc, (*slot, value), out),
            Instr::Kill { slots } => Some(kill_slots(s, p, pc, slots)),
            Instr::LoopInit {
                var,
                hi,
                step,
                kind,
                exit,
                stmt,
                outer,
            } => {
                let head = LoopHead {
                    slots: (*var, *hi, *step),
                    kind,
                    exit: *exit,
                    stmt: *stmt,
                    outer,
                };
                self.loop_init(s, p, pc, &head, out)
            }
            Instr::LoopNext {
                var,
                hi,
                step,
                peers,
                body,
            } => Some(self.loop_next(s, p, pc, (*var, *hi, *step), *peers, *body)),
            Instr::JumpIfNot { cond, target } => match self.ctx(s, p).cond(cond) {
                Ok(true) => Some(pc + 1),
                Ok(false) => Some(*target),
                Err(m) => self.stop_fault(s, p, pc, None, m, out),
            },
            Instr::Jump { target } => Some(*target),
            Instr::Return { cond, stmt } => self.early_return(s, p, pc, cond, *stmt, out),
            Instr::EndBody => Some(pc + 1),
            Instr::EndCall => {
                store_pc(s, p, pc);
                self.end_call(s, p, out);
                None
            }
            Instr::Fence { stmt } => {
                self.fence(s, p, pc, *stmt, out);
                Some(pc + 1)
            }
            Instr::Copy { dst, src, stmt } => self.data_step(s, p, pc, *stmt, out, |s, r, out| {
                self.data_op(s, p, dst, r, src, r, None, *stmt, "copy", out)
            }),
            Instr::Get {
                dst,
                src,
                from,
                stmt,
            } => self.data_step(s, p, pc, *stmt, out, |s, r, out| {
                let f = self.ctx(s, p).eval(from).and_then(|x| self.rank(x))?;
                self.data_op(s, p, dst, r, src, f, None, *stmt, "get", out)
            }),
            Instr::Put { dst, to, src, stmt } => {
                self.data_step(s, p, pc, *stmt, out, |s, r, out| {
                    let t = self.ctx(s, p).eval(to).and_then(|x| self.rank(x))?;
                    self.data_op(s, p, dst, t, src, r, None, *stmt, "put", out)
                })
            }
            Instr::Reduce {
                op,
                dst,
                src,
                from,
                to,
                stmt,
            } => self.data_step(s, p, pc, *stmt, out, |s, r, out| {
                if let Some(t) = to {
                    let t = self.ctx(s, p).eval(t).and_then(|x| self.rank(x))?;
                    return self.accumulate(s, p, dst, t, src, *op, *stmt, out);
                }
                let f = match from {
                    Some(f) => self.ctx(s, p).eval(f).and_then(|x| self.rank(x))?,
                    None => r,
                };
                self.data_op(s, p, dst, r, src, f, Some(*op), *stmt, "reduce", out)
            }),
        }
    }

    /// `let`: the slot takes the value; the next program counter, or `None` on a runtime error.
    fn let_slot(
        &self,
        s: &mut State,
        p: usize,
        pc: u32,
        (slot, value): (u16, &CExpr),
        out: &mut Outcome,
    ) -> Option<u32> {
        match self.ctx(s, p).eval(value) {
            Ok(v) => {
                let pr = &mut s.procs[p];
                pr.slots[slot as usize] = v;
                pr.pc = pc + 1;
                Some(pc + 1)
            }
            Err(m) => self.stop_fault(s, p, pc, None, m, out),
        }
    }

    /// Stores the program counter and stops the process on a runtime error.
    fn stop_fault(
        &self,
        s: &mut State,
        p: usize,
        pc: u32,
        stmt: Option<u32>,
        msg: String,
        out: &mut Outcome,
    ) -> Option<u32> {
        store_pc(s, p, pc);
        self.fault(s, p, stmt, msg, out);
        None
    }

    /// A copy, get, put or reduce: `op` runs it given the process's rank, after the
    /// program counter is stored (it writes the state); an error stops the process.
    fn data_step(
        &self,
        s: &mut State,
        p: usize,
        pc: u32,
        stmt: u32,
        out: &mut Outcome,
        op: impl FnOnce(&mut State, usize, &mut Outcome) -> Result<(), String>,
    ) -> Option<u32> {
        let (r, _) = self.who(p);
        store_pc(s, p, pc);
        match op(s, r, out) {
            Ok(()) => Some(pc + 1),
            Err(m) => {
                self.fault(s, p, Some(stmt), m, out);
                None
            }
        }
    }

    /// A fence: under the relaxed model it drains the process's buffered writes,
    /// clears its cache and prunes the cells' histories; always an event.
    fn fence(&self, s: &mut State, p: usize, pc: u32, stmt: u32, out: &mut Outcome) {
        if self.memory == Memory::Relaxed {
            store_pc(s, p, pc);
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
    }

    /// An early return: when its condition holds the call ends here.
    fn early_return(
        &self,
        s: &mut State,
        p: usize,
        pc: u32,
        cond: &CCond,
        stmt: u32,
        out: &mut Outcome,
    ) -> Option<u32> {
        match self.ctx(s, p).cond(cond) {
            Ok(true) => {
                store_pc(s, p, pc);
                let call = s.procs[p].call;
                self.event(out, p, call, Some(stmt), || {
                    (
                        EvKind::Return,
                        "returns early (skips the rest of the call and the epilogue)".into(),
                    )
                });
                self.end_call(s, p, out);
                None
            }
            Ok(false) => Some(pc + 1),
            Err(m) => self.stop_fault(s, p, pc, Some(stmt), m, out),
        }
    }

    /// Enters a loop: its variable takes its first value, or the run jumps to the
    /// loop's exit. Bounds that fail to evaluate fault the process; a loop (or loop
    /// nest) too long to run stops the exploration.
    fn loop_init(
        &self,
        s: &mut State,
        p: usize,
        pc: u32,
        head: &LoopHead<'_>,
        out: &mut Outcome,
    ) -> Option<u32> {
        let (first, h, st) = match self.loop_bounds(s, p, head.kind) {
            Ok(x) => x,
            Err(m) => return self.stop_fault(s, p, pc, Some(head.stmt), m, out),
        };
        let trip = if h > first {
            (h - first + st - 1) / st
        } else {
            0
        };
        if let Some(msg) = self.too_long(s, p, head, trip) {
            out.stop = Some(msg);
            let pr = &mut s.procs[p];
            pr.status = Status::Fault;
            pr.pc = pc;
            return None;
        }
        if first < h {
            let (var, hi, step) = head.slots;
            let pr = &mut s.procs[p];
            pr.slots[var as usize] = first;
            pr.slots[hi as usize] = h;
            pr.slots[step as usize] = st;
            pr.pc = pc + 1;
            Some(pc + 1)
        } else {
            Some(head.exit)
        }
    }

    /// A loop's first value, end and step.
    fn loop_bounds(&self, s: &State, p: usize, kind: &LoopKind) -> Result<(i64, i64, i64), String> {
        let (r, _) = self.who(p);
        let world = self.code.world as i64;
        let ctx = self.ctx(s, p);
        match kind {
            LoopKind::Peers => Ok((if r == 0 { 1 } else { 0 }, world, 1)),
            LoopKind::Ranks => Ok((0, world, 1)),
            LoopKind::Span { lo, hi, step } => {
                let st = ctx.eval(step)?;
                if st <= 0 {
                    return Err(format!("loop step {st} is not positive"));
                }
                Ok((ctx.eval(lo)?, ctx.eval(hi)?, st))
            }
            LoopKind::Seq {
                lo,
                hi,
                step,
                geometric,
                rev,
            } => ctx
                .seq(lo, hi, step, *geometric, *rev)
                .map(|q| (0, q.len(), 1)),
        }
    }

    /// Why a loop of `trip` iterations is refused before it starts: over the limit
    /// per loop, or, with the iterations its enclosing loops have left (their full
    /// trips the first time this loop is reached), over the limit for a loop nest.
    fn too_long(&self, s: &State, p: usize, head: &LoopHead<'_>, trip: i64) -> Option<String> {
        let text = &self.code.stmts[head.stmt as usize].text;
        if trip > self.limits.max_trip {
            return Some(format!(
                "`{}` would run {trip} iterations on {} (limit {} per loop): the protocol is too large for these parameters; choose smaller ones",
                text,
                self.proc_name(p),
                self.limits.max_trip
            ));
        }
        let pr = &s.procs[p];
        let nest = head
            .outer
            .iter()
            .fold(trip.max(1) as i128, |acc, &(v, hv, sv)| {
                let (v, hv, sv) = (
                    pr.slots[v as usize] as i128,
                    pr.slots[hv as usize] as i128,
                    (pr.slots[sv as usize] as i128).max(1),
                );
                acc * ((hv - v + sv - 1) / sv).max(1)
            });
        if !head.outer.is_empty() && trip > 0 && nest > self.limits.max_nest as i128 {
            return Some(format!(
                "`{}` nested in {} enclosing loop(s) would run {nest} iterations on {} (limit {} for a loop nest, --max-steps): the protocol is too large for these parameters; choose smaller ones",
                text,
                head.outer.len(),
                self.proc_name(p),
                self.limits.max_nest
            ));
        }
        None
    }

    /// A loop's latch: the variable advances (skipping the process's own rank in a
    /// loop over peers) and the run jumps back to the body, or falls through.
    fn loop_next(
        &self,
        s: &mut State,
        p: usize,
        pc: u32,
        (var, hi, step): (u16, u16, u16),
        peers: bool,
        body: u32,
    ) -> u32 {
        let (r, _) = self.who(p);
        let pr = &s.procs[p];
        let mut v = pr.slots[var as usize] + pr.slots[step as usize];
        if peers && v == r as i64 {
            v += 1;
        }
        if v < pr.slots[hi as usize] {
            let pr = &mut s.procs[p];
            pr.slots[var as usize] = v;
            pr.pc = body;
            body
        } else {
            pc + 1
        }
    }
}

/// A loop's entry, as its `Instr::LoopInit` gives it.
struct LoopHead<'a> {
    /// The (variable, end, step) slots.
    slots: (u16, u16, u16),
    kind: &'a LoopKind,
    exit: u32,
    stmt: u32,
    /// The enclosing loops' (variable, end, step) slots, outermost first.
    outer: &'a [(u16, u16, u16)],
}

/// Stores the program counter into the process, when it moved.
fn store_pc(s: &mut State, p: usize, pc: u32) {
    if s.procs[p].pc != pc {
        s.procs[p].pc = pc;
    }
}

/// Slots going out of scope are zeroed, so equal continuations hash equally: the next
/// program counter.
fn kill_slots(s: &mut State, p: usize, pc: u32, slots: &[u16]) -> u32 {
    let pr = &mut s.procs[p];
    for x in slots {
        pr.slots[*x as usize] = 0;
    }
    pr.pc = pc + 1;
    pc + 1
}
