//! The decision table of a library holding several protocols of one kind: which protocol a
//! call runs, by the call's count and the communicator's P (compare Open MPI's tuned
//! decision rules). `collc tune` measures it on the machine (`super::tune`); `collc emit
//! --lib NAME --table FILE` packages it; the library compiles it in and its README shows it.
//!
//! The text form, one rule a line (`#` starts a comment):
//!
//! ```text
//! # kind P count protocol
//! allreduce 2 1 allreduce_allpairs
//! allreduce 2 65536 allreduce_mesh
//! ```
//!
//! A call of `kind` at P ranks and `count` elements (the kind's count argument) prefers the
//! protocol of the rule with the largest `count` not above the call's, among the rules of the
//! largest `P` not above the communicator's (the smallest `P` listed when every one is
//! above; the smallest `count` when every one is above). Without a rule, or when the
//! preferred protocol cannot serve the call (its domain, a `require`, its world limit), the
//! call runs the first protocol of the kind, in the order the files were given, that can.

/// One rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The collective kind (`allreduce`, `broadcast`, ...).
    pub kind: String,
    /// The world size it was measured at.
    pub p: i64,
    /// From this count on.
    pub count: i64,
    /// The protocol's collective name.
    pub protocol: String,
}

/// The rules, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// The rules.
    pub rules: Vec<Rule>,
}

impl Table {
    /// Parses the text form; the error names the line.
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut rules = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let num = |s: &str, what: &str| -> Result<i64, String> {
                s.parse::<i64>()
                    .ok()
                    .filter(|v| *v >= 1)
                    .ok_or_else(|| format!("line {}: {what} `{s}` is not an integer >= 1", i + 1))
            };
            let [kind, p, count, protocol] = f[..] else {
                return Err(format!(
                    "line {}: expected `KIND P COUNT PROTOCOL`, found `{line}`",
                    i + 1
                ));
            };
            rules.push(Rule {
                kind: kind.to_string(),
                p: num(p, "P")?,
                count: num(count, "count")?,
                protocol: protocol.to_string(),
            });
        }
        Ok(Table { rules })
    }

    /// The text form ([`Table::parse`] reads it back).
    pub fn text(&self) -> String {
        let mut s = String::from(
            "# collc decision table: KIND P COUNT PROTOCOL (from COUNT elements on, at P ranks)\n",
        );
        for r in &self.rules {
            s.push_str(&format!("{} {} {} {}\n", r.kind, r.p, r.count, r.protocol));
        }
        s
    }

    /// The rules of one kind.
    pub fn of<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Rule> + 'a {
        self.rules.iter().filter(move |r| r.kind == kind)
    }
}

/// The rules of one kind and P from measurements: `times` holds (count, protocol, time) of
/// one P; for each count (ascending) the fastest protocol, one rule where it changes.
pub fn rules_of(kind: &str, p: i64, times: &[(i64, String, f64)]) -> Vec<Rule> {
    let mut counts: Vec<i64> = times.iter().map(|t| t.0).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut rules: Vec<Rule> = Vec::new();
    for c in counts {
        let best = times
            .iter()
            .filter(|t| t.0 == c)
            .min_by(|a, b| a.2.total_cmp(&b.2));
        let Some((_, protocol, _)) = best else {
            continue;
        };
        if rules.last().is_some_and(|r| &r.protocol == protocol) {
            continue;
        }
        rules.push(Rule {
            kind: kind.to_string(),
            p,
            count: if rules.is_empty() { 1 } else { c },
            protocol: protocol.clone(),
        });
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_bad_lines_name_their_line() {
        let t = Table::parse("# c\nallreduce 2 1 a\n\nallreduce 2 4096 b # x\n").unwrap();
        assert_eq!(t.rules.len(), 2);
        assert_eq!(t.rules[1].protocol, "b");
        assert_eq!(Table::parse(&t.text()).unwrap(), t);
        let e = Table::parse("allreduce 2 1 a\nallreduce 0 1 a\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        assert!(Table::parse("allreduce 2 1")
            .unwrap_err()
            .contains("line 1"));
    }

    #[test]
    fn rules_change_where_the_fastest_protocol_changes() {
        let m = |c, p: &str, t| (c, p.to_string(), t);
        let times = [
            m(64, "a", 1.0),
            m(64, "b", 2.0),
            m(1024, "a", 1.5),
            m(1024, "b", 3.0),
            m(65536, "a", 9.0),
            m(65536, "b", 4.0),
        ];
        let r = rules_of("allreduce", 2, &times);
        let got: Vec<(i64, &str)> = r.iter().map(|r| (r.count, r.protocol.as_str())).collect();
        assert_eq!(got, vec![(1, "a"), (65536, "b")]);
    }
}
