//! Syntax errors. pest stops at the first error and names grammar rules; this
//! module turns that into a diagnostic a person can act on — what was expected,
//! in words, and a label where they would look — and recovers at statement
//! boundaries so that one run reports several independent syntax errors.

use crate::diag::{floor_char_boundary, Diagnostic, Fix, Span};
use crate::parse::{keyword_text, CollParser, Rule};
use pest::iterators::Pairs;
use pest::Parser as _;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// At most this many syntax errors are reported for one file.
pub const MAX_SYNTAX_ERRORS: usize = 16;

/// pest's error-detail switch is process-wide; this lock keeps concurrent
/// parses (tests, a multithreaded driver) from turning it off under each other.
static ERROR_DETAIL: Mutex<()> = Mutex::new(());

/// The keywords that start a statement, in the order the grammar tries them.
const STATEMENT_KEYWORDS: [&str; 11] = [
    "let", "notify", "wait", "copy", "get", "put", "reduce", "fence", "for", "if", "return",
];
/// The keywords that start a declaration.
const ITEM_KEYWORDS: [&str; 12] = [
    "ranks", "param", "const", "let", "blocks", "signal", "window", "tile", "array", "require",
    "body", "epilogue",
];

/// The reserved keywords (the grammar's `keyword` rule): never a name.
pub(crate) const RESERVED: [&str; 31] = [
    "collective",
    "ranks",
    "param",
    "const",
    "let",
    "blocks",
    "signal",
    "window",
    "tile",
    "array",
    "require",
    "body",
    "epilogue",
    "for",
    "in",
    "peers",
    "if",
    "else",
    "return",
    "notify",
    "wait",
    "copy",
    "get",
    "put",
    "reduce",
    "fence",
    "step",
    "as",
    "value",
    "true",
    "false",
];
/// The keywords a declared name follows (`let NAME`, `for NAME in`, `collective NAME:`).
const DECLARERS: [&str; 10] = [
    "collective",
    "param",
    "const",
    "let",
    "blocks",
    "signal",
    "window",
    "tile",
    "array",
    "for",
];

/// Parses a file with pest. On failure, reports the first syntax error and
/// every further one found after skipping the statement or declaration that
/// holds the previous one (at most [`MAX_SYNTAX_ERRORS`]).
pub(crate) fn parse_file(text: &str) -> Result<Pairs<'_, Rule>, Vec<Diagnostic>> {
    let plain = match CollParser::parse(Rule::file, text) {
        Ok(p) => return Ok(p),
        Err(e) => e,
    };
    // Parse again, now recording what was tried where (the same failure).
    let mut err = parse_detailed(text).err().unwrap_or(plain);
    let code = code_mask(text);
    let mut work = text.as_bytes().to_vec();
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut seen: BTreeSet<usize> = BTreeSet::new();
    loop {
        // Blanking replaces bytes by ASCII spaces (never newlines), so `work` stays
        // UTF-8 and every offset in it is an offset in `text`.
        let w = std::str::from_utf8(&work).unwrap_or(text);
        let (pos, expected) = expected_at(w, &err);
        let pos = floor_char_boundary(text, pos);
        seen.insert(pos);
        diags.push(describe(text, &code, &expected, pos));
        let expected = expected.text;
        if diags.len() >= MAX_SYNTAX_ERRORS {
            break;
        }
        let Some((start, end)) = recovery_region(w, &code, pos, expected.contains("`;`")) else {
            break;
        };
        for b in &mut work[start..end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        let w = std::str::from_utf8(&work).unwrap_or(text);
        match parse_detailed(w) {
            Ok(()) => break,
            Err(e) => {
                // Stop when recovery makes no progress.
                if seen.contains(&floor_char_boundary(text, expected_at(w, &e).0)) {
                    break;
                }
                err = e;
            }
        }
    }
    Err(diags)
}

/// Parses with pest's error detail on (the literal tokens tried at the
/// farthest position are recorded in the error).
fn parse_detailed(text: &str) -> Result<(), pest::error::Error<Rule>> {
    let _guard = ERROR_DETAIL.lock().unwrap_or_else(|p| p.into_inner());
    pest::set_error_detail(true);
    let r = CollParser::parse(Rule::file, text).map(|_| ());
    pest::set_error_detail(false);
    r
}

fn error_pos(e: &pest::error::Error<Rule>) -> usize {
    match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    }
}

/// `mask[i]` is true when byte `i` is code: not inside a `//` comment.
/// (The language has no string literals, so every `//` starts a comment.)
fn code_mask(text: &str) -> Vec<bool> {
    let b = text.as_bytes();
    let mut mask = vec![true; b.len()];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                mask[i] = false;
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    mask
}

/// The bytes to blank so that parsing can go on after an error at `pos`: from
/// the end of the previous statement (`;`, `{` or `}` before `pos`) through the
/// `;` or the balanced `{ ... }` that ends the broken one — or, when a `;` was
/// expected, up to the `}` that closes the block (the last statement lacks its
/// `;`). `None` when the error is not inside braces or its statement does not
/// end before its block does: then a later error would likely be a consequence
/// of this one.
fn recovery_region(
    text: &str,
    code: &[bool],
    pos: usize,
    semicolon_expected: bool,
) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let pos = pos.min(b.len());
    // Inside the collective's braces at least?
    let mut depth: i64 = 0;
    for i in 0..pos {
        if code[i] {
            match b[i] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
        }
    }
    if depth < 1 {
        return None;
    }
    let start = (0..pos)
        .rev()
        .find(|&i| code[i] && matches!(b[i], b';' | b'{' | b'}'))
        .map_or(0, |i| i + 1);
    let mut depth = 0i64;
    for i in pos..b.len() {
        if !code[i] {
            continue;
        }
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth -= 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((start, i + 1));
                }
                if depth < 0 {
                    return semicolon_expected.then_some((start, i));
                }
            }
            b';' if depth <= 0 => return Some((start, i + 1)),
            _ => {}
        }
    }
    None
}

/// The diagnostic for one pest error at `pos`. `text` is the original source,
/// `work` the text pest saw (the source with earlier errors blanked).
fn describe(text: &str, code: &[bool], wanted: &Expected, pos: usize) -> Diagnostic {
    let expected = wanted.text.as_str();
    let at_eof = pos >= text.len() || !code_after(text, code, pos);
    let found = if at_eof {
        "end of file".to_string()
    } else {
        format!("`{}`", token_at(text, pos))
    };
    let message = if expected.is_empty() {
        format!("syntax error: unexpected {found}")
    } else {
        format!("syntax error: expected {expected}, found {found}")
    };
    let mut d = Diagnostic::error("parse::syntax", message);
    let prev = previous_code_end(text, code, pos);
    if at_eof {
        // Point at the last character of code: a label at the very end of the
        // file would not be shown.
        let end = prev.unwrap_or(0);
        d = d.with_primary(last_char(text, end), "the file ends here");
        if let Some(open) = innermost_unclosed(text, code) {
            d = d.with_label(
                Span::new(open, open + 1),
                format!("this `{}` is never closed", &text[open..open + 1]),
            );
            d = d.with_help(format!(
                "add the missing `{}`",
                closer(text.as_bytes()[open])
            ));
        }
        return d;
    }
    if let Some((word, at)) = keyword_as_name(text, code, pos) {
        return Diagnostic::error(
            "parse::keyword-name",
            format!("`{word}` is a keyword and cannot be a name"),
        )
        .with_primary(at, "a reserved keyword, used here as a name")
        .with_help(format!(
            "rename it everywhere, e.g. `{word}_`; the reserved keywords are listed in LANGUAGE.md §2"
        ));
    }
    let here = token_span(text, pos);
    // A misspelt keyword: `notfy`, `retrun`, `epilog`.
    let word = token_at(text, pos);
    if word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        if let Some(k) = crate::suggest::closest(&word, &wanted.keywords) {
            d = d.with_help(format!("did you mean `{k}`?"));
            // `letx` is `let x` run together; `notfy` is `notify` misspelt.
            let fixed = match word.strip_prefix(k.as_str()) {
                Some(rest) if !rest.is_empty() => format!("{k} {rest}"),
                _ => k,
            };
            let title = format!("replace with `{fixed}`");
            d = d.with_fix(Fix::replace(title, token_span(text, pos), fixed));
        }
    }
    match prev {
        // The error is the first token of its line and a terminator was expected:
        // the problem is at the end of the previous line, where the `;` is missing.
        Some(end) if expected.contains("`;`") && text[end..pos].contains('\n') => d
            .with_fix(Fix::replace("insert `;`", Span::new(end, end), ";"))
            .with_primary(
                last_char(text, end),
                format!("expected {expected} after this"),
            )
            .with_label(here, format!("found {found}")),
        _ => d.with_primary(here, "unexpected here"),
    }
}

/// A reserved keyword written where a name goes, next to an error at `pos` (the word at
/// `pos` or the one just before it): the word and its span, when the word before it declares
/// a name (`let step = 1;`, `for step in ..`, `collective reduce:`) or it is followed by `[`,
/// `:` or `=` (`wait step[0] >= 1`, `window reduce: ..`), which no keyword is.
fn keyword_as_name(text: &str, code: &[bool], pos: usize) -> Option<(String, Span)> {
    let word_at = |i: usize| -> Option<Span> {
        let b = text.as_bytes();
        let w = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if i >= b.len() || !code[i] || !w(b[i]) || (i > 0 && w(b[i - 1])) {
            return None;
        }
        let end = (i..b.len()).find(|&j| !w(b[j])).unwrap_or(b.len());
        Some(Span::new(i, end))
    };
    let before = |i: usize| -> Option<Span> {
        let end = previous_code_end(text, code, i)?;
        let start = (0..end)
            .rev()
            .find(|&j| !(text.as_bytes()[j].is_ascii_alphanumeric() || text.as_bytes()[j] == b'_'))
            .map_or(0, |j| j + 1);
        word_at(start).filter(|s| s.end == end)
    };
    let pos = pos.min(text.len());
    let candidates = [word_at(pos), before(pos)];
    let at = candidates
        .into_iter()
        .flatten()
        .find(|s| RESERVED.contains(&&text[s.start..s.end]))?;
    let declared = before(at.start).is_some_and(|p| DECLARERS.contains(&&text[p.start..p.end]));
    let rest = text[at.end..].trim_start();
    let used = rest.starts_with('[')
        || rest.starts_with(':')
        || (rest.starts_with('=') && !rest.starts_with("=="));
    (declared || used).then(|| (text[at.start..at.end].to_string(), at))
}

/// True when some code (not blank, not comment) starts at or after `pos`.
fn code_after(text: &str, code: &[bool], pos: usize) -> bool {
    let b = text.as_bytes();
    (pos..b.len()).any(|i| code[i] && !b[i].is_ascii_whitespace())
}

/// One past the last byte of code (not blank, not comment) before `pos`.
fn previous_code_end(text: &str, code: &[bool], pos: usize) -> Option<usize> {
    let b = text.as_bytes();
    (0..pos.min(b.len()))
        .rev()
        .find(|&i| code[i] && !b[i].is_ascii_whitespace())
        .map(|i| {
            let start = floor_char_boundary(text, i);
            start + text[start..].chars().next().map_or(1, char::len_utf8)
        })
}

/// The span of the character that ends at `end` (or the first one for `end == 0`).
fn last_char(text: &str, end: usize) -> Span {
    let end = floor_char_boundary(text, end);
    match text[..end].chars().next_back() {
        Some(c) => Span::new(end - c.len_utf8(), end),
        None => Span::new(0, text.chars().next().map_or(0, char::len_utf8)),
    }
}

/// The offset of the innermost opening bracket left unclosed at end of file.
fn innermost_unclosed(text: &str, code: &[bool]) -> Option<usize> {
    let mut stack = Vec::new();
    for (i, c) in text.bytes().enumerate() {
        if !code[i] {
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => stack.push(i),
            b')' | b']' | b'}' => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.pop()
}

fn closer(open: u8) -> char {
    match open {
        b'(' => ')',
        b'[' => ']',
        _ => '}',
    }
}

/// The bytes of the token that starts at `pos` (at least one character).
fn token_span(text: &str, pos: usize) -> Span {
    let rest = &text[pos..];
    let tok = token_at(text, pos);
    let len = if rest.starts_with(tok.as_str()) {
        tok.len()
    } else {
        rest.chars().next().map_or(0, char::len_utf8)
    };
    Span::new(pos, pos + len)
}

/// The token that starts at `pos`, as a person would read it: a word, a
/// number, an operator of the language, or one character (escaped if unprintable).
fn token_at(text: &str, pos: usize) -> String {
    let rest = &text[floor_char_boundary(text, pos)..];
    let Some(c) = rest.chars().next() else {
        return String::new();
    };
    if c.is_ascii_alphanumeric() || c == '_' {
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(32)
            .collect();
        return word;
    }
    for op in [
        "..=", "..", "<-", "<<", ">>", "+=", "-=", ">=", "<=", "==", "!=", "&&", "||", "//",
    ] {
        if rest.starts_with(op) {
            return op.to_string();
        }
    }
    if c.is_control() || c.is_whitespace() {
        return c.escape_default().to_string();
    }
    c.to_string()
}

/// Where the error is and what pest expected there, in words: keywords and
/// punctuation in backticks, classes of tokens by name, long lists summarised.
/// pest's own position is that of the last *rule* it tried; with error detail it
/// also knows the farthest *token* it tried, which is where a person would look.
fn expected_at(work: &str, e: &pest::error::Error<Rule>) -> (usize, Expected) {
    let mut pos = error_pos(e);
    let mut words: BTreeSet<String> = BTreeSet::new();
    let mut tokens: BTreeSet<String> = BTreeSet::new();
    let attempts = e.parse_attempts();
    let attempts = attempts.filter(|a| a.max_position >= pos && !a.expected_tokens().is_empty());
    let use_positives = attempts.as_ref().is_none_or(|a| a.max_position == pos);
    if use_positives {
        if let pest::error::ErrorVariant::ParsingError { positives, .. } = &e.variant {
            expected_rules(positives, &mut tokens, &mut words);
        }
    }
    if let Some(a) = attempts {
        pos = a.max_position;
        // Right after a word or number, pest also tried to make it longer:
        // those letters and digits are not what a person left out.
        let after_word = work[..floor_char_boundary(work, pos)]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        for t in a.expected_tokens() {
            expected_token(&t.to_string(), after_word, &mut tokens, &mut words);
        }
    }
    // Keywords a misspelt word may have meant.
    let keywords: Vec<String> = tokens
        .iter()
        .filter(|t| t.chars().all(|c| c.is_ascii_alphanumeric()))
        .cloned()
        .collect();
    (
        pos,
        Expected {
            text: join_or(&summarise(tokens, words)),
            keywords,
        },
    )
}

/// The rules pest expected, as tokens (keywords, punctuation) and words (classes).
fn expected_rules(positives: &[Rule], tokens: &mut BTreeSet<String>, words: &mut BTreeSet<String>) {
    for r in positives {
        if *r == Rule::notify_op {
            tokens.extend(["+=", "-=", "="].map(String::from));
        } else if let Some(k) = keyword_text(*r) {
            tokens.insert(k.to_string());
        } else if let Some(n) = rule_name(*r) {
            match n.strip_prefix('`').and_then(|n| n.strip_suffix('`')) {
                Some(tok) if !tok.contains('`') => tokens.insert(tok.to_string()),
                _ => words.insert(n.to_string()),
            };
        }
    }
}

/// One token pest tried, as a token or a word (or nothing: blanks, comments, and the
/// letters that would only make the word before the error longer).
fn expected_token(
    t: &str,
    after_word: bool,
    tokens: &mut BTreeSet<String>,
    words: &mut BTreeSet<String>,
) {
    let s = t.trim();
    let chars: Vec<char> = s.chars().collect();
    let continues_word = (chars.len() == 4 && chars[1] == '.' && chars[2] == '.') || s == "_";
    if after_word && continues_word {
        return;
    }
    if chars.len() == 4 && chars[1] == '.' && chars[2] == '.' {
        // A character range (`0..9`, `a..z`): the start of an integer or identifier.
        if chars[0].is_ascii_digit() {
            words.insert("integer".into());
        } else {
            words.insert("identifier".into());
        }
    } else if s.is_empty() || s == "//" || s == "\u{feff}" || s == "BUILTIN_RULE" {
        // Blanks and comments may come anywhere; nobody misses them.
    } else if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        // Words come from keyword rules; a bare `_` starts an identifier.
        if ITEM_KEYWORDS.contains(&s) || STATEMENT_KEYWORDS.contains(&s) || keyword_like(s) {
            tokens.insert(s.to_string());
        } else if s == "_" {
            words.insert("identifier".into());
        }
    } else {
        tokens.insert(s.to_string());
    }
}

/// The expected tokens and words summarised (an expression for its parts, a
/// statement or a declaration for all their keywords), tokens first.
fn summarise(mut tokens: BTreeSet<String>, mut words: BTreeSet<String>) -> Vec<String> {
    // An expression covers integers and identifiers.
    if words.contains("expression") {
        words.remove("integer");
        words.remove("identifier");
        tokens.remove("(");
        tokens.remove("-");
    }
    if words.contains("condition") {
        tokens.remove("true");
        tokens.remove("false");
        tokens.remove("!");
        tokens.remove("(");
    }
    // The start of an operand is the start of an expression.
    if ["(", "-"].iter().all(|t| tokens.contains(*t))
        && words.contains("identifier")
        && words.contains("integer")
    {
        tokens.remove("(");
        tokens.remove("-");
        words.remove("identifier");
        words.remove("integer");
        words.insert("expression".into());
    }
    let mut out: Vec<String> = Vec::new();
    if ["+", "-", "*", "/", "%"]
        .iter()
        .all(|t| tokens.contains(*t))
    {
        for t in ["+", "-", "*", "/", "%", "<<", ">>", "&", "^", "|"] {
            tokens.remove(t);
        }
        words.insert("operator".into());
    }
    if STATEMENT_KEYWORDS.iter().all(|k| tokens.contains(*k)) {
        for k in STATEMENT_KEYWORDS {
            tokens.remove(k);
        }
        out.push("a statement".into());
    }
    if ITEM_KEYWORDS.iter().all(|k| tokens.contains(*k)) {
        for k in ITEM_KEYWORDS {
            tokens.remove(k);
        }
        out.push("a declaration".into());
    }
    out.extend(tokens.into_iter().map(|t| format!("`{t}`")));
    out.extend(words.into_iter().map(|w| {
        if w.starts_with('`') || w == "end of file" {
            w
        } else {
            format!("{} {w}", article(&w))
        }
    }));
    out
}

/// What was expected at an error: in words, and the keywords among it.
struct Expected {
    text: String,
    keywords: Vec<String>,
}

/// True for the words of the language that are keywords or type words.
fn keyword_like(s: &str) -> bool {
    matches!(
        s,
        "collective"
            | "in"
            | "peers"
            | "else"
            | "step"
            | "as"
            | "value"
            | "true"
            | "false"
            | "rank"
            | "int"
            | "f32"
            | "f64"
            | "i32"
            | "i64"
            | "ranks"
    )
}

fn article(w: &str) -> &'static str {
    if w.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Names for the rules worth naming in "expected ..." (others are left out).
fn rule_name(r: Rule) -> Option<&'static str> {
    Some(match r {
        Rule::ident => "identifier",
        Rule::int_lit => "integer",
        Rule::expr | Rule::slice_lo | Rule::slice_hi => "expression",
        Rule::cond | Rule::compare | Rule::cond_and | Rule::cond_not => "condition",
        Rule::cmp_op => "comparison",
        Rule::semantics => "collective kind",
        Rule::param_type => "`rank` or `int in LO..=HI`",
        Rule::elem_type => "`f32`, `f64`, `i32`, `i64` or the `type` parameter",
        Rule::scalar_type => "`f32`, `f64`, `i32` or `i64`",
        Rule::block => "`{`",
        Rule::at => "`@`",
        Rule::cell => "signal cell",
        Rule::region => "data region",
        Rule::domain => "domain `LO..=HI`",
        Rule::loop_range => "`peers`, `ranks` or `LO..HI`",
        Rule::EOI => "end of file",
        _ => return None,
    })
}

fn join_or(items: &[String]) -> String {
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        _ => format!(
            "{} or {}",
            items[..items.len() - 1].join(", "),
            items[items.len() - 1]
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_is_the_grammar_keyword_rule() {
        for w in RESERVED {
            assert!(CollParser::parse(Rule::keyword, w).is_ok(), "{w}");
            assert!(CollParser::parse(Rule::ident, w).is_err(), "{w}");
        }
        for w in [
            "rank",
            "int",
            "f32",
            "calls",
            "monotonic",
            "per",
            "reused",
            "steps",
        ] {
            assert!(CollParser::parse(Rule::ident, w).is_ok(), "{w}");
        }
    }

    #[test]
    fn a_keyword_as_a_name_is_named() {
        let cases = [
            ("let step = 1;", "step"),
            ("for step in 0..3 { fence; }", "step"),
            ("wait reduce[0] >= 1;", "reduce"),
        ];
        for (stmt, word) in cases {
            let text = format!("collective c: barrier() {{ ranks P in 1..=4; body {{ {stmt} }} }}");
            let Err(d) = parse_file(&text) else {
                panic!("a syntax error")
            };
            assert_eq!(d[0].code, "parse::keyword-name", "{stmt}: {:?}", d[0]);
            assert!(
                d[0].message.contains(&format!("`{word}` is a keyword")),
                "{stmt}"
            );
            let at = d[0].labels[0].span;
            assert_eq!(&text[at.start..at.end], word, "{stmt}");
        }
        for decl in [
            "window reduce: f32[4];",
            "param step: int in 1..=3;",
            "signal value[P];",
        ] {
            let text = format!("collective c: barrier() {{ ranks P in 1..=4; {decl} body {{ }} }}");
            let Err(d) = parse_file(&text) else {
                panic!("a syntax error")
            };
            assert_eq!(d[0].code, "parse::keyword-name", "{decl}: {:?}", d[0]);
        }
        let text = "collective reduce: barrier() { ranks P in 1..=4; body { } }";
        let Err(d) = parse_file(text) else {
            panic!("a syntax error")
        };
        assert_eq!(d[0].code, "parse::keyword-name");
        // Not a name: an ordinary syntax error stays one.
        let text = "collective c: barrier() { ranks P in 1..=4; body { wait x[0] >= ; } }";
        let Err(d) = parse_file(text) else {
            panic!("a syntax error")
        };
        assert_eq!(d[0].code, "parse::syntax");
    }
}
