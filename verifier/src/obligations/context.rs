//! What the obligations of the enumerated route share on one configuration: the facts
//! computed once ([`Facts`]: the monotonic reduction, the events by cell, the classes of
//! identical cells), the query context ([`Ctx`]: literal arithmetic first, then Z3, and the
//! parameters and contributions a finding reports), and each obligation's evidence as it
//! accumulates over the configurations ([`Acc`]).

use crate::engine::events::{cell_name, contrib, value_of, CellEvents, CellIndex};
use crate::engine::exec::{Cell, EvKind, Plan, Run, Section};
use crate::engine::smt::{Answer, Prop, Smt, Tr};
use crate::engine::sym::{AtomId, Guard, Lin};
use crate::obligations::epoch::Growth;
use crate::report::evidence::Undecided;
use crate::report::{Contribution, Finding, Obligation, ParamValue};
use collc_grammar::Span;
use collc_spec::ir::Protocol;
use std::collections::BTreeMap;
use std::time::Instant;
use z3::ast::Bool;

/// One obligation's evidence over the configurations seen so far: its first violation (and
/// further ones of the same kind), why it is undecided (the first reason), and how many
/// checks were closed by literal arithmetic and by Z3.
pub(crate) struct Acc {
    pub(crate) obligation: Obligation,
    pub(crate) violation: Option<Finding>,
    pub(crate) extra: Vec<Finding>,
    pub(crate) unknown: Option<(Undecided, String, Option<Span>)>,
    pub(crate) literal: u64,
    pub(crate) z3: u64,
    pub(crate) items: u64,
    /// Per configuration, a value the obligation's finding lists (`garbage-credit`: the
    /// wasted remote atomics per call).
    pub(crate) points: Vec<(Vec<(collc_spec::ir::VarId, i64)>, String)>,
    deadline: Instant,
}

impl Acc {
    pub(crate) fn new(obligation: Obligation, deadline: Instant) -> Self {
        Acc {
            obligation,
            violation: None,
            extra: Vec::new(),
            unknown: None,
            literal: 0,
            z3: 0,
            items: 0,
            points: Vec::new(),
            deadline,
        }
    }
    /// The limits of one Z3 query: the deterministic resource limit, and this
    /// obligation's wall-clock cap.
    pub(crate) fn limit(&self) -> crate::engine::smt::Limit {
        crate::engine::smt::Limit {
            rlimit: crate::engine::smt::QUERY_RLIMIT,
            cap: self.deadline,
        }
    }
    pub(crate) fn done(&self) -> bool {
        self.violation.is_some()
    }
    /// Undecided: a form the route does not cover (the first reason is kept).
    pub(crate) fn unknown(&mut self, reason: String, span: Option<Span>) {
        self.undecided(Undecided::Form, reason, span);
    }
    /// Undecided for `why` (the first reason is kept).
    pub(crate) fn undecided(&mut self, why: Undecided, reason: String, span: Option<Span>) {
        if self.unknown.is_none() {
            self.unknown = Some((why, reason, span));
        }
    }
    /// An undecided query about one signal cell: its reason prefixed with the cell's name.
    pub(crate) fn undecided_at(
        &mut self,
        p: &Protocol,
        cell: &Cell,
        why: Undecided,
        reason: &str,
        span: Span,
    ) {
        self.undecided(why, format!("{}: {reason}", cell_name(p, cell)), Some(span));
    }
    pub(crate) fn timed_out(&mut self) -> bool {
        if Instant::now() >= self.deadline {
            self.undecided(
                Undecided::Clock,
                "timeout: the obligation's time budget (--timeout-ms) was spent".into(),
                None,
            );
            true
        } else {
            false
        }
    }
    /// Whether to go on with this obligation on the next configuration (not violated, not
    /// out of time; records the timeout).
    pub(crate) fn open(&mut self) -> bool {
        !self.done() && !self.timed_out()
    }
}

/// One class of cells whose events are identical up to the names of the actors: every
/// check gives them identical answers, so one representative is checked.
pub(crate) struct Rep {
    /// The representative.
    pub(crate) cell: Cell,
    /// Its events by kind.
    pub(crate) ev: CellEvents,
    /// How many cells the class holds.
    pub(crate) weight: u64,
}

/// The facts of one configuration every obligation reads, computed once.
pub(crate) struct Facts {
    /// Each monotonic cell's wait thresholds' growth per call (the thresholds in the run
    /// are reduced, `crate::obligations::epoch::reduce`).
    pub(crate) growth: Growth,
    /// Every cell's events.
    pub(crate) cells: CellIndex,
    /// One representative per class of identical cells, in cell order.
    pub(crate) reps: Vec<Rep>,
}

impl Facts {
    /// The facts of `run`; reduces its monotonic thresholds first. `Err`: a form outside
    /// the monotonic reduction, with its reason.
    pub(crate) fn of(p: &Protocol, run: &mut Run) -> Result<Facts, (String, Span)> {
        let growth = crate::obligations::epoch::reduce(p, run)?;
        let cells = CellIndex::of(run);
        let reps = crate::obligations::classes::representatives(run, &cells);
        Ok(Facts {
            growth,
            cells,
            reps,
        })
    }
}

/// The query context of one configuration.
pub(crate) struct Ctx<'a> {
    pub(crate) p: &'a Protocol,
    pub(crate) plan: &'a Plan,
    pub(crate) smt: &'a mut Smt,
    pub(crate) facts: &'a Facts,
}

impl Ctx<'_> {
    /// Literal first, then Z3.
    pub(crate) fn prove(
        &mut self,
        run: &mut Run,
        acc: &mut Acc,
        guard: &Guard,
        frames: &[u32],
        prop: Prop,
    ) -> Answer {
        let lit = match &prop {
            Prop::Ge0(l) => {
                let l2 = run.syms.assume(guard, l);
                run.syms.nonneg(&l2)
            }
            Prop::Eq0(l) => run.syms.assume(guard, l).is_zero(),
            Prop::Never(_) | Prop::Equiv(..) => false,
        };
        if lit {
            acc.literal += 1;
            return Answer::Valid;
        }
        acc.z3 += 1;
        let trips: Vec<Lin> = frames
            .iter()
            .map(|f| run.frames[*f as usize].trip.clone())
            .collect();
        let g = guard.clone();
        let extra = move |tr: &mut Tr| -> Vec<Bool> {
            let mut v = vec![tr.guard(&g)];
            for t in &trips {
                v.push(tr.lin(t).ge(1));
            }
            v
        };
        self.smt.check(self.p, run, &[], &extra, &prop, acc.limit())
    }

    /// Some assignment of the configuration (the default one when Z3 gives none).
    pub(crate) fn any(&mut self, run: &Run, acc: &Acc) -> crate::engine::sym::Assign {
        match self.smt.check(
            self.p,
            run,
            &[],
            &|_| Vec::new(),
            &Prop::Never(Vec::new()),
            acc.limit(),
        ) {
            Answer::Refuted(a) => a,
            _ => crate::engine::sym::Assign::default(),
        }
    }

    pub(crate) fn params(&self, run: &Run, a: &crate::engine::sym::Assign) -> Vec<ParamValue> {
        let mut out: Vec<ParamValue> = run
            .config
            .iter()
            .map(|(v, x)| ParamValue {
                name: self.p.var_name(*v).to_string(),
                value: *x,
            })
            .collect();
        for v in &self.plan.symbolic {
            let value = a
                .params
                .get(v)
                .copied()
                .or_else(|| run.syms.param_bounds.get(v).map(|b| b.0))
                .unwrap_or(0);
            out.push(ParamValue {
                name: self.p.var_name(*v).to_string(),
                value,
            });
        }
        out
    }

    /// Values of the loop variables of the frames (as parameter-like lines).
    pub(crate) fn rounds(
        &self,
        run: &Run,
        frames: &[u32],
        a: &crate::engine::sym::Assign,
    ) -> Vec<ParamValue> {
        let mut out = Vec::new();
        for f in frames.iter().rev() {
            let fr = &run.frames[*f as usize];
            let Some(j) = a.atoms.get(&fr.iter) else {
                continue;
            };
            let lo = run.syms.eval(&fr.lo, a).unwrap_or(0);
            let step = run.syms.eval(&fr.step, a).unwrap_or(1);
            let crate::engine::sym::Atom::Iter(n) = run.syms.atoms[fr.iter as usize] else {
                continue;
            };
            let var = run.syms.loops[n as usize].var;
            out.push(ParamValue {
                name: format!("{} (loop variable)", self.p.var_name(var)),
                value: lo + step * j,
            });
        }
        out
    }

    /// Completes an assignment: parameters and array elements absent from the query
    /// take their lowest value, iterations 0 (what the reported parameters say).
    fn complete(&self, run: &Run, a: &crate::engine::sym::Assign) -> crate::engine::sym::Assign {
        let mut a = a.clone();
        for v in &self.plan.symbolic {
            if !a.params.contains_key(v) {
                let lo = run.syms.param_bounds.get(v).map_or(0, |b| b.0);
                a.params.insert(*v, lo);
            }
        }
        for (id, atom) in run.syms.atoms.iter().enumerate() {
            let id = id as AtomId;
            match atom {
                crate::engine::sym::Atom::Elem(arr, _, _) if !a.atoms.contains_key(&id) => {
                    a.atoms.insert(id, self.p.arrays[*arr].domain.0);
                }
                crate::engine::sym::Atom::Iter(_) if !a.atoms.contains_key(&id) => {
                    a.atoms.insert(id, 0);
                }
                _ => {}
            }
        }
        a
    }

    /// What each statement of `evs` contributes under `a` (statements that contribute
    /// nothing are left out).
    pub(crate) fn contributions(
        &self,
        run: &mut Run,
        evs: &[usize],
        a: &crate::engine::sym::Assign,
    ) -> Vec<Contribution> {
        let a = &self.complete(run, a);
        type Share = (Section, i64, i64, bool);
        let mut by: BTreeMap<(usize, usize, bool), Share> = BTreeMap::new();
        for &e in evs {
            let ev = &run.events[e];
            let notify = matches!(ev.kind, EvKind::Notify { .. });
            let key = (ev.span.start, ev.span.end, notify);
            let sec = ev.section;
            let val = value_of(ev);
            let cnt = contrib(run, e, &Lin::k(1))
                .ok()
                .and_then(|l| run.syms.eval(&l, a));
            let tot = contrib(run, e, &val)
                .ok()
                .and_then(|l| run.syms.eval(&l, a));
            let ent = by.entry(key).or_insert((sec, 0, 0, notify));
            ent.1 += cnt.unwrap_or(0);
            ent.2 += tot.unwrap_or(0);
        }
        by.into_iter()
            .filter(|(_, v)| v.1 != 0)
            .map(|((s, e, _), (sec, cnt, tot, notify))| Contribution {
                span: Span::new(s, e),
                line: 0,
                section: match sec {
                    Section::Body => "body".into(),
                    Section::Epilogue => "epilogue".into(),
                },
                role: if notify {
                    "notify".into()
                } else {
                    "wait".into()
                },
                count: cnt,
                total: tot,
            })
            .collect()
    }
}
