//! The configure function of a host library's collective, in C++: from the communicator's
//! P and the caller's parameter values to the kernel's scalars, every buffer's element count
//! and the block count — after checking P against the verified world limit, every parameter
//! against its declared domain and every `require` (the domain the verifier covered), so
//! the kernel's own guards never fire silently.

use super::api::Coll;
use crate::cpp::{c_string, int_lit, Writer};
use crate::layout::BufferSource;
use collc_spec::ir::{Decl, Expr, VarId, VarKind};
use collc_spec::print::{cond_to_string, expr_to_string};

/// `extern "C" int collc_lib_configure_<i>(P, params, scalars, elems, blocks, err, errlen)`:
/// 1 and the outputs filled, or 0 and the reason in `err`.
pub fn configure(c: &Coll, w: &mut Writer) {
    let k = &c.k;
    let p = c.p();
    w.line(format!(
        "// P and the parameters of {} -> the kernel's scalars, buffer sizes and blocks;",
        p.name
    ));
    w.line("// refuses values outside the verified domain (1 = ok, 0 = reason in err).");
    w.open(format!(
        "extern \"C\" __attribute__((visibility(\"hidden\"))) int collc_lib_configure_{}(int64_t collc_P, const int64_t* collc_params, int64_t* collc_scalars, uint64_t* collc_elems, int64_t* collc_blocks, char* collc_err, size_t collc_errlen)",
        c.index
    ));
    let (lo, limit) = c.world();
    let world = k.var(p.world);
    w.line(format!("[[maybe_unused]] const int64_t {world} = collc_P;"));
    w.open(format!(
        "if ({world} < {} || {world} > {})",
        int_lit(lo),
        int_lit(limit)
    ));
    w.line(format!(
        "std::snprintf(collc_err, collc_errlen, \"ranks {} = %lld is outside the verified {lo}..={limit}\", static_cast<long long>({world}));",
        p.vars[p.world].name
    ));
    w.line("return 0;");
    w.close();
    let mut param_index = 0;
    for d in &p.decls {
        match *d {
            Decl::Var(v) => var(c, v, &mut param_index, world, w),
            Decl::Require(i) => {
                let r = &p.requires[i];
                w.open(format!("if (!({}))", k.cond(&r.cond)));
                w.line(format!(
                    "std::snprintf(collc_err, collc_errlen, \"%s\", {});",
                    c_string(&format!(
                        "require {}; does not hold for these parameters",
                        cond_to_string(p, &r.cond)
                    ))
                ));
                w.line("return 0;");
                w.close();
            }
            _ => {}
        }
    }
    outputs(c, w);
    w.line("(void)collc_params;");
    w.line("(void)collc_err;");
    w.line("(void)collc_errlen;");
    w.line("return 1;");
    w.close();
}

/// One variable: a parameter read from `collc_params` (the next index) and checked against
/// its domain, a constant or a `let`.
fn var(c: &Coll, v: VarId, param_index: &mut usize, world: &str, w: &mut Writer) {
    let k = &c.k;
    let p = c.p();
    let var = &p.vars[v];
    let name = k.var(v);
    match &var.kind {
        VarKind::Param { domain } => {
            w.line(format!(
                "[[maybe_unused]] const int64_t {name} = collc_params[{param_index}];"
            ));
            *param_index += 1;
            let (cond, what) = match domain {
                Some((lo, hi)) => (
                    format!("{name} < {} || {name} > {}", int_lit(*lo), int_lit(*hi)),
                    format!("int in {lo}..={hi}"),
                ),
                None => (
                    format!("{name} < 0 || {name} >= {world}"),
                    "a rank in 0..P".to_string(),
                ),
            };
            w.open(format!("if ({cond})"));
            w.line(format!(
                "std::snprintf(collc_err, collc_errlen, \"{} = %lld is outside the verified domain ({})\", static_cast<long long>({name}));",
                var.name, what
            ));
            w.line("return 0;");
            w.close();
        }
        VarKind::Const(x) => w.line(format!(
            "[[maybe_unused]] constexpr int64_t {name} = {};",
            int_lit(*x)
        )),
        VarKind::Derived(e) => w.line(format!(
            "[[maybe_unused]] const int64_t {name} = {};  // let {} = {}",
            k.expr(e),
            var.name,
            expr_to_string(p, e)
        )),
        _ => {}
    }
}

/// The block count (checked against the CPU runtime's 1..=64), every buffer's element
/// count and the kernel's scalars.
fn outputs(c: &Coll, w: &mut Writer) {
    let k = &c.k;
    let p = c.p();
    match &p.blocks {
        Some(b) => w.line(format!("*collc_blocks = {};", k.expr(&b.count))),
        None => w.line("*collc_blocks = 1;"),
    }
    w.open("if (*collc_blocks < 1 || *collc_blocks > 64)");
    w.line("std::snprintf(collc_err, collc_errlen, \"%lld blocks per rank; the CPU runtime runs 1..=64\", static_cast<long long>(*collc_blocks));");
    w.line("return 0;");
    w.close();
    for (i, b) in k.abi.buffers.iter().enumerate() {
        let dims: &[Expr] = match b.source {
            BufferSource::Signal(s) => &p.signals[s].dims,
            BufferSource::Window(x) => &p.windows[x].dims,
            BufferSource::Array(a) => &p.arrays[a].dims,
        };
        let prod = if dims.is_empty() {
            "1".to_string()
        } else {
            dims.iter()
                .map(|d| format!("({})", k.expr(d)))
                .collect::<Vec<_>>()
                .join(" * ")
        };
        w.line(format!(
            "collc_elems[{i}] = static_cast<uint64_t>({prod});  // {}",
            b.name
        ));
    }
    for (i, v) in k.abi.scalars.iter().enumerate() {
        w.line(format!("collc_scalars[{i}] = {};", k.var(*v)));
    }
}
