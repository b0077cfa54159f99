// Outputs written in place (collc_mpi_lib.hpp WriteInPlace): library `wip` of
// examples/pull_allgather.coll (every rank gets into its own target),
// examples/allreduce_allpairs.coll (peers put into `scratch`, each rank reduces into its own
// `data`) and examples/credit_window_pipeline.coll (non-roots copy the ring into their own
// `data`): each output is the caller's buffer during the call, nothing is copied out. Or,
// built with -DWIP_ALLGATHER_ONLY, a library of one allgather alone (collc/tests/lib.rs: the
// shipped push allgather, whose peers put into the target, hand-forced to write in place,
// must fail here).
//
// At every row length of a list (one element to above a 256-element tile), three calls of
// each kind back to back, each from a fresh input with new values into an output prefilled
// with -1 (so a call that left another call's result, the window's content or the fill is
// caught), each result compared bitwise with Open MPI's collective on the same input
// (MPI_Allgather, MPI_Allreduce, MPI_Bcast; small integers, so every summation order is
// exact), and each allgather input checked unchanged. The allreduce's count is fixed at
// creation (its scratch window is sized by it), so each length creates its own communicator.
// Then a failure inside a call whose output is in place (rank 0 calls allgather, the others
// broadcast: EMISMATCH): the buffers of that call are filled with 7 afterwards, the calls
// after it (which recover the communicator, zeroing its windows) must leave them at 7 and get
// their own result right: the window was given back its own memory on the way out.
// Rank 0 prints "PASS <kind> m=<m>" per length and kind, and "ok: np=..." when all passed.
//   collc emit --target mpi --lib wip pull_allgather.coll allreduce_allpairs.coll
//       credit_window_pipeline.coll -o DIR
//   mpirun -np 2 ./mpi_write_in_place   (COLLC_MPI_WRITE_IN_PLACE=0: the copied-out path)
#include "mpi_test.hpp"
#include "wip.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

static int me = 0, np = 1;
static long failures = 0;
static const int64_t kRows[] = {1, 7, 255, 256, 257, 1000, 4099};
static const int64_t kMost = 4099;

// Every rank's verdict on one check: the worst status and the wrong elements.
static void judge(const char* kind, int64_t m, int s, long wrong) {
    const long all = sum_over_ranks(s != WIP_OK ? 1 : wrong);
    if (s != WIP_OK) std::fprintf(stderr, "rank %d: %s m=%lld: %s: %s\n", me, kind, static_cast<long long>(m), wip_strerror(s), wip_last_error());
    if (me == 0) std::printf("%s %s m=%lld (%ld wrong)\n", all == 0 ? "PASS" : "FAIL", kind, static_cast<long long>(m), all);
    failures += all != 0;
}

static long differ(const std::vector<float>& a, const std::vector<float>& b) {
    long w = 0;
    for (size_t i = 0; i < a.size(); ++i) w += a[i] != b[i];
    return w;
}

// A fresh input of n small integers: different on every rank, call and element.
static std::vector<float> input(size_t n, int call) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((me * 131 + call * 17 + static_cast<int>(i % 4093)) % 251 + 1);
    return v;
}

static wip_comm* create(int64_t n_allreduce) {
    wip_config cfg = {};
    cfg.allgather.m = kMost;
#ifndef WIP_ALLGATHER_ONLY
    cfg.allreduce.n = n_allreduce;
    cfg.broadcast.n = kMost;
    cfg.broadcast.root = np - 1;
#else
    (void)n_allreduce;
#endif
    cfg.wait_timeout_ms = 120000;
    wip_comm* c = nullptr;
    const int s = wip_comm_create(MPI_COMM_WORLD, &cfg, &c);
    if (s != WIP_OK) {
        std::fprintf(stderr, "rank %d: wip_comm_create: %s: %s\n", me, wip_strerror(s), wip_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return c;
}

static void allgather_at(wip_comm* c, int64_t m) {
    const size_t n = static_cast<size_t>(m), all = n * static_cast<size_t>(np);
    int worst = WIP_OK;
    long wrong = 0;
    for (int call = 0; call < 3; ++call) {
        const std::vector<float> in = input(n, call), keep = in;
        std::vector<float> out(all, -1.0f), want(all);
        MPI_Allgather(in.data(), static_cast<int>(n), MPI_FLOAT, want.data(), static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD);
        const int s = wip_allgather(c, in.data(), n, out.data(), all);
        if (s != WIP_OK) worst = s;
        wrong += differ(out, want) + differ(in, keep);
    }
    judge("allgather", m, worst, wrong);
}

#ifndef WIP_ALLGATHER_ONLY
static void allreduce_at(wip_comm* c, int64_t m) {
    const size_t n = static_cast<size_t>(m);
    int worst = WIP_OK;
    long wrong = 0;
    for (int call = 0; call < 3; ++call) {
        std::vector<float> data = input(n, call + 3), want(n);
        MPI_Allreduce(data.data(), want.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        const int s = wip_allreduce(c, data.data(), n);
        if (s != WIP_OK) worst = s;
        wrong += differ(data, want);
    }
    judge("allreduce", m, worst, wrong);
}

static void broadcast_at(wip_comm* c, int64_t m) {
    const size_t n = static_cast<size_t>(m);
    const int root = np - 1;
    int worst = WIP_OK;
    long wrong = 0;
    for (int call = 0; call < 3; ++call) {
        std::vector<float> data = me == root ? input(n, call + 6) : std::vector<float>(n, -1.0f);
        std::vector<float> want = input(n, call + 6);
        MPI_Bcast(want.data(), static_cast<int>(n), MPI_FLOAT, root, MPI_COMM_WORLD);
        const int s = wip_broadcast(c, data.data(), n, root);
        if (s != WIP_OK) worst = s;
        wrong += differ(data, want);
    }
    judge("broadcast", m, worst, wrong);
}

// A call that fails with its output in place (rank 0 calls allgather, the others broadcast:
// EMISMATCH where it is found; a non-root may finish its broadcast before it is), then
// allgather calls until one succeeds on this rank (a rank whose next call finds a peer's
// failure returns EBROKEN and recovers at the one after; no world collective in between, which
// a recovering peer could not join): the failed call's buffers, refilled with 7 after it, must
// stay 7 (the recovery zeroes the windows' own memory, not the caller's buffer), and the
// result must be right.
static void failure_restores(wip_comm* c) {
    const size_t n = 300, all = n * static_cast<size_t>(np);
    std::vector<float> in = input(n, 9), out(all, -1.0f), data(n, -1.0f), got(all), want(all);
    MPI_Allgather(in.data(), static_cast<int>(n), MPI_FLOAT, want.data(), static_cast<int>(n), MPI_FLOAT, MPI_COMM_WORLD);
    const int s = me == 0 ? wip_allgather(c, in.data(), n, out.data(), all) : wip_broadcast(c, data.data(), n, np - 1);
    std::fill(out.begin(), out.end(), 7.0f);
    std::fill(data.begin(), data.end(), 7.0f);
    int s2 = WIP_EBROKEN;
    for (int attempt = 0; attempt < 3 && s2 != WIP_OK; ++attempt) {
        std::fill(got.begin(), got.end(), -1.0f);
        s2 = wip_allgather(c, in.data(), n, got.data(), all);
    }
    long wrong = differ(got, want);
    for (const float x : out) wrong += x != 7.0f;
    for (const float x : data) wrong += x != 7.0f;
    if (sum_over_ranks(s == WIP_EMISMATCH ? 1 : 0) == 0) {
        if (me == 0) std::fprintf(stderr, "no rank found the mismatch\n");
        ++wrong;
    }
    judge("after-failure", static_cast<int64_t>(n), s2, wrong);
}
#endif

int main(int argc, char** argv) {
    const World w(&argc, &argv);
    me = w.me;
    np = w.np;
    for (const int64_t m : kRows) {
        wip_comm* c = create(m);
        allgather_at(c, m);
#ifndef WIP_ALLGATHER_ONLY
        allreduce_at(c, m);
        broadcast_at(c, m);
        if (m == kMost) failure_restores(c);
#endif
        const int f = wip_comm_free(c);
        if (f != WIP_OK) {
            std::fprintf(stderr, "rank %d: wip_comm_free: %s\n", me, wip_last_error());
            ++failures;
        }
    }
    if (me == 0 && failures == 0) std::printf("ok: np=%d\n", np);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}
