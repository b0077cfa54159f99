//! One symbolic pass over the protocol for a *generic* actor: the world size `P`,
//! the rank `me` and the block index are symbolic atoms, every loop — over ranks
//! or numeric — gets an iteration atom instead of being unrolled, and every notify
//! and wait becomes a [`PEv`] whose cell (owner, index), value or threshold and path
//! condition are [`Lin`]s over those atoms. Two passes (actors A and B) give two
//! independent copies of every variable, so "a writer and an owner" or "two ranks"
//! are two sets of atoms in one query.

use crate::engine::exec::{relevant, Evaluator, Stop, Val};
use crate::engine::sym::{union, AtomId, CondV, Guard, Lin, Syms};
use collc_grammar::Span;
use collc_spec::ir::*;
use collc_spec::visit;

/// What a loop ranges over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    /// `for p in peers` / `for p in ranks`: the atom is the rank itself.
    Rank,
    /// `for x in lo..hi step s`: the atom is the iteration index `j`, `x = lo + s*j`.
    Num,
}

/// One loop of a pass.
#[derive(Clone, Debug)]
pub struct PLoop {
    /// Its atom (an iteration atom in `0..trip`).
    pub atom: AtomId,
    /// Ranks or numbers.
    pub kind: LoopKind,
    /// Trip count.
    pub trip: Lin,
    /// The `for` statement (identifies the same loop in both passes).
    pub stmt: usize,
}

/// Notify or wait.
#[derive(Clone, Debug)]
pub enum PKind {
    /// A notify; `value` is `None` when it cannot be evaluated symbolically.
    Notify {
        /// Set or AtomicAdd.
        op: NotifyOp,
        /// The value.
        value: Option<Lin>,
    },
    /// A wait.
    Wait {
        /// The comparison.
        cmp: CmpOp,
        /// The threshold.
        thr: Lin,
    },
}

/// One notify or wait statement, for the generic actor.
#[derive(Clone, Debug)]
pub struct PEv {
    /// What.
    pub kind: PKind,
    /// The signal.
    pub signal: SignalId,
    /// The cell's index.
    pub index: Vec<Lin>,
    /// The rank that holds the cell.
    pub owner: Lin,
    /// Path condition (loop domains beyond `0..trip` included, e.g. `p != me`).
    pub guard: Guard,
    /// Enclosing loops (indices into [`Pass::loops`]), outermost first.
    pub loops: Vec<usize>,
    /// Body or epilogue.
    pub epilogue: bool,
    /// The statement.
    pub span: Span,
    /// The blocks around it, outermost first (the body and the epilogue are block 0).
    pub blocks: Vec<u32>,
}

impl PEv {
    /// True when its cell (owner, index) or its path condition reads the atom `a` (the
    /// call index, in the reuse rules).
    pub fn cell_or_guard_mentions(&self, s: &Syms, a: AtomId) -> bool {
        self.guard
            .iter()
            .any(|g| crate::engine::sym::cond_mentions(s, *g, a))
            || self
                .index
                .iter()
                .chain([&self.owner])
                .any(|l| crate::engine::sym::mentions(s, l, a))
    }
    /// Textual position: the epilogue after the body, then the source order.
    pub fn pos(&self) -> (bool, usize) {
        (self.epilogue, self.span.start)
    }
    /// True for an AtomicAdd notify.
    pub fn is_add(&self) -> bool {
        matches!(
            self.kind,
            PKind::Notify {
                op: NotifyOp::AtomicAdd,
                ..
            }
        )
    }
    /// True for a Set notify.
    pub fn is_set(&self) -> bool {
        matches!(
            self.kind,
            PKind::Notify {
                op: NotifyOp::Set,
                ..
            }
        )
    }
}

/// One window access of a data statement (recorded by [`pass_data`] only): the
/// instance `(window, owner, index)` read or written, the last dimension's slice left out
/// (every slice of one row counts as overlapping).
#[derive(Clone, Debug)]
pub struct PAcc {
    /// The window.
    pub window: WindowId,
    /// A write (`put`, the destination of `copy`/`get`/`reduce`), else a read.
    pub write: bool,
    /// The rank whose window instance is accessed.
    pub owner: Lin,
    /// The indices of every dimension but the last.
    pub index: Vec<Lin>,
    /// Path condition.
    pub guard: Guard,
    /// Enclosing loops (indices into [`Pass::loops`]), outermost first.
    pub loops: Vec<usize>,
    /// Body or epilogue.
    pub epilogue: bool,
    /// The statement.
    pub span: Span,
    /// The blocks around it (as [`PEv::blocks`]).
    pub blocks: Vec<u32>,
}

impl PAcc {
    /// Textual position, as [`PEv::pos`].
    pub fn pos(&self) -> (bool, usize) {
        (self.epilogue, self.span.start)
    }
}

/// An executed `return if` (top level of the body only).
#[derive(Clone, Debug)]
pub struct PRet {
    /// Its condition.
    pub cond: CondV,
    /// The statement.
    pub span: Span,
}

/// One pass: the generic actor's atoms, loops, events and returns.
#[derive(Clone, Debug, Default)]
pub struct Pass {
    /// `me`: the actor's variable (its rank, or its rank relative to a rotation).
    pub me: AtomId,
    /// The actor's rank (`me`, or `(me - c) % P` under a rotation, `param::rotate`).
    pub rank: Lin,
    /// The block index (multicore), if any.
    pub blk: Option<AtomId>,
    /// Loops, in execution order.
    pub loops: Vec<PLoop>,
    /// Notifies and waits, in program order.
    pub events: Vec<PEv>,
    /// Top-level returns.
    pub returns: Vec<PRet>,
    /// The blocks that are a branch of an `if`: block id -> the `if` statement's start.
    pub branch: std::collections::HashMap<u32, usize>,
    /// Window accesses, in program order ([`pass_data`] only).
    pub accesses: Vec<PAcc>,
    /// The values of the body's top-level `let`s (outside loops and branches), in order:
    /// functions of the actor (candidate keys of the progress ranking).
    pub lets: Vec<Lin>,
}

impl Pass {
    /// True when no execution runs both statements: they lie in the two branches of
    /// one `if`.
    pub fn exclusive(&self, x: &PEv, y: &PEv) -> bool {
        self.exclusive_blocks(&x.blocks, &y.blocks)
    }
    /// [`Pass::exclusive`] on the statements' block paths.
    pub fn exclusive_blocks(&self, x: &[u32], y: &[u32]) -> bool {
        let k = x.iter().zip(y.iter()).take_while(|(a, b)| a == b).count();
        match (x.get(k), y.get(k)) {
            (Some(a), Some(b)) => self
                .branch
                .get(a)
                .is_some_and(|i| self.branch.get(b) == Some(i)),
            _ => false,
        }
    }
}

impl Pass {
    /// The actor's atoms and every loop atom of `ev`, outermost first.
    pub fn vars(&self, ev: &PEv) -> Vec<AtomId> {
        let mut v = vec![self.me];
        v.extend(self.blk);
        v.extend(ev.loops.iter().map(|l| self.loops[*l].atom));
        v
    }
    /// The trip count of a variable of this pass (`P` for `me`).
    pub fn trip_of(&self, a: AtomId, world: &Lin, blocks: &Lin) -> Option<Lin> {
        if a == self.me {
            return Some(world.clone());
        }
        if Some(a) == self.blk {
            return Some(blocks.clone());
        }
        self.loops
            .iter()
            .find(|l| l.atom == a)
            .map(|l| l.trip.clone())
    }
}

/// Why the parametric route does not apply.
pub type Open = (String, Option<Span>);

/// A loop as the walk summarises it: its iteration atom, kind, trip count, its variable's
/// value and, over `peers`, the guard `atom != me`.
struct LoopHead {
    atom: AtomId,
    kind: LoopKind,
    trip: Lin,
    val: Lin,
    extra: Option<CondV>,
}

impl LoopHead {
    fn num(atom: AtomId, trip: Lin, val: Lin) -> Self {
        LoopHead {
            atom,
            kind: LoopKind::Num,
            trip,
            val,
            extra: None,
        }
    }
}

struct Walk<'a> {
    p: &'a Protocol,
    syms: &'a mut Syms,
    env: Vec<Option<Val>>,
    relevant: Vec<bool>,
    pass: Pass,
    guard: Guard,
    loops: Vec<usize>,
    epilogue: bool,
    depth: u32,
    blocks: Vec<u32>,
    next_block: u32,
    /// Record window accesses too (and walk what holds only data statements).
    data: bool,
}

/// True when `b` holds a notify, a wait or a return (what this pass records).
fn interesting(b: &Block) -> bool {
    visit::any_stmt(b, &mut |s| {
        matches!(
            s.kind,
            StmtKind::Notify { .. } | StmtKind::Wait { .. } | StmtKind::Return { .. }
        )
    })
}

/// True when `b` holds a data statement.
fn has_data(b: &Block) -> bool {
    visit::any_stmt(b, &mut |s| {
        matches!(
            s.kind,
            StmtKind::Copy { .. }
                | StmtKind::Get { .. }
                | StmtKind::Put { .. }
                | StmtKind::Reduce { .. }
        )
    })
}

fn open(s: Stop) -> Open {
    match s {
        Stop::Unsupported(m, sp) | Stop::Need(_, m, sp) | Stop::Iter(_, m, sp) => (m, Some(sp)),
    }
}

/// Runs one pass. `world` is the atom (or value) of `P`, `blocks` the block count.
pub(crate) fn pass(
    p: &Protocol,
    syms: &mut Syms,
    env: &[Option<Val>],
    world: &Lin,
    blocks: &Lin,
) -> Result<Pass, Open> {
    walk(p, syms, env, world, blocks, false)
}

/// [`pass`] that also records the window accesses ([`Pass::accesses`]).
pub(crate) fn pass_data(
    p: &Protocol,
    syms: &mut Syms,
    env: &[Option<Val>],
    world: &Lin,
    blocks: &Lin,
) -> Result<Pass, Open> {
    walk(p, syms, env, world, blocks, true)
}

fn walk(
    p: &Protocol,
    syms: &mut Syms,
    env: &[Option<Val>],
    world: &Lin,
    blocks: &Lin,
    data: bool,
) -> Result<Pass, Open> {
    let me = syms.new_iter(world.clone(), p.me);
    let mut env = env.to_vec();
    env[p.me.index()] = Some(Val::V(Lin::atom(me)));
    let blk = match &p.blocks {
        Some(b) => {
            let a = syms.new_iter(blocks.clone(), b.var);
            env[b.var.index()] = Some(Val::V(Lin::atom(a)));
            Some(a)
        }
        None => None,
    };
    let mut w = Walk {
        p,
        syms,
        env,
        relevant: if data {
            vec![true; p.vars.len()]
        } else {
            relevant(p)
        },
        pass: Pass {
            me,
            rank: Lin::atom(me),
            blk,
            ..Pass::default()
        },
        guard: Vec::new(),
        loops: Vec::new(),
        epilogue: false,
        depth: 0,
        blocks: vec![0],
        next_block: 1,
        data,
    };
    w.stmts(&p.body)?;
    w.epilogue = true;
    w.stmts(&p.epilogue)?;
    Ok(w.pass)
}

impl Walk<'_> {
    /// Whether the walk enters `b`.
    fn wants(&self, b: &Block) -> bool {
        interesting(b) || self.data && has_data(b)
    }

    /// Records an access of `r` (a window) on rank `at` (`None`: this rank).
    fn access(
        &mut self,
        r: &Region,
        at: Option<&Expr>,
        write: bool,
        span: Span,
    ) -> Result<(), Open> {
        let BufferRef::Window(window) = r.buffer else {
            return Ok(());
        };
        let owner = match at {
            Some(t) => self.eval(t, span)?,
            None => Lin::atom(self.pass.me),
        };
        let index = self.index(&r.index, span)?;
        self.pass.accesses.push(PAcc {
            window,
            write,
            owner,
            index,
            guard: self.guard.clone(),
            loops: self.loops.clone(),
            epilogue: self.epilogue,
            span,
            blocks: self.blocks.clone(),
        });
        Ok(())
    }

    fn eval(&mut self, e: &Expr, span: Span) -> Result<Lin, Open> {
        let mut ev = Evaluator {
            p: self.p,
            syms: self.syms,
            env: &self.env,
            rank: None,
        };
        ev.expr(e, span).map_err(open)
    }
    fn cond(&mut self, c: &Cond, span: Span) -> Result<CondV, Open> {
        let mut ev = Evaluator {
            p: self.p,
            syms: self.syms,
            env: &self.env,
            rank: None,
        };
        ev.cond(c, span).map_err(open)
    }

    /// A nested block (its own id).
    fn block(&mut self, b: &Block) -> Result<(), Open> {
        self.blocks.push(self.next_block);
        self.next_block += 1;
        let r = self.stmts(b);
        self.blocks.pop();
        r
    }

    fn stmts(&mut self, b: &Block) -> Result<(), Open> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn guarded(
        &mut self,
        c: CondV,
        f: impl FnOnce(&mut Self) -> Result<(), Open>,
    ) -> Result<(), Open> {
        match c {
            CondV::Const(true) => f(self),
            CondV::Const(false) => Ok(()),
            CondV::Sym(id) => {
                let saved = self.guard.clone();
                self.guard = union(&self.guard, &vec![id]);
                self.depth += 1;
                let r = f(self);
                self.depth -= 1;
                self.guard = saved;
                r
            }
        }
    }

    fn push(&mut self, kind: PKind, signal: SignalId, index: Vec<Lin>, owner: Lin, span: Span) {
        self.pass.events.push(PEv {
            kind,
            signal,
            index,
            owner,
            guard: self.guard.clone(),
            loops: self.loops.clone(),
            epilogue: self.epilogue,
            span,
            blocks: self.blocks.clone(),
        });
    }

    fn index(&mut self, index: &[Expr], span: Span) -> Result<Vec<Lin>, Open> {
        index.iter().map(|e| self.eval(e, span)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Open> {
        match &s.kind {
            StmtKind::Let { var, value } => {
                if self.relevant[var.index()] {
                    let v = match self.eval(value, s.span) {
                        Ok(l) => {
                            if self.depth == 0 && self.loops.is_empty() && !self.epilogue {
                                self.pass.lets.push(l.clone());
                            }
                            Val::V(l)
                        }
                        Err((m, _)) => Val::Bad(Stop::Unsupported(m, s.span)),
                    };
                    self.env[var.index()] = Some(v);
                }
            }
            StmtKind::Notify {
                signal,
                index,
                target,
                op,
                value,
            } => {
                let owner = match target {
                    Some(t) => self.eval(t, s.span)?,
                    None => Lin::atom(self.pass.me),
                };
                let idx = self.index(index, s.span)?;
                let value = self.eval(value, s.span).ok();
                self.push(
                    PKind::Notify { op: *op, value },
                    *signal,
                    idx,
                    owner,
                    s.span,
                );
            }
            StmtKind::Wait {
                signal,
                index,
                cmp,
                threshold,
            } => {
                let idx = self.index(index, s.span)?;
                let thr = self.eval(threshold, s.span)?;
                let owner = Lin::atom(self.pass.me);
                self.push(PKind::Wait { cmp: *cmp, thr }, *signal, idx, owner, s.span);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                if !self.wants(then_block) && !else_block.as_ref().is_some_and(|e| self.wants(e)) {
                    return Ok(());
                }
                let c = self.cond(cond, s.span)?;
                self.pass.branch.insert(self.next_block, s.span.start);
                self.guarded(c, |w| w.block(then_block))?;
                if let Some(e) = else_block {
                    let nc = self.syms.not(c);
                    self.pass.branch.insert(self.next_block, s.span.start);
                    self.guarded(nc, |w| w.block(e))?;
                }
            }
            StmtKind::Return { cond } => self.early_return(cond, s.span)?,
            StmtKind::For { var, range, body } => {
                if self.wants(body) {
                    self.for_loop(*var, range, body, s.span)?;
                }
            }
            StmtKind::Copy { dst, src } if self.data => {
                self.access(src, None, false, s.span)?;
                self.access(dst, None, true, s.span)?;
            }
            StmtKind::Get { dst, src, from } if self.data => {
                self.access(src, Some(from), false, s.span)?;
                self.access(dst, None, true, s.span)?;
            }
            StmtKind::Put { dst, to, src } if self.data => {
                self.access(src, None, false, s.span)?;
                self.access(dst, Some(to), true, s.span)?;
            }
            StmtKind::Reduce {
                dst, src, from, to, ..
            } if self.data => {
                self.access(src, from.as_ref(), false, s.span)?;
                self.access(dst, to.as_ref(), true, s.span)?;
            }
            StmtKind::Fence
            | StmtKind::Copy { .. }
            | StmtKind::Get { .. }
            | StmtKind::Put { .. }
            | StmtKind::Reduce { .. } => {}
        }
        Ok(())
    }

    /// `return if cond`, at the top level of the body only: recorded, and the rest of the
    /// body guarded by its negation.
    fn early_return(&mut self, cond: &Cond, span: Span) -> Result<(), Open> {
        if self.depth > 0 || !self.loops.is_empty() || self.epilogue {
            return Err((
                "an early return inside a loop, a branch or the epilogue".into(),
                Some(span),
            ));
        }
        let c = self.cond(cond, span)?;
        self.pass.returns.push(PRet { cond: c, span });
        match c {
            CondV::Const(true) => Err(("a `return if` that always fires".into(), Some(span))),
            CondV::Const(false) => Ok(()),
            CondV::Sym(_) => {
                if let CondV::Sym(n) = self.syms.not(c) {
                    self.guard = union(&self.guard, &vec![n]);
                }
                Ok(())
            }
        }
    }

    /// A loop: its body once, with the variable a function of a new iteration atom.
    fn for_loop(
        &mut self,
        var: VarId,
        range: &Range,
        body: &Block,
        span: Span,
    ) -> Result<(), Open> {
        let h = self.loop_head(var, range, span)?;
        self.pass.loops.push(PLoop {
            atom: h.atom,
            kind: h.kind,
            trip: h.trip,
            stmt: span.start,
        });
        let li = self.pass.loops.len() - 1;
        self.env[var.index()] = Some(Val::V(h.val));
        self.loops.push(li);
        let saved = self.guard.clone();
        let r = match h.extra {
            Some(c) => self.guarded(c, |w| w.block(body)),
            None => self.block(body),
        };
        self.guard = saved;
        self.loops.pop();
        r
    }

    /// A loop's iteration atom, kind, trip count and its variable's value.
    fn loop_head(&mut self, var: VarId, range: &Range, span: Span) -> Result<LoopHead, Open> {
        let ov = || ("arithmetic overflow".to_string(), Some(span));
        let world = self.eval(&Expr::Var(self.p.world), span)?;
        match range {
            Range::Peers | Range::Ranks => {
                let a = self.syms.new_iter(world.clone(), var);
                let extra = if matches!(range, Range::Peers) {
                    Some(
                        self.syms
                            .cmp(CmpOp::Ne, &Lin::atom(a), &Lin::atom(self.pass.me))
                            .ok_or(("overflow".to_string(), Some(span)))?,
                    )
                } else {
                    None
                };
                Ok(LoopHead {
                    atom: a,
                    kind: LoopKind::Rank,
                    trip: world,
                    val: Lin::atom(a),
                    extra,
                })
            }
            Range::Seq(q) => {
                let lo = self.eval(&q.lo, span)?;
                let hi = self.eval(&q.hi, span)?;
                let step = self.eval(&q.step, span)?;
                let (trip, shape) =
                    super::bits::seq(self.syms, &lo, &hi, &step, q.geometric, q.rev)
                        .map_err(|m| (m, Some(span)))?;
                let a = self.syms.new_iter(trip.clone(), var);
                let val = super::bits::value(self.syms, &shape, a, &trip).ok_or_else(ov)?;
                Ok(LoopHead::num(a, trip, val))
            }
            Range::Span { lo, hi, step } => {
                let lo = self.eval(lo, span)?;
                let hi = self.eval(hi, span)?;
                let step = self.eval(step, span)?;
                super::stride::positive(self.syms, self.p, &step).map_err(|m| (m, Some(span)))?;
                let trip = self.syms.trip(&lo, &hi, &step).ok_or_else(ov)?;
                let a = self.syms.new_iter(trip.clone(), var);
                if step.as_const().is_none() {
                    let range = hi.sub(&lo).ok_or_else(ov)?;
                    self.syms.strides.insert(a, (range, step.clone()));
                }
                let sv = self.syms.mul(&step, &Lin::atom(a)).ok_or_else(ov)?;
                let val = lo.add(&sv).ok_or_else(ov)?;
                Ok(LoopHead::num(a, trip, val))
            }
        }
    }
}
