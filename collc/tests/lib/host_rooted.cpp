// rk_reduce, rk_gather and rk_scatter (the host library of examples/reduce.coll, gather.coll
// and scatter.coll) with P threads (argv[1]), every rank's result checked element by element
// against the collective's meaning computed here, root 1 % P, twice over. A rank other than
// the root passes NULL and 0 for the buffer only the root reads or writes (gather's output,
// scatter's input), and a reduce leaves a non-root's data as it was. Prints one PASS or FAIL
// line per kind and round.
#include "rk.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    const int P = argc > 1 ? std::atoi(argv[1]) : 2;
    const int root = 1 % P;
    const size_t m = 1000, np = static_cast<size_t>(P);
    rk_config cfg = {};
    cfg.reduce.root = root;
    cfg.reduce.n = static_cast<int64_t>(m);
    cfg.gather.root = root;
    cfg.gather.m = static_cast<int64_t>(m);
    cfg.scatter.root = root;
    cfg.scatter.m = static_cast<int64_t>(m);
    rk_comm* c = nullptr;
    if (rk_comm_create(P, &cfg, &c) != RK_OK) {
        std::fprintf(stderr, "create: %s\n", rk_last_error());
        return 2;
    }
    int fails = 0;
    for (int round = 0; round < 2; ++round) {
        std::atomic<long> bad_reduce{0}, bad_gather{0}, bad_scatter{0};
        std::vector<std::thread> t;
        for (int r = 0; r < P; ++r)
            t.emplace_back([&, r] {
                const size_t me = static_cast<size_t>(r);
                const bool at_root = r == root;
                auto ok = [](int s, const char* what) {
                    if (s != RK_OK) {
                        std::fprintf(stderr, "%s: %s\n", what, rk_last_error());
                        std::exit(3);
                    }
                };
                std::vector<float> data(m);
                for (size_t k = 0; k < m; ++k) data[k] = float((k * 7 + me * 3 + size_t(round)) % 17);
                const std::vector<float> before = data;
                ok(rk_reduce(c, r, data.data(), m, root), "reduce");
                for (size_t k = 0; k < m; ++k) {
                    float want = 0;
                    for (size_t q = 0; q < np; ++q) want += float((k * 7 + q * 3 + size_t(round)) % 17);
                    bad_reduce += data[k] != (at_root ? want : before[k]);
                }
                std::vector<float> in(m), out(at_root ? m * np : 0);
                for (size_t k = 0; k < m; ++k) in[k] = float(me * 1000 + k + size_t(round));
                ok(rk_gather(c, r, in.data(), m, at_root ? out.data() : nullptr, out.size(), root), "gather");
                for (size_t k = 0; k < out.size(); ++k) bad_gather += out[k] != float((k / m) * 1000 + k % m + size_t(round));
                std::vector<float> src(at_root ? m * np : 0), got(m);
                for (size_t k = 0; k < src.size(); ++k) src[k] = float(k + size_t(round));
                ok(rk_scatter(c, r, at_root ? src.data() : nullptr, src.size(), got.data(), m, root), "scatter");
                for (size_t k = 0; k < m; ++k) bad_scatter += got[k] != float(me * m + k + size_t(round));
            });
        for (auto& x : t) x.join();
        for (auto [kind, bad] : {std::pair<const char*, long>{"reduce", bad_reduce}, {"gather", bad_gather}, {"scatter", bad_scatter}}) {
            std::printf("%s %s round %d (%ld wrong elements)\n", bad == 0 ? "PASS" : "FAIL", kind, round, bad);
            fails += bad != 0;
        }
    }
    rk_comm_free(c);
    return fails == 0 ? 0 : 1;
}
