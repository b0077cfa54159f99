// Prints "protocol COUNT NAME" for each count argument: the protocol a call of ht_allreduce
// at that count runs with P = 2 threads (the host library `collc tune --target host` built,
// configured as its measuring program is: the row length at the largest count, C = stride = 1).
#include "ht.h"

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    ht_config cfg = {};
    cfg.allreduce_mesh.n = 256;
    cfg.allreduce_mesh.C = 1;
    cfg.allreduce_mesh.stride = 1;
    cfg.allreduce_ring.n = 256;
    ht_comm* c = nullptr;
    if (ht_comm_create(2, &cfg, &c) != HT_OK) {
        std::fprintf(stderr, "create: %s\n", ht_last_error());
        return 2;
    }
    for (int a = 1; a < argc; ++a) {
        const char* p = ht_allreduce_protocol(c, static_cast<size_t>(std::atoll(argv[a])));
        std::printf("protocol %s %s\n", argv[a], p != nullptr ? p : "(none)");
    }
    return ht_comm_free(c);
}
