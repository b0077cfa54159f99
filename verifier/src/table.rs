//! `collc verify --explain`: the reviewer's per-cell credit table, computed from the
//! same abstract execution as the proofs; the cell counts are formulas in P
//! interpolated through, and checked at, every enumerated configuration (the cost
//! model, `collc cost`, derives its formulas symbolically instead: `crate::cost`).

use crate::check::{chain, contrib};
use crate::exec::{self, EvKind, Plan, Run, Section, Stop};
use crate::sym::{Atom, Lin, Printer};
use collc_spec::ir::*;
use serde::Serialize;
use std::collections::BTreeMap;

type Points = Vec<crate::poly::Point>;

/// Runs every configuration of the (possibly promoted) plan.
fn each_run(p: &Protocol, f: &mut dyn FnMut(&mut Run)) -> Result<Plan, String> {
    if exec::enumerated_world(p).is_none() {
        return Err(crate::check::enumeration_scope(p));
    }
    let mut plan = Plan::initial(p);
    loop {
        if plan.count(p) > exec::CONFIG_LIMIT {
            return Err(format!(
                "{} configurations to enumerate (limit {}); narrow the domains of the parameters that select cells",
                plan.count(p),
                exec::CONFIG_LIMIT
            ));
        }
        let mut need = None;
        let mut fail = None;
        let mut runs: Vec<Run> = Vec::new();
        exec::configs(p, &plan, &mut |cfg| match exec::run(p, cfg) {
            Ok(Some(r)) => {
                runs.push(r);
                true
            }
            Ok(None) => true,
            Err(Stop::Need(v, what, _)) => {
                need = Some((v, what));
                false
            }
            Err(Stop::Unsupported(m, _)) => {
                fail = Some(m);
                false
            }
            Err(Stop::Iter(_, what, _)) => {
                fail = Some(exec::symbolic_iteration(&what));
                false
            }
        });
        if let Some(m) = fail {
            return Err(format!("unsupported form: {m}"));
        }
        if let Some((v, what)) = need {
            plan.promote(p, &v)
                .map_err(|m| format!("{what} must be concrete: {m}"))?;
            continue;
        }
        for r in runs.iter_mut() {
            f(r);
        }
        return Ok(plan);
    }
}

/// One row of the credit table.
#[derive(Debug, Clone, Serialize)]
pub struct CreditRow {
    /// The signal.
    pub signal: String,
    /// How many cells have this row's shape, per call (formula in P).
    pub cells: String,
    /// Credits per cell and call (body AtomicAdds).
    pub credits: String,
    /// The owner's waits on the cell, in program order.
    pub waits: String,
    /// What the epilogue adds (the reset).
    pub reset: String,
    /// credits + reset.
    pub net: String,
}

/// The credit table of a protocol.
#[derive(Debug, Clone, Serialize)]
pub struct CreditTable {
    /// The collective.
    pub protocol: String,
    /// How the domain was covered.
    pub method: String,
    /// Rows.
    pub rows: Vec<CreditRow>,
}

fn waits_of(p: &Protocol, run: &Run, evs: &[usize]) -> String {
    let pr = Printer { syms: &run.syms, p };
    let mut out = Vec::new();
    let owner = evs
        .iter()
        .find(|e| matches!(run.events[**e].kind, EvKind::Wait { .. }))
        .map(|e| run.events[*e].actor);
    for &e in evs {
        let ev = &run.events[e];
        if Some(ev.actor) != owner {
            continue;
        }
        if let EvKind::Wait { cmp, thr } = &ev.kind {
            let mut s = format!("{} {}", cmp.as_str(), pr.lin(thr));
            for f in chain(run, ev).iter().rev() {
                let fr = &run.frames[*f as usize];
                if let Atom::Iter(n) = run.syms.atoms[fr.iter as usize] {
                    let var = p.var_name(run.syms.loops[n as usize].var);
                    s.push_str(&format!(" ({var} in 0..{})", pr.lin(&fr.trip)));
                }
            }
            out.push(s);
        }
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

/// The per-cell credit table: cells grouped by (credits, waits, reset).
pub fn explain(p: &Protocol) -> Result<CreditTable, String> {
    type Key = (String, String, String, String, String);
    let mut counts: BTreeMap<Key, Points> = BTreeMap::new();
    let mut configs: Vec<Vec<(VarId, i64)>> = Vec::new();
    let plan = each_run(p, &mut |run| {
        configs.push(run.config.clone());
        let mut cells: BTreeMap<exec::Cell, Vec<usize>> = BTreeMap::new();
        for (i, e) in run.events.iter().enumerate() {
            if let Some(c) = &e.cell {
                cells.entry(*c).or_default().push(i);
            }
        }
        let mut here: BTreeMap<Key, i64> = BTreeMap::new();
        for (cell, evs) in &cells {
            let mut credits = Lin::k(0);
            let mut reset = Lin::k(0);
            let mut sets = Vec::new();
            for &e in evs {
                let ev = run.events[e].clone();
                if let EvKind::Notify { op, value, .. } = &ev.kind {
                    match op {
                        NotifyOp::Set => sets.push(Printer { syms: &run.syms, p }.lin(value)),
                        NotifyOp::AtomicAdd => {
                            let c = contrib(run, e, value).unwrap_or_default();
                            if ev.section == Section::Body {
                                credits = credits.add(&c).unwrap_or(credits);
                            } else {
                                reset = reset.add(&c).unwrap_or(reset);
                            }
                        }
                    }
                }
            }
            let pr = Printer { syms: &run.syms, p };
            let mut cs = pr.lin(&credits);
            if !sets.is_empty() {
                cs = format!("{cs}; Set {}", sets.join(", "));
            }
            let net = credits.add(&reset).map(|n| pr.lin(&n)).unwrap_or_default();
            let key = (
                p.signals[cell.signal].name.clone(),
                cs,
                waits_of(p, run, evs),
                pr.lin(&reset),
                net,
            );
            *here.entry(key).or_insert(0) += 1;
        }
        for (k, n) in here {
            let mut m = BTreeMap::new();
            m.insert(String::new(), n);
            counts.entry(k).or_default().push((run.config.clone(), m));
        }
    })?;
    let mut rows = Vec::new();
    for ((signal, credits, waits, reset, net), mut pts) in counts {
        // Configurations where the row has no cells count 0.
        for c in &configs {
            if !pts.iter().any(|x| &x.0 == c) {
                pts.push((c.clone(), BTreeMap::new()));
            }
        }
        pts.sort_by(|a, b| a.0.cmp(&b.0));
        rows.push(CreditRow {
            signal,
            cells: crate::poly::formula_over_world(p, &pts),
            credits,
            waits,
            reset,
            net,
        });
    }
    Ok(CreditTable {
        protocol: p.name.clone(),
        method: plan.describe(p),
        rows,
    })
}

impl CreditTable {
    /// A plain-text table.
    pub fn render(&self) -> String {
        let head = [
            "signal",
            "cells per call",
            "credits/cell/call",
            "waits (owner, in order)",
            "reset",
            "net",
        ];
        let mut rows: Vec<[String; 6]> = vec![head.map(String::from)];
        for r in &self.rows {
            rows.push([
                r.signal.clone(),
                r.cells.clone(),
                r.credits.clone(),
                r.waits.clone(),
                r.reset.clone(),
                r.net.clone(),
            ]);
        }
        let mut w = [0usize; 6];
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut s = format!("credit table: {} ({})\n", self.protocol, self.method);
        for (n, r) in rows.iter().enumerate() {
            let line: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:<width$}", width = w[i]))
                .collect();
            s.push_str(line.join("  ").trim_end());
            s.push('\n');
            if n == 0 {
                let total: usize = w.iter().sum::<usize>() + 10;
                s.push_str(&"-".repeat(total));
                s.push('\n');
            }
        }
        s
    }
}
