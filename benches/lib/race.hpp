// What the library-against-native benches share: a timed block of calls (the slowest rank's
// time per call) and the median of blocks.
#ifndef COLLC_BENCH_RACE_HPP
#define COLLC_BENCH_RACE_HPP

#include <mpi.h>

#include <algorithm>
#include <functional>
#include <vector>

// Microseconds per call of `calls` calls of `one`, the slowest rank's (after a barrier).
inline double block_us(const std::function<void()>& one, int calls) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < calls; ++i) one();
    double mine = (MPI_Wtime() - t0) * 1e6 / calls, worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

#endif
