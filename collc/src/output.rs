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
    /// Both, in the order they were written (`true`: stderr), so that a log of both
    /// streams (`2>&1`) keeps each file's diagnostics next to its report.
    pub chunks: Vec<(bool, String)>,
}

impl Output {
    fn push(&mut self, to_stderr: bool, s: &str) {
        if to_stderr {
            self.stderr.push_str(s);
        } else {
            self.stdout.push_str(s);
        }
        match self.chunks.last_mut() {
            Some((e, c)) if *e == to_stderr => c.push_str(s),
            _ => self.chunks.push((to_stderr, s.to_string())),
        }
    }
    /// Appends a line to stdout.
    pub fn out(&mut self, s: impl AsRef<str>) {
        self.push(false, s.as_ref());
        if !s.as_ref().ends_with('\n') {
            self.push(false, "\n");
        }
    }
    /// Appends a line to stderr.
    pub fn err(&mut self, s: impl AsRef<str>) {
        self.push(true, s.as_ref());
        if !s.as_ref().ends_with('\n') {
            self.push(true, "\n");
        }
    }
    /// Renders diagnostics of one file to stderr, each followed by a blank line.
    pub fn diagnostics(&mut self, source: &Source, diags: &[Diagnostic], style: Style) {
        for d in diags {
            let r = render::render(d, source, style);
            self.push(true, &r);
            if !r.ends_with('\n') {
                self.push(true, "\n");
            }
            self.push(true, "\n");
        }
    }
    /// Writes everything to the process's stdout and stderr, in the order it was written.
    pub fn flush_to_process(&self) {
        use std::io::Write;
        let (mut o, mut e) = (std::io::stdout(), std::io::stderr());
        for (to_stderr, c) in &self.chunks {
            if *to_stderr {
                let _ = e.write_all(c.as_bytes());
                let _ = e.flush();
            } else {
                let _ = o.write_all(c.as_bytes());
                let _ = o.flush();
            }
        }
    }
}
