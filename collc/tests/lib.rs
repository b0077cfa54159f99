//! `collc emit --target host|mpi --lib NAME FILE... -o DIR` end to end: the two verified
//! examples (allreduce_mesh, broadcast_read_complete) packaged as one library per target,
//! then built against through pkg-config (g++ / mpicxx) as an application would:
//!
//! * `examples/apps/host_app.cpp`: P = 2 and 4 threads, 1000 allreduce + 1000 broadcast calls
//!   each, back to back, every element compared with `std::reduce` / the root's input; and
//!   the host library at f64, i32 and i64 (`--elem`), the app built at that type;
//! * `examples/apps/mpi_app.cpp`: np 2 and 4, the library's allreduce inside a compute loop,
//!   compared bitwise with `MPI_Allreduce`, and a broadcast per iteration;
//! * `collc/tests/lib/{host,mpi}_bad_input.cpp`: every documented error code for P or n
//!   outside the verified domain, a failing `require`, a buffer too small, ranks calling
//!   different collectives (MPI: found by the call records with a one-hour wait timeout),
//!   a wrong root, a peer that never calls, two threads as one rank — each returned quickly
//!   (no hang, no abort);
//! * `collc/tests/lib/mpi_two_comms.cpp`: two MPI communicators in one process (world and a
//!   split), called alternately;
//! * the README's example program and (when `cmake` is installed) `find_package`; the MPI
//!   library's folder moved elsewhere, built through pkg-config and a C++-only CMake project;
//! * MPI: counts per call, a count above the configured one (EDOMAIN there, EBROKEN on the
//!   peer within seconds under a one-hour wait timeout), different counts (EMISMATCH), a
//!   window allocation failing on one rank (`mpi_alloc_fail.cpp`: ESYSTEM on every rank), and
//!   nothing printed to stderr by the library;
//! * `examples/apps/host_kinds_app.cpp` / `mpi_kinds_app.cpp`: reduce_scatter, all_to_all_v
//!   and a `per call` allgather (rotated over two instances, verified at that distance)
//!   against references (MPI_Reduce_scatter_block, MPI_Alltoallv), and their bad input
//!   (`collc/tests/lib/host_kinds_bad_input.cpp`);
//! * `collc/tests/lib/mpi_16mib.cpp`: one 16 MiB call of reduce_scatter, allgather,
//!   all_to_all and all_to_all_v (np 2) inside the shipped protocols' domains, each compared
//!   bitwise with Open MPI's;
//! * `collc/tests/lib/mpi_in_place.cpp`: inputs read in place from the caller's buffer
//!   (allgather, all_to_all, all_to_all_v) and a pulled allgather's input, which peers read,
//!   still staged (`pull_allgather.coll`), every call compared bitwise with Open MPI's at
//!   np 2 and 4, in place and staged, on shared-memory windows and on RMA;
//! * `collc/tests/lib/{host,mpi}_rooted.cpp`: reduce, gather and scatter (examples/reduce.coll,
//!   gather.coll, scatter.coll) at a root other than 0, non-roots passing NULL for the buffer
//!   only the root uses; host: P = 1..4 threads against the meaning computed in the program;
//!   MPI: np 1..4, several counts per call, bitwise against MPI_Reduce, MPI_Gather and
//!   MPI_Scatter, and a wrong root refused;
//! * `collc/tests/lib/mpi_write_in_place.cpp`: outputs written in place into the caller's
//!   buffer (a pulled allgather, the all-pairs allreduce, the credit-window broadcast) at np 2
//!   and 4, copied out, on RMA, after a failure; the push allgather forced to write in place
//!   fails;
//! * refusals: a `per call` window unsafe at reuse distance 2, an unverified protocol, a
//!   bad name.
//!
//! Needs g++ and pkg-config (and Open MPI for the MPI half); without them the test prints a
//! loud SKIP line and returns.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn scratch(name: &str) -> PathBuf {
    let d = repo()
        .join("target")
        .join("collc-lib-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn skip(test: &str, why: &str) {
    eprintln!("\n==================== SKIP {test} ====================");
    eprintln!("SKIP: {why}");
    eprintln!("=====================================================\n");
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether Open MPI (mpicxx, mpirun) and pkg-config are here; else one SKIP line for `test`.
fn have_mpi(test: &str) -> bool {
    let ok = have("mpicxx") && have("mpirun") && have("pkg-config");
    if !ok {
        skip(test, "needs Open MPI and pkg-config");
    }
    ok
}

fn collc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run collc")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const FILES: [&str; 2] = [
    "examples/allreduce_mesh.coll",
    "examples/broadcast_read_complete.coll",
];

/// The new kinds (reduce_scatter, all_to_all_v) and a `per call` allgather.
/// The rooted kinds: reduce, gather and scatter.
const ROOTED: [&str; 3] = [
    "examples/reduce.coll",
    "examples/gather.coll",
    "examples/scatter.coll",
];

const KINDS: [&str; 3] = [
    "examples/reduce_scatter.coll",
    "examples/all_to_all_v.coll",
    "examples/allgather.coll",
];

/// Emits the library once per test process; `None` after a SKIP line.
fn library(target: &str, name: &'static str) -> PathBuf {
    library_of(target, name, &FILES)
}

/// Emits library `name` of `files` into a fresh folder.
fn library_of(target: &str, name: &'static str, files: &[&str]) -> PathBuf {
    library_in(
        scratch(&format!("lib-{target}-{name}")),
        target,
        name,
        files,
    )
}

/// Emits library `name` of `args` (the files, after any `--elem` / `--op`) into `dir`.
fn library_in(dir: PathBuf, target: &str, name: &str, args_: &[&str]) -> PathBuf {
    let d = dir.to_string_lossy().into_owned();
    let mut args = vec!["emit", "--target", target, "--lib", name];
    args.extend(args_);
    args.extend(["-o", &d]);
    let o = collc(&args);
    assert!(o.status.success(), "collc emit --lib failed:\n{}", text(&o));
    for f in [
        format!("lib{name}.so"),
        format!("{name}.h"),
        format!("{name}.pc"),
        format!("{name}Config.cmake"),
        "README.md".to_string(),
        format!("example_{name}.cpp"),
    ] {
        assert!(dir.join(&f).is_file(), "{f} missing in {}", dir.display());
    }
    dir
}

fn host_lib() -> Option<&'static PathBuf> {
    static L: OnceLock<PathBuf> = OnceLock::new();
    if !have("g++") || !have("pkg-config") {
        skip("host library", "needs g++ and pkg-config");
        return None;
    }
    Some(L.get_or_init(|| library("host", "coll")))
}

fn mpi_lib() -> Option<&'static PathBuf> {
    static L: OnceLock<PathBuf> = OnceLock::new();
    if !have("mpicxx") || !have("mpirun") || !have("pkg-config") {
        skip(
            "MPI library",
            "needs Open MPI (mpicxx, mpirun) and pkg-config",
        );
        return None;
    }
    Some(L.get_or_init(|| library("mpi", "collmpi")))
}

fn host_kinds_lib() -> Option<&'static PathBuf> {
    static L: OnceLock<PathBuf> = OnceLock::new();
    if !have("g++") || !have("pkg-config") {
        skip("host library (kinds)", "needs g++ and pkg-config");
        return None;
    }
    Some(L.get_or_init(|| library_of("host", "kinds", &KINDS)))
}

fn mpi_kinds_lib() -> Option<&'static PathBuf> {
    static L: OnceLock<PathBuf> = OnceLock::new();
    if !have("mpicxx") || !have("mpirun") || !have("pkg-config") {
        skip(
            "MPI library (kinds)",
            "needs Open MPI (mpicxx, mpirun) and pkg-config",
        );
        return None;
    }
    Some(L.get_or_init(|| library_of("mpi", "kindsmpi", &KINDS[..2])))
}

/// Builds `src` against the library `name` in `dir` through pkg-config.
fn build(cxx: &str, src: &Path, dir: &Path, name: &str, out: &Path) {
    build_with(cxx, src, dir, name, out, &[]);
}

/// [`build`] with more compiler flags (`-D...`).
fn build_with(cxx: &str, src: &Path, dir: &Path, name: &str, out: &Path, more: &[&str]) {
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", name])
        .env("PKG_CONFIG_PATH", dir)
        .output()
        .expect("pkg-config");
    assert!(flags.status.success(), "pkg-config: {}", text(&flags));
    let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
    assert!(
        flags.contains(&format!("-l{name}")) && flags.contains(&dir.to_string_lossy().into_owned()),
        "pkg-config flags: {flags}"
    );
    // Open MPI's deprecated C++ bindings do not build with -Wextra -Werror: leave them out.
    let o = Command::new(cxx)
        .args([
            "-std=c++17",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DOMPI_SKIP_MPICXX=1",
        ])
        .args(more)
        .arg(src)
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(out)
        .output()
        .expect("compiler");
    assert!(o.status.success(), "{cxx} {}: {}", src.display(), text(&o));
}

/// Configures and builds the CMake project `cmakelists` (its `CMakeLists.txt`, written
/// into `dir`) in `dir/build`; the path of its executable `app`.
fn cmake_app(dir: &Path, cmakelists: String) -> PathBuf {
    std::fs::write(dir.join("CMakeLists.txt"), cmakelists).expect("CMakeLists");
    let b = dir.join("build");
    let o = Command::new("cmake")
        .arg("-S")
        .arg(dir)
        .arg("-B")
        .arg(&b)
        .output()
        .expect("cmake");
    assert!(o.status.success(), "{}", text(&o));
    let o = Command::new("cmake")
        .arg("--build")
        .arg(&b)
        .output()
        .expect("cmake --build");
    assert!(o.status.success(), "{}", text(&o));
    b.join("app")
}

/// Runs a command with a deadline (killed past it).
fn run(mut cmd: Command, deadline: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let t0 = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if t0.elapsed() > deadline {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!("hung past {deadline:?}: {}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// `mpirun -np NP PROG ARGS` in a session and shared-memory directory of its own (jobs
/// side by side share no Open MPI files: `launch::JobDir`).
fn mpirun(np: u32, prog: &Path, args: &[&str]) -> Output {
    mpirun_env(np, prog, args, &[])
}

/// [`mpirun`] with more environment for the ranks.
fn mpirun_env(np: u32, prog: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let dir = collc_backend::mpi::launch::JobDir::new().expect("job directory");
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &np.to_string()])
        .arg(prog)
        .args(args)
        .envs(dir.env(true))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .envs(env.iter().copied());
    run(c, Duration::from_secs(120))
}

#[test]
fn host_app_threads_call_allreduce_and_broadcast_1000_times() {
    let Some(lib) = host_lib() else { return };
    let dir = scratch("host-app");
    let exe = dir.join("host_app");
    build(
        "g++",
        &repo().join("examples/apps/host_app.cpp"),
        lib,
        "coll",
        &exe,
    );
    // P = 4 with one block; P = 2 with allreduce_mesh's C = 2 blocks (a thread per extra block).
    for (p, root, blocks) in [("4", "3", "1"), ("2", "0", "2")] {
        let mut c = Command::new(&exe);
        c.args([p, "1000", "1000", root, blocks]);
        let o = run(c, Duration::from_secs(120));
        let t = text(&o);
        assert!(o.status.success() && t.starts_with("ok: "), "P={p}: {t}");
        assert!(t.contains("1000 allreduce + 1000 broadcast"), "{t}");
    }
}

/// The host library of the two examples at f64, i32 and i64 (`--elem`; both list every
/// type): its API passes that type (the header's prototypes), and examples/apps/host_app.cpp
/// built at the matching C++ type (`-DELEM`) gets every element of 200 allreduce and 200
/// broadcast calls per rank right at P = 4, and at P = 2 with allreduce_mesh's C = 2.
#[test]
fn host_library_passes_the_packaged_element_type() {
    if !have("g++") || !have("pkg-config") {
        skip("host library at f64, i32, i64", "needs g++ and pkg-config");
        return;
    }
    for (elem, cxx) in [("f64", "double"), ("i32", "int32_t"), ("i64", "int64_t")] {
        let mut args = vec!["--elem", elem];
        args.extend(FILES);
        let lib = library_in(scratch(&format!("lib-host-{elem}")), "host", "coll", &args);
        let h = std::fs::read_to_string(lib.join("coll.h")).expect("coll.h");
        assert!(
            h.contains(&format!(
                "int coll_allreduce(coll_comm* comm, int rank, {cxx}* data, size_t count)"
            )),
            "{elem}: {h}"
        );
        let exe = lib.join("host_app");
        build_with(
            "g++",
            &repo().join("examples/apps/host_app.cpp"),
            &lib,
            "coll",
            &exe,
            &[&format!("-DELEM={cxx}")],
        );
        for (p, root, blocks) in [("4", "3", "1"), ("2", "0", "2")] {
            let mut c = Command::new(&exe);
            c.args([p, "1000", "200", root, blocks]);
            let o = run(c, Duration::from_secs(120));
            let t = text(&o);
            assert!(
                o.status.success() && t.starts_with("ok: "),
                "{elem} P={p}: {t}"
            );
            assert!(t.contains("200 allreduce + 200 broadcast"), "{t}");
        }
    }
}

#[test]
fn host_bad_input_returns_documented_codes() {
    let Some(lib) = host_lib() else { return };
    let dir = scratch("host-bad");
    let exe = dir.join("host_bad_input");
    build(
        "g++",
        &repo().join("collc/tests/lib/host_bad_input.cpp"),
        lib,
        "coll",
        &exe,
    );
    // One more than the smallest verified world limit the header states (the library's
    // communicator serves every collective, so that P is outside its domain).
    let header = std::fs::read_to_string(lib.join("coll.h")).expect("coll.h");
    let limit = header
        .lines()
        .filter(|l| l.contains("(the verified world limit)"))
        .filter_map(|l| {
            l.split("..=")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<i64>()
                .ok()
        })
        .min()
        .expect("coll.h states the verified world limit");
    let mut c = Command::new(&exe);
    c.arg((limit + 1).to_string());
    let o = run(c, Duration::from_secs(60));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("FAIL"), "{t}");
    assert_eq!(t.matches("PASS").count(), 27, "every case ran: {t}");
}

#[test]
fn host_readme_example_builds_and_runs() {
    let Some(lib) = host_lib() else { return };
    let readme = std::fs::read_to_string(lib.join("README.md")).expect("README");
    let example = std::fs::read_to_string(lib.join("example_coll.cpp")).expect("example");
    assert!(
        readme.contains(&example),
        "the README shows the example program"
    );
    assert!(example.lines().count() <= 25, "a ~20-line example");
    let dir = scratch("host-readme");
    let exe = dir.join("example");
    build("g++", &lib.join("example_coll.cpp"), lib, "coll", &exe);
    let o = run(Command::new(&exe), Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o));
    if !have("cmake") {
        skip("find_package", "cmake is not installed");
        return;
    }
    let app = cmake_app(
        &dir,
        format!(
            "cmake_minimum_required(VERSION 3.16)\nproject(app CXX)\nset(CMAKE_CXX_STANDARD 17)\nfind_package(coll CONFIG REQUIRED PATHS {})\nadd_executable(app {})\ntarget_link_libraries(app PRIVATE coll::coll)\n",
            lib.display(),
            lib.join("example_coll.cpp").display()
        ),
    );
    let o = run(Command::new(app), Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o));
}

/// The MPI library folder moved elsewhere still builds through pkg-config (`${pcfiledir}`)
/// and through CMake in a C++-only project (`find_package(MPI COMPONENTS CXX)`,
/// `MPI::MPI_CXX`), and the programs run.
#[test]
fn mpi_library_moved_builds_with_pkg_config_and_a_cxx_only_cmake_project() {
    let Some(lib) = mpi_lib() else { return };
    let dir = scratch("mpi-moved");
    let moved = dir.join("prefix");
    let o = Command::new("cp")
        .arg("-a")
        .arg(lib)
        .arg(&moved)
        .output()
        .expect("cp");
    assert!(o.status.success(), "{}", text(&o));
    let pc = std::fs::read_to_string(moved.join("collmpi.pc")).expect("collmpi.pc");
    assert!(
        !pc.contains(&lib.display().to_string()),
        "the .pc names the folder it was generated in:\n{pc}"
    );
    let exe = dir.join("example");
    build(
        "mpicxx",
        &moved.join("example_collmpi.cpp"),
        &moved,
        "collmpi",
        &exe,
    );
    let o = mpirun(2, &exe, &[]);
    assert!(o.status.success(), "{}", text(&o));
    if !have("cmake") {
        skip("find_package (MPI)", "cmake is not installed");
        return;
    }
    let app = cmake_app(
        &dir,
        format!(
            "cmake_minimum_required(VERSION 3.16)\nproject(app LANGUAGES CXX)\nset(CMAKE_CXX_STANDARD 17)\nfind_package(collmpi CONFIG REQUIRED PATHS {})\nadd_executable(app {})\ntarget_link_libraries(app PRIVATE collmpi::collmpi)\n",
            moved.display(),
            moved.join("example_collmpi.cpp").display()
        ),
    );
    let o = mpirun(2, &app, &[]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn mpi_app_allreduce_matches_mpi_allreduce_in_a_compute_loop() {
    let Some(lib) = mpi_lib() else { return };
    mpi_app_runs(
        lib,
        "collmpi",
        "mpi_app",
        &[(2, &["1000", "200", "1"]), (4, &["1000", "50", "1"])],
    );
}

#[test]
fn mpi_bad_input_returns_documented_codes() {
    let Some(lib) = mpi_lib() else { return };
    let dir = scratch("mpi-bad");
    let exe = dir.join("mpi_bad_input");
    build(
        "mpicxx",
        &repo().join("collc/tests/lib/mpi_bad_input.cpp"),
        lib,
        "collmpi",
        &exe,
    );
    let o = mpirun(2, &exe, &[]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("FAIL"), "{t}");
    assert_eq!(t.matches("PASS").count(), 22, "every case ran: {t}");
    // The library reports through its statuses and last_error() only.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("collc_mpi"), "the library printed:\n{err}");
}

/// Two communicators in one process (world and a split of it), each on its own duplicated
/// MPI_Comm with its own windows, called alternately; every result checked.
#[test]
fn mpi_two_communicators_used_alternately() {
    let Some(lib) = mpi_lib() else { return };
    let dir = scratch("mpi-two-comms");
    let exe = dir.join("mpi_two_comms");
    build(
        "mpicxx",
        &repo().join("collc/tests/lib/mpi_two_comms.cpp"),
        lib,
        "collmpi",
        &exe,
    );
    // osc/sm: Open MPI 4.1's osc/rdma names a window's shared-memory segment after the
    // communicator's context id, which the disjoint halves of one MPI_Comm_split share, so
    // the two halves' windows on one node collide (open-mpi/ompi#9492: "unlink(2) ...
    // osc_rdma... No such file", wrong sums). The library's README says so.
    for np in [4, 2] {
        let o = mpirun_env(np, &exe, &["30"], &[("OMPI_MCA_osc", "sm")]);
        let t = text(&o);
        assert!(o.status.success() && t.contains("ok: np="), "np {np}: {t}");
    }
}

/// A window allocation that fails on one rank (the runtime's test aid `alloc:1`) makes
/// `comm_create` return ESYSTEM on every rank, promptly, and a second communicator works.
#[test]
fn mpi_allocation_failing_on_one_rank_fails_create_on_every_rank() {
    let Some(lib) = mpi_lib() else { return };
    let dir = scratch("mpi-alloc-fail");
    let exe = dir.join("mpi_alloc_fail");
    build(
        "mpicxx",
        &repo().join("collc/tests/lib/mpi_alloc_fail.cpp"),
        lib,
        "collmpi",
        &exe,
    );
    for np in [2, 4] {
        let o = mpirun_env(np, &exe, &[], &[("COLLC_MPI_TEST_FAULT", "alloc:1")]);
        let t = text(&o);
        assert!(o.status.success() && t.contains("ok: np="), "np {np}: {t}");
        assert_eq!(t.matches(": ESYSTEM after").count(), np as usize, "{t}");
        assert!(
            t.contains("on this rank") && t.contains("on another rank"),
            "{t}"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("collc_mpi"), "the library printed:\n{err}");
    }
}

/// reduce_scatter, all_to_all_v and a `per call` allgather (its windows rotated over two
/// instances, verified at that reuse distance) called by P threads back to back, every
/// result compared with a reference computed from every rank's inputs.
#[test]
fn host_kinds_app_checks_reduce_scatter_all_to_all_v_and_allgather() {
    let Some(lib) = host_kinds_lib() else { return };
    let header = std::fs::read_to_string(lib.join("kinds.h")).expect("header");
    assert!(header.contains("int kinds_reduce_scatter(kinds_comm* comm, int rank, const float* send, size_t send_count, float* recv, size_t recv_count)"), "{header}");
    let dir = scratch("host-kinds-app");
    let exe = dir.join("host_kinds_app");
    build(
        "g++",
        &repo().join("examples/apps/host_kinds_app.cpp"),
        lib,
        "kinds",
        &exe,
    );
    for (p, iters) in [("2", "400"), ("4", "200")] {
        let mut c = Command::new(&exe);
        c.args([p, iters, "300", "3"]);
        let o = run(c, Duration::from_secs(180));
        let t = text(&o);
        assert!(o.status.success() && t.starts_with("ok: "), "P={p}: {t}");
    }
}

#[test]
fn host_kinds_bad_input_returns_documented_codes() {
    let Some(lib) = host_kinds_lib() else { return };
    let dir = scratch("host-kinds-bad");
    let exe = dir.join("host_kinds_bad_input");
    build(
        "g++",
        &repo().join("collc/tests/lib/host_kinds_bad_input.cpp"),
        lib,
        "kinds",
        &exe,
    );
    let o = run(Command::new(&exe), Duration::from_secs(60));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(!t.contains("FAIL"), "{t}");
    assert_eq!(t.matches("PASS").count(), 7, "every case ran: {t}");
}

/// reduce_scatter and all_to_all_v of the MPI library against MPI_Reduce_scatter_block and
/// MPI_Alltoallv (bitwise), np 2 and 4.
#[test]
fn mpi_kinds_app_matches_the_native_collectives() {
    let Some(lib) = mpi_kinds_lib() else { return };
    mpi_app_runs(
        lib,
        "kindsmpi",
        "mpi_kinds_app",
        &[(2, &["256", "100", "3"]), (4, &["256", "40", "3"])],
    );
}

/// 16 MiB in the count argument of reduce_scatter, allgather, all_to_all and all_to_all_v
/// (`collc/tests/lib/mpi_16mib.cpp`, np 2): the shipped protocols' domains serve it (no
/// EDOMAIN), and each result, and one at 4 KiB after it, equals Open MPI's bitwise.
#[test]
fn mpi_library_serves_16_mib_calls_of_every_exchange_kind() {
    if !have_mpi("mpi_library_serves_16_mib_calls_of_every_exchange_kind") {
        return;
    }
    let lib = library_of(
        "mpi",
        "bigm",
        &[
            "examples/reduce_scatter.coll",
            "examples/allgather.coll",
            "examples/all_to_all.coll",
            "examples/all_to_all_v.coll",
        ],
    );
    let exe = lib.join("mpi_16mib");
    build(
        "mpicxx",
        &repo().join("collc/tests/lib/mpi_16mib.cpp"),
        &lib,
        "bigm",
        &exe,
    );
    let o = mpirun(2, &exe, &[]);
    let t = text(&o);
    assert!(o.status.success() && t.contains("ok: np=2"), "{t}");
    assert!(!t.contains("FAIL"), "{t}");
    assert_eq!(t.matches("PASS").count(), 8, "every call ran: {t}");
    assert_eq!(t.matches("PASS all_to_all_v 16777216 B").count(), 1, "{t}");
}

/// Inputs read in place (`Coll::read_in_place`, `collc_mpi_lib.hpp` ReadInPlace): a library
/// of the shipped allgather, all_to_all and all_to_all_v reads each input straight from the
/// caller's buffer (its glue borrows the three input windows), while one of
/// `examples/pull_allgather.coll`, whose peers get from the input window, keeps the
/// staging copy. `collc/tests/lib/mpi_in_place.cpp` runs both at seven row lengths, three
/// calls each with new inputs, every result compared bitwise with Open MPI's and every input
/// checked unchanged: at np 2 and 4, staged (`COLLC_MPI_READ_IN_PLACE=0`), and on RMA windows
/// (`COLLC_MPI_SHM=0`). A pulled allgather read in place would fail here: its peers would read
/// the window's own memory, which the call never fills.
#[test]
fn mpi_library_reads_inputs_in_place_only_where_no_peer_reads_them() {
    if !have_mpi("mpi_library_reads_inputs_in_place_only_where_no_peer_reads_them") {
        return;
    }
    let pushed = library_in(
        scratch("in-place-pushed"),
        "mpi",
        "inp",
        &[
            "examples/allgather.coll",
            "examples/all_to_all.coll",
            "examples/all_to_all_v.coll",
        ],
    );
    let pulled = library_in(
        scratch("in-place-pulled"),
        "mpi",
        "inp",
        &["examples/pull_allgather.coll"],
    );
    let borrows = |d: &Path| {
        let glue = std::fs::read_to_string(d.join("src/inp.cpp")).expect("the library's glue");
        glue.matches("ReadInPlace collc_in(").count()
    };
    assert_eq!(borrows(&pushed), 3, "every pushed input is read in place");
    assert_eq!(borrows(&pulled), 0, "a pulled input is staged");
    let src = repo().join("collc/tests/lib/mpi_in_place.cpp");
    build("mpicxx", &src, &pushed, "inp", &pushed.join("app"));
    let only = ["-DINP_ALLGATHER_ONLY"];
    build_with("mpicxx", &src, &pulled, "inp", &pulled.join("app"), &only);
    let staged = [("COLLC_MPI_READ_IN_PLACE", "0")];
    let rma = [("COLLC_MPI_SHM", "0")];
    for (dir, kinds) in [(&pushed, 3), (&pulled, 1)] {
        for (np, env) in [(2, &[][..]), (4, &[][..]), (2, &staged[..]), (2, &rma[..])] {
            let o = mpirun_env(np, &dir.join("app"), &[], env);
            let t = text(&o);
            let ok = o.status.success() && t.contains(&format!("ok: np={np}"));
            assert!(ok, "{} np {np} {env:?}: {t}", dir.display());
            assert!(!t.contains("FAIL"), "{t}");
            assert_eq!(
                t.matches("PASS").count(),
                kinds * 7,
                "every length ran: {t}"
            );
        }
    }
}

/// Outputs written in place (`Coll::write_in_place`, `collc_mpi_lib.hpp` WriteInPlace): a
/// library of `examples/pull_allgather.coll`, `examples/allreduce_allpairs.coll` and
/// `examples/credit_window_pipeline.coll` writes each output straight into the caller's
/// buffer (its glue borrows the three output windows and copies none out);
/// `collc/tests/lib/mpi_write_in_place.cpp` runs it at seven row lengths, three calls of each
/// kind with new inputs into prefilled outputs, every result compared bitwise with Open MPI's,
/// and a failure inside an in-place call followed by a recovering call that must leave the
/// failed call's buffers alone: at np 2 and 4, copied out (`COLLC_MPI_WRITE_IN_PLACE=0`), and
/// on RMA windows (`COLLC_MPI_SHM=0`). The negative: the shipped allgather, whose peers put
/// into the target, keeps the copy (no borrow in its glue); its glue forced by hand to write
/// in place (the borrow and the skipped copy edited in, the library rebuilt) fails every
/// length: the peers' puts land in the window's own memory, never in the caller's buffer.
#[test]
fn mpi_library_writes_outputs_in_place_only_where_no_peer_reaches_them() {
    if !have_mpi("mpi_library_writes_outputs_in_place_only_where_no_peer_reaches_them") {
        return;
    }
    let wip = library_in(
        scratch("write-in-place"),
        "mpi",
        "wip",
        &[
            "examples/pull_allgather.coll",
            "examples/allreduce_allpairs.coll",
            "examples/credit_window_pipeline.coll",
        ],
    );
    let pushed = library_in(
        scratch("write-in-place-pushed"),
        "mpi",
        "wip",
        &["examples/allgather.coll"],
    );
    let glue = |d: &Path| std::fs::read_to_string(d.join("src/wip.cpp")).expect("the glue");
    let borrows = |d: &Path| glue(d).matches("WriteInPlace collc_out(").count();
    assert_eq!(borrows(&wip), 3, "every output is written in place");
    assert_eq!(
        borrows(&pushed),
        0,
        "an output peers put into is copied out"
    );
    let src = repo().join("collc/tests/lib/mpi_write_in_place.cpp");
    build("mpicxx", &src, &wip, "wip", &wip.join("app"));
    let copied = [("COLLC_MPI_WRITE_IN_PLACE", "0")];
    let rma = [("COLLC_MPI_SHM", "0")];
    for (np, env) in [(2, &[][..]), (4, &[][..]), (2, &copied[..]), (2, &rma[..])] {
        let o = mpirun_env(np, &wip.join("app"), &[], env);
        let t = text(&o);
        let ok = o.status.success() && t.contains(&format!("ok: np={np}"));
        assert!(ok, "np {np} {env:?}: {t}");
        assert!(!t.contains("FAIL"), "{t}");
        assert_eq!(t.matches("PASS").count(), 3 * 7 + 1, "every check ran: {t}");
        assert!(t.contains("PASS after-failure m=300"), "{t}");
    }
    // The negative: the push allgather's glue forced to write its target in place.
    let only = ["-DWIP_ALLGATHER_ONLY"];
    build_with("mpicxx", &src, &pushed, "wip", &pushed.join("app"), &only);
    let o = mpirun(2, &pushed.join("app"), &[]);
    let t = text(&o);
    assert!(
        o.status.success() && t.contains("ok: np=2"),
        "unforced: {t}"
    );
    force_write_in_place(&pushed, "wip");
    build_with("mpicxx", &src, &pushed, "wip", &pushed.join("app"), &only);
    let o = mpirun(2, &pushed.join("app"), &[]);
    let t = text(&o);
    assert!(!o.status.success() && !t.contains("ok: np="), "forced: {t}");
    assert_eq!(
        t.matches("FAIL allgather").count(),
        7,
        "every length fails: {t}"
    );
}

/// Edits library `name`'s glue in `dir` (one allgather, collective 0: input window 0, target
/// window 1) to write the target in place as the generator does where it may, and rebuilds
/// the library with the generator's flags.
fn force_write_in_place(dir: &Path, name: &str) {
    let path = dir.join(format!("src/{name}.cpp"));
    let glue = std::fs::read_to_string(&path).expect("the glue");
    let edits = [
        (
            "return comm->comm.call(0, ",
            "WriteInPlace collc_out(collc_lib_mpi_borrow_0(comm->args[0], 1), output); return comm->comm.call(0, ",
        ),
        (
            "[&] { collc_lib_mpi_copy_out(collc_lib_mpi_window_0, a, 1, output,",
            "[&] { if (!collc_out.active()) collc_lib_mpi_copy_out(collc_lib_mpi_window_0, a, 1, output,",
        ),
    ];
    let mut forced = glue.clone();
    for (from, to) in edits {
        assert_eq!(
            forced.matches(from).count(),
            1,
            "`{from}` in the glue:\n{glue}"
        );
        forced = forced.replace(from, to);
    }
    std::fs::write(&path, forced).expect("write the glue");
    let mut sources: Vec<String> = std::fs::read_dir(dir.join("src"))
        .expect("src")
        .map(|e| e.expect("entry").path().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".cpp"))
        .collect();
    sources.sort();
    let mut args: Vec<String> = collc_backend::library::BUILD_FLAGS
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(format!("-I{}", dir.join("src").display()));
    args.push(format!("-I{}", dir.display()));
    args.extend(sources);
    args.push("-o".into());
    args.push(
        dir.join(format!("lib{name}.so"))
            .to_string_lossy()
            .into_owned(),
    );
    collc_backend::library::compile("mpicxx", &args).expect("the forced library builds");
}

/// Builds `examples/apps/APP.cpp` against library `name` in `lib` and runs it under mpirun
/// at each (np, args); each run must succeed and print "ok: np=".
fn mpi_app_runs(lib: &Path, name: &str, app: &str, runs: &[(u32, &[&str])]) {
    let dir = scratch(app);
    let exe = dir.join(app);
    let src = repo().join(format!("examples/apps/{app}.cpp"));
    build("mpicxx", &src, lib, name, &exe);
    for (np, args) in runs {
        let o = mpirun(*np, &exe, args);
        let t = text(&o);
        assert!(o.status.success() && t.contains("ok: np="), "np {np}: {t}");
    }
}

#[test]
fn refusals() {
    let dir = scratch("refusals");
    let d = dir.to_string_lossy().into_owned();
    // A `per call` window the protocol does not protect at reuse distance 2: the root never
    // waits, so its call c+2 may overwrite a peer's call-c data. Verified as written (fresh
    // buffers), refused as a library, naming the window and what to change.
    let fixture = "collc/tests/lib/push_broadcast.coll";
    let o = collc(&["verify", fixture]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = collc(&["emit", "--target", "host", "--lib", "pb", fixture, "-o", &d]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("lib::per-call-reuse") && t.contains("`data`"),
        "{t}"
    );
    assert!(t.contains("call c+2 reuses call c's buffer"), "{t}");
    assert!(!dir.join("libpb.so").exists());
    // The verifier gate: a protocol the verifier rejects is not packaged.
    let o = collc(&[
        "emit",
        "--target",
        "host",
        "--lib",
        "bad",
        "examples/bugs/broadcast_reused_window.coll",
        "-o",
        &d,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!dir.join("libbad.so").exists());
    // Usage: a name that is not a C identifier, a library for Ascend, no output folder.
    for args in [
        vec![
            "emit", "--target", "host", "--lib", "1x", FILES[0], "-o", &d,
        ],
        vec![
            "emit", "--target", "ascend", "--lib", "x", FILES[0], "-o", &d,
        ],
        vec!["emit", "--target", "host", "--lib", "x", FILES[0]],
        // `--elem` applies to every FILE: one that does not list the type is refused.
        vec![
            "emit", "--target", "host", "--lib", "x", "--elem", "f64", FILES[0], KINDS[0], "-o", &d,
        ],
        // --pmpi packages every listed type and operator itself.
        vec![
            "emit", "--target", "mpi", "--pmpi", "--elem", "f64", FILES[0], "-o", &d,
        ],
        vec!["emit", "--target", "host", FILES[0], FILES[1]],
    ] {
        let o = collc(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}

/// examples/sense_reversing_barrier.coll with `calls <= 2`, packaged as library `name`.
fn calls_bound_library(target: &str, name: &'static str) -> PathBuf {
    let dir = scratch(&format!("calls-bound-{target}"));
    let text = std::fs::read_to_string(repo().join("examples/sense_reversing_barrier.coll"))
        .expect("example");
    let text = text.replace("calls <= 100000000;", "calls <= 2;");
    assert!(text.contains("calls <= 2;"));
    let f = dir.join("sense_reversing_barrier.coll");
    std::fs::write(&f, text).expect("written");
    library_of(target, name, &[f.to_str().expect("utf-8")])
}

#[test]
fn host_library_refuses_the_call_past_calls_bound() {
    if !have("g++") || !have("pkg-config") {
        return skip(
            "host_library_refuses_the_call_past_calls_bound",
            "needs g++ and pkg-config",
        );
    }
    let lib = calls_bound_library("host", "bnd");
    let exe = lib.join("calls_bound_host");
    let src = repo().join("collc/tests/lib/calls_bound_host.cpp");
    build("g++", &src, &lib, "bnd", &exe);
    let o = run(Command::new(&exe), Duration::from_secs(60));
    let t = text(&o);
    assert!(o.status.success() && !t.contains("FAIL"), "{t}");
    assert_eq!(t.matches("PASS").count(), 3, "{t}");
}

#[test]
fn mpi_library_refuses_the_call_past_calls_bound() {
    if !have_mpi("mpi_library_refuses_the_call_past_calls_bound") {
        return;
    }
    let lib = calls_bound_library("mpi", "bndm");
    let exe = lib.join("calls_bound_mpi");
    let src = repo().join("collc/tests/lib/calls_bound_mpi.cpp");
    build("mpicxx", &src, &lib, "bndm", &exe);
    let o = mpirun(2, &exe, &[]);
    let t = text(&o);
    assert!(o.status.success() && !t.contains("FAIL"), "{t}");
    assert_eq!(t.matches("PASS").count(), 4, "{t}");
}

/// Several allreduce protocols in one MPI library, one chosen per call from a decision table
/// (`collc/tests/lib/mpi_choice.cpp`, np 2 and 3: counts on both sides of the table's
/// crossover and a count the preferred protocol's `require` refuses, each result compared
/// with MPI_Allreduce; pinning; a protocol set aside at creation at np 3).
#[test]
fn mpi_library_chooses_among_allreduce_protocols_per_call() {
    if !have_mpi("mpi_library_chooses_among_allreduce_protocols_per_call") {
        return;
    }
    let dir = scratch("choice");
    let (lib, table) = choice_library(&dir, "mpi", "choice");
    let tune = std::fs::read_to_string(lib.join("choice.tune")).expect("choice.tune");
    assert!(tune.contains("allreduce 2 4096 allreduce_ring"), "{tune}");
    let exe = lib.join("mpi_choice");
    build(
        "mpicxx",
        &repo().join("collc/tests/lib/mpi_choice.cpp"),
        &lib,
        "choice",
        &exe,
    );
    for np in [2, 3] {
        let o = mpirun(np, &exe, &[]);
        let t = text(&o);
        assert!(o.status.success() && !t.contains("FAIL"), "np {np}: {t}");
        assert_eq!(t.matches("PASS").count(), 26, "np {np}: {t}");
    }
    // A table naming a protocol the library does not hold, and a kind with a protocol whose
    // count is fixed at creation, are usage errors.
    std::fs::write(&table, "allreduce 2 1 allreduce_nope\n").expect("table");
    let o = collc(&[
        "emit",
        "--target",
        "mpi",
        "--lib",
        "bad",
        "examples/allreduce_mesh.coll",
        "examples/allreduce_ring.coll",
        "--table",
        table.to_str().expect("utf-8"),
        "-o",
        dir.join("bad").to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("allreduce_nope"), "{}", text(&o));
    let o = collc(&[
        "emit",
        "--target",
        "mpi",
        "--lib",
        "bad",
        "examples/allreduce_mesh.coll",
        "examples/allreduce_allpairs.coll",
        "-o",
        dir.join("bad").to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("count is fixed at creation"),
        "{}",
        text(&o)
    );
}

/// The three allreduce protocols as library `name` for `target` in `dir/lib`, with the
/// decision table [`choice_table`] (whose crossover its README must state): (library,
/// table).
fn choice_library(dir: &Path, target: &str, name: &str) -> (PathBuf, PathBuf) {
    let table = choice_table(dir);
    let lib = library_in(
        dir.join("lib"),
        target,
        name,
        &[
            "examples/allreduce_mesh.coll",
            "examples/allreduce_ring.coll",
            "examples/allreduce_recursive_doubling.coll",
            "--table",
            table.to_str().expect("utf-8"),
        ],
    );
    let readme = std::fs::read_to_string(lib.join("README.md")).expect("README");
    assert!(
        readme.contains("| allreduce | 2 | 4096 | `allreduce_ring` |"),
        "{readme}"
    );
    (lib, table)
}

/// The decision table the choice tests package: mesh below 4096 elements at P 2, the ring
/// from 4096 on.
fn choice_table(dir: &Path) -> PathBuf {
    let table = dir.join("choice.table");
    std::fs::write(
        &table,
        "# kind P count protocol\nallreduce 2 1 allreduce_mesh\nallreduce 2 4096 allreduce_ring\n",
    )
    .expect("table");
    table
}

/// `collc tune --lib NAME FILES...` on a tiny run into `dir`: np 2, counts 64 and 256, one
/// block of two calls; `more` adds arguments (`--target host`).
fn tune_tiny(dir: &Path, name: &str, files: &[&str], more: &[&str]) -> Output {
    let d = dir.to_string_lossy().into_owned();
    let mut args = vec!["tune", "--lib", name];
    args.extend(files);
    args.extend(more);
    args.extend([
        "--np", "2", "--counts", "64,256", "--reps", "1", "--calls", "2", "-o", &d,
    ]);
    collc(&args)
}

/// Every rule (`KIND P COUNT PROTOCOL`) is a row of the table in `dir`'s README.
fn rules_in_readme(dir: &Path, rules: &[&str]) {
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README");
    for r in rules {
        let f: Vec<&str> = r.split_whitespace().collect();
        let row = format!("| {} | {} | {} | `{}` |", f[0], f[1], f[2], f[3]);
        assert!(readme.contains(&row), "{row} not in README:\n{readme}");
    }
}

/// The report of [`tune_tiny`] on the two allreduce examples: the load line, one figure per
/// protocol and count, the rules, which are `dir/NAME.tune` and rows of the README. The rules.
fn tiny_allreduce_report(o: &Output, dir: &Path, name: &str) -> Vec<String> {
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(o));
    let lines: Vec<&str> = report.lines().collect();
    assert!(lines[0].starts_with("np 2: load "), "{report}");
    assert_eq!(
        lines[1], "kind P count protocol median_us_per_call",
        "{report}"
    );
    let mut figures = Vec::new();
    for l in &lines[2..6] {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.len(), 5, "{l}");
        assert_eq!((f[0], f[1]), ("allreduce", "2"), "{l}");
        assert!(f[4].parse::<f64>().is_ok_and(|us| us > 0.0), "{l}");
        figures.push((f[2].to_string(), f[3].to_string()));
    }
    figures.sort();
    let want: Vec<(String, String)> = ["64", "256"]
        .iter()
        .flat_map(|c| ["allreduce_mesh", "allreduce_ring"].map(|p| (c.to_string(), p.to_string())))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(figures, want, "{report}");
    assert!(lines[6].starts_with("decision table ("), "{report}");
    let tune = std::fs::read_to_string(dir.join(format!("{name}.tune"))).expect("NAME.tune");
    let rules: Vec<&str> = tune.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rules, lines[7..lines.len() - 1].to_vec(), "{report}");
    assert!(rules[0].starts_with("allreduce 2 1 "), "{tune}");
    rules_in_readme(dir, &rules);
    rules.iter().map(|r| r.to_string()).collect()
}

/// The library follows the table: at each count, the protocol a call runs (`protocol COUNT
/// NAME` lines of `out`) is the rule of the largest count not above it.
fn follows_rules(out: &Output, rules: &[String]) {
    assert!(out.status.success(), "{}", text(out));
    for count in [64i64, 256] {
        let pick = rules
            .iter()
            .map(|r| r.split_whitespace().collect::<Vec<_>>())
            .rfind(|f| f[2].parse::<i64>().is_ok_and(|c| c <= count))
            .map(|f| f[3].to_string())
            .expect("a rule from count 1");
        let line = format!("protocol {count} {pick}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(&line),
            "{line}: {}",
            text(out)
        );
    }
}

/// `collc tune` on a tiny run (np 2, two counts, one block of two calls): the report's
/// format (the load line, one figure per protocol and count, the rules), the table it wrote
/// (`tn.tune`, the README), and that the library it built follows that table. Not the
/// timings: which protocol wins is whatever this run measured.
#[test]
fn tune_writes_a_table_the_library_follows() {
    if !have_mpi("tune_writes_a_table_the_library_follows") {
        return;
    }
    let dir = scratch("tune");
    let files = [
        "examples/allreduce_mesh.coll",
        "examples/allreduce_ring.coll",
    ];
    let o = tune_tiny(&dir, "tn", &files, &[]);
    let rules = tiny_allreduce_report(&o, &dir, "tn");
    let exe = dir.join("mpi_tuned");
    build(
        "mpicxx",
        &repo().join("collc/tests/lib/mpi_tuned.cpp"),
        &dir,
        "tn",
        &exe,
    );
    follows_rules(&mpirun(2, &exe, &["64", "256"]), &rules);
}

/// `collc tune --target host`: the same tiny run with P = 2 threads, the same report and
/// table, and the host library it built follows the table (`collc/tests/lib/host_tuned.cpp`).
#[test]
fn tune_host_writes_a_table_the_host_library_follows() {
    if !have("g++") || !have("pkg-config") {
        return skip(
            "tune_host_writes_a_table_the_host_library_follows",
            "needs g++ and pkg-config",
        );
    }
    let dir = scratch("tune-host");
    let files = [
        "examples/allreduce_mesh.coll",
        "examples/allreduce_ring.coll",
    ];
    let o = tune_tiny(&dir, "ht", &files, &["--target", "host"]);
    let rules = tiny_allreduce_report(&o, &dir, "ht");
    let exe = dir.join("host_tuned");
    build(
        "g++",
        &repo().join("collc/tests/lib/host_tuned.cpp"),
        &dir,
        "ht",
        &exe,
    );
    let mut c = Command::new(&exe);
    c.args(["64", "256"]);
    follows_rules(&run(c, Duration::from_secs(60)), &rules);
}

/// Several allreduce protocols in one host library, one chosen per call from a decision
/// table (`collc/tests/lib/host_choice.cpp`, P 2 and 3 threads: counts on both sides of the
/// table's crossover and a count the preferred protocol's `require` refuses, every rank's
/// result checked element by element; pinning; a protocol set aside at creation at P 3).
#[test]
fn host_library_chooses_among_allreduce_protocols_per_call() {
    if !have("g++") || !have("pkg-config") {
        return skip(
            "host_library_chooses_among_allreduce_protocols_per_call",
            "needs g++ and pkg-config",
        );
    }
    let dir = scratch("host-choice");
    let (lib, _) = choice_library(&dir, "host", "hchoice");
    let exe = lib.join("host_choice");
    build(
        "g++",
        &repo().join("collc/tests/lib/host_choice.cpp"),
        &lib,
        "hchoice",
        &exe,
    );
    for p in ["2", "3"] {
        let mut c = Command::new(&exe);
        c.arg(p);
        let o = run(c, Duration::from_secs(120));
        let t = text(&o);
        assert!(o.status.success() && !t.contains("FAIL"), "P {p}: {t}");
        assert_eq!(t.matches("PASS").count(), 24, "P {p}: {t}");
    }
}

/// `collc tune` of kinds other than allreduce and broadcast on a tiny run (np 2, two counts,
/// one block of two calls): two reduce_scatter protocols measured at both counts, two
/// barriers once (as count 1), and a table with a rule from count 1 for each kind, in the
/// README. Not the timings.
#[test]
fn tune_measures_every_kind_with_several_protocols() {
    if !have_mpi("tune_measures_every_kind_with_several_protocols") {
        return;
    }
    let dir = scratch("tune-kinds");
    let o = tune_tiny(
        &dir,
        "tk",
        &[
            "examples/reduce_scatter.coll",
            "examples/incore_reduce_scatter.coll",
            "examples/barrier.coll",
            "examples/dissemination_barrier.coll",
        ],
        &[],
    );
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    let mut figures: Vec<(String, String, String)> = report
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 5 && f[1] == "2" && f[4].parse::<f64>().is_ok_and(|us| us > 0.0))
        .map(|f| (f[0].to_string(), f[2].to_string(), f[3].to_string()))
        .collect();
    figures.sort();
    let want: Vec<(String, String, String)> = [
        ("barrier", "1", "barrier"),
        ("barrier", "1", "dissemination_barrier"),
        ("reduce_scatter", "256", "incore_reduce_scatter"),
        ("reduce_scatter", "256", "reduce_scatter"),
        ("reduce_scatter", "64", "incore_reduce_scatter"),
        ("reduce_scatter", "64", "reduce_scatter"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(figures, want, "{report}");
    let tune = std::fs::read_to_string(dir.join("tk.tune")).expect("tk.tune");
    let rules: Vec<&str> = tune.lines().filter(|l| !l.starts_with('#')).collect();
    for kind in ["barrier", "reduce_scatter"] {
        assert!(
            rules.iter().any(|r| r.starts_with(&format!("{kind} 2 1 "))),
            "{kind}: {tune}"
        );
    }
    rules_in_readme(&dir, &rules);
}

/// reduce, gather and scatter in one host library (`collc/tests/lib/host_rooted.cpp`): P = 1
/// to 4 threads, every rank's result against the collective's meaning, twice over.
#[test]
fn host_library_reduces_gathers_and_scatters() {
    if !have("g++") || !have("pkg-config") {
        return skip(
            "host_library_reduces_gathers_and_scatters",
            "needs g++ and pkg-config",
        );
    }
    let lib = library_of("host", "rk", &ROOTED);
    let exe = lib.join("host_rooted");
    build(
        "g++",
        &repo().join("collc/tests/lib/host_rooted.cpp"),
        &lib,
        "rk",
        &exe,
    );
    for p in ["1", "2", "3", "4"] {
        let mut c = Command::new(&exe);
        c.arg(p);
        let o = run(c, Duration::from_secs(120));
        let t = text(&o);
        assert!(o.status.success() && !t.contains("FAIL"), "P {p}: {t}");
        assert_eq!(t.matches("PASS").count(), 6, "P {p}: {t}");
    }
}

/// reduce, gather and scatter in one MPI library (`collc/tests/lib/mpi_rooted.cpp`): np 1
/// to 4, four counts per call on one communicator, bitwise against Open MPI's MPI_Reduce,
/// MPI_Gather and MPI_Scatter, and a wrong root refused (EDOMAIN).
#[test]
fn mpi_library_reduces_gathers_and_scatters_as_open_mpi() {
    if !have_mpi("mpi_library_reduces_gathers_and_scatters_as_open_mpi") {
        return;
    }
    let lib = library_of("mpi", "rk", &ROOTED);
    let exe = lib.join("mpi_rooted");
    build(
        "mpicxx",
        &repo().join("collc/tests/lib/mpi_rooted.cpp"),
        &lib,
        "rk",
        &exe,
    );
    for np in 1..=4 {
        let o = mpirun(np, &exe, &[]);
        let t = text(&o);
        assert!(o.status.success() && !t.contains("FAIL"), "np {np}: {t}");
        assert_eq!(t.matches("PASS").count(), 25, "np {np}: {t}");
    }
}
