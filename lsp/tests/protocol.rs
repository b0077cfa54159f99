//! The server driven as an editor drives it: JSON-RPC over an in-memory connection.

mod common;

use common::*;
use serde_json::{json, Value};

#[test]
fn requests_before_initialize_are_refused_and_the_lifecycle_holds() {
    let mut c = Client::start();
    assert_eq!(
        c.refused("textDocument/hover", json!({})),
        lsp_server::ErrorCode::ServerNotInitialized as i32
    );
    // Notifications before initialize are dropped: a didOpen publishes nothing.
    c.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": "file:///a.coll", "languageId": "coll", "version": 1, "text": "x" } }),
    );
    let init = c.ok("initialize", json!({ "capabilities": {} }));
    let caps = &init["capabilities"];
    for cap in [
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "documentSymbolProvider",
        "documentFormattingProvider",
    ] {
        assert_eq!(caps[cap], json!(true), "{cap}");
    }
    assert_eq!(caps["textDocumentSync"]["change"], json!(1), "full sync");
    c.notify("initialized", json!({}));
    let again = c.refused("initialize", json!({ "capabilities": {} }));
    assert_eq!(again, lsp_server::ErrorCode::InvalidRequest as i32);
    let unknown = c.refused("collc/nonsense", json!({}));
    assert_eq!(unknown, lsp_server::ErrorCode::MethodNotFound as i32);
    let bad = c.refused("textDocument/hover", json!({ "nonsense": 1 }));
    assert_eq!(bad, lsp_server::ErrorCode::InvalidParams as i32);
    // A request about a document never opened has no answer, not an error.
    let none = c.ok(
        "textDocument/definition",
        json!({ "textDocument": { "uri": "file:///never.coll" }, "position": { "line": 0, "character": 0 } }),
    );
    assert_eq!(none, Value::Null);
    assert_eq!(c.stop(), collc_lsp::End::Clean);
}

#[test]
fn exit_without_shutdown_is_abrupt() {
    let mut c = Client::initialized();
    c.notify("exit", Value::Null);
    assert_eq!(c.join(), collc_lsp::End::Abrupt);
}

#[test]
fn ui_fixtures_publish_their_annotated_diagnostics() {
    let c = Client::initialized();
    let mut failures = Vec::new();
    for path in coll_files("collc/tests/ui") {
        let text = read(&path);
        let published = c.open(&uri_of(&path), &text);
        assert_eq!(published["uri"], json!(uri_of(&path)));
        for d in published["diagnostics"].as_array().into_iter().flatten() {
            assert_eq!(d["source"], json!("collc"));
        }
        let (want, got) = (annotations(&text), lines_and_codes(&published));
        if want != got {
            failures.push(format!("{}: want {want:?}\n  got {got:?}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn diagnostics_carry_range_code_severity_and_help() {
    let c = Client::initialized();
    let path = root().join("collc/tests/ui/resolve_unknown.coll");
    let text = read(&path);
    let line = text.lines().position(|l| l.contains("TIEL")).expect("line");
    let published = c.open("file:///u.coll", &text);
    let d = published["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["range"]["start"]["line"] == json!(line))
        .expect("the TIEL diagnostic")
        .clone();
    let col = text
        .lines()
        .nth(line)
        .and_then(|l| l.find("TIEL"))
        .expect("col");
    assert_eq!(d["range"]["start"]["character"], json!(col));
    assert_eq!(d["range"]["end"]["character"], json!(col + 4));
    assert_eq!(d["severity"], json!(1));
    assert_eq!(d["code"], json!("resolve::unknown-name"));
    // Its help (a close name) is in the message.
    assert!(
        d["message"].as_str().is_some_and(|m| m.contains("help:")),
        "{d}"
    );
}

#[test]
fn save_adds_the_symbolic_verifiers_findings() {
    let c = Client::initialized();
    let path = root().join("examples/bugs/barrier_set0_reset.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    let opened = lines_and_codes(&c.open(&uri, &text));
    assert!(opened.is_empty(), "the front end accepts it: {opened:?}");
    let saved = lines_and_codes(&c.save(&uri));
    let want: Vec<(usize, String)> = annotations(&text)
        .into_iter()
        .filter(|(_, code)| code.starts_with("verify::"))
        .collect();
    assert!(!want.is_empty());
    for w in &want {
        assert!(saved.contains(w), "want {w:?} in {saved:?}");
    }
    // Only symbolic findings: the bounded obligations are skipped and say nothing.
    assert!(
        saved.iter().all(|(_, code)| code.starts_with("verify::")),
        "{saved:?}"
    );
    // The next keystroke shows the front end's view again.
    assert!(lines_and_codes(&c.change(&uri, 2, &text)).is_empty());
}

#[test]
fn formatting_returns_the_canonical_text() {
    let mut c = Client::initialized();
    let path = root().join("examples/barrier.coll");
    let canonical = read(&path);
    let p = collc_spec::front(&collc_verifier::Ranges, &canonical)
        .protocol
        .expect("valid");
    assert_eq!(
        collc_spec::print::format_with_source(&p, &canonical),
        canonical,
        "the example is canonical"
    );
    let messy = canonical.replace("\n    ", "\n  ").replace(" += ", "+=");
    assert_ne!(messy, canonical);
    let uri = "file:///messy.coll";
    c.open(uri, &messy);
    let opts = json!({ "tabSize": 4, "insertSpaces": true });
    let edits = c.ok(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": opts }),
    );
    let edits = edits.as_array().expect("edits");
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0]["newText"], json!(canonical));
    assert_eq!(
        edits[0]["range"]["start"],
        json!({ "line": 0, "character": 0 })
    );
    let lines = messy.matches('\n').count();
    assert_eq!(
        edits[0]["range"]["end"],
        json!({ "line": lines, "character": 0 })
    );
    // Canonical text needs no edit; a text with errors is not formatted.
    c.change(uri, 2, &canonical);
    let none = c.ok(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": opts }),
    );
    assert_eq!(none, json!([]));
    c.change(uri, 3, "collective broken");
    let refused = c.ok(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": opts }),
    );
    assert_eq!(refused, Value::Null);
}

fn at(uri: &str, pos: Value) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": pos })
}

#[test]
fn definition_and_references_follow_scopes() {
    let mut c = Client::initialized();
    let path = root().join("examples/bugs/barrier_set0_reset.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    c.open(&uri, &text);
    // `sig` in `wait sig[p]` → `signal sig[P];`.
    let use_pos = position_of(&text, "wait sig", 0, "wait ".len());
    let def = c.ok("textDocument/definition", at(&uri, use_pos.clone()));
    let decl = position_of(&text, "signal sig", 0, "signal ".len());
    assert_eq!(def["uri"], json!(uri));
    assert_eq!(def["range"]["start"], decl);
    // Every `sig` outside comments, the declaration included.
    let code_only: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let want = code_only.matches("sig[").count() + code_only.matches("sig;").count();
    let mut params = at(&uri, use_pos);
    params["context"] = json!({ "includeDeclaration": true });
    let refs = c.ok("textDocument/references", params.clone());
    assert_eq!(refs.as_array().map(Vec::len), Some(want), "{refs}");
    params["context"] = json!({ "includeDeclaration": false });
    let uses = c.ok("textDocument/references", params);
    assert_eq!(uses.as_array().map(Vec::len), Some(want - 1));
    // The loop variable `p` of the second loop is that loop's, not the first's.
    let p_use = position_of(&text, "wait sig[p]", 0, "wait sig[".len());
    let p_def = c.ok("textDocument/definition", at(&uri, p_use));
    let second_for = position_of(&text, "for p in", 1, "for ".len());
    assert_eq!(p_def["range"]["start"], second_for);
    // A keyword or a comment names nothing.
    let kw = position_of(&text, "fence", 0, 1);
    assert_eq!(c.ok("textDocument/definition", at(&uri, kw)), Value::Null);
}

#[test]
fn hover_on_a_signal_shows_its_credit_rows() {
    let mut c = Client::initialized();
    let path = root().join("examples/broadcast.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    c.open(&uri, &text);
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("valid");
    let table = collc_verifier::table::explain(&p).expect("a table");
    for s in &p.signals {
        let decl = position_of(&text, &format!("signal {}", s.name), 0, "signal ".len());
        let hover = c.ok("textDocument/hover", at(&uri, decl));
        let md = hover["contents"]["value"].as_str().expect("markdown");
        assert_eq!(hover["contents"]["kind"], json!("markdown"));
        let rows: Vec<_> = table.rows.iter().filter(|r| r.signal == s.name).collect();
        assert!(!rows.is_empty());
        for r in rows {
            for field in [&r.cells, &r.credits, &r.waits, &r.reset, &r.net] {
                assert!(md.contains(&format!("`{field}`")), "{field} in {md}");
            }
        }
    }
    // A window is no signal: no hover.
    let w = &p.windows[0].name;
    let wpos = position_of(&text, &format!("window {w}"), 0, "window ".len());
    assert_eq!(c.ok("textDocument/hover", at(&uri, wpos)), Value::Null);
}

#[test]
fn document_symbols_list_every_declaration() {
    let mut c = Client::initialized();
    for path in coll_files("examples") {
        let text = read(&path);
        let uri = uri_of(&path);
        c.open(&uri, &text);
        let syms = c.ok(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": uri } }),
        );
        let p = collc_spec::front(&collc_verifier::Ranges, &text)
            .protocol
            .expect("valid");
        assert_eq!(syms[0]["name"], json!(p.name));
        let names: Vec<&str> = syms[0]["children"]
            .as_array()
            .expect("children")
            .iter()
            .filter_map(|s| s["name"].as_str())
            .collect();
        let declared = p.signals.iter().map(|s| &s.name);
        let declared = declared.chain(p.windows.iter().map(|w| &w.name));
        let declared = declared.chain(p.tiles.iter().map(|t| &t.name));
        for n in declared {
            assert!(names.contains(&n.as_str()), "{n} in {names:?}");
        }
    }
}

#[test]
fn secondary_labels_become_related_information() {
    let c = Client::initialized();
    let path = root().join("collc/tests/ui/resolve_duplicate.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    let published = c.open(&uri, &text);
    let again = position_of(&text, "const n", 0, "const ".len());
    let first = position_of(&text, "param n", 0, "param ".len());
    let d = published["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["range"]["start"] == again)
        .expect("the duplicate's diagnostic")
        .clone();
    assert_eq!(d["code"], json!("resolve::duplicate-name"));
    let related = d["relatedInformation"].as_array().expect("related");
    assert_eq!(related.len(), 1, "{d}");
    assert_eq!(related[0]["location"]["uri"], json!(uri));
    assert_eq!(related[0]["location"]["range"]["start"], first);
    assert!(related[0]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
}

#[test]
fn close_clears_diagnostics_and_malformed_notifications_are_dropped() {
    let mut c = Client::initialized();
    c.notify("textDocument/didOpen", json!({ "textDocument": 7 }));
    c.notify("textDocument/didChange", json!(null));
    c.notify("textDocument/didSave", json!([]));
    c.notify("collc/unknown", json!({}));
    let uri = "file:///c.coll";
    assert!(!lines_and_codes(&c.open(uri, "collective")).is_empty());
    c.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert_eq!(c.published()["diagnostics"], json!([]));
    let syms = c.ok(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert_eq!(syms, json!([]), "a closed document has no outline");
    assert_eq!(c.stop(), collc_lsp::End::Clean);
}

#[test]
fn a_burst_of_changes_ends_with_the_last_texts_diagnostics() {
    let mut c = Client::initialized();
    let path = root().join("examples/allreduce_ring.coll");
    let text = read(&path);
    let uri = "file:///burst.coll";
    c.open(uri, &text);
    // Versions 2..=9 are valid; version 10 has an unknown name on its last body line.
    let broken = text.replacen("body {", "body {\n        wait nosuch[0] >= 1;", 1);
    for v in 2..=9 {
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": v }, "contentChanges": [{ "text": text }] }),
        );
    }
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 10 }, "contentChanges": [{ "text": broken }] }),
    );
    let doc = json!({ "textDocument": { "uri": uri } });
    let (published, answer) = c.request_seeing("textDocument/documentSymbol", doc);
    assert!(answer.is_ok());
    // Validating this example takes long enough that changes sent back to back are
    // queued behind the first: all but the last of those are not diagnosed (without
    // coalescing all 9 would be). The last text is diagnosed, and last.
    assert!(
        !published.is_empty() && published.len() < 9,
        "{}",
        published.len()
    );
    assert_eq!(
        published.last().map(|p| p["version"].clone()),
        Some(json!(10))
    );
    let last = published.last().map(lines_and_codes).unwrap_or_default();
    let line = broken
        .lines()
        .position(|l| l.contains("nosuch"))
        .unwrap_or(0)
        + 1;
    assert!(
        last.contains(&(line, "resolve::unknown-name".to_string())),
        "{last:?}"
    );
    for earlier in &published[..published.len() - 1] {
        assert!(lines_and_codes(earlier).is_empty());
    }
}

#[test]
fn hover_on_a_notify_shows_its_cell_credits_and_the_cost_formulas() {
    let mut c = Client::initialized();
    let path = root().join("examples/barrier.coll");
    let text = read(&path);
    let uri = uri_of(&path);
    c.open(&uri, &text);
    let p = collc_spec::front(&collc_verifier::Ranges, &text)
        .protocol
        .expect("valid");
    let table = collc_verifier::table::explain(&p).expect("a table");
    let cost = collc_verifier::cost::cost(&p, &Default::default()).expect("cost");
    // The epilogue's reset.
    let reset = position_of(&text, "notify sig[p] -= 1", 0, 2);
    let hover = c.ok("textDocument/hover", at(&uri, reset));
    let md = hover["contents"]["value"].as_str().expect("markdown");
    assert!(
        md.contains("`sig[p] -= 1`: AtomicAdd on this rank's cell (epilogue)"),
        "{md}"
    );
    for r in table.rows.iter().filter(|r| r.signal == "sig") {
        assert!(md.contains(&format!("`{}`", r.reset)), "{md}");
        assert!(md.contains(&format!("`{}`", r.credits)), "{md}");
    }
    for r in &cost.rows {
        assert!(
            md.contains(&format!("| {} | `{}` |", r.what, r.formula)),
            "{} in {md}",
            r.formula
        );
    }
    // The body's remote notify.
    let remote = position_of(&text, "notify sig[me] @ p", 0, 0);
    let hover = c.ok("textDocument/hover", at(&uri, remote));
    let md = hover["contents"]["value"].as_str().expect("markdown");
    assert!(md.contains("AtomicAdd on the peer's cell (body)"), "{md}");
    // A `wait` keyword has no hover.
    let wait = position_of(&text, "wait sig", 0, 1);
    assert_eq!(c.ok("textDocument/hover", at(&uri, wait)), Value::Null);
}
