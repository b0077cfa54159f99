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
//     notify's MPI_Win_sync publishes it) and copies the output back after it.
//   * Call records: one extra window holds np int64 per process; slot q holds process q's
//     latest record, (call index + 1) << 16 | collective id + 1, which q writes into every
//     process's window (MPI_Accumulate REPLACE, flushed) at each call's entry, before its
//     protocol. The call then reads its own slots: a peer that entered the same call index
//     with another collective makes it return EMISMATCH at once; and every wait of the
//     protocol that has not passed re-reads them once per millisecond (State::poll_hook),
//     so a mismatch published later is found within about a millisecond, not after the wait
//     timeout. Both ranks of a mismatch find it (each publishes before it reads).
//   * After a failure the communicator refuses every call (EBROKEN); free it.

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
    collc_mpi::attach(comm_);
    auto& S = detail::st();
    S.throw_on_fail = true;
    if (wait_timeout_ms > 0) S.timeout_ms = long(wait_timeout_ms);
    S.inited = true;
    names_ = std::move(names);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_size", "true");
    const MPI_Aint bytes = MPI_Aint(sizeof(int64_t)) * np();
    if (MPI_Win_allocate(bytes, sizeof(int64_t), info, comm_, &record_base_, &records_) != MPI_SUCCESS) {
      MPI_Info_free(&info);
      detach();
      return fail(kESystem, "cannot allocate the call-record window");
    }
    MPI_Info_free(&info);
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

  int refuse_broken() {
    return fail(kEBroken, "the communicator failed earlier and cannot be used (free it): %s", first_failure_.c_str());
  }

  // A bad argument: this process's communicator is unusable from now on.
  __attribute__((format(printf, 3, 4))) int poison(int code, const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mark(buf);
    last_error() = buf;
    return code;
  }

  // One call of collective `c`, its own call `kc` (the protocol's call index): publish the
  // call record to every peer, check theirs, stage, kernel (whose waits keep checking the
  // records), collect. Inside a Use of this communicator.
  int call(int c, int64_t kc, const std::function<void()>& stage, const std::function<void(const Ctx&)>& kernel,
           const std::function<void()>& collect) {
    if (broken_) return refuse_broken();
    const int64_t k = calls_++;
    const int64_t entry = ((k + 1) << 16) | int64_t(c + 1);
    Ctx ctx;
    ctx.me = me();
    ctx.np = np();
    ctx.call = int(kc);
    ctx.comm = comm_;
    set_call(int(kc));
    auto& S = detail::st();
    cur_k_ = k;
    cur_c_ = c;
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
      for (int q = 0; q < np(); ++q)
        COLLC_MPI_CHECK(MPI_Accumulate(&entry, 1, MPI_INT64_T, q, me(), 1, MPI_INT64_T, MPI_REPLACE, records_));
      COLLC_MPI_CHECK(MPI_Win_flush_all(records_));
      check_records();
      S.poll_hook = &Comm::poll;
      S.poll_ctx = this;
      stage();
      kernel(ctx);
      collect();
    } catch (const Failure& f) {
      int code = f.code == 3 ? kETimeout : f.code == 2 ? kEDomain : f.code == kFailMismatch ? kEMismatch : kEKernel;
      std::string msg = f.what;
      if (f.code == 3) {
        std::string peers;
        if (mismatch(k, c, &peers) >= 0) {
          code = kEMismatch;
          msg = peers + "(" + msg + ")";
        } else {
          msg += "; " + peers;
        }
      }
      mark(msg);
      last_error() = msg;
      return code;
    }
    return kOk;
  }

  // Reads the call records peers published into this process's window; returns a peer
  // that entered call k with another collective (or -1) and describes where every peer is.
  int mismatch(int64_t k, int c, std::string* text) {
    int found = -1;
    for (int q = 0; q < np(); ++q) {
      if (q == me()) continue;
      int64_t dummy = 0, e = 0;
      if (MPI_Fetch_and_op(&dummy, &e, MPI_INT64_T, me(), q, MPI_NO_OP, records_) != MPI_SUCCESS ||
          MPI_Win_flush(me(), records_) != MPI_SUCCESS) {
        *text += "rank " + std::to_string(q) + ": record unreadable; ";
        continue;
      }
      const int64_t qk = (e >> 16) - 1;
      const int qc = int(e & 0xffff) - 1;
      const std::string qname = qc >= 0 && size_t(qc) < names_.size() ? names_[size_t(qc)] : "nothing";
      if (qk < 0) {
        *text += "rank " + std::to_string(q) + " has made no call; ";
      } else {
        *text += "rank " + std::to_string(q) + " last entered call " + std::to_string(qk) + " (" + qname + "); ";
      }
      if (qk == k && qc != c && found < 0) found = q;
    }
    if (found >= 0) {
      *text = "rank " + std::to_string(me()) + " called " + names_[size_t(c)] + " as call " + std::to_string(k) +
              " but rank " + std::to_string(found) +
              " called another collective (every rank must call the same collectives in the same order); " + *text;
    }
    return found;
  }

 private:
  // Failure code of a detected mismatch (the runtime's own codes are 2..4).
  static constexpr int kFailMismatch = 100;

  // Throws if a peer's record says it entered the current call with another collective.
  void check_records() {
    std::string text;
    if (mismatch(cur_k_, cur_c_, &text) >= 0) throw Failure{kFailMismatch, text};
  }

  static void poll(void* self) { static_cast<Comm*>(self)->check_records(); }

  void mark(const std::string& why) {
    if (!broken_) first_failure_ = why;
    broken_ = true;
  }

  detail::State state_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win records_ = MPI_WIN_NULL;
  void* record_base_ = nullptr;
  std::vector<std::string> names_;
  int64_t calls_ = 0;
  int64_t cur_k_ = 0;
  int cur_c_ = 0;
  bool broken_ = false;
  std::string first_failure_;
};

}  // namespace lib
}  // namespace collc_mpi

#endif  // COLLC_MPI_LIB_HPP
