// What the library-against-native benches share: a timed block of calls (the slowest rank's
// time per call), the median of blocks, a result check on every rank and the A/B benches'
// arguments.
#ifndef COLLC_BENCH_RACE_HPP
#define COLLC_BENCH_RACE_HPP

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
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

// Stops the bench (MPI_Abort) unless `got` equals `want` on every rank (collective).
inline void agree(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
    long wrong = 0, all = 0;
    for (size_t i = 0; i < want.size(); ++i) wrong += got[i] != want[i];
    MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all != 0) {
        int me = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me == 0) std::fprintf(stderr, "%s: wrong result (%ld elements)\n", what.c_str(), all);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

// An A/B bench's start: MPI initialised, this process's rank and the world's size, and its
// arguments `REPS SIZE_KIB` (defaults 5 and 1024): the rounds, the bytes of a call's count
// argument, and the calls per block (8 MiB a block, 4..400 calls).
struct AbArgs {
    int me = 0, np = 1;
    int reps = 5;
    size_t bytes = 0;
    int calls = 0;
};
inline AbArgs ab_start(int* argc, char*** argv) {
    AbArgs a;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &a.me);
    MPI_Comm_size(MPI_COMM_WORLD, &a.np);
    a.reps = *argc > 1 ? std::atoi((*argv)[1]) : 5;
    a.bytes = (*argc > 2 ? static_cast<size_t>(std::atoll((*argv)[2])) : 1024) * 1024;
    a.calls = static_cast<int>(std::min<size_t>(400, std::max<size_t>(4, (size_t(8) << 20) / std::max<size_t>(a.bytes, 1))));
    return a;
}

#endif
