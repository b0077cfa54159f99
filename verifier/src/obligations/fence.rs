//! The `fence` obligation: in the relaxed memory model (`sim/README.md`, LANGUAGE.md §13.7)
//! a process's window writes sit in its store buffer until a `fence` (or the end of its
//! call), and a `notify` does not drain it, so a peer released by the notify can read the
//! old data. The obligation: every window write that another process (or another rank's
//! host) can access after a wait is fenced, in program order, before every notify that can
//! release that wait. And its read half: on hardware a remote read (`get ... @ q`,
//! `reduce ... <- w @ q`) is an asynchronous transfer (Ascend MTE, `MPI_Get`), not complete
//! when a later notify is issued unless a `fence` orders it; so every remote read is fenced
//! before every notify that can release a process that may then overwrite the window
//! instance read (the "read complete" notify).
//!
//! Method, per configuration of the enumerated parameters (the plan of the symbolic
//! obligations, [`crate::engine::exec::Plan`]), for every (rank, block):
//!
//! 1. *Pending writes.* A may-analysis over the statement tree (loops over ranks unrolled,
//!    numeric loops unrolled when their trip count is concrete and small, otherwise iterated
//!    to a fixpoint; both branches of an `if` whose condition is not concrete): the window
//!    writes (`copy`/`get`/`reduce` into a window, `put`) not yet followed by a `fence`.
//!    The host's staging of the call's input is not a pending write: the simulator makes it
//!    visible at once (the backend's *publish* drain before the first notify realises it).
//!    The same walk collects the *pending reads*: remote reads of a window (`get`, `reduce
//!    ... @ q` with `q` not known to be `me`; a tile is never remote) not yet followed by a
//!    `fence`, nor by a local read of its destination in the same block (the same region
//!    expression, read by a later `copy`, `put` or `reduce` of that block: the data
//!    dependency completes the transfer, as hardware and the relaxed simulator do).
//! 2. *Publishes.* Every notify that can release a wait (`+= v` with `v` not known to be
//!    `<= 0`, `-= v` excluded, any `= v`) with pending accesses is an unfenced pair
//!    (write or read, notify).
//! 3. *Who can be released.* The processes waiting on the notified cell, and transitively
//!    every process waiting on a cell such a process notifies (positive), and the hosts of
//!    their ranks (which read the output after the call).
//! 4. *Private or suspect.* A write pair is *private* when none of those processes other
//!    than the writer accesses the written window instance (the window on the written
//!    rank), and no other rank's host does; a private pair cannot be observed. Otherwise it
//!    is *suspect*. A read pair (window `w` on rank `q`) is *suspect* when one of those
//!    processes other than the reader writes `w` on `q`, or `w` is an input `q`'s host
//!    stages before every call ([`meaning::inputs`]), not `per call`
//!    ([`Protocol::window_per_call`]), and a process of `q` is released (its call can end
//!    and its host restage `w`); otherwise it is private.
//!
//! No suspect pair: `proved` for the whole declared domain. A suspect read pair is
//! `violated`. Its finding is labelled on the notify and the read, says the read may still
//! be in flight when the notify releases the peer, and has the help "add `fence;` before
//! line N". Its witness is the relaxed bounded check below (the relaxed simulator keeps a
//! remote read in flight until a fence): a relaxed-only race or wrong result at the read
//! gives the finding its run's parameters and replay; where no run shows it, the finding
//! says so and why that can be (a read of the destination before the notify completes the
//! transfer; the bounds). The analysis has no element regions, so a released process
//! writing other elements of the window is enough (conservative). For
//! writes that imprecision is settled by simulation: a suspect write pair may be harmless
//! (the peer reads other elements: a store of chunk k published by chunk k+1's notify that
//! no peer reads again in that call). Suspect write pairs are decided by the simulator's
//! relaxed bounded check (small bounds, stated in the scope): a data race or wrong result
//! that the sequentially consistent run at the same bounds does not have is a violation,
//! labelled on the notify and the write, with help "add `fence;` before line N" (reported
//! with the read findings, if any); none is `checked` with those bounds (not a proof for
//! the whole domain).

use crate::engine::exec::{self, Plan};
use crate::planning::TABLE;
use crate::report::evidence::{Evidence, Undecided};
use crate::report::scope::{Covered, FenceAttempt, FenceRun, Scope, Symbolic};
use crate::report::{Finding, ObligationResult, ParamValue, Status, WorldRange};
use collc_grammar::Span;
use collc_sim::bounded::{self as sb, BoundedConfig, Bounds};
use collc_sim::{Budget, Memory};
use collc_spec::eval::{eval, eval_cond, Env};
use collc_spec::ir::*;
use collc_spec::meaning;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// The obligation's id.
pub const ID: &str = crate::report::Obligation::Fence.id();

type Key = (usize, usize);

fn key(s: Span) -> Key {
    (s.start, s.end)
}

/// A pending window access: the statement, the window, the rank whose window it accesses
/// (`None`: not concrete), and whether it is a remote read (else a write).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Pend {
    span: Key,
    window: WindowId,
    owner: Option<u32>,
    read: bool,
}

/// A cell: signal, owner rank and index (`None`: not concrete, any).
type CellPat = (SignalId, Option<u32>, Option<Vec<i64>>);

/// What one (rank, block) does, as far as the obligation needs.
#[derive(Default, Debug)]
struct Facts {
    /// Merged per (notify, cell).
    publishes: BTreeMap<(Key, CellPat), BTreeSet<Pend>>,
    /// Window instances read or written: (window, rank).
    accesses: BTreeSet<(WindowId, Option<u32>)>,
    /// Window instances written: (window, rank).
    writes: BTreeSet<(WindowId, Option<u32>)>,
    /// Cells waited on (on its own rank).
    waits: BTreeSet<(SignalId, Option<Vec<i64>>)>,
    /// Cells it can release (positive notifies).
    releases: BTreeSet<CellPat>,
}

struct Walker<'a> {
    p: &'a Protocol,
    env: Env,
    world: i64,
    me: u32,
    facts: Facts,
    returned: bool,
    /// P, the rank and the parameters unknown: loops over ranks iterate to a fixpoint.
    symbolic: bool,
}

type Pending = BTreeSet<Pend>;

impl Walker<'_> {
    fn val(&self, e: &Expr) -> Option<i64> {
        eval(self.p, e, &self.env).ok()
    }

    fn rank(&self, e: &Expr) -> Option<u32> {
        self.val(e)
            .filter(|r| (0..self.world).contains(r))
            .map(|r| r as u32)
    }

    fn index(&self, idx: &[Expr]) -> Option<Vec<i64>> {
        idx.iter().map(|e| self.val(e)).collect()
    }

    fn window(r: &Region) -> Option<WindowId> {
        match r.buffer {
            BufferRef::Window(w) => Some(w),
            BufferRef::Tile(_) => None,
        }
    }

    fn access(&mut self, r: &Region, owner: Option<u32>) {
        if let Some(w) = Self::window(r) {
            self.facts.accesses.insert((w, owner));
        }
    }

    fn write(&mut self, r: &Region, owner: Option<u32>, span: Span, pending: &mut Pending) {
        if let Some(w) = Self::window(r) {
            self.facts.accesses.insert((w, owner));
            self.facts.writes.insert((w, owner));
            pending.insert(Pend {
                span: key(span),
                window: w,
                owner,
                read: false,
            });
        }
    }

    /// A read of `r` on rank `from` (`get`, `reduce ... @ q`): pending when it may be
    /// remote (an asynchronous transfer until a `fence`); a tile is never remote.
    fn read(&mut self, r: &Region, from: Option<u32>, span: Span, pending: &mut Pending) {
        self.access(r, from);
        if let Some(w) = Self::window(r) {
            if from != Some(self.me) {
                pending.insert(Pend {
                    span: key(span),
                    window: w,
                    owner: from,
                    read: true,
                });
            }
        }
    }

    fn block(&mut self, b: &Block, mut pending: Pending) -> Pending {
        for (j, s) in b.stmts.iter().enumerate() {
            if self.returned {
                break;
            }
            completed_by_use(&b.stmts[..j], s, &mut pending);
            pending = self.stmt(s, pending);
        }
        pending
    }

    fn stmt(&mut self, s: &Stmt, mut pending: Pending) -> Pending {
        let me = Some(self.me);
        match &s.kind {
            StmtKind::Let { var, value } => match self.val(value) {
                Some(x) => self.env.set(*var, x),
                None => self.env.unset(*var),
            },
            StmtKind::Notify {
                signal,
                index,
                target,
                op,
                value,
            } => {
                let releasing = match op {
                    NotifyOp::Set => true,
                    NotifyOp::AtomicAdd => {
                        !matches!(value, Expr::Neg(_)) && self.val(value).is_none_or(|v| v > 0)
                    }
                };
                if releasing {
                    let owner = match target {
                        None => me,
                        Some(t) => self.rank(t),
                    };
                    let cell = (*signal, owner, self.index(index));
                    self.facts.releases.insert(cell.clone());
                    if !pending.is_empty() {
                        self.facts
                            .publishes
                            .entry((key(s.span), cell))
                            .or_default()
                            .extend(pending.iter().cloned());
                    }
                }
            }
            StmtKind::Wait { signal, index, .. } => {
                let idx = self.index(index);
                self.facts.waits.insert((*signal, idx));
            }
            StmtKind::Copy { dst, src } => {
                self.access(src, me);
                self.write(dst, me, s.span, &mut pending);
            }
            StmtKind::Get { dst, src, from } => {
                let from = self.rank(from);
                self.read(src, from, s.span, &mut pending);
                self.write(dst, me, s.span, &mut pending);
            }
            StmtKind::Put { dst, to, src } => {
                self.access(src, me);
                let to = self.rank(to);
                self.write(dst, to, s.span, &mut pending);
            }
            StmtKind::Reduce {
                dst, src, from, to, ..
            } => {
                let from = match from {
                    None => me,
                    Some(f) => self.rank(f),
                };
                let to = match to {
                    None => me,
                    Some(t) => self.rank(t),
                };
                self.read(src, from, s.span, &mut pending);
                self.write(dst, to, s.span, &mut pending);
            }
            StmtKind::Fence => pending.clear(),
            StmtKind::For { var, range, body } => {
                pending = self.for_loop(*var, range, body, pending)
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => pending = self.branch(cond, then_block, else_block.as_ref(), pending),
            StmtKind::Return { cond } => {
                // A return that may fire ends the call (which drains); the path that
                // continues is the one that can publish more.
                if eval_cond(self.p, cond, &self.env) == Ok(true) {
                    self.returned = true;
                }
            }
        }
        pending
    }

    /// The values a loop's variable takes, when concrete and few enough to unroll.
    fn loop_values(&self, range: &Range) -> Option<Vec<i64>> {
        match range {
            Range::Peers | Range::Ranks if self.symbolic => None,
            Range::Peers => Some((0..self.world).filter(|r| *r != self.me as i64).collect()),
            Range::Ranks => Some((0..self.world).collect()),
            Range::Seq(q) => match (self.val(&q.lo), self.val(&q.hi), self.val(&q.step)) {
                (Some(lo), Some(hi), Some(step)) => {
                    collc_spec::eval::SeqValues::new(lo, hi, step, q.geometric, q.rev)
                        .ok()
                        .filter(|v| v.len() <= exec::UNROLL_SMALL)
                        .map(|v| v.iter().collect())
                }
                _ => None,
            },
            Range::Span { lo, hi, step } => match (self.val(lo), self.val(hi), self.val(step)) {
                (Some(lo), Some(hi), Some(step))
                    if step > 0
                        && hi
                            .checked_sub(lo)
                            .is_some_and(|d| d.max(0) / step <= exec::UNROLL_SMALL) =>
                {
                    Some((lo..hi).step_by(step as usize).collect())
                }
                _ => None,
            },
        }
    }

    /// A loop: unrolled when its values are concrete and few, else its head's state to a
    /// fixpoint.
    fn for_loop(
        &mut self,
        var: VarId,
        range: &Range,
        body: &Block,
        mut pending: Pending,
    ) -> Pending {
        match self.loop_values(range) {
            Some(vs) => {
                for v in vs {
                    self.env.set(var, v);
                    pending = self.block(body, pending);
                }
            }
            None => {
                // Any number of iterations: the state at the loop head to a fixpoint
                // (pending sets only grow between fences, so this terminates).
                self.env.unset(var);
                loop {
                    let out = self.block(body, pending.clone());
                    let before = pending.len();
                    pending.extend(out);
                    if pending.len() == before {
                        break;
                    }
                }
            }
        }
        self.env.unset(var);
        pending
    }

    /// An `if`: the branch its condition takes, or both joined when it is not concrete.
    fn branch(
        &mut self,
        cond: &Cond,
        then_block: &Block,
        else_block: Option<&Block>,
        pending: Pending,
    ) -> Pending {
        match eval_cond(self.p, cond, &self.env) {
            Ok(true) => self.block(then_block, pending),
            Ok(false) => match else_block {
                Some(e) => self.block(e, pending),
                None => pending,
            },
            Err(_) => {
                let mut out = self.block(then_block, pending.clone());
                match else_block {
                    Some(e) => out.extend(self.block(e, pending)),
                    None => out.extend(pending),
                }
                out
            }
        }
    }
}

/// The destination of a read that may be remote (`get`, `reduce ... @ q`).
fn remote_read_dst(s: &Stmt) -> Option<&Region> {
    match &s.kind {
        StmtKind::Get { dst, .. }
        | StmtKind::Reduce {
            dst, from: Some(_), ..
        } => Some(dst),
        _ => None,
    }
}

/// The regions statement `s` reads on its own rank: a `copy`'s or `put`'s source, a
/// local `reduce`'s source, and the destination of a `reduce` into a local region (it
/// combines into it); a reduction into a peer's window reads only its source here.
fn local_reads(s: &Stmt) -> Vec<&Region> {
    match &s.kind {
        StmtKind::Copy { src, .. } | StmtKind::Put { src, .. } => vec![src],
        StmtKind::Reduce {
            dst, src, from, to, ..
        } => match (from, to) {
            (None, None) => vec![dst, src],
            (Some(_), _) => vec![dst],
            (None, Some(_)) => vec![src],
        },
        _ => Vec::new(),
    }
}

/// The data dependency: statement `s` reads, on its own rank, exactly the destination of
/// an earlier remote read of the same block (`before`: the statements before `s`), so that
/// transfer has completed when `s` runs (hardware waits for a transfer before its
/// destination is used; the relaxed simulator completes it then). The region must be the
/// same expression (every variable is bound once per declaration and the two statements
/// run in the same execution of the block, so they denote the same elements); each such
/// read stops being pending.
fn completed_by_use(before: &[Stmt], s: &Stmt, pending: &mut Pending) {
    let reads = local_reads(s);
    if reads.is_empty() || pending.iter().all(|x| !x.read) {
        return;
    }
    for b in before {
        if remote_read_dst(b).is_some_and(|d| reads.contains(&d)) {
            let k = key(b.span);
            pending.retain(|x| !(x.read && x.span == k));
        }
    }
}

/// What the walk with every value unknown shows, for every world size at once.
enum Structural {
    /// No notify that can release a wait is reached with an access pending.
    NoPair,
    /// Every notify reached with an access pending is of a signal no statement waits
    /// on: it releases no process, so every pair is private. The pairs (access, notify)
    /// and the signals' names.
    Unwaited(usize, Vec<String>),
    /// Some pending access reaches a notify of a waited signal: per configuration.
    Open,
}

/// One walk with P, the rank and the parameters unknown (conditions take both branches,
/// loops iterate to a fixpoint, returns never fire), which over-approximates every
/// execution's pending accesses and every wait of every process (all run the same body).
/// When no notify that can release a wait is reached with a window write or a remote read
/// pending, or every such notify is of a signal no process waits on (nothing is released
/// by it, so its pairs are private), there is no suspect pair for any P.
fn structural(p: &Protocol) -> Structural {
    let mut env = Env::new(p);
    env.set_top_level(p);
    let mut w = Walker {
        p,
        env,
        world: 0,
        me: u32::MAX,
        facts: Facts::default(),
        returned: false,
        symbolic: true,
    };
    let pend = w.block(&p.body, Pending::new());
    w.block(&p.epilogue, pend);
    let f = &w.facts;
    if f.publishes.is_empty() {
        return Structural::NoPair;
    }
    let waited = |s: SignalId| f.waits.iter().any(|(w, _)| *w == s);
    if f.publishes.keys().any(|(_, (s, _, _))| waited(*s)) {
        return Structural::Open;
    }
    let pairs: BTreeSet<PairKey> = f
        .publishes
        .iter()
        .flat_map(|((n, _), pend)| pend.iter().map(|x| pair_key(x, *n)))
        .collect();
    let names: BTreeSet<String> = f
        .publishes
        .keys()
        .map(|(_, (s, _, _))| format!("`{}`", p.signals[*s].name))
        .collect();
    Structural::Unwaited(pairs.len(), names.into_iter().collect())
}

/// The environment of one configuration, or `None` when a `require` rules it out.
fn setup(p: &Protocol, config: &[(VarId, i64)]) -> Option<Env> {
    let mut env = Env::new(p);
    for (v, x) in config {
        env.set(*v, *x);
    }
    env.set_top_level(p);
    for r in &p.requires {
        if eval_cond(p, &r.cond, &env) == Ok(false) {
            return None;
        }
    }
    Some(env)
}

fn cell_matches((sig, idx): &(SignalId, Option<Vec<i64>>), (s2, _, i2): &CellPat) -> bool {
    sig == s2
        && match (idx, i2) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
}

fn rank_matches(a: Option<u32>, b: Option<u32>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// A suspect pair, with the first configuration it occurs in.
#[derive(Clone, Debug)]
struct Suspect {
    /// The write, or the remote read (`read`).
    write: Key,
    notify: Key,
    window: WindowId,
    /// The rank whose window is accessed (`None`: not concrete).
    owner: Option<u32>,
    read: bool,
    config: Vec<(VarId, i64)>,
    actor: (u32, u32),
}

/// A pair: (access, notify, whether the access is a remote read).
type PairKey = (Key, Key, bool);

fn pair_key(w: &Pend, notify: Key) -> PairKey {
    (w.span, notify, w.read)
}

/// What the symbolic part found.
struct Analysis {
    configs: u64,
    pairs: BTreeSet<PairKey>,
    suspects: BTreeMap<PairKey, Suspect>,
    /// Why the analysis stopped: the time budget ([`Undecided::Clock`]), or a form it
    /// does not enumerate ([`Undecided::Form`]).
    unsupported: Option<(Undecided, String)>,
}

/// The windows rank `r`'s host stages with the input of every call, per
/// [`meaning::inputs`] (the root of a rooted kind from `env`; any rank when not concrete).
fn staged(p: &Protocol, env: &Env, r: u32) -> BTreeSet<WindowId> {
    let root = p
        .semantics
        .root()
        .map_or(0, |root| env.get(root).map_or(r as usize, |x| x as usize));
    let shape = meaning::Shape {
        world: 0,
        root,
        window_len: Vec::new(),
        window_row: Vec::new(),
        signal_len: Vec::new(),
        array_len: Vec::new(),
    };
    meaning::inputs(p, &shape, r as usize).into_iter().collect()
}

fn analyse(p: &Protocol, plan: &Plan, worlds: &[i64], deadline: Instant) -> Analysis {
    let mut a = Analysis {
        configs: 0,
        pairs: BTreeSet::new(),
        suspects: BTreeMap::new(),
        unsupported: None,
    };
    if plan.count_at(p, worlds) > TABLE.config_limit {
        a.unsupported = Some((
            Undecided::Form,
            format!(
                "{} configurations to enumerate; the limit is {}",
                plan.count_at(p, worlds),
                TABLE.config_limit
            ),
        ));
        return a;
    }
    exec::configs_at(p, plan, worlds, &mut |cfg| {
        if Instant::now() >= deadline {
            a.unsupported = Some((
                Undecided::Clock,
                "the time budget (--timeout-ms) was spent".into(),
            ));
            return false;
        }
        let Some(env) = setup(p, cfg) else {
            return true;
        };
        let world = env.get(p.world).unwrap_or(1);
        let blocks = match &p.blocks {
            None => 1,
            Some(b) => match eval(p, &b.count, &env) {
                Ok(c) => c,
                Err(e) => {
                    a.unsupported = Some((
                        Undecided::Form,
                        format!("the block count is not concrete: {e}"),
                    ));
                    return false;
                }
            },
        };
        a.configs += 1;
        let mut actors: Vec<((u32, u32), Facts)> = Vec::new();
        for r in 0..world {
            for b in 0..blocks.max(0) {
                let mut env = env.clone();
                env.set(p.me, r);
                if let Some(bl) = &p.blocks {
                    env.set(bl.var, b);
                }
                let mut w = Walker {
                    p,
                    env,
                    world,
                    me: r as u32,
                    facts: Facts::default(),
                    returned: false,
                    symbolic: false,
                };
                let pend = w.block(&p.body, Pending::new());
                if !w.returned {
                    w.block(&p.epilogue, pend);
                }
                actors.push(((r as u32, b as u32), w.facts));
            }
        }
        let staging: Vec<BTreeSet<WindowId>> = (0..world.max(0) as u32)
            .map(|r| staged(p, &env, r))
            .collect();
        classify(p, &actors, &staging, cfg, &mut a);
        true
    });
    a
}

/// A wait of a process: (process index, cell index if concrete).
type WaitAt = (usize, Option<Vec<i64>>);

/// Step 3 and 4 of the method for one configuration.
fn classify(
    p: &Protocol,
    actors: &[((u32, u32), Facts)],
    staging: &[BTreeSet<WindowId>],
    cfg: &[(VarId, i64)],
    a: &mut Analysis,
) {
    let mut rel = Releases::new(actors);
    let mut accessors: HashMap<WindowId, Vec<(usize, Option<u32>)>> = HashMap::new();
    for (i, (_, f)) in actors.iter().enumerate() {
        for (w, o) in &f.accesses {
            accessors.entry(*w).or_default().push((i, *o));
        }
    }
    let mut memo: HashMap<CellPat, Vec<bool>> = HashMap::new();
    for (xi, (x, fx)) in actors.iter().enumerate() {
        for ((notify, cell), pending) in &fx.publishes {
            if pending
                .iter()
                .all(|w| a.suspects.contains_key(&pair_key(w, *notify)))
            {
                continue;
            }
            if !memo.contains_key(cell) {
                memo.insert(cell.clone(), rel.released(cell));
            }
            let released = &memo[cell];
            for w in pending {
                let pk = pair_key(w, *notify);
                a.pairs.insert(pk);
                if a.suspects.contains_key(&pk) {
                    continue;
                }
                let suspect = if w.read {
                    read_overwritten(p, actors, staging, released, xi, w)
                } else {
                    write_observed(actors, &accessors, released, xi, w)
                };
                if suspect {
                    a.suspects.insert(
                        pk,
                        Suspect {
                            write: w.span,
                            notify: *notify,
                            window: w.window,
                            owner: w.owner,
                            read: w.read,
                            config: cfg.to_vec(),
                            actor: *x,
                        },
                    );
                }
            }
        }
    }
}

/// Who a notify of a cell can release in one configuration: the processes waiting on the
/// cell, and transitively those waiting on a cell such a process notifies (positive).
struct Releases<'a> {
    actors: &'a [((u32, u32), Facts)],
    /// Waits indexed by (rank, signal).
    waits: HashMap<(u32, SignalId), Vec<WaitAt>>,
    ranks: Vec<u32>,
    /// The processes each process's notifies release directly.
    succ: Vec<Vec<usize>>,
    /// Who each process can release (transitively, itself included), computed once.
    reach: Vec<Option<Vec<bool>>>,
}

impl<'a> Releases<'a> {
    fn new(actors: &'a [((u32, u32), Facts)]) -> Self {
        let mut waits: HashMap<(u32, SignalId), Vec<WaitAt>> = HashMap::new();
        for (i, (who, f)) in actors.iter().enumerate() {
            for (sig, idx) in &f.waits {
                waits
                    .entry((who.0, *sig))
                    .or_default()
                    .push((i, idx.clone()));
            }
        }
        let mut ranks: Vec<u32> = actors.iter().map(|x| x.0 .0).collect();
        ranks.dedup();
        let mut r = Releases {
            actors,
            waits,
            ranks,
            succ: Vec::new(),
            reach: vec![None; actors.len()],
        };
        r.succ = actors
            .iter()
            .map(|(_, f)| {
                let mut v = Vec::new();
                for c in &f.releases {
                    r.waiters(c, &mut v);
                }
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        r
    }

    /// The processes waiting on `cell`, pushed to `out`.
    fn waiters(&self, cell: &CellPat, out: &mut Vec<usize>) {
        let rs: Vec<u32> = match cell.1 {
            Some(r) => vec![r],
            None => self.ranks.clone(),
        };
        for r in rs {
            for (i, idx) in self.waits.get(&(r, cell.0)).into_iter().flatten() {
                if cell_matches(&(cell.0, idx.clone()), cell) {
                    out.push(*i);
                }
            }
        }
    }

    fn reach_of(&mut self, y0: usize) -> Vec<bool> {
        let (n, succ) = (self.actors.len(), &self.succ);
        self.reach[y0]
            .get_or_insert_with(|| {
                let mut seen = vec![false; n];
                let mut todo = vec![y0];
                while let Some(y) = todo.pop() {
                    if !seen[y] {
                        seen[y] = true;
                        todo.extend(succ[y].iter().copied().filter(|z| !seen[*z]));
                    }
                }
                seen
            })
            .clone()
    }

    /// Per process, whether a notify of `cell` can release it.
    fn released(&mut self, cell: &CellPat) -> Vec<bool> {
        let mut released = vec![false; self.actors.len()];
        let mut first = Vec::new();
        self.waiters(cell, &mut first);
        for y in first {
            for (z, r) in self.reach_of(y).into_iter().enumerate() {
                released[z] |= r;
            }
        }
        released
    }
}

/// Whether write `w` of process `xi` can be observed: a released process other than the
/// writer accesses the written window instance, or a released process's host (of another
/// rank than the writer's) reads it.
fn write_observed(
    actors: &[((u32, u32), Facts)],
    accessors: &HashMap<WindowId, Vec<(usize, Option<u32>)>>,
    released: &[bool],
    xi: usize,
    w: &Pend,
) -> bool {
    let by_peer = accessors
        .get(&w.window)
        .into_iter()
        .flatten()
        .any(|(y, o)| *y != xi && released[*y] && rank_matches(*o, w.owner));
    let by_host = w.owner != Some(actors[xi].0 .0)
        && actors
            .iter()
            .enumerate()
            .any(|(y, (who, _))| released[y] && rank_matches(Some(who.0), w.owner));
    by_peer || by_host
}

/// Whether the window instance a pending remote read `r` of process `xi` reads can be
/// overwritten once the notify releases the processes `released`: one of them (other than
/// the reader) writes it, or the instance is staged by its rank's host (a `reused` input
/// window) and a process of that rank is released (its call can end, and the host stages
/// the next call's input).
fn read_overwritten(
    p: &Protocol,
    actors: &[((u32, u32), Facts)],
    staging: &[BTreeSet<WindowId>],
    released: &[bool],
    xi: usize,
    r: &Pend,
) -> bool {
    let restaged = !p.window_per_call(r.window);
    actors.iter().enumerate().any(|(y, (who, f))| {
        released[y]
            && y != xi
            && (f
                .writes
                .iter()
                .any(|(w, o)| *w == r.window && rank_matches(*o, r.owner))
                || (restaged
                    && rank_matches(Some(who.0), r.owner)
                    && staging
                        .get(who.0 as usize)
                        .is_some_and(|s| s.contains(&r.window))))
    })
}

fn span(k: Key) -> Span {
    Span {
        start: k.0,
        end: k.1,
    }
}

/// A relaxed-only finding of the simulator.
struct RelaxedFinding {
    code: String,
    message: String,
    span: Option<Span>,
    replay: String,
    params: BTreeMap<String, i64>,
}

/// The relaxed bounded run's verdict on the suspect pairs.
struct Relaxed {
    finding: Option<RelaxedFinding>,
    run: FenceRun,
    /// The smallest P completed.
    complete_first: bool,
}

impl Relaxed {
    /// The run's scope, as one part.
    fn covered(&self) -> Covered {
        Covered::FenceRun(self.run.clone())
    }
    /// The run in words (for reasons and notes).
    fn text(&self) -> String {
        Scope::of(self.covered()).to_string()
    }
}

/// A relaxed-only finding of one attempt of the obligations that show a missing fence
/// (`Obligation::Fence.shown_by()`: a data race or a wrong result), if any.
fn relaxed_only(
    rx: &sb::BoundedReport,
    sc: &sb::BoundedReport,
    file: &str,
) -> Option<RelaxedFinding> {
    for id in crate::report::Obligation::Fence
        .shown_by()
        .iter()
        .map(|o| o.id())
    {
        let has = |r: &sb::BoundedReport| {
            r.obligations
                .iter()
                .find(|o| o.name == id)
                .and_then(|o| o.counterexample.clone())
        };
        if has(sc).is_some() {
            continue;
        }
        if let Some(c) = has(rx) {
            return Some(RelaxedFinding {
                code: c.code.clone(),
                message: c.message.clone(),
                span: c.span,
                replay: format!("collc sim {file} {}", c.replay),
                params: c.params.clone(),
            });
        }
    }
    None
}

/// The relaxed bounded check of the suspect pairs: for P ascending within
/// the planner's `fence_relaxed` bounds (one tile, two calls), each attempt within
/// `fence_relaxed_max_states` states per assignment and all within
/// `fence_relaxed_budget_ms` (`crate::planning::TABLE`).
fn relaxed(p: &collc_spec::Validated, file: &str, at: Option<i64>) -> Relaxed {
    let bounds = TABLE.fence_relaxed;
    let deadline = Instant::now() + Duration::from_millis(TABLE.fence_relaxed_budget_ms);
    let world = p.vars[p.world].name.clone();
    let mut ps: Vec<i64> = match at {
        Some(w) => vec![w],
        None => sb::param_grid(p, &bounds, &BTreeMap::new())
            .iter()
            .filter_map(|g| g.get(&world).copied())
            .collect(),
    };
    ps.dedup();
    let mut parts = Vec::new();
    let mut complete_first = false;
    let mut tiles = bounds.tiles.1;
    for (i, pv) in ps.iter().enumerate() {
        let mut done = None;
        while tiles >= bounds.tiles.0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let mk = |memory| BoundedConfig {
                bounds: Bounds {
                    ranks: (*pv, *pv),
                    tiles: (bounds.tiles.0, tiles),
                    ..bounds.clone()
                },
                memory,
                per_config: Budget {
                    max_states: TABLE.fence_relaxed_max_states,
                    max_time: left,
                    ..Budget::default()
                },
                total_time: left,
                fixed: BTreeMap::from([(world.clone(), *pv)]),
                sticky_poll: false,
                wrap: false,
                stop: None,
            };
            let rx = sb::check(p, &mk(Memory::Relaxed));
            let sc = sb::check(p, &mk(Memory::Sc));
            if let Some(f) = relaxed_only(&rx, &sc, file) {
                return Relaxed {
                    finding: Some(f),
                    run: FenceRun::Found(*pv),
                    complete_first: false,
                };
            }
            let states: u64 = rx.configs.iter().map(|c| c.states).sum();
            if rx.obligations.iter().all(|o| o.complete) && rx.errors.is_empty() {
                done = Some((tiles, states));
                break;
            }
            tiles -= 1;
        }
        match done {
            Some((t, states)) => {
                complete_first |= i == 0;
                parts.push(FenceAttempt::Complete(*pv, t, states));
            }
            None => {
                parts.push(FenceAttempt::Budget(*pv));
                break;
            }
        }
    }
    Relaxed {
        finding: None,
        run: FenceRun::Explored(parts),
        complete_first,
    }
}

/// The world size of a configuration.
fn world_of(p: &Protocol, config: &[(VarId, i64)]) -> i64 {
    config
        .iter()
        .find(|(v, _)| *v == p.world)
        .map_or(1, |(_, x)| *x)
}

fn params(p: &Protocol, config: &[(VarId, i64)]) -> Vec<ParamValue> {
    config
        .iter()
        .map(|(v, x)| ParamValue {
            name: p.var_name(*v).to_string(),
            value: *x,
        })
        .collect()
}

fn pair_finding(p: &Protocol, s: &Suspect, why: &str) -> Finding {
    let w = &p.windows[s.window].name;
    let mut f = Finding::new(format!(
        "a write to window `{w}` is not fenced before a notify that releases a peer: {why}"
    ));
    f.params = params(p, &s.config);
    f.primary = Some(span(s.notify));
    f.primary_label =
        "this notify can become visible before the unfenced window write labelled here".into();
    f.labels.push((
        span(s.write),
        format!("this write to `{w}` may still sit in the store buffer"),
    ));
    f.fence_before = Some(span(s.notify));
    f.help = Some("add `fence;` between the write and this notify".into());
    f.notes.push(format!(
        "rank {} block {} writes, then notifies with the write unfenced; a process released by that notify (or a later notify it causes) accesses `{w}` on the written rank",
        s.actor.0, s.actor.1
    ));
    f
}

fn read_finding(p: &Protocol, s: &Suspect) -> Finding {
    let w = &p.windows[s.window].name;
    let on = s
        .owner
        .map_or("a peer".to_string(), |q| format!("rank {q}"));
    let mut f = Finding::new(format!(
        "a read of window `{w}` on {on} is not fenced before a notify that releases a peer: the read may still be in flight when the notify releases the peer, which (or whose host, staging the next call's input) may then overwrite `{w}`, and the read returns the new data"
    ));
    f.params = params(p, &s.config);
    f.primary = Some(span(s.notify));
    f.primary_label =
        "this notify can release the peer while the unfenced read labelled here is in flight"
            .into();
    f.labels.push((
        span(s.write),
        format!("this read of `{w}` on {on} is an asynchronous transfer until a `fence`"),
    ));
    f.fence_before = Some(span(s.notify));
    f.help = Some("add `fence;` between the read and this notify".into());
    f.notes.push(format!(
        "rank {} block {} reads `{w}` on {on}, then notifies with the read unfenced; a process released by that notify (or a later notify it causes) writes `{w}` there, or its host restages it (the window is not `per call`)",
        s.actor.0, s.actor.1
    ));
    f.notes.push(
        "on hardware a remote read (Ascend MTE, MPI_Get) completes only at a fence; `collc sim --memory relaxed` models that".into(),
    );
    f
}

/// Gives the read findings the relaxed check's witness: the findings whose read is the
/// statement the run's relaxed-only finding is at (all of them when `only_reads` and none
/// is), with the run's parameters and replay; the others say that no run showed them and
/// why that can be. Returns whether a read finding took the witness.
fn witness_reads(
    p: &Protocol,
    reads: &mut [(Key, Finding)],
    rx: &Relaxed,
    only_reads: bool,
) -> bool {
    let hit: Vec<bool> = match &rx.finding {
        Some(f) => {
            let at: Vec<bool> = reads
                .iter()
                .map(|(k, _)| f.span.is_some_and(|sp| key(sp) == *k))
                .collect();
            if at.iter().any(|x| *x) || !only_reads {
                at
            } else {
                vec![true; reads.len()]
            }
        }
        None => vec![false; reads.len()],
    };
    for ((_, f), hit) in reads.iter_mut().zip(&hit) {
        match (&rx.finding, hit) {
            (Some(w), true) => {
                f.params = w
                    .params
                    .iter()
                    .map(|(k, v)| ParamValue {
                        name: k.clone(),
                        value: *v,
                    })
                    .collect();
                f.params.sort_by_key(|x| x.name != p.vars[p.world].name);
                f.notes.push(format!(
                    "under relaxed memory the simulator finds {} ({}); replay: {}",
                    w.code, w.message, w.replay
                ));
                f.replay = Some(w.replay.clone());
            }
            _ => f.notes.push(format!(
                "no relaxed bounded run shows this read in flight ({}): in every schedule explored it completes before the release is observed; a read of its destination before the notify that the obligation does not match to the transfer (another block, another region expression) completes it (the data dependency), or the overwrite needs larger bounds, and the fence is demanded for the whole domain regardless",
                rx.text()
            )),
        }
    }
    hit.iter().any(|x| *x)
}

/// The findings of the relaxed check's verdict on the suspect write pairs, if it found a
/// relaxed-only race or wrong result.
fn write_findings(
    p: &Protocol,
    suspects: &BTreeMap<PairKey, Suspect>,
    rx: &Relaxed,
) -> Option<Vec<Finding>> {
    let Some(RelaxedFinding {
        code: fcode,
        message: msg,
        span: at,
        replay,
        params: ps,
    }) = &rx.finding
    else {
        return None;
    };
    let blamed: Vec<&Suspect> = {
        let hit: Vec<&Suspect> = suspects
            .values()
            .filter(|s| at.is_some_and(|sp| key(sp) == s.write))
            .collect();
        if hit.is_empty() {
            suspects.values().collect()
        } else {
            hit
        }
    };
    let findings: Vec<Finding> = blamed
        .iter()
        .map(|s| {
            let mut f = pair_finding(
                p,
                s,
                &format!("under relaxed memory the simulator finds {fcode} ({msg})"),
            );
            f.params = ps
                .iter()
                .map(|(k, v)| ParamValue {
                    name: k.clone(),
                    value: *v,
                })
                .collect();
            f.params.sort_by_key(|x| x.name != p.vars[p.world].name);
            f.notes.push(format!("replay: {replay}"));
            f.replay = Some(replay.clone());
            f
        })
        .collect();
    Some(findings)
}

/// The `fence` obligation.
pub fn check(
    p: &collc_spec::Validated,
    plan: &Plan,
    deadline: Instant,
    file: &str,
) -> ObligationResult {
    let code = format!("verify::{ID}");
    if let Some(r) = proved_structurally(p, &code) {
        return r;
    }
    let covered = exec::enumerated_world(p).map(|(lo, hi)| WorldRange { lo, hi });
    // Past the enumeration, the sizes where the protocol's literals can change what ranks
    // do (`if P < 21 { fence; }`): a pair that is suspect only there is new.
    let info = collc_spec::info::ProtocolInfo::of(p);
    let past = crate::planning::critical::past_enumeration(p, &info);
    let (mut a, far_writes) = analyse_near_and_far(p, plan, deadline, &past, covered.is_some());
    let mut enumeration = Scope::of(Covered::Capped(crate::obligations::check::cap(p)));
    if !past.is_empty() {
        enumeration.push(Covered::Also {
            world: p.var_name(p.world).to_string(),
            sizes: past.clone(),
        });
    }
    let o = Out {
        p,
        code,
        covered,
        capped: covered.is_some_and(|w| w.hi < exec::declared_world(p).1),
        enumeration,
        past: if covered.is_some() { past } else { Vec::new() },
        file,
    };
    let unsupported = match covered {
        None => Some((
            Undecided::Form,
            crate::obligations::check::enumeration_scope(p),
        )),
        Some(_) => a.unsupported.clone(),
    };
    if let Some((kind, why)) = unsupported {
        let mut r = o.undecided(None, why.clone(), vec![Finding::new(why)]);
        r.evidence = Evidence::undecided(kind);
        return r;
    }
    let private = a.pairs.len() - a.suspects.len() - far_writes.len();
    if let Some(r) = o.read_violation(plan, &mut a) {
        return r;
    }
    let mut proved_part = Scope::from_parts(vec![
        Covered::Enumeration(plan.coverage(p)),
        Covered::FencePrivate {
            private,
            configs: a.configs,
        },
    ]);
    if o.capped {
        // Enumeration decides P up to TABLE.enum_world_max only: past that, nothing is proved.
        proved_part = o.enumeration.clone().then(proved_part);
    }
    if let Some(r) = o.far_writes(&far_writes, &proved_part) {
        return r;
    }
    a.suspects.extend(far_writes);
    o.writes(&a.suspects, &proved_part, private)
}

/// The summary of every undecided result.
const UNDECIDED: &str =
    "undecided: every window write a peer reads is fenced before the notify that releases it";

/// `proved` for the whole declared domain when the walk with every value unknown finds no
/// pair a released process can observe ([`structural`]); else `None`.
fn proved_structurally(p: &Protocol, code: &str) -> Option<ObligationResult> {
    let (how, why) = match structural(p) {
        Structural::NoPair => (Symbolic::NoPair, "no unfenced pair on any path".to_string()),
        Structural::Unwaited(n, names) => (
            Symbolic::Unwaited {
                pairs: n,
                signals: names,
            },
            format!("{n} unfenced pair(s), all private: their notifies release no process"),
        ),
        Structural::Open => return None,
    };
    let (lo, hi) = exec::declared_world(p);
    Some(ObligationResult {
        id: ID.to_string(),
        code: code.to_string(),
        status: Status::Proved,
        scope: Some(Scope::of(Covered::Symbolic {
            world: WorldRange { lo, hi },
            how,
        })),
        world: Some(WorldRange { lo, hi }),
        reason: None,
        claim: format!(
            "every window write a peer can access and every remote read a peer can overwrite is fenced before the notifies that release them ({why})"
        ),
        findings: Vec::new(),
        evidence: Evidence::symbolic(WorldRange { lo, hi }),
    })
}

/// The analysis of the enumerated sizes, extended by the sizes `past` the enumeration
/// (when there are any, the enumeration covers a range and it decided everything): the
/// read pairs found only there join the suspects; the write pairs found only there are
/// returned apart (decided by the relaxed check at the smallest such size).
fn analyse_near_and_far(
    p: &Protocol,
    plan: &Plan,
    deadline: Instant,
    past: &[i64],
    covered: bool,
) -> (Analysis, BTreeMap<PairKey, Suspect>) {
    let mut a = analyse(p, plan, &exec::enumerated_worlds(p), deadline);
    let mut far_writes: BTreeMap<PairKey, Suspect> = BTreeMap::new();
    if past.is_empty() || !covered || a.unsupported.is_some() {
        return (a, far_writes);
    }
    let far = analyse(p, plan, past, deadline);
    a.unsupported = far.unsupported;
    a.configs += far.configs;
    a.pairs.extend(far.pairs);
    for (k, s) in far.suspects {
        if a.suspects.contains_key(&k) {
            continue;
        }
        if s.read {
            a.suspects.insert(k, s);
        } else {
            far_writes.insert(k, s);
        }
    }
    (a, far_writes)
}

/// What the results of one [`check`] past the structural walk share.
struct Out<'a> {
    p: &'a collc_spec::Validated,
    code: String,
    /// The enumerated world range, if the enumeration covers one.
    covered: Option<WorldRange>,
    /// The enumeration stops below the declared maximum.
    capped: bool,
    /// How far the enumeration goes (and the sizes past it analysed too).
    enumeration: Scope,
    /// The world sizes past the enumeration the analysis also covered.
    past: Vec<i64>,
    file: &'a str,
}

impl Out<'_> {
    /// What a result of `status` showed: the enumeration's (the counterexample, or the
    /// enumerated sizes) and, when decided, the sizes past it the analysis covered too.
    fn evidence(&self, status: Status, findings: &[Finding]) -> Evidence {
        let mut e = Evidence::of_enumeration(status, self.covered, findings);
        if matches!(status, Status::Proved | Status::Checked) {
            for w in &self.past {
                e.add(&Evidence::enumerated(WorldRange { lo: *w, hi: *w }));
            }
        }
        e
    }

    fn mk(
        &self,
        status: Status,
        scope: Option<Scope>,
        reason: Option<String>,
        claim: String,
        findings: Vec<Finding>,
    ) -> ObligationResult {
        ObligationResult {
            id: ID.to_string(),
            code: self.code.clone(),
            status,
            scope,
            world: self.covered.filter(|_| status != Status::Unknown),
            evidence: self.evidence(status, &findings),
            reason,
            claim,
            findings,
        }
    }

    fn undecided(
        &self,
        scope: Option<Scope>,
        why: String,
        findings: Vec<Finding>,
    ) -> ObligationResult {
        self.mk(
            Status::Unknown,
            scope,
            Some(why),
            UNDECIDED.into(),
            findings,
        )
    }

    /// `violated` when a suspect read pair remains: the relaxed check (a read in flight
    /// until a fence) gives the witness, and decides the unfenced writes reported with
    /// them. Takes the read pairs out of `a.suspects`.
    fn read_violation(&self, plan: &Plan, a: &mut Analysis) -> Option<ObligationResult> {
        let p = self.p;
        let mut reads: Vec<(Key, Finding)> = a
            .suspects
            .values()
            .filter(|s| s.read)
            .map(|s| (s.write, read_finding(p, s)))
            .collect();
        a.suspects.retain(|_, s| !s.read);
        if reads.is_empty() {
            return None;
        }
        let rx = relaxed(p, self.file, None);
        let shown = witness_reads(p, &mut reads, &rx, a.suspects.is_empty());
        let mut scope = Scope::from_parts(vec![
            Covered::Enumeration(plan.coverage(p)),
            Covered::FenceConfigs(a.configs),
            Covered::FenceReads {
                shown,
                run: rx.run.clone(),
            },
        ]);
        let mut findings: Vec<Finding> = reads.into_iter().map(|(_, f)| f).collect();
        if !a.suspects.is_empty() {
            if let Some(w) = write_findings(p, &a.suspects, &rx) {
                findings.extend(w);
                scope.push(Covered::FenceSameRun);
            }
        }
        Some(self.mk(
            Status::Violated,
            Some(scope),
            None,
            "not: every remote read (and window write) is fenced before the notifies that release a process that overwrites (or reads) it".into(),
            findings,
        ))
    }

    /// The violation a relaxed-only race or wrong result of the simulator makes.
    fn relaxed_violation(
        &self,
        suspects: &BTreeMap<PairKey, Suspect>,
        rx: &Relaxed,
    ) -> Option<ObligationResult> {
        write_findings(self.p, suspects, rx).map(|findings| {
            self.mk(
                Status::Violated,
                Some(Scope::of(rx.covered())),
                None,
                "not: every window write a peer reads is fenced before the notify that releases it"
                    .into(),
                findings,
            )
        })
    }

    /// The write pairs suspect only past the enumeration: the relaxed check at the
    /// smallest such size. A result when it finds a violation or does not complete; `None`
    /// when they join the other suspects.
    fn far_writes(
        &self,
        far_writes: &BTreeMap<PairKey, Suspect>,
        proved_part: &Scope,
    ) -> Option<ObligationResult> {
        let p = self.p;
        let first = far_writes.values().min_by_key(|s| world_of(p, &s.config))?;
        let w = world_of(p, &first.config);
        let rx = relaxed(p, self.file, Some(w));
        if let Some(v) = self.relaxed_violation(far_writes, &rx) {
            return Some(v);
        }
        if rx.complete_first {
            return None;
        }
        let why = format!(
            "{} unfenced write/notify pair(s) may be observed by another process only from {} = {w} on (a size the protocol's literals name, past the enumerated ones), and the relaxed bounded check there did not complete: {}",
            far_writes.len(),
            p.var_name(p.world),
            rx.text()
        );
        let mut f = pair_finding(p, first, "the relaxed bounded check did not complete");
        f.message = why.clone();
        let scope = proved_part.clone().with(rx.covered());
        Some(self.undecided(Some(scope), why, vec![f]))
    }

    /// The write pairs left: none is `proved` (or `checked` when capped); else the
    /// relaxed bounded check decides them.
    fn writes(
        &self,
        suspects: &BTreeMap<PairKey, Suspect>,
        proved_part: &Scope,
        private: usize,
    ) -> ObligationResult {
        let p = self.p;
        if suspects.is_empty() {
            return self.mk(
                if self.capped {
                    Status::Checked
                } else {
                    Status::Proved
                },
                Some(proved_part.clone()),
                None,
                format!(
                    "every window write a peer can access and every remote read a peer can overwrite is fenced before the notifies that release them ({private} unfenced pairs are private)"
                ),
                Vec::new(),
            );
        }
        let rx = relaxed(p, self.file, None);
        if let Some(v) = self.relaxed_violation(suspects, &rx) {
            return v;
        }
        let lines = suspects.len();
        let scope = proved_part.clone().with(Covered::FenceSuspects {
            pairs: lines,
            run: rx.run.clone(),
        });
        if rx.complete_first {
            let mut r = self.mk(
                Status::Checked,
                Some(scope),
                None,
                format!("{lines} unfenced write/notify pair(s) not separable symbolically; no relaxed race or wrong result within the bounds"),
                Vec::new(),
            );
            // The suspect pairs are decided by the relaxed bounded check, not by enumeration.
            r.evidence = Evidence::bounded();
            return r;
        }
        let why = format!(
            "{lines} unfenced write/notify pair(s) may be observed by another process and the relaxed bounded check did not complete: {}",
            rx.text()
        );
        let mut f: Vec<Finding> = suspects
            .values()
            .take(1)
            .map(|s| pair_finding(p, s, "the relaxed bounded check did not complete"))
            .collect();
        if let Some(x) = f.first_mut() {
            x.message = why.clone();
        }
        self.undecided(Some(scope), why, f)
    }
}
