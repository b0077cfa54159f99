//! The one place diagnostics become text: miette's graphical report for
//! humans, and a stable JSON shape for machines.

use collc_grammar::{Diagnostic, Severity, Source};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};
use serde::Serialize;
use std::fmt;

/// How to render human-readable diagnostics.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Use ANSI colours.
    pub color: bool,
    /// Wrap width in columns.
    pub width: usize,
}

impl Style {
    /// Plain text at a fixed width: what tests and pipes get.
    pub fn plain(width: usize) -> Self {
        Style {
            color: false,
            width,
        }
    }
}

struct Adapter<'a> {
    d: &'a Diagnostic,
    src: NamedSource<std::sync::Arc<str>>,
    len: usize,
    text: &'a str,
}

impl fmt::Debug for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.d.message)
    }
}
impl fmt::Display for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.d.message)
    }
}
impl std::error::Error for Adapter<'_> {}

impl miette::Diagnostic for Adapter<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.d.code.clone()))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note => miette::Severity::Advice,
        })
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let mut parts: Vec<String> = self.d.help.iter().cloned().collect();
        parts.extend(self.d.notes.iter().map(|n| format!("note: {n}")));
        if parts.is_empty() {
            None
        } else {
            Some(Box::new(parts.join("\n")))
        }
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        if self.d.labels.is_empty() {
            None
        } else {
            Some(&self.src)
        }
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.d.labels.is_empty() {
            return None;
        }
        let len = self.len;
        let text = self.text;
        Some(Box::new(self.d.labels.iter().map(move |l| {
            let (s, e) = clamp(text, len, l.span.start, l.span.end);
            let msg = if l.message.is_empty() {
                None
            } else {
                Some(l.message.clone())
            };
            if l.primary {
                LabeledSpan::new_primary_with_span(msg, SourceSpan::from(s..e))
            } else {
                LabeledSpan::new_with_span(msg, SourceSpan::from(s..e))
            }
        })))
    }
}

/// Keeps a label visible: inside the text, on char boundaries, and never at
/// the very end of the file (miette hides labels there).
fn clamp(text: &str, len: usize, start: usize, end: usize) -> (usize, usize) {
    use collc_grammar::diag::floor_char_boundary;
    if len == 0 {
        return (0, 0);
    }
    let mut s = floor_char_boundary(text, start.min(len));
    let mut e = floor_char_boundary(text, end.min(len)).max(s);
    if s >= len {
        let last = text.chars().next_back().map_or(0, char::len_utf8);
        s = len - last;
        e = len;
    }
    (s, e)
}

/// Longest source line (in characters) shown in a snippet. miette prints a
/// labelled line whole (and panics on columns past 65535), so a diagnostic on a
/// longer line is rendered without a snippet, its labels given as locations.
pub const MAX_SNIPPET_LINE: usize = 400;

/// Renders one diagnostic as a human-readable report.
pub fn render(d: &Diagnostic, source: &Source, style: Style) -> String {
    let mapped;
    let d = match lifted_from(d, &source.text) {
        Some(at) => {
            mapped = d.clone().with_note(format!("lifted from {at}"));
            &mapped
        }
        None => d,
    };
    if source.text.trim().is_empty() || d.labels.iter().any(|l| long_line(&source.text, l.span)) {
        return render_report(&without_snippet(d, source), source, style);
    }
    render_report(d, source, style)
}

/// The prefix of the source-map line `collc lift` writes at the end of a protocol it lifted
/// from pypto's C++: `// collc-source-map: FILE L1 L2 ...`, the C++ line of each line of
/// the protocol (0: none).
pub const SOURCE_MAP: &str = "// collc-source-map: ";

/// `FILE:LINE` of the C++ the diagnostic's primary line was lifted from, when the text
/// carries a source map.
fn lifted_from(d: &Diagnostic, text: &str) -> Option<String> {
    let map = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(SOURCE_MAP))?;
    let mut words = map.split_whitespace();
    let file = words.next()?;
    let lines: Vec<usize> = words.map(|w| w.parse().unwrap_or(0)).collect();
    let at = d.primary_span()?.start.min(text.len());
    let row = text.as_bytes()[..at]
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    match lines.get(row) {
        Some(l) if *l > 0 => Some(format!("{file}:{l}")),
        _ => None,
    }
}

/// True when a label touches a line longer than [`MAX_SNIPPET_LINE`].
fn long_line(text: &str, span: collc_grammar::Span) -> bool {
    use collc_grammar::diag::floor_char_boundary;
    let start = floor_char_boundary(text, span.start.min(text.len()));
    let end = floor_char_boundary(text, span.end.min(text.len())).max(start);
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    text[line_start..line_end]
        .split('\n')
        .any(|l| l.len() > MAX_SNIPPET_LINE && l.chars().count() > MAX_SNIPPET_LINE)
}

/// The diagnostic with its labels turned into `file:line:column` lines under
/// its message.
fn without_snippet(d: &Diagnostic, source: &Source) -> Diagnostic {
    let mut out = d.clone();
    out.labels.clear();
    for l in &d.labels {
        let (line, col) = source.line_col(l.span.start);
        out.message
            .push_str(&format!("\nat {}:{line}:{col}", source.name));
        if !l.message.is_empty() {
            out.message.push_str(&format!(": {}", l.message));
        }
    }
    out
}

fn render_report(d: &Diagnostic, source: &Source, style: Style) -> String {
    let adapter = Adapter {
        d,
        src: NamedSource::new(source.name.clone(), source.text.clone()),
        len: source.text.len(),
        text: &source.text,
    };
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let mut out = String::new();
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(style.width)
        .with_urls(false);
    if handler.render_report(&mut out, &adapter).is_err() {
        out = format!("{}: {} [{}]\n", source.name, d.message, d.code);
    }
    out
}

/// A diagnostic in the stable JSON shape (`docs` in spec/LANGUAGE.md).
#[derive(Debug, Serialize)]
pub struct JsonDiagnostic<'a> {
    /// File name.
    pub file: &'a str,
    /// `error`, `warning` or `note`.
    pub severity: Severity,
    /// Stable code.
    pub code: &'a str,
    /// Summary.
    pub message: &'a str,
    /// 1-based line of the primary label (0 when there is none).
    pub line: usize,
    /// 1-based column of the primary label (0 when there is none).
    pub column: usize,
    /// All labels, with byte offsets.
    pub labels: &'a [collc_grammar::Label],
    /// How to fix it.
    pub help: Option<&'a str>,
    /// Extra lines.
    pub notes: &'a [String],
}

/// Converts a diagnostic to its JSON shape.
pub fn to_json<'a>(d: &'a Diagnostic, source: &'a Source) -> JsonDiagnostic<'a> {
    let (line, column) = d
        .primary_span()
        .map_or((0, 0), |s| source.line_col(s.start));
    JsonDiagnostic {
        file: &source.name,
        severity: d.severity,
        code: &d.code,
        message: &d.message,
        line,
        column,
        labels: &d.labels,
        help: d.help.as_deref(),
        notes: &d.notes,
    }
}

pub mod gate;
pub mod run;
pub mod sarif;
pub mod trace;
pub mod tune;
pub mod verify;
