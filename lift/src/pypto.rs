//! pypto's builtin host kernels (`python/pypto/runtime/builtins/collectives/*/templates/
//! kernel.cpp.in`): what the lifter reads beyond collc's own kernel shape. Their buffers are
//! `ChipTensor`s (`T* x = reinterpret_cast<T*>(t->buffer.addr) + t->start_offset`) whose
//! shapes the C++ reads at run time, so the declarations come from outside the code
//! (`// collc: DECL` lines or `collc lift --decls FILE`); they move data through
//! `pto::GlobalTensor` views and `pto::Tile`s, and they call helper functions of their own.
//! This module finds those helpers, `constexpr bool` switches, the type aliases of views and
//! tiles, and which locals are mutated.

use crate::cpp::{field, kids, text, Cpp};
use std::collections::{BTreeMap, BTreeSet};
use tree_sitter::Node;

/// The names the declarations given outside the code declare: host values (`param`,
/// `let`) and host arrays (`array`).
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// `param` and `let` names.
    pub host: BTreeSet<String>,
    /// `array` names.
    pub arrays: BTreeSet<String>,
}

/// What a `using` alias names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alias {
    /// `pto::Shape<...>`: a view's extents (the last one is the length).
    Shape,
    /// `pto::Stride<...>`: a view's strides (contiguous rows only, never read).
    Stride,
    /// `pto::GlobalTensor<...>`: a view of global memory (pointer, shape, stride).
    Global,
    /// `pto::Tile<..., R, C, ...>`: a tile of R * C elements.
    Tile(Option<i64>),
}

/// The file-wide facts the pypto reader needs.
#[derive(Debug, Clone, Default)]
pub struct Px<'t> {
    /// Helper functions by name (everything but the kernel and `CommRemotePtr`).
    pub helpers: BTreeMap<String, Node<'t>>,
    /// Namespace-scope `constexpr bool` switches.
    pub bools: BTreeMap<String, bool>,
    /// Type aliases of views and tiles.
    pub aliases: BTreeMap<String, Alias>,
    /// How often each local name is assigned or incremented after its declaration.
    pub mutated: BTreeMap<String, usize>,
    /// Names declared `param` in the declarations: values the host derives from tensor
    /// shapes (`numel`, `signal_stride`, the block count).
    pub host: BTreeSet<String>,
    /// Buffers declared `array` (host arrays the kernel reads, e.g. send counts).
    pub arrays: BTreeSet<String>,
}

/// A call that sets up the core or its pipes and moves no data a peer sees: vector masks,
/// pipe flags, tile addresses, cache maintenance.
pub fn core_setup(n: Node, src: &str) -> bool {
    let Some(c) = kids(n).first().copied() else {
        return false;
    };
    let Some((f, _)) = crate::cpp::call(c, src) else {
        return false;
    };
    matches!(
        f.as_str(),
        "set_mask_norm" | "set_vector_mask" | "set_flag" | "wait_flag" | "TASSIGN" | "dsb" | "dcci"
    )
}

fn visit<'t>(n: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    f(n);
    for k in kids(n) {
        visit(k, f);
    }
}

/// Whether `cpp` is a pypto builtin kernel (its args block reads `ChipTensor`s).
pub fn is_pypto(cpp: &Cpp) -> bool {
    cpp.text.contains("ChipTensor")
}

/// The facts of `cpp`; `host` are the names the declarations give as `param`.
pub fn scan<'t>(cpp: &'t Cpp, host: BTreeSet<String>, arrays: BTreeSet<String>) -> Px<'t> {
    let src = cpp.text.as_str();
    let mut px = Px {
        host,
        arrays,
        ..Px::default()
    };
    visit(cpp.tree.root_node(), &mut |n| match n.kind() {
        "function_definition" => {
            let name = field(n, "declarator")
                .and_then(|d| field(d, "declarator"))
                .map(|d| text(d, src).to_string())
                .unwrap_or_default();
            if name != "kernel_entry" && name != "CommRemotePtr" && !name.is_empty() {
                px.helpers.insert(name, n);
            }
        }
        "declaration" if text(n, src).contains("constexpr bool") => {
            if let Some(d) = field(n, "declarator") {
                let name = field(d, "declarator").map(|x| text(x, src).to_string());
                let v = field(d, "value").map(|v| text(v, src).trim().to_string());
                if let (Some(name), Some(v)) = (name, v) {
                    if v == "true" || v == "false" {
                        px.bools.insert(name, v == "true");
                    }
                }
            }
        }
        "alias_declaration" => {
            let name = field(n, "name").map(|x| text(x, src).to_string());
            let ty = field(n, "type").map(|x| text(x, src)).unwrap_or("");
            let head = ty.split('<').next().unwrap_or("").trim();
            let head = head.rsplit("::").next().unwrap_or("");
            let a = match head {
                "Shape" => Some(Alias::Shape),
                "Stride" => Some(Alias::Stride),
                "GlobalTensor" => Some(Alias::Global),
                "Tile" => Some(Alias::Tile(tile_cap(ty, cpp))),
                _ => None,
            };
            if let (Some(name), Some(a)) = (name, a) {
                px.aliases.insert(name, a);
            }
        }
        "assignment_expression" => {
            if let Some(l) = field(n, "left").filter(|l| l.kind() == "identifier") {
                *px.mutated.entry(text(l, src).to_string()).or_default() += 1;
            }
        }
        "update_expression" => {
            if let Some(a) = field(n, "argument").filter(|a| a.kind() == "identifier") {
                *px.mutated.entry(text(a, src).to_string()).or_default() += 1;
            }
        }
        _ => {}
    });
    px
}

/// `R * C` of `Tile<kind, T, R, C, ...>` when both are literals or namespace constants.
fn tile_cap(ty: &str, cpp: &Cpp) -> Option<i64> {
    let inner = ty.split_once('<')?.1;
    let args: Vec<&str> = inner.split(',').map(str::trim).collect();
    let val = |t: &str| -> Option<i64> {
        t.parse().ok().or_else(|| {
            let key = format!("constexpr int64_t {t} = ");
            let key2 = format!("constexpr int {t} = ");
            cpp.text.lines().find_map(|l| {
                let l = l.trim();
                let rest = l
                    .split_once(&key)
                    .or_else(|| l.split_once(&key2))
                    .map(|x| x.1)?;
                rest.trim_end_matches(';').trim().parse().ok()
            })
        })
    };
    Some(val(args.get(2)?)? * val(args.get(3)?)?)
}

/// Whether a statement reads a tensor's shape (`t->ndims`, `t->shapes[i]`): the host's
/// values, not the protocol's.
pub fn reads_shape(n: Node, src: &str) -> bool {
    let t = text(n, src).replace(' ', "");
    t.contains("->ndims") || t.contains("->shapes")
}

/// The names a statement declares or assigns.
pub fn written(n: Node, src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    visit(n, &mut |k| match k.kind() {
        "init_declarator" => {
            if let Some(d) = field(k, "declarator") {
                out.insert(text(d, src).to_string());
            }
        }
        "assignment_expression" => {
            if let Some(l) = field(k, "left") {
                out.insert(text(l, src).to_string());
            }
        }
        "update_expression" => {
            if let Some(a) = field(k, "argument") {
                out.insert(text(a, src).to_string());
            }
        }
        "for_statement" => {
            // the loop's own variable is not a value the statement produces
        }
        _ => {}
    });
    out
}

/// A statement that computes host values from tensor shapes: it reads a shape, or declares a
/// host value, and writes nothing but host values (and its own loop variables).
pub fn host_stmt(n: Node, src: &str, host: &BTreeSet<String>) -> Option<BTreeSet<String>> {
    let w = written(n, src);
    let loop_vars: BTreeSet<String> = {
        let mut v = BTreeSet::new();
        visit(n, &mut |k| {
            if k.kind() == "for_statement" {
                if let Some(d) = field(k, "initializer").and_then(|i| field(i, "declarator")) {
                    if let Some(x) = field(d, "declarator") {
                        v.insert(text(x, src).to_string());
                    }
                }
            }
        });
        v
    };
    let vals: BTreeSet<String> = w.difference(&loop_vars).cloned().collect();
    let declares_host = n.kind() == "declaration" && !vals.is_empty() && vals.is_subset(host);
    if (reads_shape(n, src) || declares_host) && !vals.is_empty() {
        Some(vals)
    } else {
        None
    }
}

/// Macros a device build of a kernel defines (`__DAV_VEC__`: the vector core pypto's
/// collectives run on); every other macro reads as undefined (`__CPU_SIM` among them).
const DEFINED: [&str; 2] = ["__DAV_VEC__", "__CCE_AICORE__"];

/// The statements of a list with its `#if defined(M)` / `#ifdef M` / `#ifndef M` blocks
/// replaced by the branch a device build takes ([`DEFINED`]); other directives inside a
/// function are dropped. A condition of another form is an error.
pub fn flatten<'t>(
    items: Vec<Node<'t>>,
    src: &str,
) -> Result<Vec<Node<'t>>, collc_grammar::Diagnostic> {
    let mut out = Vec::new();
    for n in items {
        match n.kind() {
            "preproc_if" | "preproc_ifdef" => {
                let taken = taken_branch(n, src)?;
                out.extend(flatten(taken, src)?);
            }
            k if k.starts_with("preproc_") => {}
            "comment" => {}
            _ => out.push(n),
        }
    }
    Ok(out)
}

fn taken_branch<'t>(n: Node<'t>, src: &str) -> Result<Vec<Node<'t>>, collc_grammar::Diagnostic> {
    let head = text(n, src).lines().next().unwrap_or("").replace(' ', "");
    let defined = |m: &str| DEFINED.contains(&m.trim());
    let call = |p: &str| head.strip_prefix(p).and_then(|m| m.strip_suffix(')'));
    let yes = if let Some(m) = call("#ifdefined(") {
        defined(m)
    } else if let Some(m) = call("#if!defined(") {
        !defined(m)
    } else if let Some(m) = head.strip_prefix("#ifdef") {
        defined(m)
    } else if let Some(m) = head.strip_prefix("#ifndef") {
        !defined(m)
    } else {
        return Err(crate::cpp::unsupported(
            n,
            src,
            "a preprocessor condition other than `defined(M)`, `!defined(M)`, `#ifdef M`, `#ifndef M`",
        ));
    };
    let alt = field(n, "alternative");
    if yes {
        let skip = [field(n, "condition"), field(n, "name"), alt];
        Ok(kids(n)
            .into_iter()
            .filter(|k| !skip.iter().flatten().any(|s| s.id() == k.id()))
            .collect())
    } else {
        match alt {
            None => Ok(Vec::new()),
            Some(a) if a.kind() == "preproc_else" => Ok(kids(a)),
            Some(a) => Ok(vec![a]),
        }
    }
}
