// The collc MPI library (libcollmpi: allreduce_mesh + broadcast_read_complete) against Open
// MPI's MPI_Allreduce / MPI_Bcast, side by side in one run: ONE collc communicator configured
// for the largest count (16 MiB), called at every size with that size's count (counts per
// call); for each size, REPS rounds of {a block of library calls, a block of native calls} on
// the same buffers, alternating, so both see the same load. A block's time is the slowest
// rank's; the figure is the median over rounds of block time / calls, and the ratio is
// library / native of those medians. Before timing, every size's library result is compared
// bitwise with the native one (the bench refuses to time a wrong result).
//   mpirun -np P ./mpi_vs_native [REPS]
#include <mpi.h>

#include "collmpi_bench.hpp"
#include "race.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
    const size_t max_n = size_t(16) << 18;  // 16 MiB of f32
    collmpi_comm* comm = bench_comm(max_n);
    std::vector<float> a(max_n), b(max_n), want(max_n);
    const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20};  // bytes
    for (size_t bytes : sizes) {
        const size_t n = bytes / 4;
        const int calls = bytes <= 4096 ? 200 : bytes <= 65536 ? 50 : bytes <= (1 << 20) ? 8 : 2;
        // Correctness first: the library's result equals the native one, bit for bit.
        for (size_t i = 0; i < n; ++i) a[i] = static_cast<float>((me * 31 + static_cast<int>(i % 977)) % 61);
        MPI_Allreduce(a.data(), want.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        ok(collmpi_allreduce(comm, a.data(), n));
        long wrong = !std::equal(a.begin(), a.begin() + static_cast<long>(n), want.begin()), all = 0;
        for (size_t i = 0; i < n; ++i) b[i] = me == 0 ? static_cast<float>(i % 1013) : -1.0f;
        ok(collmpi_broadcast(comm, b.data(), n, 0));
        for (size_t i = 0; i < n; ++i) wrong += b[i] != static_cast<float>(i % 1013);
        MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (all != 0) {
            if (me == 0) std::fprintf(stderr, "wrong results at %zu bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        std::vector<double> lar, nar, lbc, nbc;
        for (int r = 0; r < reps; ++r) {
            lar.push_back(block_us([&] { ok(collmpi_allreduce(comm, a.data(), n)); }, calls));
            nar.push_back(block_us([&] { MPI_Allreduce(MPI_IN_PLACE, a.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, calls));
            lbc.push_back(block_us([&] { ok(collmpi_broadcast(comm, b.data(), n, 0)); }, calls));
            nbc.push_back(block_us([&] { MPI_Bcast(b.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD); }, calls));
        }
        if (me == 0) {
            const double la = median(lar), na = median(nar), lb = median(lbc), nb = median(nbc);
            std::printf("np=%d bytes=%zu calls/block=%d rounds=%d allreduce lib %.1f us native %.1f us ratio %.2f | broadcast lib %.1f us native %.1f us ratio %.2f\n",
                        np, bytes, calls, reps, la, na, la / na, lb, nb, lb / nb);
            std::fflush(stdout);
        }
    }
    ok(collmpi_comm_free(comm));
    MPI_Finalize();
    return 0;
}
