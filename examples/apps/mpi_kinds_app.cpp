// An MPI application calling a collc MPI library's reduce_scatter and all_to_all_v in a loop,
// each result compared bitwise with Open MPI's native collective on the same inputs
// (MPI_Reduce_scatter_block; MPI_Alltoallv with the counts exchanged by MPI_Alltoall), and
// both timed per call (after a warm-up tenth of the iterations).
//
//   collc emit --target mpi --lib kindsmpi examples/reduce_scatter.coll examples/all_to_all_v.coll -o DIR
//   mpicxx -std=c++17 -O2 examples/apps/mpi_kinds_app.cpp $(PKG_CONFIG_PATH=DIR pkg-config --cflags --libs kindsmpi) -o app
//   mpirun -np 4 ./app [M] [ITERS] [R]     (default 1024 200 4)
// Rank 0 prints "ok: ..." and every rank exits 0, or the first wrong element is named.
#include <mpi.h>

#include "kindsmpi.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int64_t M = argc > 1 ? std::atoll(argv[1]) : 1024;
    const int iters = argc > 2 ? std::atoi(argv[2]) : 200;
    const int R = argc > 3 ? std::atoi(argv[3]) : 4;

    kindsmpi_config cfg = {};
    cfg.reduce_scatter.m = M;
    cfg.all_to_all_v.m = M;
    cfg.all_to_all_v.R = R;
    cfg.wait_timeout_ms = 20000;
    kindsmpi_comm* comm = nullptr;
    if (kindsmpi_comm_create(MPI_COMM_WORLD, &cfg, &comm) != KINDSMPI_OK) {
        std::fprintf(stderr, "rank %d: kindsmpi_comm_create: %s\n", me, kindsmpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::vector<float> send(kindsmpi_reduce_scatter_send_count(comm)), recv(kindsmpi_reduce_scatter_recv_count(comm)), want(recv.size());
    std::vector<float> vs(kindsmpi_all_to_all_v_send_count(comm)), vr(kindsmpi_all_to_all_v_recv_count(comm)), vw(vr.size());
    std::vector<int32_t> sc(static_cast<size_t>(np)), rc(static_cast<size_t>(np)), wc(static_cast<size_t>(np));
    std::vector<int> scnt(static_cast<size_t>(np)), sdis(static_cast<size_t>(np)), rcnt(static_cast<size_t>(np)), rdis(static_cast<size_t>(np));
    const int64_t block = R * M;  // elements per destination block
    long wrong = 0;
    double t_rs = 0, t_rs_mpi = 0, t_v = 0, t_v_mpi = 0;
    // The first tenth of the iterations warm up (checked, not timed).
    const int warm = iters / 10;
    for (int it = 0; it < iters && wrong == 0; ++it) {
        if (it == warm) t_rs = t_rs_mpi = t_v = t_v_mpi = 0;
        for (size_t j = 0; j < send.size(); ++j) send[j] = static_cast<float>((me * 7 + static_cast<int>(j) + it) % 11);
        double t0 = MPI_Wtime();
        int s = kindsmpi_reduce_scatter(comm, send.data(), send.size(), recv.data(), recv.size());
        t_rs += MPI_Wtime() - t0;
        if (s != KINDSMPI_OK) {
            std::fprintf(stderr, "rank %d iteration %d: kindsmpi_reduce_scatter: %s: %s\n", me, it, kindsmpi_strerror(s), kindsmpi_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        t0 = MPI_Wtime();
        MPI_Reduce_scatter_block(send.data(), want.data(), static_cast<int>(M), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        t_rs_mpi += MPI_Wtime() - t0;
        for (size_t i = 0; i < recv.size() && wrong == 0; ++i) {
            if (recv[i] != want[i]) {
                std::fprintf(stderr, "rank %d iteration %d: reduce_scatter[%zu] = %g, MPI_Reduce_scatter_block = %g\n", me, it, i, recv[i], want[i]);
                ++wrong;
            }
        }

        for (int d = 0; d < np; ++d) sc[static_cast<size_t>(d)] = (me + 2 * d + it) % (R + 1);
        for (size_t j = 0; j < vs.size(); ++j) vs[j] = static_cast<float>((me * 31 + static_cast<int>(j) * 3 + it) % 23);
        t0 = MPI_Wtime();
        s = kindsmpi_all_to_all_v(comm, vs.data(), vs.size(), sc.data(), vr.data(), vr.size(), rc.data());
        t_v += MPI_Wtime() - t0;
        if (s != KINDSMPI_OK) {
            std::fprintf(stderr, "rank %d iteration %d: kindsmpi_all_to_all_v: %s: %s\n", me, it, kindsmpi_strerror(s), kindsmpi_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        // The native path: counts first (MPI_Alltoall), then the valid rows (MPI_Alltoallv).
        t0 = MPI_Wtime();
        MPI_Alltoall(sc.data(), 1, MPI_INT32_T, wc.data(), 1, MPI_INT32_T, MPI_COMM_WORLD);
        for (int d = 0; d < np; ++d) {
            scnt[static_cast<size_t>(d)] = static_cast<int>(sc[static_cast<size_t>(d)] * M);
            sdis[static_cast<size_t>(d)] = static_cast<int>(d * block);
            rcnt[static_cast<size_t>(d)] = static_cast<int>(wc[static_cast<size_t>(d)] * M);
            rdis[static_cast<size_t>(d)] = static_cast<int>(d * block);
        }
        MPI_Alltoallv(vs.data(), scnt.data(), sdis.data(), MPI_FLOAT, vw.data(), rcnt.data(), rdis.data(), MPI_FLOAT, MPI_COMM_WORLD);
        t_v_mpi += MPI_Wtime() - t0;
        for (int j = 0; j < np && wrong == 0; ++j) {
            if (rc[static_cast<size_t>(j)] != wc[static_cast<size_t>(j)]) {
                std::fprintf(stderr, "rank %d iteration %d: recv_counts[%d] = %d, MPI_Alltoall = %d\n", me, it, j, rc[static_cast<size_t>(j)], wc[static_cast<size_t>(j)]);
                ++wrong;
            }
            for (int64_t e = 0; e < wc[static_cast<size_t>(j)] * M && wrong == 0; ++e) {
                const size_t at = static_cast<size_t>(j * block + e);
                if (vr[at] != vw[at]) {
                    std::fprintf(stderr, "rank %d iteration %d: all_to_all_v recv[%zu] = %g, MPI_Alltoallv = %g\n", me, it, at, vr[at], vw[at]);
                    ++wrong;
                }
            }
        }
    }
    long total = 0;
    MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    const int freed = kindsmpi_comm_free(comm);
    if (freed != KINDSMPI_OK) {
        std::fprintf(stderr, "rank %d: kindsmpi_comm_free: %s\n", me, kindsmpi_last_error());
        total += 1;
    }
    if (me == 0 && total == 0) {
        std::printf("ok: np=%d M=%lld R=%d: %d iterations, reduce_scatter equal to MPI_Reduce_scatter_block, all_to_all_v equal to MPI_Alltoallv "
                    "(us/call: kindsmpi_reduce_scatter %.1f, MPI_Reduce_scatter_block %.1f, kindsmpi_all_to_all_v %.1f, MPI_Alltoall+MPI_Alltoallv %.1f)\n",
                    np, static_cast<long long>(M), R, iters, t_rs / (iters - warm) * 1e6, t_rs_mpi / (iters - warm) * 1e6, t_v / (iters - warm) * 1e6,
                    t_v_mpi / (iters - warm) * 1e6);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
