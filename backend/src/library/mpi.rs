//! The MPI library's C++: one translation unit per collective (the generated MPI program
//! built without `main()`, its `collc_program` namespace renamed, plus accessors for its
//! `Args`) and the glue `NAME.cpp` (the C API over `collc_mpi::lib::Comm`,
//! `collc_mpi_lib.hpp`).

use super::api::{Coll, Kind};
use super::header::{counts, prototype};
use super::LibTarget;
use crate::cpp::{c_string, int_lit, Writer};
use crate::mpi::program::Names;
use collc_grammar::Diagnostic;
use collc_spec::ir::Id;
use collc_spec::ir::{Decl, VarId, VarKind, WindowId};
use collc_spec::print::cond_to_string;

/// `coll_<i>.cpp`.
pub fn unit(c: &Coll) -> Result<String, Vec<Diagnostic>> {
    let program = crate::mpi::emit(
        c.p(),
        &crate::mpi::EmitOptions {
            source: c.k.source,
            warning: c.k.warning.clone(),
            world_limit: Some(c.k.world_limit),
        },
    )?;
    let i = c.index;
    let ns = format!("collc_program_{i}");
    let names = Names::of(&c.k);
    let mut w = Writer::default();
    w.line(format!(
        "// Library unit {i}: the MPI program of {} without main(), in namespace {ns}, and its accessors.",
        c.p().name
    ));
    w.line("#define COLLC_NO_MAIN");
    w.line(format!("#define collc_program {ns}"));
    let mut s = w.finish();
    s.push_str(&program);
    let mut w = Writer::default();
    w.line("#undef collc_program");
    w.line("");
    w.open(format!(
        "__attribute__((visibility(\"hidden\"))) void* collc_lib_mpi_setup_{i}(collc_mpi::Session* s)"
    ));
    w.line(format!(
        "std::unique_ptr<{ns}::Args> a(new {ns}::Args{{}});"
    ));
    if c.rotation > 1 {
        w.line(format!(
            "s->set_calls({});  // `per call` buffers: {} instances in rotation (verified at that reuse distance)",
            c.rotation, c.rotation
        ));
    }
    w.line(format!("{ns}::setup(*s, *a);"));
    w.line(format!(
        "{ns}::begin_call(*a, 0);  // every window field points at an instance from the start"
    ));
    w.line("return a.release();");
    w.close();
    w.line(format!(
        "__attribute__((visibility(\"hidden\"))) void collc_lib_mpi_kernel_{i}(const collc_mpi::Ctx& c, const void* a) {{ {ns}::kernel(c, *static_cast<const {ns}::Args*>(a)); }}"
    ));
    w.line(format!(
        "__attribute__((visibility(\"hidden\"))) void collc_lib_mpi_free_{i}(void* a) {{ delete static_cast<{ns}::Args*>(a); }}"
    ));
    w.line("// Selects the instances of the `per call` buffers for this collective's call `kc`.");
    w.line(format!(
        "__attribute__((visibility(\"hidden\"))) void collc_lib_mpi_begin_call_{i}(void* a, int64_t kc) {{ {ns}::begin_call(*static_cast<{ns}::Args*>(a), static_cast<int>(kc % {})); }}",
        c.rotation
    ));
    w.line("// This rank's copy of window `w` (WindowId) and its element count.");
    w.open(format!(
        "__attribute__((visibility(\"hidden\"))) void* collc_lib_mpi_window_{i}(const void* a, int w, int64_t* len)"
    ));
    w.line(format!(
        "[[maybe_unused]] const {ns}::Args* x = static_cast<const {ns}::Args*>(a);"
    ));
    w.line("switch (w) {");
    for win in 0..c.p().windows.len() {
        w.line(format!(
            "    case {win}: *len = x->{}; return x->{}->local<void>();",
            names.window_len(Id::new(win)),
            names.window_field(Id::new(win))
        ));
    }
    w.line("    default: break;");
    w.line("}");
    w.line("*len = 0;");
    w.line("return nullptr;");
    w.close();
    if let Some(v) = c.row_param() {
        capacity(c, &ns, &names, &mut w);
        resize(c, &ns, v, &names, &mut w);
    }
    if matches!(c.kind, Kind::AllToAllV { .. }) {
        counts_accessors(c, &ns, &names, &mut w);
    }
    if !c.staged().is_empty() {
        borrow_accessor(c, &ns, &names, &mut w);
    }
    s.push_str(&w.finish());
    Ok(s)
}

/// `collc_lib_mpi_borrow_<i>(args, w)`: this call's instance of staged window `w`
/// (WindowId), whose local copy a call points at the caller's buffer while it reads or writes
/// it in place (`collc_mpi_lib.hpp` ReadInPlace / WriteInPlace).
fn borrow_accessor(c: &Coll, ns: &str, names: &Names, w: &mut Writer) {
    staged_switch(
        c,
        ns,
        "// This call's instance of window `w` (WindowId), for a buffer the call uses in place.",
        &format!("collc_mpi::Window* collc_lib_mpi_borrow_{}", c.index),
        &|win| format!("return x->{};", names.window_field(win)),
        "return nullptr;",
        w,
    );
}

/// A function of a unit's `Args` and a staged window: `{head}(const void* a, int w)`, one
/// `case` per staged window (`case_of`), `fallback` for any other.
fn staged_switch(
    c: &Coll,
    ns: &str,
    doc: &str,
    head: &str,
    case_of: &dyn Fn(WindowId) -> String,
    fallback: &str,
    w: &mut Writer,
) {
    w.line(doc);
    w.open(format!(
        "__attribute__((visibility(\"hidden\"))) {head}(const void* a, int w)"
    ));
    w.line(format!(
        "[[maybe_unused]] const {ns}::Args* x = static_cast<const {ns}::Args*>(a);"
    ));
    w.line("switch (w) {");
    for win in c.staged() {
        w.line(format!("    case {win}: {}", case_of(win)));
    }
    w.line(format!("    default: {fallback}"));
    w.line("}");
    w.close();
}

/// all_to_all_v's counts: the caller's send counts into the host array, the value signal's
/// cells (this call's instance) out to the caller's receive counts.
fn counts_accessors(c: &Coll, ns: &str, names: &Names, w: &mut Writer) {
    let i = c.index;
    w.line("// The caller's counts -> this rank's host array `arr` (ArrayId; int64, rank-local).");
    w.open(format!(
        "__attribute__((visibility(\"hidden\"))) void collc_lib_mpi_counts_in_{i}(const void* a, int arr, const int32_t* src)"
    ));
    w.line(format!(
        "[[maybe_unused]] const {ns}::Args* x = static_cast<const {ns}::Args*>(a);"
    ));
    w.line("switch (arr) {");
    for arr in 0..c.p().arrays.len() {
        w.line(format!(
            "    case {arr}: for (int64_t j = 0; j < x->{}; ++j) x->{}[j] = src[j]; break;",
            names.array_len(Id::new(arr)),
            names.array_field(Id::new(arr))
        ));
    }
    w.line("    default: break;");
    w.line("}");
    w.close();
    w.line("// This rank's cells of value signal `sig` (SignalId; this call's instance) -> the caller's counts.");
    w.open(format!(
        "__attribute__((visibility(\"hidden\"))) void collc_lib_mpi_counts_out_{i}(const void* a, int sig, int32_t* dst)"
    ));
    w.line(format!(
        "[[maybe_unused]] const {ns}::Args* x = static_cast<const {ns}::Args*>(a);"
    ));
    w.line("const int me = collc_mpi::detail::st().me;");
    w.line("switch (sig) {");
    for sig in 0..c.p().signals.len() {
        w.line(format!(
            "    case {sig}: for (int64_t j = 0; j < x->{}; ++j) dst[j] = collc_mpi::read_cell(*x->sigwin, me, x->{} + MPI_Aint(j)); break;",
            names.signal_cells(Id::new(sig)),
            names.signal_field(Id::new(sig))
        ));
    }
    w.line("    default: break;");
    w.line("}");
    w.close();
}

/// `collc_lib_mpi_capacity_<i>(args, w)`: the elements allocated for window `w` (its size
/// at the configured row length, the largest of a call).
fn capacity(c: &Coll, ns: &str, names: &Names, w: &mut Writer) {
    staged_switch(
        c,
        ns,
        "// Elements allocated for window `w` (WindowId): its size at the configured row length.",
        &format!("int64_t collc_lib_mpi_capacity_{}", c.index),
        &|win| {
            format!(
                "return static_cast<int64_t>(x->{}->count);",
                names.window_field(win)
            )
        },
        "return 0;",
        w,
    );
}

/// `collc_lib_mpi_resize_<i>(args, count, err, errlen, apply)`: the protocol's row-length
/// parameter `v` ([`Coll::row_param`]) becomes `count` for the next call (only checked when
/// `apply` is 0), after checking it against its declared domain, every `require` (the
/// rank-uniform values recomputed as `setup()` does) and the allocated size of every staged
/// window at that count; 1 = ok, 0 = the reason in `err` and nothing changed.
fn resize(c: &Coll, ns: &str, v: VarId, names: &Names, w: &mut Writer) {
    let k = &c.k;
    let p = c.p();
    w.line("// The row length of the next call: checked against the domain, every `require` and the windows.");
    w.open(format!(
        "__attribute__((visibility(\"hidden\"))) int collc_lib_mpi_resize_{}(void* a, int64_t count, char* err, size_t errlen, int apply)",
        c.index
    ));
    w.line(format!(
        "using namespace {ns};  // the program's helpers (collc_min, collc_ceil_div, ...)"
    ));
    w.line("Args* x = static_cast<Args*>(a);");
    for d in &p.decls {
        match *d {
            Decl::Var(x) => resize_var(c, x, v, names, w),
            Decl::Require(r) => {
                let r = &p.requires[r];
                let text = format!(
                    "require {}; does not hold for count %lld",
                    cond_to_string(p, &r.cond).replace('%', "%%")
                );
                w.open(format!("if (!({}))", k.cond(&r.cond)));
                w.line(format!(
                    "std::snprintf(err, errlen, {}, static_cast<long long>(count));",
                    c_string(&text)
                ));
                w.line("return 0;");
                w.close();
            }
            _ => {}
        }
    }
    let var = &p.vars[v].name;
    for win in c.staged() {
        let dims: Vec<String> = p.windows[win]
            .dims
            .iter()
            .map(|e| format!("({})", k.expr(e)))
            .collect();
        let field = names.window_field(win);
        w.line(format!(
            "const int64_t collc_len_{win} = {};",
            dims.join(" * ")
        ));
        w.open(format!(
            "if (collc_len_{win} > static_cast<int64_t>(x->{field}->count))"
        ));
        w.line(format!(
            "std::snprintf(err, errlen, \"count %lld needs %lld elements of window `{}`, which holds %lld (sized for the configured `{var}`)\", static_cast<long long>(count), static_cast<long long>(collc_len_{win}), static_cast<long long>(x->{field}->count));",
            p.windows[win].name
        ));
        w.line("return 0;");
        w.close();
    }
    w.line("if (!apply) return 1;  // only checked");
    w.line(format!("x->{} = count;", names.param_field(v)));
    for win in c.staged() {
        w.line(format!("x->{} = collc_len_{win};", names.window_len(win)));
    }
    w.line("return 1;");
    w.close();
}

/// One variable of the resize function: the row length is `count` (checked against its
/// domain), the others as `setup()` computed them.
fn resize_var(c: &Coll, x: VarId, v: VarId, names: &Names, w: &mut Writer) {
    let k = &c.k;
    let var = &c.p().vars[x];
    let cn = k.var(x);
    match &var.kind {
        VarKind::World { .. } => w.line(format!(
            "[[maybe_unused]] const int64_t {cn} = collc_mpi::detail::st().np;"
        )),
        VarKind::Param { domain } if x == v => {
            let (lo, hi) = domain.unwrap_or((1, i64::MAX));
            w.line(format!("[[maybe_unused]] const int64_t {cn} = count;"));
            w.open(format!(
                "if ({cn} < {} || {cn} > {})",
                int_lit(lo),
                int_lit(hi)
            ));
            w.line(format!(
                "std::snprintf(err, errlen, \"count %lld is outside {lo}..={hi} (the verified domain of `{}`)\", static_cast<long long>(count));",
                var.name
            ));
            w.line("return 0;");
            w.close();
        }
        VarKind::Param { .. } => w.line(format!(
            "[[maybe_unused]] const int64_t {cn} = x->{};",
            names.param_field(x)
        )),
        VarKind::Const(n) => w.line(format!(
            "[[maybe_unused]] constexpr int64_t {cn} = {};",
            int_lit(*n)
        )),
        VarKind::Derived(e) => w.line(format!(
            "[[maybe_unused]] const int64_t {cn} = {};",
            k.expr(e)
        )),
        _ => {}
    }
}

/// `NAME.cpp`.
pub fn glue(name: &str, colls: &[Coll], table: &super::table::Table) -> String {
    let mut w = Writer::default();
    w.line(format!(
        "// {name}.cpp: generated by collc. The C API of lib{name}.so over collc_mpi::lib::Comm (collc_mpi_lib.hpp)."
    ));
    w.line("#include \"collc_mpi_lib.hpp\"  // first: it includes mpi.h without the C++ bindings");
    w.line(format!("#include \"{name}.h\""));
    w.line("");
    w.line("#include <new>");
    w.line("");
    declarations(colls, &mut w);
    w.line("");
    w.line("using namespace collc_mpi::lib;");
    w.line("");
    w.line("using collc_lib_window_fn = void* (*)(const void*, int, int64_t*);");
    w.line("// Element count of window `w` of a collective's Args.");
    w.line("[[maybe_unused]] static int64_t collc_lib_mpi_len(collc_lib_window_fn f, const void* a, int w) { int64_t n = 0; f(a, w, &n); return n; }");
    w.line("// Caller's buffer -> this rank's window copy (before the kernel; its first notify publishes it). The staging copies are collc_mpi_lib.hpp's stage_copy: a memcpy, timed with -DCOLLC_MPI_PROFILE.");
    w.line("[[maybe_unused]] static void collc_lib_mpi_copy_in(collc_lib_window_fn f, const void* a, int w, const void* src, size_t esize) { int64_t n = 0; void* dst = f(a, w, &n); stage_copy(true, dst, src, static_cast<size_t>(n) * esize); }");
    w.line("// Row `row` of `rows` equal rows of this rank's window copy -> caller's buffer (after the kernel).");
    w.line("[[maybe_unused]] static void collc_lib_mpi_copy_row_out(collc_lib_window_fn f, const void* a, int w, int row, int rows, void* dst, size_t esize) { int64_t n = 0; const unsigned char* src = static_cast<const unsigned char*>(f(a, w, &n)); const int64_t len = n / rows; stage_copy(false, dst, src + static_cast<size_t>(len * row) * esize, static_cast<size_t>(len) * esize); }");
    w.line("// This rank's window copy -> caller's buffer (after the kernel).");
    w.line("[[maybe_unused]] static void collc_lib_mpi_copy_out(collc_lib_window_fn f, const void* a, int w, void* dst, size_t esize) { int64_t n = 0; const void* src = f(a, w, &n); stage_copy(false, dst, src, static_cast<size_t>(n) * esize); }");
    w.line("");
    comm_struct(name, colls, &mut w);
    create_fn(name, colls, &mut w);
    free_fn(name, colls.len(), &mut w);
    recover_fn(name, colls.len(), &mut w);
    super::choice::prefer_fn(colls, &mut w);
    for (_, members) in super::kinds(colls) {
        for c in &members {
            call(name, c, members.len() > 1, &mut w);
            w.line("");
        }
        match members[..] {
            [c] => count_queries(name, c, &mut w),
            _ => super::choice::dispatch(name, &members, table, LibTarget::Mpi, &mut w),
        }
        w.line("");
    }
    super::header::errors(name, &mut w);
    w.finish()
}

/// The per-collective functions of the translation units the glue calls.
fn declarations(colls: &[Coll], w: &mut Writer) {
    for c in colls {
        let i = c.index;
        w.line(format!(
            "void* collc_lib_mpi_setup_{i}(collc_mpi::Session* s);"
        ));
        w.line(format!(
            "void collc_lib_mpi_kernel_{i}(const collc_mpi::Ctx& c, const void* a);"
        ));
        w.line(format!("void collc_lib_mpi_free_{i}(void* a);"));
        w.line(format!(
            "void collc_lib_mpi_begin_call_{i}(void* a, int64_t kc);"
        ));
        w.line(format!(
            "void* collc_lib_mpi_window_{i}(const void* a, int w, int64_t* len);"
        ));
        if c.row_param().is_some() {
            w.line(format!(
                "int64_t collc_lib_mpi_capacity_{i}(const void* a, int w);"
            ));
            w.line(format!(
                "int collc_lib_mpi_resize_{i}(void* a, int64_t count, char* err, size_t errlen, int apply);"
            ));
        }
        if !c.staged().is_empty() {
            w.line(format!(
                "collc_mpi::Window* collc_lib_mpi_borrow_{i}(const void* a, int w);"
            ));
        }
        if matches!(c.kind, Kind::AllToAllV { .. }) {
            w.line(format!(
                "void collc_lib_mpi_counts_in_{i}(const void* a, int arr, const int32_t* src);"
            ));
            w.line(format!(
                "void collc_lib_mpi_counts_out_{i}(const void* a, int sig, int32_t* dst);"
            ));
        }
    }
}

/// `struct NAME_comm` and its destructor.
fn comm_struct(name: &str, colls: &[Coll], w: &mut Writer) {
    let n = colls.len();
    w.line(format!("struct {name}_comm {{"));
    w.line("    Comm comm;");
    w.line(format!("    {name}_config config;"));
    w.line(format!("    collc_mpi::Params params[{n}];"));
    w.line(format!(
        "    std::unique_ptr<collc_mpi::Session> sessions[{n}];"
    ));
    w.line(format!("    void* args[{n}] = {{}};"));
    w.line(format!(
        "    int64_t calls[{n}] = {{}};  // calls of each collective by this process"
    ));
    w.line(format!(
        "    int64_t counts[{n}] = {{}};  // element count of each collective's previous call (0: none yet, or fixed)"
    ));
    w.line(format!(
        "    bool off[{n}] = {{}};  // a protocol that does not run with this configuration (one of several of its kind)"
    ));
    w.line("    std::string off_why;  // why, for each");
    for (f, ms) in super::kinds(colls) {
        if ms.len() > 1 {
            w.line(format!(
                "    int pin_{f} = -1;  // the {f} protocol {name}_{f}_pin chose (-1: the decision table)"
            ));
        }
    }
    w.line("    bool attached = false;");
    w.line(format!("    ~{name}_comm();"));
    w.line("};");
    w.line("");
    w.open(format!("{name}_comm::~{name}_comm()"));
    w.line("Comm::Use use(comm);");
    for c in colls {
        let i = c.index;
        w.line(format!(
            "if (args[{i}] != nullptr) collc_lib_mpi_free_{i}(args[{i}]);"
        ));
    }
    w.line(format!(
        "for (int i = 0; i < {n}; ++i) sessions[i].reset();"
    ));
    w.line("if (attached) comm.detach();");
    w.close();
    w.line("");
}

/// `NAME_comm_create`.
fn create_fn(name: &str, colls: &[Coll], w: &mut Writer) {
    let n = colls.len();
    w.open(format!(
        "extern \"C\" int {name}_comm_create(MPI_Comm mpi_comm, const {name}_config* config, {name}_comm** out)"
    ));
    w.line(format!(
        "if (out == nullptr || config == nullptr) return fail(kEInval, \"{name}_comm_create: null argument\");"
    ));
    w.line("*out = nullptr;");
    w.line(format!(
        "std::unique_ptr<{name}_comm> c(new (std::nothrow) {name}_comm);"
    ));
    w.line("if (!c) return fail(kESystem, \"out of memory\");");
    w.line("Comm::Use use(c->comm);  // this communicator's runtime state");
    let names: Vec<String> = colls.iter().map(|c| c_string(&c.cfg)).collect();
    w.line(format!(
        "const int s = c->comm.attach(mpi_comm, config->wait_timeout_ms, {{{}}});",
        names.join(", ")
    ));
    w.line("if (s != kOk) return s;");
    w.line("c->attached = true;");
    w.open("try");
    for c in colls {
        let i = c.index;
        let several = colls.iter().filter(|x| x.func == c.func).count() > 1;
        if several {
            w.open("try");
        }
        for (v, cname) in c.params() {
            w.line(format!(
                "c->params[{i}].set({}, std::to_string(config->{}.{cname}));",
                c_string(&c.p().vars[v].name),
                c.cfg
            ));
        }
        w.line(format!(
            "c->sessions[{i}].reset(new collc_mpi::Session(c->params[{i}]));"
        ));
        w.line(format!(
            "c->args[{i}] = collc_lib_mpi_setup_{i}(c->sessions[{i}].get());"
        ));
        let len = |x| format!("collc_lib_mpi_len(collc_lib_mpi_window_{i}, c->args[{i}], {x})");
        super::checks::shape(name, c, w, &len, "c->comm.np()");
        if several {
            super::choice::member_off(c, w);
        }
    }
    super::choice::none_runs(name, colls, LibTarget::Mpi, w);
    w.line(format!(
        "for (int i = 0; i < {n}; ++i) if (c->sessions[i]) c->sessions[i]->allocate();"
    ));
    w.reopen("catch (const collc_mpi::Failure& f)");
    w.line(format!(
        "return fail(f.code == 2 ? kEDomain : kESystem, \"{name}_comm_create: %s\", f.what.c_str());"
    ));
    w.close();
    w.line("c->config = *config;");
    w.line("*out = c.release();");
    w.line("return kOk;");
    w.close();
    w.line("");
}

/// `NAME_comm_free`: the residue check when every rank frees a communicator that did not fail.
fn free_fn(name: &str, n: usize, w: &mut Writer) {
    w.open(format!("extern \"C\" int {name}_comm_free({name}_comm* c)"));
    w.line("if (c == nullptr) return kOk;");
    w.line("long nonzero = 0;");
    w.line("std::vector<std::string> cells;");
    w.line("Comm::Use use(c->comm);");
    w.open("try");
    w.line("// Every epilogue (flushed) has landed; a failed communicator is not checked.");
    w.line("const bool all_in = !c->comm.dead() && c->comm.await_all();");
    w.line("if (all_in && !c->comm.broken() && !c->comm.peer_failed()) {");
    w.line(format!(
        "    for (int i = 0; i < {n}; ++i) if (c->sessions[i]) nonzero += c->sessions[i]->nonzero_cells(&cells);"
    ));
    w.line("}");
    w.reopen("catch (const collc_mpi::Failure&)");
    w.close();
    w.line("delete c;");
    w.line(format!("if (nonzero != 0) return fail(kEResidue, \"{name}_comm_free: %ld credit cell(s) of this rank not back at 0, first %s\", nonzero, cells.empty() ? \"?\" : cells[0].c_str());"));
    w.line("return kOk;");
    w.close();
    w.line("");
}

/// The recovery a call runs after a failure.
fn recover_fn(name: &str, n: usize, w: &mut Writer) {
    w.line("// After a failure: collc_mpi_lib.hpp's collective recovery (windows and tiles zeroed, call");
    w.line("// indices restarted).");
    w.open(format!("static int collc_lib_mpi_recover({name}_comm* c)"));
    w.line("return c->comm.recover([c] {");
    w.line(format!(
        "    for (int i = 0; i < {n}; ++i) if (c->sessions[i]) c->sessions[i]->rezero();"
    ));
    w.line(format!(
        "    for (int i = 0; i < {n}; ++i) c->calls[i] = c->counts[i] = 0;"
    ));
    w.line("});");
    w.close();
    w.line("");
}

/// The call of one collective: `NAME_<func>`, or the member call `collc_lib_call_<i>` the
/// kind's function dispatches to when the library holds several protocols of the kind.
fn call(name: &str, c: &Coll, member: bool, w: &mut Writer) {
    let f = &c.func;
    let i = c.index;
    let proto = prototype(name, LibTarget::Mpi, c);
    w.open(if member {
        format!(
            "static {}",
            proto.replacen(&format!("{name}_{f}("), &format!("collc_lib_call_{i}("), 1)
        )
    } else {
        format!("extern \"C\" {proto}")
    });
    w.line(format!(
        "if (comm == nullptr) return fail(kEInval, \"{name}_{f}: null communicator\");"
    ));
    w.line("Comm::Use use(comm->comm);");
    w.line("if (comm->comm.broken()) { const int rs = collc_lib_mpi_recover(comm); if (rs != kOk) return rs; }");
    w.line(format!("const void* a = comm->args[{i}];"));
    w.line(format!(
        "auto kernel = [a](const collc_mpi::Ctx& ctx) {{ collc_lib_mpi_kernel_{i}(ctx, a); }};"
    ));
    let len = |x| format!("collc_lib_mpi_len(collc_lib_mpi_window_{i}, a, {x})");
    let (me, np) = ("comm->comm.me()", "comm->comm.np()");
    let size = c.row_param();
    super::checks::arguments(name, c, w, me, &len, np, size.is_some());
    let (stage, collect) = staging(c);
    if let Some(b) = &c.p().calls {
        // `calls <= N`: call N + 1 is refused before anything is published (the communicator
        // stays usable); every rank counts the same calls, so every rank refuses it.
        w.line(format!(
            "if (comm->calls[{i}] >= {}) return fail(kEDomain, \"{name}_{}: call %lld refused: past %s, the verified domain\", static_cast<long long>(comm->calls[{i}] + 1), {});",
            b.max,
            c.func,
            c_string(&format!("calls <= {} ({})", b.max, c.k.at(b.span)))
        ));
    }
    w.line(format!("const int64_t kc = comm->calls[{i}]++;"));
    w.line(format!(
        "collc_lib_mpi_begin_call_{i}(comm->args[{i}], kc);"
    ));
    let (count, fresh) = match size {
        Some(v) => {
            row_length(name, c, v, w);
            w.line("char collc_err[256];");
            w.line(format!("if (!collc_lib_mpi_resize_{i}(comm->args[{i}], collc_m, collc_err, sizeof collc_err, 1)) return comm->comm.poison(kEDomain, \"{name}_{f}: rank %d: %s\", comm->comm.me(), collc_err);"));
            super::checks::sizes(name, c, w, me, &len, np);
            w.line(format!("const bool fresh = comm->counts[{i}] != 0 && comm->counts[{i}] != collc_m;  // another count than the previous call"));
            w.line(format!("comm->counts[{i}] = collc_m;"));
            ("collc_m", "fresh")
        }
        None => ("0", "false"),
    };
    in_place(c, w);
    w.line(format!(
        "return comm->comm.call({i}, kc, {count}, {fresh}, [&] {{ {stage} }}, kernel, [&] {{ {collect} }});"
    ));
    w.close();
}

/// `NAME_<func>_<count>(comm)`: the elements each buffer needs (with a per-call count: the
/// window's allocated size, the largest of a call).
fn count_queries(name: &str, c: &Coll, w: &mut Writer) {
    let i = c.index;
    for n in counts(c) {
        w.open(format!(
            "extern \"C\" size_t {name}_{}_{}(const {name}_comm* comm)",
            c.func, n.suffix
        ));
        w.line("if (comm == nullptr) return 0;");
        if c.row_param().is_some() {
            w.line(format!(
                "int64_t len = collc_lib_mpi_capacity_{i}(comm->args[{i}], {});  // the largest of a call",
                n.window
            ));
        } else {
            w.line("int64_t len = 0;");
            w.line(format!(
                "collc_lib_mpi_window_{i}(comm->args[{i}], {}, &len);",
                n.window
            ));
        }
        if n.per_rank {
            w.line("len /= comm->comm.np();");
        }
        w.line("return static_cast<size_t>(len);");
        w.close();
    }
}

/// `collc_m`, the row length of this call, from the count argument that carries it: an
/// allreduce's or broadcast's `count`, reduce_scatter's `recv_count`, or the input's count
/// over the input window's rows (EDOMAIN if it is not a whole number of rows).
fn row_length(name: &str, c: &Coll, v: VarId, w: &mut Writer) {
    let i = c.index;
    let f = &c.func;
    let (arg, input) = match c.kind {
        Kind::Exchange { input, .. } | Kind::Gather { input, .. } => ("input_count", input),
        Kind::Scatter { target, .. } => ("output_count", target),
        Kind::AllToAllV { input, .. } => ("send_count", input),
        Kind::ReduceScatter { .. } => {
            w.line("const int64_t collc_m = static_cast<int64_t>(recv_count);");
            return;
        }
        _ => {
            w.line("const int64_t collc_m = static_cast<int64_t>(count);");
            return;
        }
    };
    w.line(format!(
        "const int64_t collc_rows = collc_lib_mpi_capacity_{i}(a, {input}) / comm->config.{}.{};  // the input window's rows",
        c.cfg,
        c.k.var(v)
    ));
    w.line(format!("if (static_cast<int64_t>({arg}) % collc_rows != 0) return comm->comm.poison(kEDomain, \"{name}_{f}: rank %d: {arg} %zu is not a whole number of rows (%lld rows of `{}` elements)\", comm->comm.me(), {arg}, static_cast<long long>(collc_rows));", c.p().vars[v].name));
    w.line(format!(
        "const int64_t collc_m = static_cast<int64_t>({arg}) / collc_rows;"
    ));
}

/// The guards of a rooted kind's staging (into the window, out of it):
/// [`Coll::staging_guards`].
fn root_guards(c: &Coll) -> (String, String) {
    c.staging_guards("comm->comm.me()", "root")
}

/// The output window a call writes in place, and whether only off the root
/// ([`Coll::write_in_place`], else [`Coll::write_in_place_off_root`]).
fn output_in_place(c: &Coll) -> Option<(WindowId, bool)> {
    match c.write_in_place() {
        Some(out) => Some((out, false)),
        None => c.write_in_place_off_root().map(|out| (out, true)),
    }
}

/// The buffers a call uses in place: `collc_in` (ReadInPlace) for an input only its own rank
/// reads ([`Coll::read_in_place`]), `collc_out` (WriteInPlace) for an output only its own rank
/// reaches ([`Coll::write_in_place`]). The output is not written in place where it overlaps
/// an input read in place (the kernel would overwrite what it still reads).
fn in_place(c: &Coll, w: &mut Writer) {
    let i = c.index;
    let (input_arg, output_arg) = call_args(c.kind);
    let borrow = |win: WindowId| format!("collc_lib_mpi_borrow_{i}(comm->args[{i}], {win})");
    let name = |win: WindowId| c.p().windows[win].name.clone();
    let read = c.read_in_place();
    if let Some(input) = read {
        w.line(format!(
            "// Window `{}` is read in place: the kernel reads the caller's buffer (collc_mpi_lib.hpp ReadInPlace).",
            name(input)
        ));
        w.line(format!(
            "ReadInPlace collc_in({}, {input_arg});",
            borrow(input)
        ));
    }
    let Some((out, off_root)) = output_in_place(c) else {
        return;
    };
    w.line(format!(
        "// Window `{}` is written in place{}: the kernel writes the caller's buffer (collc_mpi_lib.hpp WriteInPlace).",
        name(out),
        if off_root { " on every rank but the root, whose window its peers read" } else { "" }
    ));
    let apart = match read {
        Some(input) => {
            let t = c.elem().cpp();
            let bytes = |win| {
                format!("static_cast<size_t>(collc_lib_mpi_len(collc_lib_mpi_window_{i}, a, {win})) * sizeof({t})")
            };
            format!(
                ", !collc_in.active() || apart({input_arg}, {}, {output_arg}, {})",
                bytes(input),
                bytes(out)
            )
        }
        None if off_root => ", comm->comm.me() != root".to_string(),
        None => String::new(),
    };
    w.line(format!(
        "WriteInPlace collc_out({}, {output_arg}{apart});",
        borrow(out)
    ));
}

/// The arguments a kind's input and output come in: `data` (allreduce, broadcast),
/// `input`/`output` (allgather, all_to_all), `send`/`recv` (reduce_scatter, all_to_all_v).
fn call_args(k: Kind) -> (&'static str, &'static str) {
    match k {
        Kind::Allreduce { .. } | Kind::Broadcast { .. } | Kind::Reduce { .. } | Kind::Barrier => {
            ("data", "data")
        }
        Kind::Exchange { .. } | Kind::Gather { .. } | Kind::Scatter { .. } => ("input", "output"),
        Kind::ReduceScatter { .. } | Kind::AllToAllV { .. } => ("send", "recv"),
    }
}

/// The staging of a call: (caller's buffers -> windows, windows -> caller's buffers). An
/// input read in place ([`Coll::read_in_place`]) is copied in, and an output written in place
/// ([`Coll::write_in_place`]) copied out, only when the runtime does not use that buffer in
/// place after all (`COLLC_MPI_READ_IN_PLACE=0`, `COLLC_MPI_WRITE_IN_PLACE=0`, an overlap).
/// An allreduce's or broadcast's data window written in place is the caller's buffer, which
/// already holds the input: nothing is staged.
fn staging(c: &Coll) -> (String, String) {
    let i = c.index;
    let t = c.elem().cpp();
    let unless_in = if c.read_in_place().is_some() {
        "if (!collc_in.active()) "
    } else {
        ""
    };
    let unless_out = if output_in_place(c).is_some() {
        "if (!collc_out.active()) "
    } else {
        ""
    };
    match c.kind {
        Kind::Barrier => (String::new(), String::new()),
        Kind::Allreduce { data } | Kind::Broadcast { data, .. } | Kind::Reduce { data, .. } => {
            let (root_in, root_out) = root_guards(c);
            (
                format!(
                    "{root_in}{unless_out}collc_lib_mpi_copy_in(collc_lib_mpi_window_{i}, a, {data}, data, sizeof({t}));"
                ),
                format!("{root_out}{unless_out}collc_lib_mpi_copy_out(collc_lib_mpi_window_{i}, a, {data}, data, sizeof({t}));"),
            )
        }
        Kind::Gather { input, target, .. } | Kind::Scatter { input, target, .. } => {
            let (root_in, root_out) = root_guards(c);
            (
                format!("{root_in}collc_lib_mpi_copy_in(collc_lib_mpi_window_{i}, a, {input}, input, sizeof({t}));"),
                format!("{root_out}{unless_out}collc_lib_mpi_copy_out(collc_lib_mpi_window_{i}, a, {target}, output, sizeof({t}));"),
            )
        }
        Kind::Exchange { input, target, .. } => (
            format!("{unless_in}collc_lib_mpi_copy_in(collc_lib_mpi_window_{i}, a, {input}, input, sizeof({t}));"),
            format!("{unless_out}collc_lib_mpi_copy_out(collc_lib_mpi_window_{i}, a, {target}, output, sizeof({t}));"),
        ),
        Kind::ReduceScatter { data } => (
            format!("collc_lib_mpi_copy_in(collc_lib_mpi_window_{i}, a, {data}, send, sizeof({t}));"),
            format!("collc_lib_mpi_copy_row_out(collc_lib_mpi_window_{i}, a, {data}, comm->comm.me(), comm->comm.np(), recv, sizeof({t}));"),
        ),
        Kind::AllToAllV {
            input,
            target,
            send_counts,
            recv_counts,
        } => (
            format!("{unless_in}collc_lib_mpi_copy_in(collc_lib_mpi_window_{i}, a, {input}, send, sizeof({t})); collc_lib_mpi_counts_in_{i}(a, {send_counts}, send_counts);"),
            format!("{unless_out}collc_lib_mpi_copy_out(collc_lib_mpi_window_{i}, a, {target}, recv, sizeof({t})); collc_lib_mpi_counts_out_{i}(a, {recv_counts}, recv_counts);"),
        ),
    }
}
