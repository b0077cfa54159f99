//! The state of the whole system and the types a step speaks in: the memory
//! model, vector clocks, signal cells with their credit units and provenance,
//! windows with their data and access history, processes, the scheduler's
//! actions, a step's outcome and the loop limits.

use super::clocks::ClockId;
use super::footprint::DataAcc;
use super::pack::Pack;
use crate::fingerprint::{hash_words, FpCache};
use crate::report::{Event, Finding};
use crate::value::{Piece, Segs, Val};
use collc_spec::ir::{CmpOp, ReduceOp};
use std::cell::{OnceCell, RefCell};
use std::hash::{Hash, Hasher};
use std::rc::Rc;
use std::thread::LocalKey;

/// Memory model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Memory {
    /// Sequentially consistent: every access is visible to all at once.
    Sc,
    /// Window writes are buffered until a fence (a notify may overtake them), and
    /// cell reads may return a stale cached value until invalidated.
    Relaxed,
}

/// A part of a state that is shared between states until written (a process, a cell,
/// a window): its contents' fingerprint and the cache that keeps it, and its packed
/// record ([`Pack`]), equal for two parts exactly when they are equal.
pub trait Part: Eq + Pack {
    /// The fingerprint of the contents (cached until the part is written).
    fn fp(&self) -> u64;
    /// The cache of the fingerprint and of the part's number in the explorer's table.
    fn cache(&self) -> &FpCache;
}

/// A vector clock, one entry per process.
pub type Clock = Vec<u32>;

/// The fingerprint of a part: the hash of its packed record.
fn packed_fp<T: Pack>(x: &T) -> u64 {
    let mut w = Vec::new();
    x.pack(&mut w);
    hash_words(&w)
}

pub(super) fn join(a: &mut [u32], b: &[u32]) {
    for (x, y) in a.iter_mut().zip(b) {
        if *y > *x {
            *x = *y;
        }
    }
}

/// One credit unit in a cell: who added how much, in which call, from which statement.
/// A plain record: its vector clock is kept in the machine's table of clocks
/// (`clocks.rs`), by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Unit {
    /// The writer's call (0-based).
    pub call: u16,
    /// The writing process.
    pub writer: u16,
    /// The writer's notify counter within the call (orders its units).
    pub seq: u32,
    /// The notify statement.
    pub stmt: u32,
    /// The writer's vector clock at the notify (what a wait counting this unit
    /// acquires), by its number in the machine's table of clocks.
    pub clock: ClockId,
    /// Credits (negative: a debt left by an over-subtraction).
    pub amount: i64,
    /// Processes whose passing waits counted this unit (bit per process).
    pub counted: u128,
}

/// A credit unit's identity and order in its cell: (call, writer, sequence).
pub(super) type UnitKey = (u16, u16, u32);

impl Unit {
    pub(super) fn key(&self) -> UnitKey {
        (self.call, self.writer, self.seq)
    }
}

/// Who last wrote a value signal's cell (`as value`): its provenance, as credit
/// units are for counters. A read that observes a value of another call is a
/// `sim::stale-value`; a `per call` cell read before its call wrote it is a
/// `sim::uninit-read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The writer's call (0-based).
    pub call: u16,
    /// The writing process.
    pub writer: u16,
    /// The notify statement.
    pub stmt: u32,
}

/// An earlier version of a cell (relaxed mode keeps the ones a cache may still hold).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OldCell {
    pub(super) version: u32,
    pub(super) value: i64,
    pub(super) units: Vec<Unit>,
    pub(super) clock: Clock,
    pub(super) origin: Option<Origin>,
}

/// A signal cell.
#[derive(Debug, PartialEq, Eq)]
pub struct Cell {
    /// Current value.
    pub value: i64,
    /// Credit units (sorted by call, writer, sequence); empty for value signals.
    pub units: Vec<Unit>,
    /// Release clock: the join of every write since the last `Set`.
    pub clock: Clock,
    /// Number of writes so far.
    pub version: u32,
    /// Value signals: the last write (none before the first write to this instance).
    pub origin: Option<Origin>,
    pub(super) history: Vec<OldCell>,
    /// Fingerprint of the fields above (cleared by [`cell_mut`]).
    pub(super) fp: FpCache,
}

impl Clone for Cell {
    fn clone(&self) -> Self {
        Cell {
            units: self.units.clone(),
            clock: self.clock.clone(),
            history: self.history.clone(),
            fp: self.fp.clone(),
            ..*self
        }
    }
    /// Reuses `self`'s vectors.
    fn clone_from(&mut self, src: &Self) {
        let Cell {
            value,
            units,
            clock,
            version,
            origin,
            history,
            fp,
        } = src;
        self.value = *value;
        self.units.clone_from(units);
        self.clock.clone_from(clock);
        self.version = *version;
        self.origin = *origin;
        self.history.clone_from(history);
        self.fp.clone_from(fp);
    }
}

impl Hash for Cell {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fp());
    }
}

impl Part for Cell {
    fn fp(&self) -> u64 {
        self.fp.get_or(|| packed_fp(self))
    }
    fn cache(&self) -> &FpCache {
        &self.fp
    }
}

/// Cell `i` of a state, to write: unshared from other states, its fingerprint cleared.
/// Every write to a cell goes through here.
pub(super) fn cell_mut(cells: &mut Shared<Cell>, i: usize) -> &mut Cell {
    let c = unshare(cells.write(i), &CELLS);
    c.fp.clear();
    c
}

/// Window memory `m` of a state, to write: unshared, its fingerprint cleared. Every
/// write to a window goes through here.
pub(super) fn mem_mut(mem: &mut Shared<WinMem>, m: usize) -> &mut WinMem {
    let w = unshare(mem.write(m), &MEMS);
    w.fp.clear();
    w.epochs.clear();
    w
}

/// One recorded window access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Acc {
    /// The process.
    pub proc: u16,
    /// Its epoch (own clock entry) at the access.
    pub epoch: u32,
    /// Its call.
    pub call: u16,
    /// The statement, or [`STAGE`] / [`CONSUME`].
    pub what: u32,
}

/// `Acc::what` of the host staging the next call's input.
pub const STAGE: u32 = u32::MAX;
/// `Acc::what` of the host reading a call's output.
pub const CONSUME: u32 = u32::MAX - 1;
/// Marks `Acc::what` of the combining access of a reduction into a peer's window (an
/// atomic accumulation, recorded with the reads), as opposed to the read of its source.
pub const ACCUM: u32 = 1 << 30;

/// Access history of a run of elements (FastTrack style: last write, reads since).
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub struct AccRec {
    pub(super) write: Option<Acc>,
    pub(super) reads: Vec<Acc>,
}

impl Clone for AccRec {
    fn clone(&self) -> Self {
        AccRec {
            write: self.write,
            reads: self.reads.clone(),
        }
    }
    /// Reuses `self`'s vector.
    fn clone_from(&mut self, src: &Self) {
        self.write = src.write;
        self.reads.clone_from(&src.reads);
    }
}

impl Piece for AccRec {
    fn shifted(&self, _: i64) -> Self {
        self.clone()
    }
}

/// A window on one rank.
#[derive(Debug, PartialEq, Eq)]
pub struct WinMem {
    /// Contents.
    pub vals: Segs<Val>,
    pub(super) acc: Segs<AccRec>,
    /// Fingerprint of the fields above (cleared by [`mem_mut`]).
    pub(super) fp: FpCache,
    /// The epochs recorded in `acc`, for canonicalisation (cleared by [`mem_mut`]).
    pub(super) epochs: Memo<Epochs>,
}

/// The epochs recorded in a window's access history: when every one is below 128, as
/// one bit set per process that has any (`(q, m)`: bit `e` of `m` says process `q`'s
/// epoch `e` is recorded; in no particular order), else (`masks` none) as
/// `(process << 32) | epoch`, sorted and deduplicated (`keys`, empty otherwise).
#[derive(Debug, Clone, Default)]
pub(super) struct Epochs {
    pub(super) keys: Vec<u64>,
    pub(super) masks: Option<Vec<(u32, u128)>>,
}

/// Data derived from a part of the state, computed once and dropped when the part is
/// written; it takes no part in equality.
#[derive(Debug, Clone, Default)]
pub struct Memo<T>(OnceCell<T>);

impl<T> Memo<T> {
    /// The value, computed by `f` if absent.
    pub(super) fn get(&self, f: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(f)
    }
    /// Forgets the value (the part is about to change).
    pub(super) fn clear(&mut self) {
        self.0.take();
    }
}

impl<T> PartialEq for Memo<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Eq for Memo<T> {}

impl Clone for WinMem {
    fn clone(&self) -> Self {
        WinMem {
            vals: self.vals.clone(),
            acc: self.acc.clone(),
            fp: self.fp.clone(),
            epochs: self.epochs.clone(),
        }
    }
    /// Reuses `self`'s vectors (the epochs memo, derived data, is recomputed on demand).
    fn clone_from(&mut self, src: &Self) {
        let WinMem {
            vals,
            acc,
            fp,
            epochs: _,
        } = src;
        self.vals.clone_from(vals);
        self.acc.clone_from(acc);
        self.fp.clone_from(fp);
        self.epochs.clear();
    }
}

impl Hash for WinMem {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fp());
    }
}

impl Part for WinMem {
    fn fp(&self) -> u64 {
        self.fp.get_or(|| packed_fp(self))
    }
    fn cache(&self) -> &FpCache {
        &self.fp
    }
}

/// A process's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Running its call.
    Run,
    /// Finished its call; waits for the other blocks of its rank.
    CallDone,
    /// Finished every call.
    Finished,
    /// Stopped by a runtime error.
    Fault,
}

/// A window write not yet visible, or a remote read in flight (relaxed mode).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pending {
    /// The destination's rank (the issuer's for a tile).
    pub(super) rank: u16,
    /// The destination window (a tile when `read` says so).
    pub(super) win: u16,
    pub(super) lo: u64,
    /// The data written; empty for a read in flight (it reads when it completes).
    pub(super) pieces: Vec<(u64, Val)>,
    pub(super) stmt: u32,
    /// A remote read in flight: its source, read when the entry completes.
    pub(super) read: Option<InFlight>,
}

/// The source of a remote read in flight (relaxed mode): `get ... @ q` or `reduce ... @ q`
/// of another rank's window is an asynchronous transfer that completes at a `fence`, at
/// the end of the call, or at any time before (a scheduler action, like a buffered write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InFlight {
    pub(super) rank: u16,
    pub(super) win: u16,
    pub(super) lo: u64,
    pub(super) len: u64,
    /// The reduction combining the data read with the destination (`reduce`).
    pub(super) op: Option<ReduceOp>,
    /// The destination is a tile of the issuer.
    pub(super) tile: bool,
}

impl Pending {
    /// Elements written.
    pub(super) fn len(&self) -> u64 {
        match self.read {
            Some(r) => r.len,
            None => self.pieces.iter().map(|x| x.0).sum(),
        }
    }

    /// Whether the entry writes elements `lo..hi` of window `w` on `rank` (`tile`: of a
    /// tile `w` of the issuer).
    pub(super) fn writes(&self, tile: bool, rank: usize, w: usize, lo: u64, hi: u64) -> bool {
        let to_tile = self.read.is_some_and(|r| r.tile);
        to_tile == tile
            && (tile || self.rank as usize == rank)
            && self.win as usize == w
            && self.lo < hi
            && self.lo + self.len() > lo
    }
}

/// One process: a block of a rank.
#[derive(Debug, PartialEq, Eq)]
pub struct Proc {
    /// Lifecycle.
    pub status: Status,
    /// Program counter into [`Code::instrs`](crate::code::Code::instrs).
    pub pc: u32,
    /// Current call (0-based).
    pub call: u16,
    pub(super) slots: Vec<i64>,
    /// Vector clock.
    pub clock: Clock,
    /// A notify released the current epoch: the next recorded access or entry starts a new one.
    pub(super) bump: bool,
    pub(super) seq: u32,
    /// Own epoch at the entry of each call.
    pub(super) tiles: Tiles,
    pub(super) pending: Vec<Pending>,
    /// Cached cells (relaxed): (cell index, oldest version a read may return).
    pub(super) cache: Vec<(u32, u32)>,
    /// Scheduler transitions this process has taken (over all calls): its position in
    /// the footprint the partial-order reduction computes ([`crate::por`]). A function
    /// of the rest of its local state, so it never splits states.
    pub steps: u32,
    /// Barrier semantics: the epoch at which this process entered each call (0: not
    /// yet, or no longer needed by any check).
    pub(super) entries: Vec<u32>,
    /// Sticky polling (relaxed + `sticky_poll`): the failing value a poll of the pending
    /// wait cached and keeps re-reading; the wait can then never pass.
    pub(super) pin: Option<i64>,
    /// Fingerprint of the fields above (cleared by every write through [`Procs`]).
    pub(super) fp: FpCache,
    /// The wait at the program counter, resolved (cell, comparison, threshold; computed
    /// once per version of the process, which copies of a state share, and cleared by
    /// every write through [`Procs`]): a function of the fields above.
    pub(super) wait: Memo<PendingWait>,
}

/// The wait a running process is blocked at or about to pass: (cell, comparison,
/// threshold), or why it cannot be resolved; none when the process is not at a wait.
pub type PendingWait = Option<Result<(usize, CmpOp, i64), String>>;

impl Clone for Proc {
    fn clone(&self) -> Self {
        Proc {
            slots: self.slots.clone(),
            clock: self.clock.clone(),
            tiles: self.tiles.clone(),
            pending: self.pending.clone(),
            cache: self.cache.clone(),
            entries: self.entries.clone(),
            fp: self.fp.clone(),
            wait: self.wait.clone(),
            ..*self
        }
    }
    /// Reuses `self`'s vectors.
    fn clone_from(&mut self, src: &Self) {
        let Proc {
            status,
            pc,
            call,
            slots,
            clock,
            bump,
            seq,
            tiles,
            pending,
            cache,
            steps,
            entries,
            pin,
            fp,
            wait,
        } = src;
        self.status = *status;
        self.pc = *pc;
        self.call = *call;
        self.slots.clone_from(slots);
        self.clock.clone_from(clock);
        self.bump = *bump;
        self.seq = *seq;
        self.tiles.clone_from(tiles);
        self.pending.clone_from(pending);
        self.cache.clone_from(cache);
        self.steps = *steps;
        self.entries.clone_from(entries);
        self.pin = *pin;
        self.fp.clone_from(fp);
        self.wait.clone_from(wait);
    }
}

impl Hash for Proc {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fp());
    }
}

impl Part for Proc {
    fn fp(&self) -> u64 {
        self.fp.get_or(|| packed_fp(self))
    }
    fn cache(&self) -> &FpCache {
        &self.fp
    }
}

/// The processes of a state, each shared with other states until a step writes it
/// (`Rc::make_mut`, as for cells and windows). Indexing to write (`procs[p].pc += 1`,
/// [`Procs::iter_mut`]) unshares the process and clears its fingerprint, so every write
/// goes through here.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub struct Procs(Shared<Proc>);

impl Clone for Procs {
    fn clone(&self) -> Self {
        Procs(self.0.clone())
    }
    /// Reuses `self`'s vectors (the explorer's scratch successor).
    fn clone_from(&mut self, src: &Self) {
        self.0.clone_from(&src.0);
    }
}

impl Procs {
    /// Number of processes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there is no process.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The processes, to read.
    pub fn iter(&self) -> impl Iterator<Item = &Proc> + '_ {
        self.0.iter().map(|p| &**p)
    }

    /// The processes, to write (each unshared).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Proc> + '_ {
        self.0.write_all().map(proc_mut)
    }

    /// The shared processes themselves, with the record of those written (for the
    /// explorer's table of distinct parts).
    pub fn shared(&mut self) -> &mut Shared<Proc> {
        &mut self.0
    }
}

fn proc_mut(p: &mut Rc<Proc>) -> &mut Proc {
    let p = unshare(p, &PROCS);
    p.fp.clear();
    p.wait.clear();
    p
}

impl std::ops::Index<usize> for Procs {
    type Output = Proc;
    fn index(&self, i: usize) -> &Proc {
        &self.0[i]
    }
}

impl std::ops::IndexMut<usize> for Procs {
    fn index_mut(&mut self, i: usize) -> &mut Proc {
        proc_mut(self.0.write(i))
    }
}

impl FromIterator<Proc> for Procs {
    fn from_iter<I: IntoIterator<Item = Proc>>(it: I) -> Self {
        Procs(it.into_iter().map(Rc::new).collect())
    }
}

/// The parts of one kind of a state (its processes, cells or windows), each shared
/// with other states until a step writes it, and which of them were handed out to
/// write since the explorer's table last numbered the state ([`Shared::write`],
/// [`Shared::take_written`]): the table renumbers only those. Reading is by index
/// (`shared[i]`), by [`Shared::iter`] or through the slice (`Deref`); every read is
/// recorded ([`Shared::reads`]: by index, the part read; otherwise every part), which is
/// what the memo of steps (`stepmemo.rs`) keys a step by. Equality and hashing are the
/// parts' alone.
#[derive(Debug)]
pub struct Shared<T> {
    parts: Vec<Rc<T>>,
    /// Bit `i % 64`: some part `j` with `j % 64 == i` was handed out to write (one word,
    /// kept in the state: beyond 64 parts a bit stands for several, each renumbered).
    written: u64,
    /// Bit `i % 64`: some part `j` with `j % 64 == i` was read or handed out to write
    /// since [`Shared::clear_reads`] (derived data: no part in equality).
    read: std::cell::Cell<u64>,
}

impl<T> Shared<T> {
    /// Part `i`'s handle, to write or replace (recorded as written, and as read).
    pub(super) fn write(&mut self, i: usize) -> &mut Rc<T> {
        self.written |= 1 << (i % 64);
        self.mark(i);
        &mut self.parts[i]
    }

    /// Every part's handle, to write (all recorded as written and read).
    pub(super) fn write_all(&mut self) -> impl Iterator<Item = &mut Rc<T>> + '_ {
        self.written = u64::MAX;
        self.read.set(u64::MAX);
        self.parts.iter_mut()
    }

    /// Records a read of part `i`.
    #[inline]
    fn mark(&self, i: usize) {
        self.read.set(self.read.get() | 1 << (i % 64));
    }

    /// Number of parts (not a read of any).
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// True when there is no part.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Part `i`, if there is one (a read of it).
    pub fn get(&self, i: usize) -> Option<&Rc<T>> {
        self.mark(i);
        self.parts.get(i)
    }

    /// Every part, to read (a read of all).
    pub fn iter(&self) -> std::slice::Iter<'_, Rc<T>> {
        self.read.set(u64::MAX);
        self.parts.iter()
    }

    /// Which parts were read or handed out to write since the last
    /// [`Shared::clear_reads`] (bit `i % 64` for part `i`, as [`Shared::written`]).
    pub fn reads(&self) -> u64 {
        self.read.get()
    }

    /// Forgets the reads recorded.
    pub fn clear_reads(&self) {
        self.read.set(0);
    }

    /// Calls `f` with the index of every part written since the last call (and of the
    /// parts that share a bit with one), in order, and forgets them.
    pub fn take_written(&mut self, mut f: impl FnMut(&mut Self, usize)) {
        let mut bits = std::mem::take(&mut self.written);
        let n = self.parts.len();
        if n > 64 {
            for i in (0..n).filter(|i| bits >> (i % 64) & 1 == 1) {
                f(self, i);
            }
            return;
        }
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if i < n {
                f(self, i);
            }
        }
    }

    /// Which parts were handed out to write since the last [`Shared::take_written`]
    /// (bit `i % 64` for part `i`), without forgetting them.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Forgets which parts were written.
    pub fn forget_written(&mut self) {
        self.written = 0;
    }

    /// Makes part `i` the given one (the explorer's table's copy of the part a state it
    /// loads has there; not a write): the handle is replaced only when it differs, so a
    /// part already held is not touched.
    pub fn set(&mut self, i: usize, to: &Rc<T>)
    where
        T: Recycle,
    {
        if !Rc::ptr_eq(&self.parts[i], to) {
            recycle(std::mem::replace(&mut self.parts[i], Rc::clone(to)));
        }
    }
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Shared {
            parts: Vec::new(),
            written: 0,
            read: std::cell::Cell::new(0),
        }
    }
}

impl<'a, T> IntoIterator for &'a Shared<T> {
    type Item = &'a Rc<T>;
    type IntoIter = std::slice::Iter<'a, Rc<T>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// The slice of every part: a read of all of them.
impl<T> std::ops::Deref for Shared<T> {
    type Target = [Rc<T>];
    fn deref(&self) -> &[Rc<T>] {
        self.read.set(u64::MAX);
        &self.parts
    }
}

/// Part `i`: a read of it.
impl<T> std::ops::Index<usize> for Shared<T> {
    type Output = Rc<T>;
    #[inline]
    fn index(&self, i: usize) -> &Rc<T> {
        self.mark(i);
        &self.parts[i]
    }
}

impl<T: Recycle> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared {
            parts: self.parts.clone(),
            written: self.written,
            read: std::cell::Cell::new(0),
        }
    }
    /// Reuses `self`'s vector, and leaves alone the parts `self` already shares with
    /// `src` (the explorer's scratch successor is mostly a copy of the same parent):
    /// only the handles that differ are replaced, so the shared parts' reference counts,
    /// in the parts' own cold memory, are not touched. A replaced part that nothing
    /// else holds (a part a step wrote) is recycled.
    fn clone_from(&mut self, src: &Self) {
        if self.parts.len() == src.parts.len() {
            for (d, s) in self.parts.iter_mut().zip(&src.parts) {
                if !Rc::ptr_eq(d, s) {
                    recycle(std::mem::replace(d, Rc::clone(s)));
                }
            }
        } else {
            self.parts.clone_from(&src.parts);
        }
        self.written = src.written;
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, o: &Self) -> bool {
        self.parts == o.parts
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.parts.hash(h)
    }
}

impl<T> FromIterator<Rc<T>> for Shared<T> {
    fn from_iter<I: IntoIterator<Item = Rc<T>>>(it: I) -> Self {
        Shared {
            parts: it.into_iter().collect(),
            written: 0,
            read: std::cell::Cell::new(0),
        }
    }
}

/// A process's tiles (its local buffers), shared between copies of the process until
/// one writes them: most steps leave them as they are, so copying, hashing and
/// comparing a process touches one pointer and one cached fingerprint for them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Tiles(Rc<TileData>);

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct TileData {
    bufs: Vec<Segs<Val>>,
    fp: FpCache,
}

impl Hash for TileData {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fp.get(|f| self.bufs.hash(f)));
    }
}

impl Tiles {
    pub(super) fn new(bufs: Vec<Segs<Val>>) -> Self {
        Tiles(Rc::new(TileData {
            bufs,
            fp: FpCache::default(),
        }))
    }

    /// Every tile, to read.
    pub(super) fn bufs(&self) -> &[Segs<Val>] {
        &self.0.bufs
    }

    /// Tile `t`, to read.
    pub(super) fn get(&self, t: usize) -> &Segs<Val> {
        &self.0.bufs[t]
    }

    /// Tile `t`, to write: unshared, the fingerprint cleared.
    pub(super) fn get_mut(&mut self, t: usize) -> &mut Segs<Val> {
        let d = Rc::make_mut(&mut self.0);
        d.fp.clear();
        &mut d.bufs[t]
    }
}

/// The most recycled copies kept per kind of part.
const POOL_CAP: usize = 64;

/// Recycled parts, each owned by its pool alone ([`recycle`]).
type Pool<T> = RefCell<Vec<Rc<T>>>;

thread_local! {
    static PROCS: Pool<Proc> = const { RefCell::new(Vec::new()) };
    static CELLS: Pool<Cell> = const { RefCell::new(Vec::new()) };
    static MEMS: Pool<WinMem> = const { RefCell::new(Vec::new()) };
}

/// A part of a state, to write: unshared from other states. A shared part is copied
/// into a recycled one when the pool has one (`clone_from` reuses its vectors, so the
/// copy allocates nothing), else into a new allocation.
fn unshare<'a, T: Clone>(x: &'a mut Rc<T>, pool: &'static LocalKey<Pool<T>>) -> &'a mut T {
    if Rc::get_mut(x).is_none() {
        if let Some(mut fresh) = pool.with(|p| p.borrow_mut().pop()) {
            if let Some(f) = Rc::get_mut(&mut fresh) {
                f.clone_from(x);
                *x = fresh;
            }
        }
    }
    Rc::make_mut(x)
}

fn keep<T>(x: Rc<T>, pool: &'static LocalKey<Pool<T>>) {
    if Rc::strong_count(&x) == 1 && Rc::weak_count(&x) == 0 {
        pool.with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                if p.len() < POOL_CAP {
                    p.push(x);
                }
            }
        });
    }
}

/// A part whose handle the explorer replaced (a successor's written part, when the
/// state holding it is overwritten): kept for the next write if nothing else holds it.
pub trait Recycle: Sized {
    /// Keeps `x` for reuse when it is not shared.
    fn recycle(x: Rc<Self>);
}

impl Recycle for Proc {
    fn recycle(x: Rc<Self>) {
        keep(x, &PROCS)
    }
}

impl Recycle for Cell {
    fn recycle(x: Rc<Self>) {
        keep(x, &CELLS)
    }
}

impl Recycle for WinMem {
    fn recycle(x: Rc<Self>) {
        keep(x, &MEMS)
    }
}

/// Recycles a part ([`Recycle`]).
pub fn recycle<T: Recycle>(x: Rc<T>) {
    T::recycle(x)
}

/// The whole system.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Processes, rank-major (`rank * blocks + block`), shared like the cells.
    pub procs: Procs,
    /// Cells, rank-major. Shared between states until a step writes one
    /// (`Rc::make_mut`): a successor copies only the cells and windows its step touches.
    pub cells: Shared<Cell>,
    /// Windows, rank-major (`rank * windows + w`), shared like the cells.
    pub mem: Shared<WinMem>,
    /// The state's parts' numbers in the explorer's table, as its parent had them
    /// until the table renumbers the parts written since ([`crate::visited`]).
    pub numbers: Numbers,
}

/// A state's parts' numbers in the explorer's table of distinct parts (processes, then
/// cells, then windows), the table's tag (0: none), and the state's hash, the wrapping
/// sum of one hash per (position, number), updated as numbers change. Derived data: it
/// takes no part in equality or hashing.
#[derive(Debug, Default)]
pub struct Numbers {
    /// The tag of the table that gave the numbers.
    pub tag: u32,
    /// One number per part.
    pub words: Box<[u32]>,
    /// The hash of `words`.
    pub hash: u64,
}

impl Clone for Numbers {
    fn clone(&self) -> Self {
        Numbers {
            tag: self.tag,
            words: self.words.clone(),
            hash: self.hash,
        }
    }
    /// Reuses `self`'s words when they are as many.
    fn clone_from(&mut self, src: &Self) {
        self.tag = src.tag;
        if self.words.len() == src.words.len() {
            self.words.copy_from_slice(&src.words);
        } else {
            self.words.clone_from(&src.words);
        }
        self.hash = src.hash;
    }
}

impl PartialEq for Numbers {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Numbers {}

impl Hash for Numbers {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}

impl Clone for State {
    fn clone(&self) -> Self {
        State {
            procs: self.procs.clone(),
            cells: self.cells.clone(),
            mem: self.mem.clone(),
            numbers: self.numbers.clone(),
        }
    }
    /// Reuses `self`'s vectors: a successor that turns out to be a duplicate leaves
    /// them to the next successor, which then allocates nothing for them.
    fn clone_from(&mut self, src: &Self) {
        self.procs.clone_from(&src.procs);
        self.cells.clone_from(&src.cells);
        self.mem.clone_from(&src.mem);
        self.numbers.clone_from(&src.numbers);
    }
}

/// An action of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Action {
    /// Run process `p` to its next notify or wait (its pending wait reads the current value).
    Run(u16),
    /// Process `p`'s pending wait passes on the oldest stale value its cache may return (relaxed).
    Stale(u16),
    /// The oldest buffered window write of process `p` becomes visible (relaxed).
    Drain(u16),
    /// Process `p`'s blocked wait polls, caches the current (failing) value and from then on
    /// re-reads only that cached line (relaxed with sticky polling).
    Pin(u16),
}

/// What a step produced besides the new state.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Violations found during the step.
    pub findings: Vec<Finding>,
    /// Trace events (only when tracing).
    pub events: Option<Vec<Event>>,
    /// Set when a budget stops the run.
    pub stop: Option<String>,
    /// Instructions executed.
    pub instrs: u64,
    /// Window accesses made (recorded only when asked for: the footprint run).
    pub accesses: Option<Vec<DataAcc>>,
    /// Index into `accesses` where a host step (end of a rank's call) began.
    pub host_from: Option<usize>,
    /// Cells the host read (recorded with `accesses`): all_to_all_v's received counts.
    pub cell_reads: Vec<u32>,
}

/// Limits that keep one run finite.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The most iterations one loop may run.
    pub max_trip: i64,
    /// The most iterations a nest of loops may run (product of the trips).
    pub max_nest: u64,
}

pub(super) fn insert_unit(units: &mut Vec<Unit>, u: Unit) {
    let i = units.partition_point(|x| x.key() <= u.key());
    units.insert(i, u);
}
