// What the MPI library benches share: a failed library call stops the job, and the one
// communicator (allreduce_mesh + broadcast_read_complete) configured for the largest count.
#ifndef COLLMPI_BENCH_HPP
#define COLLMPI_BENCH_HPP

#include "collmpi.h"

#include <cstdio>

inline void ok(int s) {
    if (s != COLLMPI_OK) {
        std::fprintf(stderr, "%s: %s\n", collmpi_strerror(s), collmpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

// Collective: the communicator for calls of up to `max_n` elements (root 0, C = stride = 1).
inline collmpi_comm* bench_comm(size_t max_n) {
    collmpi_config cfg = {};
    cfg.allreduce.n = static_cast<int64_t>(max_n);
    cfg.allreduce.C = 1;
    cfg.allreduce.stride = 1;
    cfg.broadcast.root = 0;
    cfg.broadcast.n = static_cast<int64_t>(max_n);
    cfg.wait_timeout_ms = 600000;
    collmpi_comm* comm = nullptr;
    ok(collmpi_comm_create(MPI_COMM_WORLD, &cfg, &comm));
    return comm;
}

#endif
