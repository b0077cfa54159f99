//! The idioms corpus (`examples/idioms/`): correct protocols written from the synchronisation
//! idioms of public libraries (NVSHMEM, MSCCL++, the NCCL device API, pypto), each citing its
//! source, and each with a buggy twin in `examples/idioms/bugs/` whose first line names it.
//!
//! - A correct idiom must verify: exit 0 (nothing violated, unknown or skipped: the bounded
//!   half, the simulator in sc and relaxed memory, ran) with every obligation that states a
//!   world range covering the whole declared world domain (exit 0 means the declared domain).
//!   The idioms that do not yet are listed in [`OPEN`] with the class of issue 27 they stand
//!   for; a listed idiom that passes fails the test (the list can only shrink, honestly).
//! - The symbolic half runs with its wall-clock safety cap raised ([`SYMBOLIC_CAP_MS`], as
//!   the verdict golden does): every Z3 query is limited by Z3's resource units, so the
//!   verdict is the same whatever the machine's load, and this test asserts it, not how
//!   long a loaded machine takes (the binomial tree barrier's P-symbolic proof is about 23 s
//!   of CPU, under the default 60 s cap of `collc verify` on an idle machine but not with
//!   four verifies at once on two cores).
//! - A twin must be flagged: every `// expect: verify::CODE` annotation names an obligation
//!   that is violated with a finding on that line.

use collc_grammar::Source;
use collc_verifier::{Options, Report, Status};
use std::path::{Path, PathBuf};

/// Correct idioms `collc verify` does not pass today: (file stem, what happens).
const OPEN: [(&str, &str); 0] = [];

/// The symbolic half's wall-clock safety cap here (`--timeout-ms`, 60 s by default).
const SYMBOLIC_CAP_MS: u64 = 600_000;

/// Idioms whose declared world domain goes past what enumeration covers (P up to 16): their
/// pass is a proof with P symbolic, and the test names the obligations that prove it.
const PAST_ENUMERATION: [&str; 1] = ["binomial_tree_barrier"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn coll_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "coll"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// `collc verify` (the library, default options: both halves) on one file.
fn verify(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let rel = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let src = Source::new(rel, text.clone());
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .ok_or_else(|| "does not validate".to_string())?;
    let mut opts = Options::for_source(&src);
    opts.symbolic.timeout_ms = SYMBOLIC_CAP_MS;
    let mut r = collc_verifier::verify(&p, &opts);
    r.locate(&src);
    Ok(r)
}

/// Why a report is not a pass of the declared domain, or `None`.
fn not_a_pass(r: &Report) -> Option<String> {
    let mut why: Vec<String> = r
        .obligations
        .iter()
        .filter(|o| !matches!(o.status, Status::Proved | Status::Checked))
        .filter(|o| o.status != Status::Warning)
        .map(|o| format!("{} {:?}", o.id, o.status).to_lowercase())
        .collect();
    for o in &r.obligations {
        if let Some(w) = o.world.filter(|w| *w != r.world) {
            why.push(format!(
                "{} covers P in {}..={} of the declared {}..={}",
                o.id, w.lo, w.hi, r.world.lo, r.world.hi
            ));
        }
    }
    if r.exit_code() != 0 {
        why.insert(0, format!("exit {}", r.exit_code()));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// What is wrong with the pass of an idiom declared past enumeration (`PAST_ENUMERATION`):
/// its declared domain must go past P = 16, the report's world limit (the largest P the
/// verdict covers, the emitted kernels' bound) must be the declared top, and wait-reachable
/// and deadlock must be proved with P symbolic for the whole declared domain.
fn past_enumeration(name: &str, r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    let w = r.world;
    if w.hi <= 16 {
        out.push(format!(
            "{name}: declared P in {}..={}: not past enumeration",
            w.lo, w.hi
        ));
    }
    if r.world_limit() != Some(w.hi) {
        out.push(format!(
            "{name}: world limit {:?}, not the declared {}",
            r.world_limit(),
            w.hi
        ));
    }
    for id in ["wait-reachable", "deadlock"] {
        let ok = r.get(id).is_some_and(|o| {
            o.status == Status::Proved
                && o.world == Some(w)
                && o.evidence.how(w) == Some(collc_verifier::evidence::How::Symbolic)
        });
        if !ok {
            out.push(format!(
                "{name}: {id} not proved with P symbolic for P in {}..={}",
                w.lo, w.hi
            ));
        }
    }
    out
}

/// Runs `f` on every file, two at a time (the machine has two cores).
fn each<T: Send>(files: &[PathBuf], f: impl Fn(&Path) -> T + Sync) -> Vec<(PathBuf, T)> {
    let f = &f;
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|k| {
                s.spawn(move || {
                    files
                        .iter()
                        .skip(k)
                        .step_by(2)
                        .map(|p| (p.clone(), f(p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    })
}

#[test]
fn correct_idioms_verify_for_the_declared_domain() {
    let files = coll_files("examples/idioms");
    assert!(files.len() >= 8, "idioms missing: {files:?}");
    for (name, _) in OPEN {
        assert!(
            files.iter().any(|f| stem(f) == name),
            "OPEN lists {name}, which is not in examples/idioms"
        );
    }
    let mut failures = Vec::new();
    for (f, r) in each(&files, verify) {
        let name = stem(&f);
        let open = OPEN.iter().find(|(n, _)| *n == name).map(|(_, w)| *w);
        let why = match &r {
            Err(e) => Some(e.clone()),
            Ok(r) => not_a_pass(r),
        };
        eprintln!(
            "{name}: {} (open: {})",
            why.as_deref().unwrap_or("passes"),
            open.unwrap_or("no")
        );
        if PAST_ENUMERATION.contains(&name.as_str()) {
            if let Ok(r) = &r {
                failures.extend(past_enumeration(&name, r));
            }
        }
        match (why, open) {
            (Some(w), None) => failures.push(format!("{name}: refused: {w}")),
            (None, Some(_)) => failures.push(format!(
                "{name}: passes now: remove it from OPEN (and close its class)"
            )),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `// expect: verify::CODE` annotations of a twin: (obligation id, 1-based line).
fn expectations(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, rest)) = line.split_once("// expect:") {
            for code in rest.split(',') {
                if let Some(id) = code.trim().strip_prefix("verify::") {
                    out.push((id.to_string(), i + 1));
                }
            }
        }
    }
    out
}

#[test]
fn every_twin_is_flagged_with_its_obligation() {
    let idioms: Vec<String> = coll_files("examples/idioms")
        .iter()
        .map(|f| stem(f))
        .collect();
    let twins = coll_files("examples/idioms/bugs");
    let mut failures = Vec::new();
    let mut twinned = Vec::new();
    for f in &twins {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let of = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// BUG twin of examples/idioms/"))
            .and_then(|l| l.split_once(".coll"))
            .map(|(n, _)| n.to_string());
        match of {
            Some(n) if idioms.contains(&n) => twinned.push(n),
            _ => failures.push(format!("{}: does not name its idiom", stem(f))),
        }
        if expectations(&text).is_empty() {
            failures.push(format!("{}: no `// expect: verify::` annotation", stem(f)));
        }
    }
    for i in &idioms {
        if !twinned.contains(i) {
            failures.push(format!("{i}: no buggy twin in examples/idioms/bugs"));
        }
    }
    for (f, r) in each(&twins, verify) {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{}: {e}", stem(&f)));
                continue;
            }
        };
        for (id, line) in expectations(&text) {
            let o = r.get(&id);
            let ok = o.is_some_and(|o| {
                o.status == Status::Violated && o.findings.iter().any(|x| x.line == line)
            });
            eprintln!(
                "{}: {id} at line {line}: {}",
                stem(&f),
                if ok { "flagged" } else { "NOT flagged" }
            );
            if !ok {
                let got = o.map(|o| {
                    let lines: Vec<usize> = o.findings.iter().map(|x| x.line).collect();
                    format!("{:?} at lines {lines:?}", o.status)
                });
                failures.push(format!(
                    "{}: {id} not violated at line {line} ({got:?})",
                    stem(&f)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
