//! The recovered protocol: statements in `.coll` terms, each with the C++ line it came from.

use crate::expr::{C, E};

/// `buf[index]...[lo .. lo + len]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reg {
    /// The window or tile.
    pub buf: String,
    /// Indices of every dimension but the last.
    pub index: Vec<E>,
    /// Slice start.
    pub lo: E,
    /// Slice length.
    pub len: E,
    /// A window (global memory), not a tile.
    pub gm: bool,
}

/// What a data statement does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Move {
    /// `copy`.
    Copy,
    /// `get ... @ rank`.
    Get(E),
    /// `put ... @ rank`.
    Put(E),
    /// `reduce op` (from a rank, or local).
    Reduce(&'static str, Option<E>),
    /// `reduce op DST @ rank <- SRC`: a reduction into a peer's window
    /// (`TPUT<AtomicType::AtomicAdd>`).
    Accumulate(&'static str, E),
}

/// A loop range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Range {
    /// `peers`.
    Peers,
    /// `lo..hi step s` (printed `ranks` when it is `0..P` step 1 over a rank variable).
    Span(E, E, E),
    /// `lo..hi step s` or `lo..hi step *s` (`geometric`), reversed when `rev`: collc's
    /// counted loops over `collc_seq_len` values (`collc_seq_at`).
    Seq {
        lo: E,
        hi: E,
        step: E,
        geometric: bool,
        rev: bool,
    },
}

/// A recovered statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum S {
    /// `let name = value;`
    Let { name: String, value: E },
    /// `notify signal[index] (@ target) op value;` (`set` = `=`, else `+=`).
    Notify {
        signal: String,
        index: Vec<E>,
        target: Option<E>,
        set: bool,
        value: E,
    },
    /// `wait signal[index] cmp threshold;`
    Wait {
        signal: String,
        index: Vec<E>,
        cmp: &'static str,
        threshold: E,
    },
    /// `fence;`
    Fence,
    /// `pipe_barrier(PIPE_ALL)` before the ordering pass decides what it is.
    Barrier,
    /// `dsb(DSB_DDR)`.
    Dsb,
    /// `dcci(.., ENTIRE_DATA_CACHE)`.
    Dcci,
    /// A loop.
    For {
        var: String,
        range: Range,
        body: Vec<L>,
    },
    /// A conditional.
    If {
        cond: C,
        then: Vec<L>,
        els: Option<Vec<L>>,
    },
    /// `return if cond;`
    Return { cond: C },
    /// A data movement.
    Data { kind: Move, dst: Reg, src: Reg },
}

/// A statement and its C++ line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct L {
    /// The statement.
    pub s: S,
    /// 1-based C++ line.
    pub line: usize,
}

impl L {
    /// A statement at `line`.
    pub fn new(s: S, line: usize) -> Self {
        L { s, line }
    }
}
