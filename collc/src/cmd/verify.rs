//! `collc verify FILE... [--format text|json] [--timeout-ms MS] [--bounded-budget-ms MS]
//! [--no-bounded] [--explain]`: prove a protocol's obligations and run its bounded ones
//! (see `verifier/README.md`), or print its credit table.

use crate::driver::{load, LoadError};
use crate::output::{exit, Output};
use crate::render::{self, Style};
use collc_verifier::report::{Report, Status};
use serde::Serialize;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Diagnostics on stderr, a summary per obligation on stdout.
    Text,
    /// One JSON object per file on stdout (schema in verifier/README.md).
    Json,
}

/// Arguments of `collc verify`.
#[derive(clap::Args, Debug, Clone)]
pub struct VerifyArgs {
    /// Files to verify.
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print the per-cell credit table (credits per call, waits, reset) instead.
    #[arg(long)]
    pub explain: bool,
    /// Wall-clock budget of each obligation in milliseconds; past it the obligation is `unknown`.
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Wall-clock budget of the bounded obligations (simulator) per file, in milliseconds.
    /// Bounds that do not complete in it fall back to smaller ones, stated in the report.
    #[arg(long, default_value_t = 8_000)]
    pub bounded_budget_ms: u64,
    /// Distinct states per parameter assignment before a bounded attempt falls back.
    #[arg(long, default_value_t = 200_000)]
    pub bounded_max_states: u64,
    /// Skip the bounded obligations (reported as `skipped`, not as passing).
    #[arg(long)]
    pub no_bounded: bool,
}

#[derive(Serialize)]
struct JsonOut<'a> {
    file: &'a str,
    report: &'a Report,
    diagnostics: Vec<render::JsonDiagnostic<'a>>,
}

fn status_str(s: Status) -> &'static str {
    match s {
        Status::Proved => "proved",
        Status::Checked => "checked",
        Status::Violated => "violated",
        Status::Warning => "warning",
        Status::Unknown => "unknown",
        Status::Skipped => "skipped",
    }
}

/// Runs `verify` on every file. Exit: 2 usage/I-O, else 1 any violation or invalid
/// input, else 3 any unknown, else 0.
pub fn run(args: &VerifyArgs, style: Style, out: &mut Output) -> i32 {
    let mut io = false;
    let mut bad = false;
    let mut unknown = false;
    for f in &args.files {
        let l = match load(f) {
            Ok(l) => l,
            Err(LoadError::Io(msg)) => {
                out.err(format!("error: {msg}"));
                io = true;
                continue;
            }
            Err(LoadError::Invalid(src, diags)) => {
                out.diagnostics(&src, &diags, style);
                bad = true;
                continue;
            }
        };
        if args.explain {
            match collc_verifier::table::explain(&l.protocol) {
                Ok(t) => match args.format {
                    Format::Text => out.out(t.render()),
                    Format::Json => out.out(
                        serde_json::to_string(&serde_json::json!({"file": f, "table": t}))
                            .unwrap_or_default(),
                    ),
                },
                Err(e) => {
                    out.err(format!("error: {f}: cannot build the credit table: {e}"));
                    unknown = true;
                }
            }
            continue;
        }
        let opts = collc_verifier::Options {
            timeout_ms: args.timeout_ms,
        };
        let mut report = collc_verifier::verify(&l.protocol, &opts);
        let t0 = std::time::Instant::now();
        if args.no_bounded {
            report
                .obligations
                .extend(collc_verifier::bounded::skipped());
        } else {
            let bopts = collc_verifier::bounded::BoundedOptions {
                budget: std::time::Duration::from_millis(args.bounded_budget_ms),
                max_states: args.bounded_max_states,
                file: f.clone(),
                ..Default::default()
            };
            report
                .obligations
                .extend(collc_verifier::bounded::check(&l.protocol, &bopts));
        }
        let bounded_ms = t0.elapsed().as_millis();
        report.locate(&l.source);
        match report.exit_code() {
            1 => bad = true,
            3 => unknown = true,
            _ => {}
        }
        let diags = report.diagnostics();
        match args.format {
            Format::Text => {
                out.diagnostics(&l.source, &diags, style);
                out.out(format!(
                    "verify {f}: {} ({})",
                    report.protocol, report.method
                ));
                for o in &report.obligations {
                    let extra = match o.status {
                        Status::Unknown => format!(" — {}", o.reason.clone().unwrap_or_default()),
                        Status::Violated | Status::Warning
                            if collc_verifier::bounded::OBLIGATIONS.contains(&o.id.as_str()) =>
                        {
                            o.findings
                                .first()
                                .and_then(|x| x.notes.first())
                                .map(|n| format!(" — {n}"))
                                .unwrap_or_default()
                        }
                        _ => String::new(),
                    };
                    out.out(format!(
                        "  {:<15} {:<9} {}{extra}",
                        o.id,
                        status_str(o.status),
                        o.summary
                    ));
                }
                out.out(format!(
                    "  {} configurations, {} events, {} literal closes, {} Z3 calls, {} ms; bounded {} ms",
                    report.stats.configurations,
                    report.stats.events,
                    report.stats.literal,
                    report.stats.z3_calls,
                    report.stats.millis,
                    bounded_ms
                ));
            }
            Format::Json => {
                let j = JsonOut {
                    file: f,
                    report: &report,
                    diagnostics: diags
                        .iter()
                        .map(|d| render::to_json(d, &l.source))
                        .collect(),
                };
                out.out(serde_json::to_string(&j).unwrap_or_default());
            }
        }
    }
    if io {
        exit::USAGE
    } else if bad {
        exit::INPUT
    } else if unknown {
        exit::UNKNOWN
    } else {
        exit::OK
    }
}
