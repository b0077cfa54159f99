//! How a verification covered its domain, the header of a report: the enumeration plan
//! (which parameters were enumerated, which left symbolic) and, once every obligation is in,
//! how many of the obligations that decide a range of world sizes were proved with P
//! symbolic (`obligations::param_scope::finish` sets it). Data, rendered here only.

use crate::report::scope::Scope;
use crate::report::summary::{range, world_phrase};
use crate::report::WorldRange;
use serde::Serialize;
use std::fmt;

/// The report's `method`.
#[derive(Debug, Clone, Default)]
pub struct Method {
    /// The enumeration plan's coverage.
    pub plan: Scope,
    /// The count of the deciding obligations, when the report is complete.
    pub decided: Option<Decided>,
}

/// How the obligations that decide a range of world sizes were proved.
#[derive(Debug, Clone)]
pub struct Decided {
    /// Proved with P symbolic (or vacuously) for the declared domain.
    pub symbolic: usize,
    /// Deciding obligations in all.
    pub of: usize,
    /// The declared world-size domain.
    pub declared: WorldRange,
    /// The proved ones shown by enumeration only, and the world range that enumeration
    /// covered (when one of them records it).
    pub enumerated: Vec<String>,
    /// That range.
    pub over: Option<WorldRange>,
}

impl Method {
    /// The plan alone (before the count).
    pub fn of(plan: Scope) -> Self {
        Method {
            plan,
            decided: None,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.plan)?;
        let Some(d) = &self.decided else {
            return Ok(());
        };
        write!(
            f,
            "; P symbolic: {} of {} obligations proved for {}",
            d.symbolic,
            d.of,
            world_phrase(d.declared.lo, d.declared.hi)
        )?;
        if !d.enumerated.is_empty() {
            let over = d
                .over
                .map_or(String::new(), |w| format!(" over {}", range(w)));
            write!(
                f,
                ", proved by enumeration{over}: {}",
                d.enumerated.join(", ")
            )?;
        }
        Ok(())
    }
}

impl Serialize for Method {
    /// As its text (the report's JSON `method` string).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
