//! Arguments several subcommands share, parsed one way: parameter values
//! (`-P`/`-np`/`--param`, resolved by `collc_spec::params`), the verifier's budgets
//! (`collc verify`, and the gate of `collc emit`/`collc run`), and the gate's
//! `--allow-unverified`.

use collc_grammar::Source;
use collc_spec::ir::{ElemType, Protocol, ReduceOp};
use collc_spec::Validated;
use collc_verifier::bounded::BoundedOptions;
use collc_verifier::planning::TABLE;
use std::collections::BTreeMap;
use std::time::Duration;

/// Parameter values: `--param NAME=V` (repeatable) and the world size apart.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ParamArgs {
    /// World size (ranks); same as `--param P=N` for a protocol whose world size is `P`.
    #[arg(short = 'P', long = "ranks", visible_alias = "np", value_name = "N")]
    pub ranks: Option<i64>,
    /// A parameter value, e.g. `--param n=1000` (repeatable; `_` may separate digits).
    #[arg(long = "param", value_name = "NAME=V")]
    pub params: Vec<String>,
}

impl ParamArgs {
    /// The values by name (world size included), checked against what `p` declares.
    pub fn resolve(&self, p: &Protocol) -> Result<BTreeMap<String, i64>, String> {
        collc_spec::params::resolve(p, &self.params, self.ranks).map_err(|e| e.to_string())
    }
}

/// The element type and reduction operator a command instantiates a protocol at.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ElemArg {
    /// Element type (`f32`, `f64`, `i32`, `i64`): one the protocol's `type` parameter lists
    /// (default: the first listed), or the type its buffers are declared with.
    #[arg(long = "elem", value_name = "TYPE")]
    pub elem: Option<String>,
    /// Reduction operator (`sum`, `max`, `min`, `prod`): one the protocol's `op` parameter
    /// lists (default: the first listed), or the one its header names.
    #[arg(long = "op", value_name = "OP")]
    pub op: Option<String>,
}

impl ElemArg {
    /// Sets `p`'s element type and operator; one the protocol does not declare is an error.
    pub fn apply(&self, p: &mut Validated) -> Result<(), String> {
        if let Some(name) = &self.op {
            apply_op(name, p)?;
        }
        let Some(name) = &self.elem else {
            return Ok(());
        };
        let t = ElemType::from_name(name)
            .ok_or_else(|| format!("--elem {name}: not an element type (f32, f64, i32, i64)"))?;
        let declared: Vec<&str> = p.elem_types().iter().map(|t| t.as_str()).collect();
        *p = p.with_elem(t).ok_or_else(|| {
            format!(
                "--elem {name}: the protocol is declared for {} only",
                declared.join(", ")
            )
        })?;
        Ok(())
    }
}

/// Sets `p`'s reduction operator (`--op NAME`); one the protocol does not declare is an
/// error.
pub fn apply_op(name: &str, p: &mut Validated) -> Result<(), String> {
    let o = ReduceOp::from_name(name)
        .ok_or_else(|| format!("--op {name}: not an operator (sum, max, min, prod)"))?;
    let declared: Vec<&str> = p.reduce_ops().iter().map(|o| o.as_str()).collect();
    *p = p.with_op(o).ok_or_else(|| match declared.is_empty() {
        true => format!("--op {name}: the protocol does not reduce"),
        false => format!(
            "--op {name}: the protocol is declared for {} only",
            declared.join(", ")
        ),
    })?;
    Ok(())
}

/// The verifier's budgets: the same flags, defaults and meaning for `collc verify` and
/// for the gate of `collc emit` / `collc run`.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyOptArgs {
    /// Wall-clock safety cap of each symbolic obligation (and of the P-symbolic route) in
    /// milliseconds; past it the obligation is `unknown` (each Z3 query is limited by Z3's
    /// deterministic resource limit, not by the clock).
    #[arg(long, default_value_t = TABLE.timeout_ms)]
    pub timeout_ms: u64,
    /// Wall-clock budget of the bounded obligations (simulator) per file, in milliseconds.
    /// Bounds that do not complete in it fall back to smaller ones, stated in the report.
    #[arg(long, default_value_t = TABLE.bounded_budget_ms)]
    pub bounded_budget_ms: u64,
    /// Distinct states per parameter assignment before a bounded attempt falls back.
    #[arg(long, default_value_t = TABLE.bounded_max_states)]
    pub bounded_max_states: u64,
    /// Skip the bounded obligations (reported as `skipped`: undecided, so `verify` exits 3
    /// and the gate refuses unless `--allow-unverified`).
    #[arg(long)]
    pub no_bounded: bool,
}

impl VerifyOptArgs {
    /// The verifier's options for one file.
    pub fn options<'a>(&self, source: &'a Source) -> collc_verifier::Options<'a> {
        let mut o = collc_verifier::Options::for_source(source);
        o.symbolic.timeout_ms = self.timeout_ms;
        o.bounded = (!self.no_bounded).then(|| BoundedOptions {
            budget: Duration::from_millis(self.bounded_budget_ms),
            max_states: self.bounded_max_states,
            ..BoundedOptions::cli()
        });
        o
    }
}

/// The verifier gate of a command that produces code (`emit`, `run`).
#[derive(Debug, Clone, clap::Args)]
pub struct GateArgs {
    /// Produce code even if the verifier does not show the protocol safe (a violated,
    /// unknown or skipped obligation); stamped into what is produced.
    #[arg(long)]
    pub allow_unverified: bool,
    /// The verifier's budgets.
    #[command(flatten)]
    pub verify: VerifyOptArgs,
}
