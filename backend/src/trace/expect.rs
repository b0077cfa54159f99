//! What the IR prescribes: the events one rank and block (or every block of a rank, in turn)
//! performs in one call, from the IR's control flow under concrete parameters. Control flow
//! never depends on cell values or data, so this list is fixed per (rank, block, call).

use super::format::Place;
use crate::layout::{Abi, BufferSource};
use crate::oracle::array_value;
use collc_grammar::Span;
use collc_spec::eval::{eval, eval_cond, Bindings, Env, EvalError};
use collc_spec::ir::{
    Block, BufferRef, CmpOp, Expr, NotifyOp, Protocol, Range, Region, SignalId, Stmt, StmtKind,
};

/// The statement an expected event comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StmtAt {
    /// Its source span.
    pub span: Span,
    /// In the epilogue (else the body).
    pub epilogue: bool,
}

/// What a statement prescribes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A notify.
    Notify {
        /// Add or set.
        op: NotifyOp,
        /// The operand.
        value: i64,
    },
    /// A wait that must pass.
    Wait {
        /// The comparison.
        cmp: CmpOp,
        /// The threshold.
        threshold: i64,
    },
    /// A `fence`.
    Fence,
    /// A window read.
    Get {
        /// Elements.
        len: i64,
    },
    /// A window write.
    Put {
        /// Elements.
        len: i64,
    },
}

/// One prescribed event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    /// The call.
    pub call: i64,
    /// What.
    pub want: Want,
    /// Where.
    pub place: Place,
    /// The block that performs it.
    pub block: i64,
    /// Which statement.
    pub stmt: StmtAt,
}

struct Walk<'a> {
    p: &'a Protocol,
    abi: Abi,
    env: Env,
    rank: i64,
    block: i64,
    call: i64,
    epilogue: bool,
    out: Vec<Expected>,
}

enum Flow {
    Next,
    Return,
}

impl Walk<'_> {
    fn ev(&self, e: &Expr) -> Result<i64, EvalError> {
        eval(self.p, e, &self.env)
    }

    fn flat(&self, dims: &[Expr], index: &[Expr], last: Option<&Expr>) -> Result<i64, EvalError> {
        let mut flat = 0i64;
        let all = index.iter().chain(last);
        for (d, x) in dims.iter().zip(all) {
            let d = self.ev(d)?;
            flat = flat.checked_mul(d).ok_or(EvalError::Overflow)?;
            flat = flat.checked_add(self.ev(x)?).ok_or(EvalError::Overflow)?;
        }
        Ok(flat)
    }

    fn push(&mut self, want: Want, place: Place, s: &Stmt) {
        self.out.push(Expected {
            call: self.call,
            want,
            place,
            block: self.block,
            stmt: StmtAt {
                span: s.span,
                epilogue: self.epilogue,
            },
        });
    }

    fn slot(&self, src: BufferSource) -> i64 {
        self.abi.buffer_slot(src).map_or(-1, |i| i as i64)
    }

    /// Cell `signal[index]` in `owner`'s window.
    fn cell(&self, signal: SignalId, index: &[Expr], owner: i64) -> Result<Place, EvalError> {
        let p = self.p;
        Ok(Place {
            owner,
            buffer: self.slot(BufferSource::Signal(signal)),
            instance: if p.signal_per_call(signal) {
                self.call
            } else {
                0
            },
            index: self.flat(&p.signals[signal].dims, index, None)?,
        })
    }

    fn window(
        &mut self,
        r: &Region,
        at: Option<&Expr>,
        write: bool,
        s: &Stmt,
    ) -> Result<(), EvalError> {
        let BufferRef::Window(w) = r.buffer else {
            return Ok(());
        };
        let owner = match at {
            Some(e) => self.ev(e)?,
            None => self.rank,
        };
        let lo = self.ev(&r.lo)?;
        let len = self.ev(&r.hi)? - lo;
        let place = Place {
            owner,
            buffer: self.slot(BufferSource::Window(w)),
            instance: if self.p.window_per_call(w) {
                self.call
            } else {
                0
            },
            index: self.flat(&self.p.windows[w].dims, &r.index, Some(&r.lo))?,
        };
        let want = if write {
            Want::Put { len }
        } else {
            Want::Get { len }
        };
        self.push(want, place, s);
        Ok(())
    }

    fn block(&mut self, b: &Block) -> Result<Flow, EvalError> {
        for s in &b.stmts {
            if let Flow::Return = self.stmt(s)? {
                return Ok(Flow::Return);
            }
        }
        Ok(Flow::Next)
    }

    /// The values a loop's variable takes, in order.
    fn iterations(&self, range: &Range) -> Result<Vec<i64>, EvalError> {
        let p = self.p;
        let world = self.env.get(p.world).unwrap_or(0);
        Ok(match range {
            Range::Peers => (0..world).filter(|&r| r != self.rank).collect(),
            Range::Ranks => (0..world).collect(),
            Range::Span { lo, hi, step } => {
                let (lo, hi, step) = (self.ev(lo)?, self.ev(hi)?, self.ev(step)?.max(1));
                let mut v = Vec::new();
                let mut i = lo;
                while i < hi {
                    v.push(i);
                    i = i.checked_add(step).ok_or(EvalError::Overflow)?;
                }
                v
            }
            Range::Seq(q) => {
                let values = collc_spec::eval::seq_values(p, q, &self.env)?;
                (0..values.len()).map(|k| values.nth(k)).collect()
            }
        })
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Flow, EvalError> {
        let p = self.p;
        match &s.kind {
            StmtKind::Let { var, value } => {
                let v = self.ev(value)?;
                self.env.set(*var, v);
            }
            StmtKind::Notify {
                signal,
                index,
                target,
                op,
                value,
            } => {
                let owner = match target {
                    Some(t) => self.ev(t)?,
                    None => self.rank,
                };
                let place = self.cell(*signal, index, owner)?;
                let value = self.ev(value)?;
                self.push(Want::Notify { op: *op, value }, place, s);
            }
            StmtKind::Wait {
                signal,
                index,
                cmp,
                threshold,
            } => {
                let place = self.cell(*signal, index, self.rank)?;
                let threshold = self.ev(threshold)?;
                self.push(
                    Want::Wait {
                        cmp: *cmp,
                        threshold,
                    },
                    place,
                    s,
                );
            }
            StmtKind::Copy { dst, src } => {
                self.window(src, None, false, s)?;
                self.window(dst, None, true, s)?;
            }
            StmtKind::Get { dst, src, from } => {
                self.window(src, Some(from), false, s)?;
                self.window(dst, None, true, s)?;
            }
            StmtKind::Put { dst, to, src } => {
                self.window(src, None, false, s)?;
                self.window(dst, Some(to), true, s)?;
            }
            StmtKind::Reduce {
                dst, src, from, to, ..
            } => {
                self.window(src, from.as_ref(), false, s)?;
                self.window(dst, to.as_ref(), true, s)?;
            }
            StmtKind::Fence => {
                let place = Place {
                    owner: self.rank,
                    buffer: -1,
                    instance: 0,
                    index: 0,
                };
                self.push(Want::Fence, place, s);
            }
            StmtKind::For { var, range, body } => {
                let iters = self.iterations(range)?;
                for i in iters {
                    self.env.set(*var, i);
                    if let Flow::Return = self.block(body)? {
                        return Ok(Flow::Return);
                    }
                }
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                if eval_cond(p, cond, &self.env)? {
                    return self.block(then_block);
                } else if let Some(e) = else_block {
                    return self.block(e);
                }
            }
            StmtKind::Return { cond } => {
                if eval_cond(p, cond, &self.env)? {
                    return Ok(Flow::Return);
                }
            }
        }
        Ok(Flow::Next)
    }
}

/// The events rank `rank` performs in calls `0..calls`, in program order: of block `block`,
/// or (`None`) of every block in turn, block 0 first, within each call.
pub fn expected(
    p: &Protocol,
    b: &Bindings,
    rank: i64,
    block: Option<i64>,
    calls: i64,
) -> Result<Vec<Expected>, EvalError> {
    let mut w = Walk {
        p,
        abi: Abi::of(p),
        env: b.env.clone(),
        rank,
        block: 0,
        call: 0,
        epilogue: false,
        out: Vec::new(),
    };
    w.env.set(p.me, rank);
    let blocks: Vec<i64> = match block {
        Some(x) => vec![x],
        None => (0..b.blocks).collect(),
    };
    for call in 0..calls {
        w.call = call;
        if let Some(cv) = p.call {
            w.env.set(cv, call);
        }
        w.env.arrays = arrays(p, &w.env, rank, call)?;
        for &blk in &blocks {
            w.block = blk;
            if let Some(bl) = &p.blocks {
                w.env.set(bl.var, blk);
            }
            w.epilogue = false;
            if let Flow::Next = w.block(&p.body)? {
                w.epilogue = true;
                w.block(&p.epilogue)?;
            }
        }
    }
    Ok(w.out)
}

/// Rank `r`'s host arrays in call `k`, as the oracle stages them.
fn arrays(p: &Protocol, env: &Env, r: i64, k: i64) -> Result<Vec<Vec<i64>>, EvalError> {
    p.arrays
        .iter()
        .enumerate()
        .map(|(a, arr)| {
            let mut len = 1i64;
            for d in &arr.dims {
                len = len
                    .checked_mul(eval(p, d, env)?)
                    .ok_or(EvalError::Overflow)?;
            }
            let (lo, hi) = arr.domain;
            Ok((0..len.max(0) as usize)
                .map(|i| array_value(lo, hi, a, r as usize, k as usize, i))
                .collect())
        })
        .collect()
}
