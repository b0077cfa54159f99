//! Code actions: every diagnostic that carries a fix is offered as a quick fix;
//! applying its edit removes the diagnostic (re-checked with the same front end and
//! symbolic verifier the server runs).

mod common;

use common::*;
use serde_json::{json, Value};

/// The quick fixes the server offers for one published diagnostic.
fn actions_for(c: &mut Client, uri: &str, d: &Value) -> Vec<Value> {
    let params = json!({
        "textDocument": { "uri": uri },
        "range": d["range"],
        "context": { "diagnostics": [d] },
    });
    let got = c.ok("textDocument/codeAction", params);
    got.as_array().cloned().unwrap_or_default()
}

/// Where byte `at` of `text` is after the edits.
fn moved(text: &str, at: usize, edits: &[Value]) -> usize {
    let mut out = at;
    for e in edits {
        let (a, b) = (
            offset_of(text, &e["range"]["start"]),
            offset_of(text, &e["range"]["end"]),
        );
        if b <= at {
            out = out + e["newText"].as_str().map_or(0, str::len) - (b - a);
        }
    }
    out
}

fn count(found: &[collc_grammar::Diagnostic], code: &str) -> usize {
    found.iter().filter(|d| d.code == code).count()
}

/// Applies each fix of each diagnostic of `published` and checks the result is clean
/// of that diagnostic; the codes fixed.
fn apply_every_fix(
    c: &mut Client,
    uri: &str,
    text: &str,
    published: &Value,
) -> Vec<(String, usize)> {
    let mut fixed = Vec::new();
    for d in published["diagnostics"].as_array().into_iter().flatten() {
        let code = d["code"].as_str().expect("code");
        let has_fix = d["data"]["fixes"].as_array().is_some_and(|f| !f.is_empty());
        let actions = actions_for(c, uri, d);
        assert_eq!(has_fix, !actions.is_empty(), "{uri} {d}");
        for a in actions {
            assert_eq!(a["kind"], json!("quickfix"));
            assert_eq!(a["diagnostics"][0]["code"], json!(code));
            let edits = a["edit"]["changes"][uri].as_array().expect("edits");
            let after = apply_edits(text, edits);
            assert_ne!(after, text);
            let verify = code.starts_with("verify::");
            let before = collc_lsp::diagnostics::of_text(text, verify, uri);
            let now = collc_lsp::diagnostics::of_text(&after, verify, uri);
            let title = a["title"].as_str().unwrap_or("");
            // The diagnostic is gone: none of its code where it pointed (the offset
            // moved by the edits before it). Others of the code may stay (the fence
            // obligation reports every unfenced notify; one fix places one fence) or
            // show up once an earlier error no longer hides them.
            let at = moved(text, offset_of(text, &d["range"]["start"]), edits);
            assert!(
                !now.iter()
                    .any(|n| n.code == code && n.primary_span().map(|s| s.start) == Some(at)),
                "{uri}: `{title}` leaves {code}:\n{after}"
            );
            let _ = &before;
            if verify {
                assert!(
                    collc_spec::front(&collc_verifier::Ranges, &after)
                        .protocol
                        .is_some(),
                    "{uri}: `{title}` breaks the front end:\n{after}"
                );
            }
            fixed.push((code.to_string(), count(&now, code)));
        }
    }
    fixed
}

#[test]
fn front_end_suggestions_are_quick_fixes() {
    let mut c = Client::initialized();
    let mut fixed = Vec::new();
    for path in coll_files("collc/tests/ui") {
        let text = read(&path);
        let uri = uri_of(&path);
        let published = c.open(&uri, &text);
        fixed.extend(apply_every_fix(&mut c, &uri, &text, &published));
    }
    for code in ["resolve::unknown-name", "parse::syntax"] {
        assert!(fixed.iter().any(|(f, _)| f == code), "{code} in {fixed:?}");
    }
}

#[test]
fn verifier_findings_with_a_fix_are_quick_fixes() {
    let mut c = Client::initialized();
    let mut fixed: Vec<(String, String, usize)> = Vec::new();
    let fixable = [
        "verify::credit-balance",
        "verify::op-exclusivity",
        "verify::fence",
        "verify::stale-credit",
    ];
    for path in coll_files("examples/bugs") {
        let text = read(&path);
        if !annotations(&text)
            .iter()
            .any(|(_, c)| fixable.contains(&c.as_str()))
        {
            continue;
        }
        let uri = uri_of(&path);
        c.open(&uri, &text);
        let saved = c.save(&uri);
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        for (code, left) in apply_every_fix(&mut c, &uri, &text, &saved) {
            fixed.push((name.to_string(), code, left));
        }
    }
    // The fixes the verifier derives, each on the fixture made for it, where the one
    // fix leaves none of its code: a missing reset, `= 0` as `-= N`, a fence, a monotonic
    // threshold's growth, `==` on a counter as `>=`.
    for (file, code) in [
        ("barrier_no_epilogue", "verify::credit-balance"),
        ("barrier_set0_reset", "verify::op-exclusivity"),
        ("broadcast_stage_unfenced", "verify::fence"),
        (
            "epoch_allreduce_growth_off_by_one",
            "verify::credit-balance",
        ),
        ("eq_wait_on_counter", "verify::stale-credit"),
    ] {
        assert!(
            fixed
                .iter()
                .any(|(f, c, left)| f == file && c == code && *left == 0),
            "{file}: {code} in {fixed:?}"
        );
    }
}

#[test]
fn a_missing_epilogue_is_added_with_the_waits_thresholds() {
    let mut c = Client::initialized();
    let path = root().join("examples/bugs/barrier_no_epilogue.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    c.open(&uri, &text);
    let saved = c.save(&uri);
    let d = saved["diagnostics"]
        .as_array()
        .and_then(|ds| {
            ds.iter()
                .find(|d| d["code"] == json!("verify::credit-balance"))
        })
        .expect("the credit-balance finding")
        .clone();
    let actions = actions_for(&mut c, &uri, &d);
    let edits = actions[0]["edit"]["changes"][&uri]
        .as_array()
        .expect("edits");
    let after = apply_edits(&text, edits);
    let want = "    epilogue {\n        for p in peers {\n            notify sig[p] -= 1;\n        }\n        fence;\n    }\n}";
    assert!(after.contains(want), "{after}");
}
