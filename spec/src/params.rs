//! Parameter values from the command line: the one parser of `--param NAME=VALUE` and of
//! a world size given apart (`-P N`, `-np N`), with the same rules for every subcommand.
//! Binding the values (domains, `require`s, defaults) is [`crate::eval::bind`].

use crate::ir::Protocol;
use std::collections::BTreeMap;
use std::fmt;

/// Why parameter arguments were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamError {
    /// Not of the form `NAME=VALUE`.
    Syntax(String),
    /// The value is not an integer.
    Value {
        /// The whole argument.
        arg: String,
        /// The value part.
        value: String,
    },
    /// A name given twice.
    Twice(String),
    /// `-P N` and `--param P=M` with `N != M`.
    WorldContradiction {
        /// The world size's name.
        name: String,
        /// From `-P`/`-np`.
        ranks: i64,
        /// From `--param`.
        param: i64,
    },
    /// The protocol declares no such parameter.
    Unknown {
        /// The name given.
        name: String,
        /// What the protocol declares.
        declared: Vec<String>,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::Syntax(a) => write!(f, "`--param {a}`: expected NAME=VALUE"),
            ParamError::Value { arg, value } => {
                write!(f, "`--param {arg}`: `{value}` is not an integer")
            }
            ParamError::Twice(n) => write!(f, "`--param {n}` is given twice"),
            ParamError::WorldContradiction { name, ranks, param } => {
                write!(f, "-P/-np {ranks} contradicts --param {name}={param}")
            }
            ParamError::Unknown { name, declared } => write!(
                f,
                "the protocol has no parameter `{name}` (it declares: {})",
                declared.join(", ")
            ),
        }
    }
}

impl std::error::Error for ParamError {}

/// Parses one `NAME=VALUE`: the name trimmed and non-empty, the value a decimal integer
/// (optionally signed, `_` allowed between digits: `1_048_576`).
pub fn parse(arg: &str) -> Result<(String, i64), ParamError> {
    let (k, v) = arg
        .split_once('=')
        .ok_or_else(|| ParamError::Syntax(arg.to_string()))?;
    let name = k.trim();
    if name.is_empty() {
        return Err(ParamError::Syntax(arg.to_string()));
    }
    let digits = v.trim().replace('_', "");
    let value = digits.parse::<i64>().map_err(|_| ParamError::Value {
        arg: arg.to_string(),
        value: v.trim().to_string(),
    })?;
    Ok((name.to_string(), value))
}

/// Parses every `--param` argument, merges the world size given apart (`-P`/`-np`) and
/// checks each name is a parameter `p` declares (world size included). A name given
/// twice or a world size given two ways with different values is refused.
pub fn resolve<S: AsRef<str>>(
    p: &Protocol,
    args: &[S],
    ranks: Option<i64>,
) -> Result<BTreeMap<String, i64>, ParamError> {
    let mut m = BTreeMap::new();
    for a in args {
        let (k, v) = parse(a.as_ref())?;
        if m.insert(k.clone(), v).is_some() {
            return Err(ParamError::Twice(k));
        }
    }
    let declared: Vec<String> = p.inputs().iter().map(|v| p.vars[*v].name.clone()).collect();
    if let Some(name) = m.keys().find(|k| !declared.contains(k)) {
        return Err(ParamError::Unknown {
            name: name.clone(),
            declared,
        });
    }
    if let Some(n) = ranks {
        let world = p.vars[p.world].name.clone();
        match m.insert(world.clone(), n) {
            Some(old) if old != n => {
                return Err(ParamError::WorldContradiction {
                    name: world,
                    ranks: n,
                    param: old,
                })
            }
            _ => {}
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn barrier() -> Protocol {
        let text = "collective b: barrier() {\n    ranks P in 1..=8;\n    param n: int in 1..=100;\n    signal sig[P];\n    body {\n        for q in peers { notify sig[me] @ q += 1; }\n        for q in peers { wait sig[q] >= 1; }\n    }\n    epilogue {\n        for q in peers { notify sig[q] -= 1; }\n    }\n}\n";
        let c = crate::lowered(text);
        c.protocol.unwrap_or_else(|| panic!("{:?}", c.diagnostics))
    }

    #[test]
    fn one_rule_set() {
        assert_eq!(parse(" n = 1_000 "), Ok(("n".into(), 1000)));
        assert_eq!(parse("n=-3"), Ok(("n".into(), -3)));
        assert!(matches!(parse("n"), Err(ParamError::Syntax(_))));
        assert!(matches!(parse("=3"), Err(ParamError::Syntax(_))));
        assert!(matches!(parse("n=x"), Err(ParamError::Value { .. })));
        let p = barrier();
        let m = resolve(&p, &["n=4"], Some(2)).expect("valid");
        assert_eq!(m.get("P"), Some(&2));
        assert_eq!(m.get("n"), Some(&4));
        assert_eq!(resolve(&p, &["P=2"], Some(2)).map(|m| m.len()), Ok(1));
        assert!(matches!(
            resolve(&p, &["P=3"], Some(2)),
            Err(ParamError::WorldContradiction { .. })
        ));
        assert!(matches!(
            resolve(&p, &["n=1", "n=1"], None),
            Err(ParamError::Twice(_))
        ));
        assert!(matches!(
            resolve(&p, &["Q=1"], None),
            Err(ParamError::Unknown { .. })
        ));
    }
}
