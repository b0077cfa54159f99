//! pypto's real builtin host kernels, lifted with the declarations in `tests/pypto/*.decls`
//! and verified: the 8 kernels of pypto's HEAD (e2d0f78ae) from `PYPTO_ROOT`, and, from the
//! git directory `PYPTO_GIT_DIR` (a clone or mirror of hw-native-sys/pypto), the 8 kernels
//! before #2279 (8662deb9e) and #2280's ring kernel (11b288572). Each is read as the
//! template itself (pypto's placeholders) and as pypto renders it (the f32 sum variant).
//!
//! Each kernel's expected judgement is in [`EXPECTED`]: `safe` (lifts and verifies), the
//! obligations verify reports violated, the front end's refusal of the lifted protocol, or
//! the lifter's refusal. The judgements that are not yet the right one are marked `gap` in
//! the table with why (docs/lift.md, "pypto's builtin kernels"): the test pins them so a
//! change of either side shows.
//!
//! Without `PYPTO_ROOT` (or `PYPTO_GIT_DIR` for the revisions) the test prints one line
//! saying what it skipped and returns.

use std::path::PathBuf;

const DIR: &str = "python/pypto/runtime/builtins/collectives";

/// (revision: "HEAD" or a commit, kernel, expected judgement).
const EXPECTED: &[(&str, &str, &str)] = &[
    ("HEAD", "all_to_all", "safe"),
    ("HEAD", "allgather", "safe"),
    ("HEAD", "allreduce_ring", "safe"),
    ("HEAD", "barrier", "safe"),
    ("HEAD", "broadcast", "safe"),
    // gap: a fault of the kernel by pto-isa 3186c381's a2a3 pipes (docs/lift.md, "HEAD
    // allreduce's read-done notify": the first read-done TNOTIFY of each chunk, line 157, is
    // a scalar st_atomic ordered after the remote TLOAD, line 144, only by wait_flag MTE2 -> V
    // and V -> MTE2), which verify no longer reports: the lifter reads the TADD as a
    // synchronous reduce of the loaded tile, and in .coll that read completes the load (the
    // fence obligation's data-dependency rule). The lifter does not yet model a scalar
    // notify overtaking queued pipe work (tests/fixtures/pypto_pipe_flag_read_done.cpp).
    ("HEAD", "allreduce", "safe"),
    // The windows are declared [nranks][max_recv * row_numel] (the kernel moves each
    // destination's block flat, in tiles that may cross rows) and the header's fifth argument
    // `row_numel` makes a count count rows (all_to_all_v.decls).
    ("HEAD", "all_to_all_v", "safe"),
    ("HEAD", "reduce_scatter", "safe"),
    // Before #2279: no self-clearing epilogue, credits pile up across calls.
    ("8662deb9e", "all_to_all", "verify::credit-balance"),
    ("8662deb9e", "allgather", "verify::credit-balance"),
    ("8662deb9e", "allreduce", "verify::credit-balance"),
    ("8662deb9e", "allreduce_ring", "verify::credit-balance"),
    ("8662deb9e", "barrier", "verify::credit-balance"),
    ("8662deb9e", "broadcast", "verify::credit-balance"),
    ("8662deb9e", "all_to_all_v", "verify::credit-balance"),
    // Declared as the allreduce it computes (reduce_scatter@8662deb9e.decls).
    ("8662deb9e", "reduce_scatter", "verify::credit-balance"),
    // The reduce-scatter pushes with TPUT<AtomicType::AtomicAdd> (`reduce sum DST @ right <-
    // SRC`). Rejected for its signal discipline, as before #2279 (which is not its ancestor;
    // PR #2280 keeps #2094's "per-round AtomicAdd(0->1) / WaitGe(1) single-shot" rows): no
    // self-clearing epilogue, each round's row gets +1 from each neighbour (NeighborBarrier,
    // lines 129-141) and is awaited >= 1 once per call and never taken back, so a cell is left
    // at 2 after one call and from the second call on every wait passes on the previous
    // call's credit (credit-balance, with stale-credit, data-race and semantics; docs/lift.md).
    ("11b288572", "allreduce_ring", "verify::credit-balance"),
];

/// The judgement of one kernel text: "safe", the violated obligations, or the first error.
fn judge(cpp: &str, decls: &str) -> Vec<String> {
    let l = match collc_lift::lift_with(cpp, decls) {
        Ok(l) => l,
        Err(es) => return vec![es[0].code.clone()],
    };
    let src = collc_grammar::Source::new("lifted.coll", l.coll.clone());
    let checked = collc_spec::front(&collc_verifier::Ranges, &src.text);
    let errs: Vec<String> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code.clone())
        .collect();
    let Some(p) = checked.protocol.filter(|_| errs.is_empty()) else {
        return errs;
    };
    let report = collc_verifier::verify(&p, &collc_verifier::Options::for_source(&src));
    let v: Vec<String> = report
        .obligations
        .iter()
        .filter(|o| o.status == collc_verifier::Status::Violated)
        .map(|o| o.code.clone())
        .collect();
    if v.is_empty() && report.exit_code() == 0 {
        vec!["safe".into()]
    } else {
        v
    }
}

/// pypto's renderer: textual substitution of the f32 sum variant's values.
fn render(t: &str) -> String {
    t.replace("{{dtype_cpp}}", "float")
        .replace("{{reduce_inst}}", "TADD")
        .replace("{{root_cpp}}", "0")
        .replace("{{template_package}}", "pypto.runtime.builtins")
}

fn template(rev: &str, kernel: &str, root: Option<&str>, git: Option<&str>) -> Option<String> {
    let path = format!("{DIR}/{kernel}/templates/kernel.cpp.in");
    if rev == "HEAD" {
        return std::fs::read_to_string(PathBuf::from(root?).join(&path)).ok();
    }
    let out = std::process::Command::new("git")
        .arg(format!("--git-dir={}", git?))
        .arg("show")
        .arg(format!("{rev}:{path}"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn pypto_kernels_are_judged_as_expected() {
    let root = std::env::var("PYPTO_ROOT").ok();
    let git = std::env::var("PYPTO_GIT_DIR").ok();
    if root.is_none() && git.is_none() {
        eprintln!("skipped: PYPTO_ROOT and PYPTO_GIT_DIR unset (pypto's real kernels are not here; CONTRIBUTING.md says how to set them)");
        return;
    }
    if git.is_none() {
        eprintln!("skipped the 9 kernels of 8662deb9e and 11b288572: PYPTO_GIT_DIR unset");
    }
    let decls_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/pypto");
    let mut failures = Vec::new();
    let mut judged = 0;
    for (rev, kernel, want) in EXPECTED {
        if (*rev == "HEAD" && root.is_none()) || (*rev != "HEAD" && git.is_none()) {
            continue;
        }
        let Some(t) = template(rev, kernel, root.as_deref(), git.as_deref()) else {
            failures.push(format!("{rev} {kernel}: kernel.cpp.in not found"));
            continue;
        };
        // A revision's own declarations (`KERNEL@REV.decls`) where its kernel's buffers differ.
        let decls = std::fs::read_to_string(decls_dir.join(format!("{kernel}@{rev}.decls")))
            .or_else(|_| std::fs::read_to_string(decls_dir.join(format!("{kernel}.decls"))))
            .expect("tests/pypto/KERNEL.decls");
        for (form, text) in [("template", t.clone()), ("rendered", render(&t))] {
            let got = judge(&text, &decls);
            judged += 1;
            if !got.iter().any(|g| g == want) {
                failures.push(format!(
                    "{rev} {kernel} ({form}): expected {want}, got {got:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(judged > 0, "no kernel judged");
}

/// A diagnostic of `collc lift | collc verify -` names the C++ line it came from: the lifted
/// protocol's source map sends the allreduce's unfenced read-done notify to the TNOTIFY line.
#[test]
fn lifted_lines_map_to_the_cpp() {
    let Ok(root) = std::env::var("PYPTO_ROOT") else {
        eprintln!("skipped: PYPTO_ROOT unset (pypto's real kernels are not here)");
        return;
    };
    let t = template("HEAD", "allreduce", Some(&root), None).expect("allreduce kernel");
    let decls = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/pypto/allreduce.decls"),
    )
    .expect("decls");
    let l = collc_lift::lift_with(&render(&t), &decls).expect("lifts");
    let lines = l.lines.expect("a pypto kernel has a source map");
    let at = l
        .coll
        .lines()
        .position(|x| {
            x.trim_start()
                .starts_with("notify signal_base[me][block_idx] @ peer += 1")
        })
        .expect("the ready notify");
    let cpp: Vec<&str> = t.lines().collect();
    let line = lines[at];
    assert!(
        cpp[line - 1].contains("TNOTIFY"),
        "line {line} of the kernel: {}",
        cpp[line - 1]
    );
}
