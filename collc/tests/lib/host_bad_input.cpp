// Bad input to a collc host library (libcoll: allreduce_mesh + broadcast_read_complete):
// every case must return its documented status quickly (never hang, never a silent wrong
// result). Prints one line per case; exit 0 iff every case behaved as documented.
#include "coll.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

static int failures = 0;

static void expect(const char* name, bool ok, const std::string& detail) {
    std::printf("%s %s: %s\n", ok ? "PASS" : "FAIL", name, detail.c_str());
    if (!ok) ++failures;
}

static coll_config good() {
    coll_config c = {};
    c.allreduce.n = 600;
    c.allreduce.C = 1;
    c.allreduce.stride = 1;
    c.broadcast.root = 1;
    c.broadcast.n = 600;
    c.wait_timeout_ms = 5000;
    return c;
}

static int create_status(int P, coll_config cfg, std::string* msg) {
    coll_comm* comm = nullptr;
    const int s = coll_comm_create(P, &cfg, &comm);
    *msg = coll_last_error();
    if (s == COLL_OK) coll_comm_free(comm);
    else if (comm != nullptr) *msg += " (comm not NULL!)";
    return s;
}

static double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Runs one function per rank on its own thread; returns each status and message.
static void ranks(int P, const std::function<int(int)>& f, std::vector<int>* st, std::vector<std::string>* msg) {
    st->assign(static_cast<size_t>(P), -1);
    msg->assign(static_cast<size_t>(P), "");
    std::vector<std::thread> t;
    for (int r = 0; r < P; ++r)
        t.emplace_back([&, r] {
            (*st)[static_cast<size_t>(r)] = f(r);
            (*msg)[static_cast<size_t>(r)] = coll_last_error();
        });
    for (auto& x : t) x.join();
}

static std::string show(const std::vector<int>& st, const std::vector<std::string>& msg, double ms) {
    std::string s;
    for (size_t r = 0; r < st.size(); ++r) s += "rank " + std::to_string(r) + " -> " + coll_strerror(st[r]) + " [" + msg[r].substr(0, 160) + "] ";
    return s + "(" + std::to_string(static_cast<int>(ms)) + " ms)";
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::printf("usage: host_bad_input P_ABOVE_LIMIT (one more than coll.h's verified world limit)\n");
        return 2;
    }
    const int above = std::atoi(argv[1]);
    std::string m;
    // ---- outside the verified domain: refused at creation -----------------------------
    int s = create_status(above, good(), &m);
    expect("P above the verified limit", s == COLL_EDOMAIN, m);
    s = create_status(0, good(), &m);
    expect("P = 0", s == COLL_EDOMAIN, m);
    coll_config c = good();
    c.allreduce.n = 0;
    s = create_status(2, c, &m);
    expect("n = 0", s == COLL_EDOMAIN && m.find("n = 0") != std::string::npos, m);
    c = good();
    c.broadcast.n = 5000000;
    s = create_status(2, c, &m);
    expect("n above its domain", s == COLL_EDOMAIN, m);
    c = good();
    c.allreduce.C = 2;
    c.allreduce.stride = 1;
    s = create_status(2, c, &m);
    expect("require stride >= C fails", s == COLL_EDOMAIN && m.find("require") != std::string::npos, m);
    c = good();
    c.broadcast.root = 4;
    s = create_status(4, c, &m);
    expect("root outside 0..P", s == COLL_EDOMAIN, m);
    coll_comm* comm = nullptr;
    s = coll_comm_create(2, nullptr, &comm);
    expect("null config", s == COLL_EINVAL && comm == nullptr, coll_last_error());
    s = coll_allreduce(nullptr, 0, nullptr, 0);
    expect("null communicator", s == COLL_EINVAL, coll_last_error());

    std::vector<int> st;
    std::vector<std::string> msg;
    std::vector<float> buf(600, 1.0f);

    // ---- a rank outside 0..P-1 is refused without harm; the communicator still works ----
    {
        coll_config cfg = good();
        coll_comm_create(2, &cfg, &comm);
        s = coll_allreduce(comm, 2, buf.data(), buf.size());
        expect("rank outside 0..P-1", s == COLL_EINVAL, coll_last_error());
        ranks(2, [&](int r) { std::vector<float> d(600, float(r + 1)); const int x = coll_allreduce(comm, r, d.data(), d.size()); return x == COLL_OK && d[0] == 3.0f ? x : -2; }, &st, &msg);
        expect("a correct call after it", st[0] == COLL_OK && st[1] == COLL_OK, show(st, msg, 0));
        const int freed = coll_comm_free(comm);
        expect("free: credit cells back at 0", freed == COLL_OK, coll_strerror(freed));
    }

    // ---- counts per call: any count up to the configured one, on one communicator -------
    for (int P : {2, 3}) {
        coll_config cfg = good();
        cfg.broadcast.root = 1;
        coll_comm_create(P, &cfg, &comm);
        const size_t counts[] = {600, 1, 300, 300, 599, 600};
        ranks(P, [&](int r) {
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
                const size_t n = counts[k];
                std::vector<float> a(n), b(n);
                for (size_t i = 0; i < n; ++i) a[i] = static_cast<float>((r * 7 + static_cast<int>(i + k)) % 23);
                int x = coll_allreduce(comm, r, a.data(), n);
                if (x != COLL_OK) return x;
                for (size_t i = 0; i < n; ++i) {
                    float want = 0;
                    for (int q = 0; q < P; ++q) want += static_cast<float>((q * 7 + static_cast<int>(i + k)) % 23);
                    if (a[i] != want) return -2;
                }
                for (size_t i = 0; i < n; ++i) b[i] = r == 1 ? static_cast<float>((i * 3 + k) % 17) : -1.0f;
                x = coll_broadcast(comm, r, b.data(), n, 1);
                if (x != COLL_OK) return x;
                for (size_t i = 0; i < n; ++i)
                    if (b[i] != static_cast<float>((i * 3 + k) % 17)) return -3;
            }
            return COLL_OK;
        }, &st, &msg);
        bool all = true;
        for (int x : st) all = all && x == COLL_OK;
        expect(P == 2 ? "counts per call, P = 2: 600, 1, 300, 300, 599, 600 elements right"
                      : "counts per call, P = 3: 600, 1, 300, 300, 599, 600 elements right",
               all, show(st, msg, 0));
        const int freed = coll_comm_free(comm);
        expect("free after several counts: credit cells back at 0", freed == COLL_OK, coll_strerror(freed) + std::string(" ") + coll_last_error());
    }

    // ---- different counts at the same call: EMISMATCH, no hang ------------------------------
    {
        coll_config cfg = good();
        coll_comm_create(2, &cfg, &comm);
        const auto t0 = std::chrono::steady_clock::now();
        ranks(2, [&](int r) {
            std::vector<float> d(600, 1.0f);
            if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 1 is waiting by now
            return coll_allreduce(comm, r, d.data(), r == 0 ? 599 : 600);
        }, &st, &msg);
        const double ms = ms_since(t0);
        expect("different counts at the same call", st[0] == COLL_EMISMATCH && st[1] == COLL_EBROKEN && ms < 2000 && msg[0].find("count") != std::string::npos, show(st, msg, ms));
        coll_comm_free(comm);
    }

    // ---- a count above the configured one: EDOMAIN, and the peer already waiting is released
    {
        coll_config cfg = good();
        coll_comm_create(2, &cfg, &comm);
        const auto t0 = std::chrono::steady_clock::now();
        ranks(2, [&](int r) {
            std::vector<float> d(601, 1.0f);
            if (r == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 1 is waiting by now
                return coll_allreduce(comm, r, d.data(), 601);
            }
            return coll_allreduce(comm, r, d.data(), 600);
        }, &st, &msg);
        const double ms = ms_since(t0);
        expect("count above the configured one", st[0] == COLL_EDOMAIN && st[1] == COLL_EBROKEN && ms < 2000, show(st, msg, ms));
        // Every rank calls again: the communicator recovers and the calls are right.
        ranks(2, [&](int r) {
            std::vector<float> d(600);
            for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<float>(r + 1) * static_cast<float>(i % 7);
            int st1 = coll_allreduce(comm, r, d.data(), d.size());
            for (size_t i = 0; i < d.size() && st1 == COLL_OK; ++i)
                if (d[i] != 3.0f * static_cast<float>(i % 7)) st1 = -2;  // wrong result
            std::vector<float> b(600, static_cast<float>(r == 1 ? 5 : 0));
            const int st2 = coll_broadcast(comm, r, b.data(), b.size(), 1);
            return st1 != COLL_OK ? st1 : st2 != COLL_OK ? st2 : b[599] == 5.0f ? COLL_OK : -3;
        }, &st, &msg);
        expect("every rank's next call recovers the communicator; results right", st[0] == COLL_OK && st[1] == COLL_OK, show(st, msg, 0));
        const int fs = coll_comm_free(comm);
        expect("free after the recovery: every credit back at 0", fs == COLL_OK, coll_last_error());
    }

    // ---- after a failure, a rank that never calls again: a peer's first call returns EBROKEN
    //      at once, its next call's recovery fails after the wait timeout (EBROKEN), and the
    //      communicator refuses every later call
    {
        coll_config cfg = good();
        cfg.wait_timeout_ms = 300;
        coll_comm_create(2, &cfg, &comm);
        s = coll_allreduce(comm, 0, nullptr, 600);  // EINVAL poisons the communicator
        auto t0 = std::chrono::steady_clock::now();
        s = coll_allreduce(comm, 1, buf.data(), buf.size());
        double first_ms = ms_since(t0);
        expect("a peer's first call after the failure returns EBROKEN at once", s == COLL_EBROKEN && first_ms < 250, coll_last_error());
        t0 = std::chrono::steady_clock::now();
        s = coll_allreduce(comm, 1, buf.data(), buf.size());
        const double ms = ms_since(t0);
        m = coll_last_error();
        expect("recovery without the peer fails after the wait timeout", s == COLL_EBROKEN && ms >= 250 && ms < 3000 && m.find("recovery failed") != std::string::npos, m + " (" + std::to_string(static_cast<int>(ms)) + " ms)");
        s = coll_allreduce(comm, 0, buf.data(), buf.size());
        expect("later calls refused", s == COLL_EBROKEN, coll_last_error());
        coll_comm_free(comm);
    }

    // ---- a NULL buffer: EINVAL ---------------------------------------------------------------
    {
        coll_config cfg = good();
        coll_comm_create(2, &cfg, &comm);
        s = coll_allreduce(comm, 0, nullptr, 600);
        expect("NULL data", s == COLL_EINVAL, coll_last_error());
        coll_comm_free(comm);
    }

    // ---- ranks calling different collectives: EMISMATCH, no hang ---------------------------
    {
        coll_config cfg = good();
        coll_comm_create(2, &cfg, &comm);
        const auto t0 = std::chrono::steady_clock::now();
        ranks(2, [&](int r) {
            std::vector<float> d(600, 1.0f);
            if (r == 0) return coll_allreduce(comm, r, d.data(), d.size());
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            return coll_broadcast(comm, r, d.data(), d.size(), 1);
        }, &st, &msg);
        const double ms = ms_since(t0);
        const bool one = st[0] == COLL_EMISMATCH || st[1] == COLL_EMISMATCH;
        const bool both_failed = st[0] != COLL_OK && st[1] != COLL_OK;
        expect("different collectives at the same call", one && both_failed && ms < 2000, show(st, msg, ms));
        coll_comm_free(comm);
    }

    // ---- a root other than the communicator's: EDOMAIN --------------------------------------
    {
        coll_config cfg = good();
        coll_comm_create(2, &cfg, &comm);
        const auto t0 = std::chrono::steady_clock::now();
        ranks(2, [&](int r) {
            std::vector<float> d(600, 1.0f);
            return coll_broadcast(comm, r, d.data(), d.size(), r == 0 ? 0 : 1);
        }, &st, &msg);
        const double ms = ms_since(t0);
        expect("root differs from the configuration", st[0] == COLL_EDOMAIN && st[1] != COLL_OK && ms < 2000, show(st, msg, ms));
        coll_comm_free(comm);
    }

    // ---- a peer that never calls: ETIMEOUT after wait_timeout_ms ----------------------------
    {
        coll_config cfg = good();
        cfg.wait_timeout_ms = 300;
        coll_comm_create(2, &cfg, &comm);
        const auto t0 = std::chrono::steady_clock::now();
        s = coll_allreduce(comm, 0, buf.data(), buf.size());
        const double ms = ms_since(t0);
        m = coll_last_error();
        expect("a peer that never calls", s == COLL_ETIMEOUT && ms >= 250 && ms < 3000 && m.find("TWAIT timeout") != std::string::npos, m.substr(0, 200) + " (" + std::to_string(static_cast<int>(ms)) + " ms)");
        coll_comm_free(comm);
    }

    // ---- the same rank from two threads at once: EBUSY --------------------------------------
    {
        coll_config cfg = good();
        coll_comm_create(2, &cfg, &comm);
        const auto t0 = std::chrono::steady_clock::now();
        int first = -1;
        std::thread a([&] { std::vector<float> d(600, 1.0f); first = coll_allreduce(comm, 0, d.data(), d.size()); });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        s = coll_allreduce(comm, 0, buf.data(), buf.size());
        m = coll_last_error();
        a.join();
        const double ms = ms_since(t0);
        expect("two threads as one rank", s == COLL_EBUSY && first == COLL_EBROKEN && ms < 2000, m + " / first call: " + coll_strerror(first));
        coll_comm_free(comm);
    }

    std::printf("%s: %d failure(s)\n", failures == 0 ? "ok" : "FAILED", failures);
    return failures == 0 ? 0 : 1;
}
