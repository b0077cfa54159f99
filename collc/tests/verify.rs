//! `collc verify` / `collc cost`: the merged kernels verify, every historic bug variant is
//! reported with its annotated obligation on its annotated line, the credit tables match
//! their goldens (and the domain notes' table), the review's cost figures come out, the
//! JSON schema is stable, and timeouts and unsupported forms give `unknown`, never a pass.
//! Re-bless the goldens with `COLLC_BLESS=1 cargo test -p collc --test verify`.

use collc_grammar::Source;
use collc_verifier::{Options, Status};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn coll_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "coll"));
    v.sort();
    v
}

fn protocol(text: &str) -> collc_spec::Validated {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    match c.protocol {
        Some(p) => p,
        None => panic!("invalid input: {:#?}", c.diagnostics),
    }
}

fn collc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_collc"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("run collc");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn merged_kernels_verify() {
    let files = coll_files(&root().join("examples"));
    assert!(files.len() >= 8, "examples/ holds the merged kernels");
    let mut fence_checked = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let p = protocol(&text);
        let r = collc_verifier::verify(&p, &Options::symbolic_only());
        for o in &r.obligations {
            // Deadlock freedom is proved by the parametric route's ranking of waits for
            // every merged kernel (waits on value signals, the sense-reversing barrier's
            // release, ranked by the Set of the awaited value); the other bounded
            // obligations are skipped.
            if o.id == "deadlock" {
                assert_eq!(o.status, Status::Proved, "{}: {:?}", f.display(), o.scope);
                assert!(
                    o.scope_text().as_deref().is_some_and(
                        |s| s.contains("P symbolic") && s.contains("bounded run: skipped")
                    ),
                    "{:?}",
                    o.scope
                );
                continue;
            }
            if collc_verifier::bounded::OBLIGATIONS.contains(&o.id.as_str()) {
                assert_eq!(o.status, Status::Skipped, "{}: {}", f.display(), o.id);
                continue;
            }
            // The `fence` obligation may fall back to the relaxed simulator where its
            // analysis cannot separate element regions: then `checked`, with the bounds.
            if o.id == "fence" && o.status == Status::Checked {
                assert!(
                    o.scope_text()
                        .as_deref()
                        .is_some_and(|s| s.contains("relaxed memory")
                            && s.contains("P=2, 1 tile, 2 calls")
                            && s.contains("complete")),
                    "{}: {:?}",
                    f.display(),
                    o.scope
                );
                fence_checked.push(f.file_name().unwrap().to_string_lossy().into_owned());
                continue;
            }
            assert_eq!(
                o.status,
                Status::Proved,
                "{}: {} is {:?}: {:?} {:?}",
                f.display(),
                o.id,
                o.status,
                o.reason,
                o.findings.first().map(|x| &x.message)
            );
            // The six credit obligations are proved with P symbolic (and cross-checked by
            // enumeration); the index ranges are decided for every value of the domains
            // without enumeration; fence by its structural walk or by enumeration; a
            // protocol without value signals has nothing for value-signal to order.
            let whole = match o.id.as_str() {
                "index-range" => "every value of the declared domains",
                "fence"
                    if o.scope_text()
                        .as_deref()
                        .is_some_and(|s| s.contains("enumerated")) =>
                {
                    "enumerated"
                }
                "fence" => "P symbolic",
                "value-signal"
                    if o.scope_text()
                        .as_deref()
                        .is_some_and(|s| s.contains("declares no")) =>
                {
                    "declares no `as value` signal"
                }
                // The examples with value signals (the all_to_all_v family) are proved
                // with P symbolic too.
                "value-signal" => "P symbolic",
                _ => "P symbolic",
            };
            assert!(
                o.scope_text().as_deref().is_some_and(|s| s.contains(whole)),
                "{}: {}: {:?}",
                f.display(),
                o.id,
                o.scope
            );
        }
        // Skipped bounded obligations are undecided: not a pass.
        assert_eq!(r.exit_code(), 3);
    }
    // None needs the fallback: allreduce_mesh used to (chunk k's store was published
    // unfenced by chunk k+1's read-done notify), but the read rule made it fence its gets
    // before that notify, which fences the store too.
    assert!(fence_checked.is_empty(), "{fence_checked:?}");
}

/// `// expect: a, b` annotations: (code, line).
fn expectations(text: &str) -> Vec<(String, usize)> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(pos) = line.find("// expect:") {
            for c in line[pos + 10..].split(',') {
                let c = c.trim();
                if c.starts_with("verify::") {
                    v.push((c.to_string(), i + 1));
                }
            }
        }
    }
    v
}

#[test]
fn bug_variants_are_reported_where_annotated() {
    let files = coll_files(&root().join("examples/bugs"));
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let src = Source::new(f.display().to_string(), text.clone());
        let r = collc_verifier::verify(&protocol(&text), &Options::symbolic_only());
        let diags = r.diagnostics();
        let lines = |d: &collc_grammar::Diagnostic| -> Vec<usize> {
            d.labels
                .iter()
                .map(|l| src.line_col(l.span.start).0)
                .collect()
        };
        let exp = expectations(&text);
        for (code, line) in &exp {
            let ok = diags
                .iter()
                .any(|d| &d.code == code && lines(d).contains(line));
            if !ok {
                failures.push(format!("{}:{line}: {code} not reported", f.display()));
            }
            let o = r.get(code.trim_start_matches("verify::")).unwrap();
            if !matches!(o.status, Status::Violated | Status::Warning) {
                failures.push(format!("{}: {code} is {:?}", f.display(), o.status));
            }
        }
        for d in diags.iter().filter(|d| d.is_error()) {
            let ok = exp
                .iter()
                .any(|(c, l)| c == &d.code && lines(d).contains(l));
            if !ok {
                failures.push(format!(
                    "{}: unannotated {} at {:?}: {}",
                    f.display(),
                    d.code,
                    lines(d),
                    d.message
                ));
            }
        }
        // Violations carry a counterexample with parameter values.
        for o in &r.obligations {
            if o.status == Status::Violated {
                assert!(
                    !o.findings[0].params.is_empty(),
                    "{}: {} without counterexample",
                    f.display(),
                    o.id
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const MERGED: [&str; 8] = [
    "allreduce_mesh",
    "allreduce_ring",
    "reduce_scatter",
    "broadcast",
    "barrier",
    "allgather",
    "all_to_all",
    "all_to_all_v",
];

/// The credit table of `examples/{name}.coll`, compared with (or, with `COLLC_BLESS`
/// set, written to) its golden `collc/tests/verify_goldens/{name}.explain.txt`.
fn explain_golden(name: &str) -> collc_verifier::table::CreditTable {
    let text = std::fs::read_to_string(root().join(format!("examples/{name}.coll"))).unwrap();
    let t = collc_verifier::table::explain(&protocol(&text)).unwrap();
    let got = t.render();
    let golden = root().join(format!("collc/tests/verify_goldens/{name}.explain.txt"));
    if std::env::var_os("COLLC_BLESS").is_some() {
        std::fs::write(&golden, &got).unwrap();
    } else {
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        assert_eq!(
            got,
            want,
            "{name}: credit table differs from {}",
            golden.display()
        );
    }
    t
}

#[test]
fn explain_tables_match_goldens_and_the_domain_notes() {
    for name in MERGED {
        let t = explain_golden(name);
        // The credits per cell and call of the domain notes' table (§1.9).
        let credits: Vec<&str> = t
            .rows
            .iter()
            .filter(|r| r.signal == "sig")
            .map(|r| r.credits.as_str())
            .collect();
        let want = match name {
            "allreduce_mesh" => "nb + 1",
            "reduce_scatter" => "2",
            "broadcast" => "T",
            _ => "1",
        };
        assert_eq!(credits, vec![want], "{name}");
        for r in &t.rows {
            assert_eq!(r.net, "0", "{name}: {r:?}");
        }
        if name == "allreduce_ring" {
            assert_eq!(
                t.rows[0].cells, "P * (P - 1) * (2*P - 1)",
                "1 per row on 2(P-1)+1 rows"
            );
        }
    }
}

/// Counters whose credits, waits and reset grow with P: one row per cell class, each
/// column a closed form (no enumerated values).
#[test]
fn explain_tables_derive_a_row_per_cell_class() {
    for name in [
        "arrival_barrier",
        "dissemination_barrier",
        "broadcast_binomial",
        "credit_window_pipeline",
    ] {
        let t = explain_golden(name);
        for r in &t.rows {
            let cols = [&r.cells, &r.credits, &r.waits, &r.reset, &r.net];
            assert!(
                cols.iter().all(|c| !c.contains("no closed form")),
                "{name}: {r:?}"
            );
            assert_eq!(r.net, "0", "{name}: {r:?}");
        }
    }
    // The counter of the gather/release barrier: one cell, P - 1 credits, one wait for
    // all of them, all taken back.
    let t = explain_golden("arrival_barrier");
    let arrived: Vec<[&str; 4]> = t
        .rows
        .iter()
        .filter(|r| r.signal == "arrived")
        .map(|r| [&*r.cells, &*r.credits, &*r.waits, &*r.reset])
        .collect();
    assert_eq!(arrived, [["1", "P - 1", ">= P - 1", "-(P - 1)"]]);
}

#[test]
fn cost_reproduces_the_review_figures() {
    let (code, out, err) = collc(&[
        "cost",
        "examples/broadcast.coll",
        "--param",
        "P=8",
        "--param",
        "n=1048576",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("remote atomics  P * (P - 1) * T  = 229,376"),
        "{out}"
    );
    let (code, out, err) = collc(&[
        "cost",
        "collc/tests/verify_fixtures/broadcast_root_only.coll",
        "--param",
        "P=8",
        "--param",
        "n=1048576",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("(P - 1) * (T + 2)") && out.contains("= 28,686"),
        "{out}"
    );
    let (code, _, err) = collc(&["cost", "examples/broadcast.coll", "--param", "Q=8"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn json_schema_is_stable() {
    let (code, out, _) = collc(&[
        "verify",
        "--format",
        "json",
        "examples/bugs/barrier_no_epilogue.coll",
    ]);
    assert_eq!(code, 1);
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["file"], "examples/bugs/barrier_no_epilogue.coll");
    let r = &j["report"];
    assert_eq!(r["schema"], 3);
    for k in ["protocol", "method", "obligations", "stats"] {
        assert!(!r[k].is_null(), "report.{k}");
    }
    for k in ["configurations", "events", "literal", "z3_calls", "millis"] {
        assert!(r["stats"][k].is_u64(), "stats.{k}");
    }
    let obs = r["obligations"].as_array().unwrap();
    let ids: Vec<&str> = obs.iter().map(|o| o["id"].as_str().unwrap()).collect();
    let expect: Vec<&str> = collc_verifier::report::OBLIGATIONS
        .iter()
        .chain([collc_verifier::value_signal::ID].iter())
        .chain([collc_verifier::fence::ID].iter())
        .chain([collc_verifier::range_obligation::ID].iter())
        .chain(collc_verifier::bounded::OBLIGATIONS.iter())
        .copied()
        .collect();
    assert_eq!(ids, expect);
    for o in obs {
        for k in [
            "id", "code", "status", "scope", "reason", "summary", "findings",
        ] {
            assert!(o.get(k).is_some(), "obligation.{k}");
        }
        assert!(
            ["proved", "checked", "violated", "warning", "unknown", "skipped"]
                .contains(&o["status"].as_str().unwrap())
        );
    }
    let cb = &obs[0];
    assert_eq!(cb["status"], "violated");
    let f = &cb["findings"][0];
    for k in [
        "message",
        "params",
        "cell",
        "value",
        "formula",
        "contributions",
        "primary",
        "primary_label",
        "labels",
        "help",
        "notes",
        "trace",
    ] {
        assert!(f.get(k).is_some(), "finding.{k}");
    }
    assert_eq!(f["params"][0]["name"], "P");
    assert_eq!(f["params"][0]["value"], 2);
    assert_eq!(f["value"], 1);
    let c = &f["contributions"][0];
    for k in ["span", "line", "section", "role", "count", "total"] {
        assert!(c.get(k).is_some(), "contribution.{k}");
    }
    assert_eq!(c["line"], 14);
    let d = &j["diagnostics"][0];
    assert_eq!(d["code"], "verify::credit-balance");
    assert_eq!(d["line"], 14);
}

#[test]
fn timeout_gives_unknown_never_a_pass() {
    let text = std::fs::read_to_string(root().join("examples/barrier.coll")).unwrap();
    let mut opts = Options::symbolic_only();
    opts.symbolic.timeout_ms = 0;
    let r = collc_verifier::verify(&protocol(&text), &opts);
    // The index ranges are the front end's, with their own budget (not --timeout-ms).
    for o in r
        .obligations
        .iter()
        .filter(|o| o.status != Status::Skipped && o.id != "index-range")
    {
        // What the parametric route closes without a single Z3 query (nothing to check,
        // or literal arithmetic) needs no time: proved, and its scope says so.
        // Likewise fence's structural walk (no solver) and a value-signal obligation
        // on a protocol without value signals.
        if o.status == Status::Proved {
            let scope = o.scope_text().unwrap_or_default();
            assert!(
                (scope.contains("P symbolic") && (scope.contains(" 0 by Z3") || o.id == "fence"))
                    || scope.contains("declares no `as value` signal"),
                "{}: {scope}",
                o.id
            );
            continue;
        }
        assert_eq!(o.status, Status::Unknown, "{}", o.id);
        assert!(
            o.reason.as_deref().unwrap_or("").contains("timeout"),
            "{:?}",
            o.reason
        );
    }
    assert_eq!(r.exit_code(), 3);
    let (code, out, err) = collc(&[
        "verify",
        "--timeout-ms",
        "0",
        "--no-bounded",
        "examples/barrier.coll",
    ]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("unknown"));
    // A real timeout is the one undecided case where more time helps.
    assert!(err.contains("raise --timeout-ms"), "{err}");
}

const UNSUPPORTED: &str = "collc/tests/verify_fixtures/unsupported_wide_index.coll";

#[test]
fn unsupported_form_gives_unknown_with_reason() {
    let text = std::fs::read_to_string(root().join(UNSUPPORTED)).unwrap();
    let r = collc_verifier::verify(&protocol(&text), &Options::symbolic_only());
    assert_eq!(r.exit_code(), 3);
    for o in r.obligations.iter().filter(|o| o.status != Status::Skipped) {
        // The fence obligation does not need `k` concrete (a cell index it cannot evaluate
        // matches every cell), and this protocol writes no window: proved. Its indices are
        // in range for every value of `k`: proved.
        if o.id == "fence" || o.id == "index-range" {
            assert_eq!(o.status, Status::Proved, "{}: {:?}", o.id, o.reason);
            continue;
        }
        // No `as value` signal: value-signal holds vacuously, whatever `k` is.
        if o.id == "value-signal" {
            assert_eq!(o.status, Status::Proved, "{}: {:?}", o.id, o.reason);
            continue;
        }
        // The parametric route keeps `k` symbolic: what does not depend on the net
        // credit (no Set, no wait, no return) is proved for every `k`; the missing
        // epilogue leaves credit-balance (and so garbage-credit, which needs a wait)
        // to the enumerated route, which cannot enumerate `k`.
        if [
            "op-exclusivity",
            "wait-reachable",
            "stale-credit",
            "guard-symmetry",
        ]
        .contains(&o.id.as_str())
        {
            assert_eq!(o.status, Status::Proved, "{}: {:?}", o.id, o.reason);
            assert!(o
                .scope_text()
                .as_deref()
                .is_some_and(|s| s.contains("P symbolic")));
            continue;
        }
        assert_eq!(o.status, Status::Unknown, "{}", o.id);
        let reason = o.reason.as_deref().unwrap_or("");
        // It names the form and what to write instead, and does not blame time.
        assert!(reason.contains("`k`"), "{reason}");
        assert!(reason.contains("unsupported form"), "{reason}");
        assert!(reason.contains("narrow its domain"), "{reason}");
        assert!(!reason.contains("timeout"), "{reason}");
    }
    let (code, out, err) = collc(&["verify", "--no-bounded", UNSUPPORTED]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(!err.contains("--timeout-ms"), "{err}");
    assert!(err.contains("rewrite the form"), "{err}");
}

#[test]
fn out_of_range_index_is_an_input_error_of_every_command() {
    // What used to pass `check` and give six `unknown` rows in `verify`.
    let file = "collc/tests/ui/domain_symbolic_ranges.coll";
    for args in [
        vec!["check", file],
        vec!["verify", file],
        vec![
            "sim", file, "--param", "P=2", "--param", "n=4", "--param", "C=1",
        ],
        vec!["emit", "--target", "host", file],
        vec![
            "run", "--target", "host", file, "--param", "P=2", "--param", "n=4", "--param", "C=1",
        ],
    ] {
        let (code, out, err) = collc(&args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(
            err.contains("index `me + 1` of signal `sig` leaves 0..P for P = 2, me = 1"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("--timeout-ms"), "{args:?}: {err}");
    }
}

const NEEDS_Z3: &str = r#"
collective ceil_forms: barrier() {
    ranks P in 1..=4;
    param n: int in 1..=1048576;
    let T = ceil(n / 256);
    signal sig[P];
    body {
        for p in peers {
            notify sig[me] @ p += T;
        }
        for p in peers {
            wait sig[p] >= (n + 255) / 256;
        }
    }
    epilogue {
        for p in peers {
            notify sig[p] -= (n + 255) / 256;
        }
    }
}
"#;

#[test]
fn z3_closes_what_literal_arithmetic_cannot() {
    let r = collc_verifier::verify(&protocol(NEEDS_Z3), &Options::symbolic_only());
    for o in r.obligations.iter().filter(|o| o.status != Status::Skipped) {
        assert_eq!(o.status, Status::Proved, "{}: {:?}", o.id, o.reason);
    }
    assert!(r.stats.z3_calls > 0);
    // Off by one: refuted with the smallest counterexample (P = 2, then n = 1).
    let bad = NEEDS_Z3.replace("-= (n + 255) / 256", "-= (n + 256) / 256");
    let r = collc_verifier::verify(&protocol(&bad), &Options::symbolic_only());
    let cb = r.get("credit-balance").unwrap();
    assert_eq!(cb.status, Status::Violated);
    let ps: Vec<(String, i64)> = cb.findings[0]
        .params
        .iter()
        .map(|p| (p.name.clone(), p.value))
        .collect();
    assert_eq!(ps, vec![("P".to_string(), 2), ("n".to_string(), 256)]);
}

/// Bug fixtures whose bug appears only above P=4 (the bounded search explores P=2..4):
/// each is violated with its smallest P, and its correct twin verifies.
#[test]
fn bugs_only_above_p4_are_found_at_their_smallest_p() {
    // (fixture, violated obligation, the smallest counterexample's values)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, i64)]);
    let cases: [Case; 6] = [
        (
            "examples/bugs/arrival_barrier_partial_wait.coll",
            "stale-credit",
            &[("P", 6)],
        ),
        (
            "examples/bugs/broadcast_binomial_lane_mask.coll",
            "wait-reachable",
            &[("P", 6), ("root", 0)],
        ),
        (
            "examples/bugs/hier_barrier_release_off_by_one.coll",
            "wait-reachable",
            &[("P", 5), ("G", 4)],
        ),
        (
            "examples/bugs/all_to_all_v_near_handshake.coll",
            "value-signal",
            &[("P", 6)],
        ),
        // Past the enumeration: a size the literal `21` names.
        (
            "examples/bugs/broadcast_fence_cap_past16.coll",
            "fence",
            &[("P", 21)],
        ),
        (
            "examples/bugs/arrival_retry_credit_past16.coll",
            "credit-balance",
            &[("P", 22)],
        ),
    ];
    for (file, id, want) in cases {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let r = collc_verifier::verify(&protocol(&text), &Options::symbolic_only());
        let o = r.get(id).unwrap();
        assert_eq!(
            o.status,
            Status::Violated,
            "{file}: {id}: {:?}",
            o.summary()
        );
        let params = &o.findings[0].params;
        for (name, value) in want {
            assert!(
                params.iter().any(|p| p.name == *name && p.value == *value),
                "{file}: {id}: {params:?}"
            );
        }
    }
    // The many-writer finding names the counter, the wait, the reset and the writers.
    let text = std::fs::read_to_string(root().join(cases[0].0)).unwrap();
    let src = Source::new(cases[0].0, text.clone());
    let r = collc_verifier::verify(&protocol(&text), &Options::symbolic_only());
    let f = &r.get("stale-credit").unwrap().findings[0];
    assert_eq!(f.cell.as_deref(), Some("arrived[0] on rank 0"));
    let line = |s: collc_grammar::Span| src.line_col(s.start).0;
    // The fixture's lines, found by their text (comments above may grow).
    let line_of = |needle: &str| {
        1 + text
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in the fixture"))
    };
    assert_eq!(
        f.primary.map(line),
        Some(line_of("notify arrived[0] -= P - 1")),
        "the reset"
    );
    let labelled: Vec<usize> = f.labels.iter().map(|(s, _)| line(*s)).collect();
    assert!(
        labelled.contains(&line_of("notify arrived[0] @ rank(0) += 1"))
            && labelled.contains(&line_of("wait arrived[0] >= min(P - 1, 4)")),
        "{labelled:?}"
    );
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("rank 1, rank 2, rank 3, rank 4, rank 5")),
        "{:?}",
        f.notes
    );
    for twin in [
        "examples/arrival_barrier.coll",
        "examples/broadcast_binomial.coll",
        "collc/tests/verify_fixtures/hier_barrier.coll",
        "collc/tests/verify_fixtures/all_to_all_v_entry_barrier.coll",
    ] {
        let text = std::fs::read_to_string(root().join(twin)).unwrap();
        let r = collc_verifier::verify(&protocol(&text), &Options::symbolic_only());
        for o in &r.obligations {
            if o.status != Status::Skipped {
                assert_eq!(
                    o.status,
                    Status::Proved,
                    "{twin}: {}: {:?}",
                    o.id,
                    o.findings
                );
            }
        }
    }
}
