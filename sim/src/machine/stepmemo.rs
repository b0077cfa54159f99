//! The memo of process steps (exhaustive search, `sc` mode): a `Run` step of process
//! `p` is a function of `p`'s own state and of the parts of the state it reads (cells,
//! windows, its rank's other processes), and of nothing else — the machine's tables of
//! clocks and expected outputs only grow, and give a number or a value once for good.
//! The explorer's table numbers parts by full equality, so a step taken from a state
//! whose process `p` and read parts carry the numbers a step taken before read has the
//! same result: the parts it wrote, which the memo keeps shared (numbered by the table
//! when the successor was, so numbering them again is one look-up of their cached
//! number).
//!
//! The memo is looked up by (process, its number); each entry lists the parts (by
//! position in the state's vector of numbers) its step read, with their numbers, and
//! matches when the state holds those numbers. The first step of a process version
//! only notes the version as met (most versions a reduced search meets step once); a
//! later step that matches no entry runs, with every read recorded ([`Shared::reads`]:
//! by index, the part; any other access, every part of the kind), and is noted. Steps that report findings or stop the run, and runs
//! that trace or record accesses, are not memoised. Debug builds run every step the
//! memo answers again and compare. Relaxed mode is not memoised (its steps are
//! `Stale` and `Drain` actions as well; they run as they are).

use super::state::{recycle, Action, Cell, Outcome, Proc, Recycle, Shared, State, WinMem};
use super::Machine;
use crate::fingerprint::mix;
use hashbrown::HashTable;
use std::rc::Rc;

/// The most entries kept; past it the memo starts again.
const CAP: usize = 1 << 16;
/// The most entries kept per (process, number): past it the oldest goes.
const PER_KEY: usize = 8;

/// One memoised step.
struct Entry {
    /// (position in the state's vector of part numbers, the number the step read there).
    reads: Box<[(u32, u32)]>,
    /// The parts the step wrote (and those sharing a bit of [`Shared::written`] with one,
    /// beyond 64 parts of a kind), as they were after it: processes, cells, windows.
    procs: Box<[(u32, Rc<Proc>)]>,
    cells: Box<[(u32, Rc<Cell>)]>,
    mem: Box<[(u32, Rc<WinMem>)]>,
    /// Instructions the step executed.
    instrs: u64,
}

/// The memo of one search ([`StepMemo::step`]).
#[derive(Default)]
pub struct StepMemo {
    /// ((process, number) as one key, the entries of that key, newest last).
    table: HashTable<(u64, Vec<Entry>)>,
    /// The tag of the table of seen states whose numbers the entries hold.
    tag: u32,
    len: usize,
    /// Steps answered and steps run.
    pub hits: u64,
    pub misses: u64,
}

impl StepMemo {
    /// A memo for one search.
    pub fn new() -> Self {
        Self::default()
    }

    /// Performs action `a` on `s`, as [`Machine::step`] does, answering it from the memo
    /// when it can. `s` is a state the explorer numbered, not written since.
    pub fn step(&mut self, m: &Machine, s: &mut State, a: Action, out: &mut Outcome) {
        let p = match a {
            Action::Run(p) if self.applies(m, s, out) => p as usize,
            _ => return m.step(s, a, out),
        };
        if s.numbers.tag != self.tag {
            self.table.clear();
            self.len = 0;
            self.tag = s.numbers.tag;
        }
        let key = (p as u64) << 32 | s.numbers.words[p] as u64;
        let h = mix(key);
        let words = &s.numbers.words;
        let Some((_, v)) = self.table.find(h, |e| e.0 == key) else {
            // The first step of this process version: only noted as met, since most
            // versions a search meets once (a reduced search's) never step again.
            self.misses += 1;
            self.grow();
            self.table.insert_unique(h, (key, Vec::new()), |e| mix(e.0));
            return m.step(s, a, out);
        };
        let hit = v
            .iter()
            .rev()
            .find(|e| e.reads.iter().all(|&(at, n)| words[at as usize] == n));
        if let Some(e) = hit {
            self.hits += 1;
            #[cfg(debug_assertions)]
            let mut real = {
                let mut copy = s.clone();
                let mut o = Outcome::default();
                m.step(&mut copy, a, &mut o);
                assert!(o.findings.is_empty() && o.stop.is_none() && o.instrs == e.instrs);
                copy
            };
            replay(s.procs.shared(), &e.procs);
            replay(&mut s.cells, &e.cells);
            replay(&mut s.mem, &e.mem);
            out.instrs += e.instrs;
            #[cfg(debug_assertions)]
            {
                assert!(
                    *s == real,
                    "the memoised step of process {p} differs from the step"
                );
                assert_eq!(s.procs.shared().written(), real.procs.shared().written());
                assert_eq!(s.cells.written(), real.cells.written());
                assert_eq!(s.mem.written(), real.mem.written());
            }
            return;
        }
        self.misses += 1;
        s.procs.shared().clear_reads();
        s.cells.clear_reads();
        s.mem.clear_reads();
        let before = out.instrs;
        m.step(s, a, out);
        if !out.findings.is_empty() || out.stop.is_some() {
            return;
        }
        let (np, nc) = (s.procs.len(), s.cells.len());
        let mut reads = Vec::new();
        let words = &s.numbers.words;
        let mut note = |base: usize, i: usize| {
            if base + i != p {
                reads.push(((base + i) as u32, words[base + i]));
            }
        };
        each(s.procs.shared().reads(), np, |i| note(0, i));
        each(s.cells.reads(), nc, |i| note(np, i));
        each(s.mem.reads(), s.mem.len(), |i| note(np + nc, i));
        let e = Entry {
            reads: reads.into(),
            procs: written(s.procs.shared()),
            cells: written(&s.cells),
            mem: written(&s.mem),
            instrs: out.instrs - before,
        };
        self.grow();
        match self.table.find_mut(h, |e| e.0 == key) {
            Some((_, v)) => {
                if v.len() >= PER_KEY {
                    v.remove(0);
                    self.len -= 1;
                }
                v.push(e);
            }
            None => {
                self.table.insert_unique(h, (key, vec![e]), |e| mix(e.0));
            }
        }
    }

    /// Counts one more entry (a step, or a process version met), starting the memo
    /// again when it is full.
    fn grow(&mut self) {
        if self.len >= CAP {
            self.table.clear();
            self.len = 0;
        }
        self.len += 1;
    }

    /// The memo answers this step's kind: `sc`, no trace or access recording, and a
    /// state numbered by the explorer and not written since.
    fn applies(&self, m: &Machine, s: &mut State, out: &Outcome) -> bool {
        m.memory == super::Memory::Sc
            && out.events.is_none()
            && out.accesses.is_none()
            && s.numbers.tag != 0
            && s.numbers.words.len() == s.procs.len() + s.cells.len() + s.mem.len()
            && s.procs.shared().written() == 0
            && s.cells.written() == 0
            && s.mem.written() == 0
    }
}

/// Calls `f` with every index below `n` whose bit (`i % 64`) is set in `bits`.
fn each(bits: u64, n: usize, mut f: impl FnMut(usize)) {
    if bits == 0 {
        return;
    }
    if n > 64 || bits == u64::MAX {
        for i in (0..n).filter(|i| bits >> (i % 64) & 1 == 1) {
            f(i);
        }
        return;
    }
    let mut b = bits;
    while b != 0 {
        let i = b.trailing_zeros() as usize;
        b &= b - 1;
        if i < n {
            f(i);
        }
    }
}

/// The parts written since the state was numbered, as they are now (shared).
fn written<T>(shared: &Shared<T>) -> Box<[(u32, Rc<T>)]> {
    let mut v = Vec::new();
    each(shared.written(), shared.len(), |i| {
        v.push((i as u32, Rc::clone(&shared[i])))
    });
    v.into()
}

/// Writes the memoised parts into the state (each recorded as written, as the step
/// recorded it).
fn replay<T: Recycle>(shared: &mut Shared<T>, parts: &[(u32, Rc<T>)]) {
    for (i, x) in parts {
        let slot = shared.write(*i as usize);
        if !Rc::ptr_eq(slot, x) {
            recycle(std::mem::replace(slot, Rc::clone(x)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{each, Shared};
    use std::rc::Rc;

    fn indices(bits: u64, n: usize) -> Vec<usize> {
        let mut v = Vec::new();
        each(bits, n, |i| v.push(i));
        v
    }

    #[test]
    fn each_lists_the_parts_a_word_of_bits_stands_for() {
        assert_eq!(indices(0b1010, 8), vec![1, 3]);
        assert_eq!(indices(1 << 9, 8), Vec::<usize>::new());
        assert_eq!(indices(u64::MAX, 3), vec![0, 1, 2]);
        // Beyond 64 parts a bit stands for every part sharing it.
        assert_eq!(indices(0b10, 130), vec![1, 65, 129]);
        assert_eq!(indices(0, 130), Vec::<usize>::new());
    }

    #[test]
    fn shared_records_reads_by_index_and_all_parts_otherwise() {
        let s: Shared<u32> = (0..5).map(Rc::new).collect();
        assert_eq!(s.reads(), 0);
        assert_eq!(s.len(), 5);
        assert_eq!(s.reads(), 0, "the length reads no part");
        assert_eq!(*s[3], 3);
        assert_eq!(s.get(1).map(|x| **x), Some(1));
        assert_eq!(s.reads(), 0b1010);
        s.clear_reads();
        assert_eq!(s.iter().count(), 5);
        assert_eq!(s.reads(), u64::MAX);
        s.clear_reads();
        assert_eq!(s.first().map(|x| **x), Some(0), "through the slice");
        assert_eq!(s.reads(), u64::MAX);
        let mut s = s;
        s.clear_reads();
        *s.write(2) = Rc::new(7);
        assert_eq!(
            (s.reads(), s.written()),
            (0b100, 0b100),
            "a write is a read"
        );
    }
}
