//! The exhaustive search's table of seen states, exact (no hash compaction).
//!
//! Every distinct process, cell and window met is kept once, in a table of parts
//! that numbers it; two parts get one number only if they are equal in full (a
//! fingerprint only picks the candidates). A state is then the vector of its parts'
//! numbers, kept in one flat arena of `u32`s, and the table of states holds arena
//! offsets, compared word by word. So two distinct states are never taken for one,
//! whatever the hashes do (the scheme is SPIN's "collapse compression" without its
//! lossy variants).
//!
//! A part remembers its number ([`FpCache`]), tagged with the table that gave it, until
//! it is written; a successor shares every part its step did not touch with its
//! parent, so numbering a state costs one lookup per part the step wrote.

use crate::fingerprint::{hash_words, mix, FpCache};
use crate::machine::{Cell, Numbers, Part, Proc, Shared, State, WinMem};
use hashbrown::HashTable;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

/// Tags of the tables of parts: each table numbers parts under its own tag, so a
/// number cached by one search is never read by another.
static TAGS: AtomicU32 = AtomicU32::new(1);

/// The distinct parts of one kind, numbered in the order met, each kept twice: shared
/// (`Rc`, for the states that hold it) and as its packed record ([`crate::machine::Pack`]), all records
/// in one arena, which is what a candidate is hashed and compared with.
struct Parts<T> {
    items: Vec<Rc<T>>,
    /// The records, each after its part's number and its length: a probe reads one run
    /// of the arena (no separate table of offsets).
    records: Vec<u32>,
    /// (hash, offset in `records` of the number before the record): the hash kept with
    /// the offset, so that a probe compares it without a look-up elsewhere and growing
    /// the table reads no record.
    table: HashTable<(u64, usize)>,
}

impl<T: Part> Parts<T> {
    fn new() -> Self {
        Parts {
            items: Vec::new(),
            records: Vec::new(),
            table: HashTable::new(),
        }
    }

    /// The number of `x`. A part equal to one met before keeps its own allocation
    /// (the state holding it is a successor being made, which the search drops or
    /// overwrites: the table holds the states it keeps by their numbers alone), so the
    /// table's copy, in cold memory, is not touched. `buf` is scratch for `x`'s record.
    fn number(&mut self, tag: u32, x: &Rc<T>, buf: &mut Vec<u32>) -> u32 {
        let cache: &FpCache = x.cache();
        if let Some(id) = cache.id(tag) {
            return id;
        }
        buf.clear();
        x.pack(buf);
        let h = hash_words(buf);
        let records = &self.records;
        let hit = self.table.find(h, |&(hi, at)| {
            hi == h
                && records[at + 1] as usize == buf.len()
                && records[at + 2..at + 2 + buf.len()] == buf[..]
        });
        if let Some(&(_, at)) = hit {
            let id = self.records[at];
            cache.set_id(tag, id);
            return id;
        }
        let id = self.items.len() as u32;
        self.items.push(Rc::clone(x));
        let at = self.records.len();
        self.records.extend_from_slice(&[id, buf.len() as u32]);
        self.records.extend_from_slice(buf);
        self.table.insert_unique(h, (h, at), |&(hi, _)| hi);
        cache.set_id(tag, id);
        id
    }
}

/// The seen states of one search.
pub struct Visited {
    tag: u32,
    procs: Parts<Proc>,
    cells: Parts<Cell>,
    mem: Parts<WinMem>,
    /// Words per state: processes, cells, windows.
    width: usize,
    /// State `i` is `arena[i * width..(i + 1) * width]`.
    arena: Vec<u32>,
    /// (hash, number) of every state (the hash kept as for the parts).
    table: HashTable<(u64, u32)>,
    /// State `i`'s hash, for [`Visited::load`].
    hashes: Vec<u64>,
    /// Scratch for a part's packed record.
    buf: Vec<u32>,
}

/// The hash of number `id` at position `at` of a state's vector of part numbers; a
/// state's hash is the wrapping sum over its positions, so a successor's is its
/// parent's updated at the positions whose numbers changed.
fn hash_at(at: usize, id: u32) -> u64 {
    mix(((at as u64) << 32 | id as u64) ^ 0x243f_6a88_85a3_08d3)
}

/// Renumbers the parts of one kind written since `s`'s numbers were taken (all of them
/// when `all`), updating the numbers at `base..` and the state's hash.
fn renumber<T: Part>(
    parts: &mut Parts<T>,
    buf: &mut Vec<u32>,
    tag: u32,
    shared: &mut Shared<T>,
    numbers: &mut Numbers,
    base: usize,
    all: bool,
) {
    let mut one = |shared: &mut Shared<T>, i: usize| {
        let id = parts.number(tag, &shared[i], buf);
        let at = base + i;
        let old = std::mem::replace(&mut numbers.words[at], id);
        numbers.hash = numbers
            .hash
            .wrapping_sub(hash_at(at, old))
            .wrapping_add(hash_at(at, id));
    };
    if all {
        shared.forget_written();
        for i in 0..shared.len() {
            one(shared, i);
        }
    } else {
        shared.take_written(one);
    }
}

impl Visited {
    /// An empty table for states of this shape.
    pub fn new(s: &State) -> Self {
        Visited {
            tag: TAGS.fetch_add(1, Ordering::Relaxed).max(1),
            procs: Parts::new(),
            cells: Parts::new(),
            mem: Parts::new(),
            width: s.procs.len() + s.cells.len() + s.mem.len(),
            arena: Vec::new(),
            table: HashTable::new(),
            hashes: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// Number of distinct states seen.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no state was seen.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Adds `s` (the table keeps its vector of part numbers, and a copy of each part not
    /// met before): its number if it is new, `None` if an equal state was seen before. Only the parts
    /// written since `s`'s numbers were taken (its parent's, when it is a successor) are
    /// numbered again.
    pub fn insert(&mut self, s: &mut State) -> Option<u32> {
        let tag = self.tag;
        let n = &mut s.numbers;
        let all = n.tag != tag || n.words.len() != self.width;
        if all {
            n.tag = tag;
            n.words = vec![0; self.width].into_boxed_slice();
            n.hash = (0..self.width)
                .map(|at| hash_at(at, 0))
                .fold(0, u64::wrapping_add);
        }
        let (np, nc) = (s.procs.len(), s.cells.len());
        let buf = &mut self.buf;
        renumber(&mut self.procs, buf, tag, s.procs.shared(), n, 0, all);
        renumber(&mut self.cells, buf, tag, &mut s.cells, n, np, all);
        renumber(&mut self.mem, buf, tag, &mut s.mem, n, np + nc, all);
        let width = self.width;
        let (h, new) = (n.hash, &n.words[..]);
        let arena = &self.arena;
        let seen = self.table.find(h, |&(hi, i)| {
            let i = i as usize;
            hi == h && &arena[i * width..(i + 1) * width] == new
        });
        if seen.is_some() {
            return None;
        }
        let id = self.table.len() as u32;
        self.arena.extend_from_slice(new);
        self.table.insert_unique(h, (h, id), |&(hi, _)| hi);
        self.hashes.push(h);
        Some(id)
    }

    /// Makes `s` (a state of this table's shape, whatever it holds) state `id`: its parts
    /// the table's copies, its numbers the table's, none recorded as written. A handle
    /// `s` already holds is left alone, so loading a state much like the one `s` was
    /// touches only the parts that differ.
    pub fn load(&self, id: u32, s: &mut State) {
        let width = self.width;
        let id = id as usize;
        let w = &self.arena[id * width..(id + 1) * width];
        let (np, nc) = (s.procs.len(), s.cells.len());
        let procs = s.procs.shared();
        for (i, &k) in w[..np].iter().enumerate() {
            procs.set(i, &self.procs.items[k as usize]);
        }
        procs.forget_written();
        for (i, &k) in w[np..np + nc].iter().enumerate() {
            s.cells.set(i, &self.cells.items[k as usize]);
        }
        s.cells.forget_written();
        for (i, &k) in w[np + nc..].iter().enumerate() {
            s.mem.set(i, &self.mem.items[k as usize]);
        }
        s.mem.forget_written();
        let n = &mut s.numbers;
        n.tag = self.tag;
        if n.words.len() == width {
            n.words.copy_from_slice(w);
        } else {
            n.words = w.into();
        }
        n.hash = self.hashes[id];
    }
}
