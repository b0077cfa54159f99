// Per-call latency and bandwidth of a collc host library (libcoll: allreduce_mesh +
// broadcast_read_complete): P threads call one collective back to back; the time of the
// slowest rank divided by the calls is the per-call time. Built and run by benches/lib/run.sh.
//   ./host_lib_bench P N CALLS  ->  "host-lib P=.. n=.. allreduce X us/call Y GB/s broadcast ..."
#include "coll.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static double per_call_us(coll_comm* comm, int P, size_t n, int calls, bool bcast) {
    std::vector<double> us(static_cast<size_t>(P));
    std::vector<std::thread> t;
    for (int r = 0; r < P; ++r)
        t.emplace_back([&, r] {
            std::vector<float> d(n, 1.0f);
            auto one = [&] {
                const int s = bcast ? coll_broadcast(comm, r, d.data(), n, 0) : coll_allreduce(comm, r, d.data(), n);
                if (s != COLL_OK) {
                    std::fprintf(stderr, "rank %d: %s\n", r, coll_last_error());
                    std::exit(1);
                }
            };
            for (int i = 0; i < 20; ++i) one();  // warm-up
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < calls; ++i) one();
            us[static_cast<size_t>(r)] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        });
    for (auto& x : t) x.join();
    double worst = 0;
    for (double u : us) worst = u > worst ? u : worst;
    return worst / calls;
}

int main(int argc, char** argv) {
    const int P = argc > 1 ? std::atoi(argv[1]) : 2;
    const int64_t N = argc > 2 ? std::atoll(argv[2]) : 256;
    const int calls = argc > 3 ? std::atoi(argv[3]) : 500;
    coll_config cfg = {};
    cfg.allreduce.n = N;
    cfg.allreduce.C = 1;
    cfg.allreduce.stride = 1;
    cfg.broadcast.root = 0;
    cfg.broadcast.n = N;
    coll_comm* comm = nullptr;
    if (coll_comm_create(P, &cfg, &comm) != COLL_OK) {
        std::fprintf(stderr, "%s\n", coll_last_error());
        return 1;
    }
    const double ar = per_call_us(comm, P, static_cast<size_t>(N), calls, false);
    const double bc = per_call_us(comm, P, static_cast<size_t>(N), calls, true);
    const double bytes = static_cast<double>(N) * 4;
    std::printf("host-lib P=%d n=%lld calls=%d allreduce %.2f us/call %.3f GB/s broadcast %.2f us/call %.3f GB/s\n", P,
                static_cast<long long>(N), calls, ar, bytes / ar / 1e3, bc, bytes / bc / 1e3);
    return coll_comm_free(comm) == COLL_OK ? 0 : 1;
}
