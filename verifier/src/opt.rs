//! `collc opt`: transformations of a protocol's source whose result is again a `.coll`
//! file, re-verified by the caller's gate before it is written.
//!
//! Six passes: waits another wait implies removed (`implied-waits`) and notifies of one
//! cell and target aggregated (`aggregate-notifies`), both in `opt/signals.rs`; a credit
//! window deepened (`depth=D`, `opt/depth.rs`); gets from one rank turned into its puts and
//! back (`put`, `get`, `opt/transfer.rs`); and tile coalescing (`coalesce=K`): the tile constant `const TILE = E;`
//! becomes `const TILE = E * K;`, so every loop over `TILE`-element tiles makes one credit
//! round (its notifies and waits) per K tiles of the original, and every tile buffer sized
//! by `TILE` grows K-fold. The pass is refused, with the reason, where that would change
//! more than the tile size: a protocol without `const TILE`, or one whose `require`s,
//! parameter or world-size domains or signal shapes name `TILE` (coalescing would change
//! which inputs the protocol accepts or the layout of its signals). Whatever else depends
//! on the tile size (a threshold written with the literal tile size, a buffer of a literal
//! size that a tile is copied into) is left to the gate: the result is verified like any
//! other protocol, and a result the gate refuses is not written
//! (`collc/tests/opt.rs`, `collc/tests/opt/`).

mod depth;
mod signals;
mod transfer;

use crate::cost::CostReport;
use collc_grammar::ast::{File, ItemKind};

/// The largest factor `coalesce=K` takes.
pub const MAX_FACTOR: i64 = 1 << 16;

/// One transformation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// `coalesce=K`: one credit round per K tiles (the tile constant times K).
    Coalesce(i64),
    /// `implied-waits`: waits another wait already implies removed (`signals`).
    ImpliedWaits,
    /// `aggregate-notifies`: notifies of one cell and target merged (`signals`).
    AggregateNotifies,
    /// `depth=D`: a credit window of K slots deepened to D (`depth`).
    Depth(i64),
    /// `put`: gets from one rank become its puts (`transfer`).
    Put,
    /// `get`: one rank's puts become gets by the others (`transfer`).
    Get,
}

impl Pass {
    /// Parses `NAME[=K]` (`coalesce=K`).
    pub fn parse(s: &str) -> Result<Pass, String> {
        let (name, arg) = match s.split_once('=') {
            Some((n, a)) => (n.trim(), Some(a.trim())),
            None => (s.trim(), None),
        };
        match name {
            "coalesce" => {
                let Some(a) = arg else {
                    return Err(
                        "`coalesce` needs its factor: --pass coalesce=K (K tiles per credit round)"
                            .into(),
                    );
                };
                match a.parse::<i64>() {
                    Ok(k) if (2..=MAX_FACTOR).contains(&k) => Ok(Pass::Coalesce(k)),
                    _ => Err(format!(
                        "coalesce={a}: K must be an integer in 2..={MAX_FACTOR}"
                    )),
                }
            }
            "depth" => match arg.map(str::parse::<i64>) {
                Some(Ok(d)) if (1..=depth::MAX_DEPTH).contains(&d) => Ok(Pass::Depth(d)),
                Some(_) => Err(format!(
                    "depth={}: D must be an integer in 1..={}",
                    arg.unwrap_or_default(),
                    depth::MAX_DEPTH
                )),
                None => Err(
                    "`depth` needs the window's depth: --pass depth=D (D slots in flight)".into(),
                ),
            },
            "implied-waits" if arg.is_none() => Ok(Pass::ImpliedWaits),
            "aggregate-notifies" if arg.is_none() => Ok(Pass::AggregateNotifies),
            "put" if arg.is_none() => Ok(Pass::Put),
            "get" if arg.is_none() => Ok(Pass::Get),
            "implied-waits" | "aggregate-notifies" | "put" | "get" => {
                Err(format!("`{name}` takes no argument"))
            }
            _ => Err(format!(
                "unknown pass `{name}` (known: coalesce=K, implied-waits, aggregate-notifies, depth=D, put, get)"
            )),
        }
    }

    /// As written on the command line.
    pub fn spelled(&self) -> String {
        match self {
            Pass::Coalesce(k) => format!("coalesce={k}"),
            Pass::ImpliedWaits => "implied-waits".into(),
            Pass::AggregateNotifies => "aggregate-notifies".into(),
            Pass::Depth(d) => format!("depth={d}"),
            Pass::Put => "put".into(),
            Pass::Get => "get".into(),
        }
    }
}

/// A pass refused: which, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The pass as written.
    pub pass: String,
    /// Why it does not apply.
    pub reason: String,
}

/// The transformed text and one line per change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new source (without the header).
    pub text: String,
    /// What each pass changed.
    pub changes: Vec<String>,
}

/// Applies the passes in order to `source` (a protocol that lowers without errors).
pub fn apply(source: &str, passes: &[Pass]) -> Result<Applied, Refusal> {
    let mut text = source.to_string();
    let mut changes = Vec::new();
    for pass in passes {
        let refuse = |reason: String| Refusal {
            pass: pass.spelled(),
            reason,
        };
        let file = collc_grammar::parse(&text)
            .map_err(|_| refuse("the protocol does not parse".to_string()))?;
        let (next, change) = match pass {
            Pass::Coalesce(k) => coalesce(&text, &file, *k),
            Pass::ImpliedWaits => signals::implied_waits(&text),
            Pass::AggregateNotifies => signals::aggregate_notifies(&text),
            Pass::Depth(d) => depth::depth(&text, &file, *d),
            Pass::Put => transfer::transfers(&text, &file, transfer::Way::Put),
            Pass::Get => transfer::transfers(&text, &file, transfer::Way::Get),
        }
        .map_err(refuse)?;
        text = next;
        changes.push(change);
    }
    Ok(Applied { text, changes })
}

/// The tile constant's name.
const TILE: &str = "TILE";

/// 1-based line of byte offset `at`.
fn line(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// Whether `text` names `name` as a whole word.
fn names(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(name).any(|(i, _)| {
        let j = i + name.len();
        (i == 0 || !word(b[i - 1])) && (j >= b.len() || !word(b[j]))
    })
}

/// Refuses (`doing` says what the pass does) when a `require`, a parameter's or the world
/// size's domain or a signal's shape names the constant `name`: changing it would change
/// which inputs the protocol accepts or how its signals are laid out.
fn fixed_by(text: &str, file: &File, name: &str, doing: &str) -> Result<(), String> {
    for item in &file.items {
        let written = &text[item.span.start..item.span.end];
        let what = match &item.kind {
            ItemKind::Require(_) => "a `require`",
            ItemKind::Param { .. } => "a parameter's domain",
            ItemKind::Ranks { .. } => "the world size's domain",
            ItemKind::Signal { .. } => "a signal's shape",
            _ => continue,
        };
        if names(written, name) {
            return Err(format!(
                "{what} names {name} (`{}`): {doing} would change which inputs the protocol accepts or how its signals are laid out",
                written.trim()
            ));
        }
    }
    Ok(())
}

fn coalesce(text: &str, file: &File, k: i64) -> Result<(String, String), String> {
    fixed_by(text, file, TILE, "coalescing")?;
    let value = file.items.iter().find_map(|item| match &item.kind {
        ItemKind::Const { name, value: v } if name.name == TILE => Some(v.span),
        _ => None,
    });
    let Some(span) = value else {
        return Err(format!(
            "the protocol has no `const {TILE}`: the pass coalesces the loops over {TILE}-element tiles"
        ));
    };
    let old = text[span.start..span.end].trim().to_string();
    let new = format!("{old} * {k}");
    let out = format!("{}{}{}", &text[..span.start], new, &text[span.end..]);
    let change = format!(
        "coalesce={k}: `const {TILE} = {old};` became `const {TILE} = {new};` (one credit round per {k} tiles of the original; every {TILE}-sized tile {k}x larger)"
    );
    Ok((out, change))
}

/// The header of the output: the command, what changed, `collc cost` before and after,
/// and the gate's stamp of the result.
pub fn header(
    command: &str,
    changes: &[String],
    before: &CostReport,
    after: &CostReport,
    stamp: &str,
) -> String {
    let mut h = format!("// Generated by `{command}`.\n");
    for c in changes {
        h.push_str(&format!("// {c}\n"));
    }
    let at: Vec<String> = after
        .params
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    h.push_str(&format!(
        "// collc cost per call (all ranks and blocks){}, before -> after:\n",
        if at.is_empty() {
            String::new()
        } else {
            format!(" at {}", at.join(", "))
        }
    ));
    for (b, a) in before.rows.iter().zip(&after.rows) {
        let show = |r: &crate::cost::CostRow| match r.value {
            Some(v) => format!("{} = {v}", r.formula),
            None => r.formula.clone(),
        };
        h.push_str(&format!("//   {}: {} -> {}\n", b.what, show(b), show(a)));
    }
    h.push_str(&format!("// Re-verified: {stamp}\n\n"));
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_passes() {
        assert_eq!(Pass::parse("coalesce=16"), Ok(Pass::Coalesce(16)));
        assert!(Pass::parse("coalesce").is_err());
        assert!(Pass::parse("coalesce=1").is_err());
        assert!(Pass::parse("coalesce=x").is_err());
        assert!(Pass::parse("unroll=2").is_err());
        assert_eq!(Pass::parse("implied-waits"), Ok(Pass::ImpliedWaits));
        assert!(Pass::parse("implied-waits=2").is_err());
        assert_eq!(
            Pass::parse("aggregate-notifies"),
            Ok(Pass::AggregateNotifies)
        );
        assert_eq!(Pass::parse("depth=4"), Ok(Pass::Depth(4)));
        assert!(Pass::parse("depth").is_err());
        assert!(Pass::parse("depth=0").is_err());
        assert!(Pass::parse("depth=65").is_err());
    }

    #[test]
    fn whole_words_only() {
        assert!(names("require n % TILE == 0;", TILE));
        assert!(!names("require n % TILES == 0;", TILE));
        assert!(!names("signal MY_TILE[P];", TILE));
    }
}
