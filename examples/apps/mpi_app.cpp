// An MPI application calling a collc MPI library inside its compute loop: every iteration
// updates a local state, allreduces it through the library, and checks the result against
// MPI_Allreduce of the same values (bitwise: the values are small integers, exact in f32 under
// any summation order); one broadcast per iteration is checked against the root's input.
//
//   collc emit --target mpi --lib collmpi examples/allreduce_mesh.coll \
//       examples/broadcast_read_complete.coll -o DIR
//   mpicxx -std=c++17 -O2 examples/apps/mpi_app.cpp \
//       $(PKG_CONFIG_PATH=DIR pkg-config --cflags --libs collmpi) -o mpi_app
//   mpirun -np 4 ./mpi_app [N] [ITERS] [ROOT]     (default 1000 200 1)
// Rank 0 prints "ok: ..." and every rank exits 0, or the first wrong element is named.
#include <mpi.h>

#include "collmpi.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int64_t N = argc > 1 ? std::atoll(argv[1]) : 1000;
    const int iters = argc > 2 ? std::atoi(argv[2]) : 200;
    const int root = argc > 3 ? std::atoi(argv[3]) : 1;

    collmpi_config cfg = {};
    cfg.allreduce.n = N;
    cfg.allreduce.C = 1;
    cfg.allreduce.stride = 1;
    cfg.broadcast.root = root;
    cfg.broadcast.n = N;
    cfg.wait_timeout_ms = 20000;
    collmpi_comm* comm = nullptr;
    if (collmpi_comm_create(MPI_COMM_WORLD, &cfg, &comm) != COLLMPI_OK) {
        std::fprintf(stderr, "rank %d: collmpi_comm_create: %s\n", me, collmpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const size_t n = collmpi_allreduce_count(comm);
    std::vector<float> state(n), data(n), want(n), bc(n);
    for (size_t i = 0; i < n; ++i) state[i] = static_cast<float>((me * 5 + static_cast<int>(i)) % 13);
    long wrong = 0;
    double t_lib = 0, t_mpi = 0;
    for (int it = 0; it < iters && wrong == 0; ++it) {
        // The "compute" step: a local update of the state (integer-valued).
        for (size_t i = 0; i < n; ++i) state[i] = static_cast<float>((static_cast<int>(state[i]) * 3 + it + me) % 29);
        data = state;
        double t0 = MPI_Wtime();
        int s = collmpi_allreduce(comm, data.data(), data.size());
        t_lib += MPI_Wtime() - t0;
        if (s != COLLMPI_OK) {
            std::fprintf(stderr, "rank %d iteration %d: collmpi_allreduce: %s: %s\n", me, it, collmpi_strerror(s), collmpi_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        t0 = MPI_Wtime();
        MPI_Allreduce(state.data(), want.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        t_mpi += MPI_Wtime() - t0;
        for (size_t i = 0; i < n && wrong == 0; ++i) {
            if (data[i] != want[i]) {
                std::fprintf(stderr, "rank %d iteration %d: allreduce[%zu] = %g, MPI_Allreduce = %g\n", me, it, i, data[i], want[i]);
                ++wrong;
            }
        }
        // The reduced values feed the next iteration; the root broadcasts its state.
        for (size_t i = 0; i < n; ++i) state[i] = static_cast<float>(static_cast<int>(data[i]) % 31);
        for (size_t i = 0; i < n; ++i) bc[i] = me == root ? state[i] + 1.0f : -1.0f;
        s = collmpi_broadcast(comm, bc.data(), bc.size(), root);
        if (s != COLLMPI_OK) {
            std::fprintf(stderr, "rank %d iteration %d: collmpi_broadcast: %s: %s\n", me, it, collmpi_strerror(s), collmpi_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        // Every rank's state is the same function of the same allreduce result.
        for (size_t i = 0; i < n && wrong == 0; ++i) {
            if (bc[i] != state[i] + 1.0f) {
                std::fprintf(stderr, "rank %d iteration %d: broadcast[%zu] = %g, want %g\n", me, it, i, bc[i], state[i] + 1.0f);
                ++wrong;
            }
        }
    }
    long total = 0;
    MPI_Allreduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    const int freed = collmpi_comm_free(comm);
    if (freed != COLLMPI_OK) {
        std::fprintf(stderr, "rank %d: collmpi_comm_free: %s\n", me, collmpi_last_error());
        total += 1;
    }
    if (me == 0 && total == 0) {
        std::printf("ok: np=%d n=%zu: %d iterations, allreduce equal to MPI_Allreduce, broadcast equal to the root's (collmpi_allreduce %.1f us/call, MPI_Allreduce %.1f us/call)\n",
                    np, n, iters, t_lib / iters * 1e6, t_mpi / iters * 1e6);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
