// 16 MiB calls of every kind but allreduce and broadcast: a library of examples/reduce_scatter,
// allgather, all_to_all and all_to_all_v configured for the largest count the bench measures
// (16 MiB in the call's count argument: reduce_scatter's recv, allgather's input,
// all_to_all(_v)'s send), then one call of each kind at that count and at 4 KiB, each result
// compared bitwise with Open MPI's collective on the same input (MPI_Reduce_scatter_block,
// MPI_Allgather, MPI_Alltoall, MPI_Alltoallv). A call outside a protocol's domain would be
// EDOMAIN. Rank 0 prints "PASS <kind> <bytes>" per call and "ok: np=..." when all passed.
//   collc emit --target mpi --lib bigm reduce_scatter.coll allgather.coll all_to_all.coll all_to_all_v.coll -o DIR
//   mpirun -np 2 ./mpi_16mib
#include "bigm.h"
#include "mpi_test.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

static int me = 0, np = 1;
static long failures = 0;

// Every rank's verdict on one call: the status and the number of wrong elements.
static void judge(const char* kind, size_t bytes, int s, long wrong) {
    const long all = sum_over_ranks(s != BIGM_OK ? 1 : wrong);
    if (s != BIGM_OK) std::fprintf(stderr, "rank %d: %s %zu B: %s: %s\n", me, kind, bytes, bigm_strerror(s), bigm_last_error());
    if (me == 0) std::printf("%s %s %zu B (%ld wrong)\n", all == 0 ? "PASS" : "FAIL", kind, bytes, all);
    failures += all != 0;
}

static long differ(const std::vector<float>& a, const std::vector<float>& b, size_t n) {
    long w = 0;
    for (size_t i = 0; i < n; ++i) w += a[i] != b[i];
    return w;
}

static void fill(std::vector<float>& v, size_t n, int salt) {
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((me * 31 + static_cast<int>(i % 977) + salt) % 61);
}

// One call of each kind with `n` elements in its count argument.
static void calls_at(bigm_comm* c, size_t n) {
    const size_t bytes = n * sizeof(float), all = n * static_cast<size_t>(np), per = n / static_cast<size_t>(np);
    std::vector<float> in(all), out(all), want(all);
    fill(in, all, 1);
    MPI_Reduce_scatter_block(in.data(), want.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    int s = bigm_reduce_scatter(c, in.data(), all, out.data(), n);
    judge("reduce_scatter", bytes, s, differ(out, want, n));

    fill(in, n, 2);
    MPI_Allgather(in.data(), static_cast<int>(n), MPI_FLOAT, want.data(), static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD);
    s = bigm_allgather(c, in.data(), n, out.data(), all);
    judge("allgather", bytes, s, differ(out, want, all));

    fill(in, n, 3);
    MPI_Alltoall(in.data(), static_cast<int>(per), MPI_FLOAT, want.data(), static_cast<int>(per), MPI_FLOAT, MPI_COMM_WORLD);
    s = bigm_all_to_all(c, in.data(), n, out.data(), n);
    judge("all_to_all", bytes, s, differ(out, want, n));

    // R = 1: one row of `per` elements per block, every send count 1.
    std::vector<int32_t> sc(static_cast<size_t>(np), 1), rc(static_cast<size_t>(np), 0);
    std::vector<int> cnt(static_cast<size_t>(np), static_cast<int>(per)), dis(static_cast<size_t>(np));
    for (int j = 0; j < np; ++j) dis[static_cast<size_t>(j)] = j * static_cast<int>(per);
    fill(in, n, 4);
    MPI_Alltoallv(in.data(), cnt.data(), dis.data(), MPI_FLOAT, want.data(), cnt.data(), dis.data(), MPI_FLOAT,
                  MPI_COMM_WORLD);
    s = bigm_all_to_all_v(c, in.data(), n, sc.data(), out.data(), n, rc.data());
    long wrong = differ(out, want, n);
    for (int32_t r : rc) wrong += r != 1;
    judge("all_to_all_v", bytes, s, wrong);
}

int main(int argc, char** argv) {
    const World w(&argc, &argv);
    me = w.me;
    np = w.np;
    const int64_t most = (int64_t(16) << 20) / 4;  // 16 MiB of f32
    bigm_config cfg = {};
    cfg.reduce_scatter.m = most;
    cfg.allgather.m = most;
    cfg.all_to_all.m = most / np;
    cfg.all_to_all_v.m = most / np;
    cfg.all_to_all_v.R = 1;
    cfg.wait_timeout_ms = 600000;
    bigm_comm* c = nullptr;
    const int s = bigm_comm_create(MPI_COMM_WORLD, &cfg, &c);
    if (s != BIGM_OK) {
        std::fprintf(stderr, "rank %d: bigm_comm_create: %s: %s\n", me, bigm_strerror(s), bigm_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    calls_at(c, static_cast<size_t>(most));
    calls_at(c, 1024);
    const int f = bigm_comm_free(c);
    if (me == 0 && failures == 0 && f == BIGM_OK) std::printf("ok: np=%d\n", np);
    MPI_Finalize();
    return failures == 0 && f == BIGM_OK ? 0 : 1;
}
