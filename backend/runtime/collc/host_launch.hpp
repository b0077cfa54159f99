/* collc/host_launch.hpp — C ABI of the collc CPU host launcher (ABI version 2).
 *
 * host_launch.cpp is compiled INTO the same shared library as one generated kernel:
 *
 *   g++ -std=c++17 -O2 -shared -fPIC -pthread -I backend/runtime \
 *       kernel.cpp backend/runtime/collc/host_launch.cpp -o libkernel.so
 *
 * The host (Rust via FFI, or a C++ test driver via dlopen) then calls collc_host_run(). It
 * runs P ranks x C blocks as P*C threads over P symmetric windows and K back-to-back kernel
 * calls through ONE signal buffer, and always returns: a protocol deadlock is reported as a
 * TWAIT timeout naming the cell, never a hang.
 *
 * ============================================================================================
 * WINDOW LAYOUT
 * ============================================================================================
 * Each rank owns one contiguous window (one allocation, 4096-byte aligned, zero-filled before
 * the first call and never re-zeroed between calls). The window holds every buffer of
 * CollcRunConfig::buffers, in that order, each at a 64-byte aligned offset. A buffer whose
 * lifetime is COLLC_LIFETIME_PER_CALL (a `per call` window or value signal) holds K = ncalls
 * instances, one per call, each at a 64-byte aligned stride; a COLLC_LIFETIME_REUSED buffer
 * holds one instance that every call shares:
 *
 *     stride[i]   = round_up(bytes[i], 64)
 *     extent[i]   = per_call[i] ? stride[i] * (K - 1) + bytes[i] : bytes[i]   (K >= 1)
 *     offset[0]   = 0
 *     offset[i]   = round_up(offset[i-1] + extent[i-1], 64)
 *     instance k of buffer i: offset[i] + k * stride[i]                       (per call)
 *     window_bytes = round_up(offset[B-1] + extent[B-1], 64) + 64     (64-byte tail pad)
 *
 * Offsets are identical in every window, so CommRemotePtr(ctx, p, pe) of a pointer into
 * buffer i lands in buffer i of pe's window (for a per-call buffer: in the same call's
 * instance, so call k of every rank exchanges data through instance k only and nothing of
 * call k can race with call k+1 on it). Each buffer's extent is padded to 64 bytes (a
 * signal never shares a cache line with another buffer; NPU transfers that round up to 32
 * bytes stay inside the window). collc_host_window_layout() returns the offsets.
 *
 * ============================================================================================
 * ARGS BLOCK  (what kernel_entry(__gm__ int64_t* args) receives)
 * ============================================================================================
 * One args array per rank and call, shared read-only by the rank's C blocks. With B buffers
 * and S scalars:
 *
 *     args[0 .. B-1]     address of buffer i in THIS rank's window (window_base + offset[i]),
 *                        as int64, in CollcRunConfig::buffers order; for a per-call buffer,
 *                        the address of the instance of the call being run
 *                        (window_base + offset[i] + k * stride[i] in call k)
 *     args[B .. B+S-1]   scalar parameters, in CollcRunConfig::scalars order; identical on
 *                        every rank and every call (rank-uniform, so guards stay symmetric)
 *     args[B+S]          CommContext* of this rank, as int64
 *
 * Conventions the generator follows (the launcher does not enforce them):
 *   - buffers: every `signal` and `window` of the .coll spec, in declaration order, named as
 *     in the spec (the name appears in timeout and residue reports);
 *   - scalars: scalars[0] is the rank count P ("nranks", as in pypto), then every `param` of
 *     the spec in declaration order (including the block count C when the spec has `blocks`);
 *   - the kernel reads its rank from ctx->rankId, its block from get_block_idx(args) and the
 *     launched block count from get_block_num(args).
 * For examples/allreduce_mesh.coll (signal sig[P][stride]; window data: f32[n]; params n, C,
 * stride) a generated kernel therefore starts like (see examples/allreduce_kernel.cpp):
 *
 *     extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
 *         __gm__ int32_t* signal_base   = reinterpret_cast<__gm__ int32_t*>(args[0]);  // sig
 *         __gm__ float*   data          = reinterpret_cast<__gm__ float*>(args[1]);    // data
 *         const int32_t   nranks        = static_cast<int32_t>(args[2]);               // P
 *         const int64_t   numel         = args[3];                                     // n
 *         const int64_t   blocks        = args[4];                                     // C
 *         const int64_t   signal_stride = args[5];                                     // stride
 *         __gm__ CommContext* ctx       = reinterpret_cast<__gm__ CommContext*>(args[6]);
 *
 * CommContext (CPU): { int32_t rankId; int32_t rankSize; uint64_t windowsIn[64]; } with
 * rankSize = P and windowsIn[pe] = base of pe's window (0 for pe >= P).
 *
 * ============================================================================================
 * EXECUTION MODEL
 * ============================================================================================
 * Thread (r, b) for r in [0, P), b in [0, C) runs, after a start barrier of all threads:
 *
 *     for call k in 0 .. K-1:
 *         [flag COLLC_RUN_HOST_BARRIER and k > 0: barrier of all P*C threads]
 *         if b == 0 and prepare: prepare(user, r, k, window_r, buffers_r,k) # stage inputs
 *         [C > 1: barrier of rank r's C blocks]                             # task start
 *         [flag COLLC_RUN_CHAOS: a seeded sleep or yield (the block may start late)]
 *         if enter: enter(user, r, b, k)                                    # block entry
 *         kernel(args_r)                                                    # call k
 *         if leave: leave(user, r, b, k)                                    # block exit
 *         [C > 1: barrier of rank r's C blocks]                             # task end
 *         if b == 0 and collect: collect(user, r, k, window_r, buffers_r,k) # read outputs
 *
 * (buffers_r,k: the buffer addresses of args_r,k, i.e. call k's instance of every per-call
 * buffer.)
 *
 * There is NO barrier across ranks between calls (unless COLLC_RUN_HOST_BARRIER is set): a
 * fast rank may enter call k+1 while a slow one is still in call k, exactly the skew the
 * self-clearing credit protocols must survive. COLLC_RUN_CHAOS additionally injects seeded
 * random sleeps/yields at every TNOTIFY entry and after every satisfied TWAIT, so skew also
 * occurs inside calls (e.g. between a rank's last wait and its epilogue). prepare/collect run on the rank's own thread,
 * so staging call k+1's input is ordered after the rank's own call k and before its call k+1,
 * and nothing else — a protocol that lets a peer read the window at the wrong time shows up
 * as a wrong result or a ThreadSanitizer report. Hooks must only touch their own rank's
 * window (or host memory) and must not throw.
 *
 * After all threads are joined (on every path, including failures): finish(user, r, window_r,
 * buffers_r) for every rank on the calling thread, then the signal-residue check: every int32
 * cell of every COLLC_BUFFER_SIGNAL buffer of every window must be 0 again.
 *
 * ============================================================================================
 * FAILURES
 * ============================================================================================
 * collc_host_run() returns report->status (CollcStatus). On COLLC_ERR_TIMEOUT the report
 * names the first TWAIT that timed out (rank, block, call, the cell's window/offset/buffer/
 * index, comparison, expected and observed value) and report->message lists every other
 * thread that was blocked when the run aborted. The TWAIT deadline is twait_timeout_ms, or
 * env COLLC_TWAIT_TIMEOUT_MS, or 10000 ms. Unless COLLC_RUN_QUIET is set, a failed run also
 * prints report->message to stderr.
 *
 * The launcher is reentrant across calls (sequentially); two concurrent runs in one process
 * are also safe (all state is per run, the thread-local binding is per thread).
 */

#ifndef COLLC_HOST_LAUNCH_HPP
#define COLLC_HOST_LAUNCH_HPP

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLC_ABI_VERSION 4u
#define COLLC_MAX_RANKS 64 /* collc_backend::ranks::HOST_MAX_RANKS */
#define COLLC_MAX_BLOCKS 64
#define COLLC_MAX_BUFFERS 64
#define COLLC_MAX_SCALARS 64
#define COLLC_WINDOW_ALIGN 64
#define COLLC_MESSAGE_BYTES 8192

/* Buffer kinds. Signal buffers hold int32 cells (bytes % 4 == 0) and are checked for residue. */
typedef enum CollcBufferKind {
    COLLC_BUFFER_DATA = 0,
    COLLC_BUFFER_SIGNAL = 1
} CollcBufferKind;

/* Buffer lifetimes (CollcBufferDesc::lifetime): how a buffer lives across the K calls. */
typedef enum CollcBufferLifetime {
    COLLC_LIFETIME_REUSED = 0,   /* one instance serves every call */
    COLLC_LIFETIME_PER_CALL = 1  /* a fresh (zeroed, never used before) instance per call */
} CollcBufferLifetime;

/* CollcRunConfig::flags */
#define COLLC_RUN_HOST_BARRIER 0x1u /* barrier of all threads before every call k > 0 */
#define COLLC_RUN_QUIET 0x2u        /* do not print the failure message to stderr */
#define COLLC_RUN_CHAOS 0x4u        /* random sleeps/yields at TNOTIFY entry and TWAIT exit */

typedef enum CollcStatus {
    COLLC_OK = 0,
    COLLC_ERR_CONFIG = 1,          /* invalid CollcRunConfig; nothing was run */
    COLLC_ERR_TIMEOUT = 2,         /* a TWAIT missed its deadline; run aborted */
    COLLC_ERR_KERNEL = 3,          /* runtime check failed / exception in a kernel or hook */
    COLLC_ERR_SIGNAL_RESIDUE = 4,  /* run completed, but some signal cell is not 0 */
    COLLC_ERR_SYSTEM = 5           /* allocation or thread creation failed */
} CollcStatus;

/* The kernel: extern "C" void kernel_entry(int64_t* args). */
typedef void (*CollcKernelFn)(int64_t* args);

/* prepare/collect: called on rank `rank`'s block-0 thread around call `call` (0-based).
 * `buffers[i]` = the address of buffer i in call `call` (its instance for a per-call buffer). */
typedef void (*CollcRankHook)(void* user, int32_t rank, int32_t call, uint8_t* window_base,
                              uint8_t* const* buffers);
/* enter/leave: called on thread (rank, block) right before and right after its kernel call
 * `call`, inside the task (after the rank's task-start barrier, before its task-end barrier):
 * a per-block barrier rule is checked there (the hooks of one rank's blocks are not ordered
 * with each other). Since ABI version 4. */
typedef void (*CollcBlockHook)(void* user, int32_t rank, int32_t block, int32_t call);
/* finish: called once per rank on the calling thread after every thread was joined;
 * `buffers[i]` = window_base + offset[i] (instance 0 of a per-call buffer). */
typedef void (*CollcFinishHook)(void* user, int32_t rank, uint8_t* window_base, uint8_t* const* buffers);

typedef struct CollcBufferDesc {
    const char* name;  /* diagnostics only; may be NULL ("buf<i>") */
    uint64_t bytes;    /* > 0 */
    uint32_t kind;     /* CollcBufferKind */
    uint32_t lifetime; /* CollcBufferLifetime (0: reused) */
} CollcBufferDesc;

typedef struct CollcRunConfig {
    uint32_t abi_version;            /* COLLC_ABI_VERSION */
    int32_t nranks;                  /* P, 1 .. COLLC_MAX_RANKS */
    int32_t nblocks;                 /* C, blocks (cores) per rank, 1 .. COLLC_MAX_BLOCKS */
    int32_t ncalls;                  /* K >= 0 back-to-back calls */
    const CollcBufferDesc* buffers;  /* B buffers of the symmetric window */
    int32_t nbuffers;                /* B, 0 .. COLLC_MAX_BUFFERS */
    int32_t nscalars;                /* S, 0 .. COLLC_MAX_SCALARS */
    const int64_t* scalars;          /* S rank-uniform scalars */
    uint32_t flags;                  /* COLLC_RUN_* */
    uint32_t twait_timeout_ms;       /* 0: env COLLC_TWAIT_TIMEOUT_MS, else 10000 */
    CollcKernelFn kernel;            /* NULL: the kernel_entry linked into this library */
    void* user;                      /* passed to the hooks */
    CollcRankHook prepare;           /* may be NULL */
    CollcRankHook collect;           /* may be NULL */
    CollcFinishHook finish;          /* may be NULL */
    uint64_t chaos_seed;             /* COLLC_RUN_CHAOS: PRNG seed (same seed, same choices) */
    uint32_t chaos_max_us;           /* COLLC_RUN_CHAOS: longest injected sleep; 0 means 200 */
    uint32_t reserved;               /* 0 */
    CollcBlockHook enter;            /* may be NULL */
    CollcBlockHook leave;            /* may be NULL */
} CollcRunConfig;

typedef struct CollcRunReport {
    int32_t status;                  /* CollcStatus; also the return value */
    int32_t calls_completed[COLLC_MAX_RANKS]; /* per rank: calls finished by all its blocks */

    /* First failing TWAIT (status == COLLC_ERR_TIMEOUT), else -1 / 0. */
    int32_t fail_rank;               /* the waiting rank */
    int32_t fail_block;
    int32_t fail_call;
    int32_t fail_window_rank;        /* whose window holds the cell (== fail_rank) */
    uint64_t fail_cell_offset;       /* byte offset of the cell in that window */
    int32_t fail_buffer;             /* index into CollcRunConfig::buffers, -1 if none */
    int32_t fail_cmp;                /* pto::comm::WaitCmp: EQ=0 NE=1 GT=2 GE=3 LT=4 LE=5 */
    int64_t fail_cell_index;         /* int32 index of the cell inside that buffer */
    int32_t fail_expected;
    int32_t fail_observed;           /* what the cell held at the deadline */

    /* Signal residue after the run (always computed). */
    uint64_t nonzero_cells;
    int32_t first_nonzero_rank;      /* -1 if none */
    int32_t first_nonzero_buffer;
    int64_t first_nonzero_index;
    int32_t first_nonzero_value;
    int32_t reserved;

    /* Wall time from the release of the start barrier to the last thread's end, ns. */
    double elapsed_ns;

    /* Human-readable summary, NUL-terminated; "ok" on success. */
    char message[COLLC_MESSAGE_BYTES];
} CollcRunReport;

/* Tracing (`collc run --trace`): later runs record every TNOTIFY, passed TWAIT, `.coll`
 * fence and window access of a data statement per (rank, block) thread, at most `capacity`
 * events each (0: env COLLC_TRACE_CAPACITY or 65536; past it events are counted as dropped),
 * and write them to `path` (text; format in collc_backend::trace). NULL or "" turns it off
 * (then env COLLC_TRACE_FILE, if set, names the file). */
void collc_host_trace(const char* path, uint64_t capacity);

/* The (rank, block) thread of a run calling this, for a CollcRunConfig::kernel that is not
 * built against collc's CPU runtime (collc/pto_sim_bridge.hpp): its rank, block, the run's
 * block and rank counts, and the run's P window bases (windows[pe]). Returns 0, or -1 (nothing
 * written) outside a launcher thread. */
int32_t collc_host_current(int32_t* rank, int32_t* block, int32_t* nblocks, int32_t* nranks,
                           uint8_t* const** windows);

/* ABI version of this library (COLLC_ABI_VERSION). */
uint32_t collc_host_abi_version(void);

/* Offsets of cfg->buffers inside a window (offsets[i], i < nbuffers; instance 0 of a
 * per-call buffer) and the window size.
 * Returns COLLC_OK or COLLC_ERR_CONFIG. `offsets` may be NULL. */
int32_t collc_host_window_layout(const CollcRunConfig* cfg, uint64_t* offsets, uint64_t* window_bytes);

/* Run cfg->ncalls calls of the kernel on nranks x nblocks threads. Fills *report (required)
 * and returns report->status. All threads are joined before it returns. */
int32_t collc_host_run(const CollcRunConfig* cfg, CollcRunReport* report);

#ifdef __cplusplus
}
#endif

#endif /* COLLC_HOST_LAUNCH_HPP */
