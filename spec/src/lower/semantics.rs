//! The header's `KIND(ARGS)` (LANGUAGE.md §6): each kind's arguments, resolved and checked.

use super::{err, what_is, Lowerer, Name};
use crate::ir::*;
use collc_grammar::ast;

/// What one argument of a kind must name.
#[derive(Clone, Copy)]
enum Arg {
    /// A reduction operator (`sum max min prod`).
    Op,
    /// A `param NAME: rank`.
    Root,
    /// A window, written as this placeholder in the arity help.
    Window(&'static str),
    /// A host `array`.
    Array,
    /// A value signal (`signal NAME[..] as value`).
    ValueSignal,
    /// An int `param`, `const` or top-level `let`: all_to_all_v's row length (optional).
    Row,
    /// The `blocks` variable: a per-lane barrier (optional).
    Lane,
}

/// Every kind with its arguments, in the order written.
const KINDS: [(&str, &[Arg]); 10] = [
    ("allreduce", &[Arg::Op, Arg::Window("WINDOW")]),
    ("broadcast", &[Arg::Root, Arg::Window("WINDOW")]),
    ("reduce", &[Arg::Op, Arg::Root, Arg::Window("WINDOW")]),
    ("reduce_scatter", &[Arg::Op, Arg::Window("WINDOW")]),
    ("allgather", &[Arg::Window("INPUT"), Arg::Window("TARGET")]),
    (
        "gather",
        &[Arg::Root, Arg::Window("INPUT"), Arg::Window("TARGET")],
    ),
    (
        "scatter",
        &[Arg::Root, Arg::Window("INPUT"), Arg::Window("TARGET")],
    ),
    ("all_to_all", &[Arg::Window("INPUT"), Arg::Window("TARGET")]),
    (
        "all_to_all_v",
        &[
            Arg::Window("INPUT"),
            Arg::Window("TARGET"),
            Arg::Array,
            Arg::ValueSignal,
            Arg::Row,
        ],
    ),
    ("barrier", &[Arg::Lane]),
];

/// The trailing arguments a kind may leave out (all_to_all_v's row length, a barrier's lane).
fn optional(kind: &str) -> usize {
    usize::from(kind == "all_to_all_v" || kind == "barrier")
}

/// The names of the collective kinds, in the order of LANGUAGE.md §6.
pub fn kind_names() -> impl Iterator<Item = &'static str> {
    KINDS.iter().map(|(k, _)| *k)
}

/// One resolved argument (0 where it did not resolve; a diagnostic says why).
#[derive(Clone, Copy)]
enum Value {
    Op(ReduceOp),
    Id(usize),
}

impl Value {
    fn op(self) -> ReduceOp {
        match self {
            Value::Op(o) => o,
            Value::Id(_) => ReduceOp::Sum,
        }
    }

    fn id<T>(self) -> Id<T> {
        Id::new(match self {
            Value::Id(i) => i,
            Value::Op(_) => 0,
        })
    }
}

fn placeholder(a: Arg) -> &'static str {
    match a {
        Arg::Op => "OP",
        Arg::Root => "ROOT",
        Arg::Window(w) => w,
        Arg::Array => "SEND_COUNTS",
        Arg::ValueSignal => "RECV_COUNTS",
        Arg::Row => "ROW",
        Arg::Lane => "BLOCKS",
    }
}

impl Lowerer {
    pub(super) fn semantics(&mut self, s: &ast::Semantics) -> Semantics {
        let kind = s.kind.name.as_str();
        let Some((_, args)) = KINDS.iter().find(|(k, _)| *k == kind) else {
            let all: Vec<&str> = kind_names().collect();
            self.diags.push(
                err(
                    "semantics::unknown",
                    format!("unknown collective `{kind}`"),
                    s.kind.span,
                    "not a collective collc knows",
                )
                .with_help(format!("one of: {}", all.join(", "))),
            );
            return Semantics::Barrier { lane: None };
        };
        let least = args.len() - optional(kind);
        if s.args.len() < least || s.args.len() > args.len() {
            let mut shape: Vec<&str> = args.iter().map(|a| placeholder(*a)).collect();
            let opt = shape.split_off(least);
            let sep = if shape.is_empty() { "" } else { ", " };
            let opt: String = opt.iter().map(|a| format!("[{sep}{a}]")).collect();
            self.diags.push(
                err(
                    "semantics::arity",
                    format!(
                        "`{kind}` takes {} arguments, found {}",
                        if least == args.len() {
                            least.to_string()
                        } else {
                            format!("{least} or {}", args.len())
                        },
                        s.args.len()
                    ),
                    s.span,
                    "wrong number of arguments",
                )
                .with_help(format!("write `{kind}({}{opt})`", shape.join(", "))),
            );
            return Semantics::Barrier { lane: None };
        }
        let v: Vec<Value> = args
            .iter()
            .zip(&s.args)
            .map(|(a, x)| self.semantics_arg(*a, x))
            .collect();
        build(kind, &v)
    }

    fn semantics_arg(&mut self, a: Arg, x: &ast::Ident) -> Value {
        match a {
            Arg::Op => Value::Op(self.reduce_op_arg(x)),
            Arg::Window(_) => Value::Id(self.window_arg(x).map_or(0, |w| w.index())),
            Arg::Root => Value::Id(self.root_arg(x).index()),
            Arg::Array => Value::Id(self.array_arg(x).index()),
            Arg::ValueSignal => Value::Id(self.value_signal_arg(x).index()),
            Arg::Row => Value::Id(self.row_arg(x).index()),
            Arg::Lane => Value::Id(self.lane_arg(x).index()),
        }
    }

    fn reduce_op_arg(&mut self, a: &ast::Ident) -> ReduceOp {
        self.op_of(a, "semantics::reduce-op")
            .unwrap_or(ReduceOp::Sum)
    }

    fn root_arg(&mut self, a: &ast::Ident) -> VarId {
        match self.lookup(&a.name) {
            Some(Name::Var(v))
                if self.vars[v].ty == Ty::Rank
                    && matches!(self.vars[v].kind, VarKind::Param { .. }) =>
            {
                v
            }
            Some(_) => {
                self.diags.push(
                    err(
                        "type::expected-rank",
                        format!("`{}` is not a rank parameter", a.name),
                        a.span,
                        "expected `param NAME: rank`",
                    )
                    .with_help("declare the root as `param root: rank;`"),
                );
                Id::new(0)
            }
            None => {
                self.unknown(a);
                Id::new(0)
            }
        }
    }

    fn array_arg(&mut self, a: &ast::Ident) -> ArrayId {
        match self.lookup(&a.name) {
            Some(Name::Array(x)) => x,
            None => {
                self.unknown(a);
                Id::new(0)
            }
            other => {
                self.diags.push(
                    err(
                        "type::expected-array",
                        format!("`{}` is not a host array", a.name),
                        a.span,
                        format!("this is {}", what_is(other)),
                    )
                    .with_help("send counts are given in `array NAME: int[P] in LO..=HI;`"),
                );
                Id::new(0)
            }
        }
    }

    fn row_arg(&mut self, a: &ast::Ident) -> VarId {
        match self.lookup(&a.name) {
            Some(Name::Var(v))
                if self.vars[v].ty != Ty::Rank
                    && matches!(
                        self.vars[v].kind,
                        VarKind::Param { .. } | VarKind::Const(_) | VarKind::Derived(_)
                    ) =>
            {
                v
            }
            None => {
                self.unknown(a);
                Id::new(0)
            }
            other => {
                self.diags.push(
                    err(
                        "type::expected-count",
                        format!("`{}` is not an int parameter, constant or `let`", a.name),
                        a.span,
                        format!("this is {}", what_is(other)),
                    )
                    .with_help("the row length is a count: `param m: int in 1..=N;`"),
                );
                Id::new(0)
            }
        }
    }

    fn lane_arg(&mut self, a: &ast::Ident) -> VarId {
        match self.lookup(&a.name) {
            Some(Name::Var(v)) if self.vars[v].kind == VarKind::Block => v,
            None => {
                self.unknown(a);
                Id::new(0)
            }
            other => {
                let help = match &self.blocks {
                    Some(b) => format!(
                        "a per-lane barrier names the block variable: `barrier({})`; `barrier()` synchronises every block of every rank",
                        self.vars[b.var].name
                    ),
                    None => "a per-lane barrier names the block variable of `blocks blk in 0..C;` (`barrier(blk)`); without `blocks`, write `barrier()`".to_string(),
                };
                self.diags.push(
                    err(
                        "type::expected-blocks",
                        format!("`{}` is not the block variable", a.name),
                        a.span,
                        format!("this is {}", what_is(other)),
                    )
                    .with_help(help),
                );
                Id::new(0)
            }
        }
    }

    fn value_signal_arg(&mut self, a: &ast::Ident) -> SignalId {
        match self.lookup(&a.name) {
            Some(Name::Signal(sg)) if self.signals[sg].kind == SignalKind::Value => sg,
            None => {
                self.unknown(a);
                Id::new(0)
            }
            other => {
                let is = match other {
                    Some(Name::Signal(_)) => "a credit signal".to_string(),
                    _ => what_is(other).to_string(),
                };
                self.diags.push(
                    err(
                        "type::expected-value-signal",
                        format!("`{}` is not a value signal", a.name),
                        a.span,
                        format!("this is {is}"),
                    )
                    .with_help(
                        "receive counts are carried in value cells: `signal NAME[..] as value;`",
                    ),
                );
                Id::new(0)
            }
        }
    }
}

/// The semantics of `kind` from its resolved arguments (as many as [`KINDS`] lists).
fn build(kind: &str, v: &[Value]) -> Semantics {
    match kind {
        "allreduce" => Semantics::Allreduce {
            op: v[0].op(),
            data: v[1].id(),
        },
        "reduce_scatter" => Semantics::ReduceScatter {
            op: v[0].op(),
            data: v[1].id(),
        },
        "broadcast" => Semantics::Broadcast {
            root: v[0].id(),
            data: v[1].id(),
        },
        "reduce" => Semantics::Reduce {
            op: v[0].op(),
            root: v[1].id(),
            data: v[2].id(),
        },
        "allgather" => Semantics::Allgather {
            input: v[0].id(),
            target: v[1].id(),
        },
        "gather" => Semantics::Gather {
            root: v[0].id(),
            input: v[1].id(),
            target: v[2].id(),
        },
        "scatter" => Semantics::Scatter {
            root: v[0].id(),
            input: v[1].id(),
            target: v[2].id(),
        },
        "all_to_all" => Semantics::AllToAll {
            input: v[0].id(),
            target: v[1].id(),
        },
        "all_to_all_v" => Semantics::AllToAllV {
            input: v[0].id(),
            target: v[1].id(),
            send_counts: v[2].id(),
            recv_counts: v[3].id(),
            row: v.get(4).map(|x| x.id()),
        },
        _ => Semantics::Barrier {
            lane: v.first().map(|x| x.id()),
        },
    }
}
