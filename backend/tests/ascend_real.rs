//! collc's Ascend output against the real pto-isa and simpler headers (`PTO_ISA_ROOT`,
//! `SIMPLER_ROOT`) in pto-isa's CPU simulation (`-D__CPU_SIM`, the a2a3sim build of pypto's
//! kernels; `collc_backend::pto_sim`), and the declarations of `backend/runtime/ascend_decls/`
//! checked against the real headers they stand in for.
//!
//! Without the real sources (or a compiler that builds pto-isa's CPU headers) each test prints
//! one line saying it skipped and why, and checks nothing.

use collc_backend::ascend_check::DECL_FILES;
use collc_backend::host::compile::{self, CompileError};
use collc_backend::pto_sim::{self, Roots};
use collc_backend::testing::{ascend_kernel, coll_files};
use std::path::{Path, PathBuf};

/// The real sources and a compiler for them, or one skip line.
fn roots(test: &str) -> Option<Roots> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        compile::set_cache_dir(Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"))
    });
    collc_backend::testing::real_roots_or_skip(test)
}

fn examples() -> Vec<PathBuf> {
    coll_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples"))
}

/// The examples with a pypto builtin counterpart (the others are refused with
/// backend::pypto-abi), checked.
fn mapped() -> Vec<(PathBuf, collc_spec::Validated)> {
    examples()
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable");
            let p = collc_spec::front(&collc_verifier::Ranges, &text)
                .protocol
                .expect("checks");
            collc_backend::cpp::pypto::plan(&p)
                .is_ok()
                .then_some((path, p))
        })
        .collect()
}

fn pypto_opts() -> collc_backend::cpp::EmitOptions<'static> {
    collc_backend::cpp::EmitOptions::default()
}

fn ascend_source(path: &Path) -> String {
    ascend_kernel(path, &collc_verifier::Ranges)
}

fn rejected(source: &str, roots: &Roots) -> String {
    match pto_sim::syntax_check(source, roots) {
        Ok(cmd) => panic!("the mutated kernel compiled: {cmd}"),
        Err(CompileError::Failed { output, .. }) => output,
        Err(e) => panic!("the check did not run: {e}"),
    }
}

#[test]
fn every_example_type_checks_against_the_real_headers_in_the_cpu_simulation() {
    let Some(r) = roots("every_example_type_checks_against_the_real_headers_in_the_cpu_simulation")
    else {
        return;
    };
    let files = examples();
    assert!(files.len() >= 26, "examples found: {}", files.len());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            pto_sim::syntax_check(&ascend_source(path), &r)
                .err()
                .map(|e| format!("{}:\n{e}", path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The difference that made every example fail in the CPU simulation: pto-isa declares the
/// cache-line operand only as `cache_line_t::ENTIRE_DATA_CACHE` there.
#[test]
fn the_real_headers_reject_an_unqualified_cache_line_operand() {
    let Some(r) = roots("the_real_headers_reject_an_unqualified_cache_line_operand") else {
        return;
    };
    let k = ascend_source(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/barrier.coll"));
    let bad = k.replacen(
        "dcci(sig, cache_line_t::ENTIRE_DATA_CACHE);",
        "dcci(sig, ENTIRE_DATA_CACHE);",
        1,
    );
    assert_ne!(bad, k, "mutation applied");
    assert!(rejected(&bad, &r).contains("ENTIRE_DATA_CACHE"));
}

/// Every `static_assert` of a declaration file, compiled after the real header it stands in
/// for: the layouts collc's declarations (and its CPU shim) assume are the real ones.
fn asserts_of(file: &str) -> String {
    let text = DECL_FILES
        .iter()
        .find(|(p, _)| *p == file)
        .map(|(_, c)| c.to_string())
        .or_else(|| {
            std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("runtime")
                    .join(file),
            )
            .ok()
        })
        .unwrap_or_else(|| panic!("{file} not found"));
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("static_assert("))
        .collect();
    assert!(!lines.is_empty(), "{file} has no static_assert");
    lines.join("\n")
}

#[test]
fn the_declared_layouts_are_the_real_ones() {
    let Some(r) = roots("the_declared_layouts_are_the_real_ones") else {
        return;
    };
    let probe = format!(
        "#include <cstddef>\n#include <cstdint>\n#include <pto/pto-inst.hpp>\n#include \"platform_comm/comm_context.h\"\n#include \"tensor.h\"\n{}\n{}\n",
        asserts_of("platform_comm/comm_context.h"),
        asserts_of("collc/chip_tensor.hpp"),
    );
    if let Err(e) = pto_sim::syntax_check(&probe, &r) {
        panic!("{e}");
    }
}

/// Every `--abi pypto` kernel in pypto's a2a3sim environment: simpler's own `ChipTensor`
/// (`tensor.h`) and `CommContext`, pto-isa's `pto::comm` instructions, no collc stand-in
/// for their types: simpler's `tensor.h` is included first, so a kernel declaring its own
/// `ChipTensor` fails (a broadcast's root is the macro `COLLC_PYPTO_ROOT`, defined here).
#[test]
fn every_pypto_abi_kernel_type_checks_with_simplers_types_in_the_cpu_simulation() {
    let Some(r) =
        roots("every_pypto_abi_kernel_type_checks_with_simplers_types_in_the_cpu_simulation")
    else {
        return;
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, p) in mapped() {
        let k = collc_backend::cpp::pypto::emit(&p, &pypto_opts()).expect("emits");
        // simpler's tensor.h first (after pto-isa's headers, as in pypto's kernels): a kernel
        // declaring its own ChipTensor fails to compile.
        let source = format!("#define COLLC_PYPTO_ROOT 1\n#include <cstdint>\n#include <pto/pto-inst.hpp>\n#include \"tensor.h\"\n{k}");
        checked += 1;
        if let Err(e) = pto_sim::syntax_check(&source, &r) {
            failures.push(format!("{}:\n{e}", path.display()));
        }
    }
    assert!(checked >= 18, "pypto-ABI kernels checked: {checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// pypto's renderer (`_render_builtin_template`): each `{{NAME}}` replaced by its value.
fn render(template: &str, vars: &[(&str, &str)]) -> String {
    vars.iter().fold(template.to_string(), |t, (k, v)| {
        t.replace(&format!("{{{{{k}}}}}"), v)
    })
}

/// The placeholders (`{{NAME}}`) a text uses, sorted.
fn placeholders(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .split("{{")
        .skip(1)
        .filter_map(|s| s.split_once("}}").map(|(name, _)| name.to_string()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Every `--abi pypto` template (`-o kernel.cpp.in`), rendered as pypto renders it (every
/// value pypto's codegen passes for that builtin: `float` and, for the allreduce, `half`;
/// TADD / TMAX / TMIN / TMUL; roots 0 and 1), compiles in pypto's a2a3sim include environment
/// with nothing of collc on the include path: simpler's `ChipTensor` and `CommContext`,
/// pto-isa's `pto::comm`, none re-declared (simpler's `tensor.h` comes first, so a second
/// `ChipTensor` would not compile).
#[test]
fn every_pypto_template_rendered_compiles_in_the_a2a3sim_environment_alone() {
    let Some(r) = roots("every_pypto_template_rendered_compiles_in_the_a2a3sim_environment_alone")
    else {
        return;
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, p) in mapped() {
        let t = collc_backend::cpp::pypto::emit_template(&p, &pypto_opts()).expect("emits");
        let dtypes: &[&str] = if t.contains("{{reduce_inst}}") {
            &["float", "half"]
        } else {
            &["float"]
        };
        let insts: &[&str] = if t.contains("{{reduce_inst}}") {
            &["TADD", "TMAX", "TMIN", "TMUL"]
        } else {
            &["TADD"]
        };
        let roots_cpp: &[&str] = if t.contains("{{root_cpp}}") {
            &["0", "1"]
        } else {
            &["0"]
        };
        for dtype in dtypes {
            for inst in insts {
                for root in roots_cpp {
                    let vars = [
                        ("template_package", "runtime/builtins/collectives/x"),
                        ("dtype_cpp", *dtype),
                        ("reduce_inst", *inst),
                        ("root_cpp", *root),
                    ];
                    let k = render(&t, &vars);
                    assert!(placeholders(&k).is_empty(), "{}: {k}", path.display());
                    let source = format!("#include <cstdint>\n#include <pto/pto-inst.hpp>\n#include \"tensor.h\"\n{k}");
                    checked += 1;
                    if let Err(e) = pto_sim::syntax_check_alone(&source, &r) {
                        failures.push(format!(
                            "{} ({dtype}, {inst}, root {root}):\n{e}",
                            path.display()
                        ));
                    }
                }
            }
        }
    }
    assert!(checked >= 18, "rendered templates checked: {checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Each `--abi pypto` template uses exactly the placeholders pypto's own template of its
/// builtin uses (`PYPTO_ROOT`'s
/// `python/pypto/runtime/builtins/collectives/<builtin>/templates/kernel.cpp.in`).
#[test]
fn every_pypto_template_uses_the_placeholders_of_pyptos_template() {
    let test = "every_pypto_template_uses_the_placeholders_of_pyptos_template";
    let Some(pypto) = std::env::var_os("PYPTO_ROOT").filter(|v| !v.is_empty()) else {
        eprintln!("SKIP {test}: PYPTO_ROOT is not set (CONTRIBUTING.md, \"The real sources\")");
        return;
    };
    let dir = PathBuf::from(pypto).join("python/pypto/runtime/builtins/collectives");
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, p) in mapped() {
        let plan = collc_backend::cpp::pypto::plan(&p).expect("maps");
        let t = collc_backend::cpp::pypto::emit_template(&p, &pypto_opts()).expect("emits");
        let theirs = dir.join(plan.dir).join("templates/kernel.cpp.in");
        let theirs = std::fs::read_to_string(&theirs)
            .unwrap_or_else(|e| panic!("{}: {e}", theirs.display()));
        checked += 1;
        if placeholders(&t) != placeholders(&theirs) {
            failures.push(format!(
                "{} ({}): collc {:?}, pypto {:?}",
                path.display(),
                plan.builtin,
                placeholders(&t),
                placeholders(&theirs)
            ));
        }
    }
    assert!(checked >= 18, "templates checked: {checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The include path of the template check has nothing of collc on it: the plain `--abi
/// pypto` kernel, which includes `collc/pto_comm.hpp`, does not compile there.
#[test]
fn the_template_checks_include_path_has_nothing_of_collc() {
    let Some(r) = roots("the_template_checks_include_path_has_nothing_of_collc") else {
        return;
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/barrier.coll");
    let text = std::fs::read_to_string(&path).expect("readable");
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("checks");
    let k = collc_backend::cpp::pypto::emit(&p, &pypto_opts()).expect("emits");
    match pto_sim::syntax_check_alone(&k, &r) {
        Ok(cmd) => panic!("compiled without collc's runtime directory: {cmd}"),
        Err(CompileError::Failed { output, .. }) => {
            assert!(output.contains("collc/pto_comm.hpp"), "{output}")
        }
        Err(e) => panic!("the check did not run: {e}"),
    }
}

/// The element types pto-isa's A2/A3 tile instruction `inst` takes: the `T` of each
/// `std::is_same<T, X>` in its `static_assert(..., "Fix: INST has invalid data type.")`.
fn a2a3_types(pto_isa: &Path, file: &str, inst: &str) -> Vec<String> {
    let path = pto_isa.join("include/pto/npu/a2a3").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let end = text
        .find(&format!("\"Fix: {inst} has invalid data type.\""))
        .unwrap_or_else(|| panic!("{}: no data-type static_assert", path.display()));
    let start = text[..end]
        .rfind("static_assert(")
        .expect("the assert's start");
    text[start..end]
        .split("is_same<T,")
        .skip(1)
        .filter_map(|s| s.split('>').next())
        .map(|s| s.trim().to_string())
        .collect()
}

/// `--target ascend` reduces exactly the collc element types pto-isa's A2/A3 TADD, TMUL,
/// TMAX and TMIN accept (`collc_backend::cpp::pto::ASCEND_REDUCE_TYPES`; the others are
/// refused with `backend::elem-type`): read from the real headers' `static_assert`s.
#[test]
fn the_ascend_reduce_types_are_the_ones_pto_isas_a2a3_tile_instructions_take() {
    use collc_backend::cpp::pto::ASCEND_REDUCE_TYPES;
    use collc_spec::ir::ElemType;
    let Some(r) =
        roots("the_ascend_reduce_types_are_the_ones_pto_isas_a2a3_tile_instructions_take")
    else {
        return;
    };
    for (file, inst) in [
        ("TAdd.hpp", "TADD"),
        ("TMul.hpp", "TMUL"),
        ("TMax.hpp", "TMAX"),
        ("TMin.hpp", "TMIN"),
    ] {
        let takes = a2a3_types(&r.pto_isa, file, inst);
        assert!(takes.iter().any(|t| t == "float"), "{inst}: {takes:?}");
        for t in ElemType::ALL {
            assert_eq!(
                takes.iter().any(|x| x == t.cpp()),
                ASCEND_REDUCE_TYPES.contains(&t),
                "{inst} on {}: pto-isa takes {takes:?}",
                t.as_str()
            );
        }
    }
}
