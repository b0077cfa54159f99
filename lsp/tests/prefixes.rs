//! Half-typed and hostile input: every line prefix of every example sent as a
//! change yields a diagnostics notification (and the outline and definition
//! requests answer on it); huge and deeply nested texts are diagnosed, not crashed on.

mod common;

use common::*;
use serde_json::{json, Value};

#[test]
fn every_prefix_of_every_example_is_diagnosed() {
    let mut c = Client::initialized();
    let mut files = coll_files("examples");
    files.extend(coll_files("examples/bugs"));
    files.extend(coll_files("examples/outside_model"));
    let uri = "file:///prefix.coll";
    c.open(uri, "");
    let mut version = 1;
    let t0 = std::time::Instant::now();
    let mut sent = 0;
    for path in &files {
        let text = read(path);
        let mut end = 0;
        for line in text.split_inclusive('\n') {
            end += line.len();
            version += 1;
            let published = c.change(uri, version, &text[..end]);
            assert_eq!(published["uri"], json!(uri));
            assert!(published["diagnostics"].is_array());
            sent += 1;
        }
        // Requests on the last, whole text, and on a cut inside a line.
        let cut = &text[..text.len() / 2];
        c.change(uri, version + 1, cut);
        version += 1;
        let pos = json!({ "line": cut.matches('\n').count(), "character": 1 });
        let doc = json!({ "textDocument": { "uri": uri } });
        let sym = c.ok("textDocument/documentSymbol", doc.clone());
        assert!(sym.is_array() || sym.is_null());
        let mut params = doc.clone();
        params["position"] = pos;
        c.ok("textDocument/definition", params.clone());
        c.ok("textDocument/hover", params);
        let fmt = json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } });
        c.ok("textDocument/formatting", fmt);
    }
    eprintln!(
        "{sent} prefixes of {} files in {:?}",
        files.len(),
        t0.elapsed()
    );
    assert!(sent > files.len());
    assert_eq!(c.stop(), collc_lsp::End::Clean);
}

#[test]
fn huge_and_deep_texts_are_diagnosed() {
    let c = Client::initialized();
    let uri = "file:///huge.coll";
    let huge = "x".repeat(3 << 20);
    let codes = lines_and_codes(&c.open(uri, &huge));
    assert!(
        codes.iter().any(|(_, code)| code == "input::too-large"),
        "{codes:?}"
    );
    let deep = format!("collective d: barrier() {{ {} }}", "(".repeat(100_000));
    let codes = lines_and_codes(&c.change(uri, 2, &deep));
    assert!(!codes.is_empty());
    let odd = "collective µ𝄞: barrier() {\r\n\0\u{feff}}";
    let codes = lines_and_codes(&c.change(uri, 3, odd));
    assert!(!codes.is_empty());
    // Positions past the end of the text are clamped, not trusted.
    let far =
        json!({ "textDocument": { "uri": uri }, "position": { "line": 999, "character": 999 } });
    let mut c = c;
    assert_eq!(c.ok("textDocument/definition", far), Value::Null);
}
