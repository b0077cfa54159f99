// Where a call of the collc MPI library (libcollmpi: allreduce_mesh + broadcast_read_complete)
// spends its time: this program defines the MPI one-sided functions the runtime calls
// (MPI_Win_flush, MPI_Win_flush_all, MPI_Accumulate, MPI_Fetch_and_op, MPI_Get, MPI_Put,
// MPI_Win_sync) on top of their PMPI_ entry points, and libc's sched_yield and nanosleep on
// top of the next definition (dlsym RTLD_NEXT, timing.hpp), each adding its wall time and
// count to a per-process table. libcollmpi.so's calls bind to these definitions (the executable's
// symbols come first). For each size, REPS rounds of {a block of library calls, a block of
// Open MPI native calls} alternate; the table is read around the library blocks only. Printed
// per call, averaged over ranks and rounds: the wall time, each function's time and count,
// and the rest (wall minus the timed functions: staging copies, reductions, bookkeeping,
// and the time a rank is descheduled outside those functions). A memcpy of the call's bytes,
// timed in the same run, is the yardstick for the staging copies. A benchmark: nothing is
// asserted about time.
//   mpirun -np P ./profile [REPS]
#include <mpi.h>

#include "collmpi_bench.hpp"
#include "timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

enum Fn { kFlush, kFlushAll, kAccumulate, kFetchOp, kGet, kPut, kSync, kYield, kSleep, kFns };
const char* const kNames[kFns] = {"Win_flush", "Win_flush_all", "Accumulate", "Fetch_and_op", "Get",
                                  "Put",       "Win_sync",      "sched_yield", "nanosleep"};

double g_ns[kFns];
long g_n[kFns];
bool g_on = false;

struct Timed : ScopeTimer {
    explicit Timed(Fn f) : ScopeTimer(g_on, &g_ns[f], &g_n[f]) {}
};

}  // namespace

extern "C" {
int MPI_Win_flush(int rank, MPI_Win win) {
    Timed t(kFlush);
    return PMPI_Win_flush(rank, win);
}
int MPI_Win_flush_all(MPI_Win win) {
    Timed t(kFlushAll);
    return PMPI_Win_flush_all(win);
}
int MPI_Accumulate(const void* o, int oc, MPI_Datatype ot, int r, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op,
                   MPI_Win w) {
    Timed t(kAccumulate);
    return PMPI_Accumulate(o, oc, ot, r, d, tc, tt, op, w);
}
int MPI_Fetch_and_op(const void* o, void* res, MPI_Datatype dt, int r, MPI_Aint d, MPI_Op op, MPI_Win w) {
    Timed t(kFetchOp);
    return PMPI_Fetch_and_op(o, res, dt, r, d, op, w);
}
int MPI_Get(void* o, int oc, MPI_Datatype ot, int r, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Win w) {
    Timed t(kGet);
    return PMPI_Get(o, oc, ot, r, d, tc, tt, w);
}
int MPI_Put(const void* o, int oc, MPI_Datatype ot, int r, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Win w) {
    Timed t(kPut);
    return PMPI_Put(o, oc, ot, r, d, tc, tt, w);
}
int MPI_Win_sync(MPI_Win win) {
    Timed t(kSync);
    return PMPI_Win_sync(win);
}
}

// Wall microseconds per call of a block (this rank), the table read around it (sched_yield
// and nanosleep: timing.hpp's g_waits, added into the table after the block).
static double block(const std::function<void()>& one, int calls, bool profile) {
    MPI_Barrier(MPI_COMM_WORLD);
    g_on = profile;
    g_waits = Waits();
    g_waits.on = profile;
    const double t0 = now_ns();
    for (int i = 0; i < calls; ++i) one();
    const double us = (now_ns() - t0) / 1e3 / calls;
    g_on = false;
    g_waits.on = false;
    for (int w = 0; w < 2; ++w) {
        g_ns[kYield + w] += g_waits.ns[w];
        g_n[kYield + w] += g_waits.n[w];
    }
    return us;
}

// Averages over ranks (printed by rank 0): wall, then per function time and count.
static void report(const char* what, size_t bytes, double wall_us, double native_us, double memcpy_us, int calls_total) {
    int np = 1, me = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    double mine[2 * kFns + 3], sum[2 * kFns + 3];
    for (int f = 0; f < kFns; ++f) {
        mine[f] = g_ns[f] / 1e3 / calls_total;
        mine[kFns + f] = double(g_n[f]) / calls_total;
    }
    mine[2 * kFns] = wall_us;
    mine[2 * kFns + 1] = native_us;
    mine[2 * kFns + 2] = memcpy_us;
    MPI_Reduce(mine, sum, 2 * kFns + 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me != 0) return;
    for (double& x : sum) x /= np;
    double timed = 0;
    std::printf("np=%d %s bytes=%zu: lib %.1f us/call, native %.1f us/call (ratio %.2f), memcpy of the bytes %.1f us\n", np,
                what, bytes, sum[2 * kFns], sum[2 * kFns + 1], sum[2 * kFns] / sum[2 * kFns + 1], sum[2 * kFns + 2]);
    for (int f = 0; f < kFns; ++f) {
        timed += sum[f];
        std::printf("    %-14s %9.1f us/call %5.1f%%  %8.1f calls/call\n", kNames[f], sum[f], 100 * sum[f] / sum[2 * kFns],
                    sum[kFns + f]);
    }
    const double rest = sum[2 * kFns] - timed;
    std::printf("    %-14s %9.1f us/call %5.1f%%\n", "rest", rest, 100 * rest / sum[2 * kFns]);
    std::fflush(stdout);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
    const size_t max_n = size_t(1) << 18;  // 1 MiB of f32
    collmpi_comm* comm = bench_comm(max_n);
    std::vector<float> a(max_n, 1.0f), b(max_n, 1.0f), c(max_n);
    for (size_t bytes : {size_t(4096), size_t(65536), size_t(1) << 20}) {
        const size_t n = bytes / 4;
        const int calls = bytes <= 4096 ? 200 : bytes <= 65536 ? 40 : 6;
        for (int coll = 0; coll < 2; ++coll) {
            auto lib = [&] {
                if (coll == 0) ok(collmpi_allreduce(comm, a.data(), n));
                else ok(collmpi_broadcast(comm, b.data(), n, 0));
            };
            auto native = [&] {
                if (coll == 0) MPI_Allreduce(MPI_IN_PLACE, a.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                else MPI_Bcast(b.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD);
            };
            lib();  // the first call at a new count waits for every rank
            std::fill(g_ns, g_ns + kFns, 0.0);
            std::fill(g_n, g_n + kFns, 0L);
            double lw = 0, nw = 0, mw = 0;
            for (int r = 0; r < reps; ++r) {
                lw += block(lib, calls, true);
                nw += block(native, calls, false);
                mw += block([&] { std::memcpy(c.data(), coll == 0 ? a.data() : b.data(), bytes); }, calls, false);
            }
            report(coll == 0 ? "allreduce" : "broadcast", bytes, lw / reps, nw / reps, mw / reps, calls * reps);
        }
    }
    ok(collmpi_comm_free(comm));
    MPI_Finalize();
    return 0;
}
