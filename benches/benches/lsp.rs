//! The language server's latencies on the largest example, through `collc_lsp::serve`
//! on an in-memory connection (what an editor waits for, JSON values included):
//! a keystroke (`didChange` with one character changed) to its `publishDiagnostics`
//! (the front end), and a save (`didSave`) to the publication of the symbolic
//! verifier's result (the first symbolic result). Figures in benches/README.md
//! under "Language server".

use criterion::{criterion_group, criterion_main, Criterion};
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::json;
use std::time::Duration;

/// The largest file in `examples/`.
fn largest() -> (String, String) {
    collc_benches::examples()
        .into_iter()
        .max_by_key(|(_, t)| t.len())
        .expect("examples")
}

struct Editor {
    conn: Connection,
    uri: String,
    version: i32,
}

impl Editor {
    fn start(text: &str) -> Editor {
        let (server, conn) = Connection::memory();
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || collc_lsp::serve(&server))
            .expect("server thread");
        let init = Request::new(
            RequestId::from(1),
            "initialize".into(),
            json!({ "capabilities": {} }),
        );
        conn.sender.send(init.into()).expect("send");
        let e = Editor {
            conn,
            uri: "file:///largest.coll".into(),
            version: 1,
        };
        e.wait_for(|m| matches!(m, Message::Response(_)));
        e.notify("initialized", json!({}));
        e.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": e.uri, "languageId": "coll", "version": 1, "text": text } }),
        );
        e.published();
        e
    }

    fn notify(&self, method: &str, params: serde_json::Value) {
        let n = Notification::new(method.into(), params);
        self.conn.sender.send(n.into()).expect("send");
    }

    fn wait_for(&self, f: impl Fn(&Message) -> bool) {
        loop {
            let m = self
                .conn
                .receiver
                .recv_timeout(Duration::from_secs(120))
                .expect("an answer");
            if f(&m) {
                return;
            }
        }
    }

    fn published(&self) {
        self.wait_for(|m| {
            matches!(m, Message::Notification(n) if n.method == "textDocument/publishDiagnostics")
        });
    }

    fn change(&mut self, text: &str) {
        self.version += 1;
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": self.uri, "version": self.version }, "contentChanges": [{ "text": text }] }),
        );
        self.published();
    }

    fn save(&self) {
        self.notify(
            "textDocument/didSave",
            json!({ "textDocument": { "uri": self.uri } }),
        );
        self.published();
    }
}

fn lsp(c: &mut Criterion) {
    let (_, text) = largest();
    // A keystroke: one character typed at the end of the first body line, then
    // taken back (the two texts alternate).
    let at = text.find("body {").map_or(0, |i| i + "body {".len());
    let typed = format!("{} {}", &text[..at], &text[at..]);
    let mut ed = Editor::start(&text);
    let mut g = c.benchmark_group("lsp");
    let mut flip = false;
    g.bench_function("keystroke_to_diagnostics_largest", |b| {
        b.iter(|| {
            flip = !flip;
            ed.change(if flip { &typed } else { &text });
        })
    });
    ed.change(&text);
    g.sample_size(10);
    g.bench_function("save_to_symbolic_diagnostics_largest", |b| {
        b.iter(|| ed.save())
    });
    g.finish();
}

criterion_group!(benches, lsp);
criterion_main!(benches);
