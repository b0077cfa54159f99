// What the MPI test programs of collc/tests/lib share: MPI started with this process's rank
// and the world's size (World), and a count summed over every rank (sum_over_ranks), so that
// every rank reaches the same verdict. MPI_Finalize stays each program's own (after its
// communicators are freed).
#ifndef COLLC_TESTS_LIB_MPI_TEST_HPP
#define COLLC_TESTS_LIB_MPI_TEST_HPP

#include <mpi.h>

struct World {
    int me = 0, np = 1;
    World(int* argc, char*** argv) {
        MPI_Init(argc, argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_size(MPI_COMM_WORLD, &np);
    }
};

inline long sum_over_ranks(long x) {
    long all = 0;
    MPI_Allreduce(&x, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

#endif
