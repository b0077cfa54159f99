//! `collc emit --target ascend --abi pypto`: a kernel with the args block of pypto's host
//! collective builtin; a protocol without a builtin counterpart is a clear error; the ABI is
//! an Ascend one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

fn collc(args: &[&str]) -> (Option<i32>, String, String) {
    let o: Output = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .env(
            "COLLC_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache"),
        )
        .args(["--color", "never"])
        .args(args)
        .output()
        .expect("collc runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn emit_abi_pypto_prints_the_builtins_entry() {
    let (code, out, err) = collc(&[
        "emit",
        "--target",
        "ascend",
        "--abi",
        "pypto",
        "examples/reduce_scatter.coll",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args)"));
    assert!(
        out.contains("pypto's builtin.tensor.reduce_scatter"),
        "{out}"
    );
    assert!(out.contains(
        "__gm__ float* data = reinterpret_cast<__gm__ float*>(collc_data_tensor->buffer.addr) + collc_data_tensor->start_offset;"
    ));
    assert!(
        out.contains("const int64_t P = static_cast<int64_t>(args[2]);"),
        "{out}"
    );
    assert!(
        out.contains("reinterpret_cast<__gm__ CommContext*>(args[3])"),
        "{out}"
    );
}

#[test]
fn emit_abi_pypto_refuses_a_collective_without_a_builtin_counterpart() {
    let (code, out, err) = collc(&[
        "emit",
        "--target",
        "ascend",
        "--abi",
        "pypto",
        "examples/arrival_barrier.coll",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("backend::pypto-abi"), "{err}");
    assert!(
        err.contains("`arrival_barrier` has no pypto builtin"),
        "{err}"
    );
    assert!(err.contains("declares 2 signal(s)"), "{err}");
    assert!(
        err.contains("the builtin has no tensor for this signal"),
        "{err}"
    );
}

/// pypto's one barrier builtin (`pld.tensor.barrier` → `builtin.tensor.barrier`) takes one
/// signal cell per rank and synchronises every rank: a per-lane `barrier(blk)` is refused at
/// its block variable instead of being emitted as that barrier.
#[test]
fn emit_abi_pypto_refuses_a_per_lane_barrier_at_its_block_variable() {
    let file = "examples/idioms/nccl_lsa_lane_barrier.coll";
    let text = std::fs::read_to_string(root().join(file)).expect("read the idiom");
    let line = 1 + text
        .lines()
        .position(|l| l.trim_start().starts_with("blocks blk in"))
        .expect("the idiom declares its blocks");
    let (code, out, err) = collc(&["emit", "--target", "ascend", "--abi", "pypto", file]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("backend::pypto-abi"), "{err}");
    assert!(
        err.contains("`nccl_lsa_lane_barrier` has no pypto builtin counterpart"),
        "{err}"
    );
    assert!(err.contains("no per-lane or per-block form"), "{err}");
    assert!(err.contains(&format!("{file}:{line}:")), "{err}");
    // The same file with the collc ABI is emitted: the refusal is the pypto ABI's.
    let (code, out, err) = collc(&["emit", "--target", "ascend", file]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("nccl_lsa_lane_barrier"), "{out}");
}

#[test]
fn abi_pypto_is_an_ascend_abi() {
    let (code, _, err) = collc(&[
        "emit",
        "--target",
        "host",
        "--abi",
        "pypto",
        "examples/barrier.coll",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--target ascend"), "{err}");
}

/// `-o NAME.cpp.in` writes pypto's template of the builtin's kernel: a broadcast's root is
/// `{{root_cpp}}`, its element type `{{dtype_cpp}}`, collc's adapter inline; `-o NAME.cpp`
/// writes the plain kernel.
#[test]
fn emit_abi_pypto_to_a_cpp_in_file_writes_pyptos_template() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pypto-template-cli");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let template = dir.join("kernel.cpp.in");
    let plain = dir.join("kernel.cpp");
    for out in [&template, &plain] {
        let (code, _, err) = collc(&[
            "emit",
            "--target",
            "ascend",
            "--abi",
            "pypto",
            "examples/broadcast.coll",
            "-o",
            out.to_str().expect("utf-8 path"),
        ]);
        assert_eq!(code, Some(0), "{err}");
    }
    let t = std::fs::read_to_string(&template).expect("written");
    assert!(t.contains("static_cast<int64_t>({{root_cpp}})"), "{t}");
    assert!(t.contains("__gm__ {{dtype_cpp}}* data"), "{t}");
    assert!(t.contains("{{template_package}}"), "{t}");
    assert!(!t.contains("#include \"collc/"), "{t}");
    let k = std::fs::read_to_string(&plain).expect("written");
    assert!(
        k.contains("COLLC_PYPTO_ROOT") && !k.contains("{{dtype_cpp}}"),
        "{k}"
    );
}

/// pypto renders `{{dtype_cpp}}` as float or half: the template of a `type` parameter's f64
/// instance is refused, naming the window; its f32 instance is written.
#[test]
fn a_template_of_a_non_f32_window_is_refused() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pypto-template-elem");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let out = dir.join("ring.cpp.in");
    let out = out.to_str().expect("utf-8 path");
    let args = |elem: &'static str| {
        [
            "emit",
            "--target",
            "ascend",
            "--abi",
            "pypto",
            "examples/allreduce_ring.coll",
            "--elem",
            elem,
            "-o",
            out,
        ]
    };
    let (code, _, err) = collc(&args("f64"));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("backend::pypto-abi"), "{err}");
    assert!(err.contains("window `data` holds f64"), "{err}");
    let (code, _, err) = collc(&args("f32"));
    assert_eq!(code, Some(0), "{err}");
}
