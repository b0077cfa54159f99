//! A test client: the server on its own thread behind an in-memory connection,
//! and the JSON-RPC exchanges an editor makes.

#![allow(dead_code)] // each test file uses its own part

use lsp_server::{Connection, Message, Notification, Request, RequestId, ResponseError};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long any answer may take (the symbolic verifier on save included).
const PATIENCE: Duration = Duration::from_secs(300);

pub struct Client {
    conn: Connection,
    server: Option<JoinHandle<collc_lsp::End>>,
    next: i32,
}

impl Client {
    /// A server that has not been initialized.
    pub fn start() -> Client {
        let (server, conn) = Connection::memory();
        // The CLI serves on a big stack (`collc::driver::with_big_stack`); so does this.
        let handle = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || collc_lsp::serve(&server))
            .expect("server thread");
        Client {
            conn,
            server: Some(handle),
            next: 0,
        }
    }

    /// A server after `initialize` and `initialized`.
    pub fn initialized() -> Client {
        let mut c = Client::start();
        c.ok("initialize", json!({ "capabilities": {} }));
        c.notify("initialized", json!({}));
        c
    }

    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ResponseError> {
        self.request_seeing(method, params).1
    }

    /// A request's answer, and the diagnostics published before it.
    pub fn request_seeing(
        &mut self,
        method: &str,
        params: Value,
    ) -> (Vec<Value>, Result<Value, ResponseError>) {
        self.next += 1;
        let id = RequestId::from(self.next);
        self.send(Request::new(id.clone(), method.into(), params));
        let mut published = Vec::new();
        loop {
            match self.recv() {
                Message::Response(r) if r.id == id => return (published, r.response_result),
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    published.push(n.params)
                }
                _ => continue,
            }
        }
    }

    /// Sends a request without waiting for its answer.
    pub fn send_request(&mut self, method: &str, params: Value) -> RequestId {
        self.next += 1;
        let id = RequestId::from(self.next);
        self.send(Request::new(id.clone(), method.into(), params));
        id
    }

    /// The next message, if one comes within `d`.
    pub fn next_within(&self, d: Duration) -> Option<Message> {
        self.conn.receiver.recv_timeout(d).ok()
    }

    /// The result of a request that must succeed.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        match self.request(method, params) {
            Ok(v) => v,
            Err(e) => panic!("{method}: {e:?}"),
        }
    }

    /// The error code of a request that must fail.
    pub fn refused(&mut self, method: &str, params: Value) -> i32 {
        match self.request(method, params) {
            Ok(v) => panic!("{method} answered {v}"),
            Err(e) => e.code,
        }
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.send(Notification::new(method.into(), params));
    }

    fn send(&self, m: impl Into<Message>) {
        self.conn
            .sender
            .send(m.into())
            .expect("server is listening");
    }

    fn recv(&self) -> Message {
        self.conn
            .receiver
            .recv_timeout(PATIENCE)
            .expect("the server answers in time")
    }

    /// The next diagnostics published (other notifications skipped).
    pub fn published(&self) -> Value {
        loop {
            if let Message::Notification(n) = self.recv() {
                if n.method == "textDocument/publishDiagnostics" {
                    return n.params;
                }
            }
        }
    }

    pub fn open(&self, uri: &str, text: &str) -> Value {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "coll", "version": 1, "text": text } }),
        );
        self.published()
    }

    pub fn change(&self, uri: &str, version: i32, text: &str) -> Value {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
        self.published()
    }

    pub fn save(&self, uri: &str) -> Value {
        self.notify(
            "textDocument/didSave",
            json!({ "textDocument": { "uri": uri } }),
        );
        self.published()
    }

    /// `shutdown`, `exit`, and how the server says the session ended.
    pub fn stop(mut self) -> collc_lsp::End {
        assert_eq!(self.ok("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        self.join()
    }

    pub fn join(&mut self) -> collc_lsp::End {
        self.server
            .take()
            .expect("joined once")
            .join()
            .expect("the server never panics")
    }
}

/// (1-based line, code) of each published diagnostic, sorted.
pub fn lines_and_codes(published: &Value) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = published["diagnostics"]
        .as_array()
        .expect("a diagnostics array")
        .iter()
        .map(|d| {
            let line = d["range"]["start"]["line"].as_u64().expect("a line") as usize + 1;
            let code = d["code"].as_str().expect("a code").to_string();
            (line, code)
        })
        .collect();
    // A root cause's other findings at the same place are published as related
    // information (`also CODE: message`): they are published too.
    for d in published["diagnostics"].as_array().into_iter().flatten() {
        for r in d["relatedInformation"].as_array().into_iter().flatten() {
            let msg = r["message"].as_str().unwrap_or("");
            if let Some((code, _)) = msg.strip_prefix("also ").and_then(|m| m.split_once(": ")) {
                let line = r["location"]["range"]["start"]["line"]
                    .as_u64()
                    .unwrap_or(0) as usize;
                out.push((line + 1, code.to_string()));
            }
        }
    }
    out.sort();
    out
}

/// The `// expect: CODE, CODE` annotations of a fixture as sorted (line, code) pairs.
pub fn annotations(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find("// expect:") {
            let codes = line[at + "// expect:".len()..].split(',');
            out.extend(
                codes
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(|c| (i + 1, c.to_string())),
            );
        }
    }
    out.sort();
    out
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The `.coll` files of a folder under the workspace root, sorted.
pub fn coll_files(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .expect("folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "coll"))
        .collect();
    out.sort();
    out
}

pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).expect("readable fixture")
}

pub fn uri_of(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The 0-based (line, UTF-16 character) of the `nth` occurrence of `needle`
/// (plus `shift` bytes) in an ASCII line of `text`.
pub fn position_of(text: &str, needle: &str, nth: usize, shift: usize) -> Value {
    let at = text
        .match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i + shift)
        .expect("needle in text");
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": col })
}

/// The byte offset of an LSP position (UTF-16 columns) in `text`.
pub fn offset_of(text: &str, pos: &Value) -> usize {
    let line = pos["line"].as_u64().expect("line") as usize;
    let character = pos["character"].as_u64().expect("character") as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= character || c == '\n' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// `text` with LSP text edits applied.
pub fn apply_edits(text: &str, edits: &[Value]) -> String {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset_of(text, &e["range"]["start"]),
                offset_of(text, &e["range"]["end"]),
                e["newText"].as_str().expect("newText"),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (a, b, t) in spans {
        out.replace_range(a..b, t);
    }
    out
}
