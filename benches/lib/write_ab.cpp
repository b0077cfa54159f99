// Outputs written in place against copied out, side by side in one run: library `wab` (the
// pulled allgather, the shipped push allgather, allreduce_allpairs and credit_window_pipeline;
// built and run by COLLC_LIB_BENCH_AB=write benches/lib/exchange_ab.sh) on two communicators
// over the same processes, one created with COLLC_MPI_WRITE_IN_PLACE=0 (each output copied
// out of its window after the kernel, as before) and one with the default (the pulled
// allgather's target, the all-pairs allreduce's and the credit-window broadcast's data are the
// caller's buffer during the call, collc_mpi_lib.hpp WriteInPlace), and Open MPI's collective
// as the yardstick; for allgather also the push allgather (its input read in place, its output
// copied out: what the tuned library runs), pinned on a third communicator. For each kind,
// REPS rounds of one block of calls per contender on the same buffers, alternating; a block's
// time is the slowest rank's; the figure is the median over rounds of block time / calls.
// Before timing, every library result is compared bitwise with the native one (a wrong result
// stops the bench; small integers: every summation order is exact). SIZE_KIB is the size of
// the call's count argument (allgather's input, the allreduce's and broadcast's data); a kind
// whose verified domain does not reach it is named and left out. A benchmark, not a test.
//   mpirun -np P ./write_ab REPS SIZE_KIB
#include <mpi.h>

#include "race.hpp"
#include "wab.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

static int me = 0, np = 1;

static void ok(int s, const char* what) {
    if (s != WAB_OK) {
        std::fprintf(stderr, "rank %d: %s: %s: %s\n", me, what, wab_strerror(s), wab_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

// The verified domains of the protocols (their `param ... in 1..=N`).
static const size_t kAllgatherMost = 4194304, kAllreduceMost = 262144, kBroadcastMost = 65536;

// One communicator; `in_place` sets COLLC_MPI_WRITE_IN_PLACE for its creation (read once,
// there). A kind whose domain does not reach n is configured at 1 and not called.
static wab_comm* create(size_t n, bool in_place) {
    setenv("COLLC_MPI_WRITE_IN_PLACE", in_place ? "1" : "0", 1);
    wab_config cfg = {};
    cfg.allgather.m = static_cast<int64_t>(std::min(n, kAllgatherMost));
    cfg.pull_allgather.m = static_cast<int64_t>(std::min(n, kAllgatherMost));
    cfg.allreduce.n = static_cast<int64_t>(n <= kAllreduceMost ? n : 1);
    cfg.broadcast.n = static_cast<int64_t>(n <= kBroadcastMost ? n : 1);
    cfg.broadcast.root = 0;
    cfg.wait_timeout_ms = 600000;
    wab_comm* c = nullptr;
    ok(wab_comm_create(MPI_COMM_WORLD, &cfg, &c), "wab_comm_create");
    ok(wab_allgather_pin(c, "pull_allgather"), "wab_allgather_pin");
    return c;
}

using Contender = std::pair<const char*, std::function<void()>>;

// One kind: REPS rounds of alternating blocks of every contender (the last is the native
// yardstick); prints one line with each median and its ratio to the native one.
static void race(const char* kind, size_t bytes, int reps, int calls, const std::vector<Contender>& all) {
    std::vector<std::vector<double>> t(all.size());
    for (int r = 0; r < reps; ++r)
        for (size_t i = 0; i < all.size(); ++i) t[i].push_back(block_us(all[i].second, calls));
    const double native = median(t.back());
    if (me != 0) return;
    std::printf("%-10s np %d %9zu B", kind, np, bytes);
    for (size_t i = 0; i < all.size(); ++i) {
        const double m = median(t[i]);
        std::printf("  %s %.1f us (%.2f)", all[i].first, m, m / native);
    }
    std::printf("\n");
}

int main(int argc, char** argv) {
    const AbArgs ab = ab_start(&argc, &argv);
    me = ab.me;
    np = ab.np;
    const int reps = ab.reps, calls = ab.calls;
    const size_t bytes = ab.bytes, n = bytes / sizeof(float);
    if (reps < 1 || n < 1 || n > kAllgatherMost) {
        if (me == 0) std::fprintf(stderr, "usage: write_ab REPS SIZE_KIB (1..=16384)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    wab_comm* copied = create(n, false);
    wab_comm* in_place = create(n, true);
    wab_comm* pushed = create(n, true);
    ok(wab_allgather_pin(pushed, "allgather"), "wab_allgather_pin");
    const size_t all = n * static_cast<size_t>(np);
    std::vector<float> in(n), out(all, -1.0f), want(all);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>((me * 31 + static_cast<int>(i % 977)) % 61);

    MPI_Allgather(in.data(), static_cast<int>(n), MPI_FLOAT, want.data(), static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD);
    auto gather = [&](wab_comm* c) { return [&, c] { ok(wab_allgather(c, in.data(), n, out.data(), all), "allgather"); }; };
    const std::vector<Contender> ag = {
        {"push", gather(pushed)},
        {"pulled copied", gather(copied)},
        {"pulled in place", gather(in_place)},
        {"native", [&] { MPI_Allgather(in.data(), static_cast<int>(n), MPI_FLOAT, out.data(), static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD); }}};
    for (size_t i = 0; i + 1 < ag.size(); ++i) {
        std::fill(out.begin(), out.end(), -1.0f);
        ag[i].second();
        agree(out, want, std::string("allgather ") + ag[i].first);
    }
    race("allgather", bytes, reps, calls, ag);

    // The allreduce and broadcast overwrite their buffer: each call starts from a copy of `in`.
    std::vector<float> data(n);
    if (n <= kAllreduceMost) {
        std::vector<float> sum(n);
        MPI_Allreduce(in.data(), sum.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        auto reduce = [&](wab_comm* c) {
            return [&, c] {
                std::copy(in.begin(), in.end(), data.begin());
                ok(wab_allreduce(c, data.data(), n), "allreduce");
            };
        };
        const std::vector<Contender> ar = {
            {"copied", reduce(copied)},
            {"in place", reduce(in_place)},
            {"native", [&] {
                 std::copy(in.begin(), in.end(), data.begin());
                 MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
             }}};
        for (size_t i = 0; i + 1 < ar.size(); ++i) {
            ar[i].second();
            agree(data, sum, std::string("allreduce ") + ar[i].first);
        }
        race("allreduce", bytes, reps, calls, ar);
    } else if (me == 0) {
        std::printf("allreduce  np %d %9zu B  left out: allreduce_allpairs is verified for n <= %zu\n", np, bytes, kAllreduceMost);
    }
    if (n <= kBroadcastMost) {
        std::vector<float> root_in(in);
        MPI_Bcast(root_in.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD);
        auto bcast = [&](wab_comm* c) { return [&, c] { ok(wab_broadcast(c, data.data(), n, 0), "broadcast"); }; };
        const std::vector<Contender> bc = {
            {"copied", bcast(copied)},
            {"in place", bcast(in_place)},
            {"native", [&] { MPI_Bcast(data.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD); }}};
        for (size_t i = 0; i + 1 < bc.size(); ++i) {
            data = me == 0 ? in : std::vector<float>(n, -1.0f);
            bc[i].second();
            agree(data, root_in, std::string("broadcast ") + bc[i].first);
        }
        if (me == 0) data = in;
        race("broadcast", bytes, reps, calls, bc);
    } else if (me == 0) {
        std::printf("broadcast  np %d %9zu B  left out: credit_window_pipeline is verified for n <= %zu\n", np, bytes, kBroadcastMost);
    }
    ok(wab_comm_free(pushed), "wab_comm_free");
    ok(wab_comm_free(in_place), "wab_comm_free");
    ok(wab_comm_free(copied), "wab_comm_free");
    MPI_Finalize();
    return 0;
}
