//! `collc run --target pto-isa` (`collc_backend::pto_sim::run`): every example's Ascend kernel,
//! built against the real pto-isa and simpler headers (`PTO_ISA_ROOT`, `SIMPLER_ROOT`) in
//! pto-isa's CPU simulation, run at P = 2 and P = 4 for back-to-back calls and checked as the
//! host runs are (outputs against the collective's semantics, every credit cell back at 0);
//! and that what ran was pto-isa's TWAIT and a check that can fail (a leaky barrier leaves
//! residue, a deadlock hangs until the wall-clock limit).
//!
//! Each example's kernel is compiled once (cached by content hash; P and the parameters are
//! run-time arguments). Without the real sources (or a compiler that builds pto-isa's CPU
//! headers) each test prints one line saying it skipped and why, and checks nothing.

use collc_backend::host::{ExecError, RunConfig, RunError, RunReport};
use collc_backend::pto_sim::{self, Roots};
use collc_backend::testing::{default_params, examples, test_calls};
use collc_grammar::Source;
use collc_spec::Validated;
use std::path::Path;
use std::time::Duration;

/// The real sources, a compiler for them and a C++ compiler for the launcher, or one skip line.
fn roots(test: &str) -> Option<Roots> {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache");
    if !collc_backend::testing::compiler_or_skip(&cache, "the pto-isa simulation runs") {
        return None;
    }
    collc_backend::testing::real_roots_or_skip(test)
}

fn run(
    p: &Validated,
    src: &Source,
    world: i64,
    calls: u32,
    wall: u64,
    r: &Roots,
) -> Result<RunReport, RunError> {
    let params = default_params(p, world)
        .unwrap_or_else(|| panic!("{}: no parameter values bind at P={world}", src.name));
    let cfg = RunConfig {
        params,
        calls,
        wall_limit: Duration::from_secs(wall),
        ..RunConfig::default()
    };
    pto_sim::run(p, Some(src), &cfg, r)
}

fn bug(name: &str) -> (Source, Validated) {
    let path = collc_backend::testing::repo_root()
        .join("examples/bugs")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("readable");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("checks");
    (Source::new(path.display().to_string(), text), p)
}

#[test]
fn every_example_runs_right_on_pto_isas_cpu_simulation_at_p2_and_p4() {
    let Some(r) = roots("every_example_runs_right_on_pto_isas_cpu_simulation_at_p2_and_p4") else {
        return;
    };
    let all = examples(&collc_verifier::Ranges);
    assert!(all.len() >= 26, "examples found: {}", all.len());
    let mut failures = Vec::new();
    for (path, text, p) in &all {
        let src = Source::new(path.display().to_string(), text.clone());
        for world in [2, 4] {
            match run(p, &src, world, test_calls(p), 300, &r) {
                Ok(rep) if rep.ok() => eprintln!("ok  {} P={world}: {}", src.name, rep.summary()),
                Ok(rep) => failures.push(format!("{} P={world}: {}", src.name, rep.summary())),
                Err(e) => failures.push(format!("{} P={world}: {e}", src.name)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A barrier without its epilogue leaves its credits in the cells: the residue check sees
/// pto-isa's TNOTIFY's increments.
#[test]
fn a_leaky_barrier_fails_the_residue_check_on_the_simulation() {
    let Some(r) = roots("a_leaky_barrier_fails_the_residue_check_on_the_simulation") else {
        return;
    };
    let (src, p) = bug("barrier_no_epilogue.coll");
    let rep = run(&p, &src, 2, 1, 120, &r).expect("ran");
    assert!(!rep.ok(), "{}", rep.summary());
    assert_eq!(rep.status, 4, "{}", rep.summary());
    assert!(rep.nonzero_cells > 0, "{}", rep.summary());
}

/// Waiting before notifying deadlocks. collc's own TWAIT would report a timeout after its
/// deadline (here 200 ms); pto-isa's TWAIT (with PTO_CPU_SIM_TWAIT_MAX_SPINS=0, as the runner
/// sets it) waits until the wall-clock limit kills the runner: what ran was pto-isa's.
#[test]
fn a_deadlock_hangs_in_pto_isas_twait_until_the_wall_limit() {
    let Some(r) = roots("a_deadlock_hangs_in_pto_isas_twait_until_the_wall_limit") else {
        return;
    };
    let (src, p) = bug("barrier_wait_before_notify.coll");
    let params = default_params(&p, 2).expect("binds");
    let cfg = RunConfig {
        params,
        calls: 1,
        twait_timeout_ms: 200,
        wall_limit: Duration::from_secs(8),
        ..RunConfig::default()
    };
    match pto_sim::run(&p, Some(&src), &cfg, &r) {
        Err(RunError::Exec(ExecError::Hung { .. })) => {}
        Ok(rep) => panic!("the run ended: {}", rep.summary()),
        Err(e) => panic!("{e}"),
    }
}

/// Every example with a pypto builtin: its template (`collc emit --target ascend --abi pypto
/// -o kernel.cpp.in`), rendered as pypto renders it, runs on pto-isa's CPU simulation
/// through pypto's args block (simpler's `ChipTensor`s, nranks, `CommContext*`) at P = 2
/// and 4, checked as every run is.
#[test]
fn every_pypto_template_runs_right_on_pto_isas_cpu_simulation_at_p2_and_p4() {
    let Some(r) = roots("every_pypto_template_runs_right_on_pto_isas_cpu_simulation_at_p2_and_p4")
    else {
        return;
    };
    let mut ran = 0;
    let mut failures = Vec::new();
    for (path, text, p) in &examples(&collc_verifier::Ranges) {
        if collc_backend::cpp::pypto::plan(p).is_err() {
            continue; // no builtin counterpart
        }
        let src = Source::new(path.display().to_string(), text.clone());
        for world in [2, 4] {
            let params = default_params(p, world).expect("binds");
            let cfg = RunConfig {
                params,
                calls: test_calls(p),
                wall_limit: Duration::from_secs(300),
                ..RunConfig::default()
            };
            ran += 1;
            match pto_sim::run_pypto(p, Some(&src), &cfg, &r) {
                Ok(rep) if rep.ok() => eprintln!("ok  {} P={world}: {}", src.name, rep.summary()),
                Ok(rep) => failures.push(format!("{} P={world}: {}", src.name, rep.summary())),
                Err(e) => failures.push(format!("{} P={world}: {e}", src.name)),
            }
        }
    }
    assert!(ran >= 36, "runs: {ran}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The examples with a `type` parameter, at each element type but f32 (which the test above
/// runs): on `--target ascend`, an instance whose tile reductions pto-isa's A2/A3 tile
/// instructions take (`pto::ASCEND_REDUCE_TYPES`), or one without reductions, emits tiles of
/// that type and runs right on pto-isa's CPU simulation at P = 2 and 4 (payloads and outputs
/// compared in the element type); an instance that reduces another type is refused with
/// `backend::elem-type` at the `reduce` statement (never converted).
#[test]
fn typed_instances_run_on_pto_isas_cpu_simulation_or_are_refused_at_their_reduce() {
    use collc_backend::cpp::pto::ASCEND_REDUCE_TYPES;
    use collc_spec::ir::ElemType;
    let Some(r) =
        roots("typed_instances_run_on_pto_isas_cpu_simulation_or_are_refused_at_their_reduce")
    else {
        return;
    };
    let (mut ran, mut refused) = (Vec::new(), Vec::new());
    let mut failures = Vec::new();
    for (path, text, p) in &examples(&collc_verifier::Ranges) {
        if p.elem_param.is_none() {
            continue;
        }
        let src = Source::new(path.display().to_string(), text.clone());
        for t in [ElemType::F64, ElemType::I32, ElemType::I64] {
            let Some(q) = p.with_elem(t) else { continue };
            let name = format!("{} ({})", src.name, t.as_str());
            let reduces = has_reduce(&q.body) || has_reduce(&q.epilogue);
            if reduces && !ASCEND_REDUCE_TYPES.contains(&t) {
                let opts = collc_backend::cpp::EmitOptions {
                    source: Some(&src),
                    ..Default::default()
                };
                let err = collc_backend::cpp::emit(&q, collc_backend::cpp::Target::Ascend, &opts)
                    .expect_err(&name);
                let d = &err[0];
                assert_eq!(d.code, "backend::elem-type", "{name}: {d:?}");
                let at = d.primary_span().expect("spanned");
                assert!(text[at.start..].starts_with("reduce "), "{name}: {d:?}");
                refused.push(name);
                continue;
            }
            for world in [2, 4] {
                match run(&q, &src, world, test_calls(&q), 300, &r) {
                    Ok(rep) if rep.ok() => eprintln!("ok  {name} P={world}: {}", rep.summary()),
                    Ok(rep) => failures.push(format!("{name} P={world}: {}", rep.summary())),
                    Err(e) => failures.push(format!("{name} P={world}: {e}")),
                }
            }
            ran.push(name);
        }
    }
    eprintln!("ran: {ran:?}\nrefused: {refused:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // broadcast_read_complete at f64, i32, i64; the two allreduces at i32.
    assert!(ran.len() >= 5, "ran: {ran:?}");
    // The two allreduces at f64 and i64.
    assert!(refused.len() >= 4, "refused: {refused:?}");
}

/// Whether a block holds a `reduce` statement.
fn has_reduce(b: &collc_spec::ir::Block) -> bool {
    use collc_spec::ir::StmtKind;
    b.stmts.iter().any(|s| match &s.kind {
        StmtKind::Reduce { .. } => true,
        StmtKind::For { body, .. } => has_reduce(body),
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => has_reduce(then_block) || else_block.as_ref().is_some_and(has_reduce),
        _ => false,
    })
}
