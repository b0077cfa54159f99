// Smoke test for bench/baselines.cpp: every baseline returns a positive, finite number.
#include <cmath>
#include <cstdint>
#include <cstdio>

extern "C" {
double collc_baseline_pingpong_ns(uint64_t iters);
double collc_baseline_pthread_barrier_ns(uint64_t iters);
double collc_baseline_memcpy_ns(uint64_t bytes, uint64_t iters);
double collc_baseline_memcpy_gbps(uint64_t bytes, uint64_t iters);
double collc_baseline_exchange2_ns(uint64_t bytes, uint64_t iters);
}

int main() {
    struct Result {
        const char* name;
        double value;
    } results[] = {
        {"pingpong round trip (ns)", collc_baseline_pingpong_ns(100000)},
        {"pthread_barrier_wait round, 2 threads (ns)", collc_baseline_pthread_barrier_ns(20000)},
        {"memcpy 1 KiB (ns)", collc_baseline_memcpy_ns(1024, 100000)},
        {"memcpy 4 MiB (GB/s)", collc_baseline_memcpy_gbps(4u << 20, 50)},
        {"two-thread exchange of 4 KiB (ns)", collc_baseline_exchange2_ns(4096, 5000)},
    };
    int failures = 0;
    for (const Result& r : results) {
        const bool ok = std::isfinite(r.value) && r.value > 0.0;
        std::printf("%s baseline %s = %.2f\n", ok ? "PASS" : "FAIL", r.name, r.value);
        if (!ok) ++failures;
    }
    return failures == 0 ? 0 : 1;
}
