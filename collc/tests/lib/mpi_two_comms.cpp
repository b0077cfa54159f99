// Two collc MPI communicators in one process, used alternately: one on MPI_COMM_WORLD and one
// on a split of it (ranks of equal parity), each on its own duplicated MPI_Comm with its own
// windows. Every allreduce is compared bitwise with MPI_Allreduce on the same communicator,
// every broadcast with the root's input. Run with mpirun -np 4 (or 2: the split then has one
// rank). Rank 0 prints "ok: ..."; every rank exits 0 iff every result was right.
#include "collmpi.h"
#include "mpi_test.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    const World w(&argc, &argv);
    const int me = w.me, np = w.np;
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    int hme = 0, hnp = 1;
    MPI_Comm_rank(half, &hme);
    MPI_Comm_size(half, &hnp);
    const int iters = argc > 1 ? std::atoi(argv[1]) : 50;

    collmpi_config cfg = {};
    cfg.allreduce.n = 500;
    cfg.allreduce.C = 1;
    cfg.allreduce.stride = 1;
    cfg.broadcast.root = 0;
    cfg.broadcast.n = 300;
    cfg.wait_timeout_ms = 20000;
    collmpi_comm* world = nullptr;
    collmpi_comm* split = nullptr;
    if (collmpi_comm_create(MPI_COMM_WORLD, &cfg, &world) != COLLMPI_OK ||
        collmpi_comm_create(half, &cfg, &split) != COLLMPI_OK) {
        std::fprintf(stderr, "rank %d: collmpi_comm_create: %s\n", me, collmpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::vector<float> a(collmpi_allreduce_count(world)), want(a.size()), in(a.size()), b(collmpi_broadcast_count(split));
    long wrong = 0;
    for (int it = 0; it < iters && wrong == 0; ++it) {
        // Alternately: world allreduce, split allreduce, split broadcast, world broadcast.
        for (int which = 0; which < 2 && wrong == 0; ++which) {
            collmpi_comm* c = which == 0 ? world : split;
            MPI_Comm mc = which == 0 ? MPI_COMM_WORLD : half;
            for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((me * 3 + static_cast<int>(i) + it + which) % 19);
            a = in;
            int s = collmpi_allreduce(c, a.data(), a.size());
            if (s != COLLMPI_OK) {
                std::fprintf(stderr, "rank %d iteration %d: allreduce on %s: %s: %s\n", me, it, which ? "split" : "world", collmpi_strerror(s), collmpi_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_Allreduce(in.data(), want.data(), static_cast<int>(in.size()), MPI_FLOAT, MPI_SUM, mc);
            for (size_t i = 0; i < a.size() && wrong == 0; ++i)
                if (a[i] != want[i]) {
                    std::fprintf(stderr, "rank %d iteration %d: %s allreduce[%zu] = %g, MPI_Allreduce = %g\n", me, it, which ? "split" : "world", i, a[i], want[i]);
                    ++wrong;
                }
        }
        for (int which = 1; which >= 0 && wrong == 0; --which) {
            collmpi_comm* c = which == 0 ? world : split;
            const int rank = which == 0 ? me : hme;
            for (size_t i = 0; i < b.size(); ++i) b[i] = rank == 0 ? static_cast<float>((static_cast<int>(i) + it + which) % 7) : -1.0f;
            int s = collmpi_broadcast(c, b.data(), b.size(), 0);
            if (s != COLLMPI_OK) {
                std::fprintf(stderr, "rank %d iteration %d: broadcast on %s: %s: %s\n", me, it, which ? "split" : "world", collmpi_strerror(s), collmpi_last_error());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (size_t i = 0; i < b.size() && wrong == 0; ++i)
                if (b[i] != static_cast<float>((static_cast<int>(i) + it + which) % 7)) {
                    std::fprintf(stderr, "rank %d iteration %d: %s broadcast[%zu] = %g\n", me, it, which ? "split" : "world", i, b[i]);
                    ++wrong;
                }
        }
    }
    const int fs = collmpi_comm_free(split);
    const int fw = collmpi_comm_free(world);
    if (fs != COLLMPI_OK || fw != COLLMPI_OK) {
        std::fprintf(stderr, "rank %d: collmpi_comm_free: %s\n", me, collmpi_last_error());
        ++wrong;
    }
    const long total = sum_over_ranks(wrong);
    if (me == 0 && total == 0)
        std::printf("ok: np=%d, split of %d: %d iterations of world/split allreduce and broadcast, alternately, every result right\n", np, hnp, iters);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
