//! `collc_backend::library` below the CLI: what every shipped example packages into (or why
//! it is refused), and that the generated C++ of every kind the libraries support builds
//! with `-Wall -Wextra -Werror` for host threads and MPI (barrier and all_to_all are not
//! exercised by the applications of `collc/tests/lib.rs`; they are packaged here with every
//! window `reused`, all_to_all_v with its `per call` buffers rotated — a build check of the
//! generator, not a verified library: the gate is the CLI's).

use collc_backend::library::{self, LibError, LibTarget, Member};
use collc_spec::ir::Lifetime;
use collc_spec::Validated;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn load(name: &str) -> Validated {
    let text = std::fs::read_to_string(repo().join("examples").join(name)).expect("read");
    collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("validates")
}

fn member(p: &Validated) -> Member<'_> {
    Member {
        protocol: p,
        source: None,
        warning: Vec::new(),
        world_limit: None,
    }
}

/// The shipped examples' file names (`examples/*.coll`), sorted.
fn example_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("examples"))
        .expect("examples")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".coll"))
        .collect();
    files.sort();
    files
}

fn refused_code(files: &[&str]) -> Option<String> {
    let ps: Vec<Validated> = files.iter().map(|f| load(f)).collect();
    let ms: Vec<Member> = ps.iter().map(member).collect();
    match library::generate(&ms, "x", LibTarget::Host) {
        Err(LibError::Refused { diagnostics, .. }) => Some(diagnostics[0].code.clone()),
        Err(e) => Some(format!("other: {e}")),
        Ok(_) => None,
    }
}

#[test]
fn what_each_example_packages_into() {
    // Reused windows: packaged.
    for f in [
        "allreduce_mesh.coll",
        "allreduce_ring.coll",
        "broadcast_read_complete.coll",
        "barrier.coll",
        "arrival_barrier.coll",
        "reduce_scatter.coll",
    ] {
        assert_eq!(refused_code(&[f]), None, "{f}");
    }
    // `per call` windows: a library has no bound on its calls, so it packages them only
    // rotated over ROTATION instances (verified at that distance by the caller's gate).
    for f in [
        "broadcast.coll",
        "allgather.coll",
        "all_to_all.coll",
        "all_to_all_v.coll",
    ] {
        assert_eq!(
            refused_code(&[f]).as_deref(),
            Some("lib::per-call-buffer"),
            "{f}"
        );
        let p = load(f).with_per_call_rotation(library::ROTATION);
        assert!(library::has_per_call_buffers(&p), "{f}");
        let colls = library::collectives(&[member(&p)], "x").unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(colls[0].rotation, library::ROTATION, "{f}");
    }
    // A library (host or MPI) chooses among several protocols of a kind per call (each
    // configured by its own field, one function with `_pin` and `_protocol`), all taking
    // their count per call.
    let a = load("allreduce_mesh.coll");
    let b = load("allreduce_ring.coll");
    for (target, want) in [
        (
            LibTarget::Mpi,
            "int x_allreduce(x_comm* comm, float* data, size_t count);",
        ),
        (
            LibTarget::Host,
            "int x_allreduce(x_comm* comm, int rank, float* data, size_t count);",
        ),
    ] {
        let files = library::generate(&[member(&a), member(&b)], "x", target)
            .unwrap_or_else(|e| panic!("{e}"));
        let h = &files.iter().find(|f| f.path == "x.h").expect("x.h").text;
        for want in [
            "x_allreduce_mesh_params allreduce_mesh;",
            "x_allreduce_ring_params allreduce_ring;",
            want,
            "int x_allreduce_pin(x_comm* comm, const char* protocol);",
            "const char* x_allreduce_protocol(x_comm* comm, size_t count);",
        ] {
            assert!(h.contains(want), "{target:?}: {want} not in x.h:\n{h}");
        }
        assert_eq!(h.matches("X_API int x_allreduce(").count(), 1, "{h}");
    }
    let fixed = load("allreduce_allpairs.coll");
    for target in [LibTarget::Mpi, LibTarget::Host] {
        assert!(matches!(
            library::generate(&[member(&a), member(&fixed)], "x", target),
            Err(LibError::Usage(m)) if m.contains("fixed at creation")
        ));
    }
    // Several barriers (no count): one chosen per call by P, in both targets.
    let (b1, b2) = (load("barrier.coll"), load("dissemination_barrier.coll"));
    for target in [LibTarget::Mpi, LibTarget::Host] {
        let files = library::generate(&[member(&b1), member(&b2)], "x", target)
            .unwrap_or_else(|e| panic!("{target:?}: {e}"));
        let h = &files.iter().find(|f| f.path == "x.h").expect("x.h").text;
        assert!(
            h.contains("int x_barrier_pin(x_comm* comm, const char* protocol);"),
            "{h}"
        );
    }
    let t = library::table::Table::parse("allreduce 2 1 allreduce_nope\n").expect("table");
    assert!(matches!(
        library::generate_with(&[member(&a), member(&b)], "x", LibTarget::Mpi, &t),
        Err(LibError::Usage(m)) if m.contains("allreduce_nope")
    ));
    assert!(matches!(
        library::generate(&[member(&a)], "bad-name", LibTarget::Host),
        Err(LibError::Usage(_))
    ));
}

#[test]
fn every_supported_kind_builds_for_host_threads_and_mpi() {
    if std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIP: no g++");
        return;
    }
    let mut ps: Vec<Validated> = [
        "barrier.coll",
        "allgather.coll",
        "all_to_all.coll",
        "allreduce_ring.coll",
    ]
    .iter()
    .map(|f| load(f).with_every_lifetime(Lifetime::Reused))
    .collect();
    // reduce_scatter (reused) and all_to_all_v (its `per call` buffers rotated).
    ps.push(load("reduce_scatter.coll"));
    ps.push(load("all_to_all_v.coll").with_per_call_rotation(library::ROTATION));
    let ms: Vec<Member> = ps.iter().map(member).collect();
    let dir = repo()
        .join("target")
        .join(format!("collc-library-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let inst =
        library::install(&ms, "kinds", LibTarget::Host, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(inst.library.is_file());
    // The MPI glue of the same kinds (when Open MPI is installed).
    if collc_backend::mpi::build::find_toolchain().is_ok() {
        let m = library::install(&ms, "kindsm", LibTarget::Mpi, &dir.join("mpi"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(m.library.is_file());
    } else {
        eprintln!("SKIP: the MPI half needs Open MPI");
    }
    // A library with no buffer at all (a barrier alone) builds too: nothing unused is left.
    let solo = [member(&ps[0])];
    library::install(&solo, "solo", LibTarget::Host, &dir.join("solo"))
        .unwrap_or_else(|e| panic!("{e}"));
    if collc_backend::mpi::build::find_toolchain().is_ok() {
        library::install(&solo, "solom", LibTarget::Mpi, &dir.join("solom"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let h = std::fs::read_to_string(dir.join("kinds.h")).expect("header");
    for f in [
        "int kinds_barrier(kinds_comm* comm, int rank)",
        "int kinds_allgather(kinds_comm* comm, int rank, const float* input, size_t input_count, float* output, size_t output_count)",
        "int kinds_all_to_all(kinds_comm* comm, int rank, const float* input",
        "int kinds_allreduce(kinds_comm* comm, int rank, float* data, size_t count)",
        "size_t kinds_allgather_output_count(const kinds_comm* comm)",
        "int kinds_reduce_scatter(kinds_comm* comm, int rank, const float* send, size_t send_count, float* recv, size_t recv_count)",
        "size_t kinds_reduce_scatter_recv_count(const kinds_comm* comm)",
        "int kinds_all_to_all_v(kinds_comm* comm, int rank, const float* send, size_t send_count, const int32_t* send_counts, float* recv, size_t recv_count, int32_t* recv_counts)",
    ] {
        assert!(h.contains(f), "{f} missing in kinds.h");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The input an MPI library call reads in place from the caller's buffer
/// (`Coll::read_in_place`): every shipped exchange's, which only its own rank reads, locally
/// (pushed from, or copied into a tile first); not a pulled allgather's, whose peers get from
/// it (`examples/pull_allgather.coll`: `collc/tests/lib.rs` runs both against Open
/// MPI); none for the kinds whose data window is also their output.
#[test]
fn inputs_are_read_in_place_only_where_no_peer_reads_them() {
    let pulled = load("pull_allgather.coll");
    let mut cases: Vec<(String, Validated, bool)> = [
        ("allgather.coll", true),
        ("all_to_all.coll", true),
        ("all_to_all_v.coll", true),
        ("incore_allgather.coll", true),
        ("incore_all_to_all.coll", true),
        ("incore_all_to_all_v.coll", true),
        ("allreduce_mesh.coll", false),
        ("broadcast_read_complete.coll", false),
        ("reduce_scatter.coll", false),
        ("barrier.coll", false),
    ]
    .into_iter()
    .map(|(f, want)| (f.to_string(), load(f), want))
    .collect();
    cases.push(("pull_allgather.coll".to_string(), pulled, false));
    for (f, p, want) in &cases {
        let p = p.with_per_call_rotation(library::ROTATION);
        let colls = library::collectives(&[member(&p)], "x").unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(colls[0].read_in_place().is_some(), *want, "{f}");
        if let Some(w) = colls[0].read_in_place() {
            assert_eq!(p.windows[w].name, "input", "{f}");
        }
    }
}

/// The output an MPI library call writes in place into the caller's buffer
/// (`Coll::write_in_place`), over every shipped example a library packages: exactly the
/// protocols whose output window no statement reaches through the runtime (no peer puts or
/// reduces into it, gets or reduces from it; every access its own rank's load or store):
/// the all-pairs and epoch allreduces (peers put into `scratch`, each rank reduces into its
/// own `data`), the credit-window broadcast (the root puts from `data` into the ring, each
/// rank copies the ring into its own `data`) and the scatter (each rank copies or gets its row
/// into its own `target`), and the pulled allgather fixture (every rank gets into its own
/// `target`). Every other example keeps the copy: a peer puts into its output (the
/// exchanges) or reads it (the mesh, ring, binomial and read-complete ones), or its output is
/// the root's only (reduce, gather).
#[test]
fn outputs_are_written_in_place_only_where_no_peer_reaches_them() {
    let mut found = Vec::new();
    let files = example_files();
    let mut packaged = 0;
    for f in &files {
        let p = load(f).with_per_call_rotation(library::ROTATION);
        let Ok(colls) = library::collectives(&[member(&p)], "x") else {
            continue; // refused (e.g. no verified reuse distance): not packaged
        };
        packaged += 1;
        if let Some(w) = colls[0].write_in_place() {
            let data = matches!(
                colls[0].kind,
                library::api::Kind::Allreduce { .. } | library::api::Kind::Broadcast { .. }
            );
            assert_eq!(
                p.windows[w].name,
                if data { "data" } else { "target" },
                "{f}"
            );
            found.push(f.as_str());
        }
    }
    assert!(packaged >= 25, "only {packaged} examples packaged");
    assert_eq!(
        found,
        [
            "allreduce_allpairs.coll",
            "credit_window_pipeline.coll",
            "epoch_allreduce.coll",
            "pull_allgather.coll",
            "scatter.coll"
        ]
    );
    let pulled = load("pull_allgather.coll");
    let colls = library::collectives(&[member(&pulled)], "x").expect("packages");
    let w = colls[0]
        .write_in_place()
        .expect("the pulled target is written in place");
    assert_eq!(pulled.windows[w].name, "target");
    assert_eq!(colls[0].read_in_place(), None, "peers get from its input");
}

/// The broadcasts written in place on every rank but the root
/// (`Coll::write_in_place_off_root`), over every shipped example a library packages: exactly
/// those whose data window the runtime reaches only at the root (every non-root gets from the
/// root's window: the read-complete and merged broadcasts); the binomial tree's relays are
/// read by their children, so it keeps the copy, and the credit-window broadcast is written
/// in place on every rank already (`Coll::write_in_place`).
#[test]
fn broadcasts_are_written_in_place_off_the_root_only_where_peers_read_the_root_alone() {
    let mut found = Vec::new();
    let files = example_files();
    for f in &files {
        let p = load(f).with_per_call_rotation(library::ROTATION);
        let Ok(colls) = library::collectives(&[member(&p)], "x") else {
            continue;
        };
        if let Some(w) = colls[0].write_in_place_off_root() {
            assert_eq!(p.windows[w].name, "data", "{f}");
            assert_eq!(colls[0].write_in_place(), None, "{f}");
            found.push(f.as_str());
        }
    }
    assert_eq!(
        found,
        [
            "broadcast.coll",
            "broadcast_read_complete.coll",
            "incore_broadcast.coll"
        ]
    );
}

/// An exchange whose input and output are both used in place (the input only copied into a
/// scratch window by its own rank, the output only got into by its own rank): the glue
/// writes the output in place only when the caller's output lies apart from the input read in
/// place (an `MPI_IN_PLACE` allgather passes row `me` of the output as the input), and the
/// MPI library builds. A build check of the generator, like the one above (not verified here).
#[test]
fn an_output_overlapping_an_input_read_in_place_is_copied_out() {
    let text = "collective scratch_allgather: allgather(input, target) {
    ranks P in 1..=64;
    param m: int in 1..=4096;
    signal ready[P];
    signal done[P];
    window input: f32[m] reused;
    window scratch: f32[m] reused;
    window target: f32[P][m] reused;
    body {
        copy scratch[0 .. m] <- input[0 .. m];
        fence;
        for p in peers { notify ready[me] @ p += 1; }
        for p in peers { wait ready[p] >= 1; }
        for q in ranks { get target[q][0 .. m] <- scratch[0 .. m] @ q; }
        fence;
        for p in peers { notify done[me] @ p += 1; }
        for p in peers { wait done[p] >= 1; }
    }
    epilogue {
        for p in peers { notify ready[p] -= 1; notify done[p] -= 1; }
        fence;
    }
}
";
    let p = collc_spec::front(&collc_verifier::Ranges, text)
        .protocol
        .expect("validates");
    let ms = [member(&p)];
    let colls = library::collectives(&ms, "x").expect("packages");
    let name = |w: Option<collc_spec::ir::WindowId>| w.map(|w| p.windows[w].name.clone());
    assert_eq!(name(colls[0].read_in_place()).as_deref(), Some("input"));
    assert_eq!(name(colls[0].write_in_place()).as_deref(), Some("target"));
    let files = library::generate(&ms, "both", LibTarget::Mpi).unwrap_or_else(|e| panic!("{e}"));
    let glue = &files
        .iter()
        .find(|f| f.path.ends_with("both.cpp"))
        .expect("the glue")
        .text;
    assert!(
        glue.contains("WriteInPlace collc_out(collc_lib_mpi_borrow_0(comm->args[0], 2), output, !collc_in.active() || apart(input, "),
        "{glue}"
    );
    if collc_backend::mpi::build::find_toolchain().is_err() {
        eprintln!("SKIP: building the MPI library needs Open MPI");
        return;
    }
    let dir = repo()
        .join("target")
        .join(format!("collc-library-both-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let m = library::install(&ms, "both", LibTarget::Mpi, &dir).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.library.is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
