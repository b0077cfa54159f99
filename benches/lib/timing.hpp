// What the profile programs (profile.cpp, kinds_profile.cpp) share: the clock, a scope timer,
// and libc's sched_yield and nanosleep defined on top of the next definition (dlsym
// RTLD_NEXT). A library's calls bind to the executable's definitions first, so while
// `g_waits.on` each call adds its wall time and count to g_waits. Include it in one
// translation unit of a program.
#ifndef BENCH_TIMING_HPP
#define BENCH_TIMING_HPP

#include <dlfcn.h>
#include <sched.h>
#include <time.h>

inline double now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// Adds the wall nanoseconds of its scope to *ns and one to *n, when `on` at its start.
struct ScopeTimer {
    double* ns;
    long* n;
    double t0;
    ScopeTimer(bool on, double* ns_, long* n_) : ns(on ? ns_ : nullptr), n(n_), t0(on ? now_ns() : 0) {}
    ~ScopeTimer() {
        if (ns == nullptr) return;
        *ns += now_ns() - t0;
        *n += 1;
    }
    ScopeTimer(const ScopeTimer&) = delete;
    ScopeTimer& operator=(const ScopeTimer&) = delete;
};

// The waits' time and count: [0] sched_yield, [1] nanosleep; timed while `on`.
struct Waits {
    double ns[2] = {};
    long n[2] = {};
    bool on = false;
};
inline Waits g_waits;

extern "C" {
int sched_yield() {
    static auto real = reinterpret_cast<int (*)()>(dlsym(RTLD_NEXT, "sched_yield"));
    ScopeTimer t(g_waits.on, &g_waits.ns[0], &g_waits.n[0]);
    return real();
}
int nanosleep(const timespec* req, timespec* rem) {
    static auto real = reinterpret_cast<int (*)(const timespec*, timespec*)>(dlsym(RTLD_NEXT, "nanosleep"));
    ScopeTimer t(g_waits.on, &g_waits.ns[1], &g_waits.n[1]);
    return real(req, rem);
}
}

#endif
