// Inputs read in place against staged, side by side in one run: library `xab` (the shipped
// allgather, all_to_all and all_to_all_v, whose inputs the library reads in place from the
// caller's buffer, collc_mpi_lib.hpp ReadInPlace) on two communicators over the same
// processes, one created with COLLC_MPI_READ_IN_PLACE=0 (the input staged into its window
// every call, as before) and one with the default (read in place), and Open MPI's collective
// as the yardstick. For each kind, REPS rounds of {a block of staged calls, a block of in-place
// calls, a block of native calls} on the same buffers, alternating; a block's time is the
// slowest rank's; the figure is the median over rounds of block time / calls. Before timing,
// both library results are compared bitwise with the native one (a wrong result stops the
// bench). SIZE_KIB is the size of the call's count argument (allgather's input, all_to_all(_v)'s
// send). Built and run by benches/lib/exchange_ab.sh. A benchmark, not a test.
//   mpirun -np P ./exchange_ab REPS SIZE_KIB
#include <mpi.h>

#include "race.hpp"
#include "xab.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

static int me = 0, np = 1;

static void ok(int s, const char* what) {
    if (s != XAB_OK) {
        std::fprintf(stderr, "rank %d: %s: %s: %s\n", me, what, xab_strerror(s), xab_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

// One communicator; `in_place` sets COLLC_MPI_READ_IN_PLACE for its creation (read once, there).
static xab_comm* create(size_t n, bool in_place) {
    setenv("COLLC_MPI_READ_IN_PLACE", in_place ? "1" : "0", 1);
    xab_config cfg = {};
    cfg.allgather.m = static_cast<int64_t>(n);
    cfg.all_to_all.m = static_cast<int64_t>(n) / np;
    cfg.all_to_all_v.m = static_cast<int64_t>(n) / np;
    cfg.all_to_all_v.R = 1;
    cfg.wait_timeout_ms = 600000;
    xab_comm* c = nullptr;
    ok(xab_comm_create(MPI_COMM_WORLD, &cfg, &c), "xab_comm_create");
    return c;
}

// One kind: both libraries' results compared bitwise with the native one, then REPS rounds of
// alternating blocks of the staged, in-place and native calls; prints one line.
static void race(const char* kind, size_t bytes, int reps, int calls, xab_comm* staged, xab_comm* in_place,
                 std::vector<float>& out, const std::vector<float>& want, const std::function<int(xab_comm*)>& lib,
                 const std::function<void()>& native) {
    for (xab_comm* c : {staged, in_place}) {
        std::fill(out.begin(), out.end(), -1.0f);
        ok(lib(c), kind);
        agree(out, want, kind);
    }
    std::vector<double> s, i, n;
    for (int r = 0; r < reps; ++r) {
        s.push_back(block_us([&] { ok(lib(staged), kind); }, calls));
        i.push_back(block_us([&] { ok(lib(in_place), kind); }, calls));
        n.push_back(block_us(native, calls));
    }
    const double ms = median(s), mi = median(i), mn = median(n);
    if (me == 0)
        std::printf("%-13s np %d %9zu B  staged %11.1f us  in place %11.1f us  native %11.1f us  in place/staged %5.2f  "
                    "in place/native %5.2f\n",
                    kind, np, bytes, ms, mi, mn, mi / ms, mi / mn);
}

int main(int argc, char** argv) {
    const AbArgs ab = ab_start(&argc, &argv);
    me = ab.me;
    np = ab.np;
    const int reps = ab.reps, calls = ab.calls;
    const size_t bytes = ab.bytes, n = bytes / sizeof(float), per = n / static_cast<size_t>(np);
    if (reps < 1 || per < 1 || n % static_cast<size_t>(np) != 0) {
        if (me == 0) std::fprintf(stderr, "usage: exchange_ab REPS SIZE_KIB (SIZE_KIB * 256 a multiple of np)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    xab_comm* staged = create(n, false);
    xab_comm* in_place = create(n, true);
    const size_t all = n * static_cast<size_t>(np);
    std::vector<float> in(all), out(all), want(all);
    for (size_t i = 0; i < all; ++i) in[i] = static_cast<float>((me * 31 + static_cast<int>(i % 977)) % 61);

    MPI_Allgather(in.data(), static_cast<int>(n), MPI_FLOAT, want.data(), static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD);
    race("allgather", bytes, reps, calls, staged, in_place, out, want,
         [&](xab_comm* c) { return xab_allgather(c, in.data(), n, out.data(), all); },
         [&] { MPI_Allgather(in.data(), static_cast<int>(n), MPI_FLOAT, out.data(), static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD); });

    want.resize(n);
    MPI_Alltoall(in.data(), static_cast<int>(per), MPI_FLOAT, want.data(), static_cast<int>(per), MPI_FLOAT, MPI_COMM_WORLD);
    race("all_to_all", bytes, reps, calls, staged, in_place, out, want,
         [&](xab_comm* c) { return xab_all_to_all(c, in.data(), n, out.data(), n); },
         [&] { MPI_Alltoall(in.data(), static_cast<int>(per), MPI_FLOAT, out.data(), static_cast<int>(per), MPI_FLOAT, MPI_COMM_WORLD); });

    // R = 1: one row of `per` elements per block, every send count 1.
    std::vector<int32_t> sc(static_cast<size_t>(np), 1), rc(static_cast<size_t>(np), 0);
    std::vector<int> cnt(static_cast<size_t>(np), static_cast<int>(per)), dis(static_cast<size_t>(np));
    for (int j = 0; j < np; ++j) dis[static_cast<size_t>(j)] = j * static_cast<int>(per);
    MPI_Alltoallv(in.data(), cnt.data(), dis.data(), MPI_FLOAT, want.data(), cnt.data(), dis.data(), MPI_FLOAT, MPI_COMM_WORLD);
    race("all_to_all_v", bytes, reps, calls, staged, in_place, out, want,
         [&](xab_comm* c) { return xab_all_to_all_v(c, in.data(), n, sc.data(), out.data(), n, rc.data()); },
         [&] {
             MPI_Alltoallv(in.data(), cnt.data(), dis.data(), MPI_FLOAT, out.data(), cnt.data(), dis.data(), MPI_FLOAT,
                           MPI_COMM_WORLD);
         });
    ok(xab_comm_free(in_place), "xab_comm_free");
    ok(xab_comm_free(staged), "xab_comm_free");
    MPI_Finalize();
    return 0;
}
