// Bad input to the reduce_scatter and all_to_all_v calls of a collc host library (libkinds:
// reduce_scatter + all_to_all_v + allgather): each case returns its documented status
// (header kinds.h) on every rank, quickly. Prints one line per case; exit 0 iff every case
// behaved as documented.
#include "kinds.h"

#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

static int failures = 0;

static void expect(const char* name, bool ok, const std::string& detail) {
    std::printf("%s %s: %s\n", ok ? "PASS" : "FAIL", name, detail.c_str());
    if (!ok) ++failures;
}

static kinds_config good() {
    kinds_config c = {};
    c.reduce_scatter.m = 64;
    c.all_to_all_v.m = 32;
    c.all_to_all_v.R = 2;
    c.allgather.m = 16;
    c.wait_timeout_ms = 5000;
    return c;
}

// A fresh communicator for P ranks; every rank runs f(comm, rank) on its own thread.
// Returns each rank's status and message.
static std::vector<std::pair<int, std::string>> run(int P, const std::function<int(kinds_comm*, int)>& f) {
    kinds_config cfg = good();
    kinds_comm* comm = nullptr;
    std::vector<std::pair<int, std::string>> out(static_cast<size_t>(P), {-1, ""});
    if (kinds_comm_create(P, &cfg, &comm) != KINDS_OK) {
        out[0] = {-2, kinds_last_error()};
        return out;
    }
    std::vector<std::thread> t;
    for (int r = 0; r < P; ++r)
        t.emplace_back([&, r] {
            out[static_cast<size_t>(r)].first = f(comm, r);
            out[static_cast<size_t>(r)].second = kinds_last_error();
        });
    for (auto& x : t) x.join();
    kinds_comm_free(comm);
    return out;
}

static std::string show(const std::vector<std::pair<int, std::string>>& v) {
    std::string s;
    for (size_t r = 0; r < v.size(); ++r) s += "rank " + std::to_string(r) + " -> " + kinds_strerror(v[r].first) + " [" + v[r].second.substr(0, 140) + "] ";
    return s;
}

// Every rank: a status in `ok`, and `want` on rank `bad`.
static bool all(const std::vector<std::pair<int, std::string>>& v, int bad, int want, std::initializer_list<int> ok) {
    for (size_t r = 0; r < v.size(); ++r) {
        if (static_cast<int>(r) == bad) {
            if (v[r].first != want) return false;
            continue;
        }
        bool any = false;
        for (int o : ok) any = any || v[r].first == o;
        if (!any) return false;
    }
    return true;
}

int main() {
    const int P = 2;
    // reduce_scatter: recv one element short on rank 1 (ESIZE); its peer is freed (EBROKEN)
    // (its call cannot complete without rank 1).
    auto v = run(P, [](kinds_comm* c, int r) {
        std::vector<float> s(kinds_reduce_scatter_send_count(c), 1.0f), d(kinds_reduce_scatter_recv_count(c));
        return kinds_reduce_scatter(c, r, s.data(), s.size(), d.data(), d.size() - (r == 1 ? 1 : 0));
    });
    expect("reduce_scatter: recv too small", all(v, 1, KINDS_ESIZE, {KINDS_EBROKEN}) && v[1].second.find("recv holds") != std::string::npos, show(v));
    // reduce_scatter: send one row short (ESIZE).
    v = run(P, [](kinds_comm* c, int r) {
        std::vector<float> s(kinds_reduce_scatter_send_count(c), 1.0f), d(kinds_reduce_scatter_recv_count(c));
        return kinds_reduce_scatter(c, r, s.data(), s.size() - (r == 0 ? 64 : 0), d.data(), d.size());
    });
    expect("reduce_scatter: send too small", all(v, 0, KINDS_ESIZE, {KINDS_EBROKEN}), show(v));
    // all_to_all_v: a send count outside the verified 0..=16 (EDOMAIN).
    v = run(P, [](kinds_comm* c, int r) {
        std::vector<float> s(kinds_all_to_all_v_send_count(c)), d(kinds_all_to_all_v_recv_count(c));
        std::vector<int32_t> sc = {1, r == 1 ? 17 : 1}, rc(2);
        return kinds_all_to_all_v(c, r, s.data(), s.size(), sc.data(), d.data(), d.size(), rc.data());
    });
    expect("all_to_all_v: send count above its domain", all(v, 1, KINDS_EDOMAIN, {KINDS_EBROKEN}) && v[1].second.find("send_counts[1] = 17") != std::string::npos, show(v));
    v = run(P, [](kinds_comm* c, int r) {
        std::vector<float> s(kinds_all_to_all_v_send_count(c)), d(kinds_all_to_all_v_recv_count(c));
        std::vector<int32_t> sc = {r == 0 ? -1 : 0, 0}, rc(2);
        return kinds_all_to_all_v(c, r, s.data(), s.size(), sc.data(), d.data(), d.size(), rc.data());
    });
    expect("all_to_all_v: negative send count", all(v, 0, KINDS_EDOMAIN, {KINDS_EBROKEN}), show(v));
    // all_to_all_v: recv too small (ESIZE), NULL counts (EINVAL).
    v = run(P, [](kinds_comm* c, int r) {
        std::vector<float> s(kinds_all_to_all_v_send_count(c)), d(kinds_all_to_all_v_recv_count(c));
        std::vector<int32_t> sc = {1, 1}, rc(2);
        return kinds_all_to_all_v(c, r, s.data(), s.size(), sc.data(), d.data(), d.size() - (r == 1 ? 1 : 0), rc.data());
    });
    expect("all_to_all_v: recv too small", all(v, 1, KINDS_ESIZE, {KINDS_EBROKEN}), show(v));
    v = run(P, [](kinds_comm* c, int r) {
        std::vector<float> s(kinds_all_to_all_v_send_count(c)), d(kinds_all_to_all_v_recv_count(c));
        std::vector<int32_t> sc = {1, 1}, rc(2);
        return kinds_all_to_all_v(c, r, s.data(), s.size(), sc.data(), d.data(), d.size(), r == 0 ? nullptr : rc.data());
    });
    expect("all_to_all_v: NULL recv_counts", all(v, 0, KINDS_EINVAL, {KINDS_EBROKEN}), show(v));
    // A rank calling reduce_scatter while its peer calls all_to_all_v (EMISMATCH on one of
    // them at least; the other is freed: EBROKEN).
    v = run(P, [](kinds_comm* c, int r) {
        if (r == 0) {
            std::vector<float> s(kinds_reduce_scatter_send_count(c), 1.0f), d(kinds_reduce_scatter_recv_count(c));
            return kinds_reduce_scatter(c, r, s.data(), s.size(), d.data(), d.size());
        }
        std::vector<float> s(kinds_all_to_all_v_send_count(c)), d(kinds_all_to_all_v_recv_count(c));
        std::vector<int32_t> sc = {1, 1}, rc(2);
        return kinds_all_to_all_v(c, r, s.data(), s.size(), sc.data(), d.data(), d.size(), rc.data());
    });
    const bool mismatch = (v[0].first == KINDS_EMISMATCH || v[1].first == KINDS_EMISMATCH) &&
                          (v[0].first == KINDS_EMISMATCH || v[0].first == KINDS_EBROKEN) &&
                          (v[1].first == KINDS_EMISMATCH || v[1].first == KINDS_EBROKEN);
    expect("different collectives", mismatch, show(v));
    return failures == 0 ? 0 : 1;
}
