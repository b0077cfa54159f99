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
            collc_backend::cpp::cmp_sym(cmp)
        ),
        EventKind::Blocked {
            cmp,
            threshold,
            seen,
        } => format!(
            "wait {at} {} {threshold}, blocked at {seen} when the run aborted",
            collc_backend::cpp::cmp_sym(cmp)
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
            format!("wait {at} {} {threshold}", collc_backend::cpp::cmp_sym(cmp))
        }
        Want::Fence => "fence".to_string(),
        Want::Get { len } => format!("get of {len} element(s) at {at}"),
        Want::Put { len } => format!("put of {len} element(s) at {at}"),
    };
    let part = if e.stmt.epilogue { "epilogue" } else { "body" };
    format!("{what} in call {} ({part})", e.call)
}

fn diagnostic(abi: &Abi, f: &Finding) -> Diagnostic {
    match f {
        Finding::Overflow {
            who: w,
            recorded,
            dropped,
        } => Diagnostic::error(
            "trace::overflow",
            format!(
                "the trace of {} overflowed: {recorded} event(s) recorded, {dropped} dropped; the run's trace is incomplete and was not fully checked",
                who(*w)
            ),
        )
        .with_help("raise --trace-capacity"),
        Finding::Mismatch {
            who: w,
            position,
            expected,
            observed,
        } => Diagnostic::error(
            "trace::mismatch",
            format!(
                "{}, event #{position}: the run did {}, but the IR prescribes {}",
                who(*w),
                event(abi, observed),
                want(abi, expected)
            ),
        )
        .with_primary(expected.stmt.span, "the statement the IR runs here"),
        Finding::Extra {
            who: w,
            position,
            observed,
        } => Diagnostic::error(
            "trace::extra",
            format!(
                "{}, event #{position}: the run did {}, which no statement of the IR prescribes (it had finished every call)",
                who(*w),
                event(abi, observed)
            ),
        ),
        Finding::Missing {
            who: w,
            position,
            expected,
        } => Diagnostic::error(
            "trace::missing",
            format!(
                "{}, event #{position}: the run completed without {}",
                who(*w),
                want(abi, expected)
            ),
        )
        .with_primary(expected.stmt.span, "never performed"),
        Finding::Blocked {
            who: w,
            position,
            expected,
            seen,
        } => Diagnostic::warning(
            "trace::blocked",
            format!(
                "{}, event #{position}: blocked in {} (the cell held {seen}) when the run aborted; every event before it conforms",
                who(*w),
                want(abi, expected)
            ),
        )
        .with_primary(expected.stmt.span, "blocked here"),
        Finding::Sequence { owner, seq } => Diagnostic::error(
            "trace::sequence",
            format!(
                "the notifies on rank {owner}'s cells are not numbered 1..N (notify #{seq} is missing or repeated): a write the trace does not hold"
            ),
        ),
        Finding::Value {
            who: w,
            position,
            expected,
            observed,
            replayed,
        } => Diagnostic::error(
            "trace::value",
            format!(
                "{}, event #{position}: no schedule of the IR explains {}: replaying the IR's notifies in the recorded order, the cell holds {replayed} there",
                who(*w),
                event(abi, observed)
            ),
        )
        .with_primary(expected.stmt.span, "this statement"),
        Finding::Cycle {
            who: w,
            position,
            expected,
        } => Diagnostic::error(
            "trace::cycle",
            format!(
                "{}, event #{position}: the recorded orders are cyclic (program order, notify order, the waits between notifies): no interleaving has them all",
                who(*w)
            ),
        )
        .with_primary(expected.stmt.span, "on the cycle"),
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
