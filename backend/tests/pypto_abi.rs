//! The pypto builtin ABI (`collc emit --target ascend --abi pypto`, collc_backend::cpp::pypto):
//!
//! * every example with a pypto host builtin counterpart maps onto that builtin's args block;
//!   the others are refused with `backend::pypto-abi` naming what does not fit;
//! * the pypto-ABI kernels compile under `g++ -fsyntax-only` against the declarations of the
//!   public pto-isa / simpler API (ChipTensor, CommContext, ...: backend/runtime/ascend_decls);
//! * the same source runs on CPU threads through the shim that builds pypto's args block
//!   (ChipTensors with `buffer.addr` = the window base and `start_offset` = the buffer's
//!   element offset, nranks, CommContext*) at P=2 and P=4 for 3 back-to-back calls, checked
//!   against the collective's semantics with every credit cell back at zero — the checks
//!   the collc-ABI host runs use; three of them also race-free under ThreadSanitizer;
//! * a kernel that decodes the args block wrongly fails that run.
//!
//! Without a C++ compiler the compile and run tests print a loud SKIP line and pass.

use collc_backend::ascend_check::syntax_check;
use collc_backend::cpp::{pypto, EmitOptions};
use collc_backend::host::compile::{self, CompileError};
use collc_backend::host::{self, RunConfig};
use collc_backend::testing::{compiler_or_skip, default_params};
use collc_grammar::Source;
use collc_spec::ir::Semantics;
use collc_spec::Validated;
use std::path::Path;

/// The examples derived from pypto's host collective kernels that have a builtin
/// counterpart: each must map, compile against the declarations and run through the shim.
const MAPPED: &[&str] = &[
    "all_to_all",
    "all_to_all_v",
    "allgather",
    "allreduce_mesh",
    "allreduce_ring",
    "barrier",
    "broadcast",
    "broadcast_read_complete",
    "incore_all_to_all",
    "incore_all_to_all_v",
    "incore_allgather",
    "incore_allreduce_mesh",
    "incore_allreduce_ring",
    "incore_barrier",
    "incore_broadcast",
    "incore_reduce_scatter",
    "reduce_scatter",
];

/// The examples derived from pypto's kernels whose builtin takes more than collc maps
/// (or that have no builtin): each must be refused. Every other example may map or be
/// refused, clearly.
const NO_BUILTIN: &[&str] = &["arrival_barrier"];

fn setup() -> bool {
    compiler_or_skip(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"),
        "the pypto-ABI tests",
    )
}

fn examples() -> Vec<(String, Source, Validated)> {
    collc_backend::testing::examples(&collc_verifier::Ranges)
        .into_iter()
        .map(|(path, text, p)| {
            let stem = path
                .file_stem()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            let src = Source::new(format!("examples/{stem}.coll"), text);
            (stem, src, p)
        })
        .collect()
}

fn mapped() -> Vec<(String, Source, Validated)> {
    examples()
        .into_iter()
        .filter(|(n, _, _)| MAPPED.contains(&n.as_str()))
        .collect()
}

fn kernel(src: &Source, p: &Validated) -> String {
    let opts = EmitOptions {
        source: Some(src),
        warning: Vec::new(),
        world_limit: None,
    };
    pypto::emit(p, &opts).unwrap_or_else(|d| panic!("{}: {d:?}", src.name))
}

fn is_broadcast(p: &Validated) -> bool {
    matches!(p.semantics, Semantics::Broadcast { .. })
}

#[test]
fn examples_map_onto_their_builtin_or_are_refused_clearly() {
    let mut seen_refused = 0;
    for (name, _, p) in examples() {
        match pypto::plan(&p) {
            Ok(plan) => {
                assert!(
                    !NO_BUILTIN.contains(&name.as_str()),
                    "{name} mapped to {}",
                    plan.builtin
                );
                assert_eq!(
                    plan.tensors.len(),
                    p.windows.len() + p.signals.len() + p.arrays.len(),
                    "{name}: windows + signal (+ all_to_all_v's counts)"
                );
            }
            Err(d) => {
                assert!(!MAPPED.contains(&name.as_str()), "{name} refused: {d:?}");
                assert_eq!(d[0].code, pypto::CODE);
                assert!(
                    d[0].message.contains("has no pypto builtin counterpart"),
                    "{}",
                    d[0].message
                );
                seen_refused += usize::from(NO_BUILTIN.contains(&name.as_str()));
            }
        }
    }
    assert_eq!(seen_refused, NO_BUILTIN.len());
    let by_name = |n: &str| {
        let (_, _, p) = examples()
            .into_iter()
            .find(|(x, _, _)| x == n)
            .expect("example");
        pypto::plan(&p).expect("maps").builtin
    };
    assert_eq!(by_name("allreduce_mesh"), "builtin.tensor.allreduce");
    assert_eq!(by_name("allreduce_ring"), "builtin.tensor.allreduce_ring");
    assert_eq!(by_name("reduce_scatter"), "builtin.tensor.reduce_scatter");
    assert_eq!(by_name("barrier"), "builtin.tensor.barrier");
    assert_eq!(by_name("all_to_all_v"), "builtin.tensor.all_to_all_v");
}

/// all_to_all_v takes pypto's args block of `builtin.tensor.all_to_all_v`
/// (python/pypto/runtime/builtins/collectives/all_to_all_v/templates/entry.cpp.in):
/// input, target, signal, send_counts (int32), recv_counts (int32), nranks, CommContext*;
/// `R` is `target.shape[0] / nranks` (pypto's max_recv) and `m` the row width.
#[test]
fn all_to_all_v_takes_the_builtins_args_block() {
    for n in ["all_to_all_v", "incore_all_to_all_v"] {
        let (_, src, p) = mapped()
            .into_iter()
            .find(|(x, _, _)| x == n)
            .expect("example");
        let k = kernel(&src, &p);
        for (slot, what) in [
            ("ChipTensor*>(args[0])", "collc_input_tensor"),
            ("ChipTensor*>(args[1])", "collc_target_tensor"),
            ("ChipTensor*>(args[2])", "collc_sig_tensor"),
            ("ChipTensor*>(args[3])", "collc_send_counts_tensor"),
            ("ChipTensor*>(args[4])", "collc_recv_counts_tensor"),
        ] {
            assert!(
                k.lines().any(|l| l.contains(slot) && l.contains(what)),
                "{n}: {what} at {slot}:\n{k}"
            );
        }
        assert!(
            k.contains("static_cast<int64_t>(args[5]);  // ranks P (nranks)"),
            "{n}"
        );
        assert!(k.contains("CommContext*>(args[6])"), "{n}");
        assert!(
            k.contains("__gm__ int32_t* send_counts = reinterpret_cast<__gm__ int32_t*>("),
            "{n}: send_counts is an int32 tensor"
        );
        assert!(
            k.contains("collc_rows_per_rank(collc_target_tensor, P)"),
            "{n}"
        );
    }
}

#[test]
fn refusals_name_what_does_not_fit() {
    for (name, _, p) in examples() {
        let Err(d) = pypto::plan(&p) else { continue };
        let m = &d[0].message;
        match name.as_str() {
            "arrival_barrier" => assert!(
                m.contains("one credit signal tensor") && m.contains("2 signal"),
                "{m}"
            ),
            _ => assert!(m.contains("has no pypto builtin counterpart"), "{m}"),
        }
    }
}

#[test]
fn pypto_kernels_compile_against_the_declarations() {
    if !setup() {
        return;
    }
    let mut failures = Vec::new();
    for (name, src, p) in mapped() {
        let mut k = kernel(&src, &p);
        assert!(
            k.contains("ChipTensor*") && k.contains("->start_offset"),
            "{name}"
        );
        if is_broadcast(&p) {
            k = format!("#define COLLC_PYPTO_ROOT 0\n{k}");
        }
        if let Err(e) = syntax_check(&k) {
            failures.push(format!("{name}:\n{e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// pypto's broadcast root is a compile-time constant of the kernel (kRoot): without it the
/// build stops with a message saying so.
#[test]
fn a_broadcast_without_its_root_does_not_compile() {
    if !setup() {
        return;
    }
    let (_, src, p) = mapped()
        .into_iter()
        .find(|(n, _, _)| n == "broadcast")
        .expect("broadcast");
    match syntax_check(&kernel(&src, &p)) {
        Err(CompileError::Failed { output, .. }) => {
            assert!(output.contains("COLLC_PYPTO_ROOT"), "{output}")
        }
        other => panic!("compiled or did not run: {other:?}"),
    }
}

fn run_config(p: &Validated, world: i64) -> RunConfig {
    RunConfig {
        params: default_params(p, world).expect("parameters bind"),
        calls: 3,
        twait_timeout_ms: 20_000,
        ..RunConfig::default()
    }
}

#[test]
fn pypto_kernels_run_on_cpu_threads_through_the_shim() {
    if !setup() {
        return;
    }
    let mut failures = Vec::new();
    let mut runs = 0;
    for (name, src, p) in mapped() {
        for world in [2, 4] {
            let cfg = run_config(&p, world);
            match host::pypto::run(&p, Some(&src), &cfg) {
                Ok(r) if r.ok() => runs += 1,
                Ok(r) => failures.push(format!(
                    "{name} P={world} {:?}: {}",
                    cfg.params,
                    r.summary()
                )),
                Err(e) => failures.push(format!("{name} P={world}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(runs, 2 * mapped().len());
}

/// The shim under ThreadSanitizer (runner subprocess): the pypto-ABI kernels of a barrier,
/// the multicore mesh allreduce and a broadcast run race-free at P=2 and P=4.
#[test]
fn pypto_kernels_are_race_free_under_thread_sanitizer() {
    if !setup() {
        return;
    }
    let mut failures = Vec::new();
    for (name, src, p) in mapped()
        .into_iter()
        .filter(|(n, _, _)| ["barrier", "allreduce_mesh", "broadcast"].contains(&n.as_str()))
    {
        for world in [2, 4] {
            let cfg = RunConfig {
                build: compile::Build::Tsan,
                exec: host::Exec::Subprocess,
                ..run_config(&p, world)
            };
            match host::pypto::run(&p, Some(&src), &cfg) {
                Ok(r) if r.ok() => {}
                Ok(r) => failures.push(format!("{name} P={world}: {}", r.summary())),
                Err(e) => failures.push(format!("{name} P={world}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs the ring allreduce's pypto kernel at world size `world` through the shim, after
/// `kernel` rewrote the kernel text and `shim` the whole shim text (each must change it).
fn run_mutated(
    world: i64,
    kernel_edit: &dyn Fn(&str) -> String,
    shim_edit: &dyn Fn(&str) -> String,
) -> host::RunReport {
    run_mutated_example("allreduce_ring", world, kernel_edit, shim_edit)
}

/// [`run_mutated`] for the pypto kernel of example `name`.
fn run_mutated_example(
    name: &str,
    world: i64,
    kernel_edit: &dyn Fn(&str) -> String,
    shim_edit: &dyn Fn(&str) -> String,
) -> host::RunReport {
    let (_, src, p) = mapped()
        .into_iter()
        .find(|(n, _, _)| n == name)
        .expect("example");
    let good = kernel(&src, &p);
    let k = kernel_edit(&good);
    let mut cfg = run_config(&p, world);
    cfg.twait_timeout_ms = 2_000;
    let prep = host::prepare_with(&p, &cfg, &|_| {
        let shim = pypto::cpu_shim(&p, &k, None).map_err(host::RunError::Emit)?;
        Ok(shim_edit(&shim))
    })
    .expect("builds");
    host::execute(&p, &prep, &cfg).expect("runs")
}

fn changed(text: &str, from: &str, to: &str) -> String {
    let out = text.replacen(from, to, 1);
    assert_ne!(out, text, "mutation `{from}` applied");
    out
}

fn same(text: &str) -> String {
    text.to_string()
}

/// The run checks are not vacuous: a kernel whose args decoding swaps the data and signal
/// tensors fails its run.
#[test]
fn a_kernel_decoding_the_args_block_wrongly_fails_its_run() {
    if !setup() {
        return;
    }
    let swap = |k: &str| {
        let k = changed(k, "ChipTensor*>(args[0])", "ChipTensor*>(args[@])");
        let k = changed(&k, "ChipTensor*>(args[1])", "ChipTensor*>(args[0])");
        changed(&k, "ChipTensor*>(args[@])", "ChipTensor*>(args[1])")
    };
    let r = run_mutated(2, &swap, &same);
    assert!(!r.ok(), "the swapped decoding passed: {}", r.summary());
}

/// The all_to_all_v run checks the counts: a kernel that reads send_counts from the
/// recv_counts tensor (args[4], a window of int32 cells, so memory-safe) publishes wrong
/// receive counts and fails its run.
#[test]
fn an_all_to_all_v_kernel_reading_the_wrong_count_tensor_fails_its_run() {
    if !setup() {
        return;
    }
    let wrong = |k: &str| changed(k, "ChipTensor*>(args[3])", "ChipTensor*>(args[4])");
    let r = run_mutated_example("all_to_all_v", 2, &wrong, &same);
    assert!(!r.ok(), "the swapped decoding passed: {}", r.summary());
}

/// A kernel that ignores `start_offset` (reads `buffer.addr`, the window base, for every
/// tensor) fails its run: the shim passes the data tensor at a non-zero offset.
#[test]
fn a_kernel_ignoring_start_offset_fails_its_run() {
    if !setup() {
        return;
    }
    let r = run_mutated(
        2,
        &|k| changed(k, " + collc_data_tensor->start_offset;", ";"),
        &same,
    );
    assert!(!r.ok(), "ignoring start_offset passed: {}", r.summary());
}

/// A signal tensor too small for the protocol (one row fewer than the `.coll` signal): every
/// rank returns before its first notify (a rank-uniform guard), so the run neither hangs nor
/// corrupts memory — the outputs are simply not reduced, which the check reports.
#[test]
fn a_too_small_tensor_returns_on_every_rank_without_hanging() {
    if !setup() {
        return;
    }
    let r = run_mutated(4, &same, &|shim| {
        changed(
            shim,
            "collc_t.shapes[0] = static_cast<uint32_t>(2 * (P - 1) + 1);",
            "collc_t.shapes[0] = static_cast<uint32_t>(2 * (P - 1));",
        )
    });
    assert_eq!(
        r.status,
        0,
        "no timeout, kernel error or residue: {}",
        r.summary()
    );
    assert!(
        r.check.wrong > 0,
        "outputs left unreduced are reported: {}",
        r.summary()
    );
}

/// The placeholders of pypto's template of each builtin (its `kernel.cpp.in`), the ones
/// `emit_template` must use; checked against pypto's own files in ascend_real.rs when
/// `PYPTO_ROOT` is set.
fn expected_placeholders(builtin: &str) -> Vec<&'static str> {
    match builtin {
        "builtin.tensor.barrier" => vec!["template_package"],
        "builtin.tensor.broadcast" => vec!["dtype_cpp", "root_cpp", "template_package"],
        "builtin.tensor.allreduce" => vec!["dtype_cpp", "reduce_inst", "template_package"],
        _ => vec!["dtype_cpp", "template_package"],
    }
}

/// Every mapped example's template (`-o kernel.cpp.in`) is self-contained (collc's adapter
/// inline, simpler's `tensor.h`, no collc include, no `COLLC_PYPTO_ROOT`) and carries pypto's
/// placeholders of its builtin, the same kernel otherwise.
#[test]
fn pypto_templates_are_self_contained_and_use_pyptos_placeholders() {
    for (name, src, p) in mapped() {
        let opts = EmitOptions {
            source: Some(&src),
            warning: Vec::new(),
            world_limit: None,
        };
        let t = pypto::emit_template(&p, &opts).unwrap_or_else(|d| panic!("{name}: {d:?}"));
        let plan = pypto::plan(&p).expect("maps");
        assert!(!t.contains("#include \"collc/"), "{name}: {t}");
        assert!(!t.contains("COLLC_PYPTO_ROOT"), "{name}");
        assert!(t.contains("#include \"tensor.h\""), "{name}");
        assert!(t.contains("namespace collc {"), "{name}: adapter inline");
        let mut used: Vec<&str> = expected_placeholders(plan.builtin)
            .into_iter()
            .filter(|ph| t.contains(&format!("{{{{{ph}}}}}")))
            .collect();
        used.sort();
        assert_eq!(used, expected_placeholders(plan.builtin), "{name}");
        let others = t.matches("{{").count();
        let known: usize = used
            .iter()
            .map(|ph| t.matches(&format!("{{{{{ph}}}}}")).count())
            .sum();
        assert_eq!(others, known, "{name}: an unknown placeholder");
        // Rendered with pypto's f32 sum values, the kernel body is the plain kernel's.
        let rendered = t
            .replace("{{dtype_cpp}}", "float")
            .replace("{{reduce_inst}}", "TADD")
            .replace("{{root_cpp}}", "COLLC_PYPTO_ROOT");
        let plain = kernel(&src, &p);
        let body = |s: &str| s[s.find("extern \"C\"").expect("entry")..].to_string();
        assert_eq!(body(&rendered), body(&plain), "{name}");
    }
}
