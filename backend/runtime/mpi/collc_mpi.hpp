// collc_mpi.hpp - MPI-3 one-sided (RMA) runtime for collc-generated protocol programs.
//
// This header is the contract between the collc MPI code generator and the runtime.
// A generated program includes it, defines its symmetric objects and a `kernel`
// that spells out the protocol (guards, notifies, waits, gets/puts, epilogue), and
// finally includes collc_mpi_main.hpp (the launcher). See README.md next to this file
// for the exact shape the generator must emit; examples/*.cpp are reference programs.
//
// =====================================================================================
// 1. Mapping of the credit-barrier vocabulary onto MPI-3 RMA
// =====================================================================================
//
//   protocol (pto::comm)                 runtime call                       MPI-3 realisation
//   ----------------------------------   --------------------------------   ------------------------------------------
//   TNOTIFY(remote cell, v, AtomicAdd)   notify_add(sigwin, pe, disp, v)    MPI_Win_sync(all windows) ;
//                                                                           MPI_Accumulate(MPI_SUM, MPI_INT32_T) ;
//                                                                           MPI_Win_flush(pe)
//   TNOTIFY(remote cell, v, Set)         notify_set(sigwin, pe, disp, v)    same, with MPI_REPLACE
//   TNOTIFY(local cell, -N, AtomicAdd)   notify_add(sigwin, me, disp, -N)   accumulate to self (never a local store)
//   TWAIT(local cell, k, cmp)            wait(sigwin, disp, cmp, k)         poll MPI_Fetch_and_op(MPI_NO_OP) +
//                                                                           MPI_Win_flush_local(me), backoff, deadline;
//                                                                           then MPI_Win_sync(all windows)
//   TLOAD remote tile                    get(dst, pe, win, disp, n)         MPI_Get + MPI_Win_flush_local(pe)
//   TPUT / TSTORE remote tile            put(src, pe, win, disp, n)         MPI_Put + MPI_Win_flush(pe)
//   CommRemotePtr(ptr, pe)               (window, pe, disp)                 disp = element offset inside the window
//   TLOAD/TSTORE own tensor              win->local<T>()[i]                 plain load/store on this rank's copy
//   local copy / TMOV / TADD...          copy_local(dst, src, n) /          memmove / element-wise loop on local memory
//                                        reduce(op, dst, src, n)            (this rank's window copy, tiles, staging)
//
// =====================================================================================
// 2. Window layout (decided here, binding for the generator)
// =====================================================================================
//
//  * ONE signal window per protocol instance ("signals"): every signal array the
//    protocol declares (e.g. `sig[NR]`, `sig[NR][stride]`, ring rows `[R][NR]`) is a
//    contiguous run of int32 cells inside it. disp_unit = 4, so a displacement is a
//    CELL index: the generator computes `sig_base + index` exactly like pypto's
//    `signal_base + me`. One window means one MPI_Win_flush/poll target for all signal
//    traffic and one place to check "all cells back at 0".
//    Value cells (`signal x as value`, written with notify_set only) live in the same
//    window, declared with Session::value_signal, and are exempt from the all-zero check.
//  * ONE window per data buffer (tensor), disp_unit = sizeof(element), so displacements
//    are ELEMENT indices (the kernel's own tile arithmetic). Separate windows keep the
//    pypto rule "distinct tensors live in distinct windows" representable (#2246) and,
//    in the SEPARATE memory model, let a protocol stage data locally in one window
//    while peers put into another (MPI-3.1 §11.7 forbids a local store into a window
//    while a put/accumulate into that same window is in flight, separate model).
//  * Every window is allocated with MPI_Win_allocate (MPI-3.1 §11.2.2), symmetric
//    (same size on every rank; checked), zero-filled, and opened ONCE with
//    MPI_Win_lock_all(MPI_MODE_NOCHECK) for the whole run (passive target, §11.5.3;
//    NOCHECK is valid because nobody ever takes an exclusive lock, §11.5.5).
//    There is no MPI_Win_fence / PSCW anywhere: the protocol's own credits are the
//    only synchronisation, exactly as on the device.
//
// =====================================================================================
// 3. Why each choice preserves the protocol's ordering guarantees (MPI-3.1, June 2015)
// =====================================================================================
//
//  (a) Memory model. MPI_WIN_MODEL (§11.2.6 "Window Attributes") is queried for every
//      window at allocation and reported. In the UNIFIED model (§11.4) public and
//      private copies are the same memory; in the SEPARATE model, RMA operations act on
//      the public copy, loads/stores on the private copy, and MPI_WIN_SYNC (§11.5.4)
//      reconciles them. The runtime issues the SAME calls in both models:
//        - release side (start of notify_*): MPI_Win_sync on every live window.
//          SEPARATE: makes this rank's local stores (e.g. the kernel's TSTORE of a
//          reduced chunk, or the launcher's input payload) visible in the public copy
//          before the credit that allows peers to MPI_Get it (§11.7 rule: a private
//          update becomes visible in the public copy at the latest at the owner's next
//          MPI_WIN_SYNC/UNLOCK). UNIFIED: MPI_Win_sync acts as a memory barrier that
//          orders those stores before the notify (§11.5.4 / §11.7; the unified model
//          only promises that updates become visible "eventually").
//        - acquire side (end of wait): MPI_Win_sync on every live window. SEPARATE:
//          makes puts that peers completed into our public copy (they flushed them
//          before notifying, see (c)) visible to our local loads (§11.7: a public update
//          becomes visible in the private copy at the latest at the owner's next
//          MPI_WIN_SYNC/LOCK). UNIFIED: a barrier so that no load of window data is
//          satisfied before the credit was observed.
//      Signal cells are NEVER read or written with plain loads/stores (in either model):
//      reading them locally while a peer's accumulate targets them would be a
//      conflicting access with undefined outcome (§11.7), and in the separate model a
//      local load would read the stale private copy (the silicon "polled a locally
//      cached zero" failure mode of pypto #2279's root-only broadcast).
//
//  (b) Accumulate atomicity. §11.7.1 "Atomicity": concurrent accumulate operations with
//      the same predefined datatype on the same location behave as if executed in some
//      serial order, element-wise, subject to the window's `accumulate_ops` info key
//      (§11.2.1; default `same_op_no_op`: concurrent accumulates to one location use the
//      same op or MPI_NO_OP). Hence:
//        - notify_add = MPI_Accumulate(MPI_SUM, MPI_INT32_T): a peer's +1 and our local
//          reset -N commute and are never lost (the reason pypto resets with
//          AtomicAdd(-N), not Set(0); domain doc §1.5/§1.9).
//        - the local reset is an accumulate TO SELF, never `cell -= N` (a load/store
//          would race with a fast peer's next-call +1, §11.7 conflicting accesses).
//        - wait polls with MPI_Fetch_and_op(MPI_NO_OP), which is an atomic read w.r.t.
//          concurrent MPI_SUM (allowed by `same_op_no_op`). MPI_Get is NOT used: a get
//          concurrent with an accumulate to the same location is a conflicting access
//          whose outcome the standard leaves undefined (§11.7).
//        - notify_set = MPI_Accumulate(MPI_REPLACE) is atomic w.r.t. other accumulates
//          and NO_OP polls. CAVEAT: under the default `same_op_no_op`, the standard does
//          not promise atomicity between a REPLACE and a concurrent SUM on the SAME cell.
//          A cell must therefore be written with Set only or with AtomicAdd only (true
//          for every merged pypto kernel: Set is used only on all_to_all_v's recv_counts
//          value cells). Mixing them (the historical `Set(0)` reset) is the protocol bug
//          the collc verifier rejects anyway. (Open MPI's osc/sm happens to run every
//          accumulate-class op on a target under one per-target lock, see
//          ompi/mca/osc/sm/osc_sm_comm.c, so it would be atomic there; do not rely on it.)
//      The signal window sets info `accumulate_ordering=none` (§11.7.2 "Ordering"):
//      every notify is individually flushed, so the protocol never depends on MPI's
//      accumulate ordering; this lets the implementation skip ordering machinery.
//
//  (c) Completion and flush. §11.5.4: MPI_WIN_FLUSH(rank, win) completes all
//      outstanding RMA operations of the caller to `rank` on `win` AT THE ORIGIN AND AT
//      THE TARGET; MPI_WIN_FLUSH_LOCAL only at the origin (the origin buffer may be reused:
//      a put's or accumulate's source, or, for a get or a fetching operation, the result
//      buffer holds the data, §11.5.4, §11.3.5). A put or an accumulate needs the target
//      side (what is ordered after it must find it landed); an operation whose whole effect
//      is the data it brings back (a get, a NO_OP fetch) is done when that data is here, so
//      it needs only the origin side, which an implementation may report sooner. So:
//        - put(): MPI_Put + MPI_Win_flush(pe) returns only when the data is in the
//          target's (public) window. Any notify issued afterwards - even on a different
//          window - is therefore ordered after the data. MPI gives NO ordering between a
//          put and a later accumulate without this flush (§11.7.2 orders accumulates
//          only), which is why get/put are never left outstanding across a notify.
//        - get(): MPI_Get + MPI_Win_flush_local(pe) returns when the bytes are in the
//          local buffer; the read of the target memory is then over (the bytes it read
//          are here), so a subsequent "read done" credit cannot let the owner overwrite
//          data we are still reading.
//        - notify_*(): accumulate + MPI_Win_flush(pe): the credit has landed in the
//          target's public copy when notify returns (needed for the local reset to be
//          complete before the launcher's final barrier + zero check, and so that
//          credits never sit in an origin-side buffer while we go on to poll).
//        - wait(): MPI_Fetch_and_op(MPI_NO_OP) + MPI_Win_flush_local(me) completes each
//          poll (the fetched value is in the result buffer), so the value read is current;
//          a NO_OP changes nothing at the target that would need completing there.
//      Passive-target progress (§11.7.3): osc/sm applies every operation directly in
//      shared memory from the origin. Components that need target-side progress
//      (e.g. osc/pt2pt) get it because every poll, notify and flush is an MPI call, and
//      a rank that has left the kernel makes its next MPI call soon (the next call's
//      first notify, or the launcher's final MPI_Barrier), so every credit lands.
//
//  (d) Guards before the first notify, rank-uniform (domain §1.0), are the generator's
//      job; the runtime validates symmetric allocation sizes so a rank-dependent
//      layout bug aborts at startup instead of corrupting a peer's window.
//
//  (e) Shared-memory mode (COLLC_MPI_SHM=1; a library's default, COLLC_MPI_SHM=0 turns it
//      off), used only when every rank of the communicator is on one node and the run is
//      not traced. Each window is allocated with MPI_Win_allocate_shared (§11.2.3, info
//      `alloc_shared_noncontig`) and MPI_Win_shared_query gives this process a pointer to
//      every rank's copy. The primitives then access memory directly, as the host backend
//      does (pto_comm_cpu.hpp), and never mix direct and RMA access on a window:
//        - notify_add = __atomic_fetch_add(release) on the peer's cell, notify_set =
//          __atomic_store_n(release); wait polls with __atomic_load_n(acquire). Every
//          access to a signal cell is atomic, so (b)'s rules hold (a reset is an atomic add
//          to one's own cell; Set and AtomicAdd are never mixed on a cell).
//        - get/put = memmove from/to the peer's copy: complete when they return, as (c)
//          requires of the flushed RMA calls.
//        - sync_all = a sequentially consistent thread fence (§11.7's UNIFIED model for
//          shared windows: loads and stores are the public copy), so (a)'s release before a
//          notify and acquire after a wait hold.
//      The protocol's credits remain the only synchronisation. Tracing keeps the RMA path
//      (its per-cell sequence numbers are MPI_Fetch_and_op on the cells).
//
// =====================================================================================
// 4. Failure behaviour
// =====================================================================================
//
//  * wait() has a DEADLINE: env COLLC_MPI_WAIT_TIMEOUT_MS (default 20000, must be > 0).
//    On expiry it prints one line to stderr -
//      collc_mpi: WAIT TIMEOUT rank=R call=C step="..." cell=sig[j] (signals disp D)
//                 expected cell >= K, holds V after T ms (P polls)
//    followed by a dump of this rank's signal cells, then MPI_Abort(MPI_COMM_WORLD, 3).
//    A wait never silently passes and never hangs forever.
//  * Contract violations (out-of-bounds displacement, element-size mismatch, notify on a
//    data window, asymmetric allocation) and MPI errors print a message and
//    MPI_Abort(MPI_COMM_WORLD, 4).
//  * Exit codes used by the launcher: 0 ok, 1 wrong result or nonzero cell, 2 usage,
//    3 wait timeout (MPI_Abort), 4 contract/MPI error (MPI_Abort).
//  * Library mode (collc_mpi_lib.hpp sets State::throw_on_fail): the same failures throw
//    collc_mpi::Failure{code, message} instead of printing and aborting the job, so the
//    library call returns an error code.
//
// Backoff inside wait (tunable, all optional):
//    COLLC_MPI_WAIT_SPIN          polls with only a cpu pause              (default 100,
//                                 0 when the node is oversubscribed: more ranks than
//                                 online CPUs, detected at init)
//    COLLC_MPI_WAIT_YIELD_US      then sched_yield() between polls until   (default 2000)
//                                 the wait has lasted this long
//    COLLC_MPI_WAIT_SLEEP_MAX_US  then nanosleep, doubling from 2 us to    (default 200)
//                                 this cap
// Test aid: COLLC_MPI_JITTER_US=N (default 0 = off) sleeps a per-rank pseudo-random
// 0..N us before every get/put/notify, widening race windows so that a protocol that
// lacks a read-complete step fails visibly under the launcher.
// Test aid: COLLC_MPI_LAG_US=N (default 0 = off): every rank but rank 0 sleeps N us before
// each get/put and before the launcher's output check, so rank 0 runs ahead
// deterministically. A protocol that lets a fast rank touch memory a peer has not finished
// with (the merged broadcast's last tile; allgather/all_to_all pushing call k+1 data into a
// peer that has not checked call k) then fails with a MISMATCH on every run.
// Test aid: COLLC_MPI_TEST_FAULT=kill:R | hang:R: at its first wait, rank R raises SIGKILL
// (a rank that dies) or pauses forever, ignoring every deadline (a rank that hangs outside
// the runtime's control); used to test that `collc run --target mpi` stops the job within
// its own deadline and leaves no process behind (collc/tests/mpi.rs). alloc:R: rank R's
// first window allocation in the process counts as failed, to test
// that the failure is an error on every rank (program: exit 4; library: every rank's
// comm_create returns ESYSTEM).
//
// Requires C++14 or later (tested: g++ 12, -std=c++14/17/20) and an MPI-3 library
// (tested: Open MPI 4.1.4 with osc/sm, osc/rdma, osc/pt2pt). Single-threaded (MPI_Init).

#ifndef COLLC_MPI_HPP
#define COLLC_MPI_HPP

// Use the C API only: the deprecated MPI C++ bindings that mpicxx would otherwise pull
// in do not compile warning-free under -Wall -Wextra -Werror (Open MPI 4.1 op_inln.h).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace collc_mpi {

// ------------------------------------------------------------------------------------
// Basic types
// ------------------------------------------------------------------------------------

/// TWAIT comparison (pto::comm WaitCmp). Credit protocols use GE only; the others exist
/// so that the generator can lower every comparison the spec language accepts.
enum class Cmp : int { EQ = 0, NE, GT, GE, LT, LE };

inline const char* cmp_str(Cmp c) {
  switch (c) {
    case Cmp::EQ: return "==";
    case Cmp::NE: return "!=";
    case Cmp::GT: return ">";
    case Cmp::GE: return ">=";
    case Cmp::LT: return "<";
    case Cmp::LE: return "<=";
  }
  return "?";
}

inline bool cmp_holds(int32_t held, Cmp c, int32_t k) {
  switch (c) {
    case Cmp::EQ: return held == k;
    case Cmp::NE: return held != k;
    case Cmp::GT: return held > k;
    case Cmp::GE: return held >= k;
    case Cmp::LT: return held < k;
    case Cmp::LE: return held <= k;
  }
  return false;
}

/// C++ element type -> predefined MPI datatype.
template <class T> struct MpiType;
template <> struct MpiType<float>    { static MPI_Datatype get() { return MPI_FLOAT; } };
template <> struct MpiType<double>   { static MPI_Datatype get() { return MPI_DOUBLE; } };
template <> struct MpiType<int8_t>   { static MPI_Datatype get() { return MPI_INT8_T; } };
template <> struct MpiType<uint8_t>  { static MPI_Datatype get() { return MPI_UINT8_T; } };
template <> struct MpiType<int16_t>  { static MPI_Datatype get() { return MPI_INT16_T; } };
template <> struct MpiType<uint16_t> { static MPI_Datatype get() { return MPI_UINT16_T; } };
template <> struct MpiType<int32_t>  { static MPI_Datatype get() { return MPI_INT32_T; } };
template <> struct MpiType<uint32_t> { static MPI_Datatype get() { return MPI_UINT32_T; } };
template <> struct MpiType<int64_t>  { static MPI_Datatype get() { return MPI_INT64_T; } };
template <> struct MpiType<uint64_t> { static MPI_Datatype get() { return MPI_UINT64_T; } };

enum class WinKind { Signal, Data };

/// A named run of int32 cells inside the signal window (for diagnostics only; the
/// kernel addresses cells by absolute displacement `base + index`).
struct SignalArray {
  std::string name;
  MPI_Aint base = 0;   // first cell (displacement in the signal window)
  MPI_Aint cells = 0;  // number of cells
  bool credit = true;  // credit cells must read 0 after the last call; value cells (Set) need not
};

/// One MPI window. Symmetric: `count` elements of `elem_size` bytes on every rank.
/// Displacements passed to the runtime are in elements (cells for the signal window).
struct Window {
  std::string name;
  WinKind kind = WinKind::Data;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int elem_size = 0;   // == disp_unit
  MPI_Aint count = 0;  // elements per rank
  MPI_Win win = MPI_WIN_NULL;
  void* base = nullptr;        // this rank's copy
  int model = MPI_WIN_UNIFIED; // MPI_WIN_UNIFIED or MPI_WIN_SEPARATE (queried)
  // Shared-memory mode (header comment 3(e)): every rank's copy, from MPI_Win_shared_query;
  // empty when the window is accessed through RMA calls.
  std::vector<char*> peer;
  std::vector<SignalArray> arrays;  // signal window only

  /// This rank's copy of the window, for local TLOAD/TSTORE.
  template <class T> T* local() const { return static_cast<T*>(base); }
};

/// Per-call context handed to the kernel.
struct Ctx {
  int me = 0;     // this rank (MPI_COMM_WORLD)
  int np = 1;     // number of ranks (the kernel's `nranks`)
  int call = 0;   // index of the back-to-back call (0-based); diagnostics + payloads
  MPI_Comm comm = MPI_COMM_WORLD;
};

/// A failure in library mode (State::throw_on_fail): the exit code the program would have
/// aborted with (2 usage, 3 wait timeout, 4 contract/MPI error) and the message.
struct Failure {
  int code = 4;
  std::string what;
};

/// Operation counters (per rank), reported by the launcher and the benchmark.
struct Stats {
  uint64_t notifies = 0, waits = 0, polls = 0, gets = 0, puts = 0;
  uint64_t bytes_get = 0, bytes_put = 0;
  uint64_t wait_ns = 0;  // time spent inside wait()
};

// ------------------------------------------------------------------------------------
// Process-global runtime state
// ------------------------------------------------------------------------------------

struct Window;

namespace detail {

// One traced event (see "Tracing" below). `w` is the window (resolved to a name when the
// trace is written), `disp` the element/cell displacement in it.
struct TraceRec {
  int kind = 0, op = 0, call = 0, owner = 0;
  const Window* w = nullptr;
  long disp = 0, len = 0;
  int32_t value = 0, observed = 0;
  uint64_t seq = 0;
};

struct State {
  bool inited = false;
  int me = 0, np = 1;
  int local_np = 1;             // ranks on this node
  bool oversubscribed = false;  // local_np > online CPUs
  MPI_Comm comm = MPI_COMM_WORLD;
  long timeout_ms = 20000;
  long spin = 100;
  long yield_us = 2000;
  long sleep_max_us = 200;
  long jitter_us = 0;        // COLLC_MPI_JITTER_US: random delay before get/put/notify
  long lag_us = 0;           // COLLC_MPI_LAG_US: ranks != 0 sleep before get/put and check
  int fault_rank = -1;       // COLLC_MPI_TEST_FAULT=kill:R|hang:R (test aid)
  int fault_kind = 0;        // 1 kill, 2 hang, 3 alloc
  uint64_t rng = 0x9E3779B97F4A7C15ull;
  int call = -1;
  bool throw_on_fail = false;  // library mode: failures throw Failure instead of MPI_Abort
  bool shm_default = false;    // library mode: shared-memory windows unless COLLC_MPI_SHM=0
  bool shm = false;            // allocate windows shared and access them directly (3(e))
  bool read_in_place = true;   // library mode: read an input in place (collc_mpi_lib.hpp ReadInPlace)
  bool write_in_place = true;  // library mode: write an output in place (collc_mpi_lib.hpp WriteInPlace)
  std::vector<Window*> live;  // windows inside their lock_all epoch
  Stats stats;
  // Tracing (collc run --trace): on when trace_start() named a file.
  std::string trace_file;
  size_t trace_cap = 0;
  std::vector<TraceRec> trace;
  uint64_t trace_dropped = 0;
  MPI_Win seqwin = MPI_WIN_NULL;  // one int64 per rank: notifies on its signal cells so far
  void* seqbase = nullptr;
  // Library mode: called by a wait that has not passed, at most once per millisecond once
  // it stops spinning; may throw Failure (a peer called another collective).
  void (*poll_hook)(void*) = nullptr;
  void* poll_ctx = nullptr;
};

/// The state in use: the process's own, or the one a library communicator made current
/// (collc_mpi_lib.hpp: each communicator has its own state, swapped in for its calls).
inline State*& current_state() {
  static State s;
  static State* cur = &s;
  return cur;
}

inline State& st() { return *current_state(); }

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// Test aid (COLLC_MPI_JITTER_US > 0): sleep a pseudo-random 0..N us before an RMA
/// operation, to widen race windows (e.g. a peer still reading when the owner returns).
inline void jitter() {
  State& S = st();
  if (S.jitter_us <= 0) return;
  S.rng ^= S.rng << 13;
  S.rng ^= S.rng >> 7;
  S.rng ^= S.rng << 17;
  const long us = long(S.rng % uint64_t(S.jitter_us + 1));
  if (us > 0) {
    timespec ts{us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, nullptr);
  }
}

/// Test aid (COLLC_MPI_LAG_US > 0): every rank but rank 0 sleeps N us before each get/put
/// and before the launcher's output check, so rank 0 runs ahead deterministically. A
/// protocol that lets a fast rank touch a peer's memory the peer has not finished with
/// (e.g. the merged broadcast's last tile, allgather's next-call push) then fails with a
/// MISMATCH every time instead of once in a while; a correct protocol only gets slower.
inline void lag() {
  State& S = st();
  if (S.lag_us <= 0 || S.me == 0) return;
  timespec ts{S.lag_us / 1000000, (S.lag_us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

/// Test aid (COLLC_MPI_TEST_FAULT=kill:R | hang:R): at its first wait, rank R kills itself
/// with SIGKILL (a rank that dies) or sleeps forever, ignoring every deadline (a rank that
/// hangs outside the runtime's control). Tests that the launcher above (`collc run`) stops
/// the job within its deadline and leaves no process behind.
inline void fault_point() {
  State& S = st();
  if (S.fault_kind == 0 || S.fault_kind == 3 || S.me != S.fault_rank) return;
  fprintf(stderr, "collc_mpi: rank=%d call=%d: COLLC_MPI_TEST_FAULT: %s\n", S.me, S.call,
          S.fault_kind == 1 ? "killing this rank (SIGKILL)" : "hanging this rank forever");
  fflush(stderr);
  if (S.fault_kind == 1) {
    raise(SIGKILL);
  }
  for (;;) pause();
}

[[noreturn]] __attribute__((format(printf, 2, 3))) inline void die(int code, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (st().throw_on_fail) throw Failure{code, buf};
  fprintf(stderr, "collc_mpi: rank=%d call=%d: %s\n", st().me, st().call, buf);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // not reached
}

inline void check_mpi(int rc, const char* what, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  die(4, "%s failed at %s:%d: %s", what, file, line, msg);
}

/// Test aid (COLLC_MPI_TEST_FAULT=alloc:R): true once per process, on rank R, at its first
/// window allocation, which then counts as failed on that rank.
inline bool alloc_fault() {
  static bool used = false;
  State& S = st();
  if (S.fault_kind != 3 || S.me != S.fault_rank || used) return false;
  used = true;
  return true;
}

/// After a collective MPI_Win_allocate that returned `rc` on this rank: every rank learns
/// whether it succeeded everywhere (MPI_Allreduce over the communicator). A window that
/// failed on any rank is dropped (not freed) and the failure is raised on every rank
/// (die(4): MPI_Abort, or Failure in library mode), so no rank goes on to use a window a
/// peer lacks and none waits for it in a later collective.
inline void agree_allocated(int rc_, MPI_Win* win, const char* name, long bytes) {
  auto& S = st();
  int rc = rc_;
  if (alloc_fault()) rc = MPI_ERR_NO_MEM;
  int mine = rc == MPI_SUCCESS ? 1 : 0, all = 0;
  check_mpi(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, S.comm), "MPI_Allreduce (window allocation)", __FILE__,
            __LINE__);
  if (all == 1) return;
  // Left allocated where it exists: MPI_Win_free is collective, and a rank without the
  // window would not join it.
  *win = MPI_WIN_NULL;
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    die(4, "MPI_Win_allocate of window \"%s\" (%ld bytes) failed on this rank: %s", name, bytes, msg);
  }
  die(4, "MPI_Win_allocate of window \"%s\" (%ld bytes) failed on another rank", name, bytes);
}

/// Shared-memory mode (3(e)): every rank's copy of the shared window `win` (named `name`),
/// as this process maps it, each checked to hold at least `bytes`; empty, with the reason in
/// `*why`, when a query fails or a copy is smaller. The one MPI_Win_shared_query loop: the
/// protocol's windows (query_peers) and a library's call records (collc_mpi_lib.hpp).
inline std::vector<char*> shared_copies(MPI_Win win, int np, MPI_Aint bytes, const char* name, std::string* why) {
  std::vector<char*> peer(size_t(np), nullptr);
  for (int q = 0; q < np; ++q) {
    MPI_Aint size = 0;
    int unit = 0;
    void* ptr = nullptr;
    const int rc = MPI_Win_shared_query(win, q, &size, &unit, &ptr);
    if (rc != MPI_SUCCESS || size < bytes || ptr == nullptr) {
      *why = "window \"" + std::string(name) + "\": " +
             (rc != MPI_SUCCESS ? "MPI_Win_shared_query of rank " + std::to_string(q) + " failed"
                                : "rank " + std::to_string(q) + "'s shared copy is " + std::to_string(long(size)) +
                                      " bytes, need " + std::to_string(long(bytes)));
      return {};
    }
    peer[size_t(q)] = static_cast<char*>(ptr);
  }
  return peer;
}

/// Shared-memory mode (3(e)): every rank's copy of `w`, as this process maps it.
inline void query_peers(Window& w, int np) {
  std::string why;
  w.peer = shared_copies(w.win, np, MPI_Aint(w.count) * w.elem_size, w.name.c_str(), &why);
  if (w.peer.empty()) die(4, "%s", why.c_str());
}

inline long env_long(const char* name, long dflt, long min_ok) {
  const char* s = getenv(name);
  if (!s || !*s) return dflt;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < min_ok) {
    if (st().throw_on_fail)  // library mode: an error status, nothing printed
      throw Failure{2, std::string("invalid ") + name + "=\"" + s + "\" (need an integer >= " + std::to_string(min_ok) + ")"};
    fprintf(stderr, "collc_mpi: invalid %s=\"%s\" (need an integer >= %ld)\n", name, s, min_ok);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return v;
}

}  // namespace detail

#define COLLC_MPI_CHECK(call) ::collc_mpi::detail::check_mpi((call), #call, __FILE__, __LINE__)

inline void attach(MPI_Comm comm);

/// Initialise MPI and the runtime (reads the COLLC_MPI_* environment). Call once.
inline void init(int* argc, char*** argv) {
  int flag = 0;
  MPI_Initialized(&flag);
  if (!flag) MPI_Init(argc, argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  attach(MPI_COMM_WORLD);
}

/// Points the runtime at `comm` (its rank, size, node) and reads the COLLC_MPI_*
/// environment; init() attaches MPI_COMM_WORLD, a library its caller's communicator.
inline void attach(MPI_Comm comm) {
  auto& S = detail::st();
  S.comm = comm;
  MPI_Comm_rank(comm, &S.me);
  MPI_Comm_size(comm, &S.np);
  // Oversubscription: more ranks on this node than online CPUs. Then a spinning waiter
  // only delays the peer it waits for, so the default spin phase is skipped.
  MPI_Comm node = MPI_COMM_NULL;
  int local_np = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local_np);
    MPI_Comm_free(&node);
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  S.local_np = local_np;
  S.oversubscribed = cpus > 0 && local_np > cpus;
  S.timeout_ms = detail::env_long("COLLC_MPI_WAIT_TIMEOUT_MS", 20000, 1);
  S.spin = detail::env_long("COLLC_MPI_WAIT_SPIN", S.oversubscribed ? 0 : 100, 0);
  S.yield_us = detail::env_long("COLLC_MPI_WAIT_YIELD_US", 2000, 0);
  S.sleep_max_us = detail::env_long("COLLC_MPI_WAIT_SLEEP_MAX_US", 200, 1);
  S.jitter_us = detail::env_long("COLLC_MPI_JITTER_US", 0, 0);
  S.lag_us = detail::env_long("COLLC_MPI_LAG_US", 0, 0);
  // Shared-memory windows (3(e)) need every rank on this node.
  S.shm = detail::env_long("COLLC_MPI_SHM", S.shm_default ? 1 : 0, 0) != 0 && local_np == S.np;
  // Library calls read an input the protocol only reads locally in place (collc_mpi_lib.hpp
  // ReadInPlace); 0 stages it into its window as before (benches/lib/exchange_ab.sh).
  S.read_in_place = detail::env_long("COLLC_MPI_READ_IN_PLACE", 1, 0) != 0;
  // ... and write an output no peer reaches in place (collc_mpi_lib.hpp WriteInPlace); 0
  // copies it out of its window after the kernel as before (COLLC_LIB_BENCH_AB=write
  // benches/lib/exchange_ab.sh).
  S.write_in_place = detail::env_long("COLLC_MPI_WRITE_IN_PLACE", 1, 0) != 0;
  if (const char* f = getenv("COLLC_MPI_TEST_FAULT")) {
    if (*f) {
      const std::string spec = f;
      const auto colon = spec.find(':');
      const std::string kind = spec.substr(0, colon);
      char* end = nullptr;
      const long r = colon == std::string::npos ? -1 : strtol(spec.c_str() + colon + 1, &end, 10);
      if ((kind != "kill" && kind != "hang" && kind != "alloc") || r < 0 || !end || *end != '\0') {
        if (S.throw_on_fail) throw Failure{2, "invalid COLLC_MPI_TEST_FAULT=\"" + spec + "\""};
        fprintf(stderr, "collc_mpi: invalid COLLC_MPI_TEST_FAULT=\"%s\" (need kill:RANK, hang:RANK or alloc:RANK)\n", f);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      S.fault_rank = int(r);
      S.fault_kind = kind == "kill" ? 1 : kind == "hang" ? 2 : 3;
    }
  }
  S.rng ^= uint64_t(S.me + 1) * 0xBF58476D1CE4E5B9ull;
  S.inited = true;
}

inline void finalize() { MPI_Finalize(); }
inline int rank() { return detail::st().me; }
inline int size() { return detail::st().np; }
inline long wait_timeout_ms() { return detail::st().timeout_ms; }
inline bool oversubscribed() { return detail::st().oversubscribed; }
inline long wait_spin() { return detail::st().spin; }
inline Stats& stats() { return detail::st().stats; }
inline void reset_stats() { detail::st().stats = Stats{}; }
/// Record the current call index (diagnostics in timeout reports).
inline void set_call(int call) { detail::st().call = call; }

/// The value of the test payload convention: call*100000 + rank*1000 + index.
inline int64_t payload(int call, int rank, int64_t index) {
  return int64_t(call) * 100000 + int64_t(rank) * 1000 + index;
}

/// A usage error found by a generated program's setup() (missing or out-of-domain
/// --param, unmet `require`, world size outside the protocol's `ranks` domain): prints
/// the message and aborts the job with exit code 2.
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void usage_error(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (detail::st().throw_on_fail) throw Failure{2, buf};
  fprintf(stderr, "collc_mpi: rank=%d: usage: %s\n", detail::st().me, buf);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::abort();
}

/// A runtime check of a generated kernel failed (an index, rank or slice the .coll does
/// not make trivially safe was out of range): contract error, exit code 4.
[[noreturn]] inline void contract_violation(const char* what, const char* cond) {
  detail::die(4, "runtime check failed: %s [%s]", what, cond);
}

/// Called by the launcher between kernel() and check() (COLLC_MPI_LAG_US test aid).
inline void lag_before_check() { detail::lag(); }

/// Input values of generated programs. They mirror backend/src/oracle.rs (`input_value`,
/// `array_value`) exactly, so the host and MPI backends stage the same payloads: small
/// integers (sums over 16 ranks stay below 2^24, exact in f32 in any reduction order) and,
/// for `prod`, powers of two. Every value depends on the call index, so data of the wrong
/// call is caught.
namespace oracle {
/// Element `i` of input window `salt` (its WindowId) of rank `r` in call `k`.
inline float input_value(bool prod, int64_t salt, int64_t r, int64_t k, int64_t i) {
  if (prod) {
    static const float kProd[6] = {1.0f, 2.0f, 0.5f, -1.0f, -2.0f, 4.0f};
    return kProd[(r * 3 + k * 5 + i + salt) % 6];
  }
  return float((r + 1) * 7 + (k % 64) * 1031 + (i % 1021) + salt * 13);
}
/// The same payload in element type T: the same integers (exact in every type), and for
/// `prod` on integer types 1, 2, 1, -1, -2, -1 in place of the fractions.
template <class T> inline T input_value_as(bool prod, int64_t salt, int64_t r, int64_t k, int64_t i) {
  if (prod && std::is_integral<T>::value) {
    static const int kIntProd[6] = {1, 2, 1, -1, -2, -1};
    return T(kIntProd[(r * 3 + k * 5 + i + salt) % 6]);
  }
  return T(input_value(prod, salt, r, k, i));
}
/// Element `i` of host array `a` (its ArrayId, domain lo..=hi) of rank `r` in call `k`.
inline int64_t array_value(int64_t lo, int64_t hi, int64_t a, int64_t r, int64_t k, int64_t i) {
  int64_t span = hi - lo + 1;
  if (span < 1) span = 1;
  return lo + (r * 5 + k * 3 + i * 7 + a * 11) % span;
}

// ---- The collective's meaning, as a table ---------------------------------------------
// What every rank stages and what its outputs must hold is NOT written in C++: the Rust
// side generates it from the one definition (collc_spec::meaning) for the run's np, params
// and calls (collc_backend::mpi::table), and the launcher hands it to the program with
// `--oracle FILE` (rank 0 reads it and broadcasts it). The format, whitespace-separated:
//   collc-oracle 1 PROD NP CALLS NWIN win-name... NSIG sig-name...
//   then per call k, per rank r:  NIN win...  NSEG seg...  NCELL cell...
//   seg  = WIN LO HI COMBINE NSRC (RANK WIN OFFSET)...   COMBINE: -1 unspecified (not
//          compared), 0 copy, 1 sum, 2 max, 3 min, 4 prod; element e must equal the
//          combination of input_value(PROD, WIN, RANK, k, e + OFFSET) over the sources
//   cell = SIG INDEX VALUE                               value signal cell after the call
//   (a barrier has no entries: its stamp rule is the arrival counter of the generated check)
struct Source { int64_t rank = 0, win = 0, offset = 0; };
struct Segment { int64_t win = 0, lo = 0, hi = 0; int combine = -1; std::vector<Source> src; };
struct CellWant { int64_t sig = 0, index = 0, value = 0; };
struct RankCall { std::vector<int64_t> inputs; std::vector<Segment> segs; std::vector<CellWant> cells; };
struct Table {
  bool loaded = false;
  bool prod = false;
  int np = 0;
  long calls = 0;
  std::vector<std::string> wins, sigs;
  std::vector<RankCall> at;  // k * np + r
  const RankCall* get(int call, int rank) const {
    if (!loaded || call < 0 || call >= calls || rank < 0 || rank >= np) return nullptr;
    return &at[size_t(call) * size_t(np) + size_t(rank)];
  }
};
inline Table& table() {
  static Table t;
  return t;
}
/// Parses a table; false (and the table stays unloaded) on any malformed or
/// out-of-range entry.
inline bool parse(const std::string& text, Table* out) {
  std::istringstream in(text);
  std::string magic;
  int version = 0, prod = 0;
  Table t;
  auto count = [&](int64_t* n, int64_t max) { return bool(in >> *n) && *n >= 0 && *n <= max; };
  if (!(in >> magic >> version >> prod >> t.np >> t.calls) || magic != "collc-oracle" || version != 1) return false;
  if (t.np < 1 || t.calls < 0) return false;
  t.prod = prod != 0;
  int64_t n = 0;
  if (!count(&n, 1 << 20)) return false;
  t.wins.resize(size_t(n));
  for (auto& w : t.wins) if (!(in >> w)) return false;
  if (!count(&n, 1 << 20)) return false;
  t.sigs.resize(size_t(n));
  for (auto& x : t.sigs) if (!(in >> x)) return false;
  const int64_t nw = int64_t(t.wins.size()), ns = int64_t(t.sigs.size());
  t.at.resize(size_t(t.calls) * size_t(t.np));
  for (RankCall& rc : t.at) {
    if (!count(&n, nw)) return false;
    rc.inputs.resize(size_t(n));
    for (auto& w : rc.inputs) if (!(in >> w) || w < 0 || w >= nw) return false;
    if (!count(&n, int64_t(1) << 30)) return false;
    rc.segs.resize(size_t(n));
    for (Segment& g : rc.segs) {
      int64_t m = 0;
      if (!(in >> g.win >> g.lo >> g.hi >> g.combine) || g.win < 0 || g.win >= nw || g.lo < 0 || g.hi < g.lo ||
          g.combine < -1 || g.combine > 4 || !count(&m, 1 << 20))
        return false;
      g.src.resize(size_t(m));
      for (Source& x : g.src)
        if (!(in >> x.rank >> x.win >> x.offset) || x.rank < 0 || x.rank >= t.np || x.win < 0 || x.win >= nw)
          return false;
    }
    if (!count(&n, int64_t(1) << 30)) return false;
    rc.cells.resize(size_t(n));
    for (CellWant& c : rc.cells)
      if (!(in >> c.sig >> c.index >> c.value) || c.sig < 0 || c.sig >= ns || c.index < 0) return false;
  }
  t.loaded = true;
  *out = std::move(t);
  return true;
}
}  // namespace oracle

// ------------------------------------------------------------------------------------
// Internal checks
// ------------------------------------------------------------------------------------

inline void trace_write();  // below, "Tracing"

namespace detail {

inline void check_range(const Window& w, int pe, MPI_Aint disp, MPI_Aint count, const char* op) {
  if (pe < 0 || pe >= st().np)
    die(4, "%s on window \"%s\": peer %d out of range [0,%d)", op, w.name.c_str(), pe, st().np);
  if (disp < 0 || count < 0 || disp + count > w.count)
    die(4, "%s on window \"%s\": elements [%ld,%ld) outside [0,%ld)", op, w.name.c_str(),
        long(disp), long(disp + count), long(w.count));
  if (w.win == MPI_WIN_NULL) die(4, "%s on window \"%s\" before allocation", op, w.name.c_str());
}

inline std::string cell_name(const Window& w, MPI_Aint disp) {
  for (const auto& a : w.arrays)
    if (disp >= a.base && disp < a.base + a.cells)
      return a.name + "[" + std::to_string(long(disp - a.base)) + "]";
  return "cell#" + std::to_string(long(disp));
}

/// Release/acquire fence over every live window (see header comment 3(a), 3(e)).
inline void sync_all() {
  for (Window* w : st().live)
    if (w->peer.empty()) COLLC_MPI_CHECK(MPI_Win_sync(w->win));
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

/// Rank `pe`'s signal cell `disp` of a shared window (3(e)).
inline int32_t* shared_cell(const Window& w, int pe, MPI_Aint disp) {
  return reinterpret_cast<int32_t*>(w.peer[size_t(pe)]) + disp;
}

inline int32_t fetch_cell(const Window& w, int pe, MPI_Aint disp) {
  if (!w.peer.empty()) return __atomic_load_n(shared_cell(w, pe, disp), __ATOMIC_ACQUIRE);
  int32_t dummy = 0, v = 0;
  COLLC_MPI_CHECK(MPI_Fetch_and_op(&dummy, &v, MPI_INT32_T, pe, disp, MPI_NO_OP, w.win));
  COLLC_MPI_CHECK(MPI_Win_flush_local(pe, w.win));  // a read: done when `v` holds it (3(c))
  return v;
}

inline void accumulate_cell(const Window& w, int pe, MPI_Aint disp, int32_t value, MPI_Op op) {
  if (!w.peer.empty()) {
    if (op == MPI_SUM) {
      __atomic_fetch_add(shared_cell(w, pe, disp), value, __ATOMIC_RELEASE);
    } else {
      __atomic_store_n(shared_cell(w, pe, disp), value, __ATOMIC_RELEASE);
    }
    return;
  }
  COLLC_MPI_CHECK(MPI_Accumulate(&value, 1, MPI_INT32_T, pe, disp, 1, MPI_INT32_T, op, w.win));
  COLLC_MPI_CHECK(MPI_Win_flush(pe, w.win));  // landed at the target, not only sent (3(c))
}

[[noreturn]] inline void wait_timeout(const Window& w, MPI_Aint disp, Cmp cmp, int32_t k,
                                      int32_t held, const char* what, uint64_t waited_ns,
                                      uint64_t polls) {
  auto& S = st();
  if (!S.trace_file.empty()) {
    // The wait never passed: record it as blocked and save the trace before the job aborts.
    TraceRec r;
    r.kind = 6;
    r.op = int(cmp);
    r.call = S.call;
    r.owner = S.me;
    r.w = &w;
    r.disp = long(disp);
    r.value = k;
    r.observed = held;
    if (S.trace.size() < S.trace_cap) S.trace.push_back(r); else ++S.trace_dropped;
    ::collc_mpi::trace_write();
  }
  std::string cell = cell_name(w, disp);
  if (S.throw_on_fail) {
    char buf[1024];
    snprintf(buf, sizeof buf,
             "wait timeout: rank %d call %d step \"%s\": expected %s %s %d, the cell holds %d after %.0f ms",
             S.me, S.call, what ? what : "?", cell.c_str(), cmp_str(cmp), int(k), int(held),
             double(waited_ns) / 1e6);
    throw Failure{3, buf};
  }
  fprintf(stderr,
          "collc_mpi: WAIT TIMEOUT rank=%d call=%d step=\"%s\" cell=%s (%s disp %ld) "
          "expected cell %s %d, holds %d after %.0f ms (%llu polls; "
          "COLLC_MPI_WAIT_TIMEOUT_MS=%ld)\n",
          S.me, S.call, what ? what : "?", cell.c_str(), w.name.c_str(), long(disp),
          cmp_str(cmp), int(k), int(held), double(waited_ns) / 1e6,
          (unsigned long long)polls, S.timeout_ms);
  // Dump every cell this rank owns, to show which peer's credit is missing.
  for (const auto& a : w.arrays) {
    std::string line;
    for (MPI_Aint i = 0; i < a.cells && i < 64; ++i) {
      if (i) line += ",";
      line += std::to_string(fetch_cell(w, S.me, a.base + i));
    }
    if (a.cells > 64) line += ",...";
    fprintf(stderr, "collc_mpi: rank=%d signal %s = [%s]\n", S.me, a.name.c_str(), line.c_str());
  }
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

}  // namespace detail

// ------------------------------------------------------------------------------------
// Tracing (`collc run --target mpi --trace`)
// ------------------------------------------------------------------------------------
//
// Each rank records its notifies, passed waits, `.coll` fences and window accesses of data
// statements (with the call in progress) into a buffer of at most `capacity` events (past
// it events are counted as dropped and the trace is reported as overflowed) and writes it
// to FILE.rank<R> after the last call (or when a wait times out, before the job aborts).
// Order reconstruction as on the host (collc/pto_comm_cpu.hpp "Tracing"): a separate window
// `seqwin` holds one counter per rank; every traced notify on rank r's cells, and the read
// that lets a wait on rank r's cell pass, happens inside an MPI_LOCK_EXCLUSIVE epoch on
// rank r's counter (no untraced access to signal cells happens while tracing), so the
// notify takes the next number and the wait records the last number it saw. Untraced runs
// never allocate seqwin and pay one branch per primitive.

namespace detail {

inline bool tracing() { return !st().trace_file.empty(); }

inline void trace_push(const TraceRec& r) {
  auto& S = st();
  if (S.trace.size() < S.trace_cap) {
    S.trace.push_back(r);
  } else {
    ++S.trace_dropped;
  }
}

/// Inside rank `pe`'s exclusive seqwin epoch: `op` on the cell (MPI_NO_OP: read it) and
/// the counter (+1 for a write, read for MPI_NO_OP).
inline void traced_cell(const Window& w, int pe, MPI_Aint disp, int32_t value, MPI_Op op,
                        int32_t* before, uint64_t* seq) {
  auto& S = st();
  if (S.seqwin == MPI_WIN_NULL) die(4, "traced notify/wait before Session::allocate()");
  COLLC_MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, pe, 0, S.seqwin));
  COLLC_MPI_CHECK(MPI_Fetch_and_op(&value, before, MPI_INT32_T, pe, disp, op, w.win));
  COLLC_MPI_CHECK(MPI_Win_flush(pe, w.win));
  int64_t one = op == MPI_NO_OP ? 0 : 1, old = 0;
  COLLC_MPI_CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, pe, 0, op == MPI_NO_OP ? MPI_NO_OP : MPI_SUM, S.seqwin));
  COLLC_MPI_CHECK(MPI_Win_unlock(pe, S.seqwin));
  *seq = uint64_t(old + one);
}

/// A traced notify (MPI_SUM: AtomicAdd, MPI_REPLACE: Set).
inline void traced_notify(const Window& w, int pe, MPI_Aint disp, int32_t value, MPI_Op op) {
  TraceRec r;
  r.kind = 1;
  r.op = op == MPI_REPLACE ? 1 : 0;
  r.call = st().call;
  r.owner = pe;
  r.w = &w;
  r.disp = long(disp);
  r.value = value;
  traced_cell(w, pe, disp, value, op, &r.observed, &r.seq);
  trace_push(r);
}

/// The buffer token and element index of a recorded window position: a signal array's
/// name and cell index in it, or a data window's name and element displacement.
inline std::pair<std::string, long> trace_where(const Window* w, long disp) {
  if (w == nullptr) return {"-", 0};
  for (const auto& a : w->arrays)
    if (disp >= a.base && disp < a.base + a.cells) return {a.name, disp - long(a.base)};
  return {w->name, disp};
}

}  // namespace detail

/// Turn tracing on for this process (before Session::allocate()).
inline void trace_start(const std::string& file, size_t capacity) {
  auto& S = detail::st();
  S.trace_file = file;
  S.trace_cap = capacity > 0 ? capacity : 65536;
  S.trace.reserve(std::min<size_t>(S.trace_cap, size_t(1) << 20));
}

inline void trace_fence() {
  if (!detail::tracing()) return;
  detail::TraceRec r;
  r.kind = 3;
  r.call = detail::st().call;
  r.owner = detail::st().me;
  detail::trace_push(r);
}

inline void trace_gm(bool write, const Window& w, int pe, MPI_Aint disp, MPI_Aint len) {
  if (!detail::tracing()) return;
  detail::TraceRec r;
  r.kind = write ? 5 : 4;
  r.call = detail::st().call;
  r.owner = pe;
  r.w = &w;
  r.disp = long(disp);
  r.len = long(len);
  detail::trace_push(r);
}

/// Writes this rank's trace to FILE.rank<R> (collc_backend::trace::format; the buffer
/// field is a name: a signal array or a data window, `NAME@callK` for call K's instance).
inline void trace_write() {
  auto& S = detail::st();
  if (!detail::tracing()) return;
  const std::string path = S.trace_file + ".rank" + std::to_string(S.me);
  FILE* f = fopen(path.c_str(), "w");
  if (f == nullptr) detail::die(4, "cannot write the trace to %s", path.c_str());
  fprintf(f, "collc-trace 1 mpi rank=%d\nthread %d -1 %zu %llu\n", S.me, S.me, S.trace.size(),
          (unsigned long long)S.trace_dropped);
  for (const detail::TraceRec& r : S.trace) {
    const auto where = detail::trace_where(r.w, r.disp);
    fprintf(f, "%d %d %d %s 0 %ld %ld %d %d %d %llu\n", r.kind, r.call, r.owner, where.first.c_str(),
            where.second, r.len, r.op, int(r.value), int(r.observed), (unsigned long long)r.seq);
  }
  if (fclose(f) != 0) detail::die(4, "cannot write the trace to %s", path.c_str());
}

// The emitter's trace points (see collc/pto_comm_cpu.hpp for the host's).
#define COLLC_TRACE_FENCE() ::collc_mpi::trace_fence()
#define COLLC_TRACE_GET(win, pe, disp, len) ::collc_mpi::trace_gm(false, (win), int(pe), MPI_Aint(disp), MPI_Aint(len))
#define COLLC_TRACE_PUT(win, pe, disp, len) ::collc_mpi::trace_gm(true, (win), int(pe), MPI_Aint(disp), MPI_Aint(len))

// ------------------------------------------------------------------------------------
// Protocol primitives (what generated kernels call)
// ------------------------------------------------------------------------------------

/// TNOTIFY(cell `disp` on rank `pe`, +value, AtomicAdd). pe == me is the local
/// (epilogue) notify. Release semantics: every local store and every completed get/put
/// of this rank issued before the call is visible to whoever observes the credit.
inline void notify_add(const Window& w, int pe, MPI_Aint disp, int32_t value) {
  if (w.kind != WinKind::Signal) detail::die(4, "notify_add on data window \"%s\"", w.name.c_str());
  detail::check_range(w, pe, disp, 1, "notify_add");
  detail::jitter();
  detail::sync_all();
  if (detail::tracing()) {
    detail::traced_notify(w, pe, disp, value, MPI_SUM);
  } else {
    detail::accumulate_cell(w, pe, disp, value, MPI_SUM);
  }
  ++detail::st().stats.notifies;
}

/// TNOTIFY(cell, value, Set): atomic replace. Never mix with notify_add on the same
/// cell (see header comment 3(b)).
inline void notify_set(const Window& w, int pe, MPI_Aint disp, int32_t value) {
  if (w.kind != WinKind::Signal) detail::die(4, "notify_set on data window \"%s\"", w.name.c_str());
  detail::check_range(w, pe, disp, 1, "notify_set");
  detail::jitter();
  detail::sync_all();
  if (detail::tracing()) {
    detail::traced_notify(w, pe, disp, value, MPI_REPLACE);
  } else {
    detail::accumulate_cell(w, pe, disp, value, MPI_REPLACE);
  }
  ++detail::st().stats.notifies;
}

/// TWAIT(own cell `disp`, threshold, cmp): poll until `cell cmp threshold` holds.
/// Acquire semantics: data published before the observed credits is visible afterwards.
/// `what` names the protocol step in the timeout report (optional).
inline void wait(const Window& w, MPI_Aint disp, Cmp cmp, int32_t threshold,
                 const char* what = nullptr) {
  auto& S = detail::st();
  if (w.kind != WinKind::Signal) detail::die(4, "wait on data window \"%s\"", w.name.c_str());
  detail::check_range(w, S.me, disp, 1, "wait");
  detail::fault_point();
  const uint64_t t0 = detail::now_ns();
  uint64_t polls = 1;
  int32_t v = detail::fetch_cell(w, S.me, disp);
  if (!cmp_holds(v, cmp, threshold)) {
    const uint64_t deadline = t0 + uint64_t(S.timeout_ms) * 1000000ull;
    const uint64_t yield_until = t0 + uint64_t(S.yield_us) * 1000ull;
    long sleep_ns = 2000;
    uint64_t next_hook = t0 + 1000000ull;
    for (;;) {
      const bool spinning = long(polls) <= S.spin;
      if (spinning && (polls & 1023) != 0) {
        detail::cpu_relax();
      } else {
        const uint64_t now = detail::now_ns();
        if (now >= deadline) detail::wait_timeout(w, disp, cmp, threshold, v, what, now - t0, polls);
        if (S.poll_hook != nullptr && now >= next_hook) {
          next_hook = now + 1000000ull;
          S.poll_hook(S.poll_ctx);
        }
        if (spinning) {
          detail::cpu_relax();
        } else if (now < yield_until) {
          sched_yield();
        } else {
          const long nap = std::min<long>(sleep_ns, long(deadline - now));  // never oversleep the deadline
          timespec ts{nap / 1000000000L, nap % 1000000000L};
          nanosleep(&ts, nullptr);
          sleep_ns = std::min<long>(sleep_ns * 2, S.sleep_max_us * 1000);
        }
      }
      v = detail::fetch_cell(w, S.me, disp);
      ++polls;
      if (cmp_holds(v, cmp, threshold)) break;
    }
  }
  if (detail::tracing()) {
    // The read that lets the wait pass, numbered (see "Tracing"); a value that no longer
    // satisfies the wait (another writer's Set) goes back to polling.
    detail::TraceRec r;
    r.kind = 2;
    r.op = int(cmp);
    r.call = S.call;
    r.owner = S.me;
    r.w = &w;
    r.disp = long(disp);
    r.value = threshold;
    detail::traced_cell(w, S.me, disp, 0, MPI_NO_OP, &r.observed, &r.seq);
    if (!cmp_holds(r.observed, cmp, threshold)) {
      wait(w, disp, cmp, threshold, what);
      return;
    }
    detail::trace_push(r);
  }
  detail::sync_all();
  S.stats.waits++;
  S.stats.polls += polls;
  S.stats.wait_ns += detail::now_ns() - t0;
}

/// TLOAD of `count` elements at element `disp` of rank `pe`'s copy of `w` into the
/// local buffer `dst_local`. Complete on return (flushed locally: the data is here, and the
/// read of the target is over, 3(c)).
template <class T>
inline void get(T* dst_local, int pe, const Window& w, MPI_Aint disp, MPI_Aint count) {
  if (w.kind != WinKind::Data) detail::die(4, "get on signal window (use wait)");
  if (int(sizeof(T)) != w.elem_size)
    detail::die(4, "get: element size %d != window \"%s\" element size %d", int(sizeof(T)),
                w.name.c_str(), w.elem_size);
  detail::check_range(w, pe, disp, count, "get");
  detail::jitter();
  detail::lag();
  if (!w.peer.empty()) {
    std::memmove(dst_local, w.peer[size_t(pe)] + size_t(disp) * sizeof(T), size_t(count) * sizeof(T));
  }
  for (MPI_Aint done = 0; w.peer.empty() && done < count;) {
    int n = int(std::min<MPI_Aint>(count - done, INT_MAX));
    COLLC_MPI_CHECK(MPI_Get(dst_local + done, n, w.type, pe, disp + done, n, w.type, w.win));
    done += n;
  }
  if (w.peer.empty()) COLLC_MPI_CHECK(MPI_Win_flush_local(pe, w.win));
  auto& s = detail::st().stats;
  s.gets++;
  s.bytes_get += uint64_t(count) * sizeof(T);
}

/// TPUT of `count` elements from `src_local` to element `disp` of rank `pe`'s copy of
/// `w`. Complete AT THE TARGET (flushed) on return, so a following notify publishes it.
template <class T>
inline void put(const T* src_local, int pe, const Window& w, MPI_Aint disp, MPI_Aint count) {
  if (w.kind != WinKind::Data) detail::die(4, "put on signal window (use notify_*)");
  if (int(sizeof(T)) != w.elem_size)
    detail::die(4, "put: element size %d != window \"%s\" element size %d", int(sizeof(T)),
                w.name.c_str(), w.elem_size);
  detail::check_range(w, pe, disp, count, "put");
  detail::jitter();
  detail::lag();
  if (!w.peer.empty()) {
    std::memmove(w.peer[size_t(pe)] + size_t(disp) * sizeof(T), src_local, size_t(count) * sizeof(T));
  }
  for (MPI_Aint done = 0; w.peer.empty() && done < count;) {
    int n = int(std::min<MPI_Aint>(count - done, INT_MAX));
    COLLC_MPI_CHECK(MPI_Put(src_local + done, n, w.type, pe, disp + done, n, w.type, w.win));
    done += n;
  }
  // At the target (not flush_local): the notify after it must find the data landed (3(c)).
  if (w.peer.empty()) COLLC_MPI_CHECK(MPI_Win_flush(pe, w.win));
  auto& s = detail::st().stats;
  s.puts++;
  s.bytes_put += uint64_t(count) * sizeof(T);
}

/// Local copy (TLOAD/TSTORE/TMOV on this rank's own memory: window copies and tiles).
/// Overlap-safe; a copy onto itself is skipped.
template <class T> inline void copy_local(T* dst, const T* src, MPI_Aint count) {
  if (count <= 0 || dst == src) return;
  std::memmove(dst, src, size_t(count) * sizeof(T));
}

/// Element-wise reduction operators of `reduce`.
enum class ReduceOp { Sum, Max, Min, Prod };

/// dst[i] = dst[i] op src[i] on local memory (tiles, this rank's window copy, a staging
/// buffer filled by get). max/min follow IEEE fmax/fmin (NaN-ignoring), like the simulator.
template <class T> inline T reduce_max(T a, T b) { return a < b ? b : a; }
template <class T> inline T reduce_min(T a, T b) { return b < a ? b : a; }
inline float reduce_max(float a, float b) { return std::fmax(a, b); }
inline float reduce_min(float a, float b) { return std::fmin(a, b); }
inline double reduce_max(double a, double b) { return std::fmax(a, b); }
inline double reduce_min(double a, double b) { return std::fmin(a, b); }
/// Integer sum and product wrap (two's complement, as MPI implementations compute them).
template <class T> inline T reduce_add(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return T(U(a) + U(b));
  } else {
    return a + b;
  }
}
template <class T> inline T reduce_mul(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return T(U(a) * U(b));
  } else {
    return a * b;
  }
}
template <class T> inline T reduce_one(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::Sum: return reduce_add(a, b);
    case ReduceOp::Max: return reduce_max(a, b);
    case ReduceOp::Min: return reduce_min(a, b);
    case ReduceOp::Prod: return reduce_mul(a, b);
  }
  return a;
}
template <class T> inline void reduce(ReduceOp op, T* dst, const T* src, MPI_Aint count) {
  switch (op) {
    case ReduceOp::Sum:
      for (MPI_Aint i = 0; i < count; ++i) dst[i] = reduce_add(dst[i], src[i]);
      break;
    case ReduceOp::Max:
      for (MPI_Aint i = 0; i < count; ++i) dst[i] = reduce_max(dst[i], src[i]);
      break;
    case ReduceOp::Min:
      for (MPI_Aint i = 0; i < count; ++i) dst[i] = reduce_min(dst[i], src[i]);
      break;
    case ReduceOp::Prod:
      for (MPI_Aint i = 0; i < count; ++i) dst[i] = reduce_mul(dst[i], src[i]);
      break;
  }
}

/// Atomic read of a signal cell (any rank's). For harness checks and diagnostics; a
/// kernel must use wait().
inline int32_t read_cell(const Window& w, int pe, MPI_Aint disp) {
  detail::check_range(w, pe, disp, 1, "read_cell");
  return detail::fetch_cell(w, pe, disp);
}

/// Harness helpers on int32 data windows (not protocol operations): atomic add and
/// atomic read, flushed. Used e.g. by the barrier check's arrival counter.
inline void harness_add_i32(const Window& w, int pe, MPI_Aint disp, int32_t v) {
  if (w.elem_size != 4) detail::die(4, "harness_add_i32 on non-int32 window \"%s\"", w.name.c_str());
  detail::check_range(w, pe, disp, 1, "harness_add_i32");
  detail::accumulate_cell(w, pe, disp, v, MPI_SUM);
}
inline int32_t harness_read_i32(const Window& w, int pe, MPI_Aint disp) {
  if (w.elem_size != 4) detail::die(4, "harness_read_i32 on non-int32 window \"%s\"", w.name.c_str());
  detail::check_range(w, pe, disp, 1, "harness_read_i32");
  return detail::fetch_cell(w, pe, disp);
}

// ------------------------------------------------------------------------------------
// Parameters (`--param name=value`)
// ------------------------------------------------------------------------------------

class Params {
 public:
  void set(const std::string& name, const std::string& value) { kv_[name] = value; }
  /// Parse "name=value"; returns false if malformed.
  bool parse(const std::string& nv) {
    auto eq = nv.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    set(nv.substr(0, eq), nv.substr(eq + 1));
    return true;
  }
  bool has(const std::string& name) const { return kv_.count(name) != 0; }
  int64_t i64(const std::string& name, int64_t dflt) const {
    used_.insert(name);
    auto it = kv_.find(name);
    if (it == kv_.end()) {
      effective_[name] = std::to_string(dflt);
      return dflt;
    }
    char* end = nullptr;
    long long v = strtoll(it->second.c_str(), &end, 0);
    if (it->second.empty() || *end != '\0')
      detail::die(2, "--param %s=%s is not an integer", name.c_str(), it->second.c_str());
    effective_[name] = std::to_string(v);
    return int64_t(v);
  }
  double f64(const std::string& name, double dflt) const {
    used_.insert(name);
    auto it = kv_.find(name);
    if (it == kv_.end()) {
      effective_[name] = num(dflt);
      return dflt;
    }
    char* end = nullptr;
    double v = strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0')
      detail::die(2, "--param %s=%s is not a number", name.c_str(), it->second.c_str());
    effective_[name] = num(v);
    return v;
  }
  /// Parameters that were given but never read by setup() (typos).
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const auto& p : kv_)
      if (!used_.count(p.first)) out.push_back(p.first);
    return out;
  }
  /// Effective values of the parameters setup() read (given or default), as a JSON
  /// object of numbers.
  std::string json() const {
    std::string s;
    for (const auto& p : effective_) {
      if (!s.empty()) s += ",";
      s += "\"" + p.first + "\":" + p.second;
    }
    return "{" + s + "}";
  }

 private:
  static std::string num(double v) {
    char b[64];
    snprintf(b, sizeof b, "%.17g", v);
    return b;
  }
  std::map<std::string, std::string> kv_;
  mutable std::set<std::string> used_;
  mutable std::map<std::string, std::string> effective_;
};

// ------------------------------------------------------------------------------------
// Session: the symmetric objects of one protocol instance
// ------------------------------------------------------------------------------------

/// Declare-then-allocate container for one protocol instance's windows.
/// Declaration (`signal`, `buffer`) happens in the generated `setup()`; it must be
/// rank-uniform (same order, same sizes on every rank). `allocate()` is collective.
class Session {
 public:
  explicit Session(const Params& params) : params_(params) {
    auto sig = std::make_unique<Window>();
    sig->name = "signals";
    sig->kind = WinKind::Signal;
    sig->type = MPI_INT32_T;
    sig->elem_size = 4;
    sigwin_ = sig.get();
    wins_.push_back(std::move(sig));
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { release(); }

  int me() const { return detail::st().me; }
  int np() const { return detail::st().np; }
  const Params& params() const { return params_; }
  int64_t param_i64(const char* name, int64_t dflt) const { return params_.i64(name, dflt); }
  bool has_param(const char* name) const { return params_.has(name); }
  double param_f64(const char* name, double dflt) const { return params_.f64(name, dflt); }

  /// Reserve `cells` int32 cells for signal array `name`; returns its base displacement
  /// in the (single) signal window.
  MPI_Aint signal(const char* name, MPI_Aint cells) {
    if (allocated_) detail::die(4, "signal(\"%s\") declared after allocate()", name);
    if (cells <= 0) detail::die(4, "signal(\"%s\"): %ld cells", name, long(cells));
    SignalArray a;
    a.name = name;
    a.base = sigwin_->count;
    a.cells = cells;
    sigwin_->arrays.push_back(a);
    sigwin_->count += cells;
    return a.base;
  }
  /// Reserve `cells` int32 VALUE cells (a signal declared `as value`: written with
  /// notify_set only, carries a value, never reset). Same window as the credit cells, but
  /// excluded from the all-zero check after the last call.
  MPI_Aint value_signal(const char* name, MPI_Aint cells) {
    MPI_Aint base = signal(name, cells);
    sigwin_->arrays.back().credit = false;
    return base;
  }
  /// Reserve `cells` VALUE cells per call for a `per call` value signal (one run of cells
  /// per call, in call order; call k's first cell is the returned base + k * cells).
  MPI_Aint value_signal_per_call(const char* name, MPI_Aint cells) {
    MPI_Aint base = 0;
    for (long k = 0; k < calls_; ++k) {
      const std::string inst = std::string(name) + "@call" + std::to_string(k);
      const MPI_Aint b = value_signal(inst.c_str(), cells);
      if (k == 0) base = b;
    }
    return base;
  }
  /// Back-to-back calls of this run (sizes the per-call objects; set before setup()).
  void set_calls(long calls) {
    if (allocated_) detail::die(4, "set_calls() after allocate()");
    calls_ = calls < 1 ? 1 : calls;
  }
  long calls() const { return calls_; }
  /// The protocol's signal window (valid for the Session's lifetime; allocated later).
  Window* signal_window() { return sigwin_; }

  /// Declare a symmetric data window of `count` elements of T.
  template <class T> Window* buffer(const char* name, MPI_Aint count) {
    if (allocated_) detail::die(4, "buffer(\"%s\") declared after allocate()", name);
    if (count <= 0) detail::die(4, "buffer(\"%s\"): %ld elements", name, long(count));
    auto w = std::make_unique<Window>();
    w->name = name;
    w->kind = WinKind::Data;
    w->type = MpiType<T>::get();
    w->elem_size = int(sizeof(T));
    w->count = count;
    Window* raw = w.get();
    wins_.push_back(std::move(w));
    return raw;
  }

  /// Declare one symmetric data window of `count` elements of T per call (a `per call`
  /// window): instance k serves call k only, so nothing of call k races with call k+1 on it.
  template <class T> std::vector<Window*> buffers_per_call(const char* name, MPI_Aint count) {
    std::vector<Window*> v;
    for (long k = 0; k < calls_; ++k) {
      const std::string inst = std::string(name) + "@call" + std::to_string(k);
      v.push_back(buffer<T>(inst.c_str(), count));
    }
    return v;
  }

  /// Rank-local scratch memory (NOT a window): the kernel's UB tiles. Zeroed, owned by
  /// the Session, allocated at declaration so the kernel itself never allocates.
  template <class T> T* local_buffer(const char* name, MPI_Aint count) {
    if (count <= 0) detail::die(4, "local_buffer(\"%s\"): %ld elements", name, long(count));
    scratch_.emplace_back(size_t(count) * sizeof(T) + 64, 0);
    // 64-byte aligned start inside the byte vector
    uintptr_t p = reinterpret_cast<uintptr_t>(scratch_.back().data());
    return reinterpret_cast<T*>((p + 63) & ~uintptr_t(63));
  }

  /// Collective: allocate all declared windows (zeroed), open lock_all epochs.
  void allocate() {
    if (allocated_) return;
    auto& S = detail::st();
    if (sigwin_->count == 0) sigwin_->count = 1;  // keep one (unused) cell
    for (auto& up : wins_) {
      Window& w = *up;
      // Symmetry check: every rank must declare identical sizes.
      long mine[2] = {long(w.count), long(w.elem_size)}, lo[2], hi[2];
      COLLC_MPI_CHECK(MPI_Allreduce(mine, lo, 2, MPI_LONG, MPI_MIN, S.comm));
      COLLC_MPI_CHECK(MPI_Allreduce(mine, hi, 2, MPI_LONG, MPI_MAX, S.comm));
      if (lo[0] != hi[0] || lo[1] != hi[1])
        detail::die(4, "window \"%s\" is not symmetric: count in [%ld,%ld], elem in [%ld,%ld]",
                    w.name.c_str(), lo[0], hi[0], lo[1], hi[1]);
      MPI_Info info;
      COLLC_MPI_CHECK(MPI_Info_create(&info));
      if (w.kind == WinKind::Signal) COLLC_MPI_CHECK(MPI_Info_set(info, "accumulate_ordering", "none"));
      COLLC_MPI_CHECK(MPI_Info_set(info, "same_size", "true"));
      COLLC_MPI_CHECK(MPI_Info_set(info, "same_disp_unit", "true"));
      const bool shared = S.shm && !detail::tracing();
      const MPI_Aint bytes = MPI_Aint(w.count) * w.elem_size;
      int rc = MPI_SUCCESS;
      if (shared) {
        COLLC_MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
        rc = MPI_Win_allocate_shared(bytes, w.elem_size, info, S.comm, &w.base, &w.win);
      } else {
        rc = MPI_Win_allocate(bytes, w.elem_size, info, S.comm, &w.base, &w.win);
      }
      COLLC_MPI_CHECK(MPI_Info_free(&info));
      detail::agree_allocated(rc, &w.win, w.name.c_str(), long(bytes));
      COLLC_MPI_CHECK(MPI_Win_set_errhandler(w.win, MPI_ERRORS_RETURN));
      if (shared) detail::query_peers(w, S.np);
      int* model = nullptr;
      int flag = 0;
      COLLC_MPI_CHECK(MPI_Win_get_attr(w.win, MPI_WIN_MODEL, &model, &flag));
      w.model = (flag && model) ? *model : MPI_WIN_SEPARATE;  // unknown -> assume the stricter
      std::memset(w.base, 0, size_t(w.count) * size_t(w.elem_size));
      COLLC_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win));
      COLLC_MPI_CHECK(MPI_Win_sync(w.win));  // zeros -> public copy (separate model)
      S.live.push_back(&w);
    }
    if (detail::tracing()) {
      // The trace's per-rank notify counters (see "Tracing"): no lock_all epoch, only
      // exclusive locks.
      const int rc = MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, S.comm, &S.seqbase, &S.seqwin);
      detail::agree_allocated(rc, &S.seqwin, "trace counters", long(sizeof(int64_t)));
      COLLC_MPI_CHECK(MPI_Win_set_errhandler(S.seqwin, MPI_ERRORS_RETURN));
      COLLC_MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, S.me, 0, S.seqwin));
      std::memset(S.seqbase, 0, sizeof(int64_t));
      COLLC_MPI_CHECK(MPI_Win_unlock(S.me, S.seqwin));
    }
    // Nobody may touch a peer's window before the peer has zeroed it.
    COLLC_MPI_CHECK(MPI_Barrier(S.comm));
    allocated_ = true;
  }

  /// Collective: close epochs and free all windows (also done by the destructor).
  void release() {
    if (!allocated_) return;
    auto& S = detail::st();
    for (auto& up : wins_) {
      Window& w = *up;
      COLLC_MPI_CHECK(MPI_Win_unlock_all(w.win));
      S.live.erase(std::remove(S.live.begin(), S.live.end(), &w), S.live.end());
      COLLC_MPI_CHECK(MPI_Win_free(&w.win));
      w.base = nullptr;
    }
    if (S.seqwin != MPI_WIN_NULL) COLLC_MPI_CHECK(MPI_Win_free(&S.seqwin));
    allocated_ = false;
  }

  /// Back to the state allocate() left: every window of this rank and every tile zeroed
  /// (library recovery, after every rank has stopped its protocol and flushed; the caller
  /// then synchronises before any peer touches a window again).
  void rezero() {
    if (!allocated_) return;
    for (auto& up : wins_) {
      std::memset(up->base, 0, size_t(up->count) * size_t(up->elem_size));
      COLLC_MPI_CHECK(MPI_Win_sync(up->win));
    }
    for (auto& b : scratch_) std::fill(b.begin(), b.end(), 0);
  }

  /// "shared" for shared-memory windows (3(e)); else "unified" if every window reports
  /// MPI_WIN_UNIFIED, "separate" if one does not.
  const char* model_name() const {
    if (!wins_.empty() && !wins_.front()->peer.empty()) return "shared";
    for (const auto& w : wins_)
      if (w->model != MPI_WIN_UNIFIED) return "separate";
    return "unified";
  }

  /// After a barrier that follows the last call: read every cell of this rank's signal
  /// window atomically; returns the number of nonzero cells and appends descriptions.
  long nonzero_cells(std::vector<std::string>* out) const {
    long n = 0;
    for (const auto& a : sigwin_->arrays) {
      if (!a.credit) continue;  // value cells keep their value
      for (MPI_Aint i = 0; i < a.cells; ++i) {
        int32_t v = detail::fetch_cell(*sigwin_, detail::st().me, a.base + i);
        if (v != 0) {
          ++n;
          if (out) out->push_back(a.name + "[" + std::to_string(long(i)) + "]=" + std::to_string(v));
        }
      }
    }
    return n;
  }

  const std::vector<std::unique_ptr<Window>>& windows() const { return wins_; }

 private:
  const Params& params_;
  Window* sigwin_ = nullptr;
  std::vector<std::unique_ptr<Window>> wins_;
  std::vector<std::vector<unsigned char>> scratch_;
  long calls_ = 1;
  bool allocated_ = false;
};

// ------------------------------------------------------------------------------------
// Output checking (used by the generated per-collective check functions)
// ------------------------------------------------------------------------------------

/// Collects mismatches of one rank; prints the first few to stderr.
class Checker {
 public:
  explicit Checker(int max_print = 5) : max_print_(max_print) {}
  /// Exact comparison (test payloads are integers, exact in f32 below 2^24).
  template <class T> bool eq(const char* what, int64_t index, T got, T want) {
    if (got == want) return true;
    report(what, index, double(got), double(want));
    return false;
  }
  /// Relative tolerance comparison.
  bool near(const char* what, int64_t index, double got, double want, double rtol) {
    double tol = rtol * std::max(1.0, want < 0 ? -want : want);
    double d = got - want;
    if (d <= tol && -d <= tol) return true;
    report(what, index, got, want);
    return false;
  }
  void fail(const char* what) {
    ++mismatches_;
    if (printed_++ < max_print_) {
      fprintf(stderr, "collc_mpi: rank=%d call=%d CHECK FAILED: %s\n", detail::st().me,
              detail::st().call, what);
    }
  }
  long mismatches() const { return mismatches_; }

 private:
  void report(const char* what, int64_t index, double got, double want) {
    ++mismatches_;
    if (printed_++ < max_print_) {
      fprintf(stderr, "collc_mpi: rank=%d call=%d MISMATCH %s[%lld]: got %.9g, want %.9g\n",
              detail::st().me, detail::st().call, what, (long long)index, got, want);
    }
  }
  int max_print_;
  int printed_ = 0;
  long mismatches_ = 0;
};

namespace oracle {
/// Stages this rank's inputs of call ctx.call (the table's inputs, the payload convention
/// above) with plain stores into its own windows; `wins[w]` is window w (WindowId order).
template <class T> inline void stage_window(const Ctx& ctx, Window& w, int64_t id) {
  T* v = w.local<T>();
  for (MPI_Aint i = 0; i < w.count; ++i) v[i] = input_value_as<T>(table().prod, id, ctx.me, ctx.call, i);
}

/// Calls f with a null pointer of window w's element type (its MPI datatype).
template <class F> inline void with_elem(const Window& w, F&& f) {
  if (w.type == MPI_DOUBLE) f(static_cast<double*>(nullptr));
  else if (w.type == MPI_INT32_T) f(static_cast<int32_t*>(nullptr));
  else if (w.type == MPI_INT64_T) f(static_cast<int64_t*>(nullptr));
  else f(static_cast<float*>(nullptr));
}

inline void stage(const Ctx& ctx, Window* const* wins, size_t nwins) {
  const RankCall* rc = table().get(ctx.call, ctx.me);
  if (rc == nullptr) return;
  for (int64_t w : rc->inputs) {
    if (size_t(w) >= nwins) continue;
    with_elem(*wins[w], [&](auto* tag) { stage_window<std::remove_pointer_t<decltype(tag)>>(ctx, *wins[w], w); });
  }
}

/// One output segment of window `w` against the fold of its sources, in element type T.
template <class T> inline void check_segment(const Ctx& ctx, const Segment& g, const Window& w, Checker& chk) {
  const Table& t = table();
  const T* got = w.local<T>();
  const char* name = t.wins[size_t(g.win)].c_str();
  for (int64_t e = g.lo; e < g.hi && e < int64_t(w.count); ++e) {
    T want = T(0);
    for (size_t q = 0; q < g.src.size(); ++q) {
      const Source& x = g.src[q];
      const T v = input_value_as<T>(t.prod, x.win, x.rank, ctx.call, e + x.offset);
      if (q == 0 || g.combine == 0) want = v;
      else if (g.combine == 1) want = reduce_add(want, v);
      else if (g.combine == 2) want = reduce_max(want, v);
      else if (g.combine == 3) want = reduce_min(want, v);
      else want = reduce_mul(want, v);
    }
    chk.eq(name, e, got[e], want);
  }
}

/// Checks this rank's outputs of call ctx.call against the table. `sig_base[s]` is signal
/// s's first cell (of this call's instance) in `sigwin`.
inline void check(const Ctx& ctx, Window* const* wins, size_t nwins, const Window& sigwin, const MPI_Aint* sig_base,
                  size_t nsigs, Checker& chk) {
  const Table& t = table();
  const RankCall* rc = t.get(ctx.call, ctx.me);
  if (rc == nullptr) return;
  for (const Segment& g : rc->segs) {
    if (g.combine < 0 || size_t(g.win) >= nwins) continue;
    const Window& w = *wins[g.win];
    with_elem(w, [&](auto* tag) { check_segment<std::remove_pointer_t<decltype(tag)>>(ctx, g, w, chk); });
  }
  for (const CellWant& c : rc->cells) {
    if (size_t(c.sig) >= nsigs) continue;
    const int32_t got = read_cell(sigwin, ctx.me, sig_base[c.sig] + MPI_Aint(c.index));
    chk.eq(t.sigs[size_t(c.sig)].c_str(), c.index, int64_t(got), c.value);
  }
}

/// Rank 0 reads `path`, every rank gets its text (MPI_Bcast) and parses it. False on a
/// missing or malformed file.
inline bool load(const char* path) {
  std::string text;
  long ok = 1;
  if (rank() == 0) {
    FILE* f = fopen(path, "rb");
    if (f == nullptr) {
      ok = 0;
    } else {
      char buf[65536];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
      fclose(f);
    }
  }
  long len = long(text.size());
  COLLC_MPI_CHECK(MPI_Bcast(&ok, 1, MPI_LONG, 0, MPI_COMM_WORLD));
  if (!ok) return false;
  COLLC_MPI_CHECK(MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD));
  text.resize(size_t(len));
  if (len > 0) COLLC_MPI_CHECK(MPI_Bcast(&text[0], int(len), MPI_CHAR, 0, MPI_COMM_WORLD));
  return parse(text, &table()) && table().np == size();
}
}  // namespace oracle

}  // namespace collc_mpi

#endif  // COLLC_MPI_HPP
