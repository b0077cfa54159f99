//! Several protocols of one kind in a library (MPI or host), one chosen per call (`super::table`):
//! the C++ of the kind's function (pick a protocol by the call's count and P, then call it),
//! `NAME_<kind>_pin` (run one protocol, as `collc tune` does to time each), `NAME_<kind>_protocol`
//! (which protocol a call at a count runs), the count queries over the kind's protocols,
//! and at creation a protocol that does not run with the configuration (P outside its
//! domain, a `require`) set aside while another of its kind does.

use super::api::{Coll, Kind};
use super::header::{counts, prototype};
use super::table::Table;
use super::LibTarget;
use crate::cpp::{c_string, Writer};

/// The decision-table lookup (`super::table`'s rule), once per library that needs it.
pub fn prefer_fn(colls: &[Coll], w: &mut Writer) {
    if super::kinds(colls).iter().all(|(_, ms)| ms.len() < 2) {
        return;
    }
    w.line("// One rule of a decision table: from `count` elements on, at `p` ranks, protocol `member`.");
    w.line("struct collc_lib_rule { int64_t p, count; int member; };");
    w.line("// The protocol the rules prefer at np ranks and `count` (-1: no rule): among the rules of the");
    w.line(
        "// largest P not above np (else the smallest P), the one of the largest count not above",
    );
    w.line("// `count` (else the smallest count).");
    w.open(
        "static int collc_lib_prefer(const collc_lib_rule* r, int n, int64_t np, int64_t count)",
    );
    w.line("int64_t p = -1, pmin = INT64_MAX;");
    w.line("for (int j = 0; j < n; ++j) { if (r[j].p <= np && r[j].p > p) p = r[j].p; if (r[j].p < pmin) pmin = r[j].p; }");
    w.line("if (p < 0) p = pmin;");
    w.line("int best = -1, low = -1;");
    w.open("for (int j = 0; j < n; ++j)");
    w.line("if (r[j].p != p) continue;");
    w.line("if (r[j].count <= count && (best < 0 || r[j].count > r[best].count)) best = j;");
    w.line("if (low < 0 || r[j].count < r[low].count) low = j;");
    w.close();
    w.line("const int k = best >= 0 ? best : low;");
    w.line("return k >= 0 ? r[k].member : -1;");
    w.close();
    w.line("");
}

/// At creation, inside the member's `try`: a domain failure (P, a parameter, a `require`)
/// sets this protocol aside; the kind's other protocols may still run.
pub fn member_off(c: &Coll, w: &mut Writer) {
    let i = c.index;
    w.reopen("catch (const collc_mpi::Failure& f)");
    w.line("if (f.code != 2) throw;");
    w.line(format!(
        "c->off[{i}] = true;  // {} does not run with this configuration",
        c.cfg
    ));
    w.line(format!("c->sessions[{i}].reset();"));
    w.line(format!(
        "c->off_why += std::string({}) + f.what + \"; \";",
        c_string(&format!("{}: ", c.cfg))
    ));
    w.close();
}

/// At creation: a kind none of whose protocols runs with the configuration fails it.
pub fn none_runs(name: &str, colls: &[Coll], target: LibTarget, w: &mut Writer) {
    for (f, ms) in super::kinds(colls) {
        if ms.len() < 2 {
            continue;
        }
        let all: Vec<String> = ms.iter().map(|c| format!("c->off[{}]", c.index)).collect();
        let why = format!("no {f} protocol of {name} runs with this configuration: ");
        w.line(match target {
            LibTarget::Mpi => format!(
                "if ({}) throw collc_mpi::Failure{{2, \"{why}\" + c->off_why}};",
                all.join(" && ")
            ),
            LibTarget::Host => format!(
                "if ({}) return fail(kEDomain, \"{name}_comm_create: {why}%s\", c->off_why.c_str());",
                all.join(" && ")
            ),
        });
    }
}

/// The argument that carries a call's count (the key of the decision table) and the
/// arguments forwarded to a protocol's call.
fn key_and_args(c: &Coll) -> (&'static str, &'static str) {
    match c.kind {
        Kind::Barrier => ("0", ""),
        Kind::Allreduce { .. } => ("count", ", data, count"),
        Kind::Broadcast { .. } | Kind::Reduce { .. } => ("count", ", data, count, root"),
        Kind::Exchange { .. } => ("input_count", ", input, input_count, output, output_count"),
        Kind::Gather { .. } => (
            "input_count",
            ", input, input_count, output, output_count, root",
        ),
        Kind::Scatter { .. } => (
            "output_count",
            ", input, input_count, output, output_count, root",
        ),
        Kind::ReduceScatter { .. } => ("recv_count", ", send, send_count, recv, recv_count"),
        Kind::AllToAllV { .. } => (
            "send_count",
            ", send, send_count, send_counts, recv, recv_count, recv_counts",
        ),
    }
}

/// `collc_lib_fits_<i>(comm, key)`: whether protocol `c` can serve a call whose count
/// argument is `key` (it runs here, and its row length at that count passes its domain,
/// its `require`s and its windows: the resize function, checking only). Host: the count is
/// at most the configured one and the configure function accepts it.
fn fits_fn(name: &str, c: &Coll, target: LibTarget, w: &mut Writer) {
    if target == LibTarget::Host {
        return super::host::fits_fn(name, c, w);
    }
    let i = c.index;
    w.open(format!(
        "static bool collc_lib_fits_{i}({name}_comm* comm, int64_t key)"
    ));
    w.line(format!("if (comm->off[{i}]) return false;"));
    let v = c.row_param().map(|v| c.k.var(v).to_string());
    match (c.kind, v) {
        (Kind::Exchange { input, .. } | Kind::AllToAllV { input, .. }, Some(v)) => {
            w.line(format!(
                "const int64_t rows = collc_lib_mpi_capacity_{i}(comm->args[{i}], {input}) / comm->config.{}.{v};",
                c.cfg
            ));
            w.line("if (rows <= 0 || key % rows != 0) return false;");
            w.line("const int64_t m = key / rows;");
        }
        (Kind::Barrier, _) | (_, None) => {
            w.line("(void)key;  // a barrier has no count");
            w.line("return true;");
            w.close();
            return;
        }
        _ => w.line("const int64_t m = key;"),
    }
    w.line("char err[256];");
    w.line(format!(
        "return collc_lib_mpi_resize_{i}(comm->args[{i}], m, err, sizeof err, 0) != 0;"
    ));
    w.close();
}

/// The kind's function and its companions, for the protocols `ms` of one kind.
pub fn dispatch(name: &str, ms: &[&Coll], table: &Table, target: LibTarget, w: &mut Writer) {
    let f = &ms[0].func;
    for c in ms {
        fits_fn(name, c, target, w);
    }
    pick_fn(name, ms, table, target, w);
    let (key, args) = key_and_args(ms[0]);
    let args = match target {
        LibTarget::Host => format!(", rank{args}"),
        LibTarget::Mpi => args.to_string(),
    };
    w.open(format!("extern \"C\" {}", prototype(name, target, ms[0])));
    w.line(format!(
        "if (comm == nullptr) return fail(kEInval, \"{name}_{f}: null communicator\");"
    ));
    use_comm(target, w);
    w.line("bool ok = false;");
    w.line(format!(
        "switch (collc_lib_pick_{f}(comm, static_cast<int64_t>({key}), &ok)) {{"
    ));
    for c in ms {
        w.line(format!(
            "    case {}: return collc_lib_call_{}(comm{args});",
            c.index, c.index
        ));
    }
    w.line("    default: break;");
    w.line("}");
    w.line(format!(
        "return fail(kEDomain, \"{name}_{f}: no protocol runs with this configuration\");"
    ));
    w.close();
    pin_fn(name, ms, w);
    protocol_fn(name, ms, target, w);
    count_queries(name, ms, target, w);
}

/// MPI: the communicator's runtime state for the call (`Comm::Use`); host: nothing.
fn use_comm(target: LibTarget, w: &mut Writer) {
    if target == LibTarget::Mpi {
        w.line("Comm::Use use(comm->comm);");
    }
}

/// `collc_lib_pick_<kind>(comm, key, ok)`: the pinned protocol, else the one the decision
/// table prefers, else the first (file order) that can serve the call; `*ok` whether it
/// can (when none can: the preferred or first protocol that runs here, whose call says why).
fn pick_fn(name: &str, ms: &[&Coll], table: &Table, target: LibTarget, w: &mut Writer) {
    let f = &ms[0].func;
    let index = |p: &str| ms.iter().find(|c| c.p().name == p).map_or(0, |c| c.index);
    let rules: Vec<String> = table
        .of(f)
        .map(|r| format!("{{{}, {}, {}}}", r.p, r.count, index(&r.protocol)))
        .collect();
    let n = rules.len();
    let np = match target {
        LibTarget::Host => "comm->comm.nranks()",
        LibTarget::Mpi => "comm->comm.np()",
    };
    w.open(format!(
        "static int collc_lib_pick_{f}({name}_comm* comm, int64_t key, bool* ok)"
    ));
    w.line(format!(
        "// The decision table (`collc tune`; NAME.tune, README): P, count from, protocol. {n} rule(s)."
    ));
    let rows = if rules.is_empty() {
        "{0, 0, -1}".to_string()
    } else {
        rules.join(", ")
    };
    w.line(format!("static const collc_lib_rule rules[] = {{{rows}}};"));
    w.line(format!(
        "int pref = comm->pin_{f} >= 0 ? comm->pin_{f} : collc_lib_prefer(rules, {n}, {np}, key);"
    ));
    w.line("switch (pref) {");
    for c in ms {
        let i = c.index;
        w.line(format!(
            "    case {i}: if (collc_lib_fits_{i}(comm, key)) {{ *ok = true; return {i}; }} break;"
        ));
    }
    w.line("    default: break;");
    w.line("}");
    w.line(format!("if (comm->pin_{f} >= 0) return pref;"));
    for c in ms {
        let i = c.index;
        w.line(format!(
            "if (collc_lib_fits_{i}(comm, key)) {{ *ok = true; return {i}; }}"
        ));
    }
    w.line("if (pref >= 0 && !comm->off[pref]) return pref;");
    for c in ms {
        w.line(format!("if (!comm->off[{0}]) return {0};", c.index));
    }
    w.line("return -1;");
    w.close();
}

/// `NAME_<kind>_pin(comm, protocol)`: every later call runs that protocol (NULL: the table).
fn pin_fn(name: &str, ms: &[&Coll], w: &mut Writer) {
    let f = &ms[0].func;
    w.open(format!(
        "extern \"C\" int {name}_{f}_pin({name}_comm* comm, const char* protocol)"
    ));
    w.line(format!(
        "if (comm == nullptr) return fail(kEInval, \"{name}_{f}_pin: null communicator\");"
    ));
    w.line(format!(
        "if (protocol == nullptr) {{ comm->pin_{f} = -1; return kOk; }}"
    ));
    for c in ms {
        w.line(format!(
            "if (std::strcmp(protocol, {}) == 0) {{ if (comm->off[{i}]) return fail(kEDomain, \"{name}_{f}_pin: %s does not run with this configuration\", protocol); comm->pin_{f} = {i}; return kOk; }}",
            c_string(&c.cfg),
            i = c.index
        ));
    }
    let all: Vec<&str> = ms.iter().map(|c| c.cfg.as_str()).collect();
    w.line(format!(
        "return fail(kEInval, \"{name}_{f}_pin: `%s` is not one of {}\", protocol);",
        all.join(", ")
    ));
    w.close();
}

/// `NAME_<kind>_protocol(comm, count)`: the protocol a call with that count argument runs
/// (NULL: none can serve it).
fn protocol_fn(name: &str, ms: &[&Coll], target: LibTarget, w: &mut Writer) {
    let f = &ms[0].func;
    w.open(format!(
        "extern \"C\" const char* {name}_{f}_protocol({name}_comm* comm, size_t count)"
    ));
    w.line("if (comm == nullptr) return nullptr;");
    use_comm(target, w);
    w.line("bool ok = false;");
    w.line(format!(
        "const int i = collc_lib_pick_{f}(comm, static_cast<int64_t>(count), &ok);"
    ));
    w.line("if (!ok) return nullptr;");
    w.line("switch (i) {");
    for c in ms {
        w.line(format!(
            "    case {}: return {};",
            c.index,
            c_string(&c.cfg)
        ));
    }
    w.line("    default: return nullptr;");
    w.line("}");
    w.close();
}

/// `NAME_<kind>_<count>(comm)`: the largest over the protocols that run here.
fn count_queries(name: &str, ms: &[&Coll], target: LibTarget, w: &mut Writer) {
    let f = &ms[0].func;
    for n in counts(ms[0]) {
        w.open(format!(
            "extern \"C\" size_t {name}_{f}_{}(const {name}_comm* comm)",
            n.suffix
        ));
        w.line("if (comm == nullptr) return 0;");
        w.line("int64_t len = 0;");
        for c in ms {
            let window = counts(c)
                .iter()
                .find(|x| x.suffix == n.suffix)
                .map_or(n.window, |x| x.window);
            w.line(match target {
                LibTarget::Mpi => format!(
                    "if (!comm->off[{i}]) len = std::max(len, collc_lib_mpi_capacity_{i}(comm->args[{i}], {window}));",
                    i = c.index
                ),
                LibTarget::Host => format!(
                    "if (!comm->off[{i}]) len = std::max(len, static_cast<int64_t>(comm->elems[{i}][{}]));",
                    c.slot(window),
                    i = c.index
                ),
            });
        }
        if n.per_rank {
            w.line(match target {
                LibTarget::Mpi => "len /= comm->comm.np();",
                LibTarget::Host => "len /= comm->comm.nranks();",
            });
        }
        w.line("return static_cast<size_t>(len);");
        w.close();
    }
}
