//! The protocol compiled for execution: parameters bound and folded into
//! constants, statements flattened into a linear instruction list with jumps
//! (so a process's continuation is one program counter plus a few local
//! slots, cheap to clone and hash), and a table describing every statement
//! for traces and messages.

use collc_grammar::Span;
use collc_spec::eval::{ceil_div, Bindings};
use collc_spec::ir::*;
use collc_spec::print;

/// A compiled integer expression. Globals are folded to constants; `me`, the
/// block index, loop variables and statement lets live in per-process slots.
#[derive(Debug, Clone)]
pub enum CExpr {
    /// A constant.
    Const(i64),
    /// A per-process slot.
    Slot(u16),
    /// A host array element on the executing rank.
    Array(ArrayId, Vec<CExpr>),
    /// `-e`
    Neg(Box<CExpr>),
    /// `a op b`
    Bin(BinOp, Box<CExpr>, Box<CExpr>),
    /// `ceil(a / b)`
    CeilDiv(Box<CExpr>, Box<CExpr>),
    /// `min(a, b)`
    Min(Box<CExpr>, Box<CExpr>),
    /// `max(a, b)`
    Max(Box<CExpr>, Box<CExpr>),
    /// `log2(e)`
    Log2(Box<CExpr>),
    /// The value a [`Seq`] range visits at the index in the slot.
    SeqAt {
        /// The slot holding the iteration index (`0..len`).
        index: u16,
        /// Start of the ascending sequence.
        lo: Box<CExpr>,
        /// Its exclusive bound.
        hi: Box<CExpr>,
        /// Its step or factor.
        step: Box<CExpr>,
        /// The step multiplies.
        geometric: bool,
        /// Visited last to first.
        rev: bool,
    },
}

/// A compiled condition.
#[derive(Debug, Clone)]
pub enum CCond {
    /// Constant.
    Bool(bool),
    /// Comparison.
    Cmp(CmpOp, CExpr, CExpr),
    /// Negation.
    Not(Box<CCond>),
    /// Conjunction.
    And(Vec<CCond>),
    /// Disjunction.
    Or(Vec<CCond>),
}

/// A compiled region `buf[i]..[lo .. hi]`.
#[derive(Debug, Clone)]
pub struct CRegion {
    /// The buffer.
    pub buffer: BufferRef,
    /// Leading indices.
    pub index: Vec<CExpr>,
    /// Slice start.
    pub lo: CExpr,
    /// Slice end.
    pub hi: CExpr,
}

/// How a loop iterates.
#[derive(Debug, Clone)]
pub enum LoopKind {
    /// A [`Seq`] range: a hidden index counts `0..len` (the loop's `var` slot), and
    /// the body's first instruction sets the named variable from it.
    Seq {
        /// Start of the ascending sequence.
        lo: CExpr,
        /// Its exclusive bound.
        hi: CExpr,
        /// Its step or factor.
        step: CExpr,
        /// The step multiplies.
        geometric: bool,
        /// Visited last to first.
        rev: bool,
    },
    /// Every rank but `me`.
    Peers,
    /// Every rank.
    Ranks,
    /// `lo .. hi step s` (bounds kept in hidden slots).
    Span {
        /// Start.
        lo: CExpr,
        /// End (exclusive).
        hi: CExpr,
        /// Step.
        step: CExpr,
    },
}

/// One instruction. `stmt` indexes [`Code::stmts`].
#[derive(Debug, Clone)]
pub enum Instr {
    /// `slot = value`.
    Let { slot: u16, value: CExpr },
    /// Forget a slot (it goes out of scope), so equal continuations hash equally.
    Kill { slots: Vec<u16> },
    /// A notify.
    Notify {
        signal: SignalId,
        index: Vec<CExpr>,
        target: Option<CExpr>,
        op: NotifyOp,
        value: CExpr,
        stmt: u32,
    },
    /// A wait.
    Wait {
        signal: SignalId,
        index: Vec<CExpr>,
        cmp: CmpOp,
        threshold: CExpr,
        stmt: u32,
    },
    /// Local copy.
    Copy {
        dst: CRegion,
        src: CRegion,
        stmt: u32,
    },
    /// Remote read.
    Get {
        dst: CRegion,
        src: CRegion,
        from: CExpr,
        stmt: u32,
    },
    /// Remote write.
    Put {
        dst: CRegion,
        to: CExpr,
        src: CRegion,
        stmt: u32,
    },
    /// Reduction into a local region, or (`to`) into a peer's window.
    Reduce {
        op: ReduceOp,
        dst: CRegion,
        src: CRegion,
        from: Option<CExpr>,
        to: Option<CExpr>,
        stmt: u32,
    },
    /// A fence.
    Fence { stmt: u32 },
    /// Loop entry: sets the variable to its first value, or jumps to `exit`.
    LoopInit {
        var: u16,
        hi: u16,
        step: u16,
        kind: LoopKind,
        exit: u32,
        stmt: u32,
        /// (var, hi, step) slots of the enclosing loops, outermost first: the machine
        /// multiplies their remaining iterations with this loop's trip to refuse a loop
        /// nest too large to run before it starts.
        outer: Vec<(u16, u16, u16)>,
    },
    /// Loop latch: advances the variable and jumps to `body`, or falls through.
    LoopNext {
        var: u16,
        hi: u16,
        step: u16,
        peers: bool,
        body: u32,
    },
    /// Jumps to `target` when the condition is false.
    JumpIfNot { cond: CCond, target: u32 },
    /// Unconditional jump.
    Jump { target: u32 },
    /// Early return: when `cond` holds the call ends here (the epilogue is skipped).
    Return { cond: CCond, stmt: u32 },
    /// The body ends and the epilogue begins.
    EndBody,
    /// The call ends.
    EndCall,
}

/// What a statement is, for traces.
#[derive(Debug, Clone)]
pub struct StmtInfo {
    /// Where it was written.
    pub span: Span,
    /// Its source form, e.g. `notify sig[me] @ p += 1`.
    pub text: String,
    /// True for statements of the epilogue.
    pub epilogue: bool,
    /// The operator of a reduction into a peer's window (`reduce OP DST @ RANK <- SRC`):
    /// its accesses are atomic per element, and two with the same operator commute.
    pub accumulate: Option<ReduceOp>,
}

/// A protocol compiled for one parameter assignment.
#[derive(Debug, Clone)]
pub struct Code {
    /// The instructions: body, then epilogue, then `EndCall`.
    pub instrs: Vec<Instr>,
    /// Statement descriptions.
    pub stmts: Vec<StmtInfo>,
    /// Number of per-process slots.
    pub nslots: usize,
    /// Slot of `me`.
    pub me_slot: u16,
    /// Slot of the block index (if multicore).
    pub blk_slot: Option<u16>,
    /// Slot of the call index (if the protocol reads it).
    pub call_slot: Option<u16>,
    /// World size.
    pub world: usize,
    /// Blocks per rank.
    pub blocks: usize,
    /// Per signal: dimension sizes and offset of its first cell in a rank's cell array.
    pub signal_dims: Vec<Vec<i64>>,
    /// Per signal: first cell index.
    pub signal_base: Vec<usize>,
    /// Cells per rank.
    pub cells_per_rank: usize,
    /// Per window: dimension sizes.
    pub window_dims: Vec<Vec<i64>>,
    /// Per tile: dimension sizes.
    pub tile_dims: Vec<Vec<i64>>,
    /// Per array: dimension sizes and domain.
    pub array_dims: Vec<Vec<i64>>,
    /// Index of the first epilogue instruction.
    pub epilogue_pc: u32,
    /// A tile size for messages (the constant `TILE` if declared, else 256).
    pub tile_size: i64,
    /// The root rank of a rooted kind (broadcast, reduce, gather, scatter).
    pub root: Option<usize>,
    /// all_to_all_v's declared row length and the windows it is the row of
    /// ([`collc_spec::meaning::a2av_row`]).
    pub a2av_row: Option<(Vec<WindowId>, u64)>,
}

/// Why the protocol cannot be compiled for these parameters.
#[derive(Debug, Clone)]
pub struct CompileError(pub String);

/// The most cells per rank, elements per window, and processes the simulator accepts.
pub const MAX_CELLS_PER_RANK: i64 = 1 << 16;
/// The largest world size the simulator runs (a protocol's domain may go further; the
/// states of a run grow with P, and a bounded search is far smaller anyway).
pub const MAX_WORLD: i64 = 64;
/// The most elements in one window or tile.
pub const MAX_BUFFER_ELEMS: i64 = 1 << 40;

struct Compiler<'a> {
    p: &'a Protocol,
    b: &'a Bindings,
    slots: Vec<Option<u16>>,
    nslots: u16,
    instrs: Vec<Instr>,
    stmts: Vec<StmtInfo>,
    epilogue: bool,
    /// (var, hi, step) slots of the loops being compiled, outermost first.
    loops: Vec<(u16, u16, u16)>,
}

impl Code {
    /// Compiles a protocol for bound parameters.
    pub fn compile(p: &Protocol, b: &Bindings) -> Result<Code, CompileError> {
        let mut c = Compiler {
            p,
            b,
            slots: vec![None; p.vars.len()],
            nslots: 0,
            instrs: Vec::new(),
            stmts: Vec::new(),
            epilogue: false,
            loops: Vec::new(),
        };
        let me_slot = c.slot(p.me);
        let blk_slot = p.blocks.as_ref().map(|bl| c.slot(bl.var));
        let call_slot = p.call.map(|v| c.slot(v));
        let world = b.world;
        if !(1..=MAX_WORLD).contains(&world) {
            return Err(CompileError(format!(
                "world size {world}: the simulator runs 1..={MAX_WORLD} ranks"
            )));
        }
        if b.blocks < 1 || b.blocks > 8 {
            return Err(CompileError(format!(
                "{} blocks per rank; the simulator runs 1..=8",
                b.blocks
            )));
        }
        let d = c.sizes()?;
        c.block(&p.body)?;
        c.instrs.push(Instr::EndBody);
        let epilogue_pc = c.instrs.len() as u32;
        c.epilogue = true;
        c.block(&p.epilogue)?;
        c.instrs.push(Instr::EndCall);
        let root = p
            .semantics
            .root()
            .and_then(|root| b.env.get(root).map(|r| r as usize));
        Ok(Code {
            instrs: c.instrs,
            stmts: c.stmts,
            nslots: c.nslots as usize,
            me_slot,
            blk_slot,
            call_slot,
            world: world as usize,
            blocks: b.blocks as usize,
            signal_dims: d.signal_dims,
            signal_base: d.signal_base,
            cells_per_rank: d.cells as usize,
            window_dims: d.window_dims,
            tile_dims: d.tile_dims,
            array_dims: d.array_dims,
            epilogue_pc,
            tile_size: tile_size(p, b),
            root,
            a2av_row: collc_spec::meaning::a2av_row(p, &|v| b.env.get(v)),
        })
    }

    /// Number of processes (ranks times blocks).
    pub fn nprocs(&self) -> usize {
        self.world * self.blocks
    }

    /// Total elements of a window.
    pub fn window_len(&self, w: WindowId) -> u64 {
        self.window_dims[w.index()].iter().product::<i64>() as u64
    }

    /// Total elements of a tile.
    pub fn tile_len(&self, t: TileId) -> u64 {
        self.tile_dims[t.index()].iter().product::<i64>() as u64
    }
}

impl Compiler<'_> {
    /// The dimensions of `what` (a declaration's name), each a non-negative value.
    fn dims(&self, d: &[Expr], what: &str) -> Result<Vec<i64>, CompileError> {
        d.iter()
            .map(|e| {
                let v = self
                    .global(e)
                    .map_err(|m| CompileError(format!("cannot size `{what}`: {m}")))?;
                if v < 0 {
                    return Err(CompileError(format!(
                        "`{what}` has a negative dimension ({v})"
                    )));
                }
                Ok(v)
            })
            .collect()
    }

    /// The dimensions of each window or tile (`what`), given as (dimensions, name),
    /// refusing one with more than [`MAX_BUFFER_ELEMS`] elements.
    fn buffer_dims<'e>(
        &self,
        buffers: impl Iterator<Item = (&'e [Expr], &'e str)>,
        what: &str,
    ) -> Result<Vec<Vec<i64>>, CompileError> {
        buffers
            .map(|(dims, name)| {
                let d = self.dims(dims, name)?;
                if too_large(&d) {
                    return Err(CompileError(format!("{what} `{name}` is too large")));
                }
                Ok(d)
            })
            .collect()
    }

    /// Sizes every signal, window, tile and host array, refusing those too large to
    /// simulate.
    fn sizes(&self) -> Result<Sizes, CompileError> {
        let p = self.p;
        let mut signal_dims = Vec::new();
        let mut signal_base = Vec::new();
        let mut cells = 0i64;
        for s in &p.signals {
            let d = self.dims(&s.dims, &s.name)?;
            signal_base.push(cells as usize);
            cells = cells.saturating_add(d.iter().product::<i64>());
            signal_dims.push(d);
        }
        if cells > MAX_CELLS_PER_RANK {
            return Err(CompileError(format!(
                "{cells} signal cells per rank; the simulator handles at most {MAX_CELLS_PER_RANK}"
            )));
        }
        let windows = p.windows.iter().map(|w| (&w.dims[..], w.name.as_str()));
        let window_dims = self.buffer_dims(windows, "window")?;
        let tiles = p.tiles.iter().map(|t| (&t.dims[..], t.name.as_str()));
        let tile_dims = self.buffer_dims(tiles, "tile")?;
        let mut array_dims = Vec::new();
        for a in &p.arrays {
            let d = self.dims(&a.dims, &a.name)?;
            if d.iter().product::<i64>() > 1 << 16 {
                return Err(CompileError(format!(
                    "host array `{}` is too large",
                    a.name
                )));
            }
            array_dims.push(d);
        }
        Ok(Sizes {
            signal_dims,
            signal_base,
            cells,
            window_dims,
            tile_dims,
            array_dims,
        })
    }
    fn slot(&mut self, v: VarId) -> u16 {
        if let Some(s) = self.slots[v.index()] {
            return s;
        }
        let s = self.nslots;
        self.nslots += 1;
        self.slots[v.index()] = Some(s);
        s
    }
    fn hidden(&mut self) -> u16 {
        let s = self.nslots;
        self.nslots += 1;
        s
    }

    fn global(&self, e: &Expr) -> Result<i64, String> {
        collc_spec::eval::eval(self.p, e, &self.b.env).map_err(|e| e.to_string())
    }

    fn expr(&mut self, e: &Expr) -> CExpr {
        match e {
            Expr::Int(v) => CExpr::Const(*v),
            Expr::Var(v) => match self.p.vars[*v].kind {
                VarKind::Me | VarKind::Block | VarKind::Call | VarKind::Loop | VarKind::Local => {
                    CExpr::Slot(self.slot(*v))
                }
                _ => match self.b.env.get(*v) {
                    Some(x) => CExpr::Const(x),
                    None => CExpr::Slot(self.slot(*v)),
                },
            },
            Expr::Array(a, idx) => CExpr::Array(*a, idx.iter().map(|x| self.expr(x)).collect()),
            Expr::Neg(a) => fold1(self.expr(a), |x| x.checked_neg(), CExpr::Neg),
            Expr::Rank(a) => self.expr(a),
            Expr::Bin(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                if let (CExpr::Const(p), CExpr::Const(q)) = (&x, &y) {
                    if let Some(v) = bin(*op, *p, *q) {
                        return CExpr::Const(v);
                    }
                }
                CExpr::Bin(*op, Box::new(x), Box::new(y))
            }
            Expr::CeilDiv(a, b) => CExpr::CeilDiv(Box::new(self.expr(a)), Box::new(self.expr(b))),
            Expr::Min(a, b) => CExpr::Min(Box::new(self.expr(a)), Box::new(self.expr(b))),
            Expr::Max(a, b) => CExpr::Max(Box::new(self.expr(a)), Box::new(self.expr(b))),
            Expr::Log2(a) => fold1(
                self.expr(a),
                |x| collc_spec::eval::log2(x).ok(),
                CExpr::Log2,
            ),
            Expr::Pow2(a) => self.expr(&Expr::Bin(BinOp::Shl, Box::new(Expr::Int(1)), a.clone())),
        }
    }

    fn cond(&mut self, c: &Cond) -> CCond {
        match c {
            Cond::Bool(b) => CCond::Bool(*b),
            Cond::Cmp(op, a, b) => CCond::Cmp(*op, self.expr(a), self.expr(b)),
            Cond::Not(x) => CCond::Not(Box::new(self.cond(x))),
            Cond::And(xs) => CCond::And(xs.iter().map(|x| self.cond(x)).collect()),
            Cond::Or(xs) => CCond::Or(xs.iter().map(|x| self.cond(x)).collect()),
        }
    }

    fn region(&mut self, r: &Region) -> CRegion {
        CRegion {
            buffer: r.buffer,
            index: r.index.iter().map(|x| self.expr(x)).collect(),
            lo: self.expr(&r.lo),
            hi: self.expr(&r.hi),
        }
    }

    fn info(&mut self, s: &Stmt, text: String) -> u32 {
        self.stmts.push(StmtInfo {
            span: s.span,
            text,
            epilogue: self.epilogue,
            accumulate: match &s.kind {
                StmtKind::Reduce {
                    op, to: Some(_), ..
                } => Some(*op),
                _ => None,
            },
        });
        (self.stmts.len() - 1) as u32
    }

    fn block(&mut self, b: &Block) -> Result<(), CompileError> {
        let mut lets = Vec::new();
        for s in &b.stmts {
            self.stmt(s, &mut lets)?;
        }
        if !lets.is_empty() {
            self.instrs.push(Instr::Kill { slots: lets });
        }
        Ok(())
    }

    fn here(&self) -> u32 {
        self.instrs.len() as u32
    }

    fn stmt(&mut self, s: &Stmt, lets: &mut Vec<u16>) -> Result<(), CompileError> {
        match &s.kind {
            StmtKind::Let { var, value } => {
                let slot = self.slot(*var);
                let value = self.expr(value);
                lets.push(slot);
                self.instrs.push(Instr::Let { slot, value });
            }
            StmtKind::For { var, range, body } => self.for_loop(s, *var, range, body)?,
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => self.branch(cond, then_block, else_block.as_ref())?,
            kind => {
                let text = print::stmt_head(self.p, kind, print::Style::Trace);
                let stmt = self.info(s, text);
                if let Some(ins) = self.op(kind, stmt) {
                    self.instrs.push(ins);
                }
            }
        }
        Ok(())
    }

    /// The instruction of a statement that is one (`None` for `let`, `for` and `if`,
    /// which [`Compiler::stmt`] compiles).
    fn op(&mut self, kind: &StmtKind, stmt: u32) -> Option<Instr> {
        Some(match kind {
            StmtKind::Notify {
                signal,
                index,
                target,
                op,
                value,
            } => Instr::Notify {
                signal: *signal,
                index: index.iter().map(|x| self.expr(x)).collect(),
                target: target.as_ref().map(|t| self.expr(t)),
                op: *op,
                value: self.expr(value),
                stmt,
            },
            StmtKind::Wait {
                signal,
                index,
                cmp,
                threshold,
            } => Instr::Wait {
                signal: *signal,
                index: index.iter().map(|x| self.expr(x)).collect(),
                cmp: *cmp,
                threshold: self.expr(threshold),
                stmt,
            },
            StmtKind::Copy { dst, src } => Instr::Copy {
                dst: self.region(dst),
                src: self.region(src),
                stmt,
            },
            StmtKind::Get { dst, src, from } => Instr::Get {
                dst: self.region(dst),
                src: self.region(src),
                from: self.expr(from),
                stmt,
            },
            StmtKind::Put { dst, to, src } => Instr::Put {
                dst: self.region(dst),
                to: self.expr(to),
                src: self.region(src),
                stmt,
            },
            StmtKind::Reduce {
                op,
                dst,
                src,
                from,
                to,
            } => Instr::Reduce {
                op: *op,
                dst: self.region(dst),
                src: self.region(src),
                from: from.as_ref().map(|f| self.expr(f)),
                to: to.as_ref().map(|t| self.expr(t)),
                stmt,
            },
            StmtKind::Fence => Instr::Fence { stmt },
            StmtKind::Return { cond } => Instr::Return {
                cond: self.cond(cond),
                stmt,
            },
            StmtKind::Let { .. } | StmtKind::For { .. } | StmtKind::If { .. } => return None,
        })
    }

    /// A loop: its entry (which jumps past the loop when it runs no iteration), its
    /// body, its latch, and the release of its slots.
    fn for_loop(
        &mut self,
        s: &Stmt,
        var: VarId,
        range: &Range,
        body: &Block,
    ) -> Result<(), CompileError> {
        let stmt = self.info(s, print::stmt_head(self.p, &s.kind, print::Style::Trace));
        let named = self.slot(var);
        let hi = self.hidden();
        let step = self.hidden();
        // A `Seq` loop counts a hidden index 0..len; the body starts by setting
        // the named variable to the value visited at that index.
        let (v, at) = match range {
            Range::Seq(q) => {
                let index = self.hidden();
                let at = CExpr::SeqAt {
                    index,
                    lo: Box::new(self.expr(&q.lo)),
                    hi: Box::new(self.expr(&q.hi)),
                    step: Box::new(self.expr(&q.step)),
                    geometric: q.geometric,
                    rev: q.rev,
                };
                (index, Some(at))
            }
            _ => (named, None),
        };
        let kind = self.loop_kind(range);
        let peers = matches!(kind, LoopKind::Peers);
        let init = self.here() as usize;
        self.instrs.push(Instr::LoopInit {
            var: v,
            hi,
            step,
            kind,
            exit: 0,
            stmt,
            outer: self.loops.clone(),
        });
        let body_pc = self.here();
        if let Some(value) = at {
            self.instrs.push(Instr::Let { slot: named, value });
        }
        self.loops.push((v, hi, step));
        let r = self.block(body);
        self.loops.pop();
        r?;
        self.instrs.push(Instr::LoopNext {
            var: v,
            hi,
            step,
            peers,
            body: body_pc,
        });
        let mut slots = vec![v, hi, step];
        if v != named {
            slots.push(named);
        }
        self.instrs.push(Instr::Kill { slots });
        let exit = self.here() - 1;
        if let Instr::LoopInit { exit: e, .. } = &mut self.instrs[init] {
            *e = exit;
        }
        Ok(())
    }

    fn loop_kind(&mut self, range: &Range) -> LoopKind {
        match range {
            Range::Peers => LoopKind::Peers,
            Range::Ranks => LoopKind::Ranks,
            Range::Span { lo, hi, step } => LoopKind::Span {
                lo: self.expr(lo),
                hi: self.expr(hi),
                step: self.expr(step),
            },
            Range::Seq(q) => LoopKind::Seq {
                lo: self.expr(&q.lo),
                hi: self.expr(&q.hi),
                step: self.expr(&q.step),
                geometric: q.geometric,
                rev: q.rev,
            },
        }
    }

    /// An `if`: a jump past the then-block when the condition fails, to the
    /// else-block if there is one (the then-block then jumps past it).
    fn branch(
        &mut self,
        cond: &Cond,
        then_block: &Block,
        else_block: Option<&Block>,
    ) -> Result<(), CompileError> {
        let c = self.cond(cond);
        let j = self.here() as usize;
        self.instrs.push(Instr::JumpIfNot { cond: c, target: 0 });
        self.block(then_block)?;
        if let Some(e) = else_block {
            let jend = self.here() as usize;
            self.instrs.push(Instr::Jump { target: 0 });
            let else_pc = self.here();
            if let Instr::JumpIfNot { target, .. } = &mut self.instrs[j] {
                *target = else_pc;
            }
            self.block(e)?;
            let end = self.here();
            if let Instr::Jump { target } = &mut self.instrs[jend] {
                *target = end;
            }
        } else {
            let end = self.here();
            if let Instr::JumpIfNot { target, .. } = &mut self.instrs[j] {
                *target = end;
            }
        }
        Ok(())
    }
}

/// The sizes of a protocol's signals, windows, tiles and host arrays under its
/// bound parameters.
struct Sizes {
    signal_dims: Vec<Vec<i64>>,
    signal_base: Vec<usize>,
    /// Signal cells per rank.
    cells: i64,
    window_dims: Vec<Vec<i64>>,
    tile_dims: Vec<Vec<i64>>,
    array_dims: Vec<Vec<i64>>,
}

/// A tile size for messages: the constant `TILE` if declared (and positive), else 256.
fn tile_size(p: &Protocol, b: &Bindings) -> i64 {
    p.vars
        .iter()
        .enumerate()
        .find(|(_, v)| v.name.eq_ignore_ascii_case("tile") && matches!(v.kind, VarKind::Const(_)))
        .and_then(|(i, _)| b.env.get(VarId::new(i)))
        .filter(|t| *t > 0)
        .unwrap_or(256)
}

/// Whether a buffer of these dimensions has more than [`MAX_BUFFER_ELEMS`] elements.
fn too_large(d: &[i64]) -> bool {
    d.iter()
        .try_fold(1i64, |a, x| a.checked_mul(*x))
        .is_none_or(|n| n > MAX_BUFFER_ELEMS)
}

fn fold1(x: CExpr, f: impl Fn(i64) -> Option<i64>, mk: fn(Box<CExpr>) -> CExpr) -> CExpr {
    if let CExpr::Const(v) = x {
        if let Some(r) = f(v) {
            return CExpr::Const(r);
        }
    }
    mk(Box::new(x))
}

/// Evaluates a binary operator with checked arithmetic (`None` on overflow, division
/// by zero or a shift out of range).
pub fn bin(op: BinOp, a: i64, b: i64) -> Option<i64> {
    collc_spec::eval::bin(op, a, b).ok()
}

/// Evaluation context of one process.
pub struct Ctx<'a> {
    /// The process's slots.
    pub slots: &'a [i64],
    /// Host arrays of the executing rank (flattened), by array id.
    pub arrays: &'a [Vec<i64>],
    /// Array dimensions.
    pub array_dims: &'a [Vec<i64>],
}

impl Ctx<'_> {
    /// Evaluates an expression.
    pub fn eval(&self, e: &CExpr) -> Result<i64, String> {
        Ok(match e {
            CExpr::Const(v) => *v,
            CExpr::Slot(s) => self.slots[*s as usize],
            CExpr::Array(a, idx) => {
                let dims = &self.array_dims[a.index()];
                let mut flat = 0i64;
                for (k, x) in idx.iter().enumerate() {
                    let i = self.eval(x)?;
                    let d = dims.get(k).copied().unwrap_or(0);
                    if i < 0 || i >= d {
                        return Err(format!("host array index {i} is outside 0..{d}"));
                    }
                    flat = flat * d + i;
                }
                *self
                    .arrays
                    .get(a.index())
                    .and_then(|v| v.get(flat as usize))
                    .ok_or_else(|| "host array element unavailable".to_string())?
            }
            CExpr::Neg(a) => self.eval(a)?.checked_neg().ok_or("arithmetic overflow")?,
            CExpr::Bin(op, a, b) => {
                let (x, y) = (self.eval(a)?, self.eval(b)?);
                collc_spec::eval::bin(*op, x, y).map_err(|e| e.to_string())?
            }
            CExpr::Log2(a) => collc_spec::eval::log2(self.eval(a)?).map_err(|e| e.to_string())?,
            CExpr::SeqAt {
                index,
                lo,
                hi,
                step,
                geometric,
                rev,
            } => self
                .seq(lo, hi, step, *geometric, *rev)?
                .nth(self.slots[*index as usize]),
            CExpr::CeilDiv(a, b) => {
                let (x, y) = (self.eval(a)?, self.eval(b)?);
                if y == 0 {
                    return Err("division by zero".into());
                }
                ceil_div(x, y).ok_or("arithmetic overflow")?
            }
            CExpr::Min(a, b) => self.eval(a)?.min(self.eval(b)?),
            CExpr::Max(a, b) => self.eval(a)?.max(self.eval(b)?),
        })
    }

    /// The values of a `Seq` range.
    pub fn seq(
        &self,
        lo: &CExpr,
        hi: &CExpr,
        step: &CExpr,
        geometric: bool,
        rev: bool,
    ) -> Result<collc_spec::eval::SeqValues, String> {
        collc_spec::eval::SeqValues::new(
            self.eval(lo)?,
            self.eval(hi)?,
            self.eval(step)?,
            geometric,
            rev,
        )
        .map_err(|e| e.to_string())
    }

    /// Evaluates a condition.
    pub fn cond(&self, c: &CCond) -> Result<bool, String> {
        Ok(match c {
            CCond::Bool(b) => *b,
            CCond::Cmp(op, a, b) => op.holds(self.eval(a)?, self.eval(b)?),
            CCond::Not(x) => !self.cond(x)?,
            CCond::And(xs) => {
                for x in xs {
                    if !self.cond(x)? {
                        return Ok(false);
                    }
                }
                true
            }
            CCond::Or(xs) => {
                for x in xs {
                    if self.cond(x)? {
                        return Ok(true);
                    }
                }
                false
            }
        })
    }
}
