// A C++ program with P threads calling a collc host library's reduce_scatter, all_to_all_v
// and allgather back to back, every result checked against a reference computed from the
// inputs (each rank's input is a known function of (rank, iteration), so every thread can
// compute what every peer sent). allgather and all_to_all_v declare their windows `per
// call`: the library holds them as instances used in rotation, packaged because the
// protocols verify at that reuse distance.
//
//   collc emit --target host --lib kinds examples/reduce_scatter.coll examples/all_to_all_v.coll examples/allgather.coll -o DIR
//   g++ -std=c++17 -O2 examples/apps/host_kinds_app.cpp $(PKG_CONFIG_PATH=DIR pkg-config --cflags --libs kinds) -o app
//   ./app [P] [ITERS] [M] [R]     (default 4 500 300 3)
// Prints "ok: ..." and exits 0, or names the first wrong element and exits 1.
#include "kinds.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Small integers: every sum is exact in f32 in any order.
float rs_in(int rank, int it, int64_t j) { return static_cast<float>((rank * 7 + j + it) % 11); }
float ag_in(int rank, int it, int64_t i) { return static_cast<float>((rank * 3 + i * 5 + it) % 17); }
float a2av_in(int rank, int dest, int64_t row, int64_t col, int it) {
    return static_cast<float>((rank * 31 + dest * 7 + row * 3 + col + it) % 23);
}
int a2av_count(int rank, int dest, int it, int R) { return (rank + 2 * dest + it) % (R + 1); }

}  // namespace

int main(int argc, char** argv) {
    const int P = argc > 1 ? std::atoi(argv[1]) : 4;
    const int iters = argc > 2 ? std::atoi(argv[2]) : 500;
    const int64_t M = argc > 3 ? std::atoll(argv[3]) : 300;
    const int R = argc > 4 ? std::atoi(argv[4]) : 3;

    kinds_config cfg = {};
    cfg.reduce_scatter.m = M;
    cfg.all_to_all_v.m = M;
    cfg.all_to_all_v.R = R;
    cfg.allgather.m = M;
    cfg.wait_timeout_ms = 20000;
    kinds_comm* comm = nullptr;
    if (kinds_comm_create(P, &cfg, &comm) != KINDS_OK) {
        std::fprintf(stderr, "kinds_comm_create: %s\n", kinds_last_error());
        return 1;
    }
    std::atomic<long> wrong{0};
    std::vector<double> secs(3, 0.0);
    std::vector<std::thread> ranks;
    for (int r = 0; r < P; ++r) {
        ranks.emplace_back([&, r] {
            using clock = std::chrono::steady_clock;
            std::vector<float> rs_send(kinds_reduce_scatter_send_count(comm)), rs_recv(kinds_reduce_scatter_recv_count(comm));
            std::vector<float> v_send(kinds_all_to_all_v_send_count(comm)), v_recv(kinds_all_to_all_v_recv_count(comm));
            std::vector<int32_t> v_sc(static_cast<size_t>(P)), v_rc(static_cast<size_t>(P));
            std::vector<float> ag_in_buf(kinds_allgather_input_count(comm)), ag_out(kinds_allgather_output_count(comm));
            const int64_t rows = static_cast<int64_t>(v_send.size()) / (P * M);  // R
            auto fail = [&](const char* what, int it, int64_t i, float got, float want) {
                if (wrong.fetch_add(1) == 0)
                    std::fprintf(stderr, "rank %d iteration %d: %s[%lld] = %g, want %g\n", r, it, what, static_cast<long long>(i), got, want);
            };
            for (int it = 0; it < iters && wrong.load() == 0; ++it) {
                for (size_t j = 0; j < rs_send.size(); ++j) rs_send[j] = rs_in(r, it, static_cast<int64_t>(j));
                auto t0 = clock::now();
                int s = kinds_reduce_scatter(comm, r, rs_send.data(), rs_send.size(), rs_recv.data(), rs_recv.size());
                if (r == 0) secs[0] += std::chrono::duration<double>(clock::now() - t0).count();
                if (s != KINDS_OK) {
                    std::fprintf(stderr, "rank %d: kinds_reduce_scatter: %s: %s\n", r, kinds_strerror(s), kinds_last_error());
                    wrong.fetch_add(1);
                    return;
                }
                for (int64_t i = 0; i < M; ++i) {
                    float want = 0;
                    for (int q = 0; q < P; ++q) want += rs_in(q, it, r * M + i);
                    if (rs_recv[static_cast<size_t>(i)] != want) return fail("reduce_scatter recv", it, i, rs_recv[static_cast<size_t>(i)], want);
                }

                for (int d = 0; d < P; ++d) {
                    v_sc[static_cast<size_t>(d)] = a2av_count(r, d, it, R);
                    for (int64_t x = 0; x < rows; ++x)
                        for (int64_t y = 0; y < M; ++y) v_send[static_cast<size_t>((d * rows + x) * M + y)] = a2av_in(r, d, x, y, it);
                }
                t0 = clock::now();
                s = kinds_all_to_all_v(comm, r, v_send.data(), v_send.size(), v_sc.data(), v_recv.data(), v_recv.size(), v_rc.data());
                if (r == 0) secs[1] += std::chrono::duration<double>(clock::now() - t0).count();
                if (s != KINDS_OK) {
                    std::fprintf(stderr, "rank %d: kinds_all_to_all_v: %s: %s\n", r, kinds_strerror(s), kinds_last_error());
                    wrong.fetch_add(1);
                    return;
                }
                for (int j = 0; j < P; ++j) {
                    const int want_rows = a2av_count(j, r, it, R);
                    if (v_rc[static_cast<size_t>(j)] != want_rows) return fail("all_to_all_v recv_counts", it, j, static_cast<float>(v_rc[static_cast<size_t>(j)]), static_cast<float>(want_rows));
                    for (int64_t x = 0; x < want_rows; ++x)
                        for (int64_t y = 0; y < M; ++y) {
                            const int64_t at = (j * rows + x) * M + y;
                            const float want = a2av_in(j, r, x, y, it);
                            if (v_recv[static_cast<size_t>(at)] != want) return fail("all_to_all_v recv", it, at, v_recv[static_cast<size_t>(at)], want);
                        }
                }

                for (size_t i = 0; i < ag_in_buf.size(); ++i) ag_in_buf[i] = ag_in(r, it, static_cast<int64_t>(i));
                t0 = clock::now();
                s = kinds_allgather(comm, r, ag_in_buf.data(), ag_in_buf.size(), ag_out.data(), ag_out.size());
                if (r == 0) secs[2] += std::chrono::duration<double>(clock::now() - t0).count();
                if (s != KINDS_OK) {
                    std::fprintf(stderr, "rank %d: kinds_allgather: %s: %s\n", r, kinds_strerror(s), kinds_last_error());
                    wrong.fetch_add(1);
                    return;
                }
                for (int j = 0; j < P; ++j)
                    for (int64_t i = 0; i < M; ++i) {
                        const float want = ag_in(j, it, i);
                        const float got = ag_out[static_cast<size_t>(j * M + i)];
                        if (got != want) return fail("allgather output", it, j * M + i, got, want);
                    }
            }
        });
    }
    for (auto& t : ranks) t.join();
    const int freed = kinds_comm_free(comm);
    if (freed != KINDS_OK) {
        std::fprintf(stderr, "kinds_comm_free: %s\n", kinds_last_error());
        return 1;
    }
    if (wrong.load() != 0) return 1;
    std::printf("ok: P=%d M=%lld R=%d: %d reduce_scatter + %d all_to_all_v + %d allgather calls per rank, every result equal to the reference (rank 0: %.1f / %.1f / %.1f us per call)\n",
                P, static_cast<long long>(M), R, iters, iters, iters, secs[0] / iters * 1e6, secs[1] / iters * 1e6, secs[2] / iters * 1e6);
    return 0;
}
