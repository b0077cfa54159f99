//! `collc verify --explain`: the reviewer's per-cell credit table. The rows (the
//! shapes of the cells: credits, waits, reset) come from the same abstract execution
//! as the proofs, at every enumerated configuration; the number of cells of each row
//! is derived symbolically with the cost walk (`crate::cost::cells`: the cells touched
//! by exactly the statements that touch the row's cells, for every P) and checked
//! against the enumerated counts. A row whose count has no closed form says why and
//! lists its enumerated values.

use crate::check::{chain, contrib};
use crate::cost::cells::{at, At, Touches};
use crate::exec::{self, EvKind, Plan, Run, Section, Stop};
use crate::sym::{Atom, Lin, Printer};
use collc_spec::ir::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Per configuration, how many cells a row has.
type Points = Vec<(Vec<(VarId, i64)>, i64)>;

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
    /// The cells count as derived (none when it has no closed form).
    #[serde(skip)]
    pub cells_count: Option<crate::cost::alg::Poly>,
    /// The sets of statements (by span) whose cells make up the row.
    #[serde(skip)]
    pub touched_by: Vec<BTreeSet<At>>,
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

/// The statements (by span) whose events touch a cell: which cells a row's count
/// derivation sums.
type Touched = (SignalId, BTreeSet<At>);

/// The per-cell credit table: cells grouped by (credits, waits, reset).
pub fn explain(p: &Protocol) -> Result<CreditTable, String> {
    type Key = (String, String, String, String, String);
    let mut counts: BTreeMap<Key, Points> = BTreeMap::new();
    let mut shapes: BTreeMap<Touched, BTreeSet<Key>> = BTreeMap::new();
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
            let touched = evs.iter().map(|e| at(run.events[*e].span)).collect();
            shapes
                .entry((cell.signal, touched))
                .or_default()
                .insert(key.clone());
            *here.entry(key).or_insert(0) += 1;
        }
        for (k, n) in here {
            counts.entry(k).or_default().push((run.config.clone(), n));
        }
    })?;
    let mut touches: BTreeMap<SignalId, Touches> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut derived = true;
    for (key, mut pts) in counts {
        // Configurations where the row has no cells count 0.
        for c in &configs {
            if !pts.iter().any(|x| &x.0 == c) {
                pts.push((c.clone(), 0));
            }
        }
        pts.sort();
        let (cells, cells_count) = match row_cells(p, &key, &shapes, &mut touches, &pts) {
            Ok(f) => (crate::cost::show::Names { p }.formula(&f), Some(f)),
            Err(why) => {
                derived = false;
                (format!("no closed form ({why}): {}", values(p, &pts)), None)
            }
        };
        let touched_by = shapes
            .iter()
            .filter(|(_, keys)| keys.contains(&key))
            .map(|((_, spans), _)| spans.clone())
            .collect();
        let (signal, credits, waits, reset, net) = key;
        rows.push(CreditRow {
            signal,
            cells,
            credits,
            waits,
            reset,
            net,
            cells_count,
            touched_by,
        });
    }
    let mut method = plan.describe(p);
    if derived {
        method.push_str("; cells per call derived for every P");
    }
    Ok(CreditTable {
        protocol: p.name.clone(),
        method,
        rows,
    })
}

/// A row's cells per call: the sum, over the sets of statements that touch its
/// cells, of the cells touched by exactly that set, checked at every enumerated
/// configuration where the formula's variables have values.
fn row_cells<'a, K: Ord>(
    p: &'a Protocol,
    key: &K,
    shapes: &BTreeMap<Touched, BTreeSet<K>>,
    touches: &mut BTreeMap<SignalId, Touches<'a>>,
    pts: &Points,
) -> Result<crate::cost::alg::Poly, String> {
    let mut total = crate::cost::alg::Poly::default();
    for ((sig, spans), keys) in shapes {
        if !keys.contains(key) {
            continue;
        }
        if keys.len() > 1 {
            return Err("the cells one set of statements touches differ in shape".into());
        }
        let t = touches.entry(*sig).or_insert_with(|| Touches::new(p, *sig));
        let set = spans
            .iter()
            .map(|s| t.stmts.iter().position(|x| at(*x) == *s))
            .collect::<Option<BTreeSet<usize>>>()
            .ok_or("an event without its statement")?;
        total = total.add(&t.cells(&set)?);
    }
    let names = crate::cost::show::Names { p };
    let shown = names.formula(&total);
    for (cfg, n) in pts {
        if let Some(v) = crate::cost::value_at(p, &total, cfg) {
            if v != *n {
                let at: Vec<String> = cfg
                    .iter()
                    .map(|(v, x)| format!("{} = {x}", p.var_name(*v)))
                    .collect();
                return Err(format!(
                    "the derived `{shown}` gives {v}, the enumeration {n} at {}",
                    at.join(", ")
                ));
            }
        }
    }
    Ok(total)
}

/// Enumerated values, `P=1: 0; P=2: 2; ...` (the other enumerated parameters named
/// when they vary).
fn values(p: &Protocol, pts: &Points) -> String {
    pts.iter()
        .map(|(cfg, n)| {
            let at: Vec<String> = cfg
                .iter()
                .map(|(v, x)| format!("{}={x}", p.var_name(*v)))
                .collect();
            format!("{}: {n}", at.join(","))
        })
        .collect::<Vec<_>>()
        .join("; ")
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
