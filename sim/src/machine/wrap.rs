//! The wrap-around mode: the simulated calls are the last ones the protocol may run
//! before a monotonic (epoch) cell leaves int32, with every cell holding what those
//! earlier calls left in it, and cell arithmetic as the hardware does it.
//!
//! Where the window of `K` calls starts (call index `s`): with `N` the largest per-call
//! credit of any monotonic cell, a cell holds `c·N` after `c` calls, so calls `0..H`
//! (`H = floor((2^31 - 1) / N)`) keep every cell within int32 and call `H` is the first
//! that carries one past `INT32_MAX`. Under `calls <= M;` with `M <= H` the window is the
//! last one, `s = M - K` (a protocol within its horizon must pass there); otherwise call
//! `H` is one the protocol may run, and the window is placed around it, `s = H - (K - 2)`
//! (capped at `M - K`), so the wrap happens inside it. The per-call credits and the values
//! the calls before the window leave in `reused` value cells are read from the machine's
//! own dry run (every wait passing at once; control flow does not depend on cell values).
//!
//! Arithmetic: a cell's state keeps the credits of the simulated calls (credit units
//! and their sum, as in a run from scratch); the int32 value it holds is that sum plus
//! its start value, wrapped to int32. A wait compares that value with its threshold cast
//! to int32 (as the emitted code does: `static_cast<int32_t>(threshold)`), as signed
//! int32. A wait that passes on the wrapped comparison while the credits it needs have
//! not arrived is a `sim::stale-pass`; one that a wrapped cell never satisfies is a
//! `sim::deadlock`.

use super::footprint::OpKind;
use super::state::State;
use super::Machine;
use collc_spec::ir::{CmpOp, SignalKind};
use serde::Serialize;

/// The start of the wrap-around mode's window, as reports state it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WrapStart {
    /// The call index of the first simulated call.
    pub first_call: i64,
    /// `calls <= M;`, if declared.
    pub declared_calls: Option<i64>,
    /// The largest per-call credit of a monotonic cell.
    pub per_call: i64,
    /// Calls before a monotonic cell passes `INT32_MAX`: `floor((2^31 - 1) / per_call)`
    /// (`None` when no monotonic cell receives credits).
    pub horizon: Option<i64>,
    /// Whether the window holds the call that carries a cell past `INT32_MAX`.
    pub crosses: bool,
}

impl WrapStart {
    /// One line for the report: where the window starts and why.
    pub fn describe(&self) -> String {
        let last = self.first_call;
        match (self.horizon, self.crosses) {
            (None, _) => format!(
                "wrap-around mode: calls from index {last}; no monotonic cell receives credits"
            ),
            (Some(h), true) => format!(
                "wrap-around mode: calls from index {last}, monotonic cells at their values after {last} calls; call index {h} carries a cell past INT32_MAX ({} credit(s) per call){}",
                self.per_call,
                match self.declared_calls {
                    Some(m) => format!(" and `calls <= {m}` lets the protocol run it"),
                    None => " and no `calls <= N` stops the protocol before it".to_string(),
                }
            ),
            (Some(h), false) => format!(
                "wrap-around mode: calls from index {last} (the last the protocol declares), monotonic cells at their values after {last} calls; within the horizon of {h} calls ({} credit(s) per call)",
                self.per_call
            ),
        }
    }
}

/// The machine's start values (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Wrap {
    /// Each cell's value before the first simulated call (0 for all but monotonic cells).
    base: Vec<i64>,
    /// `reused` value cells and what the call before the window wrote to them.
    init: Vec<(usize, i64)>,
}

/// `x` as the int32 two's-complement wrap gives it.
fn wrap32(x: i64) -> i64 {
    i64::from(x as i32)
}

/// One process's notifies and waits of the first simulated call: (cell, kind, amount).
type CallOps = Vec<(u32, OpKind, i64)>;

impl Machine<'_> {
    /// Every process's notifies of its first call in a dry run (every wait passing at once).
    fn first_call_ops(&self) -> Result<Vec<CallOps>, String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let fps = self
            .footprints(self.limits.max_nest.max(1 << 20), deadline)
            .ok_or_else(|| {
                "the wrap-around mode's dry run of one call stopped (a runtime error or a budget)"
                    .to_string()
            })?;
        Ok(fps
            .iter()
            .map(|tr| {
                let end = tr
                    .iter()
                    .position(|f| f.ends_call.is_some())
                    .map_or(tr.len(), |i| i + 1);
                tr[..end]
                    .iter()
                    .filter_map(|f| f.op.map(|o| (o.cell, o.kind, o.amount)))
                    .collect()
            })
            .collect())
    }

    /// Each monotonic cell's credits in one call, from `ops` (the notifies of one call).
    fn per_call_credits(&self, ops: Vec<CallOps>) -> Vec<i64> {
        let ncells = self.code.world * self.code.cells_per_rank * self.cell_inst;
        let mut per_cell = vec![0i64; ncells];
        for (cell, kind, amount) in ops.into_iter().flatten() {
            let cell = cell as usize;
            if matches!(kind, OpKind::Raise | OpKind::Lower) && self.is_monotonic(cell) {
                if let Some(c) = per_cell.get_mut(cell) {
                    *c = c.saturating_add(amount);
                }
            }
        }
        per_cell
    }

    /// Each monotonic cell's credits per call (a dry run of one call, made once), or `None`
    /// while that dry run runs (its own waits pass at once).
    pub(super) fn mono_per_call(&self) -> Option<std::rc::Rc<Vec<i64>>> {
        if let Some(v) = self.mono_credit.borrow().as_ref() {
            return Some(v.clone());
        }
        if self.mono_busy.replace(true) {
            return None;
        }
        let ops = self.first_call_ops();
        self.mono_busy.set(false);
        let v = std::rc::Rc::new(self.per_call_credits(ops.unwrap_or_default()));
        *self.mono_credit.borrow_mut() = Some(v.clone());
        Some(v)
    }

    fn is_reused_value(&self, cell: usize) -> bool {
        let sig = self.signal_of(cell);
        self.p.signals.get(sig.index()).map(|s| s.kind) == Some(SignalKind::Value)
            && !self.p.signal_per_call(sig)
    }

    /// Places the window of the wrap-around mode (module docs) and returns where it starts.
    pub fn start_wrapped(&mut self) -> Result<WrapStart, String> {
        self.first_call = 0;
        self.wrap = None;
        let per_cell = self.per_call_credits(self.first_call_ops()?);
        let n = per_cell.iter().copied().max().unwrap_or(0).max(0);
        let k = self.calls as i64;
        let declared = self.p.calls.map(|c| c.max);
        let last_window = declared.map_or(0, |m| (m - k).max(0));
        let horizon = (n > 0).then(|| i64::from(i32::MAX) / n);
        let (start, crosses) = match horizon {
            Some(h) if declared.is_none_or(|m| m > h) => {
                let s = (h - (k - 2).max(0)).max(0);
                (declared.map_or(s, |m| s.min((m - k).max(0))), true)
            }
            _ => (last_window, false),
        };
        let mut init = Vec::new();
        if start > 0 {
            self.first_call = start - 1;
            for ops in self.first_call_ops()? {
                for (cell, kind, amount) in ops {
                    if kind == OpKind::Set && self.is_reused_value(cell as usize) {
                        init.retain(|(c, _)| *c != cell as usize);
                        init.push((cell as usize, amount));
                    }
                }
            }
        }
        let base = per_cell
            .iter()
            .map(|c| {
                c.checked_mul(start)
                    .ok_or_else(|| "a monotonic cell's start value overflows".to_string())
            })
            .collect::<Result<Vec<i64>, String>>()?;
        self.first_call = start;
        self.wrap = Some(Wrap { base, init });
        Ok(WrapStart {
            first_call: start,
            declared_calls: declared,
            per_call: n,
            horizon,
            crosses,
        })
    }

    /// Whether the wrap-around mode is on.
    pub fn wrapped(&self) -> bool {
        self.wrap.is_some()
    }

    /// A cell's start value in the wrap-around mode (0 otherwise).
    pub(super) fn base(&self, cell: usize) -> i64 {
        self.wrap
            .as_ref()
            .and_then(|w| w.base.get(cell).copied())
            .unwrap_or(0)
    }

    /// The value a cell holds, from the sum its state keeps (the int32 wrap of the start
    /// value plus that sum in the wrap-around mode; the sum itself otherwise).
    pub fn held(&self, cell: usize, sum: i64) -> i64 {
        match self.wrap {
            Some(_) => wrap32(self.base(cell).wrapping_add(sum)),
            None => sum,
        }
    }

    /// The threshold a wait compares with (cast to int32 in the wrap-around mode).
    pub fn compared(&self, k: i64) -> i64 {
        match self.wrap {
            Some(_) => wrap32(k),
            None => k,
        }
    }

    /// Whether a wait `cmp k` passes on a cell whose state keeps the sum `sum`.
    pub fn wait_holds(&self, cell: usize, cmp: CmpOp, sum: i64, k: i64) -> bool {
        cmp.holds(self.held(cell, sum), self.compared(k))
    }

    /// Whether the wrap-around mode lets a monotonic cell's int32 value wrap (no fault).
    pub(super) fn wraps(&self, cell: usize) -> bool {
        self.wrap.is_some() && self.is_monotonic(cell)
    }

    /// Sets the `reused` value cells to what the call before the window wrote.
    pub(super) fn seed_cells(&self, s: &mut State) {
        let Some(w) = &self.wrap else { return };
        for &(cell, v) in &w.init {
            if cell < s.cells.len() {
                super::state::cell_mut(&mut s.cells, cell).value = v;
            }
        }
    }
}

impl Machine<'_> {
    /// Whether a wait on `cell` needing `need` credits in all (the threshold, from the
    /// first call on) in window call `call` counts an earlier call's credits by design: its
    /// threshold lags behind by whole calls (`signal.rs`, `lag_target`), so in the
    /// window's first calls it is reached by credits of calls before the window.
    fn lags(&self, cell: usize, need: i64, call: u16) -> bool {
        let per_call = self.mono_per_call();
        let Some(n) = per_call
            .and_then(|v| v.get(cell).copied())
            .filter(|n| *n > 0)
        else {
            return false;
        };
        (need + n - 1) / n - 1 < self.first_call + i64::from(call)
    }

    /// The finding of a wait on a credit cell that passes in the wrap-around mode although
    /// the credits its threshold asks for have not all arrived: the int32 value wrapped
    /// (or the cell's start value alone reached the threshold). `sum` is the credits of
    /// the simulated calls the cell's state keeps.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn wrapped_pass(
        &self,
        p: usize,
        call: u16,
        cell: usize,
        cmp: CmpOp,
        k: i64,
        sum: i64,
        stmt: u32,
    ) -> Option<crate::report::Finding> {
        if self.wrap.is_none() || !self.is_credit(cell) {
            return None;
        }
        let base = self.base(cell);
        let (total, need) = (
            base.checked_add(sum)?,
            match cmp {
                CmpOp::Ge | CmpOp::Eq => k,
                CmpOp::Gt => k.checked_add(1)?,
                _ => return None,
            },
        );
        let desc = format!(
            "{} (call {}, call index {}) passed `{}` ({} {} {} as int32, value {})",
            self.proc_name(p),
            super::fmt_call(call),
            self.first_call + i64::from(call),
            self.code.stmts[stmt as usize].text,
            self.cell_name(cell),
            cmp.as_str(),
            self.compared(k),
            self.held(cell, sum)
        );
        let (msg, note) = if !cmp.holds(total, k) {
            (
                format!(
                    "{desc} only because int32 wrapped: the cell has received {total} credits in all, the threshold is {k}"
                ),
                "past INT32_MAX the counter and the threshold wrap to negative values, so the comparison no longer orders calls: the overflow horizon is shorter than the calls the protocol may make",
            )
        } else if base > 0 && need > 0 && need <= base && !self.lags(cell, need, call) {
            (
                format!(
                    "{desc} on credits of calls before call index {}: the cell held {} when the window started, already {k} or more",
                    self.first_call,
                    self.held(cell, 0)
                ),
                "the threshold grows slower than the credits, so a later call's wait passes on an earlier call's credits",
            )
        } else {
            return None;
        };
        Some(crate::report::Finding::new("sim::stale-pass", msg, self.stmt_span(stmt)).note(note))
    }
}
