//! Typed ids into the [`Protocol`](crate::ir::Protocol)'s tables.
//!
//! `Id<T>` is a position in one table: `Id<Var>` in `vars`, `Id<Signal>` in `signals`,
//! `Id<Window>` in `windows`, `Id<Tile>` in `tiles`, `Id<Array>` in `arrays`, `Id<Require>`
//! in `requires`. The tag keeps them apart (a window id does not index the signals), the
//! table indexes by its own id (`p.vars[v]`), and a position taken from elsewhere becomes an
//! id only through [`Id::new`]. An id serialises as the bare position, so the IR's JSON
//! is the one of plain indices; `Debug` prints the bare position too.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ir::{Array, Buffer, Require, Signal, Var};

/// A position in the table of `T`s (see the module docs).
pub struct Id<T> {
    index: usize,
    tag: PhantomData<fn() -> T>,
}

/// The tag of [`Protocol::windows`](crate::ir::Protocol::windows)' ids (its rows are [`Buffer`]s).
#[derive(Debug)]
pub enum Window {}

/// The tag of [`Protocol::tiles`](crate::ir::Protocol::tiles)' ids (its rows are [`Buffer`]s).
#[derive(Debug)]
pub enum Tile {}

impl<T> Id<T> {
    /// The id of position `index`.
    pub const fn new(index: usize) -> Self {
        Id {
            index,
            tag: PhantomData,
        }
    }
    /// The position.
    pub const fn index(self) -> usize {
        self.index
    }
    /// The ids of the first `n` positions, in order.
    pub fn range(n: usize) -> impl DoubleEndedIterator<Item = Self> + ExactSizeIterator + Clone {
        (0..n).map(Id::new)
    }
}

/// The rows of a table with their ids, in order (`enumerate` with typed positions).
pub fn enumerate<T, R>(rows: &[R]) -> impl DoubleEndedIterator<Item = (Id<T>, &R)> + Clone {
    rows.iter().enumerate().map(|(i, r)| (Id::new(i), r))
}

impl<T> Clone for Id<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Id<T> {}
impl<T> PartialEq for Id<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Id<T> {}
impl<T> PartialOrd for Id<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Id<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> Hash for Id<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.index, f)
    }
}
impl<T> fmt::Display for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.index, f)
    }
}
impl<T> Serialize for Id<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.index.serialize(s)
    }
}
impl<'de, T> Deserialize<'de> for Id<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        usize::deserialize(d).map(Id::new)
    }
}

/// Lets a table (a `Vec` or slice of `$row`) be indexed by its own id `$id`.
macro_rules! table {
    ($row:ty, $id:ty) => {
        impl Index<$id> for [$row] {
            type Output = $row;
            fn index(&self, id: $id) -> &$row {
                &self[id.index()]
            }
        }
        impl IndexMut<$id> for [$row] {
            fn index_mut(&mut self, id: $id) -> &mut $row {
                &mut self[id.index()]
            }
        }
        impl Index<$id> for Vec<$row> {
            type Output = $row;
            fn index(&self, id: $id) -> &$row {
                &self[id.index()]
            }
        }
        impl IndexMut<$id> for Vec<$row> {
            fn index_mut(&mut self, id: $id) -> &mut $row {
                &mut self[id.index()]
            }
        }
    };
}

table!(Var, Id<Var>);
table!(Signal, Id<Signal>);
table!(Buffer, Id<Window>);
table!(Buffer, Id<Tile>);
table!(Array, Id<Array>);
table!(Require, Id<Require>);
