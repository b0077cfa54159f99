// Hardware baselines for the collc runtime benches (criterion, via a Rust build script).
//
// Plain C ABI, no collc headers, no global state; every function is self-contained, spawns at
// most one helper thread and joins it before returning. Build:
//
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -fPIC -pthread -c bench/baselines.cpp
//
// What they measure (lower bounds for the matching collc measurements):
//   collc_baseline_pingpong_ns         one round trip of a cache line between two threads:
//                                      the floor under a P=2 notify/wait exchange
//   collc_baseline_pthread_barrier_ns  one pthread_barrier_wait round at 2 threads: what an
//                                      OS-assisted barrier costs (compare: barrier kernel, P=2)
//   collc_baseline_memcpy_ns / _gbps   single-thread memcpy of `bytes`: the floor under a
//                                      TLOAD/TSTORE data path of that size
//   collc_baseline_exchange2_ns        two threads each publishing `bytes` and copying the
//                                      peer's published `bytes` out, one flag round per call
//                                      (double-buffered, memcpy both ways): what moving a P=2
//                                      allreduce's data between the two cores costs, without
//                                      the reduction (memcpy stays within one core's cache)
//
// With fewer than two free cores the two-thread numbers measure the scheduler, not the
// cache; spinners yield after a short spin so the functions still terminate promptly.

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

// One counter per cache line, so the two threads never share a line except by the handoff.
struct alignas(64) Line {
    std::atomic<uint64_t> value{0};
};

// Polls `a` (acquire) until `done(value)`: a short spin, then yields.
template <class Done>
inline void spin_until(const std::atomic<uint64_t>& a, Done done) {
    uint32_t polls = 0;
    while (!done(a.load(std::memory_order_acquire))) {
        if (++polls < 4096) {
            cpu_relax();
        } else {
            std::this_thread::yield();
        }
    }
}

inline void spin_until_equal(const std::atomic<uint64_t>& a, uint64_t want) {
    spin_until(a, [want](uint64_t v) { return v == want; });
}

inline void spin_until_at_least(const std::atomic<uint64_t>& a, uint64_t want) {
    spin_until(a, [want](uint64_t v) { return v >= want; });
}

double elapsed_ns(Clock::time_point t0, Clock::time_point t1) {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
}

// Keep the compiler from dropping a memcpy whose result is never read.
inline void escape(void* p) { __asm__ __volatile__("" : : "g"(p) : "memory"); }

// One thread's `iters` calls of the exchange (collc_baseline_exchange2_ns): call c copies
// `data` into pub[me][c % 2], raises flag[me] to c + 1, waits for the peer's flag to reach
// c + 1 and copies pub[peer][c % 2] into `recv`. The buffer written in call c is written
// again in call c + 2, which starts after the peer's flag reached c + 2, raised after the
// peer's copy of call c: two buffers need no second round.
void exchange2_rank(int me, const void* data, void* recv, void* const pub[2][2], Line* flag, size_t bytes,
                    uint64_t iters) {
    const int peer = 1 - me;
    for (uint64_t c = 0; c < iters; ++c) {
        std::memcpy(pub[me][c % 2], data, bytes);
        flag[me].value.store(c + 1, std::memory_order_release);
        spin_until_at_least(flag[peer].value, c + 1);
        std::memcpy(recv, pub[peer][c % 2], bytes);
        escape(recv);
    }
}

}  // namespace

extern "C" {

// ns per round trip: the caller writes ping = i, the helper answers pong = i, i = 1..iters.
double collc_baseline_pingpong_ns(uint64_t iters) {
    if (iters == 0) return 0.0;
    Line ping, pong;
    Line ready;
    std::thread helper([&] {
        ready.value.store(1, std::memory_order_release);
        for (uint64_t i = 1; i <= iters; ++i) {
            spin_until_equal(ping.value, i);
            pong.value.store(i, std::memory_order_release);
        }
    });
    spin_until_equal(ready.value, 1);
    const Clock::time_point t0 = Clock::now();
    for (uint64_t i = 1; i <= iters; ++i) {
        ping.value.store(i, std::memory_order_release);
        spin_until_equal(pong.value, i);
    }
    const Clock::time_point t1 = Clock::now();
    helper.join();
    return elapsed_ns(t0, t1) / static_cast<double>(iters);
}

// ns per pthread_barrier_wait round with 2 threads (the caller and one helper).
// Returns a negative value if the barrier cannot be created.
double collc_baseline_pthread_barrier_ns(uint64_t iters) {
    if (iters == 0) return 0.0;
    pthread_barrier_t barrier;
    if (pthread_barrier_init(&barrier, nullptr, 2) != 0) return -1.0;
    std::thread helper([&] {
        for (uint64_t i = 0; i <= iters; ++i) pthread_barrier_wait(&barrier);
    });
    pthread_barrier_wait(&barrier);  // round 0: both threads running
    const Clock::time_point t0 = Clock::now();
    for (uint64_t i = 1; i <= iters; ++i) pthread_barrier_wait(&barrier);
    const Clock::time_point t1 = Clock::now();
    helper.join();
    pthread_barrier_destroy(&barrier);
    return elapsed_ns(t0, t1) / static_cast<double>(iters);
}

// ns per memcpy of `bytes` between two distinct 64-byte-aligned buffers (one warm-up copy
// first). Returns a negative value if allocation fails.
double collc_baseline_memcpy_ns(uint64_t bytes, uint64_t iters) {
    if (bytes == 0 || iters == 0) return 0.0;
    const size_t size = static_cast<size_t>((bytes + 63) / 64 * 64);
    void* src = std::aligned_alloc(64, size);
    void* dst = std::aligned_alloc(64, size);
    if (src == nullptr || dst == nullptr) {
        std::free(src);
        std::free(dst);
        return -1.0;
    }
    std::memset(src, 0x5a, size);
    std::memset(dst, 0, size);
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    escape(dst);
    const Clock::time_point t0 = Clock::now();
    for (uint64_t i = 0; i < iters; ++i) {
        std::memcpy(dst, src, static_cast<size_t>(bytes));
        escape(dst);
    }
    const Clock::time_point t1 = Clock::now();
    std::free(src);
    std::free(dst);
    return elapsed_ns(t0, t1) / static_cast<double>(iters);
}

// memcpy bandwidth in GB/s (1e9 bytes per second) for copies of `bytes`.
double collc_baseline_memcpy_gbps(uint64_t bytes, uint64_t iters) {
    const double ns = collc_baseline_memcpy_ns(bytes, iters);
    return ns > 0.0 ? static_cast<double>(bytes) / ns : ns;
}

// ns per call of the two-thread exchange of `bytes` (exchange2_rank), timed on the caller
// from a common start. Returns a negative value if allocation fails.
double collc_baseline_exchange2_ns(uint64_t bytes, uint64_t iters) {
    if (bytes == 0 || iters == 0) return 0.0;
    const size_t size = static_cast<size_t>((bytes + 63) / 64 * 64);
    void* blocks[8] = {};
    for (void*& b : blocks) {
        b = std::aligned_alloc(64, size);
        if (b != nullptr) std::memset(b, 0x5a, size);
    }
    double ns = -1.0;
    if (std::all_of(std::begin(blocks), std::end(blocks), [](void* b) { return b != nullptr; })) {
        void* const pub[2][2] = {{blocks[4], blocks[5]}, {blocks[6], blocks[7]}};
        Line flag[2];
        Line ready;
        std::thread helper([&] {
            ready.value.store(1, std::memory_order_release);
            exchange2_rank(1, blocks[1], blocks[3], pub, flag, static_cast<size_t>(bytes), iters);
        });
        spin_until_equal(ready.value, 1);
        const Clock::time_point t0 = Clock::now();
        exchange2_rank(0, blocks[0], blocks[2], pub, flag, static_cast<size_t>(bytes), iters);
        const Clock::time_point t1 = Clock::now();
        helper.join();
        ns = elapsed_ns(t0, t1) / static_cast<double>(iters);
    }
    for (void* b : blocks) std::free(b);
    return ns;
}

}  // extern "C"
