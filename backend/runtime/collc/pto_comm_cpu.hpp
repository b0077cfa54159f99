// collc CPU runtime for the pto::comm subset used by collc-generated kernels.
//
// Do not include this header directly from a kernel: include "collc/pto_comm.hpp",
// which selects this file on CPU builds and the real pto headers on Ascend builds.
//
// What this file provides (the contract the code generator emits against):
//
//   Qualifiers      __gm__ __aicore__ AICORE __global__ __ubuf__ __in__ __out__  (all empty)
//   Pipe/fences     pipe_t, PIPE_S .. PIPE_ALL, pipe_barrier(pipe_t), set_flag/wait_flag (no-ops),
//                   event_t, EVENT_ID0..EVENT_ID7, dsb(mem_dsb_t), dcci(ptr, cache_line_t[, dcci_dst_t])
//   Context         struct CommContext { int32_t rankId; int32_t rankSize; uint64_t windowsIn[64]; }
//                   CommRemotePtr(ctx, local_ptr, pe)
//   Multicore       get_block_idx(), get_block_num(), get_block_idx(args), get_block_num(args)
//   Signals         pto::comm::NotifyOp { AtomicAdd, Set }
//                   pto::comm::WaitCmp  { EQ, NE, GT, GE, LT, LE }
//                   pto::comm::Signal   (view of ONE int32 cell in a window)
//                   pto::comm::TNOTIFY(Signal&, int32_t value, NotifyOp)
//                   pto::comm::TWAIT  (Signal&, int32_t cmpValue, WaitCmp)
//                   pto::comm::TTEST  (Signal&, int32_t cmpValue, WaitCmp) -> bool
//   Data tiles      collc::Tile<T, N> (T = float, double, int32_t or int64_t), collc::TLOAD, collc::TSTORE,
//                   collc::TADD, collc::TMAX, collc::TMIN, collc::TMUL, collc::TMOV, and the
//                   length-explicit forms TADD/TMAX/TMIN/TMUL(dst, a, b, len), TMOV(dst, src, len),
//                   TSTORE_N(dst, src, len) that the generator emits, and the offset forms
//                   TLOAD_AT, TSTORE_AT, TMOV_AT, TADD_AT/TMUL_AT/TMAX_AT/TMIN_AT (tile slices)
//   Checks          COLLC_CHECK(cond, "what")  (generated index/rank/slice checks)
//                   COLLC_CALLS_BOUND(N, "what")  (`calls <= N`: call N + 1 of a run is refused)
//
// Memory model of the CPU build (how the NPU primitives are mapped):
//
//   * Windows are ordinary host memory shared by all rank threads. Signal cells are int32 words
//     inside the windows, accessed through std::atomic<int32_t> laid over the same bytes (the
//     layout equivalence is static_assert'ed below; C++17 has no std::atomic_ref).
//   * TNOTIFY AtomicAdd  = cell.fetch_add(value, seq_cst)   (a release operation, and more)
//     TNOTIFY Set        = cell.store(value, seq_cst)       (a release operation, and more)
//     TWAIT / TTEST      = cell.load(acquire), polled
//     So a notify publishes every write its thread made before it, and a satisfied wait makes
//     those writes visible to the waiter. A correct credit protocol therefore orders all data
//     accesses by itself.
//   * Data movement (TLOAD/TSTORE/hook code) uses PLAIN loads and stores. Nothing else
//     synchronises them. That is deliberate: under ThreadSanitizer a correct protocol is clean
//     and a protocol that lets a rank touch data a peer may still be using is reported as a race.
//   * pipe_barrier(PIPE_ALL) and dsb(...) = std::atomic_thread_fence(seq_cst);
//     dcci(...)                          = std::atomic_thread_fence(acquire).
//     They cost almost nothing and the signal atomics above already give the ordering the
//     kernels need; the fences exist so that the generated code has the same shape as on the NPU.
//     Under ThreadSanitizer they compile to nothing (GCC does not model standalone fences and
//     warns with -Wtsan); TSan must see ordering only through the signal atomics.
//   * The CPU build is sequentially consistent for signals and cannot reproduce NPU cache
//     incoherence or MTE/V pipeline reordering. What it does catch: wrong credit counts
//     (hangs -> loud TWAIT timeouts), stale credits across calls (wrong results), residue in
//     the signal buffer after a run (reported by the launcher), and data races (TSan).
//
// Chaos mode (CollcRunConfig flag COLLC_RUN_CHAOS): seeded random sleeps/yields at every
// TNOTIFY entry and after every satisfied TWAIT, to provoke rank skew inside a call.
//
// Failure handling: a TWAIT that is not satisfied within the deadline (env
// COLLC_TWAIT_TIMEOUT_MS, default 10000 ms, or CollcRunConfig::twait_timeout_ms) never returns
// as if satisfied. It records rank/block/call, the cell (window, byte offset, buffer name and
// index), the comparison, the expected value and the value the cell holds, marks the run as
// aborted, and unwinds the kernel with a collc::rt::RunAborted exception. Every other thread
// blocked in TWAIT (or in a launcher barrier) notices the abort flag, records where it was
// blocked, and unwinds too, so the launcher can join every thread. Generated kernels must not
// catch exceptions. Runtime checks (addresses outside every window, TWAIT on a remote cell,
// tile lengths out of range) fail the same way. Define COLLC_RT_NO_CHECKS to compile the
// address checks out (deadline and abort handling stay).
//
// Outside the launcher (no run registered on the calling thread) the kernel still works
// (block 0 of 1); a timeout or check failure then prints to stderr and calls std::abort().

#ifndef COLLC_PTO_COMM_CPU_HPP
#define COLLC_PTO_COMM_CPU_HPP

#if defined(__CCE_AICORE__)
#error "collc/pto_comm_cpu.hpp is the CPU runtime; Ascend builds must include collc/pto_comm.hpp"
#endif

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

// ---------------------------------------------------------------------------------------------
// Address-space and entry qualifiers: meaningful to the CCE compiler only.
// ---------------------------------------------------------------------------------------------
#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef AICORE
#define AICORE
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __in__
#define __in__
#endif
#ifndef __out__
#define __out__
#endif

// ThreadSanitizer detection (GCC defines __SANITIZE_THREAD__, Clang has __has_feature).
#if defined(__SANITIZE_THREAD__)
#define COLLC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COLLC_TSAN 1
#endif
#endif
#ifndef COLLC_TSAN
#define COLLC_TSAN 0
#endif

// ---------------------------------------------------------------------------------------------
// Pipes, events and cache/fence intrinsics (CCE names, CPU meaning).
// ---------------------------------------------------------------------------------------------
typedef int pipe_t;
constexpr pipe_t PIPE_S = 0;
constexpr pipe_t PIPE_V = 1;
constexpr pipe_t PIPE_MTE1 = 2;
constexpr pipe_t PIPE_MTE2 = 3;
constexpr pipe_t PIPE_MTE3 = 4;
constexpr pipe_t PIPE_M = 5;
constexpr pipe_t PIPE_ALL = 6;
constexpr pipe_t PIPE_FIX = 7;

typedef int event_t;
constexpr event_t EVENT_ID0 = 0;
constexpr event_t EVENT_ID1 = 1;
constexpr event_t EVENT_ID2 = 2;
constexpr event_t EVENT_ID3 = 3;
constexpr event_t EVENT_ID4 = 4;
constexpr event_t EVENT_ID5 = 5;
constexpr event_t EVENT_ID6 = 6;
constexpr event_t EVENT_ID7 = 7;

// dsb() barrier kinds and dcci() scopes/targets.
enum mem_dsb_t : int { DSB_ALL = 0, DSB_DDR = 1, DSB_UB = 2, DSB_SEQ = 3 };
enum cache_line_t : int { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE = 1 };
enum dcci_dst_t : int { CACHELINE_ALL = 0, CACHELINE_UB = 1, CACHELINE_OUT = 2, CACHELINE_ATOMIC = 3 };

namespace collc {
namespace rt {
// Full fence: NPU "all pipes drained / all prior memory operations complete".
inline void fence_full() {
#if !COLLC_TSAN
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}
// Acquire fence: NPU "invalidate my data cache so later reads see fresh GM".
inline void fence_acquire() {
#if !COLLC_TSAN
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
}
}  // namespace rt
}  // namespace collc

// NPU: wait until every (or one) pipe has drained. CPU: full fence.
inline void pipe_barrier(pipe_t /*pipe*/) { collc::rt::fence_full(); }
// NPU: data synchronisation barrier (all outstanding writes reached DDR/UB). CPU: full fence.
inline void dsb(mem_dsb_t /*kind*/) { collc::rt::fence_full(); }
// NPU: data-cache clean+invalidate of one line or the whole cache. CPU: acquire fence.
inline void dcci(const volatile void* /*addr*/, cache_line_t /*scope*/) { collc::rt::fence_acquire(); }
inline void dcci(const volatile void* /*addr*/, cache_line_t /*scope*/, dcci_dst_t /*dst*/) {
    collc::rt::fence_acquire();
}
// NPU: intra-core pipe event handshakes. CPU: every "pipe" is the calling thread, in program
// order, so these are no-ops.
inline void set_flag(pipe_t /*src*/, pipe_t /*dst*/, event_t /*id*/) {}
inline void wait_flag(pipe_t /*src*/, pipe_t /*dst*/, event_t /*id*/) {}

// ---------------------------------------------------------------------------------------------
// pto::comm enums (values identical to include/pto/comm/comm_types.hpp).
// ---------------------------------------------------------------------------------------------
namespace pto {
namespace comm {
enum class NotifyOp : uint8_t {
    AtomicAdd = 0,  // cell += value (hardware st_atomic on the NPU)
    Set = 1,        // cell  = value
};
enum class WaitCmp : uint8_t { EQ = 0, NE = 1, GT = 2, GE = 3, LT = 4, LE = 5 };
}  // namespace comm
}  // namespace pto

// Signal cells are int32 in memory and std::atomic<int32_t> in the runtime.
static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t), "atomic<int32_t> must be layout-identical to int32_t");
static_assert(alignof(std::atomic<int32_t>) == alignof(int32_t), "atomic<int32_t> must be int32-aligned");
static_assert(std::atomic<int32_t>::is_always_lock_free, "atomic<int32_t> must be lock-free");

// ---------------------------------------------------------------------------------------------
// collc::rt — run state shared between the kernel-side primitives and the host launcher.
// The launcher (host_launch.cpp) fills a RunState per run and points tl_thread at a
// ThreadState on each (rank, block) thread. Kernels never touch these directly.
// ---------------------------------------------------------------------------------------------
namespace collc {
namespace rt {

constexpr int32_t kMaxRanks = 64;               // == size of CommContext::windowsIn (as on Ascend)
constexpr int64_t kDefaultTwaitTimeoutMs = 10000;

// Thrown to unwind a kernel after the run was aborted (timeout or runtime check failure).
// Deliberately not derived from std::exception. Kernels must not catch it.
struct RunAborted {};

// One buffer of the symmetric window (same offset in every rank's window).
struct BufferInfo {
    const char* name;  // for diagnostics, never null (launcher substitutes "buf<i>")
    uint64_t offset;   // byte offset inside the window (64-byte aligned)
    uint64_t bytes;    // size in bytes
    uint32_t kind;     // CollcBufferKind (host_launch.hpp): 0 = data, 1 = signal cells
    uint64_t stride;   // bytes between two instances (per-call buffers)
    uint64_t instances;  // 1, or one per call for a per-call buffer
};

// Where an address lies in the symmetric windows.
struct CellLocation {
    int32_t window_rank = -1;  // whose window
    uint64_t offset = 0;       // byte offset in that window
    int32_t buffer = -1;       // buffer index, -1 if in padding
    int64_t index = -1;        // int32 element index inside the buffer
    int64_t instance = 0;      // which instance of a per-call buffer (0 for a reused one)
};

enum class FailKind : int32_t { None = 0, TwaitTimeout = 1, KernelError = 2 };

// What one TWAIT was doing when it timed out or was aborted.
struct WaitRecord {
    int32_t rank = -1;
    int32_t block = -1;
    int32_t call = -1;
    CellLocation where;
    const void* cell = nullptr;
    int32_t expected = 0;
    int32_t observed = 0;
    pto::comm::WaitCmp cmp = pto::comm::WaitCmp::GE;
};

struct TraceSync;

struct RunState {
    TraceSync* trace_sync = nullptr;  // non-null while the run is traced (see "Tracing" below)
    int32_t nranks = 0;
    int32_t nblocks = 0;
    uint8_t* windows[kMaxRanks] = {};
    uint64_t window_bytes = 0;
    const BufferInfo* buffers = nullptr;
    int32_t nbuffers = 0;
    int64_t twait_timeout_ms = kDefaultTwaitTimeoutMs;

    std::atomic<int32_t> aborted{0};  // set (release) once; polled (acquire) by every waiter

    std::mutex mu;                  // guards everything below
    FailKind fail_kind = FailKind::None;
    WaitRecord fail_wait;           // valid when fail_kind == TwaitTimeout
    std::string fail_text;          // one line describing the first failure
    std::string notes;              // further lines: waiters that were blocked at abort
};

struct ThreadState {
    RunState* run = nullptr;
    int32_t rank = 0;
    int32_t block = 0;
    int32_t nblocks = 1;
    int32_t call = 0;            // 0-based index of the kernel call in progress
    uint64_t chaos_state = 0;    // xorshift state; 0 = chaos injection off
    uint32_t chaos_max_us = 0;   // longest injected sleep
    struct TraceBuf* trace = nullptr;  // this thread's trace buffer; null: tracing off
};

// Set by the launcher on each (rank, block) thread; null outside a launcher run.
inline thread_local ThreadState* tl_thread = nullptr;

inline const char* cmp_name(pto::comm::WaitCmp cmp) {
    switch (cmp) {
        case pto::comm::WaitCmp::EQ: return "EQ";
        case pto::comm::WaitCmp::NE: return "NE";
        case pto::comm::WaitCmp::GT: return "GT";
        case pto::comm::WaitCmp::GE: return "GE";
        case pto::comm::WaitCmp::LT: return "LT";
        case pto::comm::WaitCmp::LE: return "LE";
    }
    return "?";
}

inline bool compare(int32_t value, int32_t expected, pto::comm::WaitCmp cmp) {
    switch (cmp) {
        case pto::comm::WaitCmp::EQ: return value == expected;
        case pto::comm::WaitCmp::NE: return value != expected;
        case pto::comm::WaitCmp::GT: return value > expected;
        case pto::comm::WaitCmp::GE: return value >= expected;
        case pto::comm::WaitCmp::LT: return value < expected;
        case pto::comm::WaitCmp::LE: return value <= expected;
    }
    return false;
}

// COLLC_TWAIT_TIMEOUT_MS; unset, non-positive or malformed values mean the default. Read by
// the launcher once per run (and by a TWAIT slow path outside any run), so a host may change
// it between runs.
inline int64_t env_twait_timeout_ms() {
    const char* s = std::getenv("COLLC_TWAIT_TIMEOUT_MS");
    if (s == nullptr || *s == '\0') return kDefaultTwaitTimeoutMs;
    char* end = nullptr;
    const long long v = std::strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v <= 0) return kDefaultTwaitTimeoutMs;
    return static_cast<int64_t>(v);
}

inline int64_t twait_timeout_ms() {
    ThreadState* t = tl_thread;
    return (t != nullptr && t->run != nullptr) ? t->run->twait_timeout_ms : env_twait_timeout_ms();
}

inline bool run_aborted() {
    ThreadState* t = tl_thread;
    return t != nullptr && t->run != nullptr && t->run->aborted.load(std::memory_order_acquire) != 0;
}

// Find the window (and buffer) holding `p`. False if `p` is in no window or no run is active.
inline bool locate(const RunState* run, const void* p, CellLocation* out) {
    if (run == nullptr) return false;
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (int32_t r = 0; r < run->nranks; ++r) {
        const uintptr_t base = reinterpret_cast<uintptr_t>(run->windows[r]);
        if (a < base || a - base >= run->window_bytes) continue;
        out->window_rank = r;
        out->offset = static_cast<uint64_t>(a - base);
        out->buffer = -1;
        out->index = -1;
        for (int32_t b = 0; b < run->nbuffers; ++b) {
            const BufferInfo& bi = run->buffers[b];
            if (out->offset < bi.offset) continue;
            const uint64_t rel = out->offset - bi.offset;
            const uint64_t inst = bi.instances > 1 ? rel / bi.stride : 0;
            if (inst < bi.instances && rel - inst * bi.stride < bi.bytes) {
                out->buffer = b;
                out->index = static_cast<int64_t>((rel - inst * bi.stride) / sizeof(int32_t));
                out->instance = static_cast<int64_t>(inst);
                break;
            }
        }
        return true;
    }
    return false;
}

// "signal[3] in rank 1's window (offset 0xc)"
inline std::string describe(const RunState* run, const void* p) {
    char buf[256];
    CellLocation loc;
    if (!locate(run, p, &loc)) {
        std::snprintf(buf, sizeof buf, "address %p (outside every window)", p);
    } else if (loc.buffer < 0) {
        std::snprintf(buf, sizeof buf, "padding in rank %d's window (offset 0x%llx)", loc.window_rank,
                      static_cast<unsigned long long>(loc.offset));
    } else {
        std::snprintf(buf, sizeof buf, "%s[%lld] in rank %d's window (offset 0x%llx)", run->buffers[loc.buffer].name,
                      static_cast<long long>(loc.index), loc.window_rank, static_cast<unsigned long long>(loc.offset));
    }
    return buf;
}

inline std::string who(const ThreadState* t) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "rank %d (block %d, call %d)", t->rank, t->block, t->call);
    return buf;
}

// Record `kind`/`text` as the run's first failure (if it is), raise the abort flag and unwind.
[[noreturn]] inline void abort_run(FailKind kind, const std::string& text, const WaitRecord* wait) {
    ThreadState* t = tl_thread;
    if (t == nullptr || t->run == nullptr) {
        std::fprintf(stderr, "collc: %s\n", text.c_str());
        std::fflush(stderr);
        std::abort();
    }
    RunState* run = t->run;
    {
        std::lock_guard<std::mutex> lock(run->mu);
        if (run->fail_kind == FailKind::None) {
            run->fail_kind = kind;
            run->fail_text = text;
            if (wait != nullptr) run->fail_wait = *wait;
        } else {
            run->notes += "also failed: " + text + "\n";
        }
    }
    run->aborted.store(1, std::memory_order_release);
    throw RunAborted{};
}

// A runtime check failed inside a kernel (bad address, bad tile length, ...).
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void kernel_error(const char* fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ThreadState* t = tl_thread;
    std::string text = (t != nullptr ? who(t) + ": " : std::string()) + msg;
    abort_run(FailKind::KernelError, text, nullptr);
}

// `calls <= N` of the protocol (COLLC_CALLS_BOUND in generated kernels): the verified domain
// is N back-to-back calls per launcher run, so call N + 1 (the call index counted by the
// launcher, or a library's per-collective count) fails loudly instead of running.
inline void calls_bound(int64_t max, const char* what) {
    ThreadState* t = tl_thread;
    if (t != nullptr && t->call >= max) {
        kernel_error("call %d refused: past %s, the verified domain (at most %lld back-to-back calls)", t->call + 1,
                     what, static_cast<long long>(max));
    }
}

// Spin-then-yield-then-sleep backoff for every wait loop of the runtime. Designed so that
// 8 rank threads on 2 cores make progress: a waiter gives its core away after a short spin.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

class Backoff {
public:
    static constexpr uint32_t kSpinPolls = 256;          // pause-and-poll
    static constexpr uint32_t kYieldPolls = 1024;        // then yield-and-poll
    static constexpr uint32_t kFirstSleepUs = 10;        // then sleep, doubling ...
    static constexpr uint32_t kMaxSleepUs = 250;         // ... up to this

    void pause() {
        if (polls_ < kSpinPolls) {
            cpu_relax();
        } else if (polls_ < kSpinPolls + kYieldPolls) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
            sleep_us_ = sleep_us_ * 2 > kMaxSleepUs ? kMaxSleepUs : sleep_us_ * 2;
        }
        ++polls_;
    }
    // True once the cheap spin phase is over (callers then check clocks and abort flags).
    bool slow() const { return polls_ >= kSpinPolls; }

private:
    uint32_t polls_ = 0;
    uint32_t sleep_us_ = kFirstSleepUs;
};

// Chaos injection (launcher flag COLLC_RUN_CHAOS): at TNOTIFY entry and after a satisfied
// TWAIT, a seeded per-thread PRNG makes the thread sleep (1 in 4), yield (1 in 4) or go on.
// This widens the windows between a rank's wait and its next notify/epilogue, so orderings a
// 2-core machine rarely produces (a fast peer's next-call credit landing before a slow
// rank's epilogue) happen within a few calls. Off by default; costs one branch when off.
// The action of every chaos point (here and at block entry in host_launch.cpp), drawn from
// `x`: sleep up to `max_us` microseconds (x & 3 == 0), yield (== 1), or go on.
inline void chaos_act(uint64_t x, uint32_t max_us) {
    switch (x & 3) {
        case 0:
            std::this_thread::sleep_for(std::chrono::microseconds((x >> 8) % (max_us + 1)));
            break;
        case 1:
            std::this_thread::yield();
            break;
        default:
            break;
    }
}

// A well-mixed 64-bit value from `seed` and a counter (splitmix64: the golden-ratio step,
// then its finaliser), for chaos draws that depend only on where and when they happen.
inline uint64_t chaos_mix(uint64_t seed, uint64_t counter) {
    uint64_t x = seed + 0x9E3779B97F4A7C15ull * counter;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

inline void chaos_point() {
    ThreadState* t = tl_thread;
    if (t == nullptr || t->chaos_state == 0) return;
    uint64_t x = t->chaos_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->chaos_state = x;
    chaos_act(x, t->chaos_max_us);
}

// Slow path of TWAIT: poll with backoff until satisfied, the deadline passes, or the run aborts.
inline void wait_slow(std::atomic<int32_t>& cell, int32_t expected, pto::comm::WaitCmp cmp) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    const int64_t timeout_ms = twait_timeout_ms();
    const Clock::time_point deadline = start + std::chrono::milliseconds(timeout_ms);
    ThreadState* t = tl_thread;
    RunState* run = t != nullptr ? t->run : nullptr;
    Backoff backoff;
    for (;;) {
        const int32_t v = cell.load(std::memory_order_acquire);
        if (compare(v, expected, cmp)) return;
        const bool aborted = run != nullptr && run->aborted.load(std::memory_order_acquire) != 0;
        const bool late = backoff.slow() && Clock::now() >= deadline;
        if (aborted || late) {
            WaitRecord w;
            if (t != nullptr) {
                w.rank = t->rank;
                w.block = t->block;
                w.call = t->call;
            }
            locate(run, &cell, &w.where);
            w.cell = &cell;
            w.expected = expected;
            w.observed = v;
            w.cmp = cmp;
            std::string what = (t != nullptr ? who(t) : std::string("thread outside a collc run")) +
                               " waits for " + describe(run, &cell) + " " + cmp_name(cmp) + " " +
                               std::to_string(expected) + ", but the cell holds " + std::to_string(v);
            if (aborted) {
                // Someone else failed first: say where we were blocked, then unwind.
                {
                    std::lock_guard<std::mutex> lock(run->mu);
                    run->notes += "blocked at abort: " + what + "\n";
                }
                throw RunAborted{};
            }
            abort_run(FailKind::TwaitTimeout,
                      "TWAIT timeout after " + std::to_string(timeout_ms) + " ms: " + what, &w);
        }
        backoff.pause();
    }
}

// ---------------------------------------------------------------------------------------------
// Tracing (`collc run --trace`; compiled in always, switched on per run by the launcher).
// Each (rank, block) thread appends to its own fixed-capacity buffer; an event that does not
// fit is counted in `dropped` (the trace is then reported as overflowed, never truncated
// silently). Off, every traced primitive costs one thread-local load and a branch.
//
// Order reconstruction: while a run is traced, every TNOTIFY on a cell of rank r's window and
// the read that lets a TWAIT on such a cell pass happen under rank r's trace lock (a spin lock), which also
// numbers them: a notify takes the next sequence number of rank r (`seq`, 1, 2, ...), a
// passing wait records the number of the last notify it saw. So per window owner the notifies
// form one total order (a refinement of each cell's modification order), and each passed
// wait is placed exactly between notify `seq` and notify `seq + 1` of that owner: its value
// is the state after the first `seq` notifies. The checker (collc_backend::trace) rebuilds
// the schedule from these numbers and each thread's program order.
// ---------------------------------------------------------------------------------------------
enum class TraceKind : uint8_t { Notify = 1, Wait = 2, Fence = 3, Get = 4, Put = 5, Blocked = 6 };

struct TraceEvent {
    uint8_t kind;       // TraceKind
    uint8_t op;         // notify: 0 AtomicAdd, 1 Set; wait: WaitCmp
    uint16_t reserved;
    int32_t call;       // the kernel call in progress
    int32_t owner;      // whose window holds the cell or data
    int32_t buffer;     // buffer index (CollcRunConfig::buffers order), -1 if none
    int64_t instance;   // instance of a per-call buffer
    int64_t index;      // int32/f32 element index inside the instance
    int64_t len;        // get/put: elements
    int32_t value;      // notify: operand; wait: threshold
    int32_t observed;   // notify: the cell before the atomic; wait: the value that passed
    uint64_t seq;       // notify: its number; wait: the last notify seen (per owner)
};

struct TraceBuf {
    TraceEvent* ev = nullptr;
    uint64_t cap = 0;
    uint64_t n = 0;
    uint64_t dropped = 0;
};

// A short spin lock (test-and-test-and-set, yielding after a few spins): the critical
// sections are one atomic and one counter increment, and a sleeping mutex would add a
// futex round trip to every contended notify.
class TraceLock {
public:
    void lock() {
        unsigned spins = 0;
        while (held_.exchange(true, std::memory_order_acquire)) {
            while (held_.load(std::memory_order_relaxed)) {
                if (++spins < 64) {
                    cpu_relax();
                } else {
                    std::this_thread::yield();
                }
            }
        }
    }
    void unlock() { held_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> held_{false};
};

struct TraceSync {
    TraceLock mu[kMaxRanks];
    uint64_t seq[kMaxRanks] = {};
};

inline void trace_push(ThreadState* t, const TraceEvent& e) {
    TraceBuf* b = t->trace;
    if (b->n < b->cap) {
        b->ev[b->n++] = e;
    } else {
        ++b->dropped;
    }
}

inline TraceEvent trace_event(const ThreadState* t, TraceKind kind, const CellLocation& loc) {
    TraceEvent e{};
    e.kind = static_cast<uint8_t>(kind);
    e.call = t->call;
    e.owner = loc.window_rank;
    e.buffer = loc.buffer;
    e.instance = loc.instance;
    e.index = loc.index;
    return e;
}

inline CellLocation trace_locate(const ThreadState* t, const void* p, const char* op) {
    CellLocation loc;
    if (!locate(t->run, p, &loc) || loc.buffer < 0) {
        kernel_error("%s: traced address %p is not inside any buffer of the windows", op, p);
    }
    return loc;
}

inline void traced_notify(ThreadState* t, std::atomic<int32_t>& cell, int32_t value, bool set) {
    const CellLocation loc = trace_locate(t, &cell, "TNOTIFY");
    TraceSync* s = t->run->trace_sync;
    TraceEvent e = trace_event(t, TraceKind::Notify, loc);
    e.op = set ? 1 : 0;
    e.value = value;
    {
        std::lock_guard<TraceLock> g(s->mu[loc.window_rank]);
        e.observed = set ? cell.exchange(value, std::memory_order_seq_cst)
                         : cell.fetch_add(value, std::memory_order_seq_cst);
        e.seq = ++s->seq[loc.window_rank];
    }
    trace_push(t, e);
}

inline void traced_wait(ThreadState* t, std::atomic<int32_t>& cell, int32_t expected, pto::comm::WaitCmp cmp) {
    const CellLocation loc = trace_locate(t, &cell, "TWAIT");
    TraceSync* s = t->run->trace_sync;
    TraceEvent e = trace_event(t, TraceKind::Wait, loc);
    e.op = static_cast<uint8_t>(cmp);
    e.value = expected;
    for (;;) {
        if (!compare(cell.load(std::memory_order_acquire), expected, cmp)) {
            try {
                wait_slow(cell, expected, cmp);
            } catch (const RunAborted&) {
                e.kind = static_cast<uint8_t>(TraceKind::Blocked);  // never passed: the run aborted
                e.observed = cell.load(std::memory_order_seq_cst);
                trace_push(t, e);
                throw;
            }
        }
        {
            std::lock_guard<TraceLock> g(s->mu[loc.window_rank]);
            e.observed = cell.load(std::memory_order_seq_cst);
            e.seq = s->seq[loc.window_rank];
        }
        if (compare(e.observed, expected, cmp)) break;
    }
    trace_push(t, e);
}

inline void trace_fence() {
    ThreadState* t = tl_thread;
    if (t == nullptr || t->trace == nullptr) return;
    TraceEvent e{};
    e.kind = static_cast<uint8_t>(TraceKind::Fence);
    e.call = t->call;
    e.owner = t->rank;
    e.buffer = -1;
    trace_push(t, e);
}

inline void trace_gm(bool write, const volatile void* p, int64_t len) {
    ThreadState* t = tl_thread;
    if (t == nullptr || t->trace == nullptr) return;
    const CellLocation loc = trace_locate(t, const_cast<const void*>(p), write ? "put" : "get");
    TraceEvent e = trace_event(t, write ? TraceKind::Put : TraceKind::Get, loc);
    e.len = len;
    trace_push(t, e);
}

}  // namespace rt
}  // namespace collc

// The emitter's trace points: the `.coll` statement `fence;` and every window access of a
// data statement (get = read, put = write; the address is the one the statement uses).
// Defining COLLC_NO_TRACE before the include compiles tracing out (the kernel then never
// records, even in a traced run; benches/README.md compares the three costs).
#if defined(COLLC_NO_TRACE)
#define COLLC_TRACE_FENCE() ((void)0)
#define COLLC_TRACE_GET(ptr, len) ((void)0)
#define COLLC_TRACE_PUT(ptr, len) ((void)0)
#define COLLC_TRACE_ON(t) ((void)(t), false)
#else
#define COLLC_TRACE_FENCE() ::collc::rt::trace_fence()
#define COLLC_TRACE_GET(ptr, len) ::collc::rt::trace_gm(false, (ptr), static_cast<int64_t>(len))
#define COLLC_TRACE_PUT(ptr, len) ::collc::rt::trace_gm(true, (ptr), static_cast<int64_t>(len))
#define COLLC_TRACE_ON(t) ((t) != nullptr && (t)->trace != nullptr)
#endif

// ---------------------------------------------------------------------------------------------
// Communication context (the CPU layout; see pto_comm.hpp for the Ascend one).
// ---------------------------------------------------------------------------------------------
struct CommContext {
    int32_t rankId;                                 // this rank, 0 .. rankSize-1
    int32_t rankSize;                               // number of ranks P
    uint64_t windowsIn[collc::rt::kMaxRanks];       // windowsIn[pe] = base address of pe's window
};

namespace collc {
namespace rt {
// Checks for CommRemotePtr: pe in range and the local pointer inside the caller's window.
inline void check_remote_ptr(const CommContext* ctx, uint64_t offset, int pe) {
#if !defined(COLLC_RT_NO_CHECKS)
    if (pe < 0 || pe >= ctx->rankSize || pe >= kMaxRanks) {
        kernel_error("CommRemotePtr: pe %d out of range [0, %d)", pe, ctx->rankSize);
    }
    ThreadState* t = tl_thread;
    if (t != nullptr && t->run != nullptr && offset >= t->run->window_bytes) {
        kernel_error("CommRemotePtr: pointer is not inside rank %d's window (offset 0x%llx >= window size 0x%llx)",
                     ctx->rankId, static_cast<unsigned long long>(offset),
                     static_cast<unsigned long long>(t->run->window_bytes));
    }
#else
    (void)ctx;
    (void)offset;
    (void)pe;
#endif
}
}  // namespace rt
}  // namespace collc

// Same byte offset inside pe's window: windowsIn[pe] + (local_ptr - windowsIn[rankId]).
// With pe == rankId it returns local_ptr.
template <typename T>
AICORE inline __gm__ T* CommRemotePtr(__gm__ const CommContext* ctx, __gm__ T* local_ptr, int pe) {
    const uint64_t local_base = ctx->windowsIn[ctx->rankId];
    const uint64_t offset = reinterpret_cast<uint64_t>(local_ptr) - local_base;
    collc::rt::check_remote_ptr(ctx, offset, pe);
    return reinterpret_cast<__gm__ T*>(ctx->windowsIn[pe] + offset);
}

// ---------------------------------------------------------------------------------------------
// Multicore: one launcher thread per (rank, block). The args overloads mirror simpler's
// logical-SPMD intrinsics (get_block_idx(args)) used by the pypto kernels.
// ---------------------------------------------------------------------------------------------
inline int32_t get_block_idx() {
    const collc::rt::ThreadState* t = collc::rt::tl_thread;
    return t != nullptr ? t->block : 0;
}
inline int32_t get_block_num() {
    const collc::rt::ThreadState* t = collc::rt::tl_thread;
    return t != nullptr ? t->nblocks : 1;
}
inline int32_t get_block_idx(__gm__ const int64_t* /*args*/) { return get_block_idx(); }
inline int32_t get_block_num(__gm__ const int64_t* /*args*/) { return get_block_num(); }

// ---------------------------------------------------------------------------------------------
// pto::comm signals.
// ---------------------------------------------------------------------------------------------
namespace pto {
namespace comm {

// A view of ONE int32 signal cell in a window (the NPU type is a 1x1x1x1x1 GlobalTensor).
// Construct it from a cell pointer, e.g. Signal sig(signal_base + peer). The instructions take
// it by non-const reference, exactly like the NPU API, so generated code must name it.
class Signal {
public:
    using DType = int32_t;
    AICORE explicit Signal(__gm__ int32_t* cell) : cell_(cell) {}
    AICORE __gm__ int32_t* data() const { return cell_; }
    // The cell as an atomic (same bytes; see the static_asserts above).
    std::atomic<int32_t>& atomic() const { return *reinterpret_cast<std::atomic<int32_t>*>(cell_); }

private:
    __gm__ int32_t* cell_;
};

namespace detail {
// Validate a cell address: 4-byte aligned, inside some window, and (for waits) local.
inline std::atomic<int32_t>& checked_cell(Signal& sig, const char* op, bool must_be_local) {
#if !defined(COLLC_RT_NO_CHECKS)
    const void* p = sig.data();
    if (reinterpret_cast<uintptr_t>(p) % alignof(int32_t) != 0) {
        collc::rt::kernel_error("%s: signal cell %p is not 4-byte aligned", op, p);
    }
    const collc::rt::ThreadState* t = collc::rt::tl_thread;
    if (t != nullptr && t->run != nullptr) {
        collc::rt::CellLocation loc;
        if (!collc::rt::locate(t->run, p, &loc)) {
            collc::rt::kernel_error("%s: signal cell %p is not inside any rank's window", op, p);
        }
        if (must_be_local && loc.window_rank != t->rank) {
            collc::rt::kernel_error("%s: waits on %s, which is not in this rank's window (TWAIT must be local)", op,
                                    collc::rt::describe(t->run, p).c_str());
        }
    }
#else
    (void)op;
    (void)must_be_local;
#endif
    return sig.atomic();
}
}  // namespace detail

// TNOTIFY: AtomicAdd -> cell += value; Set -> cell = value. Both seq_cst (release included).
// `events` are NPU ordering tokens (waited before issue on the NPU); ignored here.
template <typename... WaitEvents>
AICORE inline void TNOTIFY(Signal& dstSignal, int32_t value, NotifyOp op, WaitEvents&... /*events*/) {
    std::atomic<int32_t>& cell = detail::checked_cell(dstSignal, "TNOTIFY", false);
    collc::rt::chaos_point();
    collc::rt::ThreadState* t = collc::rt::tl_thread;
    if (COLLC_TRACE_ON(t)) {
        collc::rt::traced_notify(t, cell, value, op == NotifyOp::Set);
    } else if (op == NotifyOp::AtomicAdd) {
        cell.fetch_add(value, std::memory_order_seq_cst);
    } else {
        cell.store(value, std::memory_order_seq_cst);
    }
}

// Compile-time-op form of the NPU API: TNOTIFY<NotifyOp::AtomicAdd>(sig, 1).
template <NotifyOp op = NotifyOp::Set>
AICORE inline void TNOTIFY(Signal& dstSignal, int32_t value = 1) {
    TNOTIFY(dstSignal, value, op);
}

// TWAIT: block until `cell <cmp> cmpValue` (acquire). The cell must be in the caller's window.
// Never returns unsatisfied: on deadline or run abort it unwinds (see the file comment).
template <typename... WaitEvents>
AICORE inline void TWAIT(Signal& signal, int32_t cmpValue, WaitCmp cmp, WaitEvents&... /*events*/) {
    std::atomic<int32_t>& cell = detail::checked_cell(signal, "TWAIT", true);
    collc::rt::ThreadState* t = collc::rt::tl_thread;
    if (COLLC_TRACE_ON(t)) {
        collc::rt::traced_wait(t, cell, cmpValue, cmp);
    } else if (!collc::rt::compare(cell.load(std::memory_order_acquire), cmpValue, cmp)) {
        collc::rt::wait_slow(cell, cmpValue, cmp);
    }
    collc::rt::chaos_point();
}

// TTEST: one acquire poll; true if `cell <cmp> cmpValue`. If the run has been aborted it
// unwinds instead of returning, so TTEST-polling loops also stop.
template <typename... WaitEvents>
AICORE inline bool TTEST(Signal& signal, int32_t cmpValue, WaitCmp cmp, WaitEvents&... /*events*/) {
    std::atomic<int32_t>& cell = detail::checked_cell(signal, "TTEST", true);
    if (collc::rt::compare(cell.load(std::memory_order_acquire), cmpValue, cmp)) return true;
    if (collc::rt::run_aborted()) throw collc::rt::RunAborted{};
    return false;
}

}  // namespace comm
}  // namespace pto

// ---------------------------------------------------------------------------------------------
// COLLC_CHECK(cond, what): a generated kernel's runtime check (index, rank or slice out of
// range). On the CPU a failure aborts the run like any runtime check (KernelError, naming
// `what`, a string literal: the .coll text); on Ascend it compiles to nothing.
// ---------------------------------------------------------------------------------------------
#define COLLC_CHECK(cond, what)                                            \
    do {                                                                   \
        if (!(cond)) collc::rt::kernel_error("check failed: %s", (what)); \
    } while (0)
#define COLLC_CALLS_BOUND(max, what) collc::rt::calls_bound((max), (what))

// ---------------------------------------------------------------------------------------------
// collc data tiles: a minimal, pto-styled Unified-Buffer tile API for data movement.
//
//   collc::Tile<float, 256> acc(0x0);        // capacity 256 elements, UB byte address 0x0
//   collc::TLOAD(acc, src_gm, len);          // acc[0..len) = src_gm[0..len); acc.valid = len
//   collc::TADD(acc, acc, recv);             // element-wise over the common valid length
//   collc::TSTORE(dst_gm, acc, len);         // dst_gm[0..len) = acc[0..len); len <= acc.valid
//
// The UB address is the tile's placement on the NPU (TASSIGN); the CPU ignores it. All GM
// accesses are plain loads/stores (see the memory-model notes at the top of this file).
// Binary ops require equal valid lengths in both sources; the result gets that length.
// dst may alias a source. Lengths out of [0, capacity] are runtime errors.
// ---------------------------------------------------------------------------------------------
namespace collc {

template <typename T, int32_t Capacity>
class Tile {
    static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value ||
                      std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value,
                  "collc::Tile supports float, double, int32_t and int64_t elements");
    static_assert(Capacity > 0, "tile capacity must be positive");

public:
    using value_type = T;
    static constexpr int32_t kCapacity = Capacity;

    AICORE explicit Tile(uint32_t ub_addr) : ub_addr_(ub_addr) {}

    AICORE int32_t valid() const { return valid_; }
    AICORE void set_valid(int32_t len) {
        if (len < 0 || len > Capacity) rt::kernel_error("Tile: valid length %d outside [0, %d]", len, Capacity);
        valid_ = len;
    }
    AICORE uint32_t ub_addr() const { return ub_addr_; }
    AICORE T* data() { return data_; }
    AICORE const T* data() const { return data_; }
    AICORE T& operator[](int32_t i) { return data_[i]; }
    AICORE const T& operator[](int32_t i) const { return data_[i]; }

private:
    // Not zeroed, like the Unified Buffer it stands for: a tile holds nothing a protocol may
    // read before it writes it (the simulator reports such a read as uninitialised scratch),
    // and zeroing it cost every call a memset of the whole capacity (32 KiB for a
    // Tile<float, 8192>: benches/history.md, "Host allreduce below 1 MiB").
    alignas(64) T data_[Capacity];
    int32_t valid_ = 0;
    uint32_t ub_addr_;
};

namespace detail {
inline void check_len(const char* op, int32_t len, int32_t cap) {
    if (len < 0 || len > cap) rt::kernel_error("%s: length %d outside [0, %d]", op, len, cap);
}
template <typename T, int32_t N, typename F>
inline void binary(const char* op, Tile<T, N>& dst, const Tile<T, N>& a, const Tile<T, N>& b, F f) {
    if (a.valid() != b.valid()) rt::kernel_error("%s: source valid lengths differ (%d vs %d)", op, a.valid(), b.valid());
    const int32_t n = a.valid();
    for (int32_t i = 0; i < n; ++i) dst[i] = f(a[i], b[i]);
    dst.set_valid(n);
}
}  // namespace detail

// GM -> tile: dst[0..len) = src[0..len), dst.valid = len. `src` may be a remote window address.
template <typename T, int32_t N>
AICORE inline void TLOAD(Tile<T, N>& dst, __gm__ const T* src, int32_t len) {
    detail::check_len("TLOAD", len, N);
    if (len > 0) std::memcpy(dst.data(), src, static_cast<size_t>(len) * sizeof(T));
    dst.set_valid(len);
}

// tile -> GM: dst[0..len) = src[0..len); requires len <= src.valid.
template <typename T, int32_t N>
AICORE inline void TSTORE(__gm__ T* dst, const Tile<T, N>& src, int32_t len) {
    detail::check_len("TSTORE", len, src.valid());
    if (len > 0) std::memcpy(dst, src.data(), static_cast<size_t>(len) * sizeof(T));
}

template <typename T, int32_t N>
AICORE inline void TADD(Tile<T, N>& dst, const Tile<T, N>& a, const Tile<T, N>& b) {
    detail::binary("TADD", dst, a, b, [](T x, T y) { return x + y; });
}
template <typename T, int32_t N>
AICORE inline void TMUL(Tile<T, N>& dst, const Tile<T, N>& a, const Tile<T, N>& b) {
    detail::binary("TMUL", dst, a, b, [](T x, T y) { return x * y; });
}
template <typename T, int32_t N>
AICORE inline void TMAX(Tile<T, N>& dst, const Tile<T, N>& a, const Tile<T, N>& b) {
    detail::binary("TMAX", dst, a, b, [](T x, T y) { return x > y ? x : y; });
}
template <typename T, int32_t N>
AICORE inline void TMIN(Tile<T, N>& dst, const Tile<T, N>& a, const Tile<T, N>& b) {
    detail::binary("TMIN", dst, a, b, [](T x, T y) { return x < y ? x : y; });
}

// tile -> tile copy of the valid region.
template <typename T, int32_t N>
AICORE inline void TMOV(Tile<T, N>& dst, const Tile<T, N>& src) {
    const int32_t n = src.valid();
    if (&dst != &src && n > 0) std::memcpy(dst.data(), src.data(), static_cast<size_t>(n) * sizeof(T));
    dst.set_valid(n);
}

// Length-explicit forms (what the collc generator emits): operate on elements [0, len) of each
// tile whatever their current valid lengths (a .coll tile is persistent scratch; its valid
// length is bookkeeping), then set dst.valid = len. Sources may have different capacities
// than dst (e.g. a staging tile); len must fit every one of them.
namespace detail {
template <typename T, int32_t N, int32_t M1, int32_t M2, typename F>
inline void binary_len(const char* op, Tile<T, N>& dst, const Tile<T, M1>& a, const Tile<T, M2>& b, int32_t len,
                       F f) {
    check_len(op, len, N < M1 ? (N < M2 ? N : M2) : (M1 < M2 ? M1 : M2));
    for (int32_t i = 0; i < len; ++i) dst[i] = f(a[i], b[i]);
    dst.set_valid(len);
}
}  // namespace detail

template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TADD(Tile<T, N>& dst, const Tile<T, M1>& a, const Tile<T, M2>& b, int32_t len) {
    detail::binary_len("TADD", dst, a, b, len, [](T x, T y) { return x + y; });
}
template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TMUL(Tile<T, N>& dst, const Tile<T, M1>& a, const Tile<T, M2>& b, int32_t len) {
    detail::binary_len("TMUL", dst, a, b, len, [](T x, T y) { return x * y; });
}
template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TMAX(Tile<T, N>& dst, const Tile<T, M1>& a, const Tile<T, M2>& b, int32_t len) {
    detail::binary_len("TMAX", dst, a, b, len, [](T x, T y) { return x > y ? x : y; });
}
template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TMIN(Tile<T, N>& dst, const Tile<T, M1>& a, const Tile<T, M2>& b, int32_t len) {
    detail::binary_len("TMIN", dst, a, b, len, [](T x, T y) { return x < y ? x : y; });
}
template <typename T, int32_t N, int32_t M>
AICORE inline void TMOV(Tile<T, N>& dst, const Tile<T, M>& src, int32_t len) {
    detail::check_len("TMOV", len, N < M ? N : M);
    if (static_cast<const void*>(&dst) != static_cast<const void*>(&src) && len > 0) {
        std::memcpy(dst.data(), src.data(), static_cast<size_t>(len) * sizeof(T));
    }
    dst.set_valid(len);
}
// Offset forms (what the generator emits for tile slices that do not start at element 0, and
// for multi-dimensional tiles, which it addresses flat): elements [off, off + len) of a tile.
// dst.valid becomes max(dst.valid, doff + len).
namespace detail {
inline void check_range(const char* op, int32_t off, int32_t len, int32_t cap) {
    if (off < 0 || len < 0 || off > cap || len > cap - off) {
        rt::kernel_error("%s: elements [%d, %d) outside the tile's [0, %d)", op, off, off + len, cap);
    }
}
template <typename T, int32_t N>
inline void grow_valid(Tile<T, N>& t, int32_t end) {
    if (end > t.valid()) t.set_valid(end);
}
template <typename T, int32_t N, int32_t M1, int32_t M2, typename F>
inline void binary_at(const char* op, Tile<T, N>& dst, int32_t doff, const Tile<T, M1>& a, int32_t aoff,
                      const Tile<T, M2>& b, int32_t boff, int32_t len, F f) {
    check_range(op, doff, len, N);
    check_range(op, aoff, len, M1);
    check_range(op, boff, len, M2);
    for (int32_t i = 0; i < len; ++i) dst[doff + i] = f(a[aoff + i], b[boff + i]);
    grow_valid(dst, doff + len);
}
}  // namespace detail

template <typename T, int32_t N>
AICORE inline void TLOAD_AT(Tile<T, N>& dst, int32_t off, __gm__ const T* src, int32_t len) {
    detail::check_range("TLOAD_AT", off, len, N);
    if (len > 0) std::memcpy(dst.data() + off, src, static_cast<size_t>(len) * sizeof(T));
    detail::grow_valid(dst, off + len);
}
template <typename T, int32_t N>
AICORE inline void TSTORE_AT(__gm__ T* dst, const Tile<T, N>& src, int32_t off, int32_t len) {
    detail::check_range("TSTORE_AT", off, len, N);
    if (len > 0) std::memcpy(dst, src.data() + off, static_cast<size_t>(len) * sizeof(T));
}
template <typename T, int32_t N, int32_t M>
AICORE inline void TMOV_AT(Tile<T, N>& dst, int32_t doff, const Tile<T, M>& src, int32_t soff, int32_t len) {
    detail::check_range("TMOV_AT", doff, len, N);
    detail::check_range("TMOV_AT", soff, len, M);
    if (len > 0) std::memmove(dst.data() + doff, src.data() + soff, static_cast<size_t>(len) * sizeof(T));
    detail::grow_valid(dst, doff + len);
}
template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TADD_AT(Tile<T, N>& dst, int32_t doff, const Tile<T, M1>& a, int32_t aoff, const Tile<T, M2>& b,
                           int32_t boff, int32_t len) {
    detail::binary_at("TADD_AT", dst, doff, a, aoff, b, boff, len, [](T x, T y) { return x + y; });
}
template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TMUL_AT(Tile<T, N>& dst, int32_t doff, const Tile<T, M1>& a, int32_t aoff, const Tile<T, M2>& b,
                           int32_t boff, int32_t len) {
    detail::binary_at("TMUL_AT", dst, doff, a, aoff, b, boff, len, [](T x, T y) { return x * y; });
}
template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TMAX_AT(Tile<T, N>& dst, int32_t doff, const Tile<T, M1>& a, int32_t aoff, const Tile<T, M2>& b,
                           int32_t boff, int32_t len) {
    detail::binary_at("TMAX_AT", dst, doff, a, aoff, b, boff, len, [](T x, T y) { return x > y ? x : y; });
}
template <typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void TMIN_AT(Tile<T, N>& dst, int32_t doff, const Tile<T, M1>& a, int32_t aoff, const Tile<T, M2>& b,
                           int32_t boff, int32_t len) {
    detail::binary_at("TMIN_AT", dst, doff, a, aoff, b, boff, len, [](T x, T y) { return x < y ? x : y; });
}

// tile -> GM with an explicit length: stores src[0, len) whatever src.valid (len <= capacity).
template <typename T, int32_t N>
AICORE inline void TSTORE_N(__gm__ T* dst, const Tile<T, N>& src, int32_t len) {
    detail::check_len("TSTORE", len, N);
    if (len > 0) std::memcpy(dst, src.data(), static_cast<size_t>(len) * sizeof(T));
}

}  // namespace collc

#endif  // COLLC_PTO_COMM_CPU_HPP
