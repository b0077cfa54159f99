//! What the kernel's buffers are: names, dimensions, kinds; and turning a flat C++ pointer
//! offset back into `.coll` indices.

use crate::expr::E;
use std::collections::BTreeMap;

/// The C++ dialect being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `pto::comm` (Ascend and CPU threads).
    Pto,
    /// collc's MPI-3 RMA program.
    Mpi,
}

/// A buffer the kernel addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buf {
    /// Its `.coll` name.
    pub name: String,
    /// Dimension sizes as `.coll` text (whitespace-normalised).
    pub dims: Vec<String>,
    /// What it is.
    pub kind: BufKind,
}

/// Buffer kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufKind {
    /// A signal (credit or value cells).
    Signal,
    /// A symmetric window.
    Window,
    /// A scratch tile.
    Tile,
    /// A staging tile collc adds for window-to-window moves.
    Stage,
}

/// A buffer's `.coll` name and dimension texts, given its C++ name and kind.
pub type DimsOf<'a> =
    dyn Fn(&str, BufKind) -> Result<(String, Vec<String>), collc_grammar::Diagnostic> + 'a;

/// The buffers by C++ name.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// C++ name -> buffer.
    pub bufs: BTreeMap<String, Buf>,
}

/// Whitespace-normalised text.
pub fn norm(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The signed terms of a left-associative chain of `+` and `-` (the right operands are
/// kept whole: `a - (b + c)` has the terms `a`, `-(b + c)`).
fn terms(e: &E, out: &mut Vec<(&'static str, E)>) {
    match e {
        E::Bin(op @ ("+" | "-"), a, b) => {
            terms(a, out);
            out.push((op, (**b).clone()));
        }
        e => out.push(("+", e.clone())),
    }
}

/// The chain back from its terms, in order.
fn sum(ts: Vec<(&'static str, E)>) -> E {
    let mut it = ts.into_iter();
    match it.next() {
        None => E::Int(0),
        Some((sign, first)) => {
            let first = if sign == "-" {
                E::Neg(Box::new(first))
            } else {
                first
            };
            it.fold(first, |a, (op, b)| E::Bin(op, Box::new(a), Box::new(b)))
        }
    }
}

/// The factors of a left-associative chain of `*` (`a * b * c`: `a`, `b`, `c`).
fn factors(e: &E, out: &mut Vec<E>) {
    match e {
        E::Bin("*", a, b) => {
            factors(a, out);
            out.push((**b).clone());
        }
        e => out.push(e.clone()),
    }
}

/// The product of factors, left-associative.
fn product(fs: &[E]) -> E {
    let mut it = fs.iter().cloned();
    let first = it.next().unwrap_or(E::Int(1));
    it.fold(first, |a, b| E::Bin("*", Box::new(a), Box::new(b)))
}

/// `x` when `t` is `x * d` or `d * x` with `d` the dimension `dim`, where `d` may be a
/// run of the product's factors (`me * max_recv * row_numel` over the dimension
/// `max_recv * row_numel` is `me`).
fn row_of(t: &E, dim: &str) -> Option<E> {
    let mut fs = Vec::new();
    factors(t, &mut fs);
    (1..fs.len()).find_map(|k| {
        if norm(&product(&fs[k..]).coll()) == dim {
            Some(product(&fs[..k]))
        } else if norm(&product(&fs[..k]).coll()) == dim {
            Some(product(&fs[k..]))
        } else {
            None
        }
    })
}

/// Splits a flat element offset into one index per dimension (row-major), or `None` if the
/// offset is not of the shape `((i0 * d1 + i1) * d2 + ...) + last`.
pub fn unflatten(flat: &E, dims: &[String]) -> Option<Vec<E>> {
    let (last_dim, rest) = dims.split_last()?;
    if rest.is_empty() {
        return Some(vec![flat.clone()]);
    }
    let mut ts = Vec::new();
    terms(flat, &mut ts);
    let mut prefix = None;
    let mut others = Vec::new();
    for (sign, t) in ts {
        let hit = match &t {
            E::Bin("*", ..) if sign == "+" && prefix.is_none() => row_of(&t, last_dim),
            // `base + d + i`: the row `1` (pypto writes `flag + nranks + p`).
            t if sign == "+" && prefix.is_none() && norm(&t.coll()) == *last_dim => {
                prefix = Some(E::Int(1));
                continue;
            }
            _ => None,
        };
        match hit {
            Some(x) => prefix = Some(x),
            None => others.push((sign, t)),
        }
    }
    let mut idx = unflatten(&prefix?, rest)?;
    idx.push(sum(others));
    Some(idx)
}
