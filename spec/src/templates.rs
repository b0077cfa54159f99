//! `collc new KIND NAME`: a starting protocol for each collective kind — the shipped
//! example of that kind (`examples/`, verified by the test suite as shipped), renamed,
//! under a header that says what to change and how to check each change.

/// One collective kind's starting point.
#[derive(Debug, Clone, Copy)]
pub struct Template {
    /// The collective kind (`allreduce`, `broadcast`, ...).
    pub kind: &'static str,
    /// The example it is taken from (`examples/<example>.coll`).
    pub example: &'static str,
    /// Its text.
    text: &'static str,
    /// What a user typically changes.
    change: &'static str,
}

/// Every kind, with the example it starts from.
pub const TEMPLATES: [Template; 10] = [
    Template {
        kind: "barrier",
        example: "barrier",
        text: include_str!("../../examples/barrier.coll"),
        change: "the rank domain (`ranks P in ...`); a barrier has no data, only the credit \
                 exchange and its epilogue reset",
    },
    Template {
        kind: "broadcast",
        example: "broadcast",
        text: include_str!("../../examples/broadcast.coll"),
        change: "the rank domain, the element count's domain (`param n`), TILE (elements per \
                 transfer: thresholds `>= t + 1` and the epilogue's `-= T` follow it), and the \
                 window's lifetime (`per call` or `reused`, LANGUAGE.md §5.8.1)",
    },
    Template {
        kind: "reduce",
        example: "reduce",
        text: include_str!("../../examples/reduce.coll"),
        change: "the rank domain, `n`'s domain, the reduction in the header (`sum`); the root \
                 reduces each peer's data once it has arrived and releases the peers only after \
                 a `fence` completes its remote reads",
    },
    Template {
        kind: "gather",
        example: "gather",
        text: include_str!("../../examples/gather.coll"),
        change: "the rank domain, the row length `m`, the windows' lifetimes (with `per call` \
                 windows the ready round can go, with its epilogue reset)",
    },
    Template {
        kind: "scatter",
        example: "scatter",
        text: include_str!("../../examples/scatter.coll"),
        change: "the rank domain, the row length `m`, the windows' lifetimes; the root leaves \
                 only after every peer has taken its row (`taken`)",
    },
    Template {
        kind: "allreduce",
        example: "allreduce_ring",
        text: include_str!("../../examples/allreduce_ring.coll"),
        change: "the rank domain, `n`'s domain (the ring needs `n % P == 0`), TILE, the \
                 reduction in the header (`sum`); every ring step has its own signal row, so \
                 the signal's first dimension and the epilogue's row loop change together",
    },
    Template {
        kind: "reduce_scatter",
        example: "reduce_scatter",
        text: include_str!("../../examples/reduce_scatter.coll"),
        change: "the rank domain, the row length `m`, TILE, the reduction (`sum`); the two \
                 barriers' thresholds (`>= 1`, `>= 2`) and the epilogue's `-= 2` change together",
    },
    Template {
        kind: "allgather",
        example: "allgather",
        text: include_str!("../../examples/allgather.coll"),
        change: "the rank domain, the row length, TILE, the windows' lifetimes",
    },
    Template {
        kind: "all_to_all",
        example: "all_to_all",
        text: include_str!("../../examples/all_to_all.coll"),
        change: "the rank domain, the block length, TILE, the windows' lifetimes",
    },
    Template {
        kind: "all_to_all_v",
        example: "all_to_all_v",
        text: include_str!("../../examples/all_to_all_v.coll"),
        change: "the rank domain, the row length `m`, the row bound `R`, the send counts' \
                 domain; the counts travel in a value signal (`as value`), written with `=`",
    },
];

/// Why no protocol was produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewError {
    /// Not a collective kind; the kinds are listed.
    UnknownKind(String),
    /// Not usable as a collective name.
    BadName(String),
}

impl std::fmt::Display for NewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NewError::UnknownKind(k) => {
                let kinds: Vec<&str> = TEMPLATES.iter().map(|t| t.kind).collect();
                write!(
                    f,
                    "`{k}` is not a collective kind; the kinds are {}",
                    kinds.join(", ")
                )
            }
            NewError::BadName(n) => write!(
                f,
                "`{n}` cannot name a collective: use letters, digits and `_`, starting with a \
                 letter, and not a keyword"
            ),
        }
    }
}

/// `text` as `// ` comment lines of at most 92 columns.
fn wrap(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("//");
    for w in text.split_whitespace() {
        if line.len() + 1 + w.len() > 92 && line.len() > 2 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("//");
        }
        line.push(' ');
        line.push_str(w);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The starting protocol of `kind`, named `name`.
pub fn new(kind: &str, name: &str) -> Result<String, NewError> {
    let t = TEMPLATES
        .iter()
        .find(|t| t.kind == kind)
        .ok_or_else(|| NewError::UnknownKind(kind.to_string()))?;
    let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(NewError::BadName(name.to_string()));
    }
    // The example's own header is replaced; its body (with its comments) is kept.
    let start = t
        .text
        .find("collective ")
        .ok_or_else(|| NewError::UnknownKind(kind.to_string()))?;
    let body = &t.text[start..];
    let colon = body
        .find(':')
        .ok_or_else(|| NewError::UnknownKind(kind.to_string()))?;
    let header = format!(
        "// {name}: a `{kind}` collective started by `collc new {kind} {name}` from collc's\n\
         // examples/{ex}.coll, which verifies as shipped (`collc verify {name}.coll` exits 0).\n\
         {change}\
         // After every change: `collc verify {name}.coll` (the gate), `collc sim {name}.coll -P 4`\n\
         // (replays a schedule), `collc run {name}.coll -P 4` (CPU threads), then\n\
         // `collc emit --target ascend {name}.coll`. The language: spec/LANGUAGE.md.\n",
        ex = t.example,
        change = wrap(&format!("What to change: {}.", t.change)),
    );
    let text = format!("{header}collective {name}{}", &body[colon..]);
    // A keyword (or anything else the grammar refuses) as the name.
    match crate::lowered(&text).protocol {
        Some(_) => Ok(text),
        None => Err(NewError::BadName(name.to_string())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_has_a_template() {
        for kind in crate::lower::kind_names() {
            assert!(
                super::TEMPLATES.iter().any(|t| t.kind == kind),
                "`collc new {kind}` has no template"
            );
        }
        assert_eq!(super::TEMPLATES.len(), crate::lower::kind_names().count());
    }
}
