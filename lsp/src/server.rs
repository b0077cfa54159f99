//! The server loop: the lifecycle (initialize, shutdown, exit), the open
//! documents, and one handler per request or notification. Every handler works on
//! the document's current text; nothing a client sends can make it panic.

use crate::check;
use crate::diagnostics;
use crate::names;
use crate::position::LineIndex;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    notification, request, CodeActionProviderCapability, ExecuteCommandOptions,
    GotoDefinitionResponse, Hover, HoverContents, Location, MarkupContent, MarkupKind,
    NumberOrString, OneOf, SaveOptions, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextEdit, Uri,
};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

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
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![check::COMMAND.to_string()],
            ..ExecuteCommandOptions::default()
        }),
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
        edits: HashMap::new(),
        jobs: HashMap::new(),
        progress: false,
        tokens: 0,
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
    /// Each document's edit counter: work started on a text publishes only while
    /// it is unchanged.
    edits: HashMap<Uri, Arc<AtomicU64>>,
    /// The states of running checks ([`check::State`]).
    jobs: HashMap<RequestId, check::Handle>,
    /// Whether the client accepts server-created progress tokens.
    progress: bool,
    /// Progress tokens created so far.
    tokens: u64,
}

/// Runs `f` on a worker thread with the stack the verifier's recursion needs.
fn spawn(f: impl FnOnce() + Send + 'static) {
    // A failed spawn loses the work, not the server.
    let _ = std::thread::Builder::new().stack_size(256 << 20).spawn(f);
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
                self.progress = req.params["capabilities"]["window"]["workDoneProgress"]
                    == serde_json::Value::Bool(true);
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
            (Phase::Running, check::METHOD | request::ExecuteCommand::METHOD) => {
                match self.start_check(&req) {
                    Ok(()) => return true, // the worker answers
                    Err(e) => Err(e),
                }
            }
            (Phase::Running, _) => self.dispatch(&req),
        };
        self.send(reply(req.id, answer))
    }

    /// Starts a bounded check on a worker thread (`collc/check`, or the command
    /// `collc.check` with the document's URI as its argument).
    fn start_check(&mut self, req: &Request) -> Result<(), (ErrorCode, String)> {
        let p: check::Params = if req.method == check::METHOD {
            params(req)?
        } else {
            let c: lsp_types::ExecuteCommandParams = params(req)?;
            let uri = c.arguments.first().cloned().unwrap_or_default();
            if c.command != check::COMMAND {
                return Err((
                    ErrorCode::InvalidParams,
                    format!("unknown command `{}`", c.command),
                ));
            }
            let token = c.work_done_progress_params.work_done_token;
            serde_json::from_value(serde_json::json!({
                "textDocument": { "uri": uri }, "workDoneToken": token,
            }))
            .map_err(|e| (ErrorCode::InvalidParams, format!("`{}`: {e}", req.method)))?
        };
        let uri = p.text_document.uri;
        let Some(text) = self.docs.get(&uri).cloned() else {
            return Err((
                ErrorCode::InvalidParams,
                format!("`{}` is not open", uri.as_str()),
            ));
        };
        let token = p.work_done_token.or_else(|| self.create_token());
        let state = Arc::new(AtomicU8::new(check::State::RUNNING));
        let stop = collc_sim::StopFlag::default();
        self.jobs.retain(|_, c| Arc::strong_count(&c.state) > 1);
        self.jobs.insert(
            req.id.clone(),
            check::Handle {
                state: Arc::clone(&state),
                stop: Arc::clone(&stop),
            },
        );
        let edits = self.edits_of(&uri);
        let job = check::Job {
            id: req.id.clone(),
            text,
            version: self.versions.get(&uri).copied(),
            uri,
            token,
            budget: std::time::Duration::from_millis(
                p.budget_ms
                    .unwrap_or(collc_verifier::planning::TABLE.bounded_budget_ms),
            ),
            max_ranks: p.max_ranks.unwrap_or(check::MAX_RANKS),
            state,
            stop,
            edits_then: edits.load(Ordering::SeqCst),
            edits,
        };
        let out = self.conn.sender.clone();
        spawn(move || job.run(&out));
        Ok(())
    }

    /// A new progress token, announced with `window/workDoneProgress/create`, when
    /// the client accepts them.
    fn create_token(&mut self) -> Option<NumberOrString> {
        if !self.progress {
            return None;
        }
        self.tokens += 1;
        let token = NumberOrString::String(format!("collc-check-{}", self.tokens));
        let create = Request::new(
            RequestId::from(format!("collc-progress-{}", self.tokens)),
            request::WorkDoneProgressCreate::METHOD.to_string(),
            lsp_types::WorkDoneProgressCreateParams {
                token: token.clone(),
            },
        );
        self.send(create).then_some(token)
    }

    /// The edit counter of a document.
    fn edits_of(&mut self, uri: &Uri) -> Arc<AtomicU64> {
        Arc::clone(self.edits.entry(uri.clone()).or_default())
    }

    /// Counts an edit (open, change, save with text, close) of a document.
    fn edited(&mut self, uri: &Uri) {
        self.edits_of(uri).fetch_add(1, Ordering::SeqCst);
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
            request::CodeActionRequest::METHOD => {
                let p: lsp_types::CodeActionParams = params(req)?;
                to_json(crate::actions::quick_fixes(&p))
            }
            request::HoverRequest::METHOD => {
                let p: lsp_types::HoverParams = params(req)?;
                let at = p.text_document_position_params;
                let hover = self.docs.get(&at.text_document.uri).and_then(|text| {
                    let idx = LineIndex::new(text);
                    let token = names::ident_at(text, idx.offset(at.position))?;
                    let value = crate::hover::at(text, token)?;
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
        let p = collc_spec::front(&collc_verifier::Ranges, text).protocol?;
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
                self.edited(&uri);
                self.docs.insert(uri.clone(), p.text_document.text);
                self.versions.insert(uri.clone(), p.text_document.version);
                self.publish(&uri)
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
                self.edited(&uri);
                self.docs.insert(uri.clone(), change.text);
                self.versions.insert(uri.clone(), p.text_document.version);
                !diagnose || self.publish(&uri)
            }
            notification::DidSaveTextDocument::METHOD => {
                let Some(p) = parsed::<lsp_types::DidSaveTextDocumentParams>(n) else {
                    return true;
                };
                let uri = p.text_document.uri;
                self.edited(&uri);
                if let Some(text) = p.text {
                    self.docs.insert(uri.clone(), text);
                }
                self.verify_on_save(&uri);
                true
            }
            notification::DidCloseTextDocument::METHOD => {
                let Some(p) = parsed::<lsp_types::DidCloseTextDocumentParams>(n) else {
                    return true;
                };
                let uri = p.text_document.uri;
                self.edited(&uri);
                self.docs.remove(&uri);
                self.versions.remove(&uri);
                self.send(diagnostics::publication(&uri, "", &[], None))
            }
            notification::Cancel::METHOD => {
                let Some(p) = parsed::<lsp_types::CancelParams>(n) else {
                    return true;
                };
                let id = match p.id {
                    NumberOrString::Number(i) => RequestId::from(i),
                    NumberOrString::String(s) => RequestId::from(s),
                };
                match self.jobs.remove(&id) {
                    Some(h) if check::State::claim(&h.state, check::State::CANCELLED) => {
                        // The worker's explorer stops within a few hundred states.
                        h.stop.store(true, Ordering::SeqCst);
                        let cancelled = (ErrorCode::RequestCanceled, "cancelled".to_string());
                        self.send(reply(id, Err(cancelled)))
                    }
                    _ => true,
                }
            }
            _ => true,
        }
    }

    /// Publishes the front end's diagnostics of an open document.
    fn publish(&self, uri: &Uri) -> bool {
        let Some(text) = self.docs.get(uri) else {
            return true;
        };
        let found = diagnostics::of_text(text, false, uri.as_str());
        let version = self.versions.get(uri).copied();
        self.send(diagnostics::publication(uri, text, &found, version))
    }

    /// Publishes the front end's and the symbolic verifier's diagnostics of an open
    /// document, computed on a worker thread; not when the document changed
    /// meanwhile.
    fn verify_on_save(&mut self, uri: &Uri) {
        let Some(text) = self.docs.get(uri).cloned() else {
            return;
        };
        let version = self.versions.get(uri).copied();
        let edits = self.edits_of(uri);
        let then = edits.load(Ordering::SeqCst);
        let out = self.conn.sender.clone();
        let uri = uri.clone();
        spawn(move || {
            let found = diagnostics::of_text(&text, true, uri.as_str());
            if edits.load(Ordering::SeqCst) == then {
                let _ = out.send(diagnostics::publication(&uri, &text, &found, version).into());
            }
        });
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
