// Open MPI's native MPI_Barrier, MPI_Bcast (root 0) and MPI_Allreduce (sum, in place) on
// N f32, each called CALLS times back to back after 20 warm-up calls; the slowest rank's
// time divided by CALLS is the per-call time. Built and run by benches/disciplines/run.sh.
//   mpirun -np P ./mpi_native N CALLS
#include <mpi.h>

#include "../lib/race.hpp"

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
    const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
    const int calls = argc > 2 ? std::atoi(argv[2]) : 200;
    std::vector<float> a(static_cast<size_t>(n), 1.0f);
    const double bar = per_call_us([] { MPI_Barrier(MPI_COMM_WORLD); }, calls);
    const double bc = per_call_us([&] { MPI_Bcast(a.data(), n, MPI_FLOAT, 0, MPI_COMM_WORLD); }, calls);
    const double ar = per_call_us(
        [&] { MPI_Allreduce(MPI_IN_PLACE, a.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, calls);
    if (me == 0)
        std::printf("native np=%d barrier %.2f broadcast %.2f allreduce %.2f\n", np, bar, bc, ar);
    MPI_Finalize();
    return 0;
}
