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

use crate::fingerprint::{mix, FpCache};
use crate::machine::{recycle, Cell, Part, Proc, State, WinMem};
use hashbrown::HashTable;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

/// Tags of the tables of parts: each table numbers parts under its own tag, so a
/// number cached by one search is never read by another.
static TAGS: AtomicU32 = AtomicU32::new(1);

/// The distinct parts of one kind, numbered in the order met.
struct Parts<T> {
    items: Vec<Rc<T>>,
    fps: Vec<u64>,
    table: HashTable<u32>,
}

impl<T: Part> Parts<T> {
    fn new() -> Self {
        Parts {
            items: Vec::new(),
            fps: Vec::new(),
            table: HashTable::new(),
        }
    }

    /// The number of `x`, and the table's copy when `x` equals a part met before
    /// under another allocation (the caller shares the copy instead).
    fn number(&mut self, tag: u32, x: &Rc<T>) -> (u32, Option<Rc<T>>) {
        let cache: &FpCache = x.cache();
        if let Some(id) = cache.id(tag) {
            return (id, None);
        }
        let fp = x.fp();
        let (items, fps) = (&self.items, &self.fps);
        let hit = self.table.find(fp, |&i| {
            let i = i as usize;
            fps[i] == fp && (Rc::ptr_eq(&items[i], x) || *items[i] == **x)
        });
        if let Some(&id) = hit {
            cache.set_id(tag, id);
            return (id, Some(Rc::clone(&items[id as usize])));
        }
        let id = self.items.len() as u32;
        self.items.push(Rc::clone(x));
        self.fps.push(fp);
        let fps = &self.fps;
        self.table.insert_unique(fp, id, |&i| fps[i as usize]);
        cache.set_id(tag, id);
        (id, None)
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
    table: HashTable<u32>,
}

/// The hash of a state's vector of part numbers.
fn hash_words(w: &[u32]) -> u64 {
    let mut h = 0u64;
    for x in w {
        h = (h.rotate_left(5) ^ *x as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    mix(h)
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

    /// Adds `s` (its parts replaced by the table's equal copies, so states share them):
    /// its number if it is new, `None` if an equal state was seen before.
    pub fn insert(&mut self, s: &mut State) -> Option<u32> {
        let at = self.arena.len();
        let tag = self.tag;
        for p in 0..s.procs.len() {
            let (id, copy) = self.procs.number(tag, &s.procs.shared()[p]);
            if let Some(c) = copy {
                s.procs.share(p, c);
            }
            self.arena.push(id);
        }
        for cell in s.cells.iter_mut() {
            let (id, copy) = self.cells.number(tag, cell);
            if let Some(x) = copy {
                recycle(std::mem::replace(cell, x));
            }
            self.arena.push(id);
        }
        for m in s.mem.iter_mut() {
            let (id, copy) = self.mem.number(tag, m);
            if let Some(x) = copy {
                recycle(std::mem::replace(m, x));
            }
            self.arena.push(id);
        }
        debug_assert_eq!(self.arena.len() - at, self.width);
        let width = self.width;
        let (arena, new) = self.arena.split_at(at);
        let h = hash_words(new);
        let seen = self.table.find(h, |&i| {
            let i = i as usize * width;
            &arena[i..i + width] == new
        });
        if seen.is_some() {
            self.arena.truncate(at);
            return None;
        }
        let id = (at / width) as u32;
        let arena = &self.arena;
        self.table.insert_unique(h, id, |&i| {
            let i = i as usize * width;
            hash_words(&arena[i..i + width])
        });
        Some(id)
    }
}
