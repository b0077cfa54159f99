// A `calls <= 2` barrier packaged as an MPI library: every process makes 2 calls (OK), then a
// third, which must return EDOMAIN naming the declaration and leave the communicator usable
// (comm_free finds every credit cell back at 0).
#include <mpi.h>

#include "bndm.h"

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    bndm_config cfg = {};
    cfg.wait_timeout_ms = 10000;
    bndm_comm* comm = nullptr;
    int fails = 0;
    if (bndm_comm_create(MPI_COMM_WORLD, &cfg, &comm) != BNDM_OK) {
        std::printf("FAIL rank %d create: %s\n", me, bndm_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int a = bndm_barrier(comm);
    const int b = bndm_barrier(comm);
    const int c = bndm_barrier(comm);
    const std::string msg = bndm_last_error();
    const bool ok = a == BNDM_OK && b == BNDM_OK && c == BNDM_EDOMAIN &&
                    msg.find("call 3 refused") != std::string::npos && msg.find("calls <= 2 (") != std::string::npos;
    std::printf("%s rank %d: %d %d %d: %s\n", ok ? "PASS" : "FAIL", me, a, b, c, msg.c_str());
    fails += ok ? 0 : 1;
    const int f = bndm_comm_free(comm);
    std::printf("%s rank %d free: %d\n", f == BNDM_OK ? "PASS" : "FAIL", me, f);
    fails += f == BNDM_OK ? 0 : 1;
    MPI_Finalize();
    return fails == 0 ? 0 : 1;
}
