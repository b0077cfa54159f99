//! The world sizes past the enumerated domain (`1..=enum_world_max` of the planner's table) where a protocol's
//! behaviour can change: where a guard or loop bound can change which ranks do what
//! (`me < 20`, `1..min(P, 20)`, `p * 3 < 50`, `if P < 21 { fence; }`). Those are the sizes
//! around the thresholds the protocol's literals form: `t - 1 ..= t + 2` for every literal
//! `t` of a comparison or expression that also reads a rank-valued quantity (the world
//! size, a rank, or what is computed from them: [`literals`]) and every sum, difference,
//! product and quotient of two of them, in the declared domain, up to the table's
//! `critical_max` ([`TABLE`]). A protocol whose literals are
//! all small (the usual 0, 1, 2) gets none and costs nothing more; a change of behaviour at
//! a size no literal names (a power of two of `me ^ d`, a literal past 256) is not looked
//! for. The enumerating obligations that cannot be proved with P symbolic (the pair-order
//! search, the `fence` obligation's enumerated route, and the credit obligations and
//! `value-signal` left `checked` by enumeration: `crate::obligations::past`) look at these sizes too.

use super::{declared_world, TABLE};
use collc_spec::ir::Protocol;
use std::collections::BTreeSet;

/// The sizes past the enumerated domain (module documentation), ascending, once each.
pub fn past_enumeration(p: &Protocol) -> Vec<i64> {
    let (lo, hi) = declared_world(p);
    let top = hi.min(TABLE.critical_max);
    let mut lits: Vec<i64> = literals(p)
        .into_iter()
        .filter(|t| t.abs() <= TABLE.critical_max)
        .collect();
    lits.sort_unstable();
    lits.dedup();
    let mut thresholds: Vec<i64> = lits.clone();
    for a in &lits {
        for b in &lits {
            thresholds.extend([a + b, a - b, a * b]);
            if *b != 0 {
                thresholds.push(a / b);
            }
        }
    }
    let mut extra: Vec<i64> = thresholds
        .into_iter()
        .flat_map(|t| t - 1..=t + 2)
        .filter(|w| *w > TABLE.enum_world_max && *w >= lo && *w <= top)
        .collect();
    extra.sort_unstable();
    extra.dedup();
    extra
}

/// `P = 19, 20, 21, 22` or `P = 19..=22, 38..=43`: the sizes, runs of consecutive ones
/// joined.
pub fn describe(p: &Protocol, worlds: &[i64]) -> String {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for w in worlds {
        match runs.last_mut() {
            Some((_, b)) if *b + 1 == *w => *b = *w,
            _ => runs.push((*w, *w)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|(a, b)| match b - a {
            0 => a.to_string(),
            1 => format!("{a}, {b}"),
            _ => format!("{a}..={b}"),
        })
        .collect();
    format!("{} = {}", p.var_name(p.world), parts.join(", "))
}

/// Every integer literal of the protocol's comparisons and expressions (`let`s,
/// `require`s, body and epilogue) that also read a rank-valued quantity: the world size, a
/// rank (`me`, a rank parameter, a loop over ranks), or a loop variable or `let` computed
/// from one. Read from the IR's serialised form. A literal only compared with element
/// counts (`min(n, 256)`, `8 * ceil(n / 8)`) cannot change which ranks do what, and names
/// no world size.
fn literals(p: &Protocol) -> Vec<i64> {
    let Ok(vars) = serde_json::to_value(&p.vars) else {
        return Vec::new();
    };
    let Ok(code) = serde_json::to_value((&p.requires, &p.body, &p.epilogue)) else {
        return Vec::new();
    };
    let ranked = rank_valued(p, &vars, &code);
    let mut out = Vec::new();
    units(&code, &mut |u| {
        if mentions(u, &ranked) {
            ints(u, &mut out);
        }
    });
    for v in vars.as_array().into_iter().flatten() {
        if let Some(d) = v.get("kind").and_then(|k| k.get("Derived")) {
            if mentions(d, &ranked) {
                ints(d, &mut out);
            }
        }
    }
    out
}

/// The names of an expression's variant, as serialised.
const EXPR_KEYS: [&str; 11] = [
    "Int", "Var", "Array", "Neg", "Bin", "CeilDiv", "Min", "Max", "Rank", "Log2", "Pow2",
];

/// Calls `f` with every comparison and every outermost expression under `v`.
fn units(v: &serde_json::Value, f: &mut dyn FnMut(&serde_json::Value)) {
    match v {
        serde_json::Value::Object(m) => {
            let single = (m.len() == 1).then(|| m.keys().next()).flatten();
            match single.map(String::as_str) {
                Some("Cmp") => f(v),
                Some(k) if EXPR_KEYS.contains(&k) => f(v),
                _ => m.values().for_each(|x| units(x, f)),
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| units(x, f)),
        _ => {}
    }
}

/// Every `Int` literal under `v`.
fn ints(v: &serde_json::Value, out: &mut Vec<i64>) {
    super::probe::walk(v, &mut |k, x| {
        if let ("Int", Some(n)) = (k, x.as_i64()) {
            out.push(n);
        }
    });
}

/// Whether `v` reads one of the variables `set`.
fn mentions(v: &serde_json::Value, set: &BTreeSet<u64>) -> bool {
    match v {
        serde_json::Value::Object(m) => m.iter().any(|(k, x)| match (k.as_str(), x.as_u64()) {
            ("Var", Some(id)) => set.contains(&id),
            _ => mentions(x, set),
        }),
        serde_json::Value::Array(a) => a.iter().any(|x| mentions(x, set)),
        _ => false,
    }
}

/// The rank-valued variables: the world size and every variable of rank type, then, to a
/// fixpoint, the loop variables whose range and the `let`s (statement-level or top-level)
/// whose value reads one.
fn rank_valued(p: &Protocol, vars: &serde_json::Value, code: &serde_json::Value) -> BTreeSet<u64> {
    let mut set: BTreeSet<u64> = BTreeSet::from([p.world as u64]);
    for (i, v) in vars.as_array().into_iter().flatten().enumerate() {
        if v.get("ty").and_then(|t| t.as_str()) == Some("Rank") {
            set.insert(i as u64);
        }
    }
    loop {
        let before = set.len();
        for (i, v) in vars.as_array().into_iter().flatten().enumerate() {
            if let Some(d) = v.get("kind").and_then(|k| k.get("Derived")) {
                if mentions(d, &set) {
                    set.insert(i as u64);
                }
            }
        }
        bound_vars(code, &mut set);
        if set.len() == before {
            return set;
        }
    }
}

/// Adds the `for` and `let` variables under `v` whose range or value reads `set`.
fn bound_vars(v: &serde_json::Value, set: &mut BTreeSet<u64>) {
    match v {
        serde_json::Value::Object(m) => {
            for key in ["For", "Let"] {
                let Some(s) = m.get(key) else { continue };
                let from = s.get(if key == "For" { "range" } else { "value" });
                let var = s.get("var").and_then(|x| x.as_u64());
                if let (Some(from), Some(var)) = (from, var) {
                    if mentions(from, set) {
                        set.insert(var);
                    }
                }
            }
            m.values().for_each(|x| bound_vars(x, set));
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| bound_vars(x, set)),
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The protocol of a test case's text.
    pub(crate) fn protocol(text: &str) -> Protocol {
        crate::validate(text).protocol.expect("the case validates")
    }

    #[test]
    fn runs_of_sizes_are_joined() {
        let p = protocol("collective c: barrier() { ranks P in 1..=64; signal s[1]; body { } }");
        assert_eq!(
            describe(&p, &[19, 20, 21, 22, 40, 41, 60]),
            "P = 19..=22, 40, 41, 60"
        );
    }

    const GUARDED: &str = "collective c: barrier() {
        ranks P in 1..=65536;
        signal s[1];
        body { if P < 21 { fence; } }
    }";

    #[test]
    fn a_literal_guard_names_the_sizes_around_it() {
        let w = past_enumeration(&protocol(GUARDED));
        for x in [20, 21, 22, 23] {
            assert!(w.contains(&x), "{x} in {w:?}");
        }
        assert!(w
            .iter()
            .all(|x| *x > TABLE.enum_world_max && *x <= TABLE.critical_max));
        // a domain that ends below the threshold names none of them
        let small = protocol(&GUARDED.replace("65536", "16"));
        assert!(past_enumeration(&small).is_empty());
    }
}
