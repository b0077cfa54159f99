//! `collc lsp` as an editor starts it: a child process speaking JSON-RPC over its
//! stdin and stdout (the protocol itself is tested in `lsp/tests/`).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

fn frame(msg: &Value) -> Vec<u8> {
    let body = msg.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn read_frame(r: &mut impl BufRead) -> Value {
    let mut len = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).expect("a header line");
        let line = line.trim();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length:") {
            len = n.trim().parse().expect("a length");
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).expect("a body");
    serde_json::from_slice(&body).expect("JSON")
}

/// `collc lsp` as a child, its stdin and its stdout.
fn start() -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_collc"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("collc lsp starts");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    (child, stdin, stdout)
}

#[test]
fn collc_lsp_serves_over_stdio_and_exits_cleanly() {
    let (mut child, mut stdin, mut stdout) = start();
    let text = "collective x: barrier() {\n    ranks P in 1..=4;\n    signal s[P];\n    body { wait s[q] >= 1; }\n}\n";
    let msgs = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {} }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "initialize", "params": { "capabilities": {} } }),
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
            "uri": "file:///x.coll", "languageId": "coll", "version": 1, "text": text } } }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }),
        json!({ "jsonrpc": "2.0", "method": "exit" }),
    ];
    for m in &msgs {
        stdin.write_all(&frame(m)).expect("write");
    }
    stdin.flush().expect("flush");
    let refused = read_frame(&mut stdout);
    assert_eq!(refused["id"], json!(1));
    assert_eq!(refused["error"]["code"], json!(-32002));
    let init = read_frame(&mut stdout);
    assert_eq!(init["id"], json!(2));
    assert!(init["result"]["capabilities"].is_object());
    let published = read_frame(&mut stdout);
    assert_eq!(
        published["method"],
        json!("textDocument/publishDiagnostics")
    );
    let diags = published["params"]["diagnostics"]
        .as_array()
        .expect("array");
    assert!(
        diags
            .iter()
            .any(|d| d["code"] == json!("resolve::unknown-name")
                && d["range"]["start"]["line"] == json!(3)),
        "{published}"
    );
    let shutdown = read_frame(&mut stdout);
    assert_eq!(shutdown["id"], json!(3));
    let status = child.wait().expect("exits");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn collc_lsp_answers_a_cancel_mid_check_over_stdio() {
    let (mut child, mut stdin, mut stdout) = start();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/allreduce_mesh.coll"
    );
    let text = std::fs::read_to_string(path).expect("example");
    let mut send = |m: Value| {
        stdin.write_all(&frame(&m)).expect("write");
        stdin.flush().expect("flush");
    };
    send(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
    );
    send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
    send(
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
        "uri": "file:///m.coll", "languageId": "coll", "version": 1, "text": text } } }),
    );
    send(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "collc/check", "params": {
        "textDocument": { "uri": "file:///m.coll" }, "budgetMs": 60000, "workDoneToken": "w" } }),
    );
    // Wait for the first bounded stage, then cancel.
    loop {
        let m = read_frame(&mut stdout);
        assert_ne!(m["id"], json!(2), "answered before its bounded stages: {m}");
        let msg = m["params"]["value"]["message"].as_str().unwrap_or("");
        if m["method"] == json!("$/progress") && msg.starts_with("bounded") {
            break;
        }
    }
    let t0 = std::time::Instant::now();
    send(json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": 2 } }));
    let answer = loop {
        let m = read_frame(&mut stdout);
        if m["id"] == json!(2) {
            break m;
        }
    };
    assert_eq!(answer["error"]["code"], json!(-32800), "{answer}");
    assert!(t0.elapsed() < std::time::Duration::from_secs(5));
    send(json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }));
    send(json!({ "jsonrpc": "2.0", "method": "exit" }));
    loop {
        if read_frame(&mut stdout)["id"] == json!(3) {
            break;
        }
    }
    assert_eq!(child.wait().expect("exits").code(), Some(0));
}
