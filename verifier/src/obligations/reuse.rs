//! The `buffer-reuse` obligation (README, "Buffer reuse across calls"): in a protocol
//! that reads the call index, every `reused` window instance — a whole window, or the part
//! chosen by `call % k` — is written by a later call only after every access of an earlier
//! call by another rank is done. Decided with P and the call index symbolic by
//! `crate::engine::param::reuse`; this module turns its verdict into the report's line.

use crate::engine::param::reuse::{Unordered, Verdict, DMAX};
use crate::engine::param::Outcome;
use crate::report::evidence::{Evidence, Undecided};
use crate::report::scope::{Covered, Scope, Symbolic};
use crate::report::{Finding, ObligationResult, ParamValue, Status, WorldRange};
use collc_spec::ir::Protocol;
use std::time::Duration;

/// The obligation's id.
pub const ID: &str = crate::report::Obligation::BufferReuse.id();

/// The obligation, for a protocol that reads the call index and has a `reused` window
/// (`None` otherwise). `credits` is the parametric route's outcome for the credit
/// obligations (a hop through a self-clearing cell needs the reuse theorem).
pub fn check(p: &Protocol, credits: &Outcome, timeout: Duration) -> Option<ObligationResult> {
    let verdict = crate::engine::param::reuse::prove(p, credits, timeout)?;
    let (lo, hi) = crate::engine::exec::declared_world(p);
    let declared = WorldRange { lo, hi };
    let code = format!("verify::{ID}");
    Some(match verdict {
        Verdict::Proved {
            proof,
            pairs,
            distances,
        } => {
            let dist: Vec<String> = distances
                .iter()
                .map(|(w, d)| match *d {
                    0 => format!("`{w}`: no other rank writes what a rank accesses"),
                    d if d > DMAX => format!("`{w}`: not reused within {DMAX} calls"),
                    d => format!("`{w}`: reused every {d} call(s)"),
                })
                .collect();
            let checks = proof.checks();
            let counts = crate::report::scope::checks(&checks);
            ObligationResult {
                id: ID.into(),
                code,
                status: Status::Proved,
                scope: Some(Scope::of(Covered::Symbolic {
                    world: declared,
                    how: Symbolic::CallIndex(checks),
                })),
                world: Some(declared),
                reason: None,
                claim: format!(
                    "every write of a reused window instance is ordered after the accesses of earlier calls by other ranks ({pairs} access/write pair(s); {}) ({counts})",
                    dist.join(", ")
                ),
                findings: Vec::new(),
                evidence: Evidence::symbolic(declared),
            }
        }
        Verdict::Unordered(u) => violated(p, &u, code, declared),
        Verdict::Capped(why) => undecided(
            code,
            Undecided::Clock,
            format!(
                "timeout: the wall-clock cap (--timeout-ms) was hit before every reuse was decided ({why})"
            ),
        ),
        Verdict::Open(why) => undecided(
            code,
            Undecided::Form,
            format!(
                "unsupported form: {why}; order the reuse by a credit the accessing rank sends after its access (or in a later call) that the writer waits for before the write, and select window parts by `call % k` in indices only"
            ),
        ),
    })
}

/// The obligation undecided, for `reason`.
fn undecided(code: String, why: Undecided, reason: String) -> ObligationResult {
    ObligationResult {
        id: ID.into(),
        code,
        status: Status::Unknown,
        scope: None,
        world: None,
        reason: Some(reason),
        claim: "undecided: whether a later call writes a reused window before an earlier call's accesses are done".into(),
        findings: Vec::new(),
        evidence: Evidence::undecided(why),
    }
}

fn violated(p: &Protocol, u: &Unordered, code: String, declared: WorldRange) -> ObligationResult {
    let what = if u.access_writes { "write" } else { "read" };
    let later = if u.distance > DMAX {
        format!("a call more than {DMAX} calls later")
    } else {
        format!("call c + {}", u.distance)
    };
    let mut f = Finding::new(format!(
        "`{}`: {later} can write the instance this {what} of call c accesses before the {what} happens",
        u.window
    ));
    let world = u.world.unwrap_or(declared.lo);
    f.params = vec![ParamValue {
        name: p.vars[p.world].name.clone(),
        value: world,
    }];
    f.primary = Some(u.access);
    f.primary_label = format!("call c's {what}");
    f.labels.push((
        u.write,
        format!("{later} writes the same instance (another rank)"),
    ));
    f.help = Some(format!(
        "make the writer wait, before this write (or in a call between), for a credit the rank that {what}s sends after its {what} of call c; or give `{}` more parts (`[call % k]`, k larger than the number of calls a rank can lag behind the writer)",
        u.window
    ));
    f.notes.push(format!(
        "schedule: the {what}ing rank stops just before this {what} of call c; it notifies nothing after it in the call, so every other rank can end call c; the writer then runs to {later} without passing a wait (the two reach one instance from two ranks at P = {world}, reuse distance {})",
        u.distance.min(DMAX + 1)
    ));
    f.notes.push(format!("no chain orders them: {}", u.why));
    ObligationResult {
        id: ID.into(),
        code,
        status: Status::Violated,
        scope: None,
        world: Some(declared),
        reason: None,
        claim: format!(
            "violated: `{}` is written by {later} before an access of call c by another rank is shown done",
            u.window
        ),
        evidence: Evidence::of_findings(std::slice::from_ref(&f)),
        findings: vec![f],
    }
}
