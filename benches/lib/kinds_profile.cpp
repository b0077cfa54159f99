// Where a call of the tuned collc MPI library spends its time, every kind that takes its
// count per call (allreduce, broadcast, reduce_scatter, allgather, all_to_all, all_to_all_v),
// with Open MPI native and a memcpy of the call's bytes as yardsticks in the same run. The
// library is libcollk as `collc tune` built it (several protocols per kind, one chosen per
// call by its decision table), rebuilt from its sources with -DCOLLC_MPI_PROFILE by
// benches/lib/vs_native.sh (COLLC_LIB_BENCH_TUNE=1 COLLC_LIB_BENCH_PROGRAM=profile): it then
// times its staging copies and each call's protocol into a per-process table,
// collc_mpi_profile() (backend/runtime/mpi/collc_mpi_lib.hpp), found here with dlsym. This
// program also times libc's sched_yield and nanosleep (timing.hpp), as profile.cpp does.
//
// For each size (the bytes of the call's count argument, as in kinds_vs_native.cpp) and kind,
// REPS rounds of {a block of library calls, a block of native calls, a block of memcpys of the
// size} alternate; the table is read around the library blocks only. A block's time is this
// rank's wall time over it; printed per call, averaged over rounds and ranks (so the buckets
// add up to the wall): the library and native times and their ratio; the staging copy in (the
// caller's buffer into the window, before the protocol) and out (the window into the caller's
// buffer, after it); the waits (the runtime's wait(): its spin, sched_yield and nanosleep);
// the rest (wall - copies - waits: the protocol's own data movement and reductions, and the
// call's entry: argument checks, call records, the decision table); and the memcpy. Then a
// detail line: of the waits, sched_yield + nanosleep; the protocol without its waits; the
// entry; the bytes staged in and out and moved by the protocol's gets and puts per call. A
// benchmark: nothing is asserted about time (kinds_vs_native.cpp checks the results).
//   mpirun -np P ./kinds_profile [REPS] [SIZE_KIB...]     (default 5, 1024 16384)
#include <mpi.h>

#include "collk.h"
#include "timing.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

// The library's table (collc_mpi_lib.hpp, COLLC_MPI_PROFILE): the same fields in the same order.
struct collc_mpi_profile_table {
    int64_t calls, kernel_ns, wait_ns, moved_bytes;
    int64_t copy_in_ns, copy_in_bytes, copies_in;
    int64_t copy_out_ns, copy_out_bytes, copies_out;
};

namespace {

int me = 0, np = 1;

void ok(int s) {
    if (s != COLLK_OK) {
        std::fprintf(stderr, "%s: %s\n", collk_strerror(s), collk_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

// The library's table, or null when it was built without COLLC_MPI_PROFILE.
collc_mpi_profile_table* table() {
    using Fn = collc_mpi_profile_table* (*)();
    static auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "collc_mpi_profile"));
    return fn != nullptr ? fn() : nullptr;
}

// Per-call figures of one kind at one size, this rank's sums over rounds (then averaged).
enum Col {
    kLib, kNative, kCopyIn, kCopyOut, kWait, kMemcpy, kYield, kKernel, kInBytes, kOutBytes, kMoved, kCols
};

// Wall microseconds per call of a block on this rank; `waits`: sched_yield and nanosleep
// are timed during it (not during the barrier before it).
double block(const std::function<void()>& one, int calls, bool waits = false) {
    MPI_Barrier(MPI_COMM_WORLD);
    g_waits.on = waits;
    const double t0 = now_ns();
    for (int i = 0; i < calls; ++i) one();
    const double us = (now_ns() - t0) / 1e3 / calls;
    g_waits.on = false;
    return us;
}

// A library block, the table and the waits read around it: adds its per-call figures to `s`.
void lib_block(const std::function<void()>& lib, int calls, double* s) {
    collc_mpi_profile_table before = {};
    if (table() != nullptr) before = *table();
    g_waits = Waits();
    s[kLib] += block(lib, calls, true);
    s[kYield] += (g_waits.ns[0] + g_waits.ns[1]) / 1e3 / calls;
    if (table() == nullptr) return;
    const collc_mpi_profile_table& a = *table();
    const double c = calls;
    s[kCopyIn] += double(a.copy_in_ns - before.copy_in_ns) / 1e3 / c;
    s[kCopyOut] += double(a.copy_out_ns - before.copy_out_ns) / 1e3 / c;
    s[kWait] += double(a.wait_ns - before.wait_ns) / 1e3 / c;
    s[kKernel] += double(a.kernel_ns - before.kernel_ns) / 1e3 / c;
    s[kInBytes] += double(a.copy_in_bytes - before.copy_in_bytes) / c;
    s[kOutBytes] += double(a.copy_out_bytes - before.copy_out_bytes) / c;
    s[kMoved] += double(a.moved_bytes - before.moved_bytes) / c;
}

// REPS rounds of {library, native, memcpy} blocks; prints the averages over rounds and ranks.
void profile(const char* kind, size_t bytes, const char* protocol, int reps, int calls,
             const std::function<void()>& lib, const std::function<void()>& native, std::vector<float>& scratch) {
    if (protocol == nullptr) {
        if (me == 0) std::printf("%-13s np %d %9zu B  no protocol of the library serves this count\n", kind, np, bytes);
        return;
    }
    lib();  // the first call at a new count waits for every rank
    native();
    double s[kCols] = {};
    std::vector<float> src(bytes / 4, 1.0f);
    for (int r = 0; r < reps; ++r) {
        lib_block(lib, calls, s);
        s[kNative] += block(native, calls);
        s[kMemcpy] += block([&] { std::memcpy(scratch.data(), src.data(), bytes); }, calls);
    }
    double sum[kCols];
    MPI_Reduce(s, sum, kCols, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me != 0) return;
    for (double& x : sum) x /= double(reps) * np;
    const double rest = sum[kLib] - sum[kCopyIn] - sum[kCopyOut] - sum[kWait];
    const double entry = sum[kLib] - sum[kCopyIn] - sum[kCopyOut] - sum[kKernel];
    std::printf("%-13s np %d %9zu B  %-26s lib %10.1f  native %10.1f  ratio %5.2f  copy-in %9.1f  copy-out %9.1f  "
                "wait %9.1f  rest %9.1f  memcpy %8.1f us\n",
                kind, np, bytes, protocol, sum[kLib], sum[kNative], sum[kLib] / sum[kNative], sum[kCopyIn],
                sum[kCopyOut], sum[kWait], rest, sum[kMemcpy]);
    std::printf("%-13s   of the waits sched_yield+nanosleep %.1f us; protocol without waits %.1f us; entry %.1f us; "
                "staged in %.0f B, out %.0f B, moved by gets/puts %.0f B per call\n",
                "", sum[kYield], sum[kKernel] - sum[kWait], entry, sum[kInBytes], sum[kOutBytes], sum[kMoved]);
    std::fflush(stdout);
}

struct Bufs {
    std::vector<float> in, out, want, scratch;
};

void fill(std::vector<float>& v, size_t n, int salt) {
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((me * 31 + static_cast<int>(i % 977) + salt) % 61);
}

void reductions(collk_comm* c, Bufs& b, size_t bytes, int reps, int calls) {
    const size_t n = bytes / 4, all = n * static_cast<size_t>(np);
    const int in = static_cast<int>(n);
    fill(b.in, all, 1);
    profile("allreduce", bytes, collk_allreduce_protocol(c, n), reps, calls,
            [&] { ok(collk_allreduce(c, b.out.data(), n)); },
            [&] { MPI_Allreduce(b.in.data(), b.want.data(), in, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, b.scratch);
    profile("broadcast", bytes, collk_broadcast_protocol(c, n), reps, calls,
            [&] { ok(collk_broadcast(c, b.out.data(), n, 0)); },
            [&] { MPI_Bcast(b.want.data(), in, MPI_FLOAT, 0, MPI_COMM_WORLD); }, b.scratch);
    profile("reduce_scatter", bytes, collk_reduce_scatter_protocol(c, n), reps, calls,
            [&] { ok(collk_reduce_scatter(c, b.in.data(), all, b.out.data(), n)); },
            [&] { MPI_Reduce_scatter_block(b.in.data(), b.want.data(), in, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); },
            b.scratch);
}

void exchanges(collk_comm* c, Bufs& b, size_t bytes, int reps, int calls) {
    const size_t n = bytes / 4, all = n * static_cast<size_t>(np);
    const int in = static_cast<int>(n), per = static_cast<int>(n / static_cast<size_t>(np));
    const bool blocks = n % static_cast<size_t>(np) == 0;  // all_to_all(_v): whole blocks per rank
    profile("allgather", bytes, collk_allgather_protocol(c, n), reps, calls,
            [&] { ok(collk_allgather(c, b.in.data(), n, b.out.data(), all)); },
            [&] { MPI_Allgather(b.in.data(), in, MPI_FLOAT, b.want.data(), in, MPI_FLOAT, MPI_COMM_WORLD); },
            b.scratch);
    profile("all_to_all", bytes, blocks ? collk_all_to_all_protocol(c, n) : nullptr, reps, calls,
            [&] { ok(collk_all_to_all(c, b.in.data(), n, b.out.data(), n)); },
            [&] { MPI_Alltoall(b.in.data(), per, MPI_FLOAT, b.want.data(), per, MPI_FLOAT, MPI_COMM_WORLD); },
            b.scratch);
    // Every row of every block valid, as in kinds_vs_native.cpp.
    std::vector<int32_t> sc(static_cast<size_t>(np), 16), rc(static_cast<size_t>(np), 0);
    std::vector<int> cnt(static_cast<size_t>(np), per), dis(static_cast<size_t>(np));
    for (int j = 0; j < np; ++j) dis[static_cast<size_t>(j)] = j * per;
    profile("all_to_all_v", bytes, blocks ? collk_all_to_all_v_protocol(c, n) : nullptr, reps, calls,
            [&] { ok(collk_all_to_all_v(c, b.in.data(), n, sc.data(), b.out.data(), n, rc.data())); },
            [&] {
                MPI_Alltoallv(b.in.data(), cnt.data(), dis.data(), MPI_FLOAT, b.want.data(), cnt.data(), dis.data(),
                              MPI_FLOAT, MPI_COMM_WORLD);
            },
            b.scratch);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
    std::vector<size_t> sizes;  // bytes
    for (int i = 2; i < argc; ++i) sizes.push_back(size_t(std::atol(argv[i])) << 10);
    if (sizes.empty()) sizes = {size_t(1) << 20, size_t(16) << 20};
    if (me == 0 && table() == nullptr)
        std::printf("libcollk was built without COLLC_MPI_PROFILE: the copies and waits read 0, the rest is the call\n");
    collk_config cfg = {};
#include COLLK_CONFIG
    cfg.wait_timeout_ms = 600000;
    collk_comm* c = nullptr;
    ok(collk_comm_create(MPI_COMM_WORLD, &cfg, &c));
    size_t most = 0;
    for (size_t s : sizes) most = s > most ? s : most;
    Bufs b;
    for (auto* v : {&b.in, &b.out, &b.want}) v->assign(most / 4 * static_cast<size_t>(np), 0.0f);
    b.scratch.assign(most / 4, 0.0f);
    for (size_t bytes : sizes) {
        const int calls = bytes <= 65536 ? 30 : bytes <= (1 << 20) ? 6 : 2;
        reductions(c, b, bytes, reps, calls);
        exchanges(c, b, bytes, reps, calls);
    }
    ok(collk_comm_free(c));
    MPI_Finalize();
    return 0;
}
