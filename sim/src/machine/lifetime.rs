//! The declared lifetimes of windows and value signals (`per call` | `reused`,
//! LANGUAGE.md §5.8.1) as findings:
//!
//! - `sim::stale-value`: a read of a value signal (a wait passing on it, or the
//!   host reading it as the collective's output) observes a value written for
//!   another call — the previous call's value, or a fast peer's next-call value
//!   that overwrote one not yet consumed. Value cells carry their last writer's
//!   provenance ([`Origin`]) for this, as credit cells carry credit units.
//! - `sim::uninit-read`: a `per call` window or value signal is read in a call
//!   before anything of that call wrote it (the host's staging of the
//!   collective's input, a put/copy/reduce, a notify): the protocol assumes the
//!   previous call's contents, which a fresh buffer does not have.
//! - the help of a cross-call `sim::data-race` or `sim::wrong-result` on a
//!   `reused` window, naming the window and the two fixes.

use super::data::Loc;
use super::{fmt_call, Machine, Origin, State, CONSUME};
use crate::machine::Outcome;
use crate::report::Finding;
use crate::value::{Val, FOREIGN_OP, OPS};
use collc_grammar::Span;
use collc_spec::ir::{BufferRef, Id, Semantics, SignalId, WindowId};

/// The fix of a cross-call race on a `reused` buffer, for the help of a finding.
fn reuse_fix(name: &str, what: &str) -> String {
    format!(
        "`{name}` is declared `reused`: one {what} serves back-to-back calls, so a rank that starts the next call can overwrite it while a peer still uses this call's data. Either order the next call after every peer is done with it — a read-complete round, as in examples/broadcast_read_complete.coll — or declare `{name}` `per call` if the caller really hands in a fresh buffer for each call"
    )
}

impl Machine<'_> {
    /// The signal a cell belongs to.
    pub(super) fn signal_of(&self, cell: usize) -> SignalId {
        let local = cell % self.code.cells_per_rank.max(1);
        self.code
            .signal_base
            .iter()
            .rposition(|b| *b <= local)
            .map_or(Id::new(0), Id::new)
    }

    /// Checks what a read of the value cell `cell` observed: `value`, last written
    /// by `origin`, read in `call` by `reader` (words that end before the cell's name).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn observe_value(
        &self,
        cell: usize,
        value: i64,
        origin: Option<Origin>,
        call: u16,
        reader: &dyn Fn() -> String,
        stmt: Option<u32>,
        out: &mut Outcome,
    ) {
        let sig = self.signal_of(cell);
        let name = &self.p.signals[sig].name;
        let f = match origin {
            Some(o) if o.call != call => {
                let when = if o.call < call {
                    "an earlier call's value: nothing of this call wrote the cell before it was read"
                } else {
                    "a later call's value: a fast peer overwrote this call's value before it was read"
                };
                let mut f = Finding::new(
                    "sim::stale-value",
                    format!(
                        "{} {} = {value}, written by {} in call {} (`{}`): {when}",
                        reader(),
                        self.cell_name(cell),
                        self.proc_name(o.writer as usize),
                        fmt_call(o.call),
                        self.code.stmts[o.stmt as usize].text
                    ),
                    stmt.and_then(|x| self.stmt_span(x))
                        .or(self.stmt_span(o.stmt)),
                );
                if let Some(sp) = self.stmt_span(o.stmt) {
                    f.related.push(sp);
                }
                f.help = Some(if o.call < call {
                    format!(
                        "`{name}` is declared `reused`: its cells still hold the previous call's values when a call starts, so a read must be ordered after this call's write (by a wait on a credit the writer notifies after writing it). A flag re-armed every call is a credit counter (`+= 1`, reset with `-= 1` in the epilogue, as in examples/barrier.coll); or declare `{name}` `per call` if the caller really hands in a fresh buffer for each call"
                    )
                } else {
                    reuse_fix(name, "signal buffer")
                });
                f
            }
            None if self.p.signal_per_call(sig) => {
                let mut f = Finding::new(
                    "sim::uninit-read",
                    format!(
                        "{} {} = {value} before anything of call {} wrote it",
                        reader(),
                        self.cell_name(cell),
                        fmt_call(call)
                    ),
                    stmt.and_then(|x| self.stmt_span(x)),
                );
                f.help = Some(uninit_help(name));
                f
            }
            _ => return,
        };
        self.mark_last(out, &f.code);
        out.findings.push(f);
    }

    /// The host of rank `r` reads the value signals that are part of `call`'s output
    /// (all_to_all_v's receive counts): each must hold a value written in that call.
    pub(super) fn observe_outputs(&self, s: &State, r: usize, call: u16, out: &mut Outcome) {
        let Semantics::AllToAllV { recv_counts, .. } = &self.p.semantics else {
            return;
        };
        let n: i64 = self.code.signal_dims[recv_counts.index()].iter().product();
        let reader = || format!("rank {r}'s host reads call {}'s output", fmt_call(call));
        for j in 0..n.max(0) as usize {
            let c = self.cell_at(r, *recv_counts, j, call);
            if let Some(cell) = s.cells.get(c) {
                self.observe_value(c, cell.value, cell.origin, call, &reader, None, out);
            }
        }
    }

    /// A read of a `per call` window by a statement of `p` (not the host's read of the
    /// output, which the semantics check covers): every element must have been written
    /// in this call. In relaxed mode a region another process of this call has a
    /// buffered write to is left to the race check (the write is not visible yet).
    pub(super) fn check_fresh_read(
        &self,
        s: &State,
        p: usize,
        l: &Loc,
        stmt: u32,
        out: &mut Outcome,
    ) {
        let BufferRef::Window(w) = l.buf else {
            return;
        };
        if stmt == CONSUME || !self.p.window_per_call(w) {
            return;
        }
        let call = s.procs[p].call;
        let m = self.mi(l.rank, w, call);
        let mut pos = l.lo;
        let mut unwritten = None;
        for (n, rec) in s.mem[m].acc.read(l.lo, l.hi) {
            if rec.write.is_none() {
                unwritten = Some((pos, pos + n));
                break;
            }
            pos += n;
        }
        let Some((a, b)) = unwritten else {
            return;
        };
        let buffered = s.procs.iter().any(|q| {
            q.call == call
                && q.pending
                    .iter()
                    .any(|x| x.writes(false, l.rank, w.index(), a, b))
        });
        if buffered {
            return;
        }
        let name = &self.p.windows[w].name;
        let mut f = Finding::new(
            "sim::uninit-read",
            format!(
                "{} (call {}) reads rank {}'s {name}[{a}..{b}] ({}) before anything of call {} wrote it: `{name}` is declared `per call`, a fresh buffer for each call",
                self.proc_name(p),
                fmt_call(call),
                l.rank,
                self.stmt_desc(stmt),
                fmt_call(call)
            ),
            self.stmt_span(stmt),
        );
        f.help = Some(uninit_help(name));
        self.mark_last(out, "sim::uninit-read");
        out.findings.push(f);
    }

    /// The help of a data race between accesses of different calls to window `w`
    /// (none when `w` is `per call`: its calls have separate instances).
    pub(super) fn race_help(&self, w: WindowId, calls: (u16, u16)) -> Option<String> {
        (calls.0 != calls.1 && !self.p.window_per_call(w))
            .then(|| reuse_fix(&self.p.windows[w].name, "window"))
    }

    /// Where to blame a wrong output `got` in rank `r`'s `w[lo..hi]` after `call`, and how
    /// to fix it: the statement that last wrote those elements, and, when they hold
    /// another call's data, the `reused` windows that carried it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn wrong_result_hint(
        &self,
        s: &State,
        r: usize,
        w: WindowId,
        lo: u64,
        hi: u64,
        call: u16,
        got: &Val,
    ) -> (Option<Span>, Option<String>) {
        let m = self.mi(r, w, call);
        let span = s.mem[m]
            .acc
            .read(lo, hi)
            .iter()
            .find_map(|(_, rec)| rec.write.and_then(|a| self.stmt_span(a.what)));
        let other_call = got.0.iter().any(|c| c.call != call && c.win < FOREIGN_OP);
        if let Some(c) = got.0.iter().find(|c| c.win == FOREIGN_OP) {
            let op = OPS.get(c.rank as usize).map_or("?", |o| o.as_str());
            return (
                span,
                Some({
                    let h = super::data::header_op(self.p).map_or("?", |o| o.as_str());
                    format!(
                        "the header declares `{}({h}, ...)`: reduce with `reduce {h}` where this protocol reduces with `{op}`",
                        self.p.semantics.kind()
                    )
                }),
            );
        }
        let reused: Vec<&str> = Id::range(self.nwin)
            .filter(|x| !self.p.window_per_call(*x))
            .map(|x| self.p.windows[x].name.as_str())
            .collect();
        let help = match reused.as_slice() {
            _ if !other_call => None,
            [] => None,
            [one] => Some(reuse_fix(one, "window")),
            many => Some(format!(
                "{}; the same holds for every window declared `reused` ({})",
                reuse_fix(many[0], "window"),
                many.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        let help = if !self.p.window_per_call(w) {
            help.map(|_| reuse_fix(&self.p.windows[w].name, "window"))
        } else {
            help
        };
        (span, help)
    }
}

/// The help of a `sim::uninit-read` on `name`.
fn uninit_help(name: &str) -> String {
    format!(
        "the protocol assumes `{name}` still holds the previous call's contents: declare it `reused` (one buffer for every call) if it does, or write it in this call (staged by the host as the collective's input, or by a put/copy/reduce/notify of this call) before reading it"
    )
}
