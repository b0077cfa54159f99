//! Canonicalisation: renumbering epochs so states that differ only in
//! absolute epoch values become one state.

use super::clocks::{ClockId, Clocks};
use super::state::{
    cell_mut, mem_mut, recycle, AccRec, Cell, Epochs, Proc, Recycle, Shared, State, Status, WinMem,
};
use super::{Machine, Part};
use crate::fingerprint::PartHasher;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::rc::Rc;

/// The renumbering of every process's epochs: the epochs still recorded, as
/// `(process << 32) | epoch`, sorted, and where each process's run starts. One per
/// thread is kept between calls, so its vectors are allocated once.
/// When every recorded epoch is below 128 (the common case: epochs are renumbered to
/// their ranks) the epochs are kept as one bit set per process (`masks`), and ranks are
/// population counts: no sorting.
#[derive(Default)]
struct Renumber {
    keys: Vec<u64>,
    start: Vec<usize>,
    /// Bit `e` of `masks[q]`: process `q`'s epoch `e` is recorded (used when `small`).
    masks: Vec<u128>,
    small: bool,
    /// The processes whose epochs the renumbering changes (for the others it is the
    /// identity: their recorded epochs are exactly `1..=k` and none is larger than `k`).
    moved: Vec<usize>,
    /// Ranks of the moved processes' epochs (when `small`): for `(at, len) = rank_at[q]`,
    /// `ranks[at + v]` is `f(q, v)` for `v < len`; every epoch of `q` is below `len`.
    ranks: Vec<u32>,
    rank_at: Vec<Option<(u32, u32)>>,
    /// The unit clocks renumbered in this state, as (old number, new number): each
    /// distinct clock is renumbered once.
    remap: Vec<(ClockId, ClockId)>,
    /// Scratch for a renumbered unit clock.
    tmp: Vec<u32>,
    /// The windows' numbers in the explorer's table (its tag first) that `win_union`
    /// was computed for: equal numbers in one table are equal windows, so the
    /// successors of one state, which share its windows, compute it once.
    win_key: Vec<u32>,
    /// The union of the windows' epoch sets, per process (none: an epoch is 128 or more).
    win_union: Option<Vec<u128>>,
    /// The renumbered parts, by the explorer's table ([`Memos`]).
    memo: Memos,
}

/// The most entries [`Memos`] keeps per kind before it starts again: the memoised parts
/// are held alive, and a memo of 2^18 entries made the reduced searches whose states move
/// often slower (more memory touched) though they executed fewer instructions.
const MEMO_CAP: usize = 1 << 12;

/// A map with the parts' fast hasher.
type Map<K, V> = HashMap<K, V, BuildHasherDefault<PartHasher>>;

/// (renumbering, part's number in the table, position for a process) → the part
/// renumbered (none: the renumbering leaves it as it is).
type Renumbered<T> = Map<(u32, u32, u32), Option<Rc<T>>>;

/// The parts renumbered so far in one search: a part the explorer's table numbered,
/// renumbered by one renumbering, is always the same part, so a state whose epochs
/// move takes the result of the first time (shared, and numbered in the table once the
/// first state holding it was) instead of copying, renumbering and numbering the part
/// again. A renumbering is identified by the moved processes and their epoch sets
/// (`small` only: the ranks are a function of the sets), numbered in `sigs`; a part by
/// its number in the table tagged `tag`, and a process also by its position (its
/// call-entry epochs are renumbered as its own). The unit clocks a renumbered cell
/// holds were interned when it was made, so reusing it interns nothing.
#[derive(Default)]
struct Memos {
    tag: u32,
    /// (moved process, its epoch set) of every moved process, in order → the
    /// renumbering's number.
    sigs: Map<Vec<u128>, u32>,
    /// The current state's renumbering (none: not memoised).
    sig: Option<u32>,
    procs: Renumbered<Proc>,
    cells: Renumbered<Cell>,
    mems: Renumbered<WinMem>,
    /// Scratch for a renumbering's key.
    key: Vec<u128>,
}

impl Memos {
    /// Names the renumbering of the moved processes `moved`, whose epoch sets are in
    /// `masks`, for a state whose parts the table tagged `tag` numbered (0: none, not
    /// memoised).
    fn start(&mut self, tag: u32, moved: &[usize], masks: &[u128]) {
        self.sig = None;
        if tag == 0 {
            return;
        }
        let sizes = [
            self.sigs.len(),
            self.procs.len(),
            self.cells.len(),
            self.mems.len(),
        ];
        if self.tag != tag || sizes.iter().any(|n| *n > MEMO_CAP) {
            self.tag = tag;
            self.sigs.clear();
            self.procs.clear();
            self.cells.clear();
            self.mems.clear();
        }
        self.key.clear();
        for &q in moved {
            self.key.extend_from_slice(&[q as u128, masks[q]]);
        }
        let next = self.sigs.len() as u32;
        let sig = match self.sigs.get(&self.key[..]) {
            Some(&n) => n,
            None => {
                self.sigs.insert(self.key.clone(), next);
                next
            }
        };
        self.sig = Some(sig);
    }

    /// The key of part `x` (at position `pos`) under the current renumbering, if it is
    /// memoised.
    fn key<T: Part>(&self, x: &T, pos: usize) -> Option<(u32, u32, u32)> {
        Some((self.sig?, x.cache().id(self.tag)?, pos as u32))
    }
}

/// Makes part `i` of `parts` the memoised renumbering `hit` (when it moves).
fn take_memo<T: Recycle>(parts: &mut Shared<T>, i: usize, hit: &Option<Rc<T>>) {
    if let Some(h) = hit {
        recycle(std::mem::replace(parts.write(i), Rc::clone(h)));
    }
}

impl Renumber {
    /// The union of `s`'s windows' epoch sets per process, when every epoch is below
    /// 128; `s`'s windows must be unwritten since the table numbered them.
    fn window_union(&mut self, s: &State) -> Option<&[u128]> {
        let (np, nw) = (s.procs.len(), s.mem.len());
        let n = &s.numbers;
        let at = n.words.len().checked_sub(nw)?;
        let key = &n.words[at..];
        let hit = self.win_key.first() == Some(&n.tag) && self.win_key[1..] == *key;
        if !hit {
            self.win_key.clear();
            self.win_key.push(n.tag);
            self.win_key.extend_from_slice(key);
            let mut u = self.win_union.take().unwrap_or_default();
            u.clear();
            u.resize(np, 0);
            let mut small = true;
            for m in &s.mem {
                match &epochs(m).masks {
                    Some(v) => {
                        for (q, x) in v {
                            if let Some(y) = u.get_mut(*q as usize) {
                                *y |= *x;
                            }
                        }
                    }
                    None => small = false,
                }
            }
            self.win_union = small.then_some(u);
        }
        self.win_union.as_deref()
    }
}

/// The bit set of epochs `1..=k` (what [`dense_len`] recognises).
#[cfg(test)]
fn dense(k: u32) -> u128 {
    if k == 0 {
        0
    } else if k >= 128 {
        u128::MAX
    } else {
        ((1u128 << k) - 1) << 1
    }
}

/// The `k` with `m == dense(k)`, if there is one (without counting bits: a population
/// count of a `u128` is a few dozen instructions on the baseline x86-64 target).
fn dense_len(m: u128) -> Option<u32> {
    if m == u128::MAX {
        return Some(128);
    }
    let h = m >> 1;
    (m & 1 == 0 && h & h.wrapping_add(1) == 0).then(|| 128 - h.leading_zeros())
}

impl Renumber {
    /// `v`'s rank among process `q`'s recorded epochs (how many are `<= v`).
    fn f(&self, q: usize, v: u32) -> u32 {
        if self.small {
            if let Some((at, len)) = self.rank_at[q] {
                return match (v < len, len) {
                    (true, _) => self.ranks[(at + v) as usize],
                    (false, 0) => 0,
                    (false, _) => self.ranks[(at + len - 1) as usize],
                };
            }
            let m = self.masks[q];
            return if v >= 127 {
                m.count_ones()
            } else {
                (m & ((2u128 << v) - 1)).count_ones()
            };
        }
        self.keys[self.start[q]..self.start[q + 1]].partition_point(|k| *k as u32 <= v) as u32
    }

    fn moves(&self, c: &[u32]) -> bool {
        self.moved.iter().any(|&q| self.f(q, c[q]) != c[q])
    }

    /// Renumbers a clock (only the moved processes' entries change: for the others the
    /// renumbering is the identity on every epoch the state holds).
    fn fix(&self, c: &mut [u32]) {
        for &q in &self.moved {
            c[q] = self.f(q, c[q]);
        }
    }

    /// The number of unit clock `id` renumbered (the same number when it does not move).
    fn fix_id(&mut self, clocks: &mut Clocks, id: ClockId) -> ClockId {
        if let Some(&(_, new)) = self.remap.iter().find(|(old, _)| *old == id) {
            return new;
        }
        let c = clocks.get(id);
        let new = if self.moves(c) {
            let mut tmp = std::mem::take(&mut self.tmp);
            tmp.clear();
            tmp.extend_from_slice(c);
            self.fix(&mut tmp);
            let new = clocks.intern(&tmp);
            self.tmp = tmp;
            new
        } else {
            id
        };
        self.remap.push((id, new));
        new
    }

    /// Tabulates the moved processes' ranks (`small` only).
    fn tabulate(&mut self) {
        self.ranks.clear();
        self.rank_at.clear();
        self.rank_at.resize(self.masks.len(), None);
        for &q in &self.moved {
            let m = self.masks[q];
            let len = 128 - m.leading_zeros();
            let at = self.ranks.len() as u32;
            let mut c = 0;
            for v in 0..len {
                c += (m >> v) as u32 & 1;
                self.ranks.push(c);
            }
            self.rank_at[q] = Some((at, len));
        }
    }

    fn rec_moves(&self, rec: &AccRec) -> bool {
        !self.moved.is_empty()
            && rec
                .write
                .iter()
                .chain(rec.reads.iter())
                .any(|a| self.f(a.proc as usize, a.epoch) != a.epoch)
    }

    fn mem_moves(&self, m: &WinMem) -> bool {
        m.acc.segs.iter().any(|(_, rec)| self.rec_moves(rec))
            || m.acc.segs.windows(2).any(|w| w[0].1 == w[1].1)
    }
}

/// The epochs recorded in window `m`'s access records (computed once per version of
/// the window): one bit set per process while every epoch is below 128 (no sorting, no
/// key vector), the sorted keys otherwise.
fn epochs(m: &WinMem) -> &Epochs {
    m.epochs.get(|| {
        let accs = || {
            m.acc
                .segs
                .iter()
                .flat_map(|(_, rec)| rec.write.iter().chain(rec.reads.iter()))
        };
        let mut masks: Vec<(u32, u128)> = Vec::new();
        for a in accs() {
            if a.epoch >= 128 {
                let mut keys: Vec<u64> = accs()
                    .map(|a| ((a.proc as u64) << 32) | a.epoch as u64)
                    .collect();
                keys.sort_unstable();
                keys.dedup();
                return Epochs { keys, masks: None };
            }
            let (q, bit) = (u32::from(a.proc), 1u128 << a.epoch);
            match masks.iter_mut().find(|(p, _)| *p == q) {
                Some((_, x)) => *x |= bit,
                None => masks.push((q, bit)),
            }
        }
        Epochs {
            keys: Vec::new(),
            masks: Some(masks),
        }
    })
}

/// Appends the keys `(process << 32) | epoch` of the epochs `e` records.
fn extend_keys(keys: &mut Vec<u64>, e: &Epochs) {
    match &e.masks {
        Some(v) => {
            for &(q, m) in v {
                keys.extend(
                    (0..128u64)
                        .filter(|b| m >> b & 1 == 1)
                        .map(|b| (u64::from(q) << 32) | b),
                );
            }
        }
        None => keys.extend_from_slice(&e.keys),
    }
}

/// The first call whose entry epochs are still needed: while some process may still
/// leave that call (the call-entry epochs of earlier calls are no longer checked).
fn live_call(s: &State) -> usize {
    s.procs
        .iter()
        .map(|q| match q.status {
            Status::Run => q.call as usize,
            Status::CallDone => q.call as usize + 1,
            Status::Finished | Status::Fault => usize::MAX,
        })
        .min()
        .unwrap_or(usize::MAX)
}

/// Whether a state that was canonical when the explorer's table last numbered its parts
/// (a successor of a canonical state: its parent's numbers) still is, looking only at
/// what was written since (`Shared::written`). False when that cannot be told cheaply
/// (a window was written: an overwritten access record may have held the last copy of
/// any process's epoch), and then the caller renumbers from scratch.
///
/// Exact: with no window written, a process the step did not write records the same
/// epochs as in the canonical parent, unless a call-entry epoch is cleared (checked
/// here for every process), and keeps its own clock entry; so only the written
/// processes' epochs need to be `1..=k` with their own clock entry at most `k`. Their
/// epochs in the windows come from [`Renumber::window_union`], computed once for the
/// successors of one state (the windows are their parent's, and so are their numbers).
fn still_canonical(s: &mut State, r: &mut Renumber) -> bool {
    let (np, nw) = (s.procs.len(), s.mem.len());
    if s.mem.written() != 0 || np > 64 || nw > 64 {
        return false;
    }
    let live = live_call(s);
    if s.procs
        .iter()
        .any(|q| q.entries.iter().take(live).any(|e| *e != 0))
    {
        return false;
    }
    let mut bits = s.procs.shared().written();
    let Some(windows) = r.window_union(s) else {
        return false;
    };
    while bits != 0 {
        let p = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        if p >= np {
            break;
        }
        let pr = &s.procs[p];
        let own = (!pr.bump).then_some(pr.clock[p]);
        let mut mask = 0u128;
        for e in own
            .into_iter()
            .chain(pr.entries.iter().skip(live).copied().filter(|e| *e != 0))
        {
            if e >= 128 {
                return false;
            }
            mask |= 1u128 << e;
        }
        match dense_len(mask | windows[p]) {
            Some(k) if pr.clock[p] <= k => {}
            _ => return false,
        }
    }
    true
}

impl Machine<'_> {
    /// Renumbers every epoch of every process to its rank among the epochs of
    /// that process still recorded in the state (its current epoch, epochs of
    /// recorded window accesses, call-entry epochs still to be checked). Every
    /// comparison the race and barrier checks make is between a clock entry
    /// and a recorded epoch, and the renumbering preserves all of those, so
    /// states that differ only in absolute epoch values become one state.
    /// Cells and windows the renumbering leaves as they are stay shared.
    ///
    /// A state whose parts the explorer's table numbered (`State::numbers`) is taken to
    /// have been canonical then (the explorer numbers only canonical states), so a
    /// successor whose step wrote no window is checked through the processes it wrote
    /// alone ([`still_canonical`]; debug builds check that against the full renumbering).
    pub fn canonicalize(&self, s: &mut State) {
        thread_local! {
            static SCRATCH: RefCell<Renumber> = RefCell::new(Renumber::default());
        }
        SCRATCH.with(|r| match r.try_borrow_mut() {
            Ok(mut r) => self.canonicalize_with(s, &mut r),
            Err(_) => self.canonicalize_with(s, &mut Renumber::default()),
        })
    }

    fn canonicalize_with(&self, s: &mut State, r: &mut Renumber) {
        if s.numbers.tag != 0 && still_canonical(s, r) {
            #[cfg(debug_assertions)]
            {
                let mut full = s.clone();
                self.renumber_all(&mut full, &mut Renumber::default());
                debug_assert!(full == *s, "a state the step left canonical was renumbered");
            }
            return;
        }
        self.renumber_all(s, r);
    }

    /// Canonicalisation from scratch: every process and window examined.
    fn renumber_all(&self, s: &mut State, r: &mut Renumber) {
        // Call-entry epochs are needed while some process may still leave that call.
        let live = live_call(s);
        clear_entries(s, live);
        record_masks(s, r, live);
        r.moved.clear();
        if r.small {
            moved_by_masks(s, r);
        } else {
            moved_by_keys(s, r, live);
        }
        if r.small && !r.moved.is_empty() {
            r.tabulate();
            r.memo.start(s.numbers.tag, &r.moved, &r.masks);
        } else {
            r.memo.sig = None;
        }
        if r.moved.is_empty() {
            // The identity: nothing to renumber (and every window's access records are
            // already merged, as every write to them leaves them).
            return;
        }
        self.renumber_procs(s, r);
        self.renumber_cells(s, r);
        renumber_mems(s, r);
    }

    /// Renumbers the processes' clocks and call-entry epochs (`r.moved` not empty). A
    /// process met before under the same renumbering takes the memoised result
    /// ([`Memos`]).
    #[inline(never)]
    fn renumber_procs(&self, s: &mut State, r: &mut Renumber) {
        for q in 0..s.procs.len() {
            let key = r.memo.key(&s.procs[q], q);
            if let Some(hit) = key.and_then(|k| r.memo.procs.get(&k)) {
                #[cfg(debug_assertions)]
                {
                    let mut p = s.procs[q].clone();
                    let moved = proc_moves(&p, q, r);
                    if moved {
                        renumber_proc(&mut p, q, r);
                    }
                    match hit {
                        Some(h) => debug_assert!(moved && **h == p, "memoised process"),
                        None => debug_assert!(!moved, "memoised unmoved process"),
                    }
                }
                take_memo(s.procs.shared(), q, hit);
                continue;
            }
            let moves = proc_moves(&s.procs[q], q, r);
            if moves {
                renumber_proc(&mut s.procs[q], q, r);
            }
            if let Some(k) = key {
                let done = moves.then(|| Rc::clone(&s.procs.shared()[q]));
                r.memo.procs.insert(k, done);
            }
        }
    }

    /// Renumbers the cells' release clocks and their units' clocks (`r.moved` not empty).
    /// A cell met before under the same renumbering takes the memoised result
    /// ([`Memos`]).
    #[inline(never)]
    fn renumber_cells(&self, s: &mut State, r: &mut Renumber) {
        r.remap.clear();
        let mut clocks = self.clocks.borrow_mut();
        for i in 0..s.cells.len() {
            let key = r.memo.key(&*s.cells[i], 0);
            if let Some(hit) = key.and_then(|k| r.memo.cells.get(&k)) {
                // The check below renumbers the cell again, which needs `r` to write.
                #[cfg(debug_assertions)]
                let hit = &hit.clone();
                #[cfg(debug_assertions)]
                {
                    let mut c = (*s.cells[i]).clone();
                    let moved = cell_moves(&c, r, &mut clocks);
                    if moved {
                        renumber_cell(&mut c, r, &mut clocks);
                    }
                    match hit {
                        Some(h) => debug_assert!(moved && **h == c, "memoised cell"),
                        None => debug_assert!(!moved, "memoised unmoved cell"),
                    }
                }
                take_memo(&mut s.cells, i, hit);
                continue;
            }
            let moves = cell_moves(&s.cells[i], r, &mut clocks);
            if moves {
                renumber_cell(cell_mut(&mut s.cells, i), r, &mut clocks);
            }
            if let Some(k) = key {
                let done = moves.then(|| Rc::clone(&s.cells[i]));
                r.memo.cells.insert(k, done);
            }
        }
    }
}

/// Zeroes the call-entry epochs no process needs any more (of calls before `live`).
fn clear_entries(s: &mut State, live: usize) {
    for q in 0..s.procs.len() {
        let entries = &s.procs[q].entries;
        if entries.iter().take(live).any(|e| *e != 0) {
            // Written only when something changes: the process stays shared otherwise.
            for e in s.procs[q].entries.iter_mut().take(live) {
                *e = 0;
            }
        }
    }
}

/// Records in `r.masks` the epochs still recorded: a process's current epoch (unless
/// a release ended it), the call-entry epochs still needed, and the windows' access
/// records. `r.small` says whether every one is below 128 (fits a mask).
fn record_masks(s: &State, r: &mut Renumber, live: usize) {
    let np = s.procs.len();
    r.masks.clear();
    r.masks.resize(np, 0);
    r.small = true;
    for q in 0..np {
        let pr = &s.procs[q];
        let own = (!pr.bump).then_some(pr.clock[q]);
        for e in own
            .into_iter()
            .chain(pr.entries.iter().skip(live).copied().filter(|e| *e != 0))
        {
            if e < 128 {
                r.masks[q] |= 1u128 << e;
            } else {
                r.small = false;
            }
        }
    }
    for m in &s.mem {
        match &epochs(m).masks {
            Some(v) => {
                for (q, m) in v {
                    r.masks[*q as usize] |= *m;
                }
            }
            None => r.small = false,
        }
    }
}

/// The processes whose epochs must be renumbered, from the masks (`r.small`).
fn moved_by_masks(s: &State, r: &mut Renumber) {
    // Every epoch of q anywhere in the state is at most q's own clock entry.
    for (q, &mask) in r.masks.iter().enumerate() {
        let moved = match dense_len(mask) {
            Some(k) => s.procs[q].clock[q] > k,
            None => true,
        };
        if moved {
            r.moved.push(q);
        }
    }
}

/// The processes whose epochs must be renumbered, from the sorted (process, epoch)
/// keys of every recorded epoch (some epoch too large for a mask).
fn moved_by_keys(s: &State, r: &mut Renumber, live: usize) {
    let np = s.procs.len();
    let key = |q: usize, e: u32| ((q as u64) << 32) | e as u64;
    let keys = &mut r.keys;
    keys.clear();
    keys.extend(
        (0..np)
            .filter(|q| !s.procs[*q].bump)
            .map(|q| key(q, s.procs[q].clock[q])),
    );
    for q in 0..np {
        keys.extend(
            s.procs[q]
                .entries
                .iter()
                .skip(live)
                .filter(|e| **e != 0)
                .map(|e| key(q, *e)),
        );
    }
    for m in &s.mem {
        extend_keys(keys, epochs(m));
    }
    keys.sort_unstable();
    keys.dedup();
    r.start.clear();
    r.start
        .extend((0..=np).map(|q| keys.partition_point(|k| (*k >> 32) < q as u64)));
    let (keys, start) = (&r.keys, &r.start);
    r.moved.extend((0..np).filter(|&q| {
        let run = &keys[start[q]..start[q + 1]];
        let dense = run.iter().zip(1u32..).all(|(k, i)| *k as u32 == i);
        !dense || s.procs[q].clock[q] > run.len() as u32
    }));
}

/// Whether the renumbering changes a process's clock or call-entry epochs (process `q`).
fn proc_moves(p: &Proc, q: usize, r: &Renumber) -> bool {
    r.moves(&p.clock) || p.entries.iter().any(|e| *e != 0 && r.f(q, *e) != *e)
}

/// Renumbers a process's clock and call-entry epochs (process `q`).
fn renumber_proc(p: &mut Proc, q: usize, r: &Renumber) {
    r.fix(&mut p.clock);
    for e in p.entries.iter_mut().filter(|e| **e != 0) {
        *e = r.f(q, *e);
    }
}

/// Whether the renumbering changes a cell's release clocks or its units' clocks.
fn cell_moves(c: &Cell, r: &mut Renumber, clocks: &mut Clocks) -> bool {
    r.moves(&c.clock)
        || c.history.iter().any(|h| r.moves(&h.clock))
        || c.units
            .iter()
            .chain(c.history.iter().flat_map(|h| h.units.iter()))
            .any(|u| r.fix_id(clocks, u.clock) != u.clock)
}

/// Renumbers a cell's release clocks and its units' clocks.
fn renumber_cell(c: &mut Cell, r: &mut Renumber, clocks: &mut Clocks) {
    r.fix(&mut c.clock);
    for u in c.units.iter_mut() {
        u.clock = r.fix_id(clocks, u.clock);
    }
    for h in c.history.iter_mut() {
        r.fix(&mut h.clock);
        for u in h.units.iter_mut() {
            u.clock = r.fix_id(clocks, u.clock);
        }
    }
}

/// Renumbers the windows' access records (`r.moved` not empty). A window met before
/// under the same renumbering takes the memoised result ([`Memos`]).
#[inline(never)]
fn renumber_mems(s: &mut State, r: &mut Renumber) {
    for i in 0..s.mem.len() {
        let key = r.memo.key(&*s.mem[i], 0);
        if let Some(hit) = key.and_then(|k| r.memo.mems.get(&k)) {
            #[cfg(debug_assertions)]
            {
                let mut m = (*s.mem[i]).clone();
                let moved = r.mem_moves(&m);
                if moved {
                    renumber_mem(&mut m, r);
                }
                match hit {
                    Some(h) => debug_assert!(moved && **h == m, "memoised window"),
                    None => debug_assert!(!moved, "memoised unmoved window"),
                }
            }
            take_memo(&mut s.mem, i, hit);
            continue;
        }
        let moves = r.mem_moves(&s.mem[i]);
        if moves {
            renumber_mem(mem_mut(&mut s.mem, i), r);
        }
        if let Some(k) = key {
            let done = moves.then(|| Rc::clone(&s.mem[i]));
            r.memo.mems.insert(k, done);
        }
    }
}

/// Renumbers a window's access records.
fn renumber_mem(m: &mut WinMem, r: &Renumber) {
    for (_, rec) in m.acc.segs.iter_mut() {
        if let Some(w) = rec.write.as_mut() {
            w.epoch = r.f(w.proc as usize, w.epoch);
        }
        for a in rec.reads.iter_mut() {
            a.epoch = r.f(a.proc as usize, a.epoch);
        }
    }
    m.acc.normalize();
}

#[cfg(test)]
mod tests {
    use super::{dense, dense_len};

    /// `dense_len` agrees with the definition it replaces: `m == dense(popcount(m))`.
    #[test]
    fn dense_len_is_the_popcount_test() {
        let mut masks = vec![
            0u128,
            1,
            2,
            3,
            6,
            7,
            0b1010,
            0b1110,
            u128::MAX,
            u128::MAX - 1,
        ];
        masks.extend((0..=128).map(dense));
        masks.extend((1..128).map(|k| dense(k) ^ (1 << k)));
        masks.extend((0..128).map(|k| 1u128 << k));
        masks.extend((1..127).map(|k| dense(k) | (1 << (k + 1)) << 1));
        for m in masks {
            let k = m.count_ones();
            let want = (m == dense(k)).then_some(k);
            assert_eq!(dense_len(m), want, "mask {m:#x}");
        }
    }
}
