//! The read half of the `fence` obligation: a remote read still in flight when a notify
//! releases a process that overwrites the window it reads (or whose host restages it) is
//! violated, with the help naming the line where `fence;` goes; the same read is private
//! when the window is `per call` and no released process writes it.

use collc_grammar::Source;
use collc_verifier::{Options, Status};

/// An allgather whose peers pull `input` and then say "read complete".
/// `extra` goes after the reads, `fence` right before the read-complete notify.
fn text(lifetime: &str, fence: &str, extra: &str) -> String {
    format!(
        "collective t: allgather(input, target) {{
    ranks P in 2..=4;
    param m: int in 1..=4;
    signal sig[P];
    window input: f32[m] {lifetime};
    window target: f32[P][m] per call;

    body {{
        for p in peers {{
            notify sig[me] @ p += 1;
        }}
        for p in peers {{
            wait sig[p] >= 1;
        }}
        fence;
        copy target[me][0 .. m] <- input[0 .. m];
        for p in peers {{
            get target[p][0 .. m] <- input[0 .. m] @ p;
        }}
        {extra}
        {fence}
        for p in peers {{
            notify sig[me] @ p += 1;
        }}
        for p in peers {{
            wait sig[p] >= 2;
        }}
    }}

    epilogue {{
        for p in peers {{
            notify sig[p] -= 2;
        }}
        fence;
    }}
}}
"
    )
}

/// The `fence` obligation's status and the help of its first finding.
fn fence(text: &str) -> (Status, Option<String>, Vec<usize>) {
    let c = collc_spec::front(&collc_verifier::Ranges, text);
    let p = c.protocol.expect("the case validates");
    let mut r = collc_verifier::verify(&p, &Options::symbolic_only());
    let src = Source::new("t.coll", text.to_string());
    r.locate(&src);
    let o = r.get("fence").expect("the fence obligation runs");
    let f = o.findings.first();
    let lines = f
        .map(|f| {
            f.labels
                .iter()
                .map(|(s, _)| src.line_col(s.start).0)
                .collect()
        })
        .unwrap_or_default();
    (o.status, f.and_then(|f| f.help.clone()), lines)
}

/// 1-based lines of `text` containing `needle`.
fn lines_of(text: &str, needle: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn an_unfenced_read_of_a_restaged_window_is_violated_at_the_notify() {
    let t = text("reused", "", "");
    let (status, help, labels) = fence(&t);
    assert_eq!(status, Status::Violated);
    // The read-complete notify (the second one); the label on the read.
    let notify = lines_of(&t, "notify sig[me] @ p += 1;")[1];
    assert_eq!(help, Some(format!("add `fence;` before line {notify}")));
    assert_eq!(labels, lines_of(&t, "get target"));
}

#[test]
fn a_fence_between_the_read_and_the_notify_proves_it() {
    let (status, _, _) = fence(&text("reused", "fence;", ""));
    assert_eq!(status, Status::Proved);
}

#[test]
fn a_per_call_window_no_released_process_writes_is_private() {
    let (status, _, _) = fence(&text("per call", "", ""));
    assert_eq!(status, Status::Proved);
}

#[test]
fn a_per_call_window_a_released_process_writes_is_violated() {
    // A released owner writes its `input` (the analysis has no element regions and no
    // order between a process's statements): suspect, hence violated.
    let (status, _, _) = fence(&text(
        "per call",
        "",
        "copy input[0 .. m] <- target[me][0 .. m];",
    ));
    assert_eq!(status, Status::Violated);
}
