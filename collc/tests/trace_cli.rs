//! `collc run --trace` from the command line (the conformance line, an overflowing trace
//! reported as a finding) and how a trace that does not conform is rendered: the finding at
//! the statement the IR runs there, with rank, call and the recorded event (a kernel from the
//! generator with a test-only fault, `collc_backend::cpp::mutate`).

use collc::output::Output;
use collc::render::{trace, Style};
use collc_backend::cpp::mutate::{self, Mutation};
use collc_backend::host::{run_traced, Exec, RunConfig};
use collc_grammar::Source;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn root() -> PathBuf {
    collc_backend::testing::repo_root()
}

fn cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("collc-cache")
}

fn collc(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_collc"))
        .current_dir(root())
        .env("COLLC_CACHE_DIR", cache())
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

fn have_cxx() -> bool {
    collc_backend::testing::compiler_or_skip(&cache(), "`collc run --trace` tests")
}

#[test]
fn a_traced_run_says_its_trace_conforms() {
    if !have_cxx() {
        return;
    }
    let (code, out, err) = collc(&["run", "examples/barrier.coll", "-P", "4", "--trace"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(
        out.contains("trace conforms to the IR: 120 event(s) of 4 thread(s) as prescribed"),
        "{out}"
    );
}

#[test]
fn an_overflowing_trace_fails_the_run_and_says_so() {
    if !have_cxx() {
        return;
    }
    let (code, out, err) = collc(&[
        "run",
        "examples/barrier.coll",
        "-P",
        "2",
        "--trace",
        "--trace-capacity",
        "5",
    ]);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(err.contains("trace does NOT conform"), "{err}");
    assert!(
        err.contains("trace::overflow") && err.contains("5 event(s) recorded, 7 dropped"),
        "{err}"
    );
    assert!(err.contains("raise --trace-capacity"), "{err}");
}

#[test]
fn a_faulty_kernel_is_named_at_the_statement_rank_and_call() {
    if !have_cxx() {
        return;
    }
    let path = root().join("examples/barrier.coll");
    let text = std::fs::read_to_string(&path).expect("barrier");
    let src = Source::new("examples/barrier.coll", text.clone());
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("checks");
    let mut params = std::collections::BTreeMap::new();
    params.insert("P".to_string(), 2);
    let cfg = RunConfig {
        params,
        exec: Exec::InProcess,
        wall_limit: Duration::from_secs(60),
        ..RunConfig::default()
    };
    // The epilogue's reset takes one credit too many: the first reset of each rank differs.
    let r =
        mutate::with(Mutation::ResetValue, || run_traced(&p, Some(&src), &cfg, 0)).expect("runs");
    let c = r.trace.expect("checked");
    let mut out = Output::default();
    trace::conformance(
        "examples/barrier.coll",
        &p,
        &src,
        &c,
        Style::plain(100),
        &mut out,
    );
    let err = &out.stderr;
    eprintln!("{err}");
    assert!(
        err.contains("trace does NOT conform to the IR (2 finding(s))"),
        "{err}"
    );
    for rank in [0, 1] {
        let other = 1 - rank;
        assert!(
            err.contains(&format!(
                "rank {rank} block 0, event #2: the run did notify sig[{other}] on rank {rank} -= 2"
            )),
            "{err}"
        );
    }
    assert!(err.contains("but the IR prescribes notify sig["), "{err}");
    assert!(err.contains("-= 1 in call 0 (epilogue)"), "{err}");
    assert!(err.contains("trace::mismatch"), "{err}");
    assert!(
        err.contains("notify sig[p] -= 1;"),
        "the statement's line: {err}"
    );
}
