// Prints, on rank 0, "protocol COUNT NAME" for each count argument: the protocol a call of
// tn_allreduce at that count runs (the library `collc tune` built, configured as its
// measuring program is: the row length at the largest count, C = stride = 1).
#include "mpi_test.hpp"
#include "tn.h"

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    const int me = World(&argc, &argv).me;
    tn_config cfg = {};
    cfg.allreduce_mesh.n = 256;
    cfg.allreduce_mesh.C = 1;
    cfg.allreduce_mesh.stride = 1;
    cfg.allreduce_ring.n = 256;
    tn_comm* c = nullptr;
    if (tn_comm_create(MPI_COMM_WORLD, &cfg, &c) != TN_OK) {
        std::fprintf(stderr, "create: %s\n", tn_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int a = 1; a < argc; ++a) {
        const char* p = tn_allreduce_protocol(c, static_cast<size_t>(std::atoll(argv[a])));
        if (me == 0) std::printf("protocol %s %s\n", argv[a], p != nullptr ? p : "(none)");
    }
    const int rc = tn_comm_free(c);
    MPI_Finalize();
    return rc;
}
