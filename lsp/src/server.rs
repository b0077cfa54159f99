//! The server loop: the lifecycle (initialize, shutdown, exit), the open
//! documents, and one handler per request or notification. Every handler works on
//! the document's current text; nothing a client sends can make it panic.

use crate::diagnostics;
use crate::names;
use crate::position::LineIndex;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    notification, request, GotoDefinitionResponse, Hover, HoverContents, Location, MarkupContent,
    MarkupKind, OneOf, PublishDiagnosticsParams, SaveOptions, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextEdit, Uri,
};
use std::collections::{HashMap, VecDeque};

/// What the server can do.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(SaveOptions::default().into()),
                ..TextDocumentSyncOptions::default()
            },
        )),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        hover_provider: Some(true.into()),
        ..ServerCapabilities::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Uninitialized,
    Running,
    ShutDown,
}

/// How the session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `exit` after `shutdown` (exit code 0).
    Clean,
    /// `exit` without `shutdown`, or the client went away (exit code 1).
    Abrupt,
}

/// Serves one client until `exit` or until the connection closes.
pub fn serve(conn: &Connection) -> End {
    let mut server = Server {
        conn,
        phase: Phase::Uninitialized,
        docs: HashMap::new(),
        versions: HashMap::new(),
    };
    // Messages that have already arrived: a change superseded by a later change or
    // close of the same document among them is applied but not diagnosed.
    let mut pending: VecDeque<Message> = VecDeque::new();
    while let Some(msg) = pending.pop_front().or_else(|| conn.receiver.recv().ok()) {
        pending.extend(conn.receiver.try_iter());
        let ok = match msg {
            Message::Request(req) => server.request(req),
            Message::Notification(n) if n.method == notification::Exit::METHOD => {
                return if server.phase == Phase::ShutDown {
                    End::Clean
                } else {
                    End::Abrupt
                };
            }
            Message::Notification(n) => {
                let diagnose = !superseded(&n, &pending);
                server.notification(n, diagnose)
            }
            Message::Response(_) => true,
        };
        if !ok {
            break;
        }
    }
    End::Abrupt
}

/// Whether `n` is a change that a later change or close of its document, already
/// received, replaces.
fn superseded(n: &Notification, pending: &VecDeque<Message>) -> bool {
    let doc = |n: &Notification| n.params["textDocument"]["uri"].clone();
    let replaces = |m: &Notification| {
        (m.method == notification::DidChangeTextDocument::METHOD
            || m.method == notification::DidCloseTextDocument::METHOD)
            && doc(m) == doc(n)
    };
    n.method == notification::DidChangeTextDocument::METHOD
        && pending
            .iter()
            .any(|m| matches!(m, Message::Notification(m) if replaces(m)))
}

struct Server<'c> {
    conn: &'c Connection,
    phase: Phase,
    docs: HashMap<Uri, String>,
    /// The version of each open document, as the client numbers them.
    versions: HashMap<Uri, i32>,
}

/// A request's answer: a result, or an error code and message.
type Answer = Result<serde_json::Value, (ErrorCode, String)>;

impl Server<'_> {
    /// Sends a message; false when the client is gone.
    fn send(&self, msg: impl Into<Message>) -> bool {
        self.conn.sender.send(msg.into()).is_ok()
    }

    fn request(&mut self, req: Request) -> bool {
        let answer = match (self.phase, req.method.as_str()) {
            (Phase::Uninitialized, request::Initialize::METHOD) => {
                self.phase = Phase::Running;
                Ok(serde_json::json!({
                    "capabilities": capabilities(),
                    "serverInfo": { "name": "collc", "version": env!("CARGO_PKG_VERSION") },
                }))
            }
            (Phase::Uninitialized, _) => Err((
                ErrorCode::ServerNotInitialized,
                format!("`{}` before `initialize`", req.method),
            )),
            (Phase::ShutDown, _) => Err((
                ErrorCode::InvalidRequest,
                format!("`{}` after `shutdown`", req.method),
            )),
            (Phase::Running, request::Initialize::METHOD) => Err((
                ErrorCode::InvalidRequest,
                "`initialize` sent twice".to_string(),
            )),
            (Phase::Running, request::Shutdown::METHOD) => {
                self.phase = Phase::ShutDown;
                Ok(serde_json::Value::Null)
            }
            (Phase::Running, _) => self.dispatch(&req),
        };
        self.send(reply(req.id, answer))
    }

    fn dispatch(&self, req: &Request) -> Answer {
        match req.method.as_str() {
            request::Formatting::METHOD => {
                let p: lsp_types::DocumentFormattingParams = params(req)?;
                to_json(self.formatting(&p.text_document.uri))
            }
            request::DocumentSymbolRequest::METHOD => {
                let p: lsp_types::DocumentSymbolParams = params(req)?;
                let symbols = self.with_decls(&p.text_document.uri, |text, decls| {
                    crate::symbols::outline(decls, &LineIndex::new(text))
                });
                to_json(lsp_types::DocumentSymbolResponse::Nested(
                    symbols.unwrap_or_default(),
                ))
            }
            request::GotoDefinition::METHOD => {
                let p: lsp_types::GotoDefinitionParams = params(req)?;
                let at = p.text_document_position_params;
                let uri = at.text_document.uri;
                let found = self.with_decls(&uri, |text, decls| {
                    let idx = LineIndex::new(text);
                    let token = names::ident_at(text, idx.offset(at.position))?;
                    let d = names::resolve(decls, text, token)?;
                    Some(Location::new(uri.clone(), idx.range(d.span)))
                });
                to_json(found.flatten().map(GotoDefinitionResponse::Scalar))
            }
            request::References::METHOD => {
                let p: lsp_types::ReferenceParams = params(req)?;
                let at = p.text_document_position;
                let uri = at.text_document.uri;
                let with_decl = p.context.include_declaration;
                let found = self.with_decls(&uri, |text, decls| {
                    let idx = LineIndex::new(text);
                    let token = names::ident_at(text, idx.offset(at.position))?;
                    let d = names::resolve(decls, text, token)?;
                    let spans = names::references(decls, text, d);
                    Some(
                        spans
                            .into_iter()
                            .filter(|s| with_decl || *s != d.span)
                            .map(|s| Location::new(uri.clone(), idx.range(s)))
                            .collect::<Vec<_>>(),
                    )
                });
                to_json(found.flatten())
            }
            request::HoverRequest::METHOD => {
                let p: lsp_types::HoverParams = params(req)?;
                let at = p.text_document_position_params;
                let hover = self.docs.get(&at.text_document.uri).and_then(|text| {
                    let idx = LineIndex::new(text);
                    let token = names::ident_at(text, idx.offset(at.position))?;
                    let value = crate::hover::signal_credits(text, token)?;
                    Some(Hover {
                        contents: HoverContents::Markup(MarkupContent {
                            kind: MarkupKind::Markdown,
                            value,
                        }),
                        range: Some(idx.range(token)),
                    })
                });
                to_json(hover)
            }
            _ => Err((
                ErrorCode::MethodNotFound,
                format!("unknown request `{}`", req.method),
            )),
        }
    }

    /// Runs `f` on an open document that parses and its declarations.
    fn with_decls<T>(&self, uri: &Uri, f: impl FnOnce(&str, &[names::Decl]) -> T) -> Option<T> {
        let text = self.docs.get(uri)?;
        let file = collc_grammar::parse(text).ok()?;
        Some(f(text, &names::decls(&file, text.len())))
    }

    /// One edit replacing the whole document with its canonical form, none when
    /// it is canonical already, `None` when it does not validate.
    fn formatting(&self, uri: &Uri) -> Option<Vec<TextEdit>> {
        let text = self.docs.get(uri)?;
        let p = collc_verifier::validate(text).protocol?;
        let formatted = collc_spec::print::format_with_source(&p, text);
        if formatted == *text {
            return Some(Vec::new());
        }
        let idx = LineIndex::new(text);
        let whole = lsp_types::Range::new(lsp_types::Position::new(0, 0), idx.end());
        Some(vec![TextEdit::new(whole, formatted)])
    }

    /// Handles a notification; a changed text is diagnosed only when `diagnose`.
    fn notification(&mut self, n: Notification, diagnose: bool) -> bool {
        if self.phase != Phase::Running {
            return true;
        }
        // A notification whose parameters do not parse is dropped (it has no reply).
        match n.method.as_str() {
            notification::DidOpenTextDocument::METHOD => {
                let Some(p) = parsed::<lsp_types::DidOpenTextDocumentParams>(n) else {
                    return true;
                };
                let uri = p.text_document.uri;
                self.docs.insert(uri.clone(), p.text_document.text);
                self.versions.insert(uri.clone(), p.text_document.version);
                self.publish(&uri, false)
            }
            notification::DidChangeTextDocument::METHOD => {
                let Some(p) = parsed::<lsp_types::DidChangeTextDocumentParams>(n) else {
                    return true;
                };
                // Full sync: the last change holds the whole text.
                let Some(change) = p.content_changes.into_iter().next_back() else {
                    return true;
                };
                let uri = p.text_document.uri;
                self.docs.insert(uri.clone(), change.text);
                self.versions.insert(uri.clone(), p.text_document.version);
                !diagnose || self.publish(&uri, false)
            }
            notification::DidSaveTextDocument::METHOD => {
                let Some(p) = parsed::<lsp_types::DidSaveTextDocumentParams>(n) else {
                    return true;
                };
                let uri = p.text_document.uri;
                if let Some(text) = p.text {
                    self.docs.insert(uri.clone(), text);
                }
                self.publish(&uri, true)
            }
            notification::DidCloseTextDocument::METHOD => {
                let Some(p) = parsed::<lsp_types::DidCloseTextDocumentParams>(n) else {
                    return true;
                };
                let uri = p.text_document.uri;
                self.docs.remove(&uri);
                self.versions.remove(&uri);
                self.send(Notification::new(
                    notification::PublishDiagnostics::METHOD.to_string(),
                    PublishDiagnosticsParams::new(uri, Vec::new(), None),
                ))
            }
            _ => true,
        }
    }

    /// Publishes the diagnostics of an open document: the front end's, and the
    /// symbolic verifier's too when `verify`.
    fn publish(&self, uri: &Uri, verify: bool) -> bool {
        let Some(text) = self.docs.get(uri) else {
            return true;
        };
        let idx = LineIndex::new(text);
        let found = diagnostics::of_text(text, verify, uri.as_str());
        let diags = found
            .iter()
            .map(|d| diagnostics::to_lsp(d, &idx, uri))
            .collect();
        self.send(Notification::new(
            notification::PublishDiagnostics::METHOD.to_string(),
            PublishDiagnosticsParams::new(uri.clone(), diags, self.versions.get(uri).copied()),
        ))
    }
}

fn params<P: serde::de::DeserializeOwned>(req: &Request) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(req.params.clone())
        .map_err(|e| (ErrorCode::InvalidParams, format!("`{}`: {e}", req.method)))
}

fn parsed<P: serde::de::DeserializeOwned>(n: Notification) -> Option<P> {
    serde_json::from_value(n.params).ok()
}

fn to_json(v: impl serde::Serialize) -> Answer {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

fn reply(id: RequestId, answer: Answer) -> Response {
    match answer {
        Ok(v) => Response::new_ok(id, v),
        Err((code, msg)) => Response::new_err(id, code as i32, msg),
    }
}
