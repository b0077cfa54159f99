//! [`ProtocolInfo`]: the facts about a protocol's text that several passes read — its
//! literals, its rank-valued quantities, its comparisons, its statement-level `let`s, the
//! moduli of its remainders, its loops and the statements that name its signal cells —
//! gathered once, by walks of the IR ([`crate::visit`]).
//!
//! "The protocol's code" below is the values of the top-level `let`s, the `require`s, the
//! body and the epilogue; the declarations' dimensions and the block count are not part of it.
//! The facts are syntactic: they do not change when a parameter's domain is narrowed.

use crate::ir::{BinOp, CmpOp, Cond, Expr, Id, Protocol, StmtKind, Ty, VarId, VarKind};
use crate::visit::{self, Visit};
use std::collections::BTreeSet;

mod structure;
pub use structure::{Access, Cell, Loop, Trip};

/// A statement-level `let`: its variable and value.
pub type Local = (VarId, Expr);

/// The facts (module documentation), in the order the walk meets them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProtocolInfo {
    /// Every integer literal of the protocol's code (every `Expr::Int`).
    pub literals: Vec<i64>,
    /// The rank-valued variables: the world size and every variable of rank type, then, to a
    /// fixpoint, the loop variables whose numeric range and the `let`s (statement-level or
    /// top-level) whose value reads one.
    pub rank_valued: BTreeSet<VarId>,
    /// The literals of the comparisons and outermost expressions of the protocol's code that
    /// read a rank-valued variable (a top-level `let`'s value counts as one expression).
    pub rank_literals: Vec<i64>,
    /// Every comparison of the top-level `let`s, the body and the epilogue (not the
    /// `require`s), and every `min(a, b)` / `max(a, b)` there as `a <= b`.
    pub comparisons: Vec<Cond>,
    /// The statement-level `let`s of the body and the epilogue.
    pub locals: Vec<Local>,
    /// The variables that are the right operand of a `%` in the top-level `let`s, the body
    /// or the epilogue (`ring[t % K]`).
    pub moduli: BTreeSet<VarId>,
    /// The integer literals that are the right operand of a `%` there (`ring[t % 16]`).
    pub literal_moduli: BTreeSet<i64>,
    /// The `for` loops of the body and the epilogue, in program order (an outer loop before
    /// the loops in its body).
    pub loops: Vec<Loop>,
    /// The notifies and waits of the body and the epilogue, in program order: the cell
    /// each names and what it does to it.
    pub cells: Vec<Cell>,
}

impl ProtocolInfo {
    /// The facts of `p`.
    pub fn of(p: &Protocol) -> Self {
        let mut walk = Collect::default();
        visit::walk_derived(&mut walk, p);
        walk.visit_block(&p.body);
        walk.visit_block(&p.epilogue);
        let Collect {
            literals,
            comparisons,
            locals,
            moduli,
            literal_moduli,
        } = walk;
        let mut lits = Ints(Vec::new());
        visit::walk_requires(&mut lits, p);
        let mut literals_all = lits.0;
        literals_all.extend(literals);
        let rank_valued = rank_valued(p);
        let (loops, cells) = structure::of(p);
        ProtocolInfo {
            literals: literals_all,
            rank_literals: rank_literals(p, &rank_valued),
            rank_valued,
            comparisons,
            locals,
            moduli,
            literal_moduli,
            loops,
            cells,
        }
    }
    /// The loop whose variable is `v`, if `v` is a loop variable (each loop has its own).
    pub fn loop_of(&self, v: VarId) -> Option<&Loop> {
        self.loops.iter().find(|l| l.var == v)
    }
    /// The statements that name a cell of signal `s`, in program order.
    pub fn cells_of(&self, s: crate::ir::SignalId) -> impl Iterator<Item = &Cell> + '_ {
        self.cells.iter().filter(move |c| c.signal == s)
    }
}

/// One walk over the top-level `let`s, the body and the epilogue.
#[derive(Default)]
struct Collect {
    literals: Vec<i64>,
    comparisons: Vec<Cond>,
    locals: Vec<Local>,
    moduli: BTreeSet<VarId>,
    literal_moduli: BTreeSet<i64>,
}

impl Visit for Collect {
    fn visit_stmt(&mut self, s: &crate::ir::Stmt) {
        if let StmtKind::Let { var, value } = &s.kind {
            self.locals.push((*var, value.clone()));
        }
        visit::walk_stmt(self, s);
    }
    fn visit_cond(&mut self, c: &Cond) {
        if let Cond::Cmp(..) = c {
            self.comparisons.push(c.clone());
        }
        visit::walk_cond(self, c);
    }
    fn visit_expr(&mut self, e: &Expr) {
        match e {
            Expr::Int(n) => self.literals.push(*n),
            Expr::Min(a, b) | Expr::Max(a, b) => {
                let (a, b) = ((**a).clone(), (**b).clone());
                self.comparisons.push(Cond::Cmp(CmpOp::Le, a, b));
            }
            Expr::Bin(BinOp::Mod, _, m) => match **m {
                Expr::Var(v) => {
                    self.moduli.insert(v);
                }
                Expr::Int(n) => {
                    self.literal_moduli.insert(n);
                }
                _ => {}
            },
            _ => {}
        }
        visit::walk_expr(self, e);
    }
}

/// Every `Expr::Int` a walk meets.
struct Ints(Vec<i64>);

impl Visit for Ints {
    fn visit_expr(&mut self, e: &Expr) {
        if let Expr::Int(n) = e {
            self.0.push(*n);
        }
        visit::walk_expr(self, e);
    }
}

/// Whether `e` reads one of the variables `set`.
fn mentions(e: &Expr, set: &BTreeSet<VarId>) -> bool {
    let mut found = false;
    e.for_each_var(&mut |v| found |= set.contains(&v));
    found
}

/// [`ProtocolInfo::rank_valued`].
fn rank_valued(p: &Protocol) -> BTreeSet<VarId> {
    let mut set: BTreeSet<VarId> = BTreeSet::from([p.world]);
    set.extend(Id::range(p.vars.len()).filter(|i| p.vars[*i].ty == Ty::Rank));
    loop {
        let before = set.len();
        for (i, v) in crate::id::enumerate(&p.vars) {
            if let VarKind::Derived(d) = &v.kind {
                if mentions(d, &set) {
                    set.insert(i);
                }
            }
        }
        for b in [&p.body, &p.epilogue] {
            visit::each_stmt(b, &mut |s| {
                let bound = match &s.kind {
                    StmtKind::For { var, range, .. } => {
                        let mut reads = Reads::new(&set);
                        reads.visit_range(range);
                        reads.found.then_some(*var)
                    }
                    StmtKind::Let { var, value } => mentions(value, &set).then_some(*var),
                    _ => None,
                };
                if let Some(v) = bound {
                    set.insert(v);
                }
            });
        }
        if set.len() == before {
            return set;
        }
    }
}

/// Whether a walk meets a variable of `set`.
struct Reads<'s> {
    set: &'s BTreeSet<VarId>,
    found: bool,
}

impl<'s> Reads<'s> {
    fn new(set: &'s BTreeSet<VarId>) -> Self {
        Reads { set, found: false }
    }
}

impl Visit for Reads<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        self.found |= mentions(e, self.set);
    }
}

/// [`ProtocolInfo::rank_literals`]: each comparison and outermost expression of the code is
/// one unit; a unit that reads a rank-valued variable gives all its literals.
fn rank_literals(p: &Protocol, ranked: &BTreeSet<VarId>) -> Vec<i64> {
    let mut units = Units {
        ranked,
        out: Vec::new(),
    };
    visit::walk_requires(&mut units, p);
    units.visit_block(&p.body);
    units.visit_block(&p.epilogue);
    visit::walk_derived(&mut units, p);
    units.out
}

/// The literals of the units that read a rank-valued variable ([`rank_literals`]).
struct Units<'s> {
    ranked: &'s BTreeSet<VarId>,
    out: Vec<i64>,
}

impl Units<'_> {
    fn unit(&mut self, c: &Cond) {
        let mut reads = Reads::new(self.ranked);
        visit::walk_cond(&mut reads, c);
        if reads.found {
            let mut ints = Ints(Vec::new());
            visit::walk_cond(&mut ints, c);
            self.out.extend(ints.0);
        }
    }
}

impl Visit for Units<'_> {
    fn visit_cond(&mut self, c: &Cond) {
        match c {
            Cond::Cmp(..) => self.unit(c),
            _ => visit::walk_cond(self, c),
        }
    }
    fn visit_expr(&mut self, e: &Expr) {
        if mentions(e, self.ranked) {
            let mut ints = Ints(Vec::new());
            ints.visit_expr(e);
            self.out.extend(ints.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Range;

    fn protocol(text: &str) -> Protocol {
        crate::lowered(text).protocol.expect("the case lowers")
    }

    const CASE: &str = "collective c: barrier() {
        ranks P in 1..=64;
        param n: int in 1..=8;
        let H = P / 2;
        require n < 7;
        signal s[P];
        body {
            let k = n % H;
            for d in 0..min(P, 20) {
                if d * 3 < 40 { notify s[me] @ rank(d) += 1; }
            }
            if n > 5 { fence; }
        }
        epilogue { }
    }";

    #[test]
    fn the_walk_finds_literals_comparisons_lets_and_moduli() {
        let p = protocol(CASE);
        let info = ProtocolInfo::of(&p);
        let mut lits = info.literals.clone();
        lits.sort_unstable();
        lits.dedup();
        assert_eq!(lits, vec![0, 1, 2, 3, 5, 7, 20, 40]);
        let name = |v: VarId| p.var_name(v).to_string();
        let ranked: Vec<String> = info.rank_valued.iter().map(|v| name(*v)).collect();
        // P, me (rank), H (from P), d (its range reads P), k (reads H)
        for x in ["P", "me", "H", "d", "k"] {
            assert!(ranked.contains(&x.to_string()), "{x} in {ranked:?}");
        }
        assert!(!ranked.contains(&"n".to_string()));
        let mut rl = info.rank_literals.clone();
        rl.sort_unstable();
        rl.dedup();
        // `P / 2`, `min(P, 20)`, `d * 3 < 40`; the loop's start `0`, `n < 7`, `n > 5` and
        // `+= 1` read no rank-valued variable
        assert_eq!(rl, vec![2, 3, 20, 40]);
        // `d * 3 < 40`, `n > 5`, `min(P, 20)` (not the require)
        assert_eq!(info.comparisons.len(), 3);
        assert_eq!(info.locals.len(), 1);
        let moduli: Vec<String> = info.moduli.iter().map(|v| name(*v)).collect();
        assert_eq!(moduli, vec!["H".to_string()]);
        assert!(info.literal_moduli.is_empty());
    }

    #[test]
    fn a_literal_modulus_is_a_literal_modulus() {
        let p = protocol(
            "collective c: barrier() {
                ranks P in 1..=8;
                const S = 5;
                signal s[16];
                body { notify s[(me + 3) % 16] @ rank(0) += 1; notify s[me % S] @ rank(0) += 1; }
                epilogue { }
            }",
        );
        let info = ProtocolInfo::of(&p);
        assert_eq!(
            info.literal_moduli.iter().copied().collect::<Vec<_>>(),
            vec![16]
        );
        let moduli: Vec<&str> = info.moduli.iter().map(|v| p.var_name(*v)).collect();
        assert_eq!(moduli, vec!["S"]);
    }

    #[test]
    fn loops_carry_their_nest_and_trip() {
        let p = protocol(
            "collective c: barrier() {
                ranks P in 1..=8;
                const K = 3;
                let T = 2 * K;
                signal s[P];
                body {
                    for t in 0..T step 4 {
                        for q in peers { notify s[me] @ q += 1; }
                        for j in 1..P step *2 { wait s[j] >= 1; }
                    }
                }
                epilogue { for i in (0..K).rev() { notify s[i] = 0; } }
            }",
        );
        let info = ProtocolInfo::of(&p);
        let name = |v: VarId| p.var_name(v).to_string();
        let got: Vec<(String, Vec<usize>, Trip, bool)> = info
            .loops
            .iter()
            .map(|l| (name(l.var), l.enclosing.clone(), l.trip, l.epilogue))
            .collect();
        let want = vec![
            ("t".to_string(), vec![], Trip::Literal(2), false),
            ("q".to_string(), vec![0], Trip::Symbolic, false),
            ("j".to_string(), vec![0], Trip::Symbolic, false),
            ("i".to_string(), vec![], Trip::Literal(3), true),
        ];
        assert_eq!(got, want);
        assert!(matches!(info.loops[1].range, Range::Peers));
        let j = info.loops[2].var;
        assert_eq!(info.loop_of(j).map(|l| l.span), Some(info.loops[2].span));
        assert!(info.loop_of(p.me).is_none());
    }

    #[test]
    fn cells_say_who_notifies_sets_and_waits() {
        let p = protocol(
            "collective c: barrier() {
                ranks P in 1..=8;
                signal s[P];
                signal t[2];
                body {
                    for q in peers { notify s[me] @ q += 1; }
                    if me == 0 { notify t[1] = 5; }
                    wait s[me] >= P - 1;
                }
                epilogue { notify s[me] -= P - 1; }
            }",
        );
        let info = ProtocolInfo::of(&p);
        assert_eq!(info.cells.len(), 4);
        let [add, set, wait, reset] = &info.cells[..] else {
            panic!("four cells: {:?}", info.cells)
        };
        assert!(matches!(add.access, Access::Add(_)));
        assert_eq!(add.loops, vec![0]);
        assert!(!add.conditional && !add.epilogue);
        assert_eq!(add.target, Some(Expr::Var(info.loops[0].var)));
        assert!(matches!(set.access, Access::Set(Expr::Int(5))));
        assert!(set.conditional && set.loops.is_empty());
        assert_eq!(set.literal_index(), Some(vec![1]));
        assert!(add.literal_index().is_none());
        assert!(matches!(wait.access, Access::Wait(CmpOp::Ge, _)));
        assert!(wait.is_wait() && wait.target.is_none());
        assert_eq!(wait.owner(p.me), Expr::Var(p.me));
        assert!(reset.epilogue && matches!(reset.access, Access::Add(Expr::Neg(_))));
        let s = add.signal;
        assert_eq!(info.cells_of(s).count(), 3);
    }
}
