//! `collc verify --explain`: the reviewer's per-cell credit table. The cells and their
//! shapes (credits, waits, reset) come from the same abstract execution as the proofs,
//! at every enumerated configuration; a row is a cell class — the cells touched by
//! exactly one set of statements — and rows that print the same are merged. Its cells
//! per call are derived symbolically with the cost walk (`crate::engine::cost::cells`: the cells
//! touched by exactly that set, for every P), and so are its credits and reset per cell
//! (each statement's amount on the cells it reaches) and its waits (the thresholds)
//! where the enumerated shapes vary with the configuration (a counter whose credits grow
//! with P): every derived value is checked against every enumerated configuration. A
//! column with no closed form says why and lists its enumerated values.

use crate::engine::cost::alg::Poly;
use crate::engine::cost::cells::{at, At, Touches};
use crate::engine::events::{chain, contrib, CellIndex};
use crate::engine::exec::{self, EvKind, Run, Section};
use crate::engine::sweep::{self, Visit};
use crate::engine::sym::{Atom, Lin, Printer};
use collc_spec::info::{Access, ProtocolInfo};
use collc_spec::ir::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Per configuration, how many cells a row has.
type Points = Vec<(Vec<(VarId, i64)>, i64)>;

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
    pub cells_count: Option<crate::engine::cost::alg::Poly>,
    /// The credits per cell and call as derived (none when not derived or not checked
    /// at every configuration).
    #[serde(skip)]
    pub credits_count: Option<crate::engine::cost::alg::Poly>,
    /// The reset per cell and call as derived (likewise).
    #[serde(skip)]
    pub reset_count: Option<crate::engine::cost::alg::Poly>,
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

/// A cell class: the signal and the statements (by span) whose events touch its cells.
/// Its cells per call, and where the enumerated shapes vary with the configuration
/// its credits, waits and reset, are derived with the cost walk.
type Class = (SignalId, BTreeSet<At>);

/// A row's printed columns: (signal, credits, waits, reset, net).
type Key = (String, String, String, String, String);

/// What one configuration shows of a class: its cells, their shapes, and (when every
/// cell of the class has one shape) the credits and reset as numbers, when literal.
#[derive(Default)]
struct Seen {
    cells: i64,
    /// Cells per shape.
    keys: BTreeMap<Key, i64>,
    amounts: BTreeSet<(Option<i64>, Option<i64>)>,
}

/// One enumerated configuration and what it shows of each class.
type Config = (Vec<(VarId, i64)>, BTreeMap<Class, Seen>);

/// A class's part of a row: its cells per call (or why not, with the enumerated
/// counts), the class, and its derived credits and reset per cell.
struct Part {
    cells: Result<Poly, (String, Points)>,
    class: Class,
    amounts: (Option<Poly>, Option<Poly>),
}

/// The per-cell credit table: one row per cell class, rows of equal columns merged.
pub fn explain(p: &collc_spec::Validated) -> Result<CreditTable, String> {
    let mut seen: Vec<Config> = Vec::new();
    if exec::enumerated_world(p).is_none() {
        return Err(crate::obligations::check::enumeration_scope(p));
    }
    let sweep = sweep::each_run(p, None, &mut |visit| {
        match visit {
            Visit::Restart => seen.clear(),
            Visit::Run(_, run) => seen.push(tally(p, run)),
        }
        true
    });
    if let Some(f) = sweep.failure {
        return Err(f.message());
    }
    let plan = sweep.plan;
    let mut classes: BTreeSet<Class> = seen.iter().flat_map(|(_, m)| m.keys().cloned()).collect();
    let info = ProtocolInfo::of(p);
    let mut touches: BTreeMap<SignalId, Touches> = BTreeMap::new();
    // The cells of each class, derived (not yet checked).
    let mut formulas: BTreeMap<Class, Result<Poly, String>> = BTreeMap::new();
    for class in &classes {
        let t = touches
            .entry(class.0)
            .or_insert_with(|| Touches::new(p, &info, class.0));
        formulas.insert(
            class.clone(),
            statements_of(t, class).and_then(|set| t.cells(&set)),
        );
    }
    let also = merge_empty(&mut classes, &mut seen, &formulas);
    let tallied = Tallied {
        seen: &seen,
        touches: &touches,
        formulas: &formulas,
    };
    let (rows, derived) = rows_of(p, classes, &tallied);
    let out = credit_rows(p, rows, &also);
    let mut method = plan.describe(p);
    if derived {
        method.push_str("; cells per call derived for every P");
    }
    Ok(CreditTable {
        protocol: p.name.clone(),
        method,
        rows: out,
    })
}

/// What the configurations show, per class: the configurations, each signal's statements,
/// and each class's cells per call as derived.
struct Tallied<'a> {
    seen: &'a [Config],
    touches: &'a BTreeMap<SignalId, Touches<'a>>,
    formulas: &'a BTreeMap<Class, Result<Poly, String>>,
}

/// A class the derivation gives no cells is the cells of the one wider class where a
/// loop of its other statements runs no iteration (the counter of a gather at P = 1):
/// counted with it. Returns, per wider class, the classes merged into it.
fn merge_empty(
    classes: &mut BTreeSet<Class>,
    seen: &mut [Config],
    formulas: &BTreeMap<Class, Result<Poly, String>>,
) -> BTreeMap<Class, Vec<BTreeSet<At>>> {
    let mut also: BTreeMap<Class, Vec<BTreeSet<At>>> = BTreeMap::new();
    for class in classes.clone() {
        if !formulas[&class].as_ref().is_ok_and(|f| f.is_zero()) {
            continue;
        }
        let wider: Vec<&Class> = classes
            .iter()
            .filter(|c| c.0 == class.0 && c.1.is_superset(&class.1) && c.1 != class.1)
            .collect();
        let [into] = wider[..] else { continue };
        let into = into.clone();
        for (_, m) in seen.iter_mut() {
            if let Some(s) = m.remove(&class) {
                let w = m.entry(into.clone()).or_default();
                w.cells += s.cells;
                for (k, n) in s.keys {
                    *w.keys.entry(k).or_insert(0) += n;
                }
                w.amounts.extend(s.amounts);
            }
        }
        also.entry(into).or_default().push(class.1.clone());
        classes.remove(&class);
    }
    also
}

/// The rows' parts: per class its key (the printed columns), its cells per call (or why
/// not, with the enumerated counts) and its amounts; and whether every class's cells were
/// derived.
fn rows_of(
    p: &Protocol,
    classes: BTreeSet<Class>,
    t: &Tallied,
) -> (BTreeMap<Key, Vec<Part>>, bool) {
    let (seen, touches, formulas) = (t.seen, t.touches, t.formulas);
    let mut derived = true;
    let mut rows: BTreeMap<Key, Vec<Part>> = BTreeMap::new();
    for class in classes {
        // Configurations where the class has no cells count 0.
        let pts: Points = seen
            .iter()
            .map(|(cfg, m)| (cfg.clone(), m.get(&class).map_or(0, |s| s.cells)))
            .collect();
        let Some(t) = touches.get(&class.0) else {
            continue;
        };
        let set = statements_of(t, &class).unwrap_or_default();
        let cells = formulas[&class].clone().and_then(|f| checked(p, f, &pts));
        let Some((key, credits, reset)) = columns(p, t, &set, &class, seen) else {
            // One row per shape, its cells counted per configuration.
            derived = false;
            let keys: BTreeSet<&Key> = seen
                .iter()
                .filter_map(|(_, m)| m.get(&class))
                .flat_map(|s| s.keys.keys())
                .collect();
            for key in keys {
                let pts: Points = seen
                    .iter()
                    .map(|(cfg, m)| {
                        let n = m.get(&class).and_then(|s| s.keys.get(key));
                        (cfg.clone(), n.copied().unwrap_or(0))
                    })
                    .collect();
                let why = "the cells one set of statements touches differ in shape".to_string();
                rows.entry(key.clone()).or_default().push(Part {
                    cells: Err((why, pts)),
                    class: class.clone(),
                    amounts: (None, None),
                });
            }
            continue;
        };
        if cells.is_err() {
            derived = false;
        }
        rows.entry(key).or_default().push(Part {
            cells: cells.map_err(|why| (why, pts)),
            class,
            amounts: (credits, reset),
        });
    }
    (rows, derived)
}

/// The table's rows from their parts.
fn credit_rows(
    p: &Protocol,
    rows: BTreeMap<Key, Vec<Part>>,
    also: &BTreeMap<Class, Vec<BTreeSet<At>>>,
) -> Vec<CreditRow> {
    let names = crate::engine::cost::show::Names { p };
    let mut out = Vec::new();
    for (key, parts) in rows {
        let mut total = Some(Poly::default());
        for part in &parts {
            total = match (total, &part.cells) {
                (Some(t), Ok(f)) => Some(t.add(f)),
                _ => None,
            };
        }
        let (cells, cells_count) = match total {
            Some(f) => (names.formula(&f), Some(f)),
            None => {
                let why: Vec<String> = parts
                    .iter()
                    .filter_map(|part| part.cells.as_ref().err())
                    .map(|(why, pts)| format!("no closed form ({why}): {}", values(p, pts)))
                    .collect();
                (why.join(" + "), None)
            }
        };
        // The amounts of the first class (the merged ones print the same).
        let (credits_count, reset_count) =
            parts.first().map(|x| x.amounts.clone()).unwrap_or_default();
        let touched_by = parts
            .into_iter()
            .flat_map(|part| {
                let more = also.get(&part.class).cloned().unwrap_or_default();
                std::iter::once(part.class.1).chain(more)
            })
            .collect();
        let (signal, credits, waits, reset, net) = key;
        out.push(CreditRow {
            signal,
            cells,
            credits,
            waits,
            reset,
            net,
            cells_count,
            credits_count,
            reset_count,
            touched_by,
        });
    }
    out
}

/// The indices (into [`Touches::stmts`]) of a class's statements.
fn statements_of(t: &Touches, class: &Class) -> Result<BTreeSet<usize>, String> {
    let set: BTreeSet<usize> = t
        .stmts
        .iter()
        .enumerate()
        .filter(|(_, x)| class.1.contains(&at(**x)))
        .map(|(k, _)| k)
        .collect();
    if set.len() == class.1.len() {
        Ok(set)
    } else {
        Err("an event without its statement".into())
    }
}

/// A derived count checked at every enumerated configuration where the formula's
/// variables have values.
fn checked(p: &Protocol, total: Poly, pts: &Points) -> Result<Poly, String> {
    let shown = crate::engine::cost::show::Names { p }.formula(&total);
    for (cfg, n) in pts {
        if let Some(v) = crate::engine::cost::value_at(p, &total, cfg) {
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

/// One configuration of a class whose cells have one shape: the configuration, the
/// shape, and the credits and reset when literal.
type Shape<'s> = (&'s [(VarId, i64)], &'s Key, Option<i64>, Option<i64>);

/// A class's columns, or `None` when the cells of one configuration differ in shape.
/// Each column is as enumerated when every configuration shows the same; else credits,
/// reset and net are derived per cell with P symbolic and waits from the statements'
/// thresholds, checked against every configuration; a column with no closed form lists
/// its enumerated values.
fn columns(
    p: &Protocol,
    t: &Touches,
    set: &BTreeSet<usize>,
    class: &Class,
    seen: &[Config],
) -> Option<(Key, Option<Poly>, Option<Poly>)> {
    let mut each: Vec<Shape> = Vec::new();
    for (cfg, m) in seen {
        let Some(s) = m.get(class) else { continue };
        if s.keys.len() != 1 || s.amounts.len() != 1 {
            return None;
        }
        let k = s.keys.keys().next()?;
        let (c, r) = *s.amounts.iter().next()?;
        each.push((cfg, k, c, r));
    }
    let names = crate::engine::cost::show::Names { p };
    let same = |pick: fn(&Key) -> &String| -> Option<String> {
        let first = pick(each.first()?.1);
        each.iter()
            .all(|e| pick(e.1) == first)
            .then(|| first.clone())
    };
    let list = |pick: fn(&Key) -> &String| -> String {
        each.iter()
            .map(|e| format!("{}: {}", config_text(p, e.0), pick(e.1)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let sum = |body: bool| -> Result<Poly, String> {
        let mut f = Poly::default();
        for &k in set {
            if t.named[k].epilogue != body {
                f = f.add(&t.per_cell(k)?);
            }
        }
        Ok(f)
    };
    // A derived amount against the literal one of every configuration.
    let check =
        |f: Result<Poly, String>, want: fn(&Shape) -> Option<i64>| -> Result<Poly, String> {
            let f = f?;
            for e in &each {
                let got = crate::engine::cost::value_at(p, &f, e.0);
                if want(e).is_none() || got != want(e) {
                    return Err(format!(
                        "the derived `{}` gives {}, the enumeration {} at {}",
                        names.formula(&f),
                        got.map_or("no number".into(), |v| v.to_string()),
                        want(e).map_or("no number".into(), |v| v.to_string()),
                        config_text(p, e.0)
                    ));
                }
            }
            Ok(f)
        };
    let column = |pick: fn(&Key) -> &String, derive: &dyn Fn() -> Result<String, String>| {
        same(pick).unwrap_or_else(|| {
            derive().unwrap_or_else(|why| format!("no closed form ({why}): {}", list(pick)))
        })
    };
    let credits_f = check(sum(true), |e| e.2);
    let reset_f = check(sum(false), |e| e.3);
    let shown =
        |f: &Result<Poly, String>| f.as_ref().map(|f| names.formula(f)).map_err(Clone::clone);
    let credits = column(|k| &k.1, &|| shown(&credits_f));
    let waits = column(|k| &k.2, &|| waits_symbolic(p, t, set, &each));
    let reset = column(|k| &k.3, &|| shown(&reset_f));
    let net = column(|k| &k.4, &|| {
        let net = check(sum(true).and_then(|c| Ok(c.add(&sum(false)?))), |e| {
            Some(e.2? + e.3?)
        });
        shown(&net)
    });
    let key = (p.signals[class.0].name.clone(), credits, waits, reset, net);
    Some((key, credits_f.ok(), reset_f.ok()))
}

/// The owner's waits of a class in program order, `>= P - 1`, when no threshold reads
/// anything but the parameters, checked against the enumerated waits of every
/// configuration.
fn waits_symbolic(
    p: &Protocol,
    t: &Touches,
    set: &BTreeSet<usize>,
    each: &[Shape],
) -> Result<String, String> {
    let mut shown = Vec::new();
    let mut thresholds = Vec::new();
    for &k in set {
        let Access::Wait(cmp, threshold) = &t.named[k].access else {
            continue;
        };
        let mut uniform = true;
        threshold.for_each_var(&mut |v| {
            uniform &= matches!(
                p.vars[v].kind,
                VarKind::World { .. }
                    | VarKind::Param { .. }
                    | VarKind::Const(_)
                    | VarKind::Derived(_)
            )
        });
        if !uniform {
            return Err(format!(
                "the threshold `{}` reads a variable of the rank or a loop",
                collc_spec::print::expr_to_string(p, threshold)
            ));
        }
        let f = crate::engine::cost::walk::Walk::new(p, 0).poly(threshold)?;
        shown.push(format!(
            "{} {}",
            cmp.as_str(),
            collc_spec::print::expr_to_string(p, threshold)
        ));
        thresholds.push((cmp.as_str(), f));
    }
    for (cfg, key, ..) in each {
        let want = &key.2;
        let got: Option<Vec<String>> = thresholds
            .iter()
            .map(|(c, f)| crate::engine::cost::value_at(p, f, cfg).map(|v| format!("{c} {v}")))
            .collect();
        let got = got.map_or("none".to_string(), |g| {
            if g.is_empty() {
                "none".into()
            } else {
                g.join(", ")
            }
        });
        if got != *want {
            return Err(format!(
                "the waits give `{got}`, the enumeration `{want}` at {}",
                config_text(p, cfg)
            ));
        }
    }
    Ok(if shown.is_empty() {
        "none".into()
    } else {
        shown.join(", ")
    })
}

/// `P=4` (every enumerated parameter).
fn config_text(p: &Protocol, cfg: &[(VarId, i64)]) -> String {
    cfg.iter()
        .map(|(v, x)| format!("{}={x}", p.var_name(*v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// Enumerated values, `P=1: 0; P=2: 2; ...` (the other enumerated parameters named
/// when they vary).
fn values(p: &Protocol, pts: &Points) -> String {
    pts.iter()
        .map(|(cfg, n)| format!("{}: {n}", config_text(p, cfg)))
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

/// One configuration's cell classes: each class's cells, their columns as printed, and
/// their constant amounts.
fn tally(p: &Protocol, run: &mut Run) -> Config {
    let cells = CellIndex::of(run);
    let mut here: BTreeMap<Class, Seen> = BTreeMap::new();
    for (cell, evs) in cells.iter() {
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
        let s = here.entry((cell.signal, touched)).or_default();
        s.cells += 1;
        *s.keys.entry(key).or_insert(0) += 1;
        s.amounts.insert((credits.as_const(), reset.as_const()));
    }
    (run.config.clone(), here)
}
