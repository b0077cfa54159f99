//! `collc sim FILE [--param NAME=V]... [--calls K] [--schedule S] ...`: run a
//! protocol in the simulator, or replay a counterexample the verifier printed.

use super::args::ParamArgs;
use crate::driver::load_or_report;
use crate::output::{exit, Output};
use crate::render::Style;
use collc_grammar::Source;
use collc_sim::{Budget, Memory, Schedule, SimConfig, Verdict};
use std::time::Duration;

/// Scheduler choice on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchedArg {
    /// One deterministic run, processes in turn.
    RoundRobin,
    /// `--runs` seeded random runs.
    Random,
    /// Every schedule (breadth-first, state hashing, shortest traces).
    Exhaustive,
}

/// Memory model on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemArg {
    /// Sequentially consistent.
    Sc,
    /// Buffered window writes and stale cached cells.
    Relaxed,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Verdict line, then findings with traces.
    Text,
    /// The report as JSON.
    Json,
}

/// Arguments of `collc sim`.
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// The protocol.
    pub file: String,
    /// Parameter values (`-P N`, `--param NAME=V`; every parameter the protocol declares).
    #[command(flatten)]
    pub params: ParamArgs,
    /// Reduction operator (`sum`, `max`, `min`, `prod`): one the protocol's `op` parameter
    /// lists (default: the first listed). A sum or product must see each contribution once,
    /// a maximum or minimum at least once.
    #[arg(long = "op", value_name = "OP")]
    pub op: Option<String>,
    /// Back-to-back calls through one signal buffer.
    #[arg(long, default_value_t = 3)]
    pub calls: usize,
    /// Scheduler.
    #[arg(long, value_enum, default_value = "exhaustive")]
    pub schedule: SchedArg,
    /// Seed of the first random run.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Random runs.
    #[arg(long, default_value_t = 100)]
    pub runs: u64,
    /// Memory model.
    #[arg(long, value_enum, default_value = "sc")]
    pub memory: MemArg,
    /// State budget of the exhaustive search.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_states: u64,
    /// Scheduler steps per run (round-robin, random); also the most iterations a nest of
    /// loops may run (a larger nest is refused before it runs).
    #[arg(long, default_value_t = 10_000_000)]
    pub max_steps: u64,
    /// Time budget in seconds.
    #[arg(long, default_value_t = 120.0)]
    pub max_time: f64,
    /// Iterations allowed for any one loop.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_trip: i64,
    /// Sticky polling (needs `--memory relaxed`): a blocked wait's poll may cache the
    /// failing value and keep re-reading it, so the wait hangs on a stale value.
    #[arg(long)]
    pub sticky_poll: bool,
    /// Wrap-around mode: run the last `--calls` calls the protocol may make before a
    /// monotonic (epoch) cell passes INT32_MAX (the last declared by `calls <= N`, or the
    /// ones around the call that wraps a cell when the protocol may run it), every cell
    /// at its value then, int32 arithmetic as on the hardware; use `--calls 4` or more.
    #[arg(long)]
    pub wrap: bool,
    /// Turn the partial-order reduction off (to cross-check it; explores more states).
    #[arg(long)]
    pub no_reduction: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also draw the first failing trace (or one round-robin run) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<String>,
}

fn line_of(src: &Source) -> impl Fn(collc_grammar::Span) -> Option<u32> + '_ {
    move |sp| Some(src.line_col(sp.start).0 as u32)
}

/// The options' combinations `collc sim` refuses (a usage error).
fn check_options(a: &SimArgs) -> Result<(), String> {
    if !(a.max_time.is_finite() && a.max_time > 0.0) {
        return Err("error: --max-time must be a positive number of seconds".into());
    }
    if a.sticky_poll && a.memory != MemArg::Relaxed {
        return Err(
            "error: --sticky-poll needs --memory relaxed (it is a cache hypothesis)".into(),
        );
    }
    Ok(())
}

/// The simulation the options ask for.
fn config(a: &SimArgs) -> SimConfig {
    SimConfig {
        calls: a.calls,
        memory: match a.memory {
            MemArg::Sc => Memory::Sc,
            MemArg::Relaxed => Memory::Relaxed,
        },
        schedule: match a.schedule {
            SchedArg::RoundRobin => Schedule::RoundRobin,
            SchedArg::Random => Schedule::Random {
                seed: a.seed,
                runs: a.runs,
            },
            SchedArg::Exhaustive => Schedule::Exhaustive,
        },
        budget: Budget {
            max_states: a.max_states,
            max_steps: a.max_steps,
            max_time: Duration::from_secs_f64(a.max_time),
            max_trip: a.max_trip,
        },
        reduce: !a.no_reduction,
        sticky_poll: a.sticky_poll,
        stop: None,
        wrap: a.wrap,
    }
}

/// Runs `collc sim`.
pub fn run(a: &SimArgs, style: Style, out: &mut Output) -> i32 {
    let mut l = match load_or_report(&a.file, style, out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Some(Err(m)) =
        a.op.as_ref()
            .map(|o| super::args::apply_op(o, &mut l.protocol))
    {
        out.err(format!("error: {m}"));
        return exit::USAGE;
    }
    let params = match a.params.resolve(&l.protocol) {
        Ok(p) => p,
        Err(m) => {
            out.err(format!("error: {m}"));
            return exit::USAGE;
        }
    };
    if let Err(m) = check_options(a) {
        out.err(m);
        return exit::USAGE;
    }
    let cfg = config(a);
    let mut report = match collc_sim::simulate(&l.protocol, &params, &cfg) {
        Ok(r) => r,
        Err(e) => {
            out.err(format!("error: {}: {e}", a.file));
            let names: Vec<String> = l
                .protocol
                .inputs()
                .iter()
                .map(|v| l.protocol.vars[*v].name.clone())
                .collect();
            out.err(format!(
                "  the protocol's parameters: {} (pass each as --param NAME=VALUE)",
                names.join(", ")
            ));
            return exit::INPUT;
        }
    };
    let line = line_of(&l.source);
    for f in &mut report.findings {
        for e in &mut f.trace {
            e.line = e.span.and_then(&line);
        }
    }
    if let Some(path) = &a.svg {
        let svg = match report.findings.first() {
            Some(f) => collc_sim::svg::render(&report, &f.trace, Some(f)),
            None => {
                let trace = collc_sim::explore::sample_trace(&l.protocol, &params, &cfg)
                    .unwrap_or_default();
                collc_sim::svg::render(&report, &trace, None)
            }
        };
        if let Err(e) = std::fs::write(path, svg) {
            out.err(format!("error: cannot write `{path}`: {e}"));
            return exit::USAGE;
        }
    }
    match a.format {
        Format::Text => out.out(report.to_text(&line)),
        Format::Json => match serde_json::to_string_pretty(&report) {
            Ok(s) => out.out(s),
            Err(e) => {
                out.err(format!("error: cannot serialise the report: {e}"));
                return exit::USAGE;
            }
        },
    }
    match report.verdict {
        Verdict::Pass => exit::OK,
        Verdict::Violated => exit::INPUT,
        Verdict::Incomplete => exit::UNKNOWN,
    }
}
