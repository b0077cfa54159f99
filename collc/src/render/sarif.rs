//! `collc verify --format sarif`: every file's diagnostics (the verifier's findings, its
//! undecided obligations, and the front end's errors of files that do not validate) as
//! one SARIF 2.1.0 log, the format code-scanning services read. Rule id = the
//! diagnostic code (`verify::credit-balance`, `parse::syntax`, ...); a result's level is
//! the diagnostic's severity (an undecided obligation is a warning, as on the terminal,
//! and, like a violation, makes the exit code non-zero); the location is the primary
//! label, the other labels are related locations; help, notes and the replay command of
//! a bounded counterexample are the result's properties. One result per root cause
//! (`collc_verifier::cause`): the other obligations that found the same place are
//! related locations too, and listed in the `also` property.

use collc_grammar::{Diagnostic, Severity, Source, Span};
use collc_verifier::report::Report;
use serde_json::{json, Value};

/// Where SARIF readers find the rules' documentation.
const HELP_URI: &str = "verifier/README.md#obligations";

/// A SARIF log being built, file by file.
#[derive(Debug, Default)]
pub struct SarifLog {
    rules: Vec<String>,
    artifacts: Vec<String>,
    /// Per artifact: what its report shows and for which world sizes.
    artifact_props: std::collections::BTreeMap<usize, Value>,
    results: Vec<Value>,
    notifications: Vec<String>,
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn region(src: &Source, span: Span) -> Value {
    let (sl, sc) = src.line_col(span.start);
    let (el, ec) = src.line_col(span.end.max(span.start));
    json!({
        "startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec,
        "charOffset": span.start, "charLength": span.end.saturating_sub(span.start),
    })
}

/// The index of `s` in `list`, appended if absent.
fn index_of(list: &mut Vec<String>, s: &str) -> usize {
    match list.iter().position(|x| x == s) {
        Some(i) => i,
        None => {
            list.push(s.to_string());
            list.len() - 1
        }
    }
}

impl SarifLog {
    fn rule(&mut self, code: &str) -> usize {
        index_of(&mut self.rules, code)
    }

    fn artifact(&mut self, name: &str) -> usize {
        index_of(&mut self.artifacts, name)
    }

    fn location(&mut self, src: &Source, span: Span, message: Option<&str>) -> Value {
        let index = self.artifact(&src.name);
        let mut loc = json!({
            "physicalLocation": {
                "artifactLocation": {"uri": src.name, "index": index},
                "region": region(src, span),
            }
        });
        if let Some(m) = message.filter(|m| !m.is_empty()) {
            loc["message"] = json!({ "text": m });
        }
        loc
    }

    /// Adds diagnostics of one file (front end or verifier).
    /// One result per root cause (`collc_verifier::cause`): the obligations that found
    /// the same place are its related locations (`also CODE: message`) and its `also`
    /// property.
    pub fn add_diagnostics(&mut self, src: &Source, diags: &[Diagnostic]) {
        self.artifact(&src.name);
        for c in collc_verifier::cause::root_causes(diags.to_vec()) {
            let d = &c.diagnostic;
            let rule = self.rule(&d.code);
            let mut locations = Vec::new();
            let mut related = Vec::new();
            for l in &d.labels {
                if l.primary && locations.is_empty() {
                    locations.push(self.location(src, l.span, None));
                } else {
                    let id = related.len();
                    let mut r = self.location(src, l.span, Some(&l.message));
                    r["id"] = json!(id);
                    related.push(r);
                }
            }
            for a in &c.also {
                if let Some(span) = collc_verifier::cause::primary_span(a) {
                    let id = related.len();
                    let m = format!("also {}: {}", a.code, a.message);
                    let mut r = self.location(src, span, Some(&m));
                    r["id"] = json!(id);
                    related.push(r);
                }
            }
            if locations.is_empty() {
                // No span: the file itself.
                let index = self.artifact(&src.name);
                locations.push(json!({
                    "physicalLocation": {"artifactLocation": {"uri": src.name, "index": index}}
                }));
            }
            let mut props = json!({});
            if let Some(h) = &d.help {
                props["help"] = json!(h);
            }
            if !d.notes.is_empty() {
                props["notes"] = json!(d.notes);
            }
            if !c.also.is_empty() {
                let codes: Vec<&str> = c.also.iter().map(|a| a.code.as_str()).collect();
                props["also"] = json!(codes);
            }
            if let Some(r) = d
                .notes
                .iter()
                .find_map(|n| n.strip_prefix("replay: "))
                .or_else(|| {
                    d.message
                        .split("(replay: ")
                        .nth(1)
                        .map(|r| r.trim_end_matches(')'))
                })
            {
                props["replay"] = json!(r);
            }
            let mut text = d.message.clone();
            if let Some(h) = &d.help {
                text.push_str(&format!("\nhelp: {h}"));
            }
            let mut res = json!({
                "ruleId": d.code,
                "ruleIndex": rule,
                "kind": "fail",
                "level": level(d.severity),
                "message": {"text": text},
                "locations": locations,
                "properties": props,
            });
            if !related.is_empty() {
                res["relatedLocations"] = json!(related);
            }
            self.results.push(res);
        }
    }

    /// Adds one verified file: its report's diagnostics.
    pub fn add_report(&mut self, report: &Report, src: &Source) {
        self.add_diagnostics(src, &report.diagnostics());
        // Every obligation's status, the world sizes it was decided for, and for a proof
        // how it was shown (P symbolic, by enumeration, vacuous), as on the terminal.
        let index = self.artifact(&src.name);
        let obligations: Vec<Value> = report
            .obligations
            .iter()
            .map(|o| {
                json!({"id": o.id, "status": o.status, "world": o.world,
                       "proved": o.how(), "scope": o.scope})
            })
            .collect();
        self.artifact_props.insert(
            index,
            json!({"method": report.method, "obligations": obligations}),
        );
    }

    /// A file that could not be read.
    pub fn add_io_error(&mut self, msg: &str) {
        self.notifications.push(msg.to_string());
    }

    /// The log as JSON text, with the command's exit code.
    pub fn render(&self, exit_code: i32) -> String {
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|code| {
                let short = code.split("::").nth(1).unwrap_or(code);
                json!({
                    "id": code,
                    "name": short,
                    "shortDescription": {"text": format!("collc {code}")},
                    "helpUri": HELP_URI,
                })
            })
            .collect();
        let artifacts: Vec<Value> = self
            .artifacts
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut v = json!({"location": {"uri": a}});
                if let Some(p) = self.artifact_props.get(&i) {
                    v["properties"] = p.clone();
                }
                v
            })
            .collect();
        let notifications: Vec<Value> = self
            .notifications
            .iter()
            .map(|m| json!({"level": "error", "message": {"text": m}}))
            .collect();
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "collc",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }},
                "columnKind": "unicodeCodePoints",
                "artifacts": artifacts,
                "results": self.results,
                "invocations": [{
                    "executionSuccessful": exit_code == 0,
                    "exitCode": exit_code,
                    "toolExecutionNotifications": notifications,
                }],
            }],
        });
        serde_json::to_string_pretty(&log).unwrap_or_default()
    }
}
