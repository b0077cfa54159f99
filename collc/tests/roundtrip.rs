//! The formatter and the printer on every example and bug fixture (and on
//! inputs written to stress comment placement): `fmt` is idempotent, and both
//! the formatted text and the canonical print lower to the same IR as the input.

mod common;

use collc_spec::print::{format_with_source, print};
use common::*;

/// Checks the three round-trip properties on one valid text; returns the
/// problems found (empty when all hold).
fn round_trip(name: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let checked = collc_spec::lowered(text);
    let Some(p) = checked.protocol else {
        return vec![format!("{name}: does not check: {:?}", checked.diagnostics)];
    };
    let ir = ir_without_spans(&p);

    let formatted = format_with_source(&p, text);
    match collc_spec::lowered(&formatted).protocol {
        None => problems.push(format!("{name}: `fmt` output does not check:\n{formatted}")),
        Some(q) => {
            if ir_without_spans(&q) != ir {
                problems.push(format!("{name}: `fmt` changed the IR:\n{formatted}"));
            }
            let again = format_with_source(&q, &formatted);
            if again != formatted {
                problems.push(format!(
                    "{name}: `fmt` is not idempotent:\n--- once\n{formatted}\n--- twice\n{again}"
                ));
            }
        }
    }
    // Formatting keeps every comment, in order.
    let comments = |t: &str| -> Vec<String> {
        collc_grammar::comments(t)
            .into_iter()
            .map(|(_, c)| c.trim_end().to_string())
            .collect()
    };
    if comments(&formatted) != comments(text) {
        problems.push(format!(
            "{name}: `fmt` lost or reordered comments:\n{:?}\n{:?}",
            comments(text),
            comments(&formatted)
        ));
    }

    let printed = print(&p);
    match collc_spec::lowered(&printed).protocol {
        None => problems.push(format!("{name}: `print` output does not check:\n{printed}")),
        Some(q) => {
            if ir_without_spans(&q) != ir {
                problems.push(format!("{name}: `print` changed the IR:\n{printed}"));
            }
            if print(&q) != printed {
                problems.push(format!("{name}: `print` is not a fixed point"));
            }
        }
    }
    let header = format!(
        "collective {}: {} {{",
        p.name,
        collc_spec::print::semantics_to_string(&p)
    );
    if !printed.starts_with(&header) {
        problems.push(format!("{name}: `print` does not start with `{header}`"));
    }
    if !collc_grammar::comments(&printed).is_empty() {
        problems.push(format!("{name}: `print` emitted a comment"));
    }
    problems
}

#[test]
fn examples_and_bug_fixtures_round_trip() {
    let mut problems = Vec::new();
    for path in valid_corpus() {
        problems.extend(round_trip(&rel(&path), &read(&path)));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n\n"));
}

/// Valid inputs that put comments, blank lines and odd spacing where the
/// printer has to think: inside expressions, between `}` and `else`, after the
/// last statement, before and after the collective, on braces, with CRLF.
const STRESS: &[(&str, &str)] = &[
    (
        "comments everywhere",
        "// head\n\n// second head line\ncollective c: barrier() { // on the brace\n  ranks P in 1..=16; // world\n\n\n  // before signal\n  signal sig[P];\n  body // before the brace\n  {\n    for p in peers { // loop\n      notify sig[me] @ p += 1; // notify\n      // end of loop body\n    }\n    if me == rank(0) {\n      fence;\n    } // after then\n    else { // on else\n      fence;\n    }\n    let x = 1 + // inside an expression\n      2;\n    // last in body\n  }\n  epilogue {\n    for p in peers { notify sig[p] -= 1; }\n  } // after epilogue\n  // before the closing brace\n} // after the collective\n// trailing\n",
    ),
    (
        "else-if chain with comments",
        "collective c: barrier() {\n    ranks P in 1..=16;\n    signal sig[P];\n    body {\n        if me == rank(0) { // zero\n            fence;\n        } else if me == rank(1) { // one\n            fence;\n        } else // dangling\n        if me == rank(2) {\n            fence;\n        } else {\n            // nothing\n        }\n    }\n}\n",
    ),
    (
        "crlf and tabs",
        "collective c: barrier() {\r\n\tranks P in 1..=16;\r\n\tsignal sig[P];\t// tab\r\n\tbody {\r\n\t\tfor p in peers { notify sig[me] @ p += 1; }\r\n\t}\r\n}\r\n",
    ),
    (
        "precedence and negation",
        "collective c: allreduce(sum, data) {\n  ranks P in 1..=16;\n  param n: int in 1..=4096;\n  const A = -(3 - 5) * -2 % 7;\n  let B = n - (n - 1) - -1;\n  let C = ceil((n + 1) / (2 * 3));\n  require !(n < 2) && (n % 2 == 0 || !!(n > 8));\n  window data: f32[n];\n  tile t: f32[256];\n  body {\n    let k = n / 2 / 2 - (n - 3) * -1;\n    for i in 0..min(k, 3) step 2 {\n      copy t[..] <- data[i .. i + 1];\n      copy t[0..] <- data[..n];\n    }\n    return if (me == rank(0));\n  }\n}\n",
    ),
    (
        "bit operations and arithmetic",
        "collective c: barrier() {\n  const M = (4 + 4) << 1 & 255;\n  ranks P in 1..=16;\n  param n: int in 1..=64;\n  require P & (P - 1) == 0 && (n & n - 1) == 0;\n  signal sig[P];\n  body {\n    let k = n * 2 | n >> 1 + 1;\n    let j = (n + 1) & (n ^ 3) * 2;\n  }\n}\n",
    ),
    (
        "multicore and arrays",
        "collective c: all_to_all_v(input, target, send, recv) {\n  ranks P in 1..=16;\n  param R: int in 1..=64;\n  blocks b in 0..2;\n  array send: int[P] in 0..=64;\n  signal recv[P] as value;\n  signal ready[P][2];\n  window input: f32[P][R];\n  window target: f32[P][R];\n  body {\n    for p in ranks {\n      notify recv[me] @ p = min(send[p], R);\n      notify ready[me][b] @ p += 1;\n    }\n    for p in ranks { wait ready[p][b] >= 1; }\n    put target[me][0 .. 1] @ rank(0) <- input[0][0 .. 1];\n    reduce max input[0][0 .. R] <- target[0][0 .. R];\n  }\n  epilogue { for p in ranks { notify ready[p][b] -= 1; } }\n}\n",
    ),
    (
        "constants as written",
        "collective c: barrier() {\n  const MAXP = 4*4;\n  ranks P in 1..=MAXP;\n  const CHUNK = 16384/4;  // bytes / sizeof(f32)\n  param n: int in 1..=CHUNK*2;\n  array a: int[P] in 0..=(CHUNK);\n  signal sig[P];\n  body { }\n}\n",
    ),
    (
        "empty blocks and no epilogue",
        "collective c: barrier() { ranks P in 1..=1; body { } }",
    ),
    (
        "unbounded world",
        "collective c: barrier() {\n  const LO = 1 + 1;\n  ranks P >= LO;  // unbounded\n  signal sig[P];\n  body { for p in peers { notify sig[me] @ p += 1; } }\n}\n",
    ),
    (
        "large world",
        "collective c: barrier() {\n  ranks P in 1..=65536;\n  signal sig[P];\n  body { }\n}\n",
    ),
    (
        "empty epilogue",
        "collective c: barrier() {\n  ranks P in 1..=2;\n  body {}\n  epilogue {}\n}\n",
    ),
];

#[test]
fn stress_inputs_round_trip() {
    let mut problems = Vec::new();
    for (name, text) in STRESS {
        problems.extend(round_trip(name, text));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n\n"));
}

#[test]
fn formatted_stress_inputs_match_snapshots() {
    for (name, text) in STRESS {
        let p = collc_spec::lowered(text).protocol.expect("valid");
        insta::assert_snapshot!(name.replace([' ', '-'], "_"), format_with_source(&p, text));
    }
}

#[test]
fn world_domains_print_canonically() {
    use collc_spec::ir::{VarKind, MAX_WORLD};
    let text = |dom: &str| {
        format!("collective c: barrier() {{\n    ranks P {dom};\n    signal sig[P];\n    body {{\n    }}\n}}\n")
    };
    for (written, printed, hi) in [
        ("in 1..=65536", "in 1..=65536", 65536),
        ("in 1..=2147483647", ">= 1", MAX_WORLD),
        (">= 1", ">= 1", MAX_WORLD),
        (">= 3", ">= 3", MAX_WORLD),
    ] {
        let p = collc_spec::lowered(&text(written)).protocol.expect("valid");
        assert!(
            matches!(p.vars[p.world].kind, VarKind::World { hi: h, .. } if h == hi),
            "{written}"
        );
        assert!(
            print(&p).contains(&format!("    ranks P {printed};\n")),
            "{written}:\n{}",
            print(&p)
        );
        assert!(
            format_with_source(&p, &text(written)).contains(&format!("    ranks P {printed};\n")),
            "{written}"
        );
    }
}
