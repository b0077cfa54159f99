// Bad input to a collc MPI library (libcollmpi: allreduce_mesh + broadcast_read_complete),
// run with mpirun -np 2: every case must return its documented status within the wait
// timeout (never hang, never a silent wrong result, never MPI_Abort). Rank 0 prints one line
// per case; every rank exits 0 iff every case behaved as documented on every rank.
#include <mpi.h>

#include "collmpi.h"

#include <cstdio>
#include <string>
#include <vector>

static int me = 0;
static int failures = 0;

static void expect(const char* name, bool ok, const std::string& detail) {
    int mine = ok ? 0 : 1, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!ok) std::fprintf(stderr, "rank %d FAIL %s: %s\n", me, name, detail.c_str());
    if (me == 0) std::printf("%s %s: %s\n", all == 0 ? "PASS" : "FAIL", name, detail.c_str());
    failures += all;
}

// A mismatch between the ranks' calls: at least one rank finds it (EMISMATCH, its message
// naming `needle`); a rank that sees a peer's failure first returns EBROKEN, as documented.
// Collective: every rank calls it.
static bool mismatch_found(int s, const char* needle) {
    const bool mine = s == COLLMPI_EMISMATCH && std::string(collmpi_last_error()).find(needle) != std::string::npos;
    int found = mine ? 1 : 0, any = 0;
    MPI_Allreduce(&found, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return (mine || s == COLLMPI_EBROKEN) && any == 1;
}

static collmpi_config good() {
    collmpi_config c = {};
    c.allreduce.n = 600;
    c.allreduce.C = 1;
    c.allreduce.stride = 1;
    c.broadcast.root = 1;
    c.broadcast.n = 600;
    c.wait_timeout_ms = 1000;
    return c;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    std::vector<float> d(600, 1.0f);
    collmpi_comm* comm = nullptr;

    // ---- outside the verified domain: refused at creation (every rank) ------------------
    collmpi_config c = good();
    c.allreduce.n = 0;
    int s = collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    expect("n = 0", s == COLLMPI_EDOMAIN && comm == nullptr, collmpi_last_error());
    c = good();
    c.allreduce.C = 2;
    s = collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    expect("require stride >= C fails", s == COLLMPI_EDOMAIN, collmpi_last_error());

    // ---- a correct call, then a second communicator in the same process -----------------
    c = good();
    s = collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    expect("create", s == COLLMPI_OK, collmpi_last_error());
    s = collmpi_allreduce(comm, d.data(), d.size());
    expect("a correct call", s == COLLMPI_OK && d[0] == 2.0f, collmpi_last_error());
    // A second communicator in the same process is a communicator of its own (its own
    // duplicated MPI_Comm and windows; mpi_two_comms.cpp uses two alternately).
    collmpi_comm* second = nullptr;
    s = collmpi_comm_create(MPI_COMM_WORLD, &c, &second);
    expect("a second communicator", s == COLLMPI_OK && second != nullptr, collmpi_last_error());
    s = collmpi_comm_free(second);
    expect("free the second", s == COLLMPI_OK, collmpi_last_error());
    s = collmpi_comm_free(comm);
    expect("free: credit cells back at 0", s == COLLMPI_OK, collmpi_last_error());

    // ---- counts per call: any count up to the configured one, on one communicator ------
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    {
        bool right = true;
        std::string why = "allreduce and broadcast at 600, 1, 300, 300, 599, 600 elements equal MPI_Allreduce / the root's";
        const size_t counts[] = {600, 1, 300, 300, 599, 600};
        for (size_t k = 0; k < sizeof counts / sizeof counts[0] && right; ++k) {
            const size_t n = counts[k];
            std::vector<float> a(n), want(n), b(n);
            for (size_t i = 0; i < n; ++i) a[i] = static_cast<float>((me * 7 + static_cast<int>(i + k)) % 23);
            MPI_Allreduce(a.data(), want.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            s = collmpi_allreduce(comm, a.data(), n);
            if (s != COLLMPI_OK || a != want) {
                right = false;
                why = "allreduce at " + std::to_string(n) + ": " + collmpi_strerror(s) + " " + collmpi_last_error();
            }
            for (size_t i = 0; i < n; ++i) b[i] = me == 1 ? static_cast<float>((i * 3 + k) % 17) : -1.0f;
            s = collmpi_broadcast(comm, b.data(), n, 1);
            for (size_t i = 0; i < n && right; ++i)
                if (s != COLLMPI_OK || b[i] != static_cast<float>((i * 3 + k) % 17)) {
                    right = false;
                    why = "broadcast at " + std::to_string(n) + ": " + collmpi_strerror(s) + " " + collmpi_last_error();
                }
        }
        expect("counts per call", right, why);
    }
    s = collmpi_comm_free(comm);
    expect("free after several counts: credit cells back at 0", s == COLLMPI_OK, collmpi_last_error());

    // ---- a count above the configured one on rank 0: EDOMAIN there, EBROKEN on the peer
    // promptly (its wait timeout is an hour: the peer learns it from rank 0's call record) ---
    c.wait_timeout_ms = 3600 * 1000;
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    double t0 = MPI_Wtime();
    s = collmpi_allreduce(comm, d.data(), me == 0 ? 601 : d.size());
    double ms = (MPI_Wtime() - t0) * 1e3;
    expect("count above the configured one", me == 0 ? s == COLLMPI_EDOMAIN : (s == COLLMPI_EBROKEN && ms < 5000),
           std::string(collmpi_strerror(s)) + ": " + collmpi_last_error());
    // The next call recovers the communicator on every rank (windows and records zeroed,
    // call indices restarted) and runs; so do the calls after it, and free finds every
    // credit back at 0.
    {
        bool right = true;
        std::string why = "3 allreduces and 3 broadcasts after the failure equal MPI_Allreduce / the root's";
        for (int k = 0; k < 3 && right; ++k) {
            std::vector<float> a(600), want(600), b(600);
            for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((me * 5 + static_cast<int>(i) + k) % 19);
            MPI_Allreduce(a.data(), want.data(), 600, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            s = collmpi_allreduce(comm, a.data(), a.size());
            if (s != COLLMPI_OK || a != want) {
                right = false;
                why = "allreduce " + std::to_string(k) + ": " + collmpi_strerror(s) + " " + collmpi_last_error();
            }
            for (size_t i = 0; i < b.size(); ++i) b[i] = me == 1 ? static_cast<float>((i + static_cast<size_t>(k)) % 13) : -1.0f;
            s = collmpi_broadcast(comm, b.data(), b.size(), 1);
            for (size_t i = 0; i < b.size() && right; ++i)
                if (s != COLLMPI_OK || b[i] != static_cast<float>((i + static_cast<size_t>(k)) % 13)) {
                    right = false;
                    why = "broadcast " + std::to_string(k) + ": " + collmpi_strerror(s) + " " + collmpi_last_error();
                }
        }
        expect("the calls after a bad argument recover and are right", right, why);
    }
    s = collmpi_comm_free(comm);
    expect("free after recovery: credit cells back at 0", s == COLLMPI_OK, collmpi_last_error());

    // ---- a NULL buffer on rank 1 before rank 0 enters the call: rank 1 EINVAL; rank 0 finds
    // the failure at its call's entry and returns EBROKEN at once (rank 1 may be in another
    // collective: rank 0 does not wait for it); both next calls recover and are right -------
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    {
        std::vector<float> a(600, 1.0f);
        s = collmpi_allreduce(comm, a.data(), a.size());
        bool right = s == COLLMPI_OK && a[0] == 2.0f;
        std::string why = std::string("a first call: ") + collmpi_strerror(s);
        if (me == 1) {
            s = collmpi_allreduce(comm, nullptr, 600);
            right = right && s == COLLMPI_EINVAL;
            why += std::string(", NULL: ") + collmpi_strerror(s);
        }
        MPI_Barrier(MPI_COMM_WORLD);  // rank 0 enters after rank 1's failure is published
        std::vector<float> x(600), want(600);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((me + 3 * static_cast<int>(i)) % 11);
        MPI_Allreduce(x.data(), want.data(), 600, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (me == 0) {
            const double t = MPI_Wtime();
            s = collmpi_allreduce(comm, x.data(), x.size());
            const double ms = (MPI_Wtime() - t) * 1e3;
            right = right && s == COLLMPI_EBROKEN && ms < 500;
            why += std::string(", found at entry: ") + collmpi_strerror(s) + " after " + std::to_string(static_cast<int>(ms)) + " ms";
        }
        MPI_Barrier(MPI_COMM_WORLD);  // rank 1 is in another collective meanwhile
        s = collmpi_allreduce(comm, x.data(), x.size());
        right = right && s == COLLMPI_OK && x == want;
        why += std::string(", then: ") + collmpi_strerror(s) + " " + collmpi_last_error();
        expect("a failed peer found at entry: EBROKEN at once, then recovered and right", right, why);
    }
    s = collmpi_comm_free(comm);
    expect("free: credit cells back at 0", s == COLLMPI_OK, collmpi_last_error());

    // ---- a peer that never calls: rank 0's call fails (EDOMAIN), its next call's recovery
    // waits for rank 1, which makes no call, fails after the wait timeout, and the
    // communicator refuses every later call there (EBROKEN, at once) ------------------------
    c.wait_timeout_ms = 1000;
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    {
        bool right = true;
        std::string why = "rank 1 makes no call";
        if (me == 0) {
            s = collmpi_allreduce(comm, d.data(), 601);
            right = s == COLLMPI_EDOMAIN;
            why = std::string("the failing call: ") + collmpi_strerror(s);
            double t = MPI_Wtime();
            s = collmpi_allreduce(comm, d.data(), d.size());
            const double first_ms = (MPI_Wtime() - t) * 1e3;
            const std::string msg = collmpi_last_error();
            right = right && s == COLLMPI_EBROKEN && msg.find("recovery failed") != std::string::npos && first_ms >= 900;
            why += ", recovery: " + std::string(collmpi_strerror(s)) + " after " + std::to_string(static_cast<int>(first_ms)) + " ms: " + msg;
            t = MPI_Wtime();
            s = collmpi_allreduce(comm, d.data(), d.size());
            const double again_ms = (MPI_Wtime() - t) * 1e3;
            right = right && s == COLLMPI_EBROKEN && again_ms < 500;
            why += "; then " + std::string(collmpi_strerror(s)) + " after " + std::to_string(static_cast<int>(again_ms)) + " ms";
        }
        expect("a recovery the peer never joins fails after the wait timeout; later calls refused", right, why);
    }
    s = collmpi_comm_free(comm);
    expect("free after a failed recovery returns", s == COLLMPI_OK, collmpi_last_error());
    c.wait_timeout_ms = 3600 * 1000;

    // ---- different counts on the ranks: EMISMATCH on both, found by the call records ------
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    s = collmpi_allreduce(comm, d.data(), me == 0 ? 599 : d.size());
    expect("different counts at the same call", mismatch_found(s, "count"),
           std::string(collmpi_strerror(s)) + ": " + collmpi_last_error());
    collmpi_comm_free(comm);
    c = good();

    // ---- different collectives at the same call index: EMISMATCH on both -----------------
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    t0 = MPI_Wtime();
    s = me == 0 ? collmpi_allreduce(comm, d.data(), d.size()) : collmpi_broadcast(comm, d.data(), d.size(), 1);
    ms = (MPI_Wtime() - t0) * 1e3;
    expect("different collectives at the same call", mismatch_found(s, "") && ms < 5000,
           std::string(collmpi_strerror(s)) + ": " + collmpi_last_error());
    collmpi_comm_free(comm);

    // ---- the same with a one-hour wait timeout: found by the call records, not the timeout
    // (a timeout path would hang past the test's own watchdog) ---------------------------
    c.wait_timeout_ms = 3600 * 1000;
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    s = me == 1 ? collmpi_allreduce(comm, d.data(), d.size()) : collmpi_broadcast(comm, d.data(), d.size(), 1);
    expect("different collectives, one-hour wait timeout", mismatch_found(s, "called another collective"),
           std::string(collmpi_strerror(s)) + ": " + collmpi_last_error());
    collmpi_comm_free(comm);
    c = good();

    // ---- a root other than the configuration's ---------------------------------------------
    collmpi_comm_create(MPI_COMM_WORLD, &c, &comm);
    s = collmpi_broadcast(comm, d.data(), d.size(), 0);
    expect("root differs from the configuration", s == COLLMPI_EDOMAIN, collmpi_last_error());
    {
        std::vector<float> b(600, me == 1 ? 7.0f : 0.0f);
        s = collmpi_broadcast(comm, b.data(), b.size(), 1);
        expect("then the configured root: recovered and right", s == COLLMPI_OK && b[599] == 7.0f,
               std::string(collmpi_strerror(s)) + ": " + collmpi_last_error());
    }
    s = collmpi_comm_free(comm);
    expect("free after the root's recovery", s == COLLMPI_OK, collmpi_last_error());

    if (me == 0) std::printf("%s: %d failure(s)\n", failures == 0 ? "ok" : "FAILED", failures);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}
