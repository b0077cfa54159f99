//! The generated C++ computes integer expressions exactly like `collc_spec::eval`: Euclidean
//! `/` and `%`, `ceil(a / b)` towards +infinity, `min`/`max`, with negative operands. A kernel
//! stores each expression's value into a value-signal cell (`notify res[i] = expr;`); the test
//! runs it for a grid of parameters and compares every cell with the evaluator.

use collc_backend::host::compile;
use collc_backend::host::{job, prepare, RunConfig};
use collc_spec::eval::{bind, eval};
use collc_spec::ir::StmtKind;
use std::path::Path;

const SPEC: &str = "collective exprs: barrier() {
    ranks P in 1..=16;
    param a: int in -60..=60;
    param b: int in -9..=9;
    require b != 0;
    signal res[8] as value;

    body {
        notify res[0] = a / b;
        notify res[1] = a % b;
        notify res[2] = ceil(a / b);
        notify res[3] = min(a, b) * 3 - max(a, -b);
        notify res[4] = (a - b) % 5 + (a * b) / 7;
        notify res[5] = ceil((a - 2 * b) / 4) - ceil(-a / 3);
        notify res[6] = -(a % -b) + a / -b;
        notify res[7] = max(0, ceil((a - b * 2) / (b * b)));
    }

    epilogue {
    }
}
";

#[test]
fn generated_integer_arithmetic_matches_the_evaluator() {
    compile::set_cache_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"));
    if let Err(e) = compile::find_compiler() {
        eprintln!("\n*** SKIP: {e}\n");
        return;
    }
    let p = collc_spec::check(SPEC).protocol.expect("valid spec");
    let exprs: Vec<_> = p
        .body
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Notify { value, .. } => Some(value.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(exprs.len(), 8);
    let mut checked = 0;
    for a in [-60, -13, -7, -1, 0, 1, 5, 13, 60] {
        for b in [-9, -4, -3, -1, 1, 2, 3, 7, 9] {
            let mut cfg = RunConfig {
                calls: 1,
                ..RunConfig::default()
            };
            cfg.params.insert("P".into(), 1);
            cfg.params.insert("a".into(), a);
            cfg.params.insert("b".into(), b);
            let prep = prepare(&p, None, &cfg).expect("builds");
            let mut jb = prep.job.clone();
            jb.barrier_check = false;
            jb.buffers[0].collect = true; // the value signal `res`
            let out = job::execute_in_process(&prep.built.path, &jb).expect("runs");
            assert_eq!(out.status, 0, "{}", out.message);
            let img = out.outputs[0].as_ref().expect("collected");
            let bound = bind(&p, &cfg.params).expect("binds");
            for (i, e) in exprs.iter().enumerate() {
                let got = i32::from_le_bytes(img[i * 4..i * 4 + 4].try_into().unwrap());
                let want = eval(&p, e, &bound.env).expect("evaluates");
                assert_eq!(
                    i64::from(got),
                    want,
                    "a = {a}, b = {b}: `{}` is {got} in C++, {want} in collc_spec::eval",
                    collc_spec::print::expr_to_string(&p, e)
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 9 * 9 * 8);
}
