//! `collc opt FILE --pass NAME[=K] ... [-o OUT.coll]`: a verified transformation of a
//! protocol (`collc_verifier::opt`): the passes rewrite the source, the result goes through
//! the same gate as `collc emit`, and what is written is readable `.coll` with a header
//! saying what changed and `collc cost` before and after (at the given parameters, if any).

use super::args::{GateArgs, ParamArgs};
use crate::driver::{load_or_report, Loaded};
use crate::output::{exit, Output};
use crate::render::{gate::Action, Style};
use collc_grammar::Source;
use collc_verifier::opt::{self, Pass};

/// Arguments of `collc opt`.
#[derive(clap::Args, Debug, Clone)]
pub struct OptArgs {
    /// The protocol.
    pub file: String,
    /// A pass, in order (`coalesce=K`: one credit round per K tiles; `implied-waits`: waits
    /// another wait implies removed; `aggregate-notifies`: notifies of one cell and target
    /// merged; `depth=D`: a credit window of D slots; `put` / `get`: one rank's data pushed by
    /// it / pulled by the others).
    #[arg(long = "pass", value_name = "NAME[=K]", required = true)]
    pub passes: Vec<String>,
    /// Where to write the result (default: stdout).
    #[arg(short, long, value_name = "OUT.coll")]
    pub output: Option<String>,
    /// Parameter values for the cost figures in the header (`-P N`, `--param NAME=V`).
    #[command(flatten)]
    pub params: ParamArgs,
    /// The verifier gate of the result.
    #[command(flatten)]
    pub gate: GateArgs,
}

/// Runs `collc opt`.
pub fn run(args: &OptArgs, style: Style, out: &mut Output) -> i32 {
    let mut passes = Vec::new();
    for p in &args.passes {
        match Pass::parse(p) {
            Ok(p) => passes.push(p),
            Err(e) => {
                out.err(format!("error: --pass {p}: {e}"));
                return exit::USAGE;
            }
        }
    }
    let l = match load_or_report(&args.file, style, out) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let applied = match opt::apply(&l.source.text, &passes) {
        Ok(a) => a,
        Err(r) => {
            out.err(format!(
                "error: pass `{}` refused on `{}`: {}",
                r.pass, l.source.name, r.reason
            ));
            return exit::INPUT;
        }
    };
    let command = format!(
        "collc opt {} {}",
        l.source.name,
        passes
            .iter()
            .map(|p| format!("--pass {}", p.spelled()))
            .collect::<Vec<_>>()
            .join(" ")
    );
    // The text verified is the text written without its header (comment lines only), so
    // the gate's line numbers are the input file's.
    for c in &applied.changes {
        out.err(c);
    }
    // Not a file until the gate passes: the name says so in the gate's messages.
    let name = format!("{} after {}", l.source.name, args.passes.join(" "));
    let after = match lowered(&name, &applied.text, style, out) {
        Ok(a) => a,
        Err(code) => return code,
    };
    finish(args, &l, &after, &command, &applied, style, out)
}

/// Lowers the transformed text (it must: the passes keep the syntax).
fn lowered(name: &str, text: &str, style: Style, out: &mut Output) -> Result<Loaded, i32> {
    let source = Source::new(name, text.to_string());
    let checked = collc_spec::front(&collc_verifier::Ranges, text);
    match checked.protocol {
        Some(protocol) => Ok(Loaded {
            source,
            protocol,
            warnings: Vec::new(),
        }),
        None => {
            out.diagnostics(&source, &checked.diagnostics, style);
            out.err(
                "error: the transformed protocol does not validate (see above); nothing written",
            );
            Err(exit::INPUT)
        }
    }
}

/// Gate, cost before and after, header, write.
fn finish(
    args: &OptArgs,
    before: &Loaded,
    after: &Loaded,
    command: &str,
    applied: &opt::Applied,
    style: Style,
    out: &mut Output,
) -> i32 {
    let gate = match super::gate::check(after, &args.gate, Action::Opt, style, out) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let costs = args.params.resolve(&before.protocol).and_then(|given| {
        let b = collc_verifier::cost::cost(&before.protocol, &given)?;
        let a = collc_verifier::cost::cost(&after.protocol, &given)?;
        Ok((b, a))
    });
    let (cb, ca) = match costs {
        Ok(c) => c,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    let stamp = if gate.stamp.is_empty() {
        "the gate passed (every obligation proved or checked)".to_string()
    } else {
        format!("NOT SAFE (--allow-unverified): {}", gate.stamp.join("; "))
    };
    let text = format!(
        "{}{}",
        opt::header(command, &applied.changes, &cb, &ca, &stamp),
        applied.text
    );
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &text) {
                out.err(format!("error: cannot write {path}: {e}"));
                return exit::USAGE;
            }
            out.err(format!("wrote {path}"));
        }
        None => out.out(text.trim_end()),
    }
    exit::OK
}
