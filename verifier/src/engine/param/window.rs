//! Credit windows in the parametric route (README "Credit windows"): a wait in round
//! `r` of a loop may pair with the writers' round `r - K` instead of round `r` (a
//! producer K chunks ahead of its consumer waits for the acknowledgement of chunk
//! `r - K`). When the same-round pairing of `stale-credit` is refuted, the lag is read
//! off the threshold as in the enumerated route (`crate::obligations::window`): with `B(r)` the
//! credits sent to the cell at program points before the wait of round `r` and `c` the
//! literal credits per round (`B(r + 1) - B(r)`), `K = ceil((B(r) - need + 1) / c)` — or,
//! when `B(r) - need + 1` is a formula whose constant and coefficients are multiples of `c`
//! (a window whose `K` is a launch parameter), `K = (B(r) - need + 1) / c`, symbolic.
//! Z3 then proves, for every round, rank and `P`, that the wait still needs a credit of
//! round `r - K` or later — `need(r) > B(r - K)` whenever round `r - K` exists — and
//! that it needs nothing (threshold `<= 0`, the window's first K rounds) when it does not.
//! A symbolic `K` must not read the wait's loop variables (a lag that grows with the
//! round pairs later waits with rounds an earlier wait already counted: no window).

use super::extract::PEv;
use super::oblig::Side;
use super::solve::{self, Map};
use super::Ctx;
use crate::engine::smt::Prop;
use crate::engine::sym::{union, AtomId, CondV, Lin};
use collc_spec::ir::CmpOp;

fn ov() -> String {
    "arithmetic overflow".into()
}

impl Ctx<'_> {
    /// `guard` with trivially true conditions that mention `ls` (so a model of it assigns
    /// every atom they read).
    fn probe(
        &mut self,
        guard: &crate::engine::sym::Guard,
        ls: &[&Lin],
    ) -> Result<crate::engine::sym::Guard, String> {
        let mut g = guard.clone();
        for l in ls {
            let f = crate::engine::sym::Formula::Ge0(l.add(&Lin::k(1 << 40)).ok_or_else(ov)?);
            g.push(self.run.syms.formula_raw(f));
        }
        g.sort_unstable();
        g.dedup();
        Ok(g)
    }

    /// `Ok` when the lag `k` of wait `w` is the same in every round: it reads no loop
    /// variable around the wait, or Z3 proves it unchanged from each iteration of such a
    /// loop to the next under the wait's guard (a term guarded by that guard cancels).
    fn invariant(&mut self, w: &PEv, k: &Lin) -> Result<(), String> {
        let loops: Vec<AtomId> = w
            .loops
            .iter()
            .map(|i| &self.a.loops[*i])
            .filter(|l| l.kind == super::extract::LoopKind::Num)
            .map(|l| l.atom)
            .collect();
        for l in loops {
            let s = &mut self.run.syms;
            if !crate::engine::sym::mentions(s, k, l) {
                continue;
            }
            let next: Map = [(l, Lin::atom(l).add(&Lin::k(1)).ok_or_else(ov)?)]
                .into_iter()
                .collect();
            let d = solve::lin(s, k, &next)
                .and_then(|x| x.sub(k))
                .ok_or_else(|| "a lag that reads its loop variable".to_string())?;
            self.holds(&w.guard, Prop::Eq0(d))?;
        }
        Ok(())
    }

    /// Closes the round pairing of wait `w` (round atom `r`, threshold `need`) as a
    /// credit window K rounds behind.
    pub(super) fn window_pair(&mut self, w: &PEv, need: &Lin, r: AtomId) -> Result<(), String> {
        let at = self.point(w, Side::A);
        let b = self.credit_before(w, &w.owner.clone(), &w.index.clone(), &at)?;
        let shift = |s: &mut crate::engine::sym::Syms, d: &Lin| -> Result<Lin, String> {
            let m: Map = [(r, Lin::atom(r).add(d).ok_or_else(ov)?)]
                .into_iter()
                .collect();
            solve::lin(s, &b, &m).ok_or_else(ov)
        };
        let next = shift(&mut self.run.syms, &Lin::k(1))?;
        let no_window = || {
            "no constant credit window: the credits per round or the credits a wait leaves out are not constant".to_string()
        };
        let left = b.sub(need).and_then(|x| x.add(&Lin::k(1))).ok_or_else(ov)?;
        let per = next.sub(&b).ok_or_else(ov)?;
        // The lag, read off one execution of the wait (a Z3 model of its guard); what is
        // proved below does not depend on how it was found.
        let probe = self.probe(&w.guard, &[&per, &left])?;
        let (c, m) = match (
            crate::engine::sym::literal(&per),
            crate::engine::sym::literal(&left),
        ) {
            (Some(c), Some(m)) => (c, m),
            _ => match self.ask(Prop::Never(probe)) {
                crate::engine::smt::Answer::Refuted(a) => {
                    let s = &self.run.syms;
                    (
                        s.eval(&per, &a).ok_or_else(no_window)?,
                        s.eval(&left, &a).ok_or_else(no_window)?,
                    )
                }
                other => return Err(format!("{} (probe: {other:?})", no_window())),
            },
        };
        if c <= 0 || m <= 0 {
            return Err(no_window());
        }
        // Every round of every execution of the wait sends the cell exactly `c` credits
        // (a wait whose cell nobody credits has no window, whatever one model says).
        let d = per.sub(&Lin::k(c)).ok_or_else(ov)?;
        self.holds(&w.guard, Prop::Eq0(d)).map_err(|e| {
            format!(
                "{}: the credits per round are not shown constant ({e})",
                no_window()
            )
        })?;
        // A lag that is a parameter (`t - K + 1` with `param K`): the credits left out are a
        // whole number of rounds in every configuration (constant and coefficients multiples
        // of `c`), so `K = left / c` symbolically; else the lag of the model. A `K` not
        // shown the same in every round (`wait ack >= t / K` leaves out `t - t / K + 1`
        // rounds) is no window: the model's literal lag is tried instead, which the proof
        // below refutes for a lag that grows.
        let k = match crate::engine::sym::literal(&left) {
            None if left.c % c == 0 && left.t.iter().all(|(_, x)| x % c == 0) => Lin {
                c: left.c / c,
                t: left.t.iter().map(|(a, x)| (*a, x / c)).collect(),
            },
            _ => Lin::k((m + c - 1) / c),
        };
        let k = match self.invariant(w, &k) {
            Ok(()) => self.run.syms.assume(&w.guard, &k),
            Err(_) => Lin::k((m + c - 1) / c),
        };
        let s = &mut self.run.syms;
        let back = shift(s, &Lin::k(0).sub(&k).ok_or_else(ov)?)?;
        let q = Lin::atom(r).sub(&k).ok_or_else(ov)?;
        let exists = s.cmp(CmpOp::Ge, &q, &Lin::k(0)).ok_or_else(ov)?;
        let absent = s.not(exists);
        let name = self.p.signals[w.signal].name.clone();
        for (cond, prop) in [
            (
                exists,
                Prop::Ge0(
                    need.sub(&back)
                        .and_then(|x| x.add(&Lin::k(-1)))
                        .ok_or_else(ov)?,
                ),
            ),
            (absent, Prop::Ge0(Lin::k(0).sub(need).ok_or_else(ov)?)),
        ] {
            let g = match cond {
                CondV::Const(false) => {
                    self.stats.items += 1;
                    self.stats.literal += 1;
                    continue;
                }
                CondV::Const(true) => w.guard.clone(),
                CondV::Sym(id) => union(&w.guard, &vec![id]),
            };
            self.holds(&g, prop).map_err(|e| {
                format!("a wait on `{name}` is not shown to pair with the writers' round {} behind (a credit window) ({e})", crate::engine::sym::Printer { syms: &self.run.syms, p: self.p }.lin(&k))
            })?;
        }
        Ok(())
    }
}
