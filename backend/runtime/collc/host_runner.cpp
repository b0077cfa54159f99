// collc host runner: the subprocess side of `collc run` (and of the backend's ThreadSanitizer
// tests). It dlopens one kernel library (kernel + host_launch.cpp), reads a job from stdin,
// runs collc_host_run with prepare/collect hooks that stage the job's per-call inputs and
// copy the outputs, and writes the results to stdout. It does not know any collective's
// semantics: the Rust side (collc_backend::host) generates the payloads and checks the
// outputs. Build it with the same flags as the library (-fsanitize=thread for TSan runs).
//
//   collc-runner LIB.so [SIM_KERNEL.so]  < job  > result
//
// With SIM_KERNEL.so (`collc run --target pto-isa`): LIB.so is the launcher alone (no kernel)
// and the kernel is SIM_KERNEL.so, an Ascend kernel built for pto-isa's CPU simulation with
// collc/pto_sim_bridge.hpp (loaded RTLD_LOCAL; it binds its own symbols). Every (rank, block)
// thread calls its collc_pto_sim_call with the args block's B + S entries, which lays out
// simpler's CommContext and LocalContext and calls the kernel. The runner sets
// PTO_CPU_SIM_TWAIT_MAX_SPINS=0 (pto-isa's TWAIT otherwise RETURNS unsatisfied after its spin
// limit; a wait that never holds now hangs, and the caller's wall-clock limit kills it) and
// PTO_CPU_SIM_TRACE_ENABLE=0 (no instruction trace files).
//
// Job (stdin, little-endian):
//   "COLLCJB2"
//   i32 P, C, K, flags (CollcRunConfig::flags), twait_timeout_ms, barrier_check (0, 1, 2: below)
//   u64 chaos_seed; u32 chaos_max_us
//   i32 B; B x { u32 name_len; name; u64 bytes; u32 kind; u32 lifetime; u32 stage; u32 collect }
//   i32 S; S x i64 scalar
//   for rank r < P, buffer b < B: u8 (1: rank r stages buffer b when it has stage; 0: its
//   image is skipped and the buffer is not written)
//   for call k < K, rank r < P, buffer b with stage: `bytes` bytes (prepare copies them into
//   the buffer before call k: call k's instance when the buffer's lifetime is per call)
// Result (stdout):
//   "COLLCRS1"
//   i32 status; i32 calls_completed[P]; u64 nonzero_cells; f64 elapsed_ns; i64 barrier_errors
//   u32 message_len; message
//   for call k < K, rank r < P: u8 collected; then for buffer b with collect: `bytes` bytes
//   (the buffer right after call k; zeros when not collected)
// Exit status: 0 when the results were written (whatever the run's status), 2 on bad input.
//
// barrier_check (0: none; 1: `barrier()`, every block of every rank; 2: `barrier(blk)`, per
// lane): the enter hook stamps (rank, block, call) in plain host memory; the leave hook checks
// that the stamp of this call is visible for every block it must wait for (1: every block,
// 2: its own block index) of every other rank — the barrier semantics, and (under TSan) the
// happens-before the barrier must provide.

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collc/host_launch.hpp"

namespace {

using RunFn = int32_t (*)(const CollcRunConfig*, CollcRunReport*);

struct Buffer {
    std::string name;
    uint64_t bytes = 0;
    uint32_t kind = 0;
    uint32_t lifetime = 0;  // CollcBufferLifetime
    uint32_t stage = 0;
    uint32_t collect = 0;
};

struct Job {
    int32_t P = 0, C = 0, K = 0, flags = 0, timeout_ms = 0, barrier_check = 0;
    uint64_t chaos_seed = 0;
    uint32_t chaos_max_us = 0;
    std::vector<Buffer> buffers;
    std::vector<int64_t> scalars;
    std::vector<uint8_t> stage_ranks;     // P x B: rank r stages buffer b
    std::vector<uint8_t> inputs;          // K x P x staged bytes
    std::vector<uint64_t> input_offset;   // per (k, r): offset of its first staged buffer
    uint64_t staged_bytes = 0;            // per (k, r)
    uint64_t collected_bytes = 0;         // per (k, r)
    std::vector<uint8_t> outputs;         // K x P x collected bytes
    std::vector<uint8_t> collected;       // K x P flags
    // barrier check
    std::vector<int64_t> stamps;          // P x C x K, plain
    std::vector<int64_t> barrier_errors;  // per (rank, block)
};

bool read_exact(void* dst, size_t n) { return n == 0 || std::fread(dst, 1, n, stdin) == n; }
template <typename T>
bool read_val(T* v) { return read_exact(v, sizeof(T)); }
void write_exact(const void* src, size_t n) {
    if (n != 0 && std::fwrite(src, 1, n, stdout) != n) std::exit(3);
}
template <typename T>
void write_val(const T& v) { write_exact(&v, sizeof(T)); }

// The stamp slot of (rank, block, call), and its value (nonzero, distinct per slot).
size_t stamp_slot(const Job* j, int32_t r, int32_t b, int32_t k) {
    return (static_cast<size_t>(r) * static_cast<size_t>(j->C) + static_cast<size_t>(b)) * static_cast<size_t>(j->K) +
           static_cast<size_t>(k);
}
int64_t stamp(const Job* j, int32_t r, int32_t b, int32_t k) {
    return static_cast<int64_t>(stamp_slot(j, r, b, k)) + 1;
}

void enter(void* user, int32_t rank, int32_t block, int32_t call) {
    Job* j = static_cast<Job*>(user);
    j->stamps[stamp_slot(j, rank, block, call)] = stamp(j, rank, block, call);
}

void leave(void* user, int32_t rank, int32_t block, int32_t call) {
    Job* j = static_cast<Job*>(user);
    const int32_t lo = j->barrier_check == 2 ? block : 0;
    const int32_t hi = j->barrier_check == 2 ? block + 1 : j->C;
    for (int32_t q = 0; q < j->P; ++q) {
        if (q == rank) continue;
        for (int32_t b = lo; b < hi; ++b) {
            if (j->stamps[stamp_slot(j, q, b, call)] != stamp(j, q, b, call)) {
                ++j->barrier_errors[static_cast<size_t>(rank) * static_cast<size_t>(j->C) + static_cast<size_t>(block)];
            }
        }
    }
}

void prepare(void* user, int32_t rank, int32_t call, uint8_t*, uint8_t* const* buffers) {
    Job* j = static_cast<Job*>(user);
    const size_t slot = static_cast<size_t>(call) * static_cast<size_t>(j->P) + static_cast<size_t>(rank);
    const uint8_t* src = j->inputs.data() + j->input_offset[slot];
    for (size_t b = 0; b < j->buffers.size(); ++b) {
        if (!j->buffers[b].stage) continue;
        if (j->stage_ranks[static_cast<size_t>(rank) * j->buffers.size() + b]) {
            std::memcpy(buffers[b], src, j->buffers[b].bytes);
        }
        src += j->buffers[b].bytes;
    }
}

void collect(void* user, int32_t rank, int32_t call, uint8_t*, uint8_t* const* buffers) {
    Job* j = static_cast<Job*>(user);
    const size_t slot = static_cast<size_t>(call) * static_cast<size_t>(j->P) + static_cast<size_t>(rank);
    uint8_t* dst = j->outputs.data() + slot * j->collected_bytes;
    for (size_t b = 0; b < j->buffers.size(); ++b) {
        if (!j->buffers[b].collect) continue;
        std::memcpy(dst, buffers[b], j->buffers[b].bytes);
        dst += j->buffers[b].bytes;
    }
    j->collected[slot] = 1;
}

// --- pto-isa CPU simulation (SIM_KERNEL.so) ---
using SimCallFn = int32_t (*)(const int64_t*, int32_t, int32_t, int32_t, uint8_t* const*, int32_t, int32_t);
using CurrentFn = int32_t (*)(int32_t*, int32_t*, int32_t*, int32_t*, uint8_t* const**);
SimCallFn g_sim_call = nullptr;
CurrentFn g_current = nullptr;
int32_t g_sim_nargs = 0;  // B + S: the collc args before the CommContext*

struct SimCallFailed : std::exception {
    const char* what() const noexcept override {
        return "collc_pto_sim_call refused the call (args block or world too large for simpler's contexts)";
    }
};

void sim_kernel(int64_t* args) {
    int32_t rank = 0, block = 0, nblocks = 1, nranks = 1;
    uint8_t* const* windows = nullptr;
    if (g_current(&rank, &block, &nblocks, &nranks, &windows) != 0 ||
        g_sim_call(args, g_sim_nargs, rank, nranks, windows, block, nblocks) != 0) {
        throw SimCallFailed();
    }
}

// Loads SIM_KERNEL.so and points cfg->kernel at it; false (with a message) on failure.
bool load_sim_kernel(const char* path, void* launcher, int32_t nargs, CollcRunConfig* cfg) {
    setenv("PTO_CPU_SIM_TWAIT_MAX_SPINS", "0", 1);
    setenv("PTO_CPU_SIM_TRACE_ENABLE", "0", 1);
    void* k = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (k == nullptr) {
        std::fprintf(stderr, "collc-runner: dlopen %s: %s\n", path, dlerror());
        return false;
    }
    g_sim_call = reinterpret_cast<SimCallFn>(dlsym(k, "collc_pto_sim_call"));
    g_current = reinterpret_cast<CurrentFn>(dlsym(launcher, "collc_host_current"));
    if (g_sim_call == nullptr || g_current == nullptr) {
        std::fprintf(stderr, "collc-runner: %s has no collc_pto_sim_call or the launcher no collc_host_current\n", path);
        return false;
    }
    g_sim_nargs = nargs;
    cfg->kernel = sim_kernel;
    return true;
}

int bad(const char* what) {
    std::fprintf(stderr, "collc-runner: bad job: %s\n", what);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: %s LIB.so [SIM_KERNEL.so] < job > result\n", argv[0]);
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::fprintf(stderr, "collc-runner: dlopen %s: %s\n", argv[1], dlerror());
        return 2;
    }
    RunFn run = reinterpret_cast<RunFn>(dlsym(lib, "collc_host_run"));
    if (run == nullptr) {
        std::fprintf(stderr, "collc-runner: %s does not export collc_host_run\n", argv[1]);
        return 2;
    }

    Job j;
    char magic[8];
    if (!read_exact(magic, 8) || std::memcmp(magic, "COLLCJB2", 8) != 0) return bad("magic");
    if (!read_val(&j.P) || !read_val(&j.C) || !read_val(&j.K) || !read_val(&j.flags) || !read_val(&j.timeout_ms) ||
        !read_val(&j.barrier_check) || !read_val(&j.chaos_seed) || !read_val(&j.chaos_max_us)) {
        return bad("header");
    }
    if (j.P < 1 || j.P > COLLC_MAX_RANKS || j.K < 0 || j.C < 1) return bad("P, C or K out of range");
    if (j.barrier_check < 0 || j.barrier_check > 2) return bad("barrier_check");
    int32_t B = 0;
    if (!read_val(&B) || B < 0 || B > COLLC_MAX_BUFFERS) return bad("buffer count");
    for (int32_t b = 0; b < B; ++b) {
        Buffer buf;
        uint32_t len = 0;
        if (!read_val(&len) || len > 4096) return bad("buffer name");
        buf.name.resize(len);
        if (!read_exact(&buf.name[0], len) || !read_val(&buf.bytes) || !read_val(&buf.kind) || !read_val(&buf.lifetime) ||
            !read_val(&buf.stage) ||
            !read_val(&buf.collect)) {
            return bad("buffer");
        }
        if (buf.stage) j.staged_bytes += buf.bytes;
        if (buf.collect) j.collected_bytes += buf.bytes;
        j.buffers.push_back(buf);
    }
    int32_t S = 0;
    if (!read_val(&S) || S < 0 || S > COLLC_MAX_SCALARS) return bad("scalar count");
    j.scalars.resize(static_cast<size_t>(S));
    for (int32_t s = 0; s < S; ++s) {
        if (!read_val(&j.scalars[static_cast<size_t>(s)])) return bad("scalar");
    }
    j.stage_ranks.resize(static_cast<size_t>(j.P) * static_cast<size_t>(B));
    if (!read_exact(j.stage_ranks.data(), j.stage_ranks.size())) return bad("stage ranks");
    const size_t slots = static_cast<size_t>(j.K) * static_cast<size_t>(j.P);
    j.inputs.resize(slots * j.staged_bytes);
    j.input_offset.resize(slots);
    for (size_t i = 0; i < slots; ++i) j.input_offset[i] = i * j.staged_bytes;
    if (!read_exact(j.inputs.data(), j.inputs.size())) return bad("inputs");
    j.outputs.assign(slots * j.collected_bytes, 0);
    j.collected.assign(slots, 0);
    j.stamps.assign(static_cast<size_t>(j.P) * static_cast<size_t>(j.C) * static_cast<size_t>(j.K), 0);
    j.barrier_errors.assign(static_cast<size_t>(j.P) * static_cast<size_t>(j.C), 0);

    std::vector<CollcBufferDesc> descs;
    for (const Buffer& b : j.buffers) descs.push_back(CollcBufferDesc{b.name.c_str(), b.bytes, b.kind, b.lifetime});
    CollcRunConfig cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.abi_version = COLLC_ABI_VERSION;
    cfg.nranks = j.P;
    cfg.nblocks = j.C;
    cfg.ncalls = j.K;
    cfg.buffers = descs.data();
    cfg.nbuffers = B;
    cfg.scalars = j.scalars.data();
    cfg.nscalars = S;
    cfg.flags = static_cast<uint32_t>(j.flags) | COLLC_RUN_QUIET;
    cfg.twait_timeout_ms = static_cast<uint32_t>(j.timeout_ms);
    cfg.user = &j;
    cfg.prepare = prepare;
    cfg.collect = collect;
    if (j.barrier_check != 0) {
        cfg.enter = enter;
        cfg.leave = leave;
    }
    cfg.chaos_seed = j.chaos_seed;
    cfg.chaos_max_us = j.chaos_max_us;
    if (argc == 3 && !load_sim_kernel(argv[2], lib, B + S, &cfg)) return 2;

    std::unique_ptr<CollcRunReport> report(new CollcRunReport);
    const int32_t status = run(&cfg, report.get());

    int64_t barrier_errors = 0;
    for (int64_t e : j.barrier_errors) barrier_errors += e;
    write_exact("COLLCRS1", 8);
    write_val(status);
    for (int32_t r = 0; r < j.P; ++r) write_val(report->calls_completed[r]);
    write_val(report->nonzero_cells);
    write_val(report->elapsed_ns);
    write_val(barrier_errors);
    const uint32_t mlen = static_cast<uint32_t>(std::strlen(report->message));
    write_val(mlen);
    write_exact(report->message, mlen);
    for (size_t slot = 0; slot < slots; ++slot) {
        write_val(j.collected[slot]);
        write_exact(j.outputs.data() + slot * j.collected_bytes, j.collected_bytes);
    }
    std::fflush(stdout);
    // The library stays mapped (TSan reports are cleaner that way).
    return 0;
}
