//! How `collc run --trace` prints the conformance of a traced run: one line when the trace
//! conforms, else one diagnostic per finding, at the statement the IR prescribes (rank,
//! block, call and the recorded event in the message).

use crate::output::Output;
use crate::render::Style;
use collc_backend::layout::Abi;
use collc_backend::trace::check::Who;
use collc_backend::trace::expect::Want;
use collc_backend::trace::{Conformance, Event, EventKind, Expected, Finding, Place};
use collc_grammar::{Diagnostic, Source};
use collc_spec::ir::{NotifyOp, Protocol};

fn who(w: Who) -> String {
    match w.1 {
        Some(b) => format!("rank {} block {}", w.0, b),
        None => format!("rank {}", w.0),
    }
}

fn place(abi: &Abi, pl: Place) -> String {
    let name = usize::try_from(pl.buffer)
        .ok()
        .and_then(|b| abi.buffers.get(b))
        .map_or("?", |b| b.name.as_str());
    let inst = if pl.instance != 0 {
        format!(" (call {}'s instance)", pl.instance)
    } else {
        String::new()
    };
    format!("{name}[{}] on rank {}{inst}", pl.index, pl.owner)
}

fn op_text(op: NotifyOp, value: i64) -> String {
    match op {
        NotifyOp::AtomicAdd if value < 0 => format!("-= {}", -value),
        NotifyOp::AtomicAdd => format!("+= {value}"),
        NotifyOp::Set => format!("= {value}"),
    }
}

/// The recorded event, in words.
fn event(abi: &Abi, e: &Event) -> String {
    let at = place(abi, e.place);
    let what = match e.kind {
        EventKind::Notify {
            op,
            value,
            before,
            seq,
        } => format!(
            "notify {at} {} (cell was {before}; notify #{seq} on that rank)",
            op_text(op, value)
        ),
        EventKind::Wait {
            cmp,
            threshold,
            seen,
            seq,
        } => format!(
            "wait {at} {} {threshold}, passed with {seen} (after notify #{seq} on that rank)",
            cmp.as_str()
        ),
        EventKind::Blocked {
            cmp,
            threshold,
            seen,
        } => format!(
            "wait {at} {} {threshold}, blocked at {seen} when the run aborted",
            cmp.as_str()
        ),
        EventKind::Fence => "fence".to_string(),
        EventKind::Get { len } => format!("get of {len} element(s) at {at}"),
        EventKind::Put { len } => format!("put of {len} element(s) at {at}"),
    };
    format!("{what} in call {}", e.call)
}

/// What the IR prescribes, in words.
fn want(abi: &Abi, e: &Expected) -> String {
    let at = place(abi, e.place);
    let what = match e.want {
        Want::Notify { op, value } => format!("notify {at} {}", op_text(op, value)),
        Want::Wait { cmp, threshold } => {
            format!("wait {at} {} {threshold}", cmp.as_str())
        }
        Want::Fence => "fence".to_string(),
        Want::Get { len } => format!("get of {len} element(s) at {at}"),
        Want::Put { len } => format!("put of {len} element(s) at {at}"),
    };
    let part = if e.stmt.epilogue { "epilogue" } else { "body" };
    format!("{what} in call {} ({part})", e.call)
}

fn diagnostic(abi: &Abi, f: &Finding) -> Diagnostic {
    let msg = message(abi, f);
    let d = match f {
        Finding::Overflow { .. } => {
            Diagnostic::error("trace::overflow", msg).with_help("raise --trace-capacity")
        }
        Finding::Mismatch { .. } => Diagnostic::error("trace::mismatch", msg),
        Finding::Extra { .. } => Diagnostic::error("trace::extra", msg),
        Finding::Missing { .. } => Diagnostic::error("trace::missing", msg),
        Finding::Blocked { .. } => Diagnostic::warning("trace::blocked", msg),
        Finding::Sequence { .. } => Diagnostic::error("trace::sequence", msg),
        Finding::Value { .. } => Diagnostic::error("trace::value", msg),
        Finding::Cycle { .. } => Diagnostic::error("trace::cycle", msg),
    };
    let primary = match f {
        Finding::Mismatch { expected, .. } => Some((expected, "the statement the IR runs here")),
        Finding::Missing { expected, .. } => Some((expected, "never performed")),
        Finding::Blocked { expected, .. } => Some((expected, "blocked here")),
        Finding::Value { expected, .. } => Some((expected, "this statement")),
        Finding::Cycle { expected, .. } => Some((expected, "on the cycle")),
        Finding::Overflow { .. } | Finding::Extra { .. } | Finding::Sequence { .. } => None,
    };
    match primary {
        Some((e, label)) => d.with_primary(e.stmt.span, label),
        None => d,
    }
}

/// What a conformance finding says.
fn message(abi: &Abi, f: &Finding) -> String {
    match f {
        Finding::Overflow {
            who: w,
            recorded,
            dropped,
        } => format!(
            "the trace of {} overflowed: {recorded} event(s) recorded, {dropped} dropped; the run's trace is incomplete and was not fully checked",
            who(*w)
        ),
        Finding::Mismatch {
            who: w,
            position,
            expected,
            observed,
        } => format!(
            "{}, event #{position}: the run did {}, but the IR prescribes {}",
            who(*w),
            event(abi, observed),
            want(abi, expected)
        ),
        Finding::Extra {
            who: w,
            position,
            observed,
        } => format!(
            "{}, event #{position}: the run did {}, which no statement of the IR prescribes (it had finished every call)",
            who(*w),
            event(abi, observed)
        ),
        Finding::Missing {
            who: w,
            position,
            expected,
        } => format!(
            "{}, event #{position}: the run completed without {}",
            who(*w),
            want(abi, expected)
        ),
        Finding::Blocked {
            who: w,
            position,
            expected,
            seen,
        } => format!(
            "{}, event #{position}: blocked in {} (the cell held {seen}) when the run aborted; every event before it conforms",
            who(*w),
            want(abi, expected)
        ),
        Finding::Sequence { owner, seq } => format!(
            "the notifies on rank {owner}'s cells are not numbered 1..N (notify #{seq} is missing or repeated): a write the trace does not hold"
        ),
        Finding::Value {
            who: w,
            position,
            observed,
            replayed,
            ..
        } => format!(
            "{}, event #{position}: no schedule of the IR explains {}: replaying the IR's notifies in the recorded order, the cell holds {replayed} there",
            who(*w),
            event(abi, observed)
        ),
        Finding::Cycle {
            who: w, position, ..
        } => format!(
            "{}, event #{position}: the recorded orders are cyclic (program order, notify order, the waits between notifies): no interleaving has them all",
            who(*w)
        ),
    }
}

/// The conformance of a traced run.
pub fn conformance(
    file: &str,
    p: &Protocol,
    source: &Source,
    c: &Conformance,
    style: Style,
    out: &mut Output,
) {
    let abi = Abi::of(p);
    if c.conforms() {
        out.out(format!(
            "collc run {file}: trace conforms to the IR: {} event(s) of {} thread(s) as prescribed; {} notify/wait event(s) in one schedule the semantics allows",
            c.events, c.threads, c.scheduled
        ));
    } else {
        out.err(format!(
            "collc run {file}: trace does NOT conform to the IR ({} finding(s))",
            c.findings.len()
        ));
    }
    let diags: Vec<Diagnostic> = c.findings.iter().map(|f| diagnostic(&abi, f)).collect();
    out.diagnostics(source, &diags, style);
}
