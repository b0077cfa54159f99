//! The state of the whole system and the types a step speaks in: the memory
//! model, vector clocks, signal cells with their credit units and provenance,
//! windows with their data and access history, processes, the scheduler's
//! actions, a step's outcome and the loop limits.

use super::footprint::DataAcc;
use crate::fingerprint::FpCache;
use crate::report::{Event, Finding};
use crate::value::{Piece, Segs, Val};
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
/// a window): its contents' fingerprint and the cache that keeps it.
pub trait Part: Eq {
    /// The fingerprint of the contents (cached until the part is written).
    fn fp(&self) -> u64;
    /// The cache of the fingerprint and of the part's number in the explorer's table.
    fn cache(&self) -> &FpCache;
}

/// A vector clock, one entry per process.
pub type Clock = Vec<u32>;

pub(super) fn join(a: &mut [u32], b: &[u32]) {
    for (x, y) in a.iter_mut().zip(b) {
        if *y > *x {
            *x = *y;
        }
    }
}

/// One credit unit in a cell: who added how much, in which call, from which statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unit {
    /// The writer's call (0-based).
    pub call: u16,
    /// The writing process.
    pub writer: u16,
    /// The writer's notify counter within the call (orders its units).
    pub seq: u32,
    /// The notify statement.
    pub stmt: u32,
    /// Credits (negative: a debt left by an over-subtraction).
    pub amount: i64,
    /// Processes whose passing waits counted this unit (bit per process).
    pub counted: u128,
    /// The writer's vector clock at the notify: what a wait counting this unit acquires
    /// (shared between the copies of the unit in copies of the cell).
    pub clock: Rc<[u32]>,
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
        let Cell {
            value,
            units,
            clock,
            version,
            origin,
            history,
            fp,
        } = self;
        fp.get(|f| {
            value.hash(f);
            units.hash(f);
            clock.hash(f);
            version.hash(f);
            origin.hash(f);
            history.hash(f);
        })
    }
    fn cache(&self) -> &FpCache {
        &self.fp
    }
}

/// Cell `i` of a state, to write: unshared from other states, its fingerprint cleared.
/// Every write to a cell goes through here.
pub(super) fn cell_mut(cells: &mut [Rc<Cell>], i: usize) -> &mut Cell {
    let c = unshare(&mut cells[i], &CELLS);
    c.fp.clear();
    c
}

/// Window memory `m` of a state, to write: unshared, its fingerprint cleared. Every
/// write to a window goes through here.
pub(super) fn mem_mut(mem: &mut [Rc<WinMem>], m: usize) -> &mut WinMem {
    let w = unshare(&mut mem[m], &MEMS);
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

/// The epochs recorded in a window's access history: as `(process << 32) | epoch`,
/// sorted and deduplicated, and, when every one is below 128, as one bit set per
/// process that has any (`(q, m)`: bit `e` of `m` says process `q`'s epoch `e` is recorded).
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
        let WinMem {
            vals,
            acc,
            fp,
            epochs: _,
        } = self;
        fp.get(|f| {
            vals.hash(f);
            acc.hash(f);
        })
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

/// A window write not yet visible (relaxed mode).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pending {
    pub(super) rank: u16,
    pub(super) win: u16,
    pub(super) lo: u64,
    pub(super) pieces: Vec<(u64, Val)>,
    pub(super) stmt: u32,
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
}

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
    }
}

impl Hash for Proc {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.fp());
    }
}

impl Part for Proc {
    fn fp(&self) -> u64 {
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
        } = self;
        fp.get(|f| {
            status.hash(f);
            pc.hash(f);
            call.hash(f);
            slots.hash(f);
            clock.hash(f);
            bump.hash(f);
            seq.hash(f);
            tiles.hash(f);
            pending.hash(f);
            cache.hash(f);
            steps.hash(f);
            entries.hash(f);
            pin.hash(f);
        })
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
pub struct Procs(Vec<Rc<Proc>>);

impl Clone for Procs {
    fn clone(&self) -> Self {
        Procs(self.0.clone())
    }
    /// Reuses `self`'s vector (the explorer's scratch successor).
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
        self.0.iter_mut().map(proc_mut)
    }

    /// The shared processes themselves (for the explorer's table of distinct parts).
    pub fn shared(&self) -> &[Rc<Proc>] {
        &self.0
    }

    /// Replaces process `p` by an equal one (the explorer's table's copy) and recycles
    /// the one replaced ([`recycle`]).
    pub fn share(&mut self, p: usize, with: Rc<Proc>) {
        debug_assert!(*self.0[p] == *with);
        recycle(std::mem::replace(&mut self.0[p], with));
    }
}

fn proc_mut(p: &mut Rc<Proc>) -> &mut Proc {
    let p = unshare(p, &PROCS);
    p.fp.clear();
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
        proc_mut(&mut self.0[i])
    }
}

impl FromIterator<Proc> for Procs {
    fn from_iter<I: IntoIterator<Item = Proc>>(it: I) -> Self {
        Procs(it.into_iter().map(Rc::new).collect())
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

/// A part the explorer's table replaced by its equal copy (a successor's written part
/// that was met before): kept for the next write if nothing else holds it.
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
    pub cells: Vec<Rc<Cell>>,
    /// Windows, rank-major (`rank * windows + w`), shared like the cells.
    pub mem: Vec<Rc<WinMem>>,
}

impl Clone for State {
    fn clone(&self) -> Self {
        State {
            procs: self.procs.clone(),
            cells: self.cells.clone(),
            mem: self.mem.clone(),
        }
    }
    /// Reuses `self`'s vectors: a successor that turns out to be a duplicate leaves
    /// them to the next successor, which then allocates nothing for them.
    fn clone_from(&mut self, src: &Self) {
        self.procs.clone_from(&src.procs);
        self.cells.clone_from(&src.cells);
        self.mem.clone_from(&src.mem);
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
