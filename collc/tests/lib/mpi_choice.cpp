// A library of three allreduce protocols, one chosen per call (collc emit --lib choice
// examples/allreduce_mesh.coll examples/allreduce_ring.coll
// examples/allreduce_recursive_doubling.coll --table T) with the decision table
// "allreduce 2 1 allreduce_mesh / allreduce 2 4096 allreduce_ring":
//   * counts below 4096 run mesh, counts from 4096 on run the ring, each checked with
//     allreduce_protocol() and every result compared with MPI_Allreduce;
//   * a count from 4096 on that the ring's `require n % P == 0` refuses runs mesh;
//   * a count past every protocol's domain: protocol() is NULL and the call returns EDOMAIN on
//     every rank, and the next call succeeds (the communicator recovers);
//   * pin(): the ring at a small count, mesh at a large one, NULL back to the table; a
//     name that is no protocol is EINVAL;
//   * recursive doubling (`require P & (P - 1) == 0`) runs when pinned at np 2 and is set aside
//     at creation at np 3 (its pin is EDOMAIN there), the other two serving every call.
// Rank 0 prints "PASS ..." lines; every rank exits 0 iff every check held.
#include <mpi.h>

#include "choice.h"

#include <cstdio>
#include <cstring>
#include <vector>

static int me = 0, np = 1, failures = 0;

static void check(bool ok, const char* what) {
    int all = ok ? 1 : 0, every = 0;
    MPI_Allreduce(&all, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) std::fprintf(stderr, "rank %d: FAIL %s (%s)\n", me, what, choice_last_error());
    if (every == 0) ++failures;
    else if (me == 0) std::printf("PASS %s\n", what);
}

// One allreduce of `count` elements; true iff it returned OK and equals MPI_Allreduce.
static bool allreduce(choice_comm* c, size_t count, int salt) {
    std::vector<float> in(count), out, want(count);
    for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>((me * 7 + static_cast<int>(i) + salt) % 23);
    out = in;
    const int s = choice_allreduce(c, out.data(), count);
    MPI_Allreduce(in.data(), want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (s != CHOICE_OK) return false;
    return std::memcmp(out.data(), want.data(), count * sizeof(float)) == 0;
}

static bool runs(choice_comm* c, size_t count, const char* protocol) {
    const char* p = choice_allreduce_protocol(c, count);
    return p != nullptr && std::strcmp(p, protocol) == 0;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    choice_config cfg = {};
#include "choice_config.inc"
    choice_comm* c = nullptr;
    if (choice_comm_create(MPI_COMM_WORLD, &cfg, &c) != CHOICE_OK) {
        std::fprintf(stderr, "rank %d: create: %s\n", me, choice_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    check(choice_allreduce_count(c) == 12000, "count query: the largest over the protocols");
    const size_t ring_n = 6 * 1000;  // from 4096 on, a multiple of np (2 or 3)
    const size_t odd = 6 * 1000 + 1;  // from 4096 on, a multiple of neither
    for (int round = 0; round < 3; ++round) {
        check(runs(c, 100, "allreduce_mesh") && allreduce(c, 100, round), "count 100 runs mesh, result right");
        check(runs(c, 4095, "allreduce_mesh") && allreduce(c, 4095, round), "count 4095 runs mesh, result right");
        check(runs(c, ring_n, "allreduce_ring") && allreduce(c, ring_n, round), "count 6000 runs the ring, result right");
        check(runs(c, 12000, "allreduce_ring") && allreduce(c, 12000, round), "count 12000 runs the ring, result right");
        check(runs(c, odd, "allreduce_mesh") && allreduce(c, odd, round),
              "count 6001 (ring's require fails) runs mesh, result right");
    }
    check(choice_allreduce_protocol(c, 20000) == nullptr, "count 20000: no protocol serves it");
    std::vector<float> big(20000, 1.0f);
    check(choice_allreduce(c, big.data(), big.size()) == CHOICE_EDOMAIN, "count 20000 returns EDOMAIN");
    check(allreduce(c, ring_n, 9), "the call after EDOMAIN succeeds");
    check(choice_allreduce_pin(c, "allreduce_ring") == CHOICE_OK && runs(c, 96, "allreduce_ring") && allreduce(c, 96, 4),
          "pinned ring at count 96, result right");
    check(choice_allreduce_pin(c, "allreduce_mesh") == CHOICE_OK && runs(c, 8000, "allreduce_mesh") &&
              allreduce(c, 8000, 5),
          "pinned mesh at count 8000, result right");
    check(choice_allreduce_pin(c, "allreduce_mesh") == CHOICE_OK && choice_allreduce_protocol(c, 9000) == nullptr,
          "pinned mesh does not serve count 9000");
    check(choice_allreduce_pin(c, "nope") == CHOICE_EINVAL, "pin of an unknown protocol is EINVAL");
    check(choice_allreduce_pin(c, nullptr) == CHOICE_OK && runs(c, 9000, "allreduce_ring") && allreduce(c, 9000, 6),
          "unpinned: count 9000 runs the ring again");
    if (np == 2)
        check(choice_allreduce_pin(c, "allreduce_recursive_doubling") == CHOICE_OK &&
                  runs(c, 100, "allreduce_recursive_doubling") && allreduce(c, 100, 7) && choice_allreduce_pin(c, nullptr) == CHOICE_OK,
              "np 2: pinned recursive doubling at count 100, result right");
    else
        check(choice_allreduce_pin(c, "allreduce_recursive_doubling") == CHOICE_EDOMAIN,
              "np 3: recursive doubling was set aside at creation (pin: EDOMAIN)");
    check(choice_comm_free(c) == CHOICE_OK, "free: every credit back at 0");
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}
