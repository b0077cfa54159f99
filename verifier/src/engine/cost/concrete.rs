//! The counts of one call at concrete parameters, by running the IR's control flow
//! for every rank and block (for the rows with no closed form).

use collc_spec::eval::{eval, eval_cond, Env};
use collc_spec::ir::*;

struct Run<'a> {
    p: &'a Protocol,
    env: Env,
    me: i64,
    world: i64,
    out: [i64; 4],
    /// Statements left before the run gives up (shared by every rank and block).
    fuel: u64,
}

/// Statements one evaluation may execute, all ranks and blocks together.
pub const FUEL: u64 = 50_000_000;

/// Why the walk stopped.
enum Stop {
    Returned,
    Fail(String),
}

impl Run<'_> {
    fn e(&self, x: &Expr) -> Result<i64, Stop> {
        eval(self.p, x, &self.env).map_err(|e| Stop::Fail(e.to_string()))
    }

    fn block(&mut self, b: &Block) -> Result<(), Stop> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Stop> {
        self.fuel = self
            .fuel
            .checked_sub(1)
            .ok_or_else(|| Stop::Fail(format!("more than {FUEL} statements to run")))?;
        match &s.kind {
            StmtKind::Let { var, value } => match self.e(value) {
                Ok(x) => self.env.set(*var, x),
                Err(_) => self.env.unset(*var),
            },
            StmtKind::Notify { target, .. } => {
                let remote = match target {
                    Some(t) => self.e(t)? != self.me,
                    None => false,
                };
                self.out[usize::from(!remote)] += 1;
            }
            StmtKind::Wait { .. } => self.out[2] += 1,
            StmtKind::Fence => self.out[3] += 1,
            StmtKind::Return { cond } => {
                if eval_cond(self.p, cond, &self.env).map_err(|e| Stop::Fail(e.to_string()))? {
                    return Err(Stop::Returned);
                }
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                if eval_cond(self.p, cond, &self.env).map_err(|e| Stop::Fail(e.to_string()))? {
                    self.block(then_block)?;
                } else if let Some(b) = else_block {
                    self.block(b)?;
                }
            }
            StmtKind::For {
                var,
                range: Range::Seq(q),
                body,
            } => {
                let vals = collc_spec::eval::seq_values(self.p, q, &self.env)
                    .map_err(|e| Stop::Fail(e.to_string()))?;
                for v in vals.iter() {
                    self.env.set(*var, v);
                    self.block(body)?;
                }
            }
            StmtKind::For { var, range, body } => {
                let (lo, hi, step) = match range {
                    Range::Seq(_) | Range::Peers | Range::Ranks => (0, self.world, 1),
                    Range::Span { lo, hi, step } => (self.e(lo)?, self.e(hi)?, self.e(step)?),
                };
                if step <= 0 {
                    return Err(Stop::Fail("a loop step is not positive".into()));
                }
                let mut v = lo;
                while v < hi {
                    if !(matches!(range, Range::Peers) && v == self.me) {
                        self.env.set(*var, v);
                        self.block(body)?;
                    }
                    v += step;
                }
            }
            StmtKind::Copy { .. }
            | StmtKind::Get { .. }
            | StmtKind::Put { .. }
            | StmtKind::Reduce { .. } => {}
        }
        Ok(())
    }
}

/// Remote atomics, local notifies, waits and fences of one call at `b`, all ranks
/// and blocks together; an error names what could not be evaluated (or that more
/// than [`FUEL`] statements would run: a huge world size never hangs `collc cost`).
pub fn counts(p: &Protocol, b: &collc_spec::eval::Bindings) -> Result<[i64; 4], String> {
    let mut out = [0i64; 4];
    let mut fuel = FUEL;
    for me in 0..b.world {
        for blk in 0..b.blocks {
            let mut env = b.env.clone();
            env.set(p.me, me);
            if let Some(bl) = &p.blocks {
                env.set(bl.var, blk);
            }
            let mut r = Run {
                p,
                env,
                me,
                world: b.world,
                out: [0; 4],
                fuel,
            };
            let res = r.block(&p.body).and_then(|_| r.block(&p.epilogue));
            match res {
                Ok(()) | Err(Stop::Returned) => {}
                Err(Stop::Fail(m)) => return Err(m),
            }
            fuel = r.fuel;
            for (o, x) in out.iter_mut().zip(r.out) {
                *o += x;
            }
        }
    }
    Ok(out)
}
