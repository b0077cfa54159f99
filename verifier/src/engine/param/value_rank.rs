//! Waits on value signals in the progress ranking (README, "Progress", value waits).
//!
//! A wait on an `as value` cell (`wait sense[0] == (call + 1) % 2`) is not reached by a
//! count of credits but by the Set that writes the awaited value. It is ranked like a
//! credit wait, with the Sets in place of the credits:
//!
//! 1. *The Set happens before it*: the executions of Set statements (pass B) that write
//!    the wait's cell at ranking points (level, program point) before the wait, counted
//!    in closed form as `credit-balance` sums credits (each execution counts 1), are at
//!    least 1 on every execution of the wait (Z3, every `P`, rank and call index).
//! 2. *It writes the awaited value*: every Set that reaches the cell writes a value the
//!    wait's comparison accepts (`value cmp threshold`, under both guards), or is ordered
//!    before every Set that does, in the same call (`value_order.rs`: a clear before the
//!    Set it makes room for); only the Sets of the awaited value are counted in (1).
//! 3. *Nothing else changes the cell before the read*: `value-signal` proved with `P`
//!    symbolic ([`super::value`]): Set only, one Set per cell per call, and a `reused`
//!    cell's next-call Set ordered after the read.
//!
//! In a state where some rank waits forever, the waiting rank at the smallest
//! (call, level, point) on a value cell then finds the Set of its call done (its writer
//! is at a later point, in a later call or finished), not overwritten (3): the awaited
//! value (2) is in the cell, so it can move. A wait that is not shown reached is raised
//! above the Sets on its signal as a credit wait is raised above the credits.

use super::extract::{PEv, PKind};
use super::oblig::{Point, Side};
use super::solve::{self, GLin, Map};
use super::{Ctx, Outcome, Proof};
use crate::engine::smt::Prop;
use crate::engine::sym::{union, CondV, Lin};
use collc_spec::ir::*;
use std::time::Instant;

fn ov() -> String {
    "arithmetic overflow".into()
}

impl Ctx<'_> {
    /// Conditions 1 and 2 for the value wait `w` (pass A) at ranking point `at`.
    pub(super) fn value_reached(&mut self, w: &PEv, at: &Point) -> Result<(), String> {
        let PKind::Wait { cmp, thr } = w.kind.clone() else {
            return Err("not a wait".into());
        };
        let name = self.p.signals[w.signal].name.clone();
        let writes: Vec<PEv> = self
            .b
            .events
            .iter()
            .filter(|e| e.signal == w.signal && matches!(e.kind, PKind::Notify { .. }))
            .cloned()
            .collect();
        if writes.iter().any(|e| !e.is_set()) {
            return Err(format!("an AtomicAdd on the value signal `{name}`"));
        }
        let mut count: GLin = Vec::new();
        let mut awaited = Vec::new();
        let mut earlier = Vec::new();
        for e in &writes {
            let saved = self.stats.clone();
            match self.writes_awaited(w, e, cmp, &thr) {
                Ok(()) => awaited.push(e.clone()),
                Err(r) => {
                    self.stats = saved;
                    earlier.push((e.clone(), r));
                }
            }
        }
        // A Set that does not write the awaited value is ordered before every one that does.
        for (e, r) in &earlier {
            let x = self
                .twin_a(e)
                .ok_or("a Set without its copy in the other pass")?;
            if awaited.is_empty() {
                return Err(format!(
                    "no Set to `{name}` is shown to write the value its wait awaits ({r})"
                ));
            }
            for f in &awaited {
                self.set_before(&x, f, None).map_err(|o| {
                    format!("a Set to `{name}` is not shown to write the value its wait awaits ({r}), nor ordered before the Sets that do ({o})")
                })?;
            }
        }
        for e in &awaited {
            let mut once = e.clone();
            once.kind = PKind::Notify {
                op: NotifyOp::AtomicAdd,
                value: Some(Lin::k(1)),
            };
            count.extend(self.before(&once, &w.owner, &w.index, at)?);
        }
        let n = solve::flat(&mut self.run.syms, &count).ok_or_else(ov)?;
        let d = n.add(&Lin::k(-1)).ok_or_else(ov)?;
        self.holds(&w.guard, Prop::Ge0(d)).map_err(|r| {
            format!("a wait on the value signal `{name}` is not shown reached by a Set at an earlier program point ({r})")
        })
    }

    /// Condition 2: Set `e` (pass B), where it reaches `w`'s cell, writes a value that
    /// passes `w`.
    fn writes_awaited(&mut self, w: &PEv, e: &PEv, cmp: CmpOp, thr: &Lin) -> Result<(), String> {
        let Some((map, g, _)) = self.reach(Side::B, e, &w.owner, &w.index, &Map::new(), &[])?
        else {
            self.stats.items += 1;
            self.stats.literal += 1;
            return Ok(());
        };
        let PKind::Notify { value: Some(v), .. } = &e.kind else {
            return Err("a Set value that cannot be evaluated symbolically".into());
        };
        let v = solve::lin(&mut self.run.syms, v, &map).ok_or_else(ov)?;
        let ok = self.run.syms.cmp(cmp, &v, thr).ok_or_else(ov)?;
        let both = union(&w.guard, &g);
        match self.run.syms.not(ok) {
            CondV::Const(false) => {
                self.stats.items += 1;
                self.stats.literal += 1;
                Ok(())
            }
            CondV::Const(true) => self.holds(&Vec::new(), Prop::Never(both)),
            CondV::Sym(bad) => self.holds(&Vec::new(), Prop::Never(union(&both, &vec![bad]))),
        }
    }

    /// True when some wait reads a value signal (the ranking then relies on condition 3).
    fn waits_on_values(&self) -> bool {
        self.a.events.iter().any(|e| {
            matches!(e.kind, PKind::Wait { .. })
                && self.p.signals[e.signal].kind == SignalKind::Value
        })
    }
}

/// Condition 3: a ranking that ordered value waits (`deadlock` closed as `r`) stands only
/// with `value-signal` proved with `P` symbolic; `out` holds the credit obligations
/// `value-signal` itself relies on.
pub(super) fn with_value_signal(
    cx: &Ctx,
    out: &Outcome,
    r: Result<Proof, String>,
) -> Result<Proof, String> {
    if r.is_err() || !cx.waits_on_values() {
        return r;
    }
    // The ordering of several Sets per call may rest on hops on self-clearing cells.
    if cx.several_sets() {
        let needs = ["credit-balance", "op-exclusivity", "stale-credit"];
        if let Some((dep, why)) = needs.iter().find_map(|d| out.open(d).map(|w| (d, w))) {
            return Err(format!(
                "a value signal is Set several times per call, ordered by credit chains that need the reuse theorem, and {dep} is not proved with P symbolic ({why})"
            ));
        }
    }
    let left = cx.deadline.saturating_duration_since(Instant::now());
    match super::value::prove(cx.p, out, left) {
        Ok(_) => r,
        Err(why) => Err(format!(
            "waits on value signals are ranked by their Sets, and value-signal is not proved with P symbolic ({why})"
        )),
    }
}
