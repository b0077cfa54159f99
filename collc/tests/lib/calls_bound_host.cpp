// A `calls <= 2` barrier packaged as a host library: each of 2 rank threads makes 2 calls
// (OK), then a third, which must return EDOMAIN naming the declaration and leave the
// communicator usable (comm_free finds every credit cell back at 0).
#include "bnd.h"

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

int main() {
    bnd_config cfg = {};
    cfg.wait_timeout_ms = 10000;
    bnd_comm* comm = nullptr;
    if (bnd_comm_create(2, &cfg, &comm) != BND_OK) {
        std::printf("FAIL create: %s\n", bnd_last_error());
        return 1;
    }
    std::vector<int> st(6, -1);
    std::vector<std::string> msg(2);
    std::vector<std::thread> t;
    for (int r = 0; r < 2; ++r) {
        t.emplace_back([&, r] {
            for (int k = 0; k < 3; ++k) st[static_cast<size_t>(r * 3 + k)] = bnd_barrier(comm, r);
            msg[static_cast<size_t>(r)] = bnd_last_error();
        });
    }
    for (auto& x : t) x.join();
    int fails = 0;
    for (int r = 0; r < 2; ++r) {
        const bool ok = st[static_cast<size_t>(r * 3)] == BND_OK && st[static_cast<size_t>(r * 3 + 1)] == BND_OK &&
                        st[static_cast<size_t>(r * 3 + 2)] == BND_EDOMAIN &&
                        msg[static_cast<size_t>(r)].find("call 3 on rank") != std::string::npos &&
                        msg[static_cast<size_t>(r)].find("calls <= 2 (") != std::string::npos;
        std::printf("%s rank %d: %d %d %d: %s\n", ok ? "PASS" : "FAIL", r, st[static_cast<size_t>(r * 3)],
                    st[static_cast<size_t>(r * 3 + 1)], st[static_cast<size_t>(r * 3 + 2)], msg[static_cast<size_t>(r)].c_str());
        fails += ok ? 0 : 1;
    }
    const int f = bnd_comm_free(comm);
    std::printf("%s free: %d %s\n", f == BND_OK ? "PASS" : "FAIL", f, f == BND_OK ? "" : bnd_last_error());
    return fails == 0 && f == BND_OK ? 0 : 1;
}
