// Per-call latency and bandwidth of a collc MPI library (libcollmpi: allreduce_mesh +
// broadcast_read_complete) against Open MPI's MPI_Allreduce / MPI_Bcast on the same buffers:
// every rank calls back to back; the slowest rank's time divided by the calls is the per-call
// time. Built and run by benches/lib/run.sh.
//   mpirun -np P ./mpi_lib_bench N CALLS
#include <mpi.h>

#include "race.hpp"

#include "collmpi.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

// 20 warm-up calls, then one timed block (race.hpp).
static double per_call_us(const std::function<void()>& one, int calls) {
    for (int i = 0; i < 20; ++i) one();
    return block_us(one, calls);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int64_t N = argc > 1 ? std::atoll(argv[1]) : 256;
    const int calls = argc > 2 ? std::atoi(argv[2]) : 500;
    collmpi_config cfg = {};
    cfg.allreduce.n = N;
    cfg.allreduce.C = 1;
    cfg.allreduce.stride = 1;
    cfg.broadcast.root = 0;
    cfg.broadcast.n = N;
    collmpi_comm* comm = nullptr;
    if (collmpi_comm_create(MPI_COMM_WORLD, &cfg, &comm) != COLLMPI_OK) {
        std::fprintf(stderr, "%s\n", collmpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const size_t n = static_cast<size_t>(N);
    std::vector<float> a(n, 1.0f), b(n);
    auto check = [](int s) {
        if (s != COLLMPI_OK) {
            std::fprintf(stderr, "%s\n", collmpi_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    };
    const double lib_ar = per_call_us([&] { check(collmpi_allreduce(comm, a.data(), n)); }, calls);
    const double mpi_ar = per_call_us([&] { MPI_Allreduce(a.data(), b.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, calls);
    const double lib_bc = per_call_us([&] { check(collmpi_broadcast(comm, a.data(), n, 0)); }, calls);
    const double mpi_bc = per_call_us([&] { MPI_Bcast(a.data(), static_cast<int>(n), MPI_FLOAT, 0, MPI_COMM_WORLD); }, calls);
    const double bytes = static_cast<double>(N) * 4;
    if (me == 0)
        std::printf("mpi np=%d n=%lld calls=%d allreduce lib %.2f us %.3f GB/s MPI_Allreduce %.2f us %.3f GB/s broadcast lib %.2f us %.3f GB/s MPI_Bcast %.2f us %.3f GB/s\n",
                    np, static_cast<long long>(N), calls, lib_ar, bytes / lib_ar / 1e3, mpi_ar, bytes / mpi_ar / 1e3, lib_bc,
                    bytes / lib_bc / 1e3, mpi_bc, bytes / mpi_bc / 1e3);
    collmpi_comm_free(comm);
    MPI_Finalize();
    return 0;
}
