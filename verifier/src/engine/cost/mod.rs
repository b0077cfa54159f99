//! `collc cost`: remote atomics, local notifies, waits and fences per call (all
//! ranks and blocks together), as formulas derived symbolically from the IR with
//! the world size and every parameter symbolic (never fitted, never enumerated),
//! and as numbers at the given parameters. A count with no closed form the
//! derivation can find says so, with the reason, and its value comes from running
//! the IR's control flow at the given parameters.

pub mod alg;
pub mod cells;
pub mod concrete;
pub mod normal;
pub mod prove;
pub mod show;
pub mod simplify;
pub mod split;
pub mod sum;
pub mod tree;
pub mod walk;

use collc_spec::ir::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// One cost figure.
#[derive(Debug, Clone, Serialize)]
pub struct CostRow {
    /// What is counted.
    pub what: String,
    /// Per call, all ranks and blocks together, as a formula (or `no closed form: ...`).
    pub formula: String,
    /// Evaluated at the given parameters (when all are given).
    pub value: Option<i64>,
}

/// The cost model of one protocol.
#[derive(Debug, Clone, Serialize)]
pub struct CostReport {
    /// The collective.
    pub protocol: String,
    /// The parameters evaluated at.
    pub params: BTreeMap<String, i64>,
    /// Figures.
    pub rows: Vec<CostRow>,
}

/// The derived counts (index by [`walk::KINDS`]): a polynomial, or why there is
/// no closed form.
pub fn derive(p: &Protocol) -> Vec<Result<alg::Poly, String>> {
    walk::Walk::new(p, walk::KINDS.len()).protocol(&walk::cost_leaf)
}

/// Evaluates a derived count at bound parameters.
pub fn value(x: &alg::Poly, b: &collc_spec::eval::Bindings) -> Option<i64> {
    i64::try_from(x.eval(&|v| b.env.get(v))?.as_int()?).ok()
}

/// The cost report: formulas, and values when every parameter is given (rank
/// parameters default to 0).
pub fn cost(
    p: &collc_spec::Validated,
    given: &BTreeMap<String, i64>,
) -> Result<CostReport, String> {
    let complete = p.inputs().iter().all(|v| {
        given.contains_key(p.var_name(*v))
            || matches!(p.vars[*v].kind, VarKind::Param { domain: None })
    });
    let bound = if complete {
        Some(collc_spec::eval::bind(p, given).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let names = show::Names { p };
    let derived = derive(p);
    let mut run: Option<Result<[i64; 4], String>> = None;
    let mut rows = Vec::new();
    for (k, d) in derived.iter().enumerate() {
        let (formula, value) = match d {
            Ok(x) => (names.formula(x), bound.as_ref().and_then(|b| value(x, b))),
            Err(why) => {
                let v = bound.as_ref().and_then(|b| {
                    run.get_or_insert_with(|| concrete::counts(p, b))
                        .as_ref()
                        .ok()
                        .map(|c| c[k])
                });
                (format!("no closed form: {why}"), v)
            }
        };
        rows.push(CostRow {
            what: walk::KINDS[k].to_string(),
            formula,
            value,
        });
    }
    Ok(CostReport {
        protocol: p.name.clone(),
        params: given.clone(),
        rows,
    })
}

/// Evaluates a derived count where `cfg` gives the values of some variables (the
/// top-level `let`s are computed from them); `None` when one is missing.
pub fn value_at(p: &Protocol, x: &alg::Poly, cfg: &[(VarId, i64)]) -> Option<i64> {
    let w = walk::Walk::new(p, 0);
    i64::try_from(x.eval(&|v| var_value(p, &w, cfg, v))?.as_int()?).ok()
}

fn var_value(p: &Protocol, w: &walk::Walk, cfg: &[(VarId, i64)], v: VarId) -> Option<i64> {
    if let Some((_, x)) = cfg.iter().find(|c| c.0 == v) {
        return Some(*x);
    }
    match &p.vars.get(v.index())?.kind {
        VarKind::Const(c) => Some(*c),
        VarKind::Derived(e) => {
            let x = w.poly(e).ok()?;
            i64::try_from(x.eval(&|u| var_value(p, w, cfg, u))?.as_int()?).ok()
        }
        _ => None,
    }
}
