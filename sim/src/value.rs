//! Data with provenance. Buffers hold no floats: every element holds the
//! multiset of input elements it was computed from ("rank 1's call-2 input of
//! `data`, element 300"), so the result check can say exactly what is missing
//! or extra. Buffers are run-length encoded: a run of elements whose
//! provenance differs only by the element offset is one segment, so a tile of
//! 256 elements costs one entry whatever its size.

use std::hash::Hash;

/// Marker `win` of a contribution that is uninitialised scratch (a tile at call start).
pub const GARBAGE: u16 = u16::MAX;
/// Marker `win` of a contribution that is a window's content before the first call.
pub const INITIAL: u16 = u16::MAX - 1;
/// Marker `win` of a contribution that records a reduction with another operator than the
/// collective's (`rank`: the operator's index in [`OPS`]): a
/// `reduce max` in an `allreduce(sum, ...)` computes something else, whatever it combines.
pub const FOREIGN_OP: u16 = u16::MAX - 2;
/// The reduction operators, indexed by a [`FOREIGN_OP`] contribution's `rank`.
pub const OPS: [collc_spec::ir::ReduceOp; 4] = {
    use collc_spec::ir::ReduceOp::*;
    [Sum, Max, Min, Prod]
};

/// One input element an element was computed from: element `i + shift` of
/// rank `rank`'s input window `win` as staged for call `call` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Contrib {
    /// The contributing rank.
    pub rank: u16,
    /// The input window (or [`GARBAGE`] / [`INITIAL`]).
    pub win: u16,
    /// The call whose payload it is (0-based).
    pub call: u16,
    /// Source element index minus destination element index.
    pub shift: i64,
}

/// The provenance of an element: a sorted multiset of contributions.
#[derive(Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Val(pub Vec<Contrib>);

impl Clone for Val {
    fn clone(&self) -> Self {
        Val(self.0.clone())
    }
    /// Reuses `self`'s vector.
    fn clone_from(&mut self, src: &Self) {
        self.0.clone_from(&src.0);
    }
}

impl Val {
    /// One contribution.
    pub fn one(c: Contrib) -> Self {
        Val(vec![c])
    }
    /// Scratch garbage of a rank in a call.
    pub fn garbage(rank: usize, call: usize) -> Self {
        Val::one(Contrib {
            rank: rank as u16,
            win: GARBAGE,
            call: call as u16,
            shift: 0,
        })
    }
    /// The value moved by `delta` elements (source position minus destination position).
    pub fn moved(&self, delta: i64) -> Self {
        if delta == 0 {
            return self.clone();
        }
        Val(self
            .0
            .iter()
            .map(|c| Contrib {
                shift: if c.win >= FOREIGN_OP {
                    0
                } else {
                    c.shift + delta
                },
                ..*c
            })
            .collect())
    }
    /// Combines two values under a reduction (multiset union; a set for idempotent ops).
    pub fn combine(&self, other: &Val, idempotent: bool) -> Val {
        let mut v: Vec<Contrib> = self.0.iter().chain(other.0.iter()).copied().collect();
        v.sort();
        if idempotent {
            v.dedup();
        } else {
            // A foreign operator is recorded once, however often it is combined.
            v.dedup_by(|a, b| a.win == FOREIGN_OP && a == b);
        }
        Val(v)
    }

    /// `self` marked as combined by operator `op` (an index in [`OPS`]) in `call`, which
    /// the collective does not compute.
    pub fn foreign_op(mut self, op: usize, call: u16) -> Val {
        let m = Contrib {
            rank: op as u16,
            win: FOREIGN_OP,
            call,
            shift: 0,
        };
        if let Err(i) = self.0.binary_search(&m) {
            self.0.insert(i, m);
        }
        self
    }
}

/// A run-length encoded buffer: `segs[k] = (start, value)`, covering `0..len`
/// with no gaps; segment k ends where k+1 starts (the last ends at `len`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Segs<T> {
    /// Total elements.
    pub len: u64,
    /// Segment starts and values; `segs[0].0 == 0` when `len > 0`.
    pub segs: Vec<(u64, T)>,
}

impl<T: Clone> Clone for Segs<T> {
    fn clone(&self) -> Self {
        Segs {
            len: self.len,
            segs: self.segs.clone(),
        }
    }
    /// Reuses `self`'s vector and its values' storage (`T::clone_from`).
    fn clone_from(&mut self, src: &Self) {
        self.len = src.len;
        self.segs.truncate(src.segs.len());
        for (d, x) in self.segs.iter_mut().zip(&src.segs) {
            d.0 = x.0;
            d.1.clone_from(&x.1);
        }
        let n = self.segs.len();
        self.segs.extend(src.segs[n..].iter().cloned());
    }
}

/// Values that may be merged with a neighbour when equal, and moved.
pub trait Piece: Clone + PartialEq {
    /// The value as seen `delta` elements away (source minus destination position).
    fn shifted(&self, delta: i64) -> Self;
}

impl Piece for Val {
    fn shifted(&self, delta: i64) -> Self {
        self.moved(delta)
    }
}

impl<T: Piece> Segs<T> {
    /// A buffer of `len` elements all holding `v` (relative to their own index).
    pub fn filled(len: u64, v: T) -> Self {
        Segs {
            len,
            segs: if len == 0 { Vec::new() } else { vec![(0, v)] },
        }
    }

    fn end(&self, k: usize) -> u64 {
        self.segs.get(k + 1).map_or(self.len, |s| s.0)
    }

    /// Splits so that a segment starts at `at` (if inside the buffer). Returns its index.
    fn split(&mut self, at: u64) -> usize {
        if at >= self.len {
            return self.segs.len();
        }
        let k = match self.segs.binary_search_by_key(&at, |s| s.0) {
            Ok(k) => return k,
            Err(k) => k - 1,
        };
        // Values are relative to each element's own index, so a split needs no shift.
        let v = self.segs[k].1.clone();
        self.segs.insert(k + 1, (at, v));
        k + 1
    }

    /// The pieces covering `lo..hi`, as (length, value).
    pub fn read(&self, lo: u64, hi: u64) -> Vec<(u64, T)> {
        self.pieces(lo, hi).map(|(n, v)| (n, v.clone())).collect()
    }

    /// The pieces covering `lo..hi`, as (length, value), borrowed (what [`Segs::read`]
    /// returns, without copying the values).
    pub fn pieces(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, &T)> + '_ {
        let mut k = match self.segs.binary_search_by_key(&lo, |s| s.0) {
            Ok(k) => k,
            Err(k) => k.saturating_sub(1),
        };
        let mut pos = lo;
        std::iter::from_fn(move || {
            while pos < hi && k < self.segs.len() {
                let end = self.end(k).min(hi);
                let at = k;
                let from = pos;
                pos = end;
                k += 1;
                if end > from {
                    return Some((end - from, &self.segs[at].1));
                }
            }
            None
        })
    }

    /// Replaces `lo..` with the given pieces (their lengths sum to the region's length).
    pub fn write(&mut self, lo: u64, pieces: &[(u64, T)]) {
        let total: u64 = pieces.iter().map(|p| p.0).sum();
        let hi = lo + total;
        if total == 0 {
            return;
        }
        let a = self.split(lo);
        let b = self.split(hi);
        let mut new = Vec::with_capacity(pieces.len());
        let mut pos = lo;
        for (n, v) in pieces {
            if *n > 0 {
                new.push((pos, v.clone()));
                pos += n;
            }
        }
        self.segs.splice(a..b, new);
        self.normalize();
    }

    /// Applies `f` to every piece of `lo..hi` in place.
    pub fn update(&mut self, lo: u64, hi: u64, mut f: impl FnMut(&mut T)) {
        if lo >= hi {
            return;
        }
        let a = self.split(lo);
        let b = self.split(hi);
        for s in &mut self.segs[a..b] {
            f(&mut s.1);
        }
        self.normalize();
    }

    /// Merges equal neighbours.
    pub fn normalize(&mut self) {
        self.segs.dedup_by(|b, a| a.1 == b.1);
    }
}

/// Moves pieces read at source position `src_lo` to destination position `dst_lo`.
pub fn relocate<T: Piece>(pieces: Vec<(u64, T)>, src_lo: u64, dst_lo: u64) -> Vec<(u64, T)> {
    let delta = src_lo as i64 - dst_lo as i64;
    pieces
        .into_iter()
        .map(|(n, v)| (n, v.shifted(delta)))
        .collect()
}

/// Zips two piece lists of equal total length into aligned (length, a, b) triples.
pub fn zip<A: Clone, B: Clone>(a: &[(u64, A)], b: &[(u64, B)]) -> Vec<(u64, A, B)> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    let (mut ra, mut rb) = (a.first().map_or(0, |x| x.0), b.first().map_or(0, |x| x.0));
    while i < a.len() && j < b.len() {
        let n = ra.min(rb);
        if n > 0 {
            out.push((n, a[i].1.clone(), b[j].1.clone()));
        }
        ra -= n;
        rb -= n;
        if ra == 0 {
            i += 1;
            ra = a.get(i).map_or(0, |x| x.0);
        }
        if rb == 0 {
            j += 1;
            rb = b.get(j).map_or(0, |x| x.0);
        }
    }
    out
}
