//! Test support shared by the backend's and the CLI's test suites (and usable by anyone
//! running every example): parameter values for an example at a given world size, and the
//! `// expect: CODE` annotations of a fixture.

use collc_spec::eval::bind;
use collc_spec::ir::{BinOp, BufferRef, Expr, Protocol, Region, VarKind};
use collc_spec::visit::{walk_expr, Visit};
use std::collections::BTreeMap;

/// Preferred values of a parameter with domain `lo..=hi`, most interesting first: sizes that
/// are not multiples of the 256-element tiles (so tails are exercised) for wide domains,
/// small counts above 1 for narrow ones.
fn candidates(lo: i64, hi: i64) -> Vec<i64> {
    let mut v = Vec::new();
    let mut push = |x: i64| {
        if (lo..=hi).contains(&x) && !v.contains(&x) {
            v.push(x);
        }
    };
    if hi - lo >= 1000 {
        for x in [1000, 600, 1024, 300, 96, 64] {
            push(x);
        }
    } else if hi - lo >= 3 {
        for x in [3, 2, 4] {
            push(x);
        }
    }
    push(lo);
    push(hi);
    push(lo + 1);
    v
}

/// Parameter values (world size included) for running `p` at world size `world`: the first
/// combination, in order of preference, that binds (domains and `require`s hold). Rank
/// parameters get `world - 1` (a non-zero root), else 0.
pub fn default_params(p: &Protocol, world: i64) -> Option<BTreeMap<String, i64>> {
    let world_name = p.vars[p.world].name.clone();
    let inputs: Vec<_> = p.inputs().into_iter().skip(1).collect();
    let choices: Vec<Vec<i64>> = inputs
        .iter()
        .map(|v| match p.vars[*v].kind {
            VarKind::Param {
                domain: Some((lo, hi)),
            } => candidates(lo, hi),
            _ => {
                let mut c = vec![world - 1];
                if world > 1 {
                    c.push(0);
                }
                c
            }
        })
        .collect();
    let mut idx = vec![0usize; inputs.len()];
    for _ in 0..20_000 {
        let mut m = BTreeMap::new();
        m.insert(world_name.clone(), world);
        for (i, v) in inputs.iter().enumerate() {
            m.insert(p.vars[*v].name.clone(), choices[i][idx[i]]);
        }
        if bind(p, &m).is_ok() {
            return Some(m);
        }
        // Next combination (odometer, last parameter fastest).
        let mut i = inputs.len();
        loop {
            if i == 0 {
                return None;
            }
            i -= 1;
            idx[i] += 1;
            if idx[i] < choices[i].len() {
                break;
            }
            idx[i] = 0;
        }
    }
    None
}

/// Every `// expect: CODE[, CODE]` annotation of a fixture's text.
pub fn expected_codes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(i) = line.find("// expect:") {
            for c in line[i + "// expect:".len()..].split(',') {
                let c = c.trim();
                if !c.is_empty() {
                    out.push(c.to_string());
                }
            }
        }
    }
    out
}

/// The repository root (this crate's parent folder).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| std::path::PathBuf::from(".."), |p| p.to_path_buf())
}

/// The `.coll` files of a directory, sorted (e.g. `examples/`).
pub fn coll_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "coll"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// For test suites that compile C++: points the compile cache at `cache` (once per process)
/// and returns whether a C++ compiler is available; without one it prints a loud SKIP line
/// saying what `what` needs.
pub fn compiler_or_skip(cache: &std::path::Path, what: &str) -> bool {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| crate::host::compile::set_cache_dir(cache));
    match crate::host::compile::find_compiler() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("\n*** SKIP: {e}\n*** {what} need a C++17 compiler (g++)\n");
            false
        }
    }
}

/// Every `examples/*.coll` of the repository, sorted: path, text and the protocol the front
/// end validates with `ranges` (`collc_verifier::Ranges`). Panics (test support) if an
/// example does not validate.
pub fn examples(
    ranges: &dyn collc_spec::RangePass,
) -> Vec<(std::path::PathBuf, String, collc_spec::Validated)> {
    coll_files(&repo_root().join("examples"))
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let p = collc_spec::front(ranges, &text)
                .protocol
                .unwrap_or_else(|| panic!("{} does not check", path.display()));
            (path, text, p)
        })
        .collect()
}

/// The Ascend kernel (`collc emit --target ascend`, no verifier gate) of a `.coll` file,
/// validated with `ranges`. Panics (test support) if it does not validate or emit.
pub fn ascend_kernel(path: &std::path::Path, ranges: &dyn collc_spec::RangePass) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let src = collc_grammar::Source::new(path.display().to_string(), text.clone());
    let p = collc_spec::front(ranges, &text)
        .protocol
        .unwrap_or_else(|| panic!("{} does not check", path.display()));
    let opts = crate::cpp::EmitOptions {
        source: Some(&src),
        warning: Vec::new(),
        world_limit: None,
    };
    crate::cpp::emit(&p, crate::cpp::Target::Ascend, &opts)
        .unwrap_or_else(|d| panic!("{}: {d:?}", path.display()))
}

/// Back-to-back calls a test runs `p` for: 3, or 6 when the protocol carries state from call
/// to call or reuses buffer parts in turn (it reads the call index, has a monotonic signal, or
/// indexes a `reused` window with `% k`: a parity or ring buffer), so that every part is
/// reused at least twice.
pub fn test_calls(p: &Protocol) -> u32 {
    let mut ring = Ring { p, found: false };
    ring.visit_block(&p.body);
    if p.call.is_some() || p.signals.iter().any(|s| s.monotonic) || ring.found {
        6
    } else {
        3
    }
}

/// Finds a region of the body on a `reused` window indexed with `%` (a parity or ring
/// buffer).
struct Ring<'a> {
    p: &'a Protocol,
    found: bool,
}

impl Visit for Ring<'_> {
    fn visit_region(&mut self, r: &Region) {
        let reused = matches!(r.buffer, BufferRef::Window(w) if !self.p.window_per_call(w));
        self.found |= reused && r.index.iter().any(has_rem);
    }
    fn visit_expr(&mut self, _: &Expr) {}
}

/// Whether `e` takes a remainder somewhere.
fn has_rem(e: &Expr) -> bool {
    struct Rem(bool);
    impl Visit for Rem {
        fn visit_expr(&mut self, e: &Expr) {
            self.0 |= matches!(e, Expr::Bin(BinOp::Mod, _, _));
            walk_expr(self, e);
        }
    }
    let mut r = Rem(false);
    r.visit_expr(e);
    r.0
}

/// For tests against the real sources: `PTO_ISA_ROOT` and `SIMPLER_ROOT`
/// ([`crate::pto_sim::Roots::from_env`]) and a compiler that builds pto-isa's CPU headers, or
/// `None` after one line saying that `test` skipped and why.
pub fn real_roots_or_skip(test: &str) -> Option<crate::pto_sim::Roots> {
    let found = crate::pto_sim::Roots::from_env()
        .map_err(|e| e.to_string())
        .and_then(|r| {
            crate::pto_sim::compiler(&r)
                .map(|_| r)
                .map_err(|e| e.to_string())
        });
    match found {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("SKIP {test}: {e}");
            None
        }
    }
}
