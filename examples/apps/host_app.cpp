// A host program calling a collc host library: P threads, each calling the library's
// allreduce and broadcast back to back ITERS times (no barrier of its own), every result
// checked against a reference computed with std::reduce (allreduce) and the root's input
// (broadcast).
//
// The library is the two verified examples packaged together, at one element type (both
// list f32, f64, i32 and i64; ELEM is its C++ type, default float):
//   collc emit --target host --lib coll [--elem f64] examples/allreduce_mesh.coll examples/broadcast_read_complete.coll -o DIR
//   g++ -std=c++17 -O2 [-DELEM=double] examples/apps/host_app.cpp $(PKG_CONFIG_PATH=DIR pkg-config --cflags --libs coll) -o host_app
//   ./host_app [P] [N] [ITERS] [ROOT] [C]     (default 4 1000 1000 1 1; C: allreduce blocks)
// Prints "ok: ..." with the per-call latency and exits 0, or names the first wrong element.
#include "coll.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

#ifndef ELEM
#define ELEM float
#endif
using T = ELEM;

// Distinct per rank, iteration and element; small integers, so every sum is exact in every type.
static T input(int rank, int iter, size_t i) {
    return static_cast<T>((rank * 7 + iter * 3 + static_cast<int>(i % 1000)) % 61);
}

int main(int argc, char** argv) {
    const int P = argc > 1 ? std::atoi(argv[1]) : 4;
    const int64_t N = argc > 2 ? std::atoll(argv[2]) : 1000;
    const int iters = argc > 3 ? std::atoi(argv[3]) : 1000;
    const int root = argc > 4 ? std::atoi(argv[4]) : 1;
    const int blocks = argc > 5 ? std::atoi(argv[5]) : 1;  // allreduce_mesh's C (= stride)

    coll_config cfg = {};
    cfg.allreduce.n = N;
    cfg.allreduce.C = blocks;
    cfg.allreduce.stride = blocks;
    cfg.broadcast.root = root;
    cfg.broadcast.n = N;
    coll_comm* comm = nullptr;
    if (coll_comm_create(P, &cfg, &comm) != COLL_OK) {
        std::fprintf(stderr, "coll_comm_create: %s\n", coll_last_error());
        return 2;
    }
    const size_t n = coll_allreduce_count(comm);
    std::atomic<int> bad{0};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ranks;
    for (int r = 0; r < P; ++r) {
        ranks.emplace_back([&, r] {
            std::vector<T> data(n), want(n), column(static_cast<size_t>(P));
            for (int it = 0; it < iters && bad.load() == 0; ++it) {
                for (size_t i = 0; i < n; ++i) data[i] = input(r, it, i);
                int s = coll_allreduce(comm, r, data.data(), data.size());
                if (s != COLL_OK) {
                    std::fprintf(stderr, "rank %d allreduce %d: %s: %s\n", r, it, coll_strerror(s), coll_last_error());
                    bad = 1;
                    return;
                }
                for (size_t i = 0; i < n; ++i) {
                    for (int q = 0; q < P; ++q) column[static_cast<size_t>(q)] = input(q, it, i);
                    want[i] = std::reduce(column.begin(), column.end(), T{0});
                    if (data[i] != want[i]) {
                        std::fprintf(stderr, "rank %d allreduce %d: data[%zu] = %g, want %g\n", r, it, i, static_cast<double>(data[i]), static_cast<double>(want[i]));
                        bad = 1;
                        return;
                    }
                }
                for (size_t i = 0; i < n; ++i) data[i] = r == root ? input(root, it + 1, i) : T{-1};
                s = coll_broadcast(comm, r, data.data(), data.size(), root);
                if (s != COLL_OK) {
                    std::fprintf(stderr, "rank %d broadcast %d: %s: %s\n", r, it, coll_strerror(s), coll_last_error());
                    bad = 1;
                    return;
                }
                for (size_t i = 0; i < n; ++i) {
                    if (data[i] != input(root, it + 1, i)) {
                        std::fprintf(stderr, "rank %d broadcast %d: data[%zu] = %g, want %g\n", r, it, i, static_cast<double>(data[i]), static_cast<double>(input(root, it + 1, i)));
                        bad = 1;
                        return;
                    }
                }
            }
        });
    }
    for (auto& t : ranks) t.join();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    const int freed = coll_comm_free(comm);
    if (freed != COLL_OK) {
        std::fprintf(stderr, "coll_comm_free: %s\n", coll_last_error());
        return 1;
    }
    if (bad.load() != 0) return 1;
    std::printf("ok: P=%d n=%zu: %d allreduce + %d broadcast calls per rank, every element right (%.1f us per call pair, checks included)\n",
                P, n, iters, iters, us / iters);
    return 0;
}
