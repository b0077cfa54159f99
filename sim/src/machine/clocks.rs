//! The machine's table of credit-unit clocks: every distinct vector clock a credit unit
//! holds is kept once and numbered, and a unit holds its clock's number
//! ([`ClockId`]). So a unit is a plain copyable record of a few words: copying a cell
//! copies its units with one `memcpy`, and a cell's packed record holds one word per
//! unit clock. Two units have equal numbers exactly when their clocks are equal (the
//! table compares clocks in full), so states compare as before; the numbers depend on
//! the order the clocks were met, so anything that must not depend on the search (the
//! terminal states' fingerprints) reads the clocks themselves.

use super::pack::cell_resolved;
use super::state::{Part, State};
use super::Machine;
use crate::fingerprint::{hash_words, Fp};
use hashbrown::HashTable;
use std::hash::Hasher;

/// A credit unit's vector clock, by its number in the machine's [`Clocks`].
pub type ClockId = u32;

/// The distinct unit clocks met, numbered in the order met.
#[derive(Debug, Default)]
pub struct Clocks {
    /// Clock `i` is `words[at[i]..at[i + 1]]`.
    words: Vec<u32>,
    at: Vec<usize>,
    /// (hash, number).
    table: HashTable<(u64, u32)>,
}

impl Clocks {
    /// The number of clock `c` (numbered now if it is new).
    pub fn intern(&mut self, c: &[u32]) -> ClockId {
        if self.at.is_empty() {
            self.at.push(0);
        }
        let h = hash_words(c);
        let (words, at) = (&self.words, &self.at);
        let hit = self.table.find(h, |&(hi, i)| {
            let i = i as usize;
            hi == h && words[at[i]..at[i + 1]] == *c
        });
        if let Some(&(_, id)) = hit {
            return id;
        }
        let id = (self.at.len() - 1) as u32;
        self.words.extend_from_slice(c);
        self.at.push(self.words.len());
        self.table.insert_unique(h, (h, id), |&(hi, _)| hi);
        id
    }

    /// Clock `id`'s entries.
    pub fn get(&self, id: ClockId) -> &[u32] {
        let i = id as usize;
        &self.words[self.at[i]..self.at[i + 1]]
    }
}

impl Machine<'_> {
    /// A 128-bit fingerprint of a state (terminal states, for the reduction's
    /// cross-check): its parts' hashes, each cell's over its record with the unit
    /// clocks written out, so two searches of one instance agree on it.
    pub fn fingerprint(&self, s: &State) -> u128 {
        let clocks = self.clocks.borrow();
        let mut h = Fp::default();
        let mut buf = Vec::new();
        h.write_usize(s.procs.len());
        for p in s.procs.iter() {
            h.write_u64(p.fp());
        }
        h.write_usize(s.cells.len());
        for c in &s.cells {
            buf.clear();
            cell_resolved(c, &clocks, &mut buf);
            h.write_u64(hash_words(&buf));
        }
        h.write_usize(s.mem.len());
        for m in &s.mem {
            h.write_u64(m.fp());
        }
        h.finish128()
    }
}

#[cfg(test)]
mod tests {
    use super::Clocks;

    #[test]
    fn equal_clocks_get_one_number_and_read_back() {
        let mut c = Clocks::default();
        let a = c.intern(&[1, 0, 2]);
        let b = c.intern(&[1, 0, 3]);
        let e = c.intern(&[]);
        assert_ne!(a, b);
        assert_eq!(c.intern(&[1, 0, 2]), a);
        assert_eq!(c.intern(&[]), e);
        assert_eq!(c.get(a), [1, 0, 2]);
        assert_eq!(c.get(b), [1, 0, 3]);
        assert_eq!(c.get(e), [0u32; 0]);
    }
}
