//! `collc cost FILE [--param P=8 --param n=1048576 ...] [--format text|json]`: remote
//! atomics, local notifies, waits and fences per call (all ranks and blocks together),
//! as formulas in P and, when every parameter is given, as numbers.

use super::args::ParamArgs;
use crate::driver::load_or_report;
use crate::output::{exit, Output};
use crate::render::Style;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table.
    Text,
    /// JSON.
    Json,
}

/// Arguments of `collc cost`.
#[derive(clap::Args, Debug, Clone)]
pub struct CostArgs {
    /// The file.
    pub file: String,
    /// Parameter values (`-P N`, `--param NAME=V`; any subset).
    #[command(flatten)]
    pub params: ParamArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// `1234567` as `1,234,567`.
pub fn thousands(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Prints the cost model.
pub fn run(args: &CostArgs, style: Style, out: &mut Output) -> i32 {
    let l = match load_or_report(&args.file, style, out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let given = match args.params.resolve(&l.protocol) {
        Ok(m) => m,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    let c = match collc_verifier::cost::cost(&l.protocol, &given) {
        Ok(c) => c,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    match args.format {
        Format::Json => out.out(serde_json::to_string(&c).unwrap_or_default()),
        Format::Text => {
            let ps: Vec<String> = given.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            out.out(format!(
                "cost of {} per call (all ranks and blocks){}",
                c.protocol,
                if ps.is_empty() {
                    String::new()
                } else {
                    format!(", at {}", ps.join(", "))
                }
            ));
            let w = c.rows.iter().map(|r| r.formula.len()).max().unwrap_or(0);
            for r in &c.rows {
                let v = r
                    .value
                    .map_or(String::new(), |v| format!("  = {}", thousands(v)));
                out.out(format!("  {:<15} {:<w$}{v}", r.what, r.formula).trim_end());
            }
        }
    }
    exit::OK
}
