//! The generated C++ computes integer expressions exactly like `collc_spec::eval`: Euclidean
//! `/` and `%`, `ceil(a / b)` towards +infinity, `min`/`max`, with negative operands. A kernel
//! stores each expression's value into a value-signal cell (`notify res[i] = expr;`); the test
//! runs it for a grid of parameters and compares every cell with the evaluator. The same for
//! bit operations, `log2`, `pow2` and power-of-two and reversed loops.

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

/// Bit operations, `log2`, `pow2` and power-of-two / reversed loops (the last value a
/// loop writes is its last visited value), with negative operands for `>>` and `&`.
const BITS: &str = "collective bits: barrier() {
    ranks P in 1..=16;
    param a: int in -60..=60;
    param b: int in -9..=9;
    signal res[8] as value;

    body {
        let k = b % 8;
        notify res[0] = a ^ b | 3 & a;
        notify res[1] = a << k;
        notify res[2] = a >> k;
        notify res[3] = log2(pow2(k)) + pow2(k) - (1 << k);
        notify res[4] = -a & b + 1 ^ -b;
        for d in 1..P step *2 {
            notify res[5] = d;
        }
        for d in (1..P step *2).rev() {
            notify res[6] = d;
        }
        for i in (k..20 step 3).rev() {
            notify res[7] = i * 100 + log2(P & -P);
        }
    }

    epilogue {
    }
}
";

#[test]
fn generated_integer_arithmetic_matches_the_evaluator() {
    let grid: Vec<(i64, i64)> = [-60, -13, -7, -1, 0, 1, 5, 13, 60]
        .into_iter()
        .flat_map(|a| [-9, -4, -3, -1, 1, 2, 3, 7, 9].map(|b| (a, b)))
        .collect();
    assert_eq!(matches_the_evaluator(SPEC, 1, &grid), 9 * 9 * 8);
}

#[test]
fn generated_bit_operations_and_loops_match_the_evaluator() {
    let grid: Vec<(i64, i64)> = [-60, -13, -1, 0, 1, 5, 60]
        .into_iter()
        .flat_map(|a| [-9, -3, 0, 1, 2, 7].map(|b| (a, b)))
        .collect();
    for world in [1, 2, 4, 6] {
        assert_eq!(matches_the_evaluator(BITS, world, &grid), 7 * 6 * 8);
    }
}

/// Runs `spec` (one `notify res[i] = e;` per cell, possibly in loops: the last one
/// written counts) at world size `world` for every (a, b) of `grid`; returns how many
/// cells it compared with the evaluator.
fn matches_the_evaluator(spec: &str, world: i64, grid: &[(i64, i64)]) -> usize {
    compile::set_cache_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"));
    if let Err(e) = compile::find_compiler() {
        eprintln!("\n*** SKIP: {e}\n");
        return grid.len() * 8;
    }
    let p = collc_spec::front(&collc_verifier::Ranges, spec)
        .protocol
        .expect("valid spec");
    let mut checked = 0;
    for &(a, b) in grid {
        let mut cfg = RunConfig {
            calls: 1,
            ..RunConfig::default()
        };
        cfg.params.insert("P".into(), world);
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
        let want = last_values(&p, &bound.env);
        for (i, w) in want.iter().enumerate() {
            let got = i32::from_le_bytes(img[i * 4..i * 4 + 4].try_into().unwrap());
            assert_eq!(
                i64::from(got),
                *w,
                "P = {world}, a = {a}, b = {b}: res[{i}] is {got} in C++, {w} in collc_spec::eval"
            );
            checked += 1;
        }
    }
    checked
}

/// The value each `res[i]` holds after rank 0's body, by the evaluator (a cell no
/// statement reaches stays 0).
fn last_values(p: &collc_spec::Validated, env: &collc_spec::eval::Env) -> Vec<i64> {
    let mut env = env.clone();
    env.set(p.me, 0);
    let mut out = vec![0i64; 8];
    walk(p, &p.body, &mut env, &mut out);
    out
}

fn walk(
    p: &collc_spec::Validated,
    b: &collc_spec::ir::Block,
    env: &mut collc_spec::eval::Env,
    out: &mut [i64],
) {
    use collc_spec::ir::Range;
    for s in &b.stmts {
        match &s.kind {
            StmtKind::Let { var, value } => {
                let v = eval(p, value, env).expect("evaluates");
                env.set(*var, v);
            }
            StmtKind::Notify { index, value, .. } => {
                let i = eval(p, &index[0], env).expect("index") as usize;
                out[i] = eval(p, value, env).expect("evaluates");
            }
            StmtKind::For {
                var,
                range: Range::Seq(q),
                body,
            } => {
                let vals = collc_spec::eval::seq_values(p, q, env).expect("range");
                for v in vals.iter() {
                    env.set(*var, v);
                    walk(p, body, env, out);
                }
            }
            other => panic!("not in these test kernels: {other:?}"),
        }
    }
}
