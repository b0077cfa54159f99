//! The Ascend compile check without the toolchain: the Ascend build of every example
//! (`collc emit --target ascend`, `-D__CCE_AICORE__`) compiles under `g++ -std=c++17
//! -fsyntax-only -Wall -Wextra -Werror` against the declarations of the public pto-isa /
//! simpler API in `backend/runtime/ascend_decls/` (collc_backend::ascend_check), and
//! mutations of emitted code that a real Ascend build rejects are rejected here too —
//! including ones the CPU build of the same source accepts.
//!
//! Without a C++ compiler these tests print a loud SKIP line and pass.

use collc_backend::ascend_check::syntax_check;
use collc_backend::host::compile::{self, CompileError};
use collc_backend::testing::{ascend_kernel, coll_files, compiler_or_skip};
use std::path::{Path, PathBuf};

fn setup() -> bool {
    compiler_or_skip(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"),
        "the Ascend syntax-check tests",
    )
}

fn examples() -> Vec<PathBuf> {
    coll_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples"))
}

fn ascend_source(path: &Path) -> String {
    ascend_kernel(path, &collc_verifier::Ranges)
}

fn example(name: &str) -> String {
    ascend_source(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/{name}.coll")))
}

/// The compiler's diagnostics of a check expected to fail.
fn rejected(source: &str) -> String {
    match syntax_check(source) {
        Ok(cmd) => panic!("the mutated kernel compiled: {cmd}"),
        Err(CompileError::Failed { output, .. }) => output,
        Err(e) => panic!("the check did not run: {e}"),
    }
}

/// The same text built for CPU threads (the host build of the one source).
fn host_build_accepts(source: &str) -> bool {
    compile::library(source, compile::Build::Opt).is_ok()
}

#[test]
fn every_example_compiles_against_the_ascend_declarations() {
    if !setup() {
        return;
    }
    let mut failures = Vec::new();
    let files = examples();
    assert!(files.len() >= 18, "examples found: {}", files.len());
    for path in &files {
        if let Err(e) = syntax_check(&ascend_source(path)) {
            failures.push(format!("{}:\n{e}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// TWAIT's comparison before its value (the argument order of older pto-isa revisions):
/// `WaitCmp` does not convert to `int32_t`.
#[test]
fn swapped_twait_arguments_are_rejected() {
    if !setup() {
        return;
    }
    let k = example("barrier");
    let bad = k.replace(
        "pto::comm::TWAIT(cell, 1, pto::comm::WaitCmp::GE);",
        "pto::comm::TWAIT(cell, pto::comm::WaitCmp::GE, 1);",
    );
    assert_ne!(bad, k, "mutation applied");
    let out = rejected(&bad);
    assert!(out.contains("TWAIT"), "{out}");
}

/// A signal over a data window (a float pointer): `pto::comm::Signal` is a GlobalTensor of
/// int32 cells and takes `__gm__ int32_t*` only.
#[test]
fn a_signal_over_a_float_window_is_rejected() {
    if !setup() {
        return;
    }
    let k = example("broadcast");
    let bad = k.replacen(
        "pto::comm::Signal cell(sig + p);",
        "pto::comm::Signal cell(data + p);",
        1,
    );
    assert_ne!(bad, k, "mutation applied");
    let out = rejected(&bad);
    assert!(
        out.contains("Signal") || out.contains("GlobalTensor"),
        "{out}"
    );
}

/// The cache-line operand of dcci as a plain integer: the CCE builtin takes the
/// `cache_line_t` enum. The CPU runtime's dcci takes the same enum, so both builds reject it;
/// the notify operation as an integer likewise.
#[test]
fn integer_operands_of_dcci_and_tnotify_are_rejected() {
    if !setup() {
        return;
    }
    let k = example("barrier");
    let bad = k.replacen(
        "dcci(sig, cache_line_t::ENTIRE_DATA_CACHE);",
        "dcci(sig, 1);",
        1,
    );
    assert_ne!(bad, k, "mutation applied");
    assert!(rejected(&bad).contains("dcci"));
    let bad = k.replacen(
        "pto::comm::TNOTIFY(cell, 1, pto::comm::NotifyOp::AtomicAdd);",
        "pto::comm::TNOTIFY(cell, 1, 0);",
        1,
    );
    assert_ne!(bad, k, "mutation applied");
    assert!(rejected(&bad).contains("TNOTIFY"));
}

/// A Unified-Buffer tile whose row is not a multiple of 32 bytes (100 floats): pto-isa's
/// `Tile` static_asserts it; the CPU build of the same source compiles, so only this check
/// finds it before the Ascend toolchain does.
#[test]
fn an_unaligned_tile_is_rejected_where_the_cpu_build_accepts_it() {
    if !setup() {
        return;
    }
    let k = example("allreduce_mesh");
    let bad = k.replacen(
        "collc::Tile<float, 256> acc(",
        "collc::Tile<float, 100> acc(",
        1,
    );
    assert_ne!(bad, k, "mutation applied");
    let out = rejected(&bad);
    assert!(out.contains("32 bytes align"), "{out}");
    assert!(
        host_build_accepts(&bad),
        "the CPU build accepts the unaligned tile"
    );
}

/// The cache-line operand unqualified (`ENTIRE_DATA_CACHE`): pto-isa's CPU simulation declares
/// it only as `cache_line_t::ENTIRE_DATA_CACHE` (a static member of `struct cache_line_t`), so
/// the bare name does not build there; the declarations reject it too (`ascend_real.rs`
/// shows the real headers do).
#[test]
fn an_unqualified_cache_line_operand_is_rejected() {
    if !setup() {
        return;
    }
    let k = example("barrier");
    let bad = k.replacen(
        "dcci(sig, cache_line_t::ENTIRE_DATA_CACHE);",
        "dcci(sig, ENTIRE_DATA_CACHE);",
        1,
    );
    assert_ne!(bad, k, "mutation applied");
    assert!(rejected(&bad).contains("ENTIRE_DATA_CACHE"));
}
