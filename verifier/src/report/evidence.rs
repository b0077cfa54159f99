//! How an obligation's status was shown, as data: the world sizes proved with P symbolic,
//! by enumeration or vacuously, whether a bounded search explored its instances
//! completely, and the counterexample with its replay. Every route that decides an
//! obligation records what it showed here, the routes' records are joined by one rule
//! ([`Evidence::join`]: componentwise union, the smallest counterexample), and what reads
//! how something was proved reads this, never the report's prose.

use crate::report::{Finding, ParamValue, Status, WorldRange};
use serde::Serialize;

/// A set of world sizes: sorted, disjoint ranges, adjacent ones merged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Worlds(Vec<WorldRange>);

impl Worlds {
    /// No world size.
    pub fn none() -> Self {
        Worlds(Vec::new())
    }
    /// The world sizes `lo..=hi` (none when `lo > hi`).
    pub fn range(lo: i64, hi: i64) -> Self {
        Worlds::of(WorldRange { lo, hi })
    }
    /// The world sizes of `r`.
    pub fn of(r: WorldRange) -> Self {
        if r.lo > r.hi {
            Worlds::none()
        } else {
            Worlds(vec![r])
        }
    }
    /// The ranges, ascending.
    pub fn ranges(&self) -> &[WorldRange] {
        &self.0
    }
    /// No world size at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Every world size of either.
    pub fn union(&self, other: &Worlds) -> Worlds {
        let mut all: Vec<WorldRange> = self.0.iter().chain(&other.0).copied().collect();
        all.sort_by_key(|r| (r.lo, r.hi));
        let mut out: Vec<WorldRange> = Vec::with_capacity(all.len());
        for r in all {
            match out.last_mut() {
                Some(last) if r.lo <= last.hi.saturating_add(1) => last.hi = last.hi.max(r.hi),
                _ => out.push(r),
            }
        }
        Worlds(out)
    }
    /// Whether every world size of `r` is in the set.
    pub fn covers(&self, r: WorldRange) -> bool {
        r.lo > r.hi || self.0.iter().any(|x| x.lo <= r.lo && r.hi <= x.hi)
    }
    /// Whether `w` is in the set.
    pub fn contains(&self, w: i64) -> bool {
        self.0.iter().any(|x| x.lo <= w && w <= x.hi)
    }
}

/// A counterexample: its parameter values (the world size first) and, for one a bounded
/// search found, the `collc sim` command that replays it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counterexample {
    /// Parameter values.
    pub params: Vec<ParamValue>,
    /// `collc sim FILE ...` replaying the run, when there is one.
    pub replay: Option<String>,
}

impl Counterexample {
    /// Its parameter values as `P=3, n=2`.
    pub fn values(&self) -> String {
        let at: Vec<String> = self
            .params
            .iter()
            .map(|v| format!("{}={}", v.name, v.value))
            .collect();
        at.join(", ")
    }

    /// The order the join keeps the smaller of: by parameter values, then replay.
    fn key(&self) -> (Vec<(&str, i64)>, Option<&str>) {
        (
            self.params
                .iter()
                .map(|p| (p.name.as_str(), p.value))
                .collect(),
            self.replay.as_deref(),
        )
    }
}

/// What replays a violated obligation's refusal (a run of the simulator), or why no run
/// does ([`crate::Report::witness`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Witness {
    /// Its own counterexample's replay (a bounded search found it).
    Replay {
        /// `collc sim FILE ...`.
        command: String,
    },
    /// A violated bounded obligation of its class
    /// ([`crate::report::Obligation::shown_by`]) replays the refusal, at that
    /// counterexample's parameters (which may differ from the finding's).
    Shown {
        /// The bounded obligation's id.
        obligation: String,
        /// Its counterexample's parameter values.
        params: Vec<ParamValue>,
        /// `collc sim FILE ...`.
        command: String,
    },
    /// No run replays it.
    NotReplayed {
        /// Why.
        reason: NotReplayed,
    },
}

/// Why no run replays a violated obligation's refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotReplayed {
    /// The bounded obligations did not run (`--no-bounded`).
    NoBounded,
    /// The bounded obligations ran and none of its class is violated: the finding is a
    /// symbolic one that no run within the bounded search's scopes shows (its values lie
    /// past them, or no schedule of the simulator reaches it there).
    NotShown,
}

/// How a proved obligation was shown, strongest first (what the SARIF log's `proved`
/// property and the summaries' scope phrases name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// P symbolic over the declared domain.
    Symbolic,
    /// Every world size enumerated.
    Enumerated,
    /// Nothing to check.
    Vacuous,
}

impl How {
    /// The phrase the report's prose uses for it.
    pub fn phrase(self) -> &'static str {
        match self {
            How::Symbolic => "P symbolic",
            How::Enumerated => "by enumeration",
            How::Vacuous => "vacuous",
        }
    }
}

/// Why a question was left undecided: what would decide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Undecided {
    /// The wall-clock cap (`--timeout-ms`) ended it: a larger cap may decide it.
    Clock,
    /// Z3 spent its deterministic resource limit: a simpler form may decide it.
    Resources,
    /// A form the route does not cover (or Z3's unknown on it): rewriting it may.
    Form,
}

impl Undecided {
    /// What ended the question, as a reader's phrase.
    pub fn phrase(self) -> &'static str {
        match self {
            Undecided::Clock => "the wall-clock cap (--timeout-ms) ended it",
            Undecided::Resources => "Z3 spent its resource limit",
            Undecided::Form => "a form the route does not cover",
        }
    }
}

/// What the routes showed for one obligation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// World sizes proved with P symbolic (every value of the other parameters, ranks,
    /// blocks and loop variables).
    pub symbolic: Worlds,
    /// World sizes proved by enumerating each (every value of the enumerated parameters).
    pub enumerated: Worlds,
    /// World sizes where the obligation holds because there is nothing to check.
    pub vacuous: Worlds,
    /// A bounded search explored the instances its scope states completely.
    pub bounded: bool,
    /// The smallest counterexample found (a violation or a warning).
    pub counterexample: Option<Counterexample>,
    /// Why a route left it undecided (the first in [`Undecided`]'s order when several).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Undecided>,
}

impl Evidence {
    /// Nothing shown.
    pub fn none() -> Self {
        Evidence::default()
    }
    /// Proved with P symbolic for `w`.
    pub fn symbolic(w: WorldRange) -> Self {
        Evidence {
            symbolic: Worlds::of(w),
            ..Evidence::default()
        }
    }
    /// Proved by enumerating every world size of `w`.
    pub fn enumerated(w: WorldRange) -> Self {
        Evidence {
            enumerated: Worlds::of(w),
            ..Evidence::default()
        }
    }
    /// Vacuous for `w`.
    pub fn vacuous(w: WorldRange) -> Self {
        Evidence {
            vacuous: Worlds::of(w),
            ..Evidence::default()
        }
    }
    /// A bounded search explored its instances completely.
    pub fn bounded() -> Self {
        Evidence {
            bounded: true,
            ..Evidence::default()
        }
    }
    /// A counterexample.
    pub fn counterexample(params: Vec<ParamValue>, replay: Option<String>) -> Self {
        Evidence {
            counterexample: Some(Counterexample { params, replay }),
            ..Evidence::default()
        }
    }
    /// Undecided, for `why`.
    pub fn undecided(why: Undecided) -> Self {
        Evidence {
            undecided: Some(why),
            ..Evidence::default()
        }
    }
    /// The counterexample of the first of `findings` (nothing when there is none).
    pub fn of_findings(findings: &[Finding]) -> Self {
        findings.first().map_or_else(Evidence::none, |f| {
            Evidence::counterexample(f.params.clone(), f.replay.clone())
        })
    }
    /// What a result of a route that enumerates the world sizes `world` showed: its
    /// counterexample when violated (or a warning), the enumerated sizes when proved or
    /// checked, else nothing.
    pub fn of_enumeration(status: Status, world: Option<WorldRange>, findings: &[Finding]) -> Self {
        match status {
            Status::Violated | Status::Warning => Evidence::of_findings(findings),
            Status::Proved | Status::Checked => {
                world.map_or_else(Evidence::none, Evidence::enumerated)
            }
            Status::Unknown | Status::Skipped => Evidence::none(),
        }
    }
    /// What a result of a bounded search showed: its counterexample when violated, a
    /// complete search when checked, else nothing.
    pub fn of_bounded(status: Status, findings: &[Finding]) -> Self {
        match status {
            Status::Violated | Status::Warning => Evidence::of_findings(findings),
            Status::Checked => Evidence::bounded(),
            _ => Evidence::none(),
        }
    }
    /// The one merge rule: everything either shows (union of the world sizes, a bounded
    /// search if either had one), and of two counterexamples the smaller. Commutative,
    /// associative and idempotent, with [`Evidence::none`] as its unit.
    pub fn join(&self, other: &Evidence) -> Evidence {
        let counterexample = match (&self.counterexample, &other.counterexample) {
            (Some(a), Some(b)) => Some(if b.key() < a.key() { b } else { a }.clone()),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Evidence {
            symbolic: self.symbolic.union(&other.symbolic),
            enumerated: self.enumerated.union(&other.enumerated),
            vacuous: self.vacuous.union(&other.vacuous),
            bounded: self.bounded || other.bounded,
            counterexample,
            undecided: match (self.undecided, other.undecided) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
    /// In place: `*self = self.join(other)`.
    pub fn add(&mut self, other: &Evidence) {
        *self = self.join(other);
    }
    /// How a proof of `world` was shown, strongest first: P symbolic, vacuous, by
    /// enumeration; `None` when no route proved every world size of it.
    pub fn how(&self, world: WorldRange) -> Option<How> {
        if self.symbolic.covers(world) {
            Some(How::Symbolic)
        } else if self.vacuous.covers(world) {
            Some(How::Vacuous)
        } else if self.enumerated.covers(world) && !self.enumerated.is_empty() {
            Some(How::Enumerated)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn worlds() -> impl Strategy<Value = Worlds> {
        prop::collection::vec((0i64..40, 0i64..8), 0..4).prop_map(|v| {
            v.into_iter().fold(Worlds::none(), |acc, (lo, len)| {
                acc.union(&Worlds::range(lo, lo + len))
            })
        })
    }

    fn evidence() -> impl Strategy<Value = Evidence> {
        let cx = prop::option::of((0i64..20, 0i64..3, prop::option::of(0u8..3)).prop_map(
            |(p, r, replay)| Counterexample {
                params: vec![
                    ParamValue {
                        name: "P".into(),
                        value: p,
                    },
                    ParamValue {
                        name: "root".into(),
                        value: r,
                    },
                ],
                replay: replay.map(|x| format!("collc sim FILE -P {x}")),
            },
        ));
        let why = prop::option::of(prop::sample::select(vec![
            Undecided::Clock,
            Undecided::Resources,
            Undecided::Form,
        ]));
        (worlds(), worlds(), worlds(), any::<bool>(), cx, why).prop_map(|(s, e, v, b, c, u)| {
            Evidence {
                symbolic: s,
                enumerated: e,
                vacuous: v,
                bounded: b,
                counterexample: c,
                undecided: u,
            }
        })
    }

    proptest! {
        #[test]
        fn join_is_commutative(a in evidence(), b in evidence()) {
            prop_assert_eq!(a.join(&b), b.join(&a));
        }

        #[test]
        fn join_is_associative(a in evidence(), b in evidence(), c in evidence()) {
            prop_assert_eq!(a.join(&b).join(&c), a.join(&b.join(&c)));
        }

        #[test]
        fn join_is_idempotent_with_none_as_unit(a in evidence()) {
            prop_assert_eq!(a.join(&a), a.clone());
            prop_assert_eq!(a.join(&Evidence::none()), a.clone());
        }

        /// Nothing shown is lost: every world size either proved stays proved the same
        /// way, a bounded search stays, a counterexample stays (the smaller one).
        #[test]
        fn join_loses_nothing(a in evidence(), b in evidence(), w in 0i64..50) {
            let j = a.join(&b);
            for (x, y, z) in [
                (&a.symbolic, &b.symbolic, &j.symbolic),
                (&a.enumerated, &b.enumerated, &j.enumerated),
                (&a.vacuous, &b.vacuous, &j.vacuous),
            ] {
                prop_assert_eq!(x.contains(w) || y.contains(w), z.contains(w));
            }
            prop_assert_eq!(a.bounded || b.bounded, j.bounded);
            prop_assert_eq!(
                a.counterexample.is_some() || b.counterexample.is_some(),
                j.counterexample.is_some()
            );
        }

        /// A proof over a range is never weakened by a join: `how` only gets stronger.
        #[test]
        fn how_only_strengthens(a in evidence(), b in evidence(), lo in 0i64..40, len in 0i64..10) {
            let r = WorldRange { lo, hi: lo + len };
            let rank = |h: Option<How>| match h {
                None => 0,
                Some(How::Enumerated) => 1,
                Some(How::Vacuous) => 2,
                Some(How::Symbolic) => 3,
            };
            prop_assert!(rank(a.join(&b).how(r)) >= rank(a.how(r)));
        }

        /// Worlds are kept normal: sorted, disjoint, not adjacent.
        #[test]
        fn worlds_stay_normal(a in worlds(), b in worlds()) {
            let u = a.union(&b);
            for pair in u.ranges().windows(2) {
                prop_assert!(pair[0].hi + 1 < pair[1].lo);
            }
        }
    }
}
