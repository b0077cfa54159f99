//! Property tests: arbitrary bytes and mutated examples (byte flips,
//! truncations, spliced, dropped and duplicated lines, inserted tokens) never
//! make the front end panic; every diagnostic is located inside the text and
//! renders; and whatever is accepted survives `fmt` and `print` round trips.

mod common;

use collc::render::{render, Style};
use collc_grammar::Source;
use common::*;
use proptest::prelude::*;
use std::sync::OnceLock;

/// The examples and bug fixtures, read once.
fn corpus() -> &'static [String] {
    static C: OnceLock<Vec<String>> = OnceLock::new();
    C.get_or_init(|| valid_corpus().iter().map(|p| read(p)).collect())
}

/// Tokens worth inserting: they take the parser down unusual paths.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ":",
    "@",
    "..",
    "..=",
    "<-",
    "+=",
    "-=",
    "=",
    ">=",
    "==",
    "!",
    "&&",
    "||",
    "-",
    "*",
    "/",
    "%",
    "//",
    "\n",
    "me",
    "rank(",
    "ceil(",
    "min(",
    "peers",
    "ranks",
    "let",
    "notify",
    "wait",
    "for",
    "if",
    "else",
    "return if",
    "fence",
    "body",
    "epilogue",
    "signal",
    "const",
    "param",
    "0",
    "99",
    "8589934589",
    "x",
    "é",
    "\u{0}",
];

#[derive(Debug, Clone)]
enum Mutation {
    FlipByte {
        at: usize,
        to: u8,
    },
    Truncate {
        at: usize,
    },
    DeleteLine {
        line: usize,
    },
    DuplicateLine {
        line: usize,
    },
    SpliceLine {
        from_file: usize,
        from_line: usize,
        to_line: usize,
    },
    SwapLines {
        a: usize,
        b: usize,
    },
    InsertToken {
        at: usize,
        token: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let n = usize::MAX / 2;
    prop_oneof![
        (0..n, any::<u8>()).prop_map(|(at, to)| Mutation::FlipByte { at, to }),
        (0..n).prop_map(|at| Mutation::Truncate { at }),
        (0..n).prop_map(|line| Mutation::DeleteLine { line }),
        (0..n).prop_map(|line| Mutation::DuplicateLine { line }),
        (0..n, 0..n, 0..n).prop_map(|(from_file, from_line, to_line)| Mutation::SpliceLine {
            from_file,
            from_line,
            to_line
        }),
        (0..n, 0..n).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
        (0..n, 0..TOKENS.len()).prop_map(|(at, token)| Mutation::InsertToken { at, token }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let lines = |b: &[u8]| -> Vec<Vec<u8>> {
        b.split_inclusive(|c| *c == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    };
    match *m {
        Mutation::FlipByte { at, to } => {
            if !bytes.is_empty() {
                let i = at % bytes.len();
                bytes[i] = to;
            }
        }
        Mutation::Truncate { at } => bytes.truncate(at % (bytes.len() + 1)),
        Mutation::DeleteLine { line } => {
            let mut ls = lines(bytes);
            if !ls.is_empty() {
                let i = line % ls.len();
                ls.remove(i);
            }
            *bytes = ls.concat();
        }
        Mutation::DuplicateLine { line } => {
            let mut ls = lines(bytes);
            if !ls.is_empty() {
                let i = line % ls.len();
                let l = ls[i].clone();
                ls.insert(i, l);
            }
            *bytes = ls.concat();
        }
        Mutation::SpliceLine {
            from_file,
            from_line,
            to_line,
        } => {
            let other = lines(corpus()[from_file % corpus().len()].as_bytes());
            let mut ls = lines(bytes);
            if !other.is_empty() {
                let l = other[from_line % other.len()].clone();
                let i = to_line % (ls.len() + 1);
                ls.insert(i, l);
            }
            *bytes = ls.concat();
        }
        Mutation::SwapLines { a, b } => {
            let mut ls = lines(bytes);
            if !ls.is_empty() {
                let (a, b) = (a % ls.len(), b % ls.len());
                ls.swap(a, b);
            }
            *bytes = ls.concat();
        }
        Mutation::InsertToken { at, token } => {
            let i = at % (bytes.len() + 1);
            let t = TOKENS[token].as_bytes();
            bytes.splice(i..i, t.iter().copied());
        }
    }
}

/// What must hold for any input: no panic (the property test fails on one),
/// diagnostics located on char boundaries inside the text and rendered, and
/// accepted inputs stable under `fmt` and `print`.
fn front_end_holds(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let text = match collc_grammar::decode(bytes.clone()) {
        Ok(t) => t,
        Err(d) => {
            prop_assert_eq!(d.code.as_str(), "input::not-utf8");
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            let _ = render(&d, &Source::new("f.coll", lossy.as_str()), Style::plain(80));
            return Ok(());
        }
    };
    let checked = collc_spec::lowered(&text);
    let src = Source::new("f.coll", text.as_str());
    for d in &checked.diagnostics {
        for l in &d.labels {
            prop_assert!(
                l.span.start <= l.span.end && l.span.end <= text.len(),
                "{:?}",
                d
            );
            prop_assert!(text.is_char_boundary(l.span.start) && text.is_char_boundary(l.span.end));
        }
        let r = render(d, &src, Style::plain(80));
        prop_assert!(r.contains(&d.code));
    }
    prop_assert_eq!(
        checked.protocol.is_some(),
        !checked.diagnostics.iter().any(|d| d.is_error())
    );
    if let Some(p) = checked.protocol {
        let ir = ir_without_spans(&p);
        let formatted = collc_spec::print::format_with_source(&p, &text);
        let q = collc_spec::lowered(&formatted).protocol;
        prop_assert!(q.is_some(), "fmt output does not check:\n{}", formatted);
        let q = q.expect("checked");
        prop_assert!(
            ir_without_spans(&q) == ir,
            "fmt changed the IR of\n{}\n--- into\n{}",
            text,
            formatted
        );
        let again = collc_spec::print::format_with_source(&q, &formatted);
        prop_assert_eq!(&again, &formatted, "fmt is not idempotent");
        let printed = collc_spec::print::print(&p);
        let r = collc_spec::lowered(&printed).protocol;
        prop_assert!(r.is_some(), "print output does not check:\n{}", printed);
        prop_assert_eq!(
            &ir_without_spans(&r.expect("checked")),
            &ir,
            "print changed the IR"
        );
    }
    Ok(())
}

/// Random integer expressions, as text: literals, names, negation, the five
/// operators, parentheses and the built-in functions, nested a few levels.
fn expr_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u32..20).prop_map(|v| v.to_string()),
        Just("n".to_string()),
        Just("TILE".to_string()),
        Just("P".to_string()),
    ];
    leaf.prop_recursive(4, 24, 3, |e| {
        prop_oneof![
            e.clone().prop_map(|a| format!("-{a}")),
            e.clone().prop_map(|a| format!("({a})")),
            (
                e.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "%"]),
                e.clone()
            )
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("min({a}, {b})")),
            (e.clone(), e.clone()).prop_map(|(a, b)| format!("max({a}, {b})")),
            (e.clone(), e).prop_map(|(a, b)| format!("ceil(({a}) / ({b}))")),
        ]
    })
}

/// Random conditions, as text: comparisons, constants, `!`, `&&`, `||`, parentheses.
fn cond_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (
            expr_text(),
            prop::sample::select(vec![">=", "<=", "==", "!=", ">", "<"]),
            expr_text()
        )
            .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        Just("true".to_string()),
        Just("false".to_string()),
    ];
    leaf.prop_recursive(3, 12, 3, |c| {
        prop_oneof![
            c.clone().prop_map(|a| format!("!{a}")),
            c.clone().prop_map(|a| format!("!({a})")),
            c.clone().prop_map(|a| format!("({a})")),
            (c.clone(), c.clone()).prop_map(|(a, b)| format!("{a} && {b}")),
            (c.clone(), c).prop_map(|(a, b)| format!("{a} || {b}")),
        ]
    })
}

proptest! {
    // A few hundred cases keep `cargo test` fast; PROPTEST_CASES=100000 runs a campaign.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        front_end_holds(bytes)?;
    }

    #[test]
    fn arbitrary_text(text in "[ -~\t\n]{0,400}") {
        front_end_holds(text.into_bytes())?;
    }

    #[test]
    fn mutated_examples(file in 0usize..1000, muts in prop::collection::vec(mutation(), 1..6)) {
        let mut bytes = corpus()[file % corpus().len()].clone().into_bytes();
        for m in &muts {
            apply(&mut bytes, m);
        }
        front_end_holds(bytes)?;
    }

    #[test]
    fn generated_expressions_and_conditions_round_trip(
        e in prop::collection::vec(expr_text(), 4),
        c in prop::collection::vec(cond_text(), 4),
        step in 1u32..4,
    ) {
        // Every random expression and condition, in every position that takes
        // one: the printer must parenthesise exactly as much as needed.
        let text = format!(
            "collective g: barrier() {{\n    ranks P in 1..=16;\n    param n: int in 1..=64;\n    const TILE = 4;\n    let D = {};\n    require {};\n    signal sig[P];\n    body {{\n        let x = {} + D;  // x\n        if {} {{\n            fence;\n        }} else if {} {{\n            return if {};\n        }}\n        for k in 0..{} step {step} {{\n            notify sig[me] @ rank(k % P) += {} - x;\n        }}\n    }}\n}}\n",
            e[0], c[0], e[1], c[1], c[2], c[3], e[2], e[3]
        );
        let checked = collc_spec::lowered(&text);
        prop_assert!(checked.protocol.is_some(), "{}\n{:?}", text, checked.diagnostics);
        front_end_holds(text.into_bytes())?;
    }

    #[test]
    fn mutated_examples_with_one_token(file in 0usize..1000, at in 0usize..100_000, token in 0..TOKENS.len()) {
        let mut bytes = corpus()[file % corpus().len()].clone().into_bytes();
        apply(&mut bytes, &Mutation::InsertToken { at, token });
        front_end_holds(bytes)?;
    }
}
