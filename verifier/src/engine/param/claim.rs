//! Solving a statement's cell equations with the claimed rules of [`super::invert`]:
//! the exact rules first; when they leave a variable free, each split (lowest, then
//! highest set bit) is tried and its solution kept only when Z3 proves every claim it
//! made, for every execution of the statement (its path condition and the cell
//! equations, with the variables solved before the claim). Claims are cached by their
//! hypotheses, so a solution is paid for once per statement and cell shape.

use super::invert::{Mode, Split};
use super::solve::{self, Solution};
use super::Ctx;
use crate::engine::smt::Prop;
use crate::engine::sym::{AtomId, CondV, Formula, Guard, Lin};
use std::collections::HashMap;

fn ov() -> String {
    "arithmetic overflow".into()
}

impl Ctx<'_> {
    /// Solves `eqs` for `vars` under the path condition `guard` (`None`: false).
    pub(super) fn solve_cell(
        &mut self,
        vars: &[AtomId],
        trips: &HashMap<AtomId, Lin>,
        eqs: &[(Lin, Lin)],
        guard: Option<Guard>,
    ) -> Result<Solution, String> {
        let s = &mut self.run.syms;
        let exact = solve::solve(s, vars, trips, eqs, Mode::Exact).ok_or_else(ov)?;
        let Some(guard) = guard else {
            return Ok(exact);
        };
        if exact.free.is_empty() {
            return Ok(exact);
        }
        // The cell equations as hypotheses.
        let mut hyp = guard;
        for (l, r) in eqs {
            let d = l.sub(r).ok_or_else(ov)?;
            match self.run.syms.formula(Formula::Eq0(d)) {
                CondV::Const(true) => {}
                CondV::Const(false) => return Ok(exact),
                CondV::Sym(c) => hyp.push(c),
            }
        }
        for split in [Split::Low, Split::High] {
            let s = &mut self.run.syms;
            let Some(sol) = solve::solve(s, vars, trips, eqs, Mode::Claimed(split)) else {
                continue;
            };
            if sol.free.len() >= exact.free.len() || sol.claims.is_empty() {
                continue;
            }
            let mut ok = true;
            for (c, before) in &sol.claims {
                if !self.claim(&hyp, before, *c) {
                    ok = false;
                    break;
                }
            }
            if ok {
                return Ok(sol);
            }
        }
        Ok(exact)
    }

    /// Whether `claim` holds whenever `hyp` and `before` do (cached).
    fn claim(&mut self, hyp: &Guard, before: &[CondV], claim: CondV) -> bool {
        let mut g = hyp.clone();
        for c in before {
            match c {
                CondV::Const(true) => {}
                CondV::Const(false) => return true,
                CondV::Sym(id) => g.push(*id),
            }
        }
        let not = match self.run.syms.not(claim) {
            CondV::Const(false) => return true,
            CondV::Const(true) => return false,
            CondV::Sym(id) => id,
        };
        g.push(not);
        g.sort_unstable();
        g.dedup();
        if let Some(r) = self.claims.get(&g) {
            return *r;
        }
        // A claim is a lemma: its checks are not the obligation's.
        let (saved, named) = (self.stats.clone(), self.named.len());
        let r = self.holds(&Vec::new(), Prop::Never(g.clone())).is_ok();
        self.stats = saved;
        self.named.truncate(named);
        self.claims.insert(g, r);
        r
    }
}
