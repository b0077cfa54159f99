//! The oracle table of an MPI run: the collective's meaning ([`collc_spec::meaning`]) for one
//! world size, parameter set and call count, in the text format `collc_mpi::oracle::parse`
//! reads (documented in `backend/runtime/mpi/collc_mpi.hpp`). The generated program's
//! `prepare()` stages the table's inputs and its `check()` compares the table's segments and
//! cells; no collective's meaning is written in C++.

use crate::oracle::arrays_of_call;
use collc_spec::eval::bind;
use collc_spec::ir::Protocol;
use collc_spec::meaning::{self, Combine, Meaning, Shape};
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn combine_code(c: Combine) -> i32 {
    use collc_spec::ir::ReduceOp::*;
    match c {
        Combine::Copy => 0,
        Combine::Reduce(Sum) => 1,
        Combine::Reduce(Max) => 2,
        Combine::Reduce(Min) => 3,
        Combine::Reduce(Prod) => 4,
    }
}

/// The table of a run of `p` at `np` ranks with `params` (the world size is `np`, not a
/// param) for `calls` calls. Errors: parameters that do not bind, shapes the kind gives no
/// meaning.
pub fn table(
    p: &Protocol,
    params: &BTreeMap<String, i64>,
    np: u32,
    calls: u32,
) -> Result<String, String> {
    let mut given = params.clone();
    given.insert(p.vars[p.world].name.clone(), i64::from(np));
    let b = bind(p, &given).map_err(|e| e.to_string())?;
    let shape = Shape::of(p, &b).map_err(|e| format!("cannot size the windows: {e}"))?;
    let prod = meaning::reduce_op(p) == Some(collc_spec::ir::ReduceOp::Prod);
    let mut t = String::new();
    let _ = write!(
        t,
        "collc-oracle 1 {} {} {calls}\n{}",
        u8::from(prod),
        shape.world,
        p.windows.len()
    );
    for w in &p.windows {
        let _ = write!(t, " {}", w.name);
    }
    let _ = write!(t, "\n{}", p.signals.len());
    for s in &p.signals {
        let _ = write!(t, " {}", s.name);
    }
    t.push('\n');
    for k in 0..calls as usize {
        let m = meaning::outputs(p, &shape, &arrays_of_call(p, &shape, k))
            .map_err(|e| e.to_string())?;
        for r in 0..shape.world {
            let inputs = meaning::inputs(p, &shape, r);
            let _ = write!(t, "{}", inputs.len());
            for w in inputs {
                let _ = write!(t, " {w}");
            }
            let out = match &m {
                Meaning::Data(per_rank) => per_rank.get(r).cloned().unwrap_or_default(),
                Meaning::Barrier => Default::default(),
            };
            let _ = write!(t, "\n{}", out.segments.len());
            for g in &out.segments {
                let (code, srcs) = match &g.want {
                    Some(w) => (combine_code(w.combine), w.sources.as_slice()),
                    None => (-1, &[][..]),
                };
                let _ = write!(t, "\n {} {} {} {code} {}", g.window, g.lo, g.hi, srcs.len());
                for s in srcs {
                    let _ = write!(t, " {} {} {}", s.rank, s.window, s.offset);
                }
            }
            let _ = write!(t, "\n{}", out.cells.len());
            for c in &out.cells {
                let _ = write!(t, " {} {} {}", c.signal, c.index, c.value);
            }
            t.push('\n');
        }
    }
    Ok(t)
}
