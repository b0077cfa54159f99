//! The one driver over configurations: enumerate the plan's configurations, run each
//! ([`exec::run`]), and when a run needs a parameter concrete, promote it into the
//! enumerated set and start again from the first configuration. Every enumerating
//! obligation (the checks, the credit table, the epoch growth, the pair-order search)
//! goes through [`each_run`], so they agree on which configurations exist, on the limits
//! and on the words of a failure.

use crate::engine::exec::{self, Plan, Run, Stop};
use crate::planning::TABLE;
use collc_grammar::Span;
use collc_spec::ir::Protocol;
use std::time::{Duration, Instant};

/// What [`each_run`] hands its visitor.
pub enum Visit<'a> {
    /// One configuration's run (configurations a `require` rules out are skipped), with
    /// the plan it was run under.
    Run(&'a Plan, &'a mut Run),
    /// A run needed a parameter concrete: the plan was widened and the configurations
    /// start again from the first, so the visitor drops what it gathered so far.
    Restart,
}

/// Why [`each_run`] did not run every configuration.
#[derive(Clone, Debug)]
pub enum Failure {
    /// More configurations than the planner allows (`TABLE.config_limit`) (count, the plan's description).
    TooMany(u64, String),
    /// A form the abstract execution does not cover, or a parameter that must be
    /// concrete and cannot be enumerated (message, where).
    Unsupported(String, Span),
}

impl Failure {
    /// The message, as every obligation states it.
    pub fn message(&self) -> String {
        match self {
            Failure::TooMany(n, plan) => format!(
                "{n} configurations to enumerate ({plan}); the limit is {}; narrow the domains \
                 of the parameters that select cells, targets and branches",
                TABLE.config_limit
            ),
            Failure::Unsupported(m, _) => format!("unsupported form: {m}"),
        }
    }
    /// Where, when the failure has a place in the source.
    pub fn span(&self) -> Option<Span> {
        match self {
            Failure::TooMany(..) => None,
            Failure::Unsupported(_, s) => Some(*s),
        }
    }
}

/// How a sweep ended.
pub struct Sweep {
    /// The plan the last pass ran under (parameters promoted as runs needed).
    pub plan: Plan,
    /// Why not every configuration was run; `None` when every one was, or the visitor
    /// stopped the sweep.
    pub failure: Option<Failure>,
    /// Time spent in [`exec::run`].
    pub exec_time: Duration,
}

/// Runs every configuration of [`Plan::initial`], the world size over `worlds` (in that
/// order; `None`: [`exec::enumerated_world`] ascending), calling `visit` with each run;
/// `visit` returns false to stop. A run that needs parameters concrete promotes them and
/// restarts (after [`Visit::Restart`]); a parameter that cannot be promoted, a form the
/// execution does not cover, or too many configurations end the sweep with a
/// [`Failure`].
pub fn each_run(
    p: &Protocol,
    worlds: Option<&[i64]>,
    visit: &mut dyn FnMut(Visit) -> bool,
) -> Sweep {
    each_run_from(p, worlds, Plan::initial(p), visit)
}

/// [`each_run`] starting from `plan` instead of [`Plan::initial`] (a parameter enumerated
/// from the start: `pair_order` pins one to a single value).
pub fn each_run_from(
    p: &Protocol,
    worlds: Option<&[i64]>,
    plan: Plan,
    visit: &mut dyn FnMut(Visit) -> bool,
) -> Sweep {
    let all: Vec<i64>;
    let worlds = match worlds {
        Some(w) => w,
        None => {
            all = exec::enumerated_worlds(p);
            &all
        }
    };
    let mut plan = plan;
    let mut exec_time = Duration::ZERO;
    loop {
        let count = plan.count_at(p, worlds);
        if count > TABLE.config_limit {
            let failure = Some(Failure::TooMany(count, plan.describe(p)));
            return Sweep {
                plan,
                failure,
                exec_time,
            };
        }
        let mut stop: Option<Stop> = None;
        exec::configs_at(p, &plan, worlds, &mut |cfg| {
            let t0 = Instant::now();
            let r = exec::run(p, cfg);
            exec_time += t0.elapsed();
            match r {
                Ok(None) => true,
                Ok(Some(mut run)) => visit(Visit::Run(&plan, &mut run)),
                Err(s) => {
                    stop = Some(s);
                    false
                }
            }
        });
        let failure = match stop {
            None => None,
            Some(Stop::Need(vars, what, span)) => {
                let before = plan.enumerated.len();
                match plan.promote(p, &vars) {
                    Ok(()) if plan.enumerated.len() > before => {
                        visit(Visit::Restart);
                        continue;
                    }
                    Ok(()) => Some(Failure::Unsupported(
                        format!("{what} is not concrete although its parameters are enumerated"),
                        span,
                    )),
                    Err(m) => Some(Failure::Unsupported(
                        format!("{what} must be concrete: {m}"),
                        span,
                    )),
                }
            }
            Some(Stop::Unsupported(m, span)) => Some(Failure::Unsupported(m, span)),
            Some(Stop::Iter(_, what, span)) => {
                Some(Failure::Unsupported(exec::symbolic_iteration(&what), span))
            }
        };
        return Sweep {
            plan,
            failure,
            exec_time,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A barrier whose arrival cell is chosen by the parameter `G` (in `1..=hi`): the first
    /// runs meet `G` symbolic in a cell index, so it must be enumerated.
    fn grouped(hi: i64) -> collc_spec::Validated {
        let text = format!(
            "collective c: barrier() {{
                ranks P in 1..=4;
                param G: int in 1..={hi};
                signal arr[{hi}];
                body {{
                    if me != 0 {{ notify arr[G - 1] @ rank(0) += 1; }}
                    else {{ wait arr[G - 1] >= P - 1; }}
                }}
                epilogue {{ if me == 0 {{ notify arr[G - 1] -= P - 1; }} }}
            }}"
        );
        collc_spec::front(&crate::Ranges, &text)
            .protocol
            .expect("the case validates")
    }

    fn sweep_of(p: &Protocol) -> (Sweep, Vec<Vec<i64>>, usize) {
        let mut configs = Vec::new();
        let mut restarts = 0;
        let s = each_run(p, None, &mut |v| {
            match v {
                Visit::Restart => {
                    restarts += 1;
                    configs.clear();
                }
                Visit::Run(_, run) => configs.push(run.config.iter().map(|c| c.1).collect()),
            }
            true
        });
        (s, configs, restarts)
    }

    #[test]
    fn a_parameter_a_cell_needs_is_promoted_and_the_sweep_restarts() {
        let p = grouped(3);
        let (s, configs, restarts) = sweep_of(&p);
        assert!(s.failure.is_none(), "{:?}", s.failure);
        assert_eq!(restarts, 1);
        assert_eq!(s.plan.enumerated.len(), 2, "P and G enumerated");
        // P in 1..=4 times G in 1..=3, each once: nothing of the first pass is kept.
        assert_eq!(configs.len(), 12);
        let distinct: std::collections::BTreeSet<_> = configs.iter().collect();
        assert_eq!(distinct.len(), 12);
    }

    #[test]
    fn a_parameter_too_large_to_enumerate_is_a_failure_with_its_place() {
        let p = grouped(100);
        let (s, _, restarts) = sweep_of(&p);
        assert_eq!(restarts, 0);
        let f = s.failure.expect("G has 100 values");
        let m = f.message();
        assert!(m.starts_with("unsupported form: "), "{m}");
        assert!(m.contains("must be concrete") && m.contains("`G`"), "{m}");
        assert!(f.span().is_some());
    }

    #[test]
    fn the_visitor_stops_the_sweep_without_a_failure() {
        let p = grouped(3);
        let mut n = 0;
        let s = each_run(&p, Some(&[3, 2]), &mut |v| {
            if let Visit::Run(_, run) = v {
                assert_eq!(run.world, 3, "the worlds given, in their order");
                n += 1;
            }
            n < 2
        });
        assert!(s.failure.is_none());
        assert_eq!(n, 2);
    }
}
