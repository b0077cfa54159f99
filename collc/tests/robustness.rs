//! Hostile and degenerate inputs: the front end answers each with a clear
//! diagnostic (or accepts it), never panics, and never exhausts a small stack.
//! Every test runs parse + check (and rendering) on a thread with a 2 MiB stack.

mod common;

use collc::render::{render, Style};
use collc_grammar::{Diagnostic, Source};
use common::*;

const STACK: usize = 2 << 20;

/// Validates `text` as every command does (range obligations included) on a
/// small stack; renders every diagnostic at two widths.
fn check(text: String) -> (bool, Vec<Diagnostic>) {
    on_stack(STACK, move || {
        let c = collc_spec::front(&collc_verifier::Ranges, &text);
        let src = Source::new("input.coll", text.as_str());
        for d in &c.diagnostics {
            for w in [40, 100] {
                let r = render(d, &src, Style::plain(w));
                assert!(r.contains(&d.code), "rendered without its code:\n{r}");
            }
        }
        (c.protocol.is_some(), c.diagnostics)
    })
}

fn codes(d: &[Diagnostic]) -> Vec<&str> {
    d.iter().map(|d| d.code.as_str()).collect()
}

/// Rounds 1, 2, ... of `round` until the body is just under 1 MiB.
fn rounds(round: impl Fn(usize) -> String) -> String {
    let mut body = String::new();
    let mut k = 0;
    while body.len() < (1 << 20) - 400 {
        k += 1;
        body.push_str(&round(k));
    }
    body
}

/// A collective of just under 1 MiB: rounds 1, 2, ... of `round`, with `n`,
/// `TILE`, `sig`, `data` and `acc` declared.
fn megabyte(round: impl Fn(usize) -> String) -> String {
    let text = wrap(
        "    param n: int in 1..=4096;\n    const TILE = 256;\n    signal sig[P];\n    window data: f32[n];\n    tile acc: f32[TILE];",
        &rounds(round),
    );
    assert!(text.len() <= 1 << 20);
    text
}

/// A minimal collective with `decls` and `body` spliced in.
fn wrap(decls: &str, body: &str) -> String {
    format!("collective t: barrier() {{\n    ranks P in 1..=16;\n{decls}\n    body {{\n{body}\n    }}\n}}\n")
}

#[test]
fn empty_blank_and_comment_only_files() {
    for text in [
        "",
        " \n\t\r\n",
        "// only a comment",
        "// a\n// b\n\n",
        "/",
        "//",
    ] {
        let (ok, d) = check(text.to_string());
        assert!(!ok);
        assert_eq!(codes(&d), ["parse::empty"], "{text:?}");
        let src = Source::new("e.coll", text);
        assert_eq!(
            src.line_col(d[0].primary_span().expect("span").start),
            (1, 1)
        );
    }
}

#[test]
fn empty_file_renders_without_an_empty_snippet() {
    let (_, d) = check(String::new());
    let r = render(&d[0], &Source::new("e.coll", ""), Style::plain(80));
    assert!(!r.contains('╭'), "{r}");
    assert!(r.contains("at e.coll:1:1"), "{r}");
}

#[test]
fn non_utf8_bytes() {
    for bytes in [
        vec![0xff, 0xfe],
        b"collective x: barrier() { ranks P in 1..=4; body { } } \xc3".to_vec(),
        b"\x80collective".to_vec(),
        b"collective x: barrier() {\n// \xed\xa0\x80 surrogate\n}".to_vec(),
    ] {
        let lossy = String::from_utf8_lossy(&bytes).into_owned();
        let d = collc_grammar::decode(bytes).expect_err("not UTF-8");
        assert_eq!(d.code, "input::not-utf8");
        let span = d.primary_span().expect("located");
        assert!(lossy.is_char_boundary(span.start) && span.end <= lossy.len());
        let r = render(
            &d,
            &Source::new("bin.coll", lossy.as_str()),
            Style::plain(80),
        );
        assert!(r.contains("not UTF-8"), "{r}");
    }
}

#[test]
fn ten_megabyte_file_is_refused_fast() {
    let text = wrap("", &"        fence;\n".repeat(700_000));
    assert!(text.len() > 10_000_000);
    let t = std::time::Instant::now();
    let (ok, d) = check(text);
    assert!(!ok);
    assert_eq!(codes(&d), ["input::too-large"]);
    assert!(d[0].message.contains("over the limit of 1048576 bytes"));
    assert!(t.elapsed().as_secs() < 5, "took {:?}", t.elapsed());
}

#[test]
fn one_megabyte_of_valid_statements_is_accepted() {
    let mut body = String::new();
    while body.len() < (1 << 20) - 200 {
        body.push_str("        fence;\n");
    }
    let text = wrap("", &body);
    assert!(text.len() <= 1 << 20);
    let (ok, d) = check(text);
    assert!(ok, "{d:?}");
}

#[test]
fn one_megabyte_protocol_checks_and_formats_in_linear_time() {
    // Thousands of loops, indices, slices and comments: each check is cheap
    // (a per-index copy of the variable table once made this take minutes).
    let text = megabyte(|k| {
        format!(
        "        for p in peers {{\n            notify sig[me] @ p += 1;  // round {k}\n        }}\n        for p in peers {{\n            wait sig[p] >= {k};\n            get acc[0 .. min(TILE, n)] <- data[0 .. min(TILE, n)] @ p;\n        }}\n"
    )
    });
    let t = std::time::Instant::now();
    on_stack(STACK, move || {
        let p = collc_spec::lowered(&text).protocol.expect("valid");
        let f = collc_spec::print::format_with_source(&p, &text);
        let q = collc_spec::lowered(&f).protocol.expect("fmt output checks");
        assert_eq!(ir_without_spans(&p), ir_without_spans(&q));
        // Sixteen syntax errors in it: all reported, after recovery.
        let broken = text.replacen("+= 1;", "+= 1", 16);
        assert_eq!(collc_spec::lowered(&broken).diagnostics.len(), 16);
    });
    assert!(t.elapsed().as_secs() < 60, "took {:?}", t.elapsed());
}

#[test]
fn deeply_nested_parentheses_and_blocks() {
    let parens = wrap(
        &format!(
            "    const X = {}1{};",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        "",
    );
    let blocks = wrap(
        "",
        &format!("{}{}", "if true {".repeat(50_000), "}".repeat(50_000)),
    );
    let brackets = wrap(
        "    signal s[P];",
        &format!(
            "        wait s{}0{} >= 1;",
            "[".repeat(1000),
            "]".repeat(1000)
        ),
    );
    for text in [parens, blocks, brackets] {
        let (ok, d) = check(text);
        assert!(!ok);
        assert_eq!(codes(&d), ["input::too-deep"]);
        assert!(d[0].message.contains("deeper than 64"));
    }
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    // 60 parentheses and 55 nested blocks (plus the collective's and body's braces).
    let text = wrap(
        &format!("    const X = {}1{};", "(".repeat(60), ")".repeat(60)),
        &format!("{}fence;{}", "if true {".repeat(55), "}".repeat(55)),
    );
    let (ok, d) = check(text);
    assert!(ok, "{d:?}");
}

#[test]
fn hundred_thousand_term_expression() {
    let terms = vec!["1"; 100_000].join("+");
    let (ok, d) = check(wrap(&format!("    const X = {terms};"), ""));
    assert!(!ok);
    assert_eq!(codes(&d), ["input::too-deep"]);
    assert!(d[0].message.contains("expression nests deeper than 200"));
    let negs = format!("    const X = {}1;", "-".repeat(100_000));
    let (_, d) = check(wrap(&negs, ""));
    assert_eq!(codes(&d), ["input::too-deep"]);
    let nots = format!("    require {}true;", "!".repeat(500_000));
    let (_, d) = check(wrap(&nots, ""));
    assert_eq!(codes(&d), ["input::too-deep"]);
    assert!(d[0].message.contains("condition nests deeper than 200"));
}

#[test]
fn wide_but_shallow_expressions_are_fine() {
    // 199 operators deep is within the limit; so is a sum of products.
    let sum = vec!["1"; 200].join(" + ");
    let (ok, d) = check(wrap(&format!("    const X = {sum};"), ""));
    assert!(ok, "{d:?}");
    let prods = vec!["2 * 3"; 150].join(" + ");
    let (ok, d) = check(wrap(&format!("    const Y = {prods};"), ""));
    assert!(ok, "{d:?}");
    let conj = vec!["P > 0"; 5000].join(" && ");
    let (ok, d) = check(wrap(&format!("    require {conj};"), ""));
    assert!(ok, "{d:?}");
}

#[test]
fn long_else_if_chains() {
    let chain = |n: usize| {
        let mut s = String::from("        if me == rank(0) { fence; }");
        for _ in 0..n {
            s.push_str(" else if me == rank(1) { fence; }");
        }
        s.push_str(" else { fence; }");
        s
    };
    // Within the limit: accepted, and printed and re-read without trouble.
    let text = wrap("", &chain(150));
    let text2 = text.clone();
    let (ok, d) = check(text);
    assert!(ok, "{d:?}");
    on_stack(STACK, move || {
        let p = collc_spec::lowered(&text2).protocol.expect("valid");
        let printed = collc_spec::print::print(&p);
        let q = collc_spec::lowered(&printed)
            .protocol
            .expect("print re-checks");
        assert_eq!(ir_without_spans(&p), ir_without_spans(&q));
        let f = collc_spec::print::format_with_source(&p, &text2);
        assert!(collc_spec::lowered(&f).protocol.is_some());
    });
    // Far beyond: refused with one diagnostic, no stack overflow in pest.
    let (ok, d) = check(wrap("", &chain(30_000)));
    assert!(!ok);
    assert_eq!(codes(&d), ["input::too-deep"]);
    assert!(d[0].message.contains("`else if` chain of 30000 arms"));
}

#[test]
fn huge_integer_literals() {
    for lit in [
        "99999999999999999999999999999999999999",
        "9223372036854775808",
        "8589934589",
        "1_000_000_000_000",
    ] {
        let (ok, d) = check(wrap(&format!("    const X = {lit};"), ""));
        assert!(!ok);
        assert_eq!(codes(&d), ["parse::int-too-large"], "{lit}");
    }
    let (ok, d) = check(wrap("    const X = 8_589_934_588;", ""));
    assert!(ok, "{d:?}");
    let (_, d) = check(wrap(
        "    const X = 8589934588 * 8589934588 * 8589934588;",
        "",
    ));
    assert_eq!(codes(&d), ["domain::overflow"]);
    let (_, d) = check(wrap(
        "    const X = -8589934588 * 8589934588 * 8589934588 * 4;",
        "",
    ));
    assert_eq!(codes(&d), ["domain::overflow"]);
}

#[test]
fn division_by_zero_in_constants() {
    for e in ["1 / 0", "5 % 0", "ceil(7 / (2 - 2))", "1 / (3 % 3)"] {
        let (ok, d) = check(wrap(&format!("    const X = {e};"), ""));
        assert!(!ok);
        assert_eq!(codes(&d), ["domain::division-by-zero"], "{e}");
    }
    // Not a constant: `n / 0` is only known at run time, no front-end error.
    let (ok, d) = check(wrap(
        "    param n: int in 1..=4;\n    let X = n / (n - n);",
        "",
    ));
    assert!(ok, "{d:?}");
}

#[test]
fn errors_do_not_cascade() {
    // A bad constant, dimension, let or loop range is reported once; its uses
    // are not reported again.
    let text = wrap(
        "    const Z = 1 / 0;\n    signal s[Z];\n    signal t[me];\n    let L = unknown;",
        "        notify s[3] += 1;\n        notify t[0] += 1;\n        let x = nope + 1;\n        let y = x * L;\n        notify s[y] @ rank(y) += y;\n        for k in 0..missing {\n            notify s[k] @ rank(k) += k;\n        }",
    );
    let (_, d) = check(text);
    assert_eq!(
        codes(&d),
        [
            "domain::division-by-zero",
            "place::not-uniform",
            "resolve::unknown-name",
            "resolve::unknown-name",
            "resolve::unknown-name"
        ]
    );
}

#[test]
fn odd_characters_and_line_endings() {
    for text in [
        wrap("", "        let café = 1;"),
        wrap("", "        fence; 🦀"),
        wrap("", "        fence;\0"),
        "collective t: barrier() {\r    ranks P in 1..=4;\r    body { }\r}\r".to_string(),
        "collective t: barrier() { ranks P in 1..=4; body { fence; } } 🦀".to_string(),
        "collective t: barrier() { ranks P in 1..=4; body { fence; ".to_string(),
        "collective t: barrier() { ranks P in 1..=4; body { fence; // é".to_string(),
        "collective t: barrier() { ranks P in 1..=4; body { fence; é".to_string(),
        "\u{feff}collective t: barrier() { ranks P in 1..=4; body { } }".to_string(),
    ] {
        let (_, d) = check(text.clone());
        for x in &d {
            let s = x.primary_span().expect("every syntax error is located");
            assert!(s.start <= s.end && s.end <= text.len(), "{text:?}: {x:?}");
            assert!(text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
        }
    }
}

#[test]
fn a_byte_order_mark_is_whitespace() {
    let (ok, d) =
        check("\u{feff}collective t: barrier() { ranks P in 1..=4; body { } }\n".to_string());
    assert!(ok, "{d:?}");
}

#[test]
fn syntax_errors_are_capped() {
    let body = "        let x = 1\n        let y = 2;\n".repeat(100);
    let (_, d) = check(wrap("", &body));
    assert_eq!(d.len(), collc_grammar::MAX_SYNTAX_ERRORS);
    assert!(d.iter().all(|d| d.code == "parse::syntax"));
}

#[test]
fn a_very_long_line_renders_without_a_snippet() {
    // miette prints a labelled line whole and panics past column 65535.
    let text = wrap(
        &format!("    const X = 1{} / 0;", " + 1".repeat(20_000)),
        "",
    );
    let (ok, d) = check(text.clone());
    assert!(!ok);
    let r = render(
        &d[0],
        &Source::new("long.coll", text.as_str()),
        Style::plain(80),
    );
    assert!(r.lines().all(|l| l.chars().count() <= 100), "{r}");
    assert!(r.contains("at long.coll:3:"), "{r}");
}

#[test]
fn one_megabyte_of_distinct_slices_is_range_checked_within_its_budget() {
    // Thousands of slices no inspection settles, each a different Z3 query: the range check
    // stops at its budget of Z3 resource units (about 10 s of CPU here) and says so in one
    // warning, naming how many bounds it left; a second check of the same text (its verdicts
    // kept by the range memo, each charged what it cost) leaves exactly as many.
    let text = megabyte(|k| {
        format!(
        "        for p in peers {{\n            get acc[0 .. min(min({k}, n), TILE)] <- data[0 .. min(min({k}, n), TILE)] @ p;\n        }}\n"
    )
    });
    let unchecked = |d: &[Diagnostic]| -> String {
        assert!(
            d.len() == 1 && d[0].code == "domain::range-unproved" && !d[0].is_error(),
            "{:?}",
            codes(d)
        );
        let m = &d[0].message;
        assert!(
            m.contains("not checked: the range check's budget of")
                && m.contains("Z3 resource units is spent"),
            "{m}"
        );
        m.clone()
    };
    let (ok, d) = check(text.clone());
    assert!(ok, "{:?}", codes(&d));
    let first = unchecked(&d);
    let (_, again) = check(text);
    assert_eq!(first, unchecked(&again));
}
