//! The overflow horizon with `P` symbolic: the per-call credit `N` of every monotonic
//! cell (the generic cell's net credit per call, proved equal to its thresholds' growth
//! by `credit-balance`) is maximised over every cell, every `P` of the declared domain
//! and every parameter by Z3 (a binary search on "`N <= M` for every cell": the largest
//! `M` refuted is attained, its counterexample gives the smallest `P` attaining it). The
//! formula states `N(P)`: the generic cell's credit with the cell fixed at the
//! maximising cell (a constant or `P - k` coordinate), kept only when Z3 proves it an
//! upper bound of every cell's credit for every `P`; otherwise the maximum itself.

use super::Ctx;
use crate::engine::smt::{Answer, Prop};
use crate::engine::sym::{Lin, Printer};
use collc_grammar::Span;
use collc_spec::ir::{CmpOp, SignalId};

/// The horizon derived with `P` symbolic.
#[derive(Clone, Debug)]
pub struct Horizon {
    /// The signal whose cells grow fastest.
    pub signal: String,
    /// A statement crediting it.
    pub span: Span,
    /// `N(P)`, an upper bound of every cell's per-call credit at `P` (source syntax).
    pub per_call: String,
    /// The largest per-call credit over the declared domain (attained).
    pub max: i64,
    /// The parameters (P first) where it is attained, smallest first.
    pub at: Vec<(String, i64)>,
    /// A `>=`/`>` wait on a monotonic cell, if any.
    pub ge_wait: Option<Span>,
    /// Z3 queries made.
    pub z3: u64,
}

impl Ctx<'_> {
    pub(super) fn ask(&mut self, prop: Prop) -> Answer {
        self.stats.z3 += 1;
        let q = self.limit(super::QUERY_RLIMIT);
        let none = |_: &mut crate::engine::smt::Tr| Vec::new();
        self.smt.check(self.p, &self.run, &[], &none, &prop, q)
    }

    /// The largest value of `net` (and a model attaining it), by binary search.
    fn maximum(&mut self, net: &Lin) -> Result<(i64, crate::engine::sym::Assign), String> {
        let mut hi = self
            .run
            .syms
            .ub(net)
            .ok_or("a per-call credit without an upper bound")?;
        let mut lo = self.run.syms.lb(net).unwrap_or(0).min(hi);
        // Invariant: net <= hi for all; some model has net >= lo.
        let mut witness = None;
        while lo <= hi {
            let mid = lo + (hi - lo) / 2;
            // Is `net <= mid - 1` refuted (some cell reaches mid)?
            let below = Lin::k(mid - 1).sub(net).ok_or("arithmetic overflow")?;
            match self.ask(Prop::Ge0(below)) {
                Answer::Refuted(a) => {
                    witness = Some((mid, a));
                    lo = mid + 1;
                }
                Answer::Valid => hi = mid - 1,
                Answer::Unknown(_, r) => return Err(r),
            }
        }
        let (m, a) = witness.ok_or("no cell receives credits")?;
        // The search ended at the largest `mid` refuted: re-ask at it for the model with the
        // smallest parameters (the one kept may come from a smaller `mid`).
        let below = Lin::k(m - 1).sub(net).ok_or("arithmetic overflow")?;
        match self.ask(Prop::Ge0(below)) {
            Answer::Refuted(b) => Ok((m, b)),
            _ => Ok((m, a)),
        }
    }

    /// The horizon of the monotonic cells whose per-call credits `credit-balance` closed.
    pub(super) fn symbolic_horizon(&mut self) -> Result<Option<Horizon>, String> {
        let cells: Vec<(SignalId, Lin)> = self.horizon.clone();
        let mut best: Option<Horizon> = None;
        let start = self.stats.z3;
        for (s, net) in cells {
            let (max, a) = self.maximum(&net)?;
            if best.as_ref().is_some_and(|b| b.max >= max) {
                continue;
            }
            let per_call = self.bound_formula(&net, max, &a)?;
            let mut at: Vec<(String, i64)> = Vec::new();
            let world = a.params.get(&self.p.world).copied();
            at.extend(world.map(|w| (self.p.var_name(self.p.world).to_string(), w)));
            let mut rest: Vec<_> = a
                .params
                .iter()
                .filter(|(v, _)| **v != self.p.world && Some(**v) != self.p.call)
                .map(|(v, x)| (self.p.var_name(*v).to_string(), *x))
                .collect();
            rest.sort();
            at.extend(rest);
            let span = self
                .b
                .events
                .iter()
                .find(|e| e.signal == s && e.is_add())
                .map_or(self.p.signals[s].span, |e| e.span);
            best = Some(Horizon {
                signal: self.p.signals[s].name.clone(),
                span,
                per_call,
                max,
                at,
                ge_wait: None,
                z3: 0,
            });
        }
        if let Some(h) = best.as_mut() {
            h.ge_wait = self
                .a
                .events
                .iter()
                .find(|e| {
                    self.p.signals[e.signal].monotonic
                        && matches!(
                            e.kind,
                            super::extract::PKind::Wait {
                                cmp: CmpOp::Ge | CmpOp::Gt,
                                ..
                            }
                        )
                })
                .map(|e| e.span);
            h.z3 = self.stats.z3 - start;
        }
        Ok(best)
    }

    /// `N(P)`: `net` at the maximising cell, its coordinates as constants or `P - k`,
    /// when Z3 proves it bounds every cell for every `P`; else the constant maximum.
    fn bound_formula(
        &mut self,
        net: &Lin,
        max: i64,
        a: &crate::engine::sym::Assign,
    ) -> Result<String, String> {
        let world = self.world.clone();
        let pw = a.params.get(&self.p.world).copied();
        let mut map = super::solve::Map::new();
        for x in self.cell_atoms(net) {
            let Some(v) = a.atoms.get(&x).copied() else {
                continue;
            };
            let by = match pw {
                Some(pw) if v == pw - 1 && v > 0 => {
                    world.add(&Lin::k(-1)).ok_or("arithmetic overflow")?
                }
                _ => Lin::k(v),
            };
            map.insert(x, by);
        }
        let c = super::solve::lin(&mut self.run.syms, net, &map).ok_or("arithmetic overflow")?;
        let bound = c.sub(net).ok_or("arithmetic overflow")?;
        let only_indicators = c.t.iter().all(|(x, _)| {
            matches!(
                self.run.syms.atoms[*x as usize],
                crate::engine::sym::Atom::Ind(_)
            )
        });
        let general = !only_indicators
            && !map.is_empty()
            && matches!(self.ask(Prop::Ge0(bound)), Answer::Valid);
        let shown = if general { c } else { Lin::k(max) };
        Ok(Printer {
            syms: &self.run.syms,
            p: self.p,
        }
        .lin(&shown))
    }

    /// The fresh cell atoms (`generic_cell`) `net` mentions.
    fn cell_atoms(&self, net: &Lin) -> Vec<crate::engine::sym::AtomId> {
        let known: Vec<crate::engine::sym::AtomId> = [&self.a, &self.b]
            .iter()
            .flat_map(|p| {
                std::iter::once(p.me)
                    .chain(p.blk)
                    .chain(p.loops.iter().map(|l| l.atom))
            })
            .collect();
        let mut out: Vec<crate::engine::sym::AtomId> = self
            .run
            .syms
            .deps(net)
            .into_iter()
            .filter(|x| {
                !known.contains(x)
                    && matches!(
                        self.run.syms.atoms[*x as usize],
                        crate::engine::sym::Atom::Iter(_)
                    )
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}
