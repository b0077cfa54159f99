//! Diagnostics as data. Every stage of collc reports problems as [`Diagnostic`]
//! values; rendering (miette text, JSON) happens in one place, the `collc` crate.

use serde::Serialize;

/// A byte range in a source file. `start <= end <= text.len()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, serde::Deserialize)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
    /// Length in bytes.
    pub fn len(self) -> usize {
        self.end - self.start
    }
    /// True for a zero-length span.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational remark.
    Note,
    /// Worth fixing; does not fail `collc check`.
    Warning,
    /// The input is wrong.
    Error,
}

/// A labelled span inside a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What to say there (may be empty).
    pub message: String,
    /// The primary label is the one the diagnostic is about.
    pub primary: bool,
}

/// One problem found in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error, warning or note.
    pub severity: Severity,
    /// Stable code, e.g. `parse::syntax` or `type::expected-count` (see LANGUAGE.md).
    pub code: String,
    /// One-line summary.
    pub message: String,
    /// Labelled spans; the first primary label is where the diagnostic points.
    pub labels: Vec<Label>,
    /// How to fix it.
    pub help: Option<String>,
    /// Extra lines of explanation.
    pub notes: Vec<String>,
    /// Edits that fix the problem (the machine-applicable form of `help`); editors
    /// offer each as a code action.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
}

/// One way to fix a diagnostic: a title and the text edits that make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// What the fix does, e.g. "replace with `sig`".
    pub title: String,
    /// Non-overlapping edits of the source text.
    pub edits: Vec<Edit>,
}

/// Replaces the text of `span` with `text` (an insertion when `span` is empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// The bytes replaced.
    pub span: Span,
    /// The new text.
    pub text: String,
}

impl Fix {
    /// A fix of one edit.
    pub fn replace(title: impl Into<String>, span: Span, text: impl Into<String>) -> Self {
        Fix {
            title: title.into(),
            edits: vec![Edit {
                span,
                text: text.into(),
            }],
        }
    }
    /// `text` with the edits applied; `None` when an edit is out of range, splits a
    /// character, or overlaps another.
    pub fn apply(&self, text: &str) -> Option<String> {
        let mut edits: Vec<&Edit> = self.edits.iter().collect();
        edits.sort_by_key(|e| (e.span.start, e.span.end));
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for e in edits {
            if e.span.start < at || e.span.end < e.span.start {
                return None;
            }
            out.push_str(text.get(at..e.span.start)?);
            text.get(e.span.start..e.span.end)?;
            out.push_str(&e.text);
            at = e.span.end;
        }
        out.push_str(text.get(at..)?);
        Some(out)
    }
}

impl Diagnostic {
    /// An error with a code and message and no labels yet.
    pub fn error(code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code: code.to_string(),
            message: message.into(),
            labels: Vec::new(),
            help: None,
            notes: Vec::new(),
            fixes: Vec::new(),
        }
    }
    /// A warning with a code and message.
    pub fn warning(code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }
    /// Adds the primary label.
    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }
    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }
    /// Sets the help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    /// Adds a fix.
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fixes.push(fix);
        self
    }
    /// Adds a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
    /// The span of the first primary label, if any.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or(self.labels.first())
            .map(|l| l.span)
    }
    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A named source text.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file name as given by the user.
    pub name: String,
    /// The text (UTF-8).
    pub text: std::sync::Arc<str>,
}

impl Source {
    /// Wraps a name and text.
    pub fn new(name: impl Into<String>, text: impl Into<std::sync::Arc<str>>) -> Self {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }
    /// 1-based (line, column) of a byte offset; columns count characters.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }
}

/// The largest char boundary `<= i`.
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
