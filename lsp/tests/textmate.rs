//! The TextMate grammar (editors/vscode/syntaxes/coll.tmLanguage.json) agrees with
//! the pest grammar's word tokens on every example that pest accepts: each pest
//! keyword, identifier and integer is one TextMate token with exactly its bytes,
//! scoped as a keyword (keyword.*, support.function.builtin, storage.type,
//! constant.language), a name (variable.*, entity.name.function) or a number
//! (constant.numeric); and every TextMate keyword or number token outside comments
//! is a pest token with its bytes. Identifiers that pest reads as contextual words
//! (`per`, `call`, `reused`, `monotonic`, `calls`, `value`, `step`, `as` where they
//! are names) would fail the check. The TextMate grammar is applied by editors/vscode/test/tokenize.js
//! (node), rule by rule as a TextMate engine applies single-line `match` rules.
//! Operators and punctuation are not compared (pest keeps no pairs for them).

mod common;

use collc_grammar::outline::{words, Word};
use common::*;
use std::collections::HashMap;
use std::process::Command;

fn textmate_tokens(path: &std::path::Path) -> Vec<(usize, usize, String)> {
    let script = root().join("editors/vscode/test/tokenize.js");
    let out = Command::new("node")
        .arg(script)
        .arg(path)
        .output()
        .expect("node runs the TextMate tokenizer");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON tokens")
}

fn class(scope: &str) -> Option<Word> {
    let keyword = [
        "keyword.",
        "support.function.builtin",
        "storage.type",
        "constant.language",
    ];
    if keyword.iter().any(|k| scope.starts_with(k)) && !scope.starts_with("keyword.operator") {
        Some(Word::Keyword)
    } else if scope.starts_with("variable.") || scope.starts_with("entity.name.function") {
        Some(Word::Ident)
    } else if scope.starts_with("constant.numeric") {
        Some(Word::Int)
    } else {
        None
    }
}

#[test]
fn textmate_tokens_agree_with_pest_on_every_example() {
    let mut files = coll_files("examples");
    files.extend(coll_files("examples/bugs"));
    files.extend(coll_files("examples/outside_model"));
    files.extend(coll_files("collc/tests/ui"));
    let (mut compared, mut failures) = (0, Vec::new());
    for f in &files {
        let text = read(f);
        let Some(pest) = words(&text) else {
            continue;
        };
        let tm = textmate_tokens(f);
        let at: HashMap<(usize, usize), Option<Word>> =
            tm.iter().map(|(a, b, s)| ((*a, *b), class(s))).collect();
        for (w, span) in &pest {
            let got = at.get(&(span.start, span.end));
            if got != Some(&Some(*w)) {
                failures.push(format!(
                    "{}: `{}` at {}..{} is {w:?} in pest, {got:?} in TextMate",
                    f.display(),
                    &text[span.start..span.end],
                    span.start,
                    span.end
                ));
            }
        }
        let pest_at: HashMap<(usize, usize), Word> =
            pest.iter().map(|(w, s)| ((s.start, s.end), *w)).collect();
        for (a, b, scope) in &tm {
            if let Some(w @ (Word::Keyword | Word::Int)) = class(scope) {
                if pest_at.get(&(*a, *b)) != Some(&w) {
                    failures.push(format!(
                        "{}: `{}` at {a}..{b} is {scope} in TextMate, not a pest {w:?}",
                        f.display(),
                        &text[*a..*b]
                    ));
                }
            }
        }
        compared += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 50, "only {compared} files compared");
}
