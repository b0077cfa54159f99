//! The front end's rules for the call index and `monotonic` signals (LANGUAGE.md §16),
//! checked on the lowered IR:
//!
//! - `type::monotonic-reset`: a monotonic signal is never written in the epilogue (its
//!   cells are epoch counters; the thresholds grow instead of the cells returning to 0);
//! - `type::monotonic-decrease`: a monotonic signal is only ever added to (`+=`), never
//!   `-=` or `=`;
//! - `type::call-index-per-call`: a `per call` window or value signal is a fresh buffer in
//!   every call, so selecting a part of it by the call index (`buf[call % 2]`) means the
//!   buffer was meant to be `reused`.

use crate::ir::*;
use collc_grammar::{Diagnostic, Span};

/// Every violation of the rules above.
pub(super) fn check(p: &Protocol) -> Vec<Diagnostic> {
    let mut c = Checker {
        p,
        dep: vec![false; p.vars.len()],
        out: Vec::new(),
    };
    if let Some(v) = p.call {
        c.dep[v.index()] = true;
    }
    for (v, var) in p.vars.iter().enumerate() {
        if let VarKind::Derived(e) = &var.kind {
            c.dep[v] = c.reads_call(e);
        }
    }
    c.block(&p.body, false);
    c.block(&p.epilogue, true);
    c.out
}

struct Checker<'a> {
    p: &'a Protocol,
    /// Variables whose value depends on the call index.
    dep: Vec<bool>,
    out: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn reads_call(&self, e: &Expr) -> bool {
        let mut r = false;
        e.for_each_var(&mut |v| r |= self.dep.get(v.index()).copied().unwrap_or(false));
        r
    }

    fn block(&mut self, b: &Block, epilogue: bool) {
        crate::visit::each_stmt(b, &mut |s| self.stmt(s, epilogue));
    }

    /// One statement, not the statements nested in it ([`Checker::block`] visits those).
    fn stmt(&mut self, s: &Stmt, epilogue: bool) {
        match &s.kind {
            StmtKind::Let { var, value } => {
                if let Some(d) = self.dep.get_mut(var.index()) {
                    *d = false;
                }
                let r = self.reads_call(value);
                self.dep[var.index()] = r;
            }
            StmtKind::Notify {
                signal,
                index,
                op,
                value,
                ..
            } => {
                self.signal_index(*signal, index, s.span);
                if self.p.signal_monotonic(*signal) {
                    self.monotonic_write(*signal, *op, value, s.span, epilogue);
                }
            }
            StmtKind::Wait { signal, index, .. } => self.signal_index(*signal, index, s.span),
            StmtKind::Copy { dst, src } | StmtKind::Get { dst, src, .. } => {
                self.region(dst, s.span);
                self.region(src, s.span);
            }
            StmtKind::Put { dst, src, .. } | StmtKind::Reduce { dst, src, .. } => {
                self.region(dst, s.span);
                self.region(src, s.span);
            }
            StmtKind::For { .. }
            | StmtKind::If { .. }
            | StmtKind::Fence
            | StmtKind::Return { .. } => {}
        }
    }

    fn monotonic_write(
        &mut self,
        sig: SignalId,
        op: NotifyOp,
        value: &Expr,
        span: Span,
        epi: bool,
    ) {
        let name = &self.p.signals[sig].name;
        if epi {
            self.out.push(
                Diagnostic::error(
                    "type::monotonic-reset",
                    format!("`{name}` is monotonic: it is never reset in the epilogue"),
                )
                .with_primary(span, "writes a monotonic signal in the epilogue")
                .with_label(self.p.signals[sig].span, "declared `monotonic` here")
                .with_help(format!(
                    "remove this notify and let every wait on `{name}` grow its threshold with \
                     the call index (e.g. `wait {name}[..] >= call + 1;`); or drop `monotonic` \
                     to keep a self-clearing signal with its reset"
                )),
            );
            return;
        }
        let negative = matches!(value, Expr::Neg(_)) || value.as_const().is_some_and(|c| c < 0);
        if op == NotifyOp::Set || negative {
            self.out.push(
                Diagnostic::error(
                    "type::monotonic-decrease",
                    format!("`{name}` is monotonic: it is only ever added to"),
                )
                .with_primary(
                    span,
                    if op == NotifyOp::Set {
                        "sets a monotonic signal"
                    } else {
                        "takes credits off a monotonic signal"
                    },
                )
                .with_label(self.p.signals[sig].span, "declared `monotonic` here")
                .with_help(
                    "write `notify CELL @ q += v;` with v >= 0; for a flag written with `=`, \
                     declare the signal `as value`",
                ),
            );
        }
    }

    fn signal_index(&mut self, sig: SignalId, index: &[Expr], span: Span) {
        if self.p.signal_per_call(sig) && index.iter().any(|e| self.reads_call(e)) {
            let name = self.p.signals[sig].name.clone();
            let decl = self.p.signals[sig].span;
            self.per_call(&name, decl, span);
        }
    }

    fn region(&mut self, r: &Region, span: Span) {
        if let BufferRef::Window(w) = r.buffer {
            if self.p.window_per_call(w) && r.index.iter().any(|e| self.reads_call(e)) {
                let name = self.p.windows[w].name.clone();
                let decl = self.p.windows[w].span;
                self.per_call(&name, decl, span);
            }
        }
    }

    fn per_call(&mut self, name: &str, decl: Span, span: Span) {
        self.out.push(
            Diagnostic::error(
                "type::call-index-per-call",
                format!("`{name}` is `per call`, yet indexed by the call index"),
            )
            .with_primary(span, "selects a part of a fresh buffer by the call number")
            .with_label(decl, "declared `per call` here")
            .with_help(format!(
                "a `per call` buffer is new in every call, so nothing of an earlier call is in \
                 it; declare `{name}` `reused` to alternate its parts across calls (e.g. \
                 `[2][n] reused` indexed by `call % 2`), or index it without `call`"
            )),
        );
    }
}
