//! Every obligation the verifier decides, as one enum: its id (the report's `id`, the
//! diagnostic code `verify::ID`) and the route that decides it. The id lists other modules
//! keep (`report::OBLIGATIONS`, `bounded::OBLIGATIONS`, `param::IDS`, ...) are built from it.

/// One obligation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Obligation {
    /// Every cell's credits balance over a call.
    CreditBalance,
    /// No two operations of one cell race.
    OpExclusivity,
    /// Every wait's threshold can be reached.
    WaitReachable,
    /// No wait passes on credits of an earlier round or call.
    StaleCredit,
    /// Credits nobody waits for (a warning).
    GarbageCredit,
    /// Guards are symmetric between writers and waiters.
    GuardSymmetry,
    /// Waits on value signals see the value they need.
    ValueSignal,
    /// Window writes are fenced before the notify that publishes them.
    Fence,
    /// Monotonic cells stay within int32 for the declared calls.
    OverflowHorizon,
    /// A `reused` window is not overwritten before it is read.
    BufferReuse,
    /// Indices, slices and ranks stay within their bounds.
    IndexRange,
    /// No run deadlocks.
    Deadlock,
    /// No wait passes before the credit it needs was sent.
    StalePass,
    /// No two unordered accesses to a window element, one a write.
    DataRace,
    /// Every rank's outputs hold what the collective's meaning says.
    Semantics,
    /// Windows and signals live as declared.
    Lifetimes,
}

/// How an obligation is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Symbolically: with P symbolic, or by enumerating P (the six credit obligations,
    /// `value-signal`, `fence`, `overflow-horizon`, `buffer-reuse`, `index-range`).
    Symbolic,
    /// By the simulator's bounded search (and, for `deadlock`, with P symbolic too).
    Bounded,
}

impl Obligation {
    /// Every obligation, in report order.
    pub const ALL: [Obligation; 16] = [
        Obligation::CreditBalance,
        Obligation::OpExclusivity,
        Obligation::WaitReachable,
        Obligation::StaleCredit,
        Obligation::GarbageCredit,
        Obligation::GuardSymmetry,
        Obligation::ValueSignal,
        Obligation::Fence,
        Obligation::OverflowHorizon,
        Obligation::BufferReuse,
        Obligation::IndexRange,
        Obligation::Deadlock,
        Obligation::StalePass,
        Obligation::DataRace,
        Obligation::Semantics,
        Obligation::Lifetimes,
    ];

    /// The six credit obligations of the enumerated route, in report order.
    pub const CREDIT: [Obligation; 6] = [
        Obligation::CreditBalance,
        Obligation::OpExclusivity,
        Obligation::WaitReachable,
        Obligation::StaleCredit,
        Obligation::GarbageCredit,
        Obligation::GuardSymmetry,
    ];

    /// The bounded obligations, in report order.
    pub const BOUNDED: [Obligation; 5] = [
        Obligation::Deadlock,
        Obligation::StalePass,
        Obligation::DataRace,
        Obligation::Semantics,
        Obligation::Lifetimes,
    ];

    /// The id: `credit-balance`, `deadlock`, ...
    pub const fn id(self) -> &'static str {
        match self {
            Obligation::CreditBalance => "credit-balance",
            Obligation::OpExclusivity => "op-exclusivity",
            Obligation::WaitReachable => "wait-reachable",
            Obligation::StaleCredit => "stale-credit",
            Obligation::GarbageCredit => "garbage-credit",
            Obligation::GuardSymmetry => "guard-symmetry",
            Obligation::ValueSignal => "value-signal",
            Obligation::Fence => "fence",
            Obligation::OverflowHorizon => "overflow-horizon",
            Obligation::BufferReuse => "buffer-reuse",
            Obligation::IndexRange => "index-range",
            Obligation::Deadlock => "deadlock",
            Obligation::StalePass => "stale-pass",
            Obligation::DataRace => "data-race",
            Obligation::Semantics => "semantics",
            Obligation::Lifetimes => "lifetimes",
        }
    }

    /// The obligation of an id.
    pub fn from_id(id: &str) -> Option<Obligation> {
        Obligation::ALL.into_iter().find(|o| o.id() == id)
    }

    /// The bounded obligations whose simulator findings exhibit a violation of this one:
    /// what a run replaying its counterexample must show (the simulator's codes of each are
    /// `collc_sim::bounded::OBLIGATIONS`). A bounded obligation is shown by itself; a
    /// symbolic one by the failures it predicts: a wait passing on the wrong credits
    /// (`stale-pass`, or the data or barrier it orders broken), a wait never released
    /// (`deadlock`, with the residue of an unbalanced cell), a value overwritten before it
    /// is read (`lifetimes`), unordered data (`data-race`, `semantics`).
    pub const fn shown_by(self) -> &'static [Obligation] {
        use Obligation as O;
        match self {
            O::CreditBalance => &[O::Deadlock, O::StalePass],
            O::OpExclusivity => &[O::Deadlock, O::StalePass, O::Semantics],
            O::WaitReachable | O::GuardSymmetry | O::GarbageCredit => &[O::Deadlock],
            O::StaleCredit => &[O::StalePass, O::DataRace, O::Semantics],
            O::ValueSignal => &[O::Lifetimes, O::Semantics, O::Deadlock],
            O::Fence | O::BufferReuse => &[O::DataRace, O::Semantics],
            O::OverflowHorizon => &[O::StalePass, O::Deadlock, O::Semantics],
            O::IndexRange => &[O::Semantics],
            O::Deadlock => &[O::Deadlock],
            O::StalePass => &[O::StalePass],
            O::DataRace => &[O::DataRace],
            O::Semantics => &[O::Semantics],
            O::Lifetimes => &[O::Lifetimes],
        }
    }

    /// How it is decided.
    pub const fn route(self) -> Route {
        match self {
            Obligation::Deadlock
            | Obligation::StalePass
            | Obligation::DataRace
            | Obligation::Semantics
            | Obligation::Lifetimes => Route::Bounded,
            _ => Route::Symbolic,
        }
    }
}

/// The ids of `obligations`, in their order.
pub const fn ids<const N: usize>(obligations: [Obligation; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = obligations[i].id();
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_read_back() {
        for o in Obligation::ALL {
            assert_eq!(Obligation::from_id(o.id()), Some(o));
        }
        let mut ids = ids(Obligation::ALL).to_vec();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Obligation::ALL.len());
        assert!(Obligation::BOUNDED
            .iter()
            .all(|o| o.route() == Route::Bounded));
        assert_eq!(Obligation::from_id("nothing"), None);
    }

    #[test]
    fn every_obligation_is_shown_by_bounded_ones_and_a_bounded_one_by_itself() {
        for o in Obligation::ALL {
            let by = o.shown_by();
            assert!(!by.is_empty(), "{}", o.id());
            assert!(by.iter().all(|b| b.route() == Route::Bounded), "{}", o.id());
            if o.route() == Route::Bounded {
                assert_eq!(by, &[o]);
            }
        }
    }
}
