// Test driver for the collc CPU runtime. Loads a kernel library (kernel + host_launch.cpp,
// built as a shared object) with dlopen — the way the Rust side will — runs one scenario and
// exits 0 on success, 1 on failure.
//
//   driver LIB.so barrier         P K [skew] [chaos]
//                                                 barrier semantics, cells back at 0
//   driver LIB.so allreduce       P K n C stride [skew] [chaos]
//                                                 sum semantics for every call, cells at 0
//   driver LIB.so expect-timeout  P K MAX_MS     the run must fail with a TWAIT timeout on a
//                                                 GE 2 wait whose cell holds 1, within MAX_MS
//   driver LIB.so expect-residue  P K            the run must end with every peer cell == K
//   driver LIB.so expect-lost-credit P K         with chaos, the run must fail with a TWAIT
//                                                 timeout on a GE 1 wait whose cell holds 0
//                                                 in a call k >= 1 (a reset erased a credit)
//   driver LIB.so api                            config validation and window layout
//                                                 (LIB must be the barrier kernel)
//
// "skew" makes ranks sleep different, call-dependent amounts in their hooks, so fast ranks
// enter call k+1 while slow ones are still in call k. "chaos" sets COLLC_RUN_CHAOS (seeded
// random sleeps/yields inside the kernel, at every TNOTIFY and after every TWAIT).
//
// Every scenario also checks that collc_host_run left no thread behind (/proc/self/task).

#include <dirent.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collc/host_launch.hpp"

namespace {

using RunFn = int32_t (*)(const CollcRunConfig*, CollcRunReport*);
using LayoutFn = int32_t (*)(const CollcRunConfig*, uint64_t*, uint64_t*);
using AbiFn = uint32_t (*)();

RunFn g_run = nullptr;
LayoutFn g_layout = nullptr;
AbiFn g_abi = nullptr;

int count_threads() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] != '.') ++n;
        }
        closedir(d);
    }
    return n;
}

CollcRunConfig base_config(int32_t P, int32_t C, int32_t K) {
    CollcRunConfig cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.abi_version = COLLC_ABI_VERSION;
    cfg.nranks = P;
    cfg.nblocks = C;
    cfg.ncalls = K;
    return cfg;
}

// The thread count once every joined thread's task has left /proc: a joined thread's entry can
// outlive pthread_join by a moment, so a count above `want` is re-read for up to two seconds. A
// leaked thread stays and still fails.
int settled_threads(int want) {
    int n = count_threads();
    for (int i = 0; i < 200 && n > want; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        n = count_threads();
    }
    return n;
}

// Starts and joins one thread, so a runtime that spawns a helper thread on the first
// pthread_create (ThreadSanitizer's background thread) has done so before counting begins.
void warm_thread_runtime() {
    static bool warmed = false;
    if (warmed) return;
    warmed = true;
    std::thread([] {}).join();
}

// Runs cfg, checks that no thread leaked, returns the status. Prints the report message.
int32_t run(const CollcRunConfig& cfg, CollcRunReport* report, double* wall_ms) {
    warm_thread_runtime();
    const int before = count_threads();
    const auto t0 = std::chrono::steady_clock::now();
    const int32_t status = g_run(&cfg, report);
    const auto t1 = std::chrono::steady_clock::now();
    *wall_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const int after = settled_threads(before);
    if (after > before) {
        std::printf("FAIL: %d thread(s) before collc_host_run, %d after\n", before, after);
        std::exit(1);
    }
    return status;
}

void skew_sleep(bool skew, int32_t rank, int32_t call) {
    if (!skew) return;
    const int units = (rank * 7 + call * 3) % 5;  // 0 .. 4
    if (units > 0) std::this_thread::sleep_for(std::chrono::microseconds(300 * units));
}

// ----------------------------------------------------------------------------------------
// barrier: rank r publishes stamp(r, k) in host memory before call k; after call k every rank
// must see every peer's stamp(q, k) (plain memory: TSan checks the barrier's happens-before)
// and all P arrivals of call k.
// ----------------------------------------------------------------------------------------
struct BarrierCheck {
    int32_t P = 0, K = 0;
    bool skew = false;
    std::vector<int64_t> stamps;                    // [P*K], plain
    std::unique_ptr<std::atomic<int32_t>[]> arrivals;  // [K], relaxed
    std::vector<int64_t> errors;                    // [P], written by rank r only
};

int64_t stamp(int32_t r, int32_t k) { return 1000003LL * (r + 1) + 7919LL * (k + 1); }

void barrier_prepare(void* user, int32_t rank, int32_t call, uint8_t*, uint8_t* const*) {
    auto* c = static_cast<BarrierCheck*>(user);
    skew_sleep(c->skew, rank, call);
    c->stamps[static_cast<size_t>(rank * c->K + call)] = stamp(rank, call);
    c->arrivals[call].fetch_add(1, std::memory_order_relaxed);
}

void barrier_collect(void* user, int32_t rank, int32_t call, uint8_t*, uint8_t* const*) {
    auto* c = static_cast<BarrierCheck*>(user);
    for (int32_t q = 0; q < c->P; ++q) {
        if (c->stamps[static_cast<size_t>(q * c->K + call)] != stamp(q, call)) ++c->errors[static_cast<size_t>(rank)];
    }
    if (c->arrivals[call].load(std::memory_order_relaxed) != c->P) ++c->errors[static_cast<size_t>(rank)];
    skew_sleep(c->skew, c->P - 1 - rank, call);
}

struct Options {
    bool skew = false;
    bool chaos = false;
};

void apply(const Options& o, CollcRunConfig* cfg) {
    if (o.chaos) {
        cfg->flags |= COLLC_RUN_CHAOS;
        cfg->chaos_seed = 0xC0FFEEu;
        cfg->chaos_max_us = 200;
    }
}

std::string describe(const Options& o) {
    return std::string(o.skew ? " skew" : "") + (o.chaos ? " chaos" : "");
}

int scenario_barrier(int32_t P, int32_t K, const Options& o) {
    BarrierCheck c;
    c.P = P;
    c.K = K;
    c.skew = o.skew;
    c.stamps.assign(static_cast<size_t>(P * K), 0);
    c.arrivals.reset(new std::atomic<int32_t>[static_cast<size_t>(K)]);
    for (int32_t k = 0; k < K; ++k) c.arrivals[k].store(0);
    c.errors.assign(static_cast<size_t>(P), 0);

    const CollcBufferDesc bufs[] = {{"sig", static_cast<uint64_t>(P) * 4, COLLC_BUFFER_SIGNAL, 0}};
    const int64_t scalars[] = {P};
    CollcRunConfig cfg = base_config(P, 1, K);
    cfg.buffers = bufs;
    cfg.nbuffers = 1;
    cfg.scalars = scalars;
    cfg.nscalars = 1;
    cfg.user = &c;
    cfg.prepare = barrier_prepare;
    cfg.collect = barrier_collect;
    apply(o, &cfg);

    auto report = std::make_unique<CollcRunReport>();
    double wall_ms = 0;
    const int32_t status = run(cfg, report.get(), &wall_ms);
    int64_t errors = 0;
    for (int64_t e : c.errors) errors += e;
    const bool ok = status == COLLC_OK && errors == 0;
    std::printf("%s barrier P=%d K=%d%s: %s; semantic errors %lld\n", ok ? "PASS" : "FAIL", P, K,
                describe(o).c_str(), report->message, static_cast<long long>(errors));
    return ok ? 0 : 1;
}

// ----------------------------------------------------------------------------------------
// allreduce: rank r's input of call k is in(r, k, i); after call k, data[i] on every rank must
// be the sum over ranks. All values are integers below 2^24, so float sums are exact.
// ----------------------------------------------------------------------------------------
struct AllreduceCheck {
    int32_t P = 0, K = 0;
    int64_t n = 0;
    bool skew = false;
    std::vector<int64_t> errors;  // [P], written by rank r only
    std::vector<std::string> first_error;
};

float input(int32_t r, int32_t k, int64_t i) {
    return static_cast<float>((r + 1) * 1000 + k * 100000 + static_cast<int32_t>(i % 977));
}

void allreduce_prepare(void* user, int32_t rank, int32_t call, uint8_t*, uint8_t* const* buffers) {
    auto* c = static_cast<AllreduceCheck*>(user);
    skew_sleep(c->skew, rank, call);
    float* data = reinterpret_cast<float*>(buffers[1]);
    for (int64_t i = 0; i < c->n; ++i) data[i] = input(rank, call, i);
}

void allreduce_collect(void* user, int32_t rank, int32_t call, uint8_t*, uint8_t* const* buffers) {
    auto* c = static_cast<AllreduceCheck*>(user);
    const float* data = reinterpret_cast<const float*>(buffers[1]);
    for (int64_t i = 0; i < c->n; ++i) {
        float want = 0;
        for (int32_t q = 0; q < c->P; ++q) want += input(q, call, i);
        if (data[i] != want) {
            if (c->errors[static_cast<size_t>(rank)]++ == 0) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "rank %d call %d data[%lld] = %.1f, want %.1f", rank, call,
                              static_cast<long long>(i), static_cast<double>(data[i]), static_cast<double>(want));
                c->first_error[static_cast<size_t>(rank)] = buf;
            }
        }
    }
    skew_sleep(c->skew, c->P - 1 - rank, call);
}

int scenario_allreduce(int32_t P, int32_t K, int64_t n, int32_t C, int32_t stride, const Options& o) {
    AllreduceCheck c;
    c.P = P;
    c.K = K;
    c.n = n;
    c.skew = o.skew;
    c.errors.assign(static_cast<size_t>(P), 0);
    c.first_error.assign(static_cast<size_t>(P), std::string());

    const CollcBufferDesc bufs[] = {
        {"sig", static_cast<uint64_t>(P) * static_cast<uint64_t>(stride) * 4, COLLC_BUFFER_SIGNAL, 0},
        {"data", static_cast<uint64_t>(n) * 4, COLLC_BUFFER_DATA, 0},
    };
    const int64_t scalars[] = {P, n, C, stride};
    CollcRunConfig cfg = base_config(P, C, K);
    cfg.buffers = bufs;
    cfg.nbuffers = 2;
    cfg.scalars = scalars;
    cfg.nscalars = 4;
    cfg.user = &c;
    cfg.prepare = allreduce_prepare;
    cfg.collect = allreduce_collect;
    apply(o, &cfg);

    auto report = std::make_unique<CollcRunReport>();
    double wall_ms = 0;
    const int32_t status = run(cfg, report.get(), &wall_ms);
    int64_t errors = 0;
    std::string first;
    for (int32_t r = 0; r < P; ++r) {
        errors += c.errors[static_cast<size_t>(r)];
        if (first.empty()) first = c.first_error[static_cast<size_t>(r)];
    }
    const bool ok = status == COLLC_OK && errors == 0;
    std::printf("%s allreduce P=%d K=%d n=%lld C=%d stride=%d%s: %s; wrong elements %lld%s%s\n", ok ? "PASS" : "FAIL",
                P, K, static_cast<long long>(n), C, stride, describe(o).c_str(), report->message,
                static_cast<long long>(errors), first.empty() ? "" : " (first: ", first.empty() ? "" : (first + ")").c_str());
    return ok ? 0 : 1;
}

// ----------------------------------------------------------------------------------------
// Negative scenarios.
// ----------------------------------------------------------------------------------------
int scenario_expect_timeout(int32_t P, int32_t K, double max_ms) {
    const CollcBufferDesc bufs[] = {{"sig", static_cast<uint64_t>(P) * 4, COLLC_BUFFER_SIGNAL, 0}};
    const int64_t scalars[] = {P};
    CollcRunConfig cfg = base_config(P, 1, K);
    cfg.buffers = bufs;
    cfg.nbuffers = 1;
    cfg.scalars = scalars;
    cfg.nscalars = 1;
    cfg.flags = COLLC_RUN_QUIET;  // the driver prints the message itself

    auto report = std::make_unique<CollcRunReport>();
    double wall_ms = 0;
    const int32_t status = run(cfg, report.get(), &wall_ms);
    std::printf("report: %s\n", report->message);
    std::printf("report fields: status=%d fail_rank=%d fail_call=%d window_rank=%d buffer=%d index=%lld offset=%llu "
                "cmp=%d expected=%d observed=%d; wall %.0f ms\n",
                status, report->fail_rank, report->fail_call, report->fail_window_rank, report->fail_buffer,
                static_cast<long long>(report->fail_cell_index), static_cast<unsigned long long>(report->fail_cell_offset),
                report->fail_cmp, report->fail_expected, report->fail_observed, wall_ms);
    const int32_t r = report->fail_rank;
    const bool ok = status == COLLC_ERR_TIMEOUT && r >= 0 && r < P && report->fail_window_rank == r &&
                    report->fail_buffer == 0 && report->fail_cell_index >= 0 && report->fail_cell_index < P &&
                    report->fail_cell_index != r && report->fail_cell_offset == static_cast<uint64_t>(report->fail_cell_index) * 4 &&
                    report->fail_cmp == 3 /* GE */ && report->fail_expected == 2 && report->fail_observed == 1 &&
                    report->fail_call == 0 && std::strstr(report->message, "GE 2") != nullptr &&
                    std::strstr(report->message, "holds 1") != nullptr && wall_ms <= max_ms;
    std::printf("%s expect-timeout P=%d: TWAIT deadlock reported in %.0f ms (limit %.0f ms)\n", ok ? "PASS" : "FAIL", P,
                wall_ms, max_ms);
    return ok ? 0 : 1;
}

int scenario_expect_residue(int32_t P, int32_t K) {
    const CollcBufferDesc bufs[] = {{"sig", static_cast<uint64_t>(P) * 4, COLLC_BUFFER_SIGNAL, 0}};
    const int64_t scalars[] = {P};
    CollcRunConfig cfg = base_config(P, 1, K);
    cfg.buffers = bufs;
    cfg.nbuffers = 1;
    cfg.scalars = scalars;
    cfg.nscalars = 1;
    cfg.flags = COLLC_RUN_QUIET;

    auto report = std::make_unique<CollcRunReport>();
    double wall_ms = 0;
    const int32_t status = run(cfg, report.get(), &wall_ms);
    std::printf("report: %s\n", report->message);
    // Every off-diagonal cell holds K: P*(P-1) nonzero cells.
    const bool ok = status == COLLC_ERR_SIGNAL_RESIDUE &&
                    report->nonzero_cells == static_cast<uint64_t>(P) * static_cast<uint64_t>(P - 1) &&
                    report->first_nonzero_value == K;
    std::printf("%s expect-residue P=%d K=%d: %llu nonzero cells, first holds %d\n", ok ? "PASS" : "FAIL", P, K,
                static_cast<unsigned long long>(report->nonzero_cells), report->first_nonzero_value);
    return ok ? 0 : 1;
}

int scenario_expect_lost_credit(int32_t P, int32_t K) {
    const CollcBufferDesc bufs[] = {{"sig", static_cast<uint64_t>(P) * 4, COLLC_BUFFER_SIGNAL, 0}};
    const int64_t scalars[] = {P};
    CollcRunConfig cfg = base_config(P, 1, K);
    cfg.buffers = bufs;
    cfg.nbuffers = 1;
    cfg.scalars = scalars;
    cfg.nscalars = 1;
    cfg.flags = COLLC_RUN_QUIET;
    Options o;
    o.chaos = true;
    apply(o, &cfg);

    auto report = std::make_unique<CollcRunReport>();
    double wall_ms = 0;
    const int32_t status = run(cfg, report.get(), &wall_ms);
    std::printf("report: %s\n", report->message);
    const bool ok = status == COLLC_ERR_TIMEOUT && report->fail_call >= 1 && report->fail_cmp == 3 /* GE */ &&
                    report->fail_expected == 1 && report->fail_observed == 0;
    std::printf("%s expect-lost-credit P=%d K=%d: status %d, deadlock in call %d (GE %d, cell holds %d)\n",
                ok ? "PASS" : "FAIL", P, K, status, report->fail_call, report->fail_expected, report->fail_observed);
    return ok ? 0 : 1;
}

// ----------------------------------------------------------------------------------------
// API: config validation, layout, host-barrier flag, zero calls.
// ----------------------------------------------------------------------------------------
int scenario_api() {
    int failures = 0;
    auto check = [&](bool cond, const char* what) {
        std::printf("%s api: %s\n", cond ? "PASS" : "FAIL", what);
        if (!cond) ++failures;
    };
    auto report = std::make_unique<CollcRunReport>();
    double wall_ms = 0;

    check(g_abi() == COLLC_ABI_VERSION, "abi version");

    const CollcBufferDesc bufs[] = {
        {"sig", 4 * 3, COLLC_BUFFER_SIGNAL, 0},
        {"data", 100, COLLC_BUFFER_DATA, 0},
        {nullptr, 64, COLLC_BUFFER_DATA, 0},
    };
    CollcRunConfig cfg = base_config(3, 1, 1);
    cfg.buffers = bufs;
    cfg.nbuffers = 3;
    uint64_t offs[3] = {1, 1, 1};
    uint64_t wbytes = 0;
    check(g_layout(&cfg, offs, &wbytes) == COLLC_OK && offs[0] == 0 && offs[1] == 64 && offs[2] == 192 &&
              wbytes == 256 + 64,
          "window layout: 64-byte aligned offsets 0/64/192, window 320 bytes");

    CollcRunConfig bad = cfg;
    bad.flags = COLLC_RUN_QUIET;
    bad.nranks = COLLC_MAX_RANKS + 1;
    check(run(bad, report.get(), &wall_ms) == COLLC_ERR_CONFIG, "nranks above COLLC_MAX_RANKS rejected");
    bad = cfg;
    bad.flags = COLLC_RUN_QUIET;
    bad.abi_version = 99;
    check(run(bad, report.get(), &wall_ms) == COLLC_ERR_CONFIG, "wrong abi_version rejected");
    CollcBufferDesc odd[] = {{"sig", 6, COLLC_BUFFER_SIGNAL, 0}};
    bad = cfg;
    bad.flags = COLLC_RUN_QUIET;
    bad.buffers = odd;
    bad.nbuffers = 1;
    check(run(bad, report.get(), &wall_ms) == COLLC_ERR_CONFIG, "signal buffer of 6 bytes rejected");

    // Zero calls: nothing runs, windows are clean.
    const int64_t scalars[] = {3};
    CollcRunConfig zero = cfg;
    zero.ncalls = 0;
    zero.scalars = scalars;
    zero.nscalars = 1;
    check(run(zero, report.get(), &wall_ms) == COLLC_OK, "zero calls");

    // Host barrier between calls (barrier kernel: buffers [sig], scalars [P]).
    CollcRunConfig hb = base_config(3, 1, 4);
    hb.buffers = bufs;
    hb.nbuffers = 1;
    hb.scalars = scalars;
    hb.nscalars = 1;
    hb.flags = COLLC_RUN_HOST_BARRIER;
    check(run(hb, report.get(), &wall_ms) == COLLC_OK && report->calls_completed[0] == 4 &&
              report->calls_completed[2] == 4,
          "COLLC_RUN_HOST_BARRIER run, 4 calls on every rank");
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s LIB.so SCENARIO ARGS...\n", argv[0]);
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
    g_run = reinterpret_cast<RunFn>(dlsym(lib, "collc_host_run"));
    g_layout = reinterpret_cast<LayoutFn>(dlsym(lib, "collc_host_window_layout"));
    g_abi = reinterpret_cast<AbiFn>(dlsym(lib, "collc_host_abi_version"));
    if (g_run == nullptr || g_layout == nullptr || g_abi == nullptr) {
        std::fprintf(stderr, "%s does not export the collc host launcher\n", argv[1]);
        return 2;
    }

    // Sanitizer runtimes (TSan) start a helper thread at the first pthread_create; start and
    // join one thread now so the per-run thread-count check sees a stable baseline.
    std::thread([] {}).join();

    const std::string scenario = argv[2];
    auto arg = [&](int i) -> long long {
        if (i >= argc) {
            std::fprintf(stderr, "%s: missing argument %d\n", scenario.c_str(), i - 2);
            std::exit(2);
        }
        return std::atoll(argv[i]);
    };
    auto options = [&](int first) {
        Options o;
        for (int i = first; i < argc; ++i) {
            if (std::strcmp(argv[i], "skew") == 0) {
                o.skew = true;
            } else if (std::strcmp(argv[i], "chaos") == 0) {
                o.chaos = true;
            } else {
                std::fprintf(stderr, "unknown option %s\n", argv[i]);
                std::exit(2);
            }
        }
        return o;
    };

    int rc = 2;
    if (scenario == "barrier") {
        rc = scenario_barrier(static_cast<int32_t>(arg(3)), static_cast<int32_t>(arg(4)), options(5));
    } else if (scenario == "allreduce") {
        rc = scenario_allreduce(static_cast<int32_t>(arg(3)), static_cast<int32_t>(arg(4)), arg(5),
                                static_cast<int32_t>(arg(6)), static_cast<int32_t>(arg(7)), options(8));
    } else if (scenario == "expect-timeout") {
        rc = scenario_expect_timeout(static_cast<int32_t>(arg(3)), static_cast<int32_t>(arg(4)),
                                     static_cast<double>(arg(5)));
    } else if (scenario == "expect-residue") {
        rc = scenario_expect_residue(static_cast<int32_t>(arg(3)), static_cast<int32_t>(arg(4)));
    } else if (scenario == "expect-lost-credit") {
        rc = scenario_expect_lost_credit(static_cast<int32_t>(arg(3)), static_cast<int32_t>(arg(4)));
    } else if (scenario == "api") {
        rc = scenario_api();
    } else {
        std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
    }
    std::fflush(stdout);
    // The library is deliberately not dlclose'd: TSan reports are cleaner with it mapped.
    return rc;
}
