// Inputs read in place (collc_mpi_lib.hpp ReadInPlace): library `inp` of
// examples/allgather.coll, all_to_all.coll and all_to_all_v.coll (each input only pushed
// from by its own rank: read from the caller's buffer, not staged), or, built with
// -DINP_ALLGATHER_ONLY, of examples/pull_allgather.coll (peers get from the input
// window: staged). At every row length of a list (one element to above a 256-element tile,
// configured for the largest), three calls of each kind back to back, each from a fresh input
// buffer with new values (so a call that read another call's input, a stale window or the
// window's zeros is caught), each result compared bitwise with Open MPI's collective on the
// same input (MPI_Allgather, MPI_Alltoall, MPI_Alltoallv after MPI_Alltoall of the counts),
// and each input checked unchanged after the call. Rank 0 prints "PASS <kind> m=<m>" per
// length and kind, and "ok: np=..." when all passed.
//   collc emit --target mpi --lib inp allgather.coll all_to_all.coll all_to_all_v.coll -o DIR
//   mpirun -np 2 ./mpi_in_place          (COLLC_MPI_READ_IN_PLACE=0: the staged path)
#include "inp.h"
#include "mpi_test.hpp"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

static int me = 0, np = 1;
static long failures = 0;
static const int64_t kRows[] = {1, 7, 255, 256, 257, 1000, 4099};
static const int64_t kMost = 4099;
static const int kR = 2;  // all_to_all_v: rows per block

// Every rank's verdict on one kind at one length: the worst status and the wrong elements.
static void judge(const char* kind, int64_t m, int s, long wrong) {
    const long all = sum_over_ranks(s != INP_OK ? 1 : wrong);
    if (s != INP_OK) std::fprintf(stderr, "rank %d: %s m=%lld: %s: %s\n", me, kind, static_cast<long long>(m), inp_strerror(s), inp_last_error());
    if (me == 0) std::printf("%s %s m=%lld (%ld wrong)\n", all == 0 ? "PASS" : "FAIL", kind, static_cast<long long>(m), all);
    failures += all != 0;
}

static long differ(const std::vector<float>& a, const std::vector<float>& b, size_t from, size_t n) {
    long w = 0;
    for (size_t i = from; i < from + n; ++i) w += a[i] != b[i];
    return w;
}

// A fresh input of n elements: different on every rank, call and element.
static std::vector<float> input(size_t n, int call) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((me * 131 + call * 17 + static_cast<int>(i % 4093)) % 8191 + 1);
    return v;
}

// Three calls of an exchange with n_in input and n_out output elements, each against the
// native collective `native(in, want)` on the same fresh input.
static void exchange_at(const char* kind, int64_t m, size_t n_in, size_t n_out, int salt,
                        const std::function<void(const float*, float*)>& native,
                        const std::function<int(const float*, float*)>& lib) {
    int worst = INP_OK;
    long wrong = 0;
    for (int call = 0; call < 3; ++call) {
        const std::vector<float> in = input(n_in, call + salt), keep = in;
        std::vector<float> out(n_out, -1.0f), want(n_out);
        native(in.data(), want.data());
        const int s = lib(in.data(), out.data());
        if (s != INP_OK) worst = s;
        wrong += differ(out, want, 0, n_out) + differ(in, keep, 0, n_in);
    }
    judge(kind, m, worst, wrong);
}

static void allgather_at(inp_comm* c, int64_t m) {
    const size_t n = static_cast<size_t>(m), all = n * static_cast<size_t>(np);
    exchange_at(
        "allgather", m, n, all, 0,
        [&](const float* in, float* want) {
            MPI_Allgather(in, static_cast<int>(n), MPI_FLOAT, want, static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD);
        },
        [&](const float* in, float* out) { return inp_allgather(c, in, n, out, all); });
}

#ifndef INP_ALLGATHER_ONLY
static void all_to_all_at(inp_comm* c, int64_t m) {
    const size_t n = static_cast<size_t>(m) * static_cast<size_t>(np);
    exchange_at(
        "all_to_all", m, n, n, 3,
        [&](const float* in, float* want) {
            MPI_Alltoall(in, static_cast<int>(m), MPI_FLOAT, want, static_cast<int>(m), MPI_FLOAT, MPI_COMM_WORLD);
        },
        [&](const float* in, float* out) { return inp_all_to_all(c, in, n, out, n); });
}

// P blocks of kR rows of m; rank me sends (me + d + call) % (kR + 1) rows to rank d.
static void all_to_all_v_at(inp_comm* c, int64_t m) {
    const size_t block = static_cast<size_t>(kR) * static_cast<size_t>(m), n = block * static_cast<size_t>(np);
    const size_t P = static_cast<size_t>(np);
    int worst = INP_OK;
    long wrong = 0;
    for (int call = 0; call < 3; ++call) {
        const std::vector<float> in = input(n, call + 6), keep = in;
        std::vector<float> out(n, -1.0f), want(n, -1.0f);
        std::vector<int32_t> sc(P), rc(P, -1), wc(P);
        for (int d = 0; d < np; ++d) sc[size_t(d)] = (me + d + call) % (kR + 1);
        MPI_Alltoall(sc.data(), 1, MPI_INT32_T, wc.data(), 1, MPI_INT32_T, MPI_COMM_WORLD);
        std::vector<int> scnt(P), rcnt(P), dis(P);
        for (size_t d = 0; d < P; ++d) {
            scnt[d] = static_cast<int>(sc[d] * m);
            rcnt[d] = static_cast<int>(wc[d] * m);
            dis[d] = static_cast<int>(d * block);
        }
        MPI_Alltoallv(in.data(), scnt.data(), dis.data(), MPI_FLOAT, want.data(), rcnt.data(), dis.data(), MPI_FLOAT, MPI_COMM_WORLD);
        const int s = inp_all_to_all_v(c, in.data(), n, sc.data(), out.data(), n, rc.data());
        if (s != INP_OK) worst = s;
        for (size_t j = 0; j < P; ++j) {
            wrong += rc[j] != wc[j];
            wrong += differ(out, want, j * block, static_cast<size_t>(wc[j] * m));
        }
        wrong += differ(in, keep, 0, n);
    }
    judge("all_to_all_v", m, worst, wrong);
}
#endif

int main(int argc, char** argv) {
    const World w(&argc, &argv);
    me = w.me;
    np = w.np;
    inp_config cfg = {};
    cfg.allgather.m = kMost;
#ifndef INP_ALLGATHER_ONLY
    cfg.all_to_all.m = kMost;
    cfg.all_to_all_v.m = kMost;
    cfg.all_to_all_v.R = kR;
#endif
    cfg.wait_timeout_ms = 120000;
    inp_comm* c = nullptr;
    const int s = inp_comm_create(MPI_COMM_WORLD, &cfg, &c);
    if (s != INP_OK) {
        std::fprintf(stderr, "rank %d: inp_comm_create: %s: %s\n", me, inp_strerror(s), inp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (const int64_t m : kRows) {
        allgather_at(c, m);
#ifndef INP_ALLGATHER_ONLY
        all_to_all_at(c, m);
        all_to_all_v_at(c, m);
#endif
    }
    const int f = inp_comm_free(c);
    if (f != INP_OK) std::fprintf(stderr, "rank %d: inp_comm_free: %s\n", me, inp_last_error());
    if (me == 0 && failures == 0 && f == INP_OK) std::printf("ok: np=%d\n", np);
    MPI_Finalize();
    return failures == 0 && f == INP_OK ? 0 : 1;
}
