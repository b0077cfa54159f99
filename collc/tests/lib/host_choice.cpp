// A host library of three allreduce protocols, one chosen per call (collc emit --target host
// --lib hchoice examples/allreduce_mesh.coll examples/allreduce_ring.coll
// examples/allreduce_recursive_doubling.coll --table T) with the decision table
// "allreduce 2 1 allreduce_mesh / allreduce 2 4096 allreduce_ring", P threads (argv[1]):
//   * counts below 4096 run mesh, counts from 4096 on run the ring, each checked with
//     allreduce_protocol() and every rank's result checked element by element;
//   * a count from 4096 on that the ring's `require n % P == 0` refuses runs mesh;
//   * a count past every protocol's configured count: protocol() is NULL, the call returns
//     EDOMAIN (a rank entering after the first to fail: EBROKEN), and the next call
//     succeeds (the communicator recovers);
//   * pin(): the ring at a small count, NULL back to the table; an unknown name is EINVAL;
//   * recursive doubling (`require P & (P - 1) == 0`) runs when pinned at P 2 and is set aside
//     at creation at P 3 (its pin is EDOMAIN there).
// Prints "PASS ..." / "FAIL ..." lines; exit 0 iff every check held.
#include "hchoice.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

static int failures = 0, passes = 0;

static void check(bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    if (ok) ++passes;
    else ++failures;
}

static float input(int rank, size_t i, int salt) { return static_cast<float>((rank * 7 + static_cast<int>(i) + salt) % 23); }

// One allreduce of `count` elements on every rank (a thread each); true iff every rank's call
// returned OK and every element is the sum of the ranks' inputs (small integers: exact).
static bool allreduce(hchoice_comm* c, int P, size_t count, int salt, int want_status = HCHOICE_OK) {
    std::vector<std::vector<float>> data(static_cast<size_t>(P));
    std::vector<int> st(static_cast<size_t>(P), -1);
    std::vector<std::thread> t;
    for (int r = 0; r < P; ++r)
        t.emplace_back([&, r] {
            auto& d = data[static_cast<size_t>(r)];
            d.resize(count);
            for (size_t i = 0; i < count; ++i) d[i] = input(r, i, salt);
            st[static_cast<size_t>(r)] = hchoice_allreduce(c, r, d.data(), count);
        });
    for (auto& x : t) x.join();
    if (want_status != HCHOICE_OK) {
        // The first rank to see the bad count poisons the communicator: a peer that enters
        // after it returns EBROKEN instead.
        int want = 0;
        for (int r = 0; r < P; ++r) {
            const int s = st[static_cast<size_t>(r)];
            want += s == want_status;
            if (s != want_status && s != HCHOICE_EBROKEN) return false;
        }
        return want > 0;
    }
    for (int r = 0; r < P; ++r) {
        if (st[static_cast<size_t>(r)] != HCHOICE_OK) {
            std::printf("  rank %d: %s: %s\n", r, hchoice_strerror(st[static_cast<size_t>(r)]), hchoice_last_error());
            return false;
        }
    }
    for (size_t i = 0; i < count; ++i) {
        float sum = 0;
        for (int r = 0; r < P; ++r) sum += input(r, i, salt);
        for (int r = 0; r < P; ++r)
            if (data[static_cast<size_t>(r)][i] != sum) return false;
    }
    return true;
}

static bool runs(hchoice_comm* c, size_t count, const char* protocol) {
    const char* p = hchoice_allreduce_protocol(c, count);
    return p != nullptr && std::strcmp(p, protocol) == 0;
}

int main(int argc, char** argv) {
    const int P = argc > 1 ? std::atoi(argv[1]) : 2;
    hchoice_config cfg = {};
#include "choice_config.inc"
    hchoice_comm* c = nullptr;
    if (hchoice_comm_create(P, &cfg, &c) != HCHOICE_OK) {
        std::printf("FAIL create: %s\n", hchoice_last_error());
        return 1;
    }
    check(hchoice_allreduce_count(c) == 12000, "count query: the largest over the protocols");
    const size_t ring_n = 6 * 1000;   // from 4096 on, a multiple of P (2 or 3)
    const size_t odd = 6 * 1000 + 1;  // from 4096 on, a multiple of neither
    for (int round = 0; round < 3; ++round) {
        check(runs(c, 100, "allreduce_mesh") && allreduce(c, P, 100, round), "count 100 runs mesh, result right");
        check(runs(c, 4095, "allreduce_mesh") && allreduce(c, P, 4095, round), "count 4095 runs mesh, result right");
        check(runs(c, ring_n, "allreduce_ring") && allreduce(c, P, ring_n, round), "count 6000 runs the ring, result right");
        check(runs(c, 12000, "allreduce_ring") && allreduce(c, P, 12000, round), "count 12000 runs the ring, result right");
        check(runs(c, odd, "allreduce_mesh") && allreduce(c, P, odd, round),
              "count 6001 (ring's require fails) runs mesh, result right");
    }
    check(hchoice_allreduce_protocol(c, 20000) == nullptr, "count 20000: no protocol serves it");
    check(allreduce(c, P, 20000, 0, HCHOICE_EDOMAIN), "count 20000 returns EDOMAIN (or EBROKEN after a peer's EDOMAIN)");
    check(allreduce(c, P, ring_n, 9), "the call after EDOMAIN succeeds");
    check(hchoice_allreduce_pin(c, "allreduce_ring") == HCHOICE_OK && runs(c, 96, "allreduce_ring") && allreduce(c, P, 96, 4),
          "pinned ring at count 96, result right");
    check(hchoice_allreduce_pin(c, "nope") == HCHOICE_EINVAL, "pin of an unknown protocol is EINVAL");
    check(hchoice_allreduce_pin(c, nullptr) == HCHOICE_OK && runs(c, 9000, "allreduce_ring") && allreduce(c, P, 9000, 6),
          "unpinned: count 9000 runs the ring again");
    if (P == 2)
        check(hchoice_allreduce_pin(c, "allreduce_recursive_doubling") == HCHOICE_OK &&
                  runs(c, 100, "allreduce_recursive_doubling") && allreduce(c, P, 100, 7) &&
                  hchoice_allreduce_pin(c, nullptr) == HCHOICE_OK,
              "P 2: pinned recursive doubling at count 100, result right");
    else
        check(hchoice_allreduce_pin(c, "allreduce_recursive_doubling") == HCHOICE_EDOMAIN,
              "P 3: recursive doubling was set aside at creation (pin: EDOMAIN)");
    check(hchoice_comm_free(c) == HCHOICE_OK, "free: every credit back at 0");
    std::printf("%d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
