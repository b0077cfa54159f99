//! The edit a finding's help proposes, as data: set where the finding is made, turned
//! into a source edit by `crate::fix` (or, when it cannot be placed, the rule in words).

/// An edit of the statement at a finding's primary span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// The wait's threshold grows `by` more per call: `+ by * call` appended
    /// (`- |by| * call` when `by` is negative).
    ThresholdGrowth {
        /// Credits per call minus the threshold's growth per call.
        by: i64,
    },
    /// The wait's `==` becomes `>=`.
    WaitAtLeast,
}

impl Rewrite {
    /// The help when no fix was derived: the rule, no specific edit.
    pub fn unfixed_help(&self) -> String {
        match self {
            Rewrite::ThresholdGrowth { .. } => "a wait on a monotonic cell must have a threshold that grows per call by exactly the cell's credits per call".into(),
            Rewrite::WaitAtLeast => "a wait on a counter that receives AtomicAdd credits must compare with `>=` or `>`: a fast writer can push it past an exact value before this rank polls".into(),
        }
    }
}
