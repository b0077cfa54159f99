// collc_mpi_lib.hpp - the communicator behind `collc emit --target mpi --lib NAME`.
//
// A generated MPI library holds one or more verified programs (one per .coll file, each in
// its own namespace, built without main()) and this communicator:
//
//   * attach(): the communicator's own runtime state (collc_mpi.hpp's State, made current by
//     Comm::Use for every API function that touches the runtime) is pointed at a duplicate
//     of the caller's MPI communicator and put in library mode (State::throw_on_fail): a
//     wait timeout, a contract violation or an MPI error throws collc_mpi::Failure instead of
//     aborting the job, and the call returns an error code. A process may hold several
//     communicators (e.g. one on MPI_COMM_WORLD and one on a split), each with its own
//     duplicated MPI_Comm, state and windows, and call them alternately from one thread.
//   * Windows: each collective's Session (its signal window and data windows, MPI_Win_allocate,
//     zeroed once, one lock_all epoch) is owned by the communicator and reused by every call,
//     as verified; a `per call` window or value signal is k instances used in rotation (the
//     collective's call c uses instance c % k), packaged only when verified at that distance.
//     A call stages the caller's input into its window copy before the kernel (the first
//     notify's MPI_Win_sync publishes it) and copies the output back after it; an input that
//     only its own rank reads, locally (allgather, all_to_all(_v) pushing from it), is read
//     in place from the caller's buffer instead (ReadInPlace), and an output that only its
//     own rank reaches, locally (an allgather getting into it, an allreduce whose peers put
//     into a scratch window), is written in place into the caller's buffer (WriteInPlace).
//   * Counts per call: a collective whose data window is f32[n] for a parameter n that sizes
//     nothing else (Coll::size_param on the Rust side) has its windows sized once for the
//     configured n, the largest count; each call runs the protocol at its own count (the
//     generated resize function sets n and re-checks the domain and every `require`). A
//     call whose count differs from that collective's previous call first waits until every
//     peer has entered it (await_entered: every earlier call has ended everywhere, every
//     credit is back at zero), so the protocol starts from the state it was verified from;
//     calls at an unchanged count run back to back, as verified.
//   * Call records: one extra window holds np int64 per process; slot q holds process q's
//     latest record (call index, collective, count, a failed flag; see Record), which q
//     writes into every process's window (MPI_Accumulate REPLACE, flushed) at each call's
//     entry, before its protocol. The call then reads its own slots: a peer that entered the
//     same call index with another collective or another count makes it return EMISMATCH at
//     once, a peer whose communicator failed (e.g. a bad argument there) EBROKEN; and every
//     wait of the protocol that has not passed re-reads them once per millisecond
//     (State::poll_hook), so a mismatch or a failure published later is found within about a
//     millisecond, not after the wait timeout. Both ranks of a mismatch find it (each
//     publishes before it reads).
//   * Recovery: after a failure (a bad argument, a mismatch, a timeout, on this rank or a
//     peer) the next call on each rank first recovers the communicator (recover()): it waits,
//     up to the wait timeout, in a nonblocking barrier until every rank has stopped its
//     protocol and come to its own recovery (a rank still blocked in a wait finds the failure
//     in the records within about a millisecond, returns EBROKEN, and recovers at its next
//     call); every rank's RMA is complete (flushed); every rank zeroes its windows, tiles and
//     call records and restarts its call indices; a second barrier; the communicator is then
//     in the state creation left, the state the verifier starts from, and the call runs. (A
//     call that finds a failed peer at its entry returns EBROKEN too, without waiting: the
//     failed process may be in another collective before its next call.) If some rank does
//     not come within the wait timeout (it died, freed the communicator, or waits on this rank
//     elsewhere), the recovery fails and the communicator refuses every later call
//     (EBROKEN); free it.

#ifndef COLLC_MPI_LIB_HPP
#define COLLC_MPI_LIB_HPP

#include "collc_mpi.hpp"

#include <functional>

namespace collc_mpi {
namespace lib {

// Status codes (the generated header repeats them as NAME_OK, NAME_EINVAL, ...).
enum Status : int {
  kOk = 0,
  kEInval = 1,
  kEDomain = 2,
  kESize = 3,
  kEMismatch = 4,
  kETimeout = 5,
  kEKernel = 6,
  kEBroken = 7,
  kEBusy = 8,
  kESystem = 9,
  kEResidue = 10,
};

inline std::string& last_error() {
  thread_local std::string s;
  return s;
}

__attribute__((format(printf, 2, 3))) inline int fail(int code, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  last_error() = buf;
  return code;
}

// A call's buffer used in place: while it lives, window `w`'s local copy (Window::base, what
// the kernel's local loads, stores, copies, gets and puts go through) is the caller's buffer
// `user` instead of the window's own memory, and the call skips that buffer's staging copy.
// A get, a put or a reduce that reaches the window through the runtime (RMA or a peer's
// shared-memory pointer, even on this rank) goes to the window's own memory, which then holds
// nothing of the call; so the generator uses it only for a window no statement reaches that
// way (Coll::read_in_place / Coll::write_in_place on the Rust side). The window is restored
// on every way out of the call, a failure included, so a recovery zeroes the window's own
// memory. `on` false: the window is left alone and the call stages the buffer.
class InPlace {
 public:
  InPlace(Window* w, void* user, bool on) : w_(on ? w : nullptr) {
    if (w_ == nullptr) return;
    saved_ = w_->base;
    w_->base = user;
  }
  ~InPlace() {
    if (w_ != nullptr) w_->base = saved_;
  }
  InPlace(const InPlace&) = delete;
  InPlace& operator=(const InPlace&) = delete;
  // Whether the call uses the buffer in place (else it stages it).
  bool active() const { return w_ != nullptr; }

 private:
  Window* w_;
  void* saved_ = nullptr;
};

// An input read in place: a window the protocol never writes and only its own rank reads,
// locally (Coll::read_in_place); the caller's buffer is only read (the const_cast).
// COLLC_MPI_READ_IN_PLACE=0 turns it off: the call stages the input.
class ReadInPlace : public InPlace {
 public:
  ReadInPlace(Window* w, const void* user) : InPlace(w, const_cast<void*>(user), detail::st().read_in_place) {}
};

// An output written in place: a window only its own rank reaches, locally, by loads and stores
// (Coll::write_in_place); the kernel leaves the result in the caller's buffer and the call
// copies nothing out (an allreduce's or broadcast's data window: nothing in either). `ok`
// false (the output overlaps an input read in place) or COLLC_MPI_WRITE_IN_PLACE=0: the call
// copies the output out of the window as before.
class WriteInPlace : public InPlace {
 public:
  WriteInPlace(Window* w, void* user, bool ok = true) : InPlace(w, user, ok && detail::st().write_in_place) {}
};

// Whether the byte ranges [a, a + an) and [b, b + bn) are disjoint.
inline bool apart(const void* a, size_t an, const void* b, size_t bn) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x + an <= y || y + bn <= x;
}

}  // namespace lib
}  // namespace collc_mpi

// Profile (benches/lib/kinds_profile.cpp): built with -DCOLLC_MPI_PROFILE, the library adds
// the time and bytes of its staging copies and the time of each call's protocol into one
// table per process, which `collc_mpi_profile()` returns (exported with default visibility
// whatever the library's own; a program finds it with dlsym and reads it around a block of
// calls). Without the define nothing of it is compiled: the copies are plain memcpys, the
// library exports nothing more and its ABI is unchanged. Sums since the process started,
// over every communicator; nanoseconds and bytes.
#ifdef COLLC_MPI_PROFILE
extern "C" {
struct collc_mpi_profile_table {
  int64_t calls;          // calls that ran their protocol (past the call-record checks)
  int64_t kernel_ns;      // in the protocol (the kernel), its waits included
  int64_t wait_ns;        // of it, in the runtime's wait() (spin, sched_yield, nanosleep)
  int64_t moved_bytes;    // of it, bytes the protocol's gets and puts moved
  int64_t copy_in_ns;     // staging copies, caller's buffer -> window, before the kernel
  int64_t copy_in_bytes;
  int64_t copies_in;
  int64_t copy_out_ns;    // staging copies, window -> caller's buffer, after the kernel
  int64_t copy_out_bytes;
  int64_t copies_out;
};
__attribute__((visibility("default"), used)) inline collc_mpi_profile_table* collc_mpi_profile(void) {
  static collc_mpi_profile_table t;
  return &t;
}
}
#endif

namespace collc_mpi {
namespace lib {

// A staging copy of the glue (`collc_lib_mpi_copy_in`: into a window before the kernel;
// `_copy_out` / `_copy_row_out`: out of it after): a memcpy, timed into the profile table
// when COLLC_MPI_PROFILE is defined.
inline void stage_copy(bool in, void* dst, const void* src, size_t bytes) {
#ifdef COLLC_MPI_PROFILE
  const uint64_t t0 = detail::now_ns();
  std::memcpy(dst, src, bytes);
  const auto ns = int64_t(detail::now_ns() - t0);
  collc_mpi_profile_table& t = *collc_mpi_profile();
  (in ? t.copy_in_ns : t.copy_out_ns) += ns;
  (in ? t.copy_in_bytes : t.copy_out_bytes) += int64_t(bytes);
  (in ? t.copies_in : t.copies_out) += 1;
#else
  (void)in;
  std::memcpy(dst, src, bytes);
#endif
}

// Runs a call's kernel; with COLLC_MPI_PROFILE, adds its time, the time of its waits and the
// bytes of its gets and puts (the runtime's Stats of the current state) into the table.
template <class F>
inline void profiled_kernel(const F& kernel) {
#ifdef COLLC_MPI_PROFILE
  const Stats s0 = detail::st().stats;
  const uint64_t t0 = detail::now_ns();
  kernel();
  const auto ns = int64_t(detail::now_ns() - t0);
  const Stats& s = detail::st().stats;
  collc_mpi_profile_table& t = *collc_mpi_profile();
  t.calls += 1;
  t.kernel_ns += ns;
  t.wait_ns += int64_t(s.wait_ns - s0.wait_ns);
  t.moved_bytes += int64_t((s.bytes_get - s0.bytes_get) + (s.bytes_put - s0.bytes_put));
#else
  kernel();
#endif
}

class Comm {
 public:
  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // Makes this communicator's runtime state current for a scope (every API function that
  // touches the runtime opens one; calls of one process come from one thread at a time).
  class Use {
   public:
    explicit Use(Comm& c) : saved_(detail::current_state()) { detail::current_state() = &c.state_; }
    ~Use() { detail::current_state() = saved_; }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    detail::State* saved_;
  };

  // Attaches this communicator's runtime state to a duplicate of `comm` (collective over
  // `comm`; inside a Use of this communicator).
  int attach(MPI_Comm comm, int64_t wait_timeout_ms, std::vector<std::string> names) {
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) return fail(kEInval, "MPI is not initialised");
    if (comm == MPI_COMM_NULL) return fail(kEInval, "MPI_COMM_NULL");
    if (MPI_Comm_dup(comm, &comm_) != MPI_SUCCESS) return fail(kESystem, "MPI_Comm_dup failed");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    auto& S = detail::st();
    S.throw_on_fail = true;  // before attach: a bad COLLC_MPI_* variable is a status, not a message
    S.shm_default = true;    // shared-memory windows on one node (collc_mpi.hpp 3(e))
    try {
      collc_mpi::attach(comm_);
    } catch (const Failure& f) {
      S.throw_on_fail = false;
      MPI_Comm_free(&comm_);
      return fail(kEInval, "%s", f.what.c_str());
    }
    if (wait_timeout_ms > 0) S.timeout_ms = long(wait_timeout_ms);
    S.inited = true;
    names_ = std::move(names);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_size", "true");
    const MPI_Aint bytes = MPI_Aint(sizeof(int64_t)) * np();
    // Shared-memory mode (collc_mpi.hpp 3(e)): the records too are read and written directly.
    int rc = S.shm ? MPI_Win_allocate_shared(bytes, sizeof(int64_t), info, comm_, &record_base_, &records_)
                   : MPI_Win_allocate(bytes, sizeof(int64_t), info, comm_, &record_base_, &records_);
    MPI_Info_free(&info);
    if (detail::alloc_fault()) rc = MPI_ERR_NO_MEM;
    // Shared-memory mode: every process's record window, each checked to hold np records (a
    // failed query is a failed allocation, agreed below like one).
    std::string why = "cannot allocate the call-record window on this rank";
    record_peer_.clear();
    if (rc == MPI_SUCCESS && S.shm) {
      for (char* q : detail::shared_copies(records_, np(), bytes, "call records", &why))
        record_peer_.push_back(reinterpret_cast<int64_t*>(q));
      if (record_peer_.empty()) rc = MPI_ERR_OTHER;
    }
    // Every rank learns whether the window exists everywhere (a failure on one rank is an
    // error on every rank, not a hang in the barrier below).
    int mine = rc == MPI_SUCCESS ? 1 : 0, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm_) != MPI_SUCCESS) all = 0;
    if (all != 1) {
      records_ = MPI_WIN_NULL;  // not freed: MPI_Win_free is collective and a rank without it would not join
      record_peer_.clear();
      detach();
      return fail(kESystem, "%s", rc != MPI_SUCCESS ? why.c_str() : "cannot allocate the call-record window: it failed on another rank");
    }
    MPI_Win_set_errhandler(records_, MPI_ERRORS_RETURN);
    for (int q = 0; q < np(); ++q) static_cast<int64_t*>(record_base_)[q] = 0;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, records_);
    MPI_Win_sync(records_);
    MPI_Barrier(comm_);
    return kOk;
  }

  // Releases everything attach() set up (collective; inside a Use of this communicator).
  void detach() {
    if (records_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(records_);
      MPI_Win_free(&records_);
    }
    auto& S = detail::st();
    S.throw_on_fail = false;
    S.comm = MPI_COMM_WORLD;
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  MPI_Comm comm() const { return comm_; }
  int me() const { return state_.me; }
  int np() const { return state_.np; }
  bool broken() const { return broken_; }

  bool dead() const { return dead_; }

  int refuse_broken() {
    return fail(kEBroken, "the communicator failed earlier and could not be recovered (free it): %s",
                first_failure_.c_str());
  }

  // Recovery (see the header comment): every rank comes here once per failure, from its next
  // call. `rezero` zeroes this rank's windows and tiles and restarts the glue's call
  // indices. Inside a Use of this communicator.
  int recover(const std::function<void()>& rezero) {
    if (dead_) return refuse_broken();
    if (!broken_) return kOk;
    try {
      for (Window* w : detail::st().live) COLLC_MPI_CHECK(MPI_Win_flush_all(w->win));
      COLLC_MPI_CHECK(MPI_Win_flush_all(records_));
      if (!await_all()) return give_up("not every rank stopped and came to the recovery within the wait timeout");
      rezero();
      for (int q = 0; q < np(); ++q) static_cast<int64_t*>(record_base_)[q] = 0;
      COLLC_MPI_CHECK(MPI_Win_sync(records_));
      if (!await_all()) return give_up("not every rank finished zeroing within the wait timeout");
    } catch (const Failure& f) {
      return give_up(f.what);
    }
    calls_ = 0;
    broken_ = false;
    first_failure_.clear();
    return kOk;
  }

  // After a barrier: whether a peer's record says its communicator failed (or disagrees
  // with this rank's last call).
  bool peer_failed() {
    try {
      check_records();
    } catch (const Failure&) {
      return true;
    }
    return false;
  }

  // A nonblocking barrier over the communicator, polled until it completes or the wait
  // timeout passes (then the request stays pending: the communicator is not used again).
  bool await_all() {
    MPI_Request req = MPI_REQUEST_NULL;
    if (MPI_Ibarrier(comm_, &req) != MPI_SUCCESS) return false;
    const auto& S = detail::st();
    const uint64_t deadline = detail::now_ns() + uint64_t(S.timeout_ms) * 1000000ull;
    for (long polls = 0;; ++polls) {
      int done = 0;
      if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
      if (done) return true;
      if (detail::now_ns() >= deadline) return false;
      if (polls < 100) {
        sched_yield();
      } else {
        timespec ts{0, 50000};
        nanosleep(&ts, nullptr);
      }
    }
  }

  // A bad argument: this process's communicator is unusable from now on, and its peers
  // learn it promptly (the broken flag in its call record, read by their call entry and by
  // their pending waits about once per millisecond): they return EBROKEN instead of
  // waiting for the timeout.
  __attribute__((format(printf, 3, 4))) int poison(int code, const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mark(buf, false);
    last_error() = buf;
    return code;
  }

  // One call of collective `c`, its own call `kc` (the protocol's call index), with
  // element count `count` (0 for a collective whose count is fixed at creation): publish
  // the call record to every peer, check theirs, stage, kernel (whose waits keep checking
  // the records), collect. `fresh`: the protocol runs at another count than in this
  // collective's previous call, so the call first waits until every peer has entered it
  // (i.e. left every earlier call: every credit is back at zero and nothing of the
  // previous count is in flight) - the protocol then starts from the state it was
  // verified from. Inside a Use of this communicator.
  int call(int c, int64_t kc, int64_t count, bool fresh, const std::function<void()>& stage,
           const std::function<void(const Ctx&)>& kernel, const std::function<void()>& collect) {
    if (broken_) return refuse_broken();
    const int64_t k = calls_++;
    Ctx ctx;
    ctx.me = me();
    ctx.np = np();
    ctx.call = int(kc);
    ctx.comm = comm_;
    set_call(int(kc));
    auto& S = detail::st();
    cur_k_ = k;
    cur_c_ = c;
    cur_count_ = count;
    struct Unhook {
      detail::State& s;
      ~Unhook() {
        s.poll_hook = nullptr;
        s.poll_ctx = nullptr;
      }
    } unhook{S};
    try {
      // The record goes into slot `me` of every process's record window (self included),
      // flushed before the check and before the protocol's first notify.
      publish(encode(k, c, count, true, false));
      check_records();
      if (fresh) await_entered(k);
      S.poll_hook = &Comm::poll;
      S.poll_ctx = this;
      stage();
      profiled_kernel([&] { kernel(ctx); });
      collect();
    } catch (const Failure& f) {
      int code = f.code == 3                ? kETimeout
                 : f.code == 2              ? kEDomain
                 : f.code == kFailMismatch  ? kEMismatch
                 : f.code == kFailBroken    ? kEBroken
                                            : kEKernel;
      std::string msg = f.what;
      if (f.code == 3) {
        std::string peers;
        if (mismatch(k, c, count, &peers) >= 0) {
          code = kEMismatch;
          msg = peers + "(" + msg + ")";
        } else {
          msg += "; " + peers;
        }
      }
      mark(msg, true);
      last_error() = msg;
      return code;
    }
    return kOk;
  }

  // Reads the call records peers published into this process's window; returns a peer
  // that entered call k with another collective or another count (or -1) and describes
  // where every peer is.
  int mismatch(int64_t k, int c, int64_t count, std::string* text) {
    int found = -1;
    for (int q = 0; q < np(); ++q) {
      if (q == me()) continue;
      Record r;
      if (!read_record(q, &r)) {
        *text += "rank " + std::to_string(q) + ": record unreadable; ";
        continue;
      }
      const std::string qname = r.c >= 0 && size_t(r.c) < names_.size() ? names_[size_t(r.c)] : "nothing";
      if (r.none) {
        *text += "rank " + std::to_string(q) + " has made no call; ";
      } else {
        *text += "rank " + std::to_string(q) + " last entered call " + std::to_string(call_of(r.k, k)) + " (" + qname +
                 (r.count != 0 ? ", count " + std::to_string(r.count) : std::string()) + ")" +
                 (r.broken ? ", then failed" : "") + "; ";
      }
      if (!r.none && r.entered && same_call(r.k, k) && (r.c != c || r.count != (count & kCountMask)) && found < 0)
        found = q;
    }
    if (found >= 0) {
      *text = "rank " + std::to_string(me()) + " called " + names_[size_t(c)] +
              (count != 0 ? " with count " + std::to_string(count) : std::string()) + " as call " + std::to_string(k) +
              " but rank " + std::to_string(found) +
              " called another collective or count (every rank must call the same collectives with the same counts in "
              "the same order); " +
              *text;
    }
    return found;
  }

 private:
  // Failure codes of a detected mismatch and of a peer that failed (the runtime's own
  // codes are 2..4).
  static constexpr int kFailMismatch = 100;
  static constexpr int kFailBroken = 101;

  // A call record (one int64; 0: no call yet): bits 40..63 (call index + 1) mod 2^24,
  // bits 32..39 collective id + 1, bit 31 "this communicator failed", bit 30 "entered the
  // call" (a record written when a bad argument refused the call before it began has it
  // clear: no mismatch is read from it), bits 0..29 the call's count mod 2^30 (0 for a
  // collective whose count is fixed). Call indices are compared modulo 2^24: ranks of one
  // communicator are never that many calls apart.
  static constexpr int64_t kCountMask = 0x3fffffff;
  static constexpr int64_t kCallMask = 0xffffff;
  struct Record {
    bool none = true, broken = false, entered = false;
    int64_t k = 0;  // call index mod 2^24
    int c = -1;
    int64_t count = 0;
  };
  static int64_t encode(int64_t k, int c, int64_t count, bool entered, bool broken) {
    return (((k + 1) & kCallMask) << 40) | (int64_t(c + 1) & 0xff) << 32 | (broken ? int64_t(1) << 31 : 0) |
           (entered ? int64_t(1) << 30 : 0) | (count & kCountMask);
  }
  static bool same_call(int64_t a, int64_t b) { return ((a - b) & kCallMask) == 0; }
  // The full call index of a record's k, taken as the one nearest `near`.
  static int64_t call_of(int64_t rk, int64_t near) {
    int64_t d = (rk - near) & kCallMask;
    if (d >= (kCallMask + 1) / 2) d -= kCallMask + 1;
    return near + d;
  }

  // Slot `q` of this process's record window (process q's latest record).
  bool load_record(int q, int64_t* e) {
    if (!record_peer_.empty()) {
      *e = __atomic_load_n(static_cast<int64_t*>(record_base_) + q, __ATOMIC_ACQUIRE);
      return true;
    }
    int64_t dummy = 0;
    return MPI_Fetch_and_op(&dummy, e, MPI_INT64_T, me(), q, MPI_NO_OP, records_) == MPI_SUCCESS &&
           MPI_Win_flush_local(me(), records_) == MPI_SUCCESS;  // a read: done when *e holds it
  }

  // Writes `entry` into slot `me` of every process's record window; false if an MPI call failed.
  bool store_record(int64_t entry) {
    if (!record_peer_.empty()) {
      for (int64_t* base : record_peer_) __atomic_store_n(base + me(), entry, __ATOMIC_RELEASE);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      return true;
    }
    bool ok = true;
    for (int q = 0; q < np(); ++q)
      ok = MPI_Accumulate(&entry, 1, MPI_INT64_T, q, me(), 1, MPI_INT64_T, MPI_REPLACE, records_) == MPI_SUCCESS && ok;
    return MPI_Win_flush_all(records_) == MPI_SUCCESS && ok;
  }

  bool read_record(int q, Record* r) {
    int64_t e = 0;
    if (!load_record(q, &e)) return false;
    r->none = e == 0;
    r->k = (((e >> 40) & kCallMask) - 1) & kCallMask;
    r->c = int((e >> 32) & 0xff) - 1;
    r->broken = ((e >> 31) & 1) != 0;
    r->entered = ((e >> 30) & 1) != 0;
    r->count = e & kCountMask;
    return true;
  }

  // Writes this process's record into slot `me` of every process's record window.
  void publish(int64_t entry) {
    if (!store_record(entry)) detail::die(4, "MPI_Accumulate / MPI_Win_flush_all of the call record failed");
  }

  // Throws if a peer entered the current call with another collective or count (first:
  // the peer of a mismatch marks itself failed when it finds it), or if a peer failed.
  void check_records() {
    std::string text;
    if (mismatch(cur_k_, cur_c_, cur_count_, &text) >= 0) throw Failure{kFailMismatch, text};
    for (int q = 0; q < np(); ++q) {
      Record r;
      if (q == me() || !read_record(q, &r) || !r.broken) continue;
      throw Failure{kFailBroken, "rank " + std::to_string(q) +
                                     "'s communicator failed (a bad argument or an error there); the next call "
                                     "recovers the communicator"};
    }
  }

  // Waits (with the wait timeout) until every peer has entered call k.
  void await_entered(int64_t k) {
    const auto& S = detail::st();
    const uint64_t t0 = detail::now_ns(), deadline = t0 + uint64_t(S.timeout_ms) * 1000000ull;
    for (long polls = 0;; ++polls) {
      bool all = true;
      for (int q = 0; q < np() && all; ++q) {
        Record r;
        if (q != me() && (!read_record(q, &r) || r.none || call_of(r.k, k) < k)) all = false;
      }
      if (all) return;
      check_records();
      if (detail::now_ns() >= deadline)
        throw Failure{3, "a peer did not enter call " + std::to_string(k) + " within the wait timeout"};
      if (polls < 100) {
        sched_yield();
      } else {
        timespec ts{0, 50000};
        nanosleep(&ts, nullptr);
      }
    }
  }

  static void poll(void* self) { static_cast<Comm*>(self)->check_records(); }

  int give_up(const std::string& why) {
    dead_ = true;
    broken_ = true;
    first_failure_ = "recovery failed: " + why + " (after: " + first_failure_ + ")";
    last_error() = first_failure_;
    return kEBroken;
  }

  // `entered`: the failure happened inside the current call (its record stays a record of
  // that call); else a bad argument refused the next call before it began.
  void mark(const std::string& why, bool entered) {
    if (!broken_) {
      first_failure_ = why;
      // Best effort: peers read the flag at their next call entry or pending wait.
      if (records_ != MPI_WIN_NULL) {
        const int64_t entry = entered ? encode(cur_k_, cur_c_, cur_count_, true, true) : encode(calls_, -1, 0, false, true);
        store_record(entry);
      }
    }
    broken_ = true;
  }

  detail::State state_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win records_ = MPI_WIN_NULL;
  void* record_base_ = nullptr;
  std::vector<int64_t*> record_peer_;  // shared-memory mode: every process's record window
  std::vector<std::string> names_;
  int64_t calls_ = 0;
  int64_t cur_k_ = 0;
  int cur_c_ = 0;
  int64_t cur_count_ = 0;
  bool broken_ = false;
  bool dead_ = false;  // a recovery failed: the communicator is not used again
  std::string first_failure_;
};

}  // namespace lib
}  // namespace collc_mpi

#endif  // COLLC_MPI_LIB_HPP
