//! The Ascend compile check without the CCE toolchain: a generated kernel's Ascend build
//! (`-D__CCE_AICORE__`) is compiled with the system C++ compiler under `-fsyntax-only`
//! against declarations of the public Ascend API it uses (`backend/runtime/ascend_decls/`:
//! pto-isa's `pto::comm` and tile instructions, the CCE builtins, simpler's `CommContext`,
//! block intrinsics and `ChipTensor`; each file cites its public source), so a type error
//! or a violated compile-time constraint in emitted Ascend code is found without `ccec`.
//!
//! The declarations are embedded and materialised once per content hash in the compile
//! cache (like the CPU runtime), so the check works outside the repository.

use crate::host::compile::{self, CompileError};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The declaration headers: (relative path, contents).
pub const DECL_FILES: &[(&str, &str)] = &[
    (
        "cce_builtins.hpp",
        include_str!("../runtime/ascend_decls/cce_builtins.hpp"),
    ),
    (
        "pto/pto-inst.hpp",
        include_str!("../runtime/ascend_decls/pto/pto-inst.hpp"),
    ),
    (
        "pto/comm/comm_types.hpp",
        include_str!("../runtime/ascend_decls/pto/comm/comm_types.hpp"),
    ),
    (
        "pto/comm/pto_comm_inst.hpp",
        include_str!("../runtime/ascend_decls/pto/comm/pto_comm_inst.hpp"),
    ),
    (
        "platform_comm/comm_context.h",
        include_str!("../runtime/ascend_decls/platform_comm/comm_context.h"),
    ),
    (
        "intrinsic.h",
        include_str!("../runtime/ascend_decls/intrinsic.h"),
    ),
    ("tensor.h", include_str!("../runtime/ascend_decls/tensor.h")),
];

/// The flags of the check (besides the include directories).
pub const FLAGS: &[&str] = &[
    "-std=c++17",
    "-fsyntax-only",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-D__CCE_AICORE__",
    "-x",
    "c++",
];

fn decls_hash() -> &'static str {
    static H: OnceLock<String> = OnceLock::new();
    H.get_or_init(|| {
        let mut parts: Vec<&[u8]> = Vec::new();
        for (p, c) in DECL_FILES {
            parts.push(p.as_bytes());
            parts.push(c.as_bytes());
        }
        compile::content_hash(&parts)
    })
}

/// The materialised declarations directory.
pub fn decls_dir() -> Result<PathBuf, CompileError> {
    let dir = compile::cache_dir()?.join(format!("ascend-decls-{}", &decls_hash()[..16]));
    for (rel, contents) in DECL_FILES {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                CompileError::Io(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        compile::write_once(&p, contents.as_bytes())?;
    }
    Ok(dir)
}

/// Compiles `source` (an emitted Ascend kernel) under `-fsyntax-only` against the
/// declarations and collc's runtime headers; returns the command on success, the
/// compiler's diagnostics on failure.
pub fn syntax_check(source: &str) -> Result<String, CompileError> {
    let cxx = compile::find_compiler()?;
    let decls = decls_dir()?;
    let rt = compile::runtime_dir()?;
    let dir = compile::cache_dir()?;
    let hash = compile::content_hash(&[source.as_bytes(), decls_hash().as_bytes()]);
    let src = dir.join(format!("ascend-{}.cpp", &hash[..16]));
    compile::write_once(&src, source.as_bytes())?;
    let mut args: Vec<String> = FLAGS.iter().map(|s| s.to_string()).collect();
    args.push(format!("-I{}", decls.display()));
    args.push(format!("-I{}", rt.display()));
    args.push(src.display().to_string());
    compile::run_compiler(&cxx, &args)
}
