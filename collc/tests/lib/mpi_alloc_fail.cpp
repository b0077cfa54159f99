// A window allocation that fails on one rank is an error on every rank. Run under
// COLLC_MPI_TEST_FAULT=alloc:1 (the runtime's test aid: rank 1's first window allocation
// counts as failed): every rank's first collmpi_comm_create must return ESYSTEM, promptly
// (no rank waits for a window a peer lacks); a second create on the same MPI communicator
// then succeeds and its allreduce equals MPI_Allreduce. Rank 0 prints "ok: ..."; every rank
// exits 0 iff every rank saw exactly that.
#include "collmpi.h"
#include "mpi_test.hpp"

#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    const World w(&argc, &argv);
    const int me = w.me, np = w.np;
    collmpi_config cfg = {};
    cfg.allreduce.n = 100;
    cfg.allreduce.C = 1;
    cfg.allreduce.stride = 1;
    cfg.broadcast.root = 0;
    cfg.broadcast.n = 100;
    cfg.wait_timeout_ms = 600000;
    long wrong = 0;
    collmpi_comm* c = nullptr;
    const double t0 = MPI_Wtime();
    const int s = collmpi_comm_create(MPI_COMM_WORLD, &cfg, &c);
    const double took = MPI_Wtime() - t0;
    if (s != COLLMPI_ESYSTEM || c != nullptr || std::strstr(collmpi_last_error(), "window") == nullptr) {
        std::fprintf(stderr, "rank %d: first create returned %s (%s), want ESYSTEM naming the window\n", me,
                     collmpi_strerror(s), collmpi_last_error());
        ++wrong;
    } else {
        std::printf("rank %d: ESYSTEM after %.3f s: %s\n", me, took, collmpi_last_error());
    }
    if (took > 30.0) {
        std::fprintf(stderr, "rank %d: the failed create took %.1f s\n", me, took);
        ++wrong;
    }
    if (collmpi_comm_create(MPI_COMM_WORLD, &cfg, &c) != COLLMPI_OK) {
        std::fprintf(stderr, "rank %d: second create: %s\n", me, collmpi_last_error());
        ++wrong;
    } else {
        std::vector<float> a(100), want(100);
        for (int i = 0; i < 100; ++i) a[i] = static_cast<float>(me * 5 + i % 11);
        MPI_Allreduce(a.data(), want.data(), 100, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (collmpi_allreduce(c, a.data(), a.size()) != COLLMPI_OK || a != want) {
            std::fprintf(stderr, "rank %d: allreduce after the failed create: %s\n", me, collmpi_last_error());
            ++wrong;
        }
        if (collmpi_comm_free(c) != COLLMPI_OK) ++wrong;
    }
    const long total = sum_over_ranks(wrong);
    if (me == 0 && total == 0)
        std::printf("ok: np=%d: the failed allocation was ESYSTEM on every rank; a second communicator works\n", np);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
