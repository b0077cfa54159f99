// The tuned collc MPI library of every kind (libcollk, built by `collc tune`: several
// protocols per kind, one chosen per call by its decision table) against Open MPI's native
// collectives, side by side in one run: for each size (the bytes of the call's count argument:
// allreduce/broadcast data, reduce_scatter's recv, allgather's input, all_to_all(_v)'s send),
// REPS rounds of {a block of library calls, a block of native calls} on the same buffers,
// alternating. A block's time is the slowest rank's; the figure is the median over rounds of
// block time / calls; the ratio is library / native. Before timing, each result is compared
// bitwise with the native one (a wrong result stops the bench). A size no protocol of a kind
// serves (its domain) is reported as such. Built by benches/lib/vs_native.sh with
// COLLC_LIB_BENCH_TUNE=1, with -DCOLLK_CONFIG="FILE": the configuration lines of the tuning
// program (`np` in scope).
//   mpirun -np P ./kinds_vs_native [REPS]
#include <mpi.h>

#include "collk.h"
#include "race.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

static int me = 0, np = 1;

static void ok(int s) {
    if (s != COLLK_OK) {
        std::fprintf(stderr, "%s: %s\n", collk_strerror(s), collk_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

// Alternating blocks of the library call and the native one; prints one line.
static void race(const char* kind, size_t bytes, const char* protocol, int reps, int calls, const std::function<void()>& lib,
                 const std::function<void()>& native) {
    std::vector<double> l, n;
    lib();
    native();
    for (int r = 0; r < reps; ++r) {
        l.push_back(block_us(lib, calls));
        n.push_back(block_us(native, calls));
    }
    const double ml = median(l), mn = median(n);
    if (me == 0)
        std::printf("%-14s np %d %9zu B  %-24s library %12.1f us  native %12.1f us  ratio %6.2f\n", kind, np, bytes,
                    protocol, ml, mn, ml / mn);
}

static void skip(const char* kind, size_t bytes) {
    if (me == 0) std::printf("%-14s np %d %9zu B  no protocol of the library serves this count (its domain, or above the configured count)\n", kind, np, bytes);
}

// Stops the bench unless every rank's `wrong` is 0.
static void agree(long wrong, const char* kind, size_t bytes) {
    long all = 0;
    MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all != 0) {
        if (me == 0) std::fprintf(stderr, "%s: wrong result at %zu bytes (%ld elements)\n", kind, bytes, all);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static long differ(const std::vector<float>& a, const std::vector<float>& b, size_t n) {
    long w = 0;
    for (size_t i = 0; i < n; ++i) w += a[i] != b[i];
    return w;
}

struct Bufs {
    std::vector<float> in, out, want, tmp;
};

static void fill(std::vector<float>& v, size_t n, int salt) {
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((me * 31 + static_cast<int>(i % 977) + salt) % 61);
}

// One kind at one size, when protocol `p` of the library serves it (else one line saying
// none does): the native call and the library call, then their results compared bitwise on
// `m` elements (`got` against `want`), then the race.
static void kind(const char* name, size_t bytes, const char* p, int reps, int calls, const std::vector<float>& got,
                 const std::vector<float>& want, size_t m, const std::function<void()>& lib,
                 const std::function<void()>& native) {
    if (p == nullptr) {
        skip(name, bytes);
        return;
    }
    native();
    lib();
    agree(differ(got, want, m), name, bytes);
    race(name, bytes, p, reps, calls, lib, native);
}

static void reductions(collk_comm* c, Bufs& b, size_t bytes, int reps, int calls) {
    const size_t n = bytes / 4, all = n * static_cast<size_t>(np);
    const int in = static_cast<int>(n);
    fill(b.in, n, 1);
    b.tmp = b.in;
    kind("allreduce", bytes, collk_allreduce_protocol(c, n), reps, calls, b.tmp, b.want, n,
         [&] { ok(collk_allreduce(c, b.tmp.data(), n)); },
         [&] { MPI_Allreduce(b.in.data(), b.want.data(), in, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
    // The library broadcasts `in` in place; the native call broadcasts a copy of it (`want`).
    fill(b.in, n, 2);
    b.want = b.in;
    kind("broadcast", bytes, collk_broadcast_protocol(c, n), reps, calls, b.in, b.want, n,
         [&] { ok(collk_broadcast(c, b.in.data(), n, 0)); },
         [&] { MPI_Bcast(b.want.data(), in, MPI_FLOAT, 0, MPI_COMM_WORLD); });
    fill(b.in, all, 3);
    kind("reduce_scatter", bytes, collk_reduce_scatter_protocol(c, n), reps, calls, b.out, b.want, n,
         [&] { ok(collk_reduce_scatter(c, b.in.data(), all, b.out.data(), n)); },
         [&] { MPI_Reduce_scatter_block(b.in.data(), b.want.data(), in, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
}

static void exchanges(collk_comm* c, Bufs& b, size_t bytes, int reps, int calls) {
    const size_t n = bytes / 4, all = n * static_cast<size_t>(np);
    const int in = static_cast<int>(n), per = static_cast<int>(n / static_cast<size_t>(np));
    const bool blocks = n % static_cast<size_t>(np) == 0;  // all_to_all(_v): whole blocks per rank
    fill(b.in, n, 4);
    kind("allgather", bytes, collk_allgather_protocol(c, n), reps, calls, b.out, b.want, all,
         [&] { ok(collk_allgather(c, b.in.data(), n, b.out.data(), all)); },
         [&] { MPI_Allgather(b.in.data(), in, MPI_FLOAT, b.want.data(), in, MPI_FLOAT, MPI_COMM_WORLD); });
    fill(b.in, n, 5);
    kind("all_to_all", bytes, blocks ? collk_all_to_all_protocol(c, n) : nullptr, reps, calls, b.out, b.want, n,
         [&] { ok(collk_all_to_all(c, b.in.data(), n, b.out.data(), n)); },
         [&] { MPI_Alltoall(b.in.data(), per, MPI_FLOAT, b.want.data(), per, MPI_FLOAT, MPI_COMM_WORLD); });
    // Every row of every block valid (send counts at the domain's top, 16, clamped to R by the
    // protocol); the native yardstick: MPI_Alltoallv of the same blocks.
    std::vector<int32_t> sc(static_cast<size_t>(np), 16), rc(static_cast<size_t>(np), 0);
    std::vector<int> cnt(static_cast<size_t>(np), per), dis(static_cast<size_t>(np));
    for (int j = 0; j < np; ++j) dis[static_cast<size_t>(j)] = j * per;
    fill(b.in, n, 6);
    kind("all_to_all_v", bytes, blocks ? collk_all_to_all_v_protocol(c, n) : nullptr, reps, calls, b.out, b.want, n,
         [&] { ok(collk_all_to_all_v(c, b.in.data(), n, sc.data(), b.out.data(), n, rc.data())); },
         [&] {
             MPI_Alltoallv(b.in.data(), cnt.data(), dis.data(), MPI_FLOAT, b.want.data(), cnt.data(), dis.data(),
                           MPI_FLOAT, MPI_COMM_WORLD);
         });
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
    collk_config cfg = {};
#include COLLK_CONFIG
    cfg.wait_timeout_ms = 600000;
    collk_comm* c = nullptr;
    ok(collk_comm_create(MPI_COMM_WORLD, &cfg, &c));
    race("barrier", 0, collk_barrier_protocol(c, 0), reps, 200, [&] { ok(collk_barrier(c)); },
         [&] { MPI_Barrier(MPI_COMM_WORLD); });
    const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20};  // bytes
    const size_t most = (16 << 20) / 4 * static_cast<size_t>(np);
    Bufs b;
    for (auto* v : {&b.in, &b.out, &b.want, &b.tmp}) v->assign(most, 0.0f);
    for (size_t bytes : sizes) {
        const int calls = bytes <= 4096 ? 100 : bytes <= 65536 ? 30 : bytes <= (1 << 20) ? 6 : 2;
        reductions(c, b, bytes, reps, calls);
        exchanges(c, b, bytes, reps, calls);
    }
    ok(collk_comm_free(c));
    MPI_Finalize();
    return 0;
}
