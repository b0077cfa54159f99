// collc CPU host launcher: see collc/host_launch.hpp for the contract (window layout, args
// block, execution model, failure reporting). Compile this file into the same shared library
// as one generated kernel.

#include "collc/host_launch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "collc/pto_comm_cpu.hpp"

// The generated kernel of this library. Weak, so that a library without a kernel (benches,
// tests passing CollcRunConfig::kernel) still links; collc_host_run then requires cfg->kernel.
extern "C" __attribute__((weak)) void kernel_entry(int64_t* args);

namespace {

using collc::rt::Backoff;
using collc::rt::BufferInfo;
using collc::rt::FailKind;
using collc::rt::RunState;
using collc::rt::ThreadState;

constexpr uint64_t kWindowAllocAlign = 4096;

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

// Instances of a buffer in the window: one per call for a per-call buffer (at least one).
uint64_t instances(const CollcRunConfig* cfg, const CollcBufferDesc& d) {
    return d.lifetime == COLLC_LIFETIME_PER_CALL && cfg->ncalls > 1 ? static_cast<uint64_t>(cfg->ncalls) : 1;
}

// Validates cfg and computes the window layout (offset of every buffer's instance 0). Returns
// an empty string on success.
std::string layout(const CollcRunConfig* cfg, std::vector<uint64_t>* offsets, uint64_t* window_bytes) {
    if (cfg == nullptr) return "cfg is NULL";
    if (cfg->abi_version != COLLC_ABI_VERSION) {
        return format("abi_version %u, this library implements %u", cfg->abi_version, COLLC_ABI_VERSION);
    }
    if (cfg->nranks < 1 || cfg->nranks > COLLC_MAX_RANKS) {
        return format("nranks %d outside [1, %d]", cfg->nranks, COLLC_MAX_RANKS);
    }
    if (cfg->nblocks < 1 || cfg->nblocks > COLLC_MAX_BLOCKS) {
        return format("nblocks %d outside [1, %d]", cfg->nblocks, COLLC_MAX_BLOCKS);
    }
    if (cfg->ncalls < 0) return format("ncalls %d is negative", cfg->ncalls);
    if (cfg->nbuffers < 0 || cfg->nbuffers > COLLC_MAX_BUFFERS) {
        return format("nbuffers %d outside [0, %d]", cfg->nbuffers, COLLC_MAX_BUFFERS);
    }
    if (cfg->nbuffers > 0 && cfg->buffers == nullptr) return "buffers is NULL";
    if (cfg->nscalars < 0 || cfg->nscalars > COLLC_MAX_SCALARS) {
        return format("nscalars %d outside [0, %d]", cfg->nscalars, COLLC_MAX_SCALARS);
    }
    if (cfg->nscalars > 0 && cfg->scalars == nullptr) return "scalars is NULL";
    if ((cfg->flags & ~(COLLC_RUN_HOST_BARRIER | COLLC_RUN_QUIET | COLLC_RUN_CHAOS)) != 0) {
        return format("unknown flags 0x%x", cfg->flags);
    }

    uint64_t off = 0;
    if (offsets != nullptr) offsets->clear();
    for (int32_t i = 0; i < cfg->nbuffers; ++i) {
        const CollcBufferDesc& d = cfg->buffers[i];
        if (d.bytes == 0) return format("buffer %d has 0 bytes", i);
        if (d.bytes > (uint64_t(1) << 40)) return format("buffer %d is too large (%llu bytes)", i,
                                                         static_cast<unsigned long long>(d.bytes));
        if (d.kind != COLLC_BUFFER_DATA && d.kind != COLLC_BUFFER_SIGNAL) {
            return format("buffer %d has unknown kind %u", i, d.kind);
        }
        if (d.lifetime != COLLC_LIFETIME_REUSED && d.lifetime != COLLC_LIFETIME_PER_CALL) {
            return format("buffer %d has unknown lifetime %u", i, d.lifetime);
        }
        if (d.kind == COLLC_BUFFER_SIGNAL && d.bytes % sizeof(int32_t) != 0) {
            return format("signal buffer %d: %llu bytes is not a whole number of int32 cells", i,
                          static_cast<unsigned long long>(d.bytes));
        }
        off = round_up(off, COLLC_WINDOW_ALIGN);
        if (offsets != nullptr) offsets->push_back(off);
        off += round_up(d.bytes, COLLC_WINDOW_ALIGN) * (instances(cfg, d) - 1) + d.bytes;
        if (off > (uint64_t(1) << 44)) return "the window is too large";
    }
    *window_bytes = round_up(off, COLLC_WINDOW_ALIGN) + COLLC_WINDOW_ALIGN;
    return std::string();
}

// Sense-counting spin barrier that gives up when the run is aborted.
class SpinBarrier {
public:
    explicit SpinBarrier(uint32_t parties) : parties_(parties) {}

    // True when all parties arrived; false if the run was aborted while waiting.
    bool wait(const RunState& run) {
        const uint32_t gen = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
            arrived_.store(0, std::memory_order_relaxed);
            generation_.fetch_add(1, std::memory_order_release);
            return true;
        }
        Backoff backoff;
        while (generation_.load(std::memory_order_acquire) == gen) {
            if (run.aborted.load(std::memory_order_acquire) != 0) return false;
            backoff.pause();
        }
        return true;
    }

private:
    const uint32_t parties_;
    std::atomic<uint32_t> arrived_{0};
    std::atomic<uint32_t> generation_{0};
};

struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
};

// Per-thread results, written by that thread only and read after join.
struct ThreadSlot {
    int32_t completed = 0;
    bool started = false;
    int64_t t_start_ns = 0;
    int64_t t_end_ns = 0;
};

struct Shared {
    const CollcRunConfig* cfg = nullptr;
    CollcKernelFn kernel = nullptr;
    RunState run;
    std::unique_ptr<SpinBarrier> start;                      // all P*C threads, once
    std::unique_ptr<SpinBarrier> all;                        // all P*C threads, per call (flag)
    std::vector<std::unique_ptr<SpinBarrier>> rank_barrier;  // C blocks of one rank
    std::vector<std::vector<int64_t>> args;                  // per (rank, call): r * K + k
    std::vector<std::vector<uint8_t*>> buffer_ptrs;          // per (rank, call): r * K + k
    std::vector<CommContext> ctx;                            // per rank
    std::vector<ThreadSlot> slots;                           // per (rank, block)
    std::vector<collc::rt::TraceBuf> traces;                 // per (rank, block), when traced
};

// Tracing (`collc run --trace`): on when collc_host_trace() named a file, or else when env
// COLLC_TRACE_FILE does; COLLC_TRACE_CAPACITY (or the call's argument) bounds the events per
// thread (default 65536).
std::mutex g_trace_mu;
std::string g_trace_path;
uint64_t g_trace_capacity = 0;

bool trace_config(std::string* path, uint64_t* capacity) {
    {
        std::lock_guard<std::mutex> g(g_trace_mu);
        *path = g_trace_path;
        *capacity = g_trace_capacity;
    }
    if (path->empty()) {
        const char* e = std::getenv("COLLC_TRACE_FILE");
        if (e != nullptr) *path = e;
    }
    if (*capacity == 0) {
        const char* c = std::getenv("COLLC_TRACE_CAPACITY");
        const long long v = c != nullptr ? std::strtoll(c, nullptr, 10) : 0;
        *capacity = v > 0 ? static_cast<uint64_t>(v) : 65536;
    }
    return !path->empty();
}

// One line per thread, then one line per event (see collc_backend::trace::parse).
bool write_trace(const std::string& path, const std::vector<collc::rt::TraceBuf>& bufs, int32_t P, int32_t C,
                 int32_t K) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return false;
    std::fprintf(f, "collc-trace 1 host P=%d C=%d K=%d\n", P, C, K);
    for (int32_t r = 0; r < P; ++r) {
        for (int32_t b = 0; b < C; ++b) {
            const collc::rt::TraceBuf& tb = bufs[static_cast<size_t>(r * C + b)];
            std::fprintf(f, "thread %d %d %llu %llu\n", r, b, static_cast<unsigned long long>(tb.n),
                         static_cast<unsigned long long>(tb.dropped));
            for (uint64_t i = 0; i < tb.n; ++i) {
                const collc::rt::TraceEvent& e = tb.ev[i];
                std::fprintf(f, "%u %d %d %d %lld %lld %lld %u %d %d %llu\n", e.kind, e.call, e.owner, e.buffer,
                             static_cast<long long>(e.instance), static_cast<long long>(e.index),
                             static_cast<long long>(e.len), e.op, e.value, e.observed,
                             static_cast<unsigned long long>(e.seq));
            }
        }
    }
    const bool ok = std::fflush(f) == 0;
    return std::fclose(f) == 0 && ok;
}

// Record an error that is not a TWAIT timeout (an exception escaping a kernel or hook).
void record_error(Shared* sh, const ThreadState& ts, const std::string& what) {
    {
        std::lock_guard<std::mutex> lock(sh->run.mu);
        std::string text = collc::rt::who(&ts) + ": " + what;
        if (sh->run.fail_kind == FailKind::None) {
            sh->run.fail_kind = FailKind::KernelError;
            sh->run.fail_text = text;
        } else {
            sh->run.notes += "also failed: " + text + "\n";
        }
    }
    sh->run.aborted.store(1, std::memory_order_release);
}

// Block entry under COLLC_RUN_CHAOS: a block may start its call after its rank's other blocks
// (the blocks of a task are scheduled independently). Sleep (1 in 4) or yield (1 in 4), drawn
// from the seed, rank, block and call alone, so the TNOTIFY/TWAIT chaos sequence is unchanged.
void entry_chaos(const CollcRunConfig* cfg, int32_t rank, int32_t block, int32_t call) {
    if ((cfg->flags & COLLC_RUN_CHAOS) == 0) return;
    const int64_t where = (static_cast<int64_t>(call) * COLLC_MAX_RANKS + rank) * COLLC_MAX_BLOCKS + block + 1;
    collc::rt::chaos_act(collc::rt::chaos_mix(cfg->chaos_seed, static_cast<uint64_t>(where)),
                         cfg->chaos_max_us != 0 ? cfg->chaos_max_us : 200);
}

void rank_thread(Shared* sh, int32_t rank, int32_t block) {
    const CollcRunConfig* cfg = sh->cfg;
    const int32_t nblocks = cfg->nblocks;
    ThreadSlot& slot = sh->slots[static_cast<size_t>(rank * nblocks + block)];
    ThreadState ts;
    ts.run = &sh->run;
    ts.rank = rank;
    ts.block = block;
    ts.nblocks = nblocks;
    ts.call = 0;
    if (!sh->traces.empty()) ts.trace = &sh->traces[static_cast<size_t>(rank * nblocks + block)];
    if ((cfg->flags & COLLC_RUN_CHAOS) != 0) {
        // Distinct, reproducible, never-zero xorshift state per (rank, block).
        uint64_t x = cfg->chaos_seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank * nblocks + block + 1));
        ts.chaos_state = x != 0 ? x : 0x2545F4914F6CDD1Dull;
        ts.chaos_max_us = cfg->chaos_max_us != 0 ? cfg->chaos_max_us : 200;
    }
    collc::rt::tl_thread = &ts;

    uint8_t* window = sh->run.windows[rank];
    SpinBarrier& rank_barrier = *sh->rank_barrier[static_cast<size_t>(rank)];

    try {
        if (sh->start->wait(sh->run)) {
            slot.started = true;
            slot.t_start_ns = now_ns();
            for (int32_t k = 0; k < cfg->ncalls; ++k) {
                if (sh->run.aborted.load(std::memory_order_acquire) != 0) break;
                ts.call = k;
                if ((cfg->flags & COLLC_RUN_HOST_BARRIER) != 0 && k > 0 && !sh->all->wait(sh->run)) break;
                // Call k's args: its instance of every per-call buffer.
                const size_t rk = static_cast<size_t>(rank) * static_cast<size_t>(cfg->ncalls) + static_cast<size_t>(k);
                uint8_t* const* bufs = sh->buffer_ptrs[rk].data();
                int64_t* args = sh->args[rk].data();
                // Stage call k's inputs from this rank's own thread (no cross-rank ordering).
                if (block == 0 && cfg->prepare != nullptr) cfg->prepare(cfg->user, rank, k, window, bufs);
                // Task start: all blocks of the rank begin call k together.
                if (nblocks > 1 && !rank_barrier.wait(sh->run)) break;
                entry_chaos(cfg, rank, block, k);
                if (cfg->enter != nullptr) cfg->enter(cfg->user, rank, block, k);
                sh->kernel(args);
                if (cfg->leave != nullptr) cfg->leave(cfg->user, rank, block, k);
                // Task end: all blocks of the rank finished call k.
                if (nblocks > 1 && !rank_barrier.wait(sh->run)) break;
                if (block == 0 && cfg->collect != nullptr) cfg->collect(cfg->user, rank, k, window, bufs);
                slot.completed = k + 1;
            }
        }
    } catch (const collc::rt::RunAborted&) {
        // The run was aborted (by this thread or another); the reason is already recorded.
    } catch (const std::exception& e) {
        record_error(sh, ts, std::string("uncaught exception: ") + e.what());
    } catch (...) {
        record_error(sh, ts, "uncaught non-standard exception");
    }
    slot.t_end_ns = now_ns();
    collc::rt::tl_thread = nullptr;
}

void copy_message(CollcRunReport* report, const std::string& msg) {
    std::snprintf(report->message, sizeof report->message, "%s", msg.c_str());
}

void reset_report(CollcRunReport* report) {
    std::memset(report, 0, sizeof *report);
    report->fail_rank = -1;
    report->fail_block = -1;
    report->fail_call = -1;
    report->fail_window_rank = -1;
    report->fail_buffer = -1;
    report->fail_cell_index = -1;
    report->fail_cmp = -1;
    report->first_nonzero_rank = -1;
    report->first_nonzero_buffer = -1;
    report->first_nonzero_index = -1;
}

}  // namespace

extern "C" uint32_t collc_host_abi_version(void) { return COLLC_ABI_VERSION; }

extern "C" int32_t collc_host_current(int32_t* rank, int32_t* block, int32_t* nblocks, int32_t* nranks,
                                      uint8_t* const** windows) {
    const ThreadState* t = collc::rt::tl_thread;
    if (t == nullptr || t->run == nullptr) return -1;
    *rank = t->rank;
    *block = t->block;
    *nblocks = t->nblocks;
    *nranks = t->run->nranks;
    *windows = t->run->windows;
    return 0;
}

extern "C" void collc_host_trace(const char* path, uint64_t capacity) {
    std::lock_guard<std::mutex> g(g_trace_mu);
    g_trace_path = path != nullptr ? path : "";
    g_trace_capacity = capacity;
}

extern "C" int32_t collc_host_window_layout(const CollcRunConfig* cfg, uint64_t* offsets, uint64_t* window_bytes) {
    std::vector<uint64_t> offs;
    uint64_t bytes = 0;
    if (!layout(cfg, &offs, &bytes).empty()) return COLLC_ERR_CONFIG;
    if (offsets != nullptr) std::copy(offs.begin(), offs.end(), offsets);
    if (window_bytes != nullptr) *window_bytes = bytes;
    return COLLC_OK;
}

extern "C" int32_t collc_host_run(const CollcRunConfig* cfg, CollcRunReport* report) {
    if (report == nullptr) return COLLC_ERR_CONFIG;
    reset_report(report);

    // ---- validate and lay out ------------------------------------------------------------
    std::vector<uint64_t> offsets;
    uint64_t window_bytes = 0;
    std::string err = layout(cfg, &offsets, &window_bytes);
    CollcKernelFn kernel = nullptr;
    if (err.empty()) {
        kernel = cfg->kernel != nullptr ? cfg->kernel : kernel_entry;
        if (kernel == nullptr) err = "no kernel: cfg->kernel is NULL and this library has no kernel_entry";
    }
    if (!err.empty()) {
        report->status = COLLC_ERR_CONFIG;
        copy_message(report, "collc: invalid run config: " + err);
        if (cfg == nullptr || (cfg->flags & COLLC_RUN_QUIET) == 0) std::fprintf(stderr, "%s\n", report->message);
        return report->status;
    }

    const int32_t P = cfg->nranks;
    const int32_t C = cfg->nblocks;
    const int32_t B = cfg->nbuffers;
    const int32_t S = cfg->nscalars;

    Shared sh;
    sh.cfg = cfg;
    sh.kernel = kernel;

    // ---- windows ---------------------------------------------------------------------------
    std::vector<std::unique_ptr<uint8_t, FreeDeleter>> windows;
    const uint64_t alloc_bytes = round_up(window_bytes, kWindowAllocAlign);
    for (int32_t r = 0; r < P; ++r) {
        uint8_t* w = static_cast<uint8_t*>(std::aligned_alloc(kWindowAllocAlign, alloc_bytes));
        if (w == nullptr) {
            report->status = COLLC_ERR_SYSTEM;
            copy_message(report, format("collc: cannot allocate a %llu-byte window for rank %d",
                                        static_cast<unsigned long long>(alloc_bytes), r));
            if ((cfg->flags & COLLC_RUN_QUIET) == 0) std::fprintf(stderr, "%s\n", report->message);
            return report->status;
        }
        std::memset(w, 0, alloc_bytes);
        windows.emplace_back(w);
    }

    std::vector<std::string> names(static_cast<size_t>(B));
    std::vector<BufferInfo> infos(static_cast<size_t>(B));
    for (int32_t i = 0; i < B; ++i) {
        const CollcBufferDesc& d = cfg->buffers[i];
        names[static_cast<size_t>(i)] = d.name != nullptr ? d.name : format("buf%d", i);
        infos[static_cast<size_t>(i)] = BufferInfo{names[static_cast<size_t>(i)].c_str(),
                                                   offsets[static_cast<size_t>(i)], d.bytes, d.kind,
                                                   round_up(d.bytes, COLLC_WINDOW_ALIGN), instances(cfg, d)};
    }

    RunState& run = sh.run;
    run.nranks = P;
    run.nblocks = C;
    for (int32_t r = 0; r < P; ++r) run.windows[r] = windows[static_cast<size_t>(r)].get();
    run.window_bytes = window_bytes;
    run.buffers = infos.data();
    run.nbuffers = B;
    run.twait_timeout_ms = cfg->twait_timeout_ms > 0 ? static_cast<int64_t>(cfg->twait_timeout_ms)
                                                     : collc::rt::env_twait_timeout_ms();

    // ---- contexts and args blocks ---------------------------------------------------------
    // One args block per (rank, call): a per-call buffer's address is call k's instance.
    const int32_t K = cfg->ncalls > 0 ? cfg->ncalls : 1;
    sh.ctx.resize(static_cast<size_t>(P));
    sh.args.resize(static_cast<size_t>(P) * static_cast<size_t>(K));
    sh.buffer_ptrs.resize(static_cast<size_t>(P) * static_cast<size_t>(K));
    for (int32_t r = 0; r < P; ++r) {
        CommContext& c = sh.ctx[static_cast<size_t>(r)];
        std::memset(&c, 0, sizeof c);
        c.rankId = r;
        c.rankSize = P;
        for (int32_t pe = 0; pe < P; ++pe) c.windowsIn[pe] = reinterpret_cast<uint64_t>(run.windows[pe]);

        for (int32_t k = 0; k < K; ++k) {
            const size_t rk = static_cast<size_t>(r) * static_cast<size_t>(K) + static_cast<size_t>(k);
            std::vector<uint8_t*>& bp = sh.buffer_ptrs[rk];
            std::vector<int64_t>& a = sh.args[rk];
            a.reserve(static_cast<size_t>(B + S + 1));
            for (int32_t i = 0; i < B; ++i) {
                const BufferInfo& bi = infos[static_cast<size_t>(i)];
                const uint64_t inst = bi.instances > 1 ? static_cast<uint64_t>(k) : 0;
                bp.push_back(run.windows[r] + bi.offset + inst * bi.stride);
                a.push_back(reinterpret_cast<int64_t>(bp.back()));
            }
            for (int32_t s = 0; s < S; ++s) a.push_back(cfg->scalars[s]);
            a.push_back(reinterpret_cast<int64_t>(&c));
        }
    }

    // ---- threads ---------------------------------------------------------------------------
    const uint32_t nthreads = static_cast<uint32_t>(P * C);
    sh.start.reset(new SpinBarrier(nthreads));
    sh.all.reset(new SpinBarrier(nthreads));
    for (int32_t r = 0; r < P; ++r) sh.rank_barrier.emplace_back(new SpinBarrier(static_cast<uint32_t>(C)));
    sh.slots.resize(nthreads);
    std::string trace_path;
    uint64_t trace_capacity = 0;
    std::unique_ptr<collc::rt::TraceSync> trace_sync;
    std::vector<std::unique_ptr<collc::rt::TraceEvent[]>> trace_storage;
    if (trace_config(&trace_path, &trace_capacity)) {
        trace_sync.reset(new collc::rt::TraceSync());
        run.trace_sync = trace_sync.get();
        sh.traces.resize(nthreads);
        for (collc::rt::TraceBuf& tb : sh.traces) {
            trace_storage.emplace_back(new collc::rt::TraceEvent[trace_capacity]);
            tb.ev = trace_storage.back().get();
            tb.cap = trace_capacity;
        }
    }

    std::vector<std::thread> threads;
    threads.reserve(nthreads);
    std::string spawn_error;
    for (int32_t r = 0; r < P && spawn_error.empty(); ++r) {
        for (int32_t b = 0; b < C; ++b) {
            try {
                threads.emplace_back(rank_thread, &sh, r, b);
            } catch (const std::exception& e) {
                // Threads already started are parked in the start barrier; the abort frees them.
                spawn_error = format("cannot start thread for rank %d block %d: %s", r, b, e.what());
                run.aborted.store(1, std::memory_order_release);
                break;
            }
        }
    }
    for (std::thread& t : threads) t.join();

    // ---- report ----------------------------------------------------------------------------
    // Every thread is joined: plain reads of the run state and windows are safe from here on.
    std::string msg;
    int64_t t0 = 0, t1 = 0;
    bool any_started = false;
    for (int32_t r = 0; r < P; ++r) {
        int32_t done = cfg->ncalls;
        for (int32_t b = 0; b < C; ++b) {
            const ThreadSlot& s = sh.slots[static_cast<size_t>(r * C + b)];
            done = std::min(done, s.completed);
            if (s.started) {
                t0 = any_started ? std::min(t0, s.t_start_ns) : s.t_start_ns;
                t1 = any_started ? std::max(t1, s.t_end_ns) : s.t_end_ns;
                any_started = true;
            }
        }
        report->calls_completed[r] = done;
    }
    report->elapsed_ns = any_started ? static_cast<double>(t1 - t0) : 0.0;

    if (!spawn_error.empty()) {
        report->status = COLLC_ERR_SYSTEM;
        msg += "collc run FAILED (system): " + spawn_error + "\n";
    } else if (run.fail_kind == FailKind::TwaitTimeout) {
        report->status = COLLC_ERR_TIMEOUT;
        const collc::rt::WaitRecord& w = run.fail_wait;
        report->fail_rank = w.rank;
        report->fail_block = w.block;
        report->fail_call = w.call;
        report->fail_window_rank = w.where.window_rank;
        report->fail_cell_offset = w.where.offset;
        report->fail_buffer = w.where.buffer;
        report->fail_cell_index = w.where.index;
        report->fail_cmp = static_cast<int32_t>(w.cmp);
        report->fail_expected = w.expected;
        report->fail_observed = w.observed;
        msg += "collc run FAILED (deadlock): " + run.fail_text + "\n";
    } else if (run.fail_kind == FailKind::KernelError) {
        report->status = COLLC_ERR_KERNEL;
        msg += "collc run FAILED (kernel error): " + run.fail_text + "\n";
    }
    msg += run.notes;
    if (report->status != COLLC_OK) {
        msg += "calls completed per rank:";
        for (int32_t r = 0; r < P; ++r) msg += format(" %d", report->calls_completed[r]);
        msg += format(" (of %d)\n", cfg->ncalls);
    }

    if (cfg->finish != nullptr) {
        for (int32_t r = 0; r < P; ++r) {
            cfg->finish(cfg->user, r, run.windows[r], sh.buffer_ptrs[static_cast<size_t>(r) * static_cast<size_t>(K)].data());
        }
    }

    if (run.trace_sync != nullptr && !write_trace(trace_path, sh.traces, P, C, cfg->ncalls)) {
        if (report->status == COLLC_OK) report->status = COLLC_ERR_SYSTEM;
        msg += "collc run FAILED (system): cannot write the trace to " + trace_path + "\n";
    }

    // Residue: every signal cell must be back at 0.
    std::string residue;
    int listed = 0;
    for (int32_t r = 0; r < P; ++r) {
        for (int32_t i = 0; i < B; ++i) {
            const BufferInfo& bi = infos[static_cast<size_t>(i)];
            if (bi.kind != COLLC_BUFFER_SIGNAL) continue;
            for (uint64_t inst = 0; inst < bi.instances; ++inst) {
                const int32_t* cells = reinterpret_cast<const int32_t*>(run.windows[r] + bi.offset + inst * bi.stride);
                const int64_t n = static_cast<int64_t>(bi.bytes / sizeof(int32_t));
                for (int64_t j = 0; j < n; ++j) {
                    if (cells[j] == 0) continue;
                    if (report->nonzero_cells == 0) {
                        report->first_nonzero_rank = r;
                        report->first_nonzero_buffer = i;
                        report->first_nonzero_index = j;
                        report->first_nonzero_value = cells[j];
                    }
                    ++report->nonzero_cells;
                    if (listed < 8) {
                        residue += format(" %s[%lld]@rank%d=%d", bi.name, static_cast<long long>(j), r, cells[j]);
                        ++listed;
                    }
                }
            }
        }
    }
    if (report->nonzero_cells != 0) {
        if (report->status == COLLC_OK) {
            report->status = COLLC_ERR_SIGNAL_RESIDUE;
            msg += "collc run FAILED (signal residue): ";
        } else {
            msg += "signal residue: ";
        }
        msg += format("%llu nonzero signal cell(s) after the run:", static_cast<unsigned long long>(report->nonzero_cells)) +
               residue + (report->nonzero_cells > 8 ? " ..." : "") + "\n";
    }

    if (report->status == COLLC_OK) {
        msg = format("ok: %d rank(s) x %d block(s), %d call(s), signals clean, %.0f ns", P, C, cfg->ncalls,
                     report->elapsed_ns);
    } else if (!msg.empty() && msg.back() == '\n') {
        msg.pop_back();
    }
    copy_message(report, msg);
    if (report->status != COLLC_OK && (cfg->flags & COLLC_RUN_QUIET) == 0) {
        std::fprintf(stderr, "%s\n", report->message);
        std::fflush(stderr);
    }
    return report->status;
}
