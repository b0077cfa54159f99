//! Where subcommands write: stdout and stderr, or in-memory buffers in tests.

use crate::render::{self, Style};
use collc_grammar::{Diagnostic, Source};

/// Process exit codes, as documented in README.md.
pub mod exit {
    /// Everything was fine.
    pub const OK: i32 = 0;
    /// The input is wrong (or, for `verify`, an obligation is violated).
    pub const INPUT: i32 = 1;
    /// Usage or I/O error.
    pub const USAGE: i32 = 2;
    /// `verify`: some obligation is unknown, none violated.
    pub const UNKNOWN: i32 = 3;
}

/// Collected output of a command.
#[derive(Debug, Default)]
pub struct Output {
    /// Text for stdout.
    pub stdout: String,
    /// Text for stderr.
    pub stderr: String,
}

impl Output {
    /// Appends a line to stdout.
    pub fn out(&mut self, s: impl AsRef<str>) {
        self.stdout.push_str(s.as_ref());
        if !s.as_ref().ends_with('\n') {
            self.stdout.push('\n');
        }
    }
    /// Appends a line to stderr.
    pub fn err(&mut self, s: impl AsRef<str>) {
        self.stderr.push_str(s.as_ref());
        if !s.as_ref().ends_with('\n') {
            self.stderr.push('\n');
        }
    }
    /// Renders diagnostics of one file to stderr, each followed by a blank line.
    pub fn diagnostics(&mut self, source: &Source, diags: &[Diagnostic], style: Style) {
        for d in diags {
            let r = render::render(d, source, style);
            self.stderr.push_str(&r);
            if !r.ends_with('\n') {
                self.stderr.push('\n');
            }
            self.stderr.push('\n');
        }
    }
}
