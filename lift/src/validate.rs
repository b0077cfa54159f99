//! Static translation validation: the protocol recovered from emitted C++ against the IR it
//! was emitted from.
//!
//! The recovered body and epilogue are printed as `.coll` under the IR's own declarations,
//! checked and lowered by the front end, and compared statement by statement with the IR
//! (names, cells, targets, ops, values, thresholds, comparisons, regions, loop ranges,
//! guards, lets, fences), modulo what the backend documents (docs/lift.md, "Orderings"):
//! on pto::comm every notify's publish (in front of the notify, or of a loop nest that only
//! notifies) is a `pipe_barrier`, the instruction of a `fence`, so the IR is compared with
//! a fence there; two fences in a row print one; `for v in ranks` and `for v in 0..P`
//! print the same loop; on MPI a fence is program order and prints nothing; a data move's
//! source slice is compared by its start (the code moves the destination's length).

use crate::layout::{norm, BufKind, Dialect};
use crate::text::{Out, Ranks};
use collc_grammar::{Diagnostic, Source};
use collc_spec::ir::{Block, Protocol, Stmt, StmtKind, Ty};
use collc_spec::print::{expr_to_string, stmt_head, Style};

/// What a validation compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validated {
    /// Statements compared (body and epilogue, nested ones included).
    pub statements: usize,
}

/// Checks that `emitted` (C++ `collc emit` produced from `p`) performs exactly `p`'s
/// protocol. `source` (the `.coll` file) names the IR's lines in mismatches.
pub fn validate(
    p: &collc_spec::Validated,
    emitted: &str,
    source: Option<&Source>,
) -> Result<Validated, Vec<Diagnostic>> {
    let cpp = crate::cpp::parse(emitted).map_err(|d| vec![d])?;
    let dims = |name: &str, kind: BufKind| -> Result<(String, Vec<String>), Diagnostic> {
        let found = match kind {
            BufKind::Signal => p.signals.iter().find(|s| s.name == name).map(|s| &s.dims),
            BufKind::Window => p.windows.iter().find(|s| s.name == name).map(|s| &s.dims),
            BufKind::Tile | BufKind::Stage => {
                p.tiles.iter().find(|s| s.name == name).map(|s| &s.dims)
            }
        };
        let d = found.ok_or_else(|| {
            Diagnostic::error(
                "validate::unknown-buffer",
                format!("the emitted code declares `{name}`, which the protocol does not"),
            )
        })?;
        Ok((
            name.to_string(),
            d.iter().map(|e| norm(&expr_to_string(p, e))).collect(),
        ))
    };
    let (o, dialect) =
        crate::read(&cpp, &dims, &crate::pypto::Given::default()).map_err(|d| vec![d])?;
    // The declarations of the instance emitted (an `op` parameter fixed at its operator,
    // which the code's reductions name).
    let printed = collc_spec::print::print(&p.op_instance());
    let mut out = Out::default();
    for l in printed.lines() {
        if l.trim() == "body {" {
            break;
        }
        out.line(0, l, 0);
    }
    let mut ranks = Ranks::default();
    for v in &p.vars {
        if v.ty == Ty::Rank
            && !matches!(
                v.kind,
                collc_spec::ir::VarKind::Loop | collc_spec::ir::VarKind::Local
            )
        {
            ranks.known.insert(v.name.clone());
        }
    }
    crate::print_blocks(&mut out, &o, ranks);
    let checked = collc_spec::lowered(&out.text);
    let lifted = match checked.protocol {
        Some(l) if !checked.diagnostics.iter().any(|d| d.is_error()) => l,
        _ => {
            return Err(crate::recovered_errors(
                checked.diagnostics,
                &out,
                "validate::unreadable",
            ))
        }
    };
    compare(p, &lifted, dialect, Some(&out), source)
}

/// Compares a protocol with one recovered from code emitted for `dialect` (the module
/// comment says modulo what). `out` maps the recovered text's lines to C++ lines.
pub fn compare(
    p: &Protocol,
    lifted: &Protocol,
    dialect: Dialect,
    out: Option<&Out>,
    source: Option<&Source>,
) -> Result<Validated, Vec<Diagnostic>> {
    let cx = Cx {
        p,
        l: lifted,
        dialect,
        out,
        source,
    };
    let mut n = 0;
    let mut errs = Vec::new();
    // `1 << k` and `pow2(k)` emit the same C++, read back as `pow2(k)`.
    let (body, epilogue) = (
        crate::canon::pow2_block(&p.body),
        crate::canon::pow2_block(&p.epilogue),
    );
    cx.block(&body, &lifted.body, false, "body", &mut n, &mut errs);
    cx.block(
        &epilogue,
        &lifted.epilogue,
        false,
        "epilogue",
        &mut n,
        &mut errs,
    );
    if errs.is_empty() {
        Ok(Validated { statements: n })
    } else {
        Err(errs)
    }
}

/// The 1-based line of byte `pos`.
fn line_at(text: &str, pos: usize) -> usize {
    1 + text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
}

struct Cx<'a> {
    p: &'a Protocol,
    l: &'a Protocol,
    dialect: Dialect,
    out: Option<&'a Out>,
    source: Option<&'a Source>,
}

/// A statement's own text (a loop's or an if's head only), in the form validation
/// compares ([`Style::Validate`]).
fn head(p: &Protocol, s: &Stmt) -> String {
    stmt_head(p, &s.kind, Style::Validate)
}

fn only_notifies(b: &Block) -> bool {
    !b.stmts.is_empty()
        && b.stmts.iter().all(|s| match &s.kind {
            StmtKind::Let { .. } => true,
            StmtKind::For { body, .. } => only_notifies(body),
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                only_notifies(then_block)
                    && else_block
                        .as_ref()
                        .is_none_or(|e| e.stmts.is_empty() || only_notifies(e))
            }
            k => matches!(k, StmtKind::Notify { .. }),
        })
        && b.stmts
            .iter()
            .any(|s| !matches!(s.kind, StmtKind::Let { .. }))
}

impl Cx<'_> {
    /// The IR's statements as the dialect prints them (see the module comment); `None` is
    /// the fence of a publish. `hoisted`: inside a loop nest that only notifies.
    fn expected<'b>(&self, b: &'b Block, hoisted: bool) -> Vec<Option<&'b Stmt>> {
        let mut out: Vec<Option<&Stmt>> = Vec::new();
        for s in &b.stmts {
            let fence_last = matches!(out.last(), Some(None))
                || matches!(out.last(), Some(Some(x)) if matches!(x.kind, StmtKind::Fence));
            let publish = match &s.kind {
                StmtKind::Notify { .. } => true,
                StmtKind::For { body, .. } => only_notifies(body),
                _ => false,
            };
            let is_fence = matches!(s.kind, StmtKind::Fence);
            if is_fence && (self.dialect == Dialect::Mpi || fence_last) {
                continue;
            }
            if publish && self.dialect == Dialect::Pto && !hoisted && !fence_last {
                out.push(None);
            }
            out.push(Some(s));
        }
        out
    }

    fn ir_at(&self, s: &Stmt) -> String {
        match self.source {
            Some(src) => {
                let line = src.text[..s.span.start.min(src.text.len())]
                    .lines()
                    .count()
                    .max(1);
                format!("{}:{line}", src.name)
            }
            None => "the IR".into(),
        }
    }

    fn cpp_line(&self, s: &Stmt) -> usize {
        let Some(out) = self.out else { return 0 };
        let line = line_at(&out.text, s.span.start) - 1;
        out.lines.get(line).copied().unwrap_or(0)
    }

    fn block(
        &self,
        a: &Block,
        b: &Block,
        hoisted: bool,
        what: &str,
        n: &mut usize,
        errs: &mut Vec<Diagnostic>,
    ) {
        let xs = self.expected(a, hoisted);
        let ys: Vec<&Stmt> = b.stmts.iter().collect();
        for i in 0..xs.len().max(ys.len()) {
            match (xs.get(i), ys.get(i)) {
                (Some(None), Some(y)) => {
                    *n += 1;
                    let hy = head(self.l, y);
                    if hy != "fence;" {
                        errs.push(self.mismatch(
                            None,
                            y,
                            "fence; (the publish before a notify)",
                            &hy,
                        ));
                        return;
                    }
                }
                (Some(Some(x)), Some(y)) => {
                    *n += 1;
                    let (hx, hy) = (head(self.p, x), head(self.l, y));
                    if hx != hy {
                        errs.push(self.mismatch(Some(x), y, &hx, &hy));
                        return;
                    }
                    match (&x.kind, &y.kind) {
                        (StmtKind::For { body: bx, .. }, StmtKind::For { body: by, .. }) => {
                            let h = hoisted || only_notifies(bx);
                            self.block(bx, by, h, what, n, errs)
                        }
                        (
                            StmtKind::If {
                                then_block: tx,
                                else_block: ex,
                                ..
                            },
                            StmtKind::If {
                                then_block: ty,
                                else_block: ey,
                                ..
                            },
                        ) => {
                            self.block(tx, ty, hoisted, what, n, errs);
                            if let (Some(ex), Some(ey)) = (ex, ey) {
                                self.block(ex, ey, hoisted, what, n, errs);
                            }
                        }
                        _ => {}
                    }
                    if !errs.is_empty() {
                        return;
                    }
                }
                (Some(x), None) => {
                    let (h, at) = match x {
                        Some(x) => (head(self.p, x), self.ir_at(x)),
                        None => (
                            "fence;".to_string(),
                            "the publish before a notify".to_string(),
                        ),
                    };
                    errs.push(Diagnostic::error(
                        "validate::missing",
                        format!(
                            "`{h}` ({at}) is missing from the emitted {what}: nothing in the C++ performs it"
                        ),
                    ));
                    return;
                }
                (None, Some(y)) => {
                    errs.push(Diagnostic::error(
                        "validate::extra",
                        format!(
                            "emitted line {}: the C++ performs `{}`, which the protocol's {what} does not have",
                            self.cpp_line(y),
                            head(self.l, y)
                        ),
                    ));
                    return;
                }
                (None, None) => return,
            }
        }
    }

    fn mismatch(&self, x: Option<&Stmt>, y: &Stmt, hx: &str, hy: &str) -> Diagnostic {
        let at = x.map_or_else(|| "inserted by the backend".to_string(), |x| self.ir_at(x));
        Diagnostic::error(
            "validate::mismatch",
            format!(
                "`{hx}` ({at}) is emitted as `{hy}` (emitted line {})",
                self.cpp_line(y)
            ),
        )
        .with_help("the generated C++ does not perform the protocol's statement: a backend bug")
    }
}
