// rk_reduce, rk_gather and rk_scatter (the MPI library of examples/reduce.coll, gather.coll
// and scatter.coll) against MPI_Reduce, MPI_Gather and MPI_Scatter on the same buffers,
// bitwise, at several counts per call on one communicator (root 1 % P; the inputs small
// integers, so any order of the sum is exact). A rank other than the root passes NULL and 0
// for the buffer only the root reads or writes (gather's output, scatter's input), and a
// reduce leaves a non-root's data as it was. Prints one PASS or FAIL line per kind and
// count on rank 0.
#include "mpi_test.hpp"
#include "rk.h"

#include <cstdio>
#include <cstring>
#include <vector>

static int fails = 0;

static void verdict(int me, const char* kind, size_t m, long bad) {
    const long all = sum_over_ranks(bad);
    if (me == 0) std::printf("%s %s m=%zu (%ld wrong elements)\n", all == 0 ? "PASS" : "FAIL", kind, m, all);
    fails += all != 0;
}

static bool same(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

static void call_ok(int s, const char* what) {
    if (s != RK_OK) {
        std::fprintf(stderr, "%s: %s\n", what, rk_last_error());
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

int main(int argc, char** argv) {
    const World w(&argc, &argv);
    const int root = 1 % w.np;
    const size_t cap = 4096;
    rk_config cfg = {};
    cfg.reduce.root = root;
    cfg.reduce.n = cap;
    cfg.gather.root = root;
    cfg.gather.m = cap;
    cfg.scatter.root = root;
    cfg.scatter.m = cap;
    rk_comm* c = nullptr;
    call_ok(rk_comm_create(MPI_COMM_WORLD, &cfg, &c), "create");
    const size_t np = static_cast<size_t>(w.np), me = static_cast<size_t>(w.me);
    const bool at_root = w.me == root;
    for (int round = 0; round < 2; ++round)
        for (size_t m : {size_t(1), size_t(7), size_t(1000), cap}) {
            // reduce
            std::vector<float> data(m), want(m), before;
            for (size_t k = 0; k < m; ++k) data[k] = float((k * 7 + me * 3 + size_t(round)) % 17);
            before = data;
            MPI_Reduce(data.data(), want.data(), int(m), MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
            call_ok(rk_reduce(c, data.data(), m, root), "reduce");
            verdict(w.me, "reduce", m, at_root ? !same(data, want) : !same(data, before));
            // gather
            std::vector<float> in(m), out(at_root ? m * np : 0), ref(at_root ? m * np : 0);
            for (size_t k = 0; k < m; ++k) in[k] = float(me * 1000 + k % 1000 + size_t(round));
            MPI_Gather(in.data(), int(m), MPI_FLOAT, ref.data(), int(m), MPI_FLOAT, root, MPI_COMM_WORLD);
            call_ok(rk_gather(c, in.data(), m, at_root ? out.data() : nullptr, at_root ? out.size() : 0, root), "gather");
            verdict(w.me, "gather", m, !same(out, ref));
            // scatter
            std::vector<float> src(at_root ? m * np : 0), got(m), exp(m);
            for (size_t k = 0; k < src.size(); ++k) src[k] = float(k % 4099 + size_t(round));
            MPI_Scatter(src.data(), int(m), MPI_FLOAT, exp.data(), int(m), MPI_FLOAT, root, MPI_COMM_WORLD);
            call_ok(rk_scatter(c, at_root ? src.data() : nullptr, at_root ? src.size() : 0, got.data(), m, root), "scatter");
            verdict(w.me, "scatter", m, !same(got, exp));
        }
    // A root other than the configured one is refused on every rank (EDOMAIN).
    std::vector<float> d(8, 1.0f);
    const int s = rk_reduce(c, d.data(), d.size(), (root + 1) % w.np);
    verdict(w.me, "wrong-root", 8, w.np > 1 && s != RK_EDOMAIN);
    rk_comm_free(c);
    MPI_Finalize();
    return fails == 0 ? 0 : 1;
}
