// collc_mpi_lib.hpp - the communicator behind `collc emit --target mpi --lib NAME`.
//
// A generated MPI library holds one or more verified programs (one per .coll file, each in
// its own namespace, built without main()) and this communicator:
//
//   * attach(): the runtime (collc_mpi.hpp, process-global state) is pointed at a duplicate
//     of the caller's MPI communicator and put in library mode (State::throw_on_fail): a
//     wait timeout, a contract violation or an MPI error throws collc_mpi::Failure instead of
//     aborting the job, and the call returns an error code. One collc communicator per
//     process at a time (the runtime's state is global).
//   * Windows: each collective's Session (its signal window and data windows, MPI_Win_allocate,
//     zeroed once, one lock_all epoch) is owned by the communicator and reused by every call,
//     as verified. A call stages the caller's input into its window copy before the kernel
//     (the first notify's MPI_Win_sync publishes it) and copies the output back after it.
//   * Call records: one extra window holds one int64 per process, (call index + 1) << 16 |
//     collective id + 1, written (MPI_Accumulate REPLACE to self) at every call's entry. When a
//     wait times out, the failing process reads every peer's record (MPI_Fetch_and_op NO_OP):
//     a peer that entered the same call index with another collective makes the error
//     EMISMATCH (with both names), otherwise ETIMEOUT names where each peer is.
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

inline const char* status_name(int s) {
  switch (s) {
    case kOk: return "ok";
    case kEInval: return "invalid argument";
    case kEDomain: return "outside the verified domain";
    case kESize: return "buffer too small";
    case kEMismatch: return "ranks called different collectives";
    case kETimeout: return "wait timeout";
    case kEKernel: return "kernel runtime check failed";
    case kEBroken: return "communicator failed earlier";
    case kEBusy: return "a collc communicator already exists in this process";
    case kESystem: return "system or MPI error";
    case kEResidue: return "signal residue";
  }
  return "unknown status";
}

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

inline bool& attached() {
  static bool a = false;
  return a;
}

class Comm {
 public:
  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // Attaches the runtime to a duplicate of `comm` (collective over `comm`).
  int attach(MPI_Comm comm, int64_t wait_timeout_ms, std::vector<std::string> names) {
    if (attached()) return fail(kEBusy, "a collc communicator already exists in this process (free it first)");
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
    attached() = true;
    names_ = std::move(names);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_size", "true");
    if (MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), info, comm_, &record_base_, &records_) != MPI_SUCCESS) {
      MPI_Info_free(&info);
      detach();
      return fail(kESystem, "cannot allocate the call-record window");
    }
    MPI_Info_free(&info);
    MPI_Win_set_errhandler(records_, MPI_ERRORS_RETURN);
    *static_cast<int64_t*>(record_base_) = 0;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, records_);
    MPI_Win_sync(records_);
    MPI_Barrier(comm_);
    return kOk;
  }

  // Releases everything attach() set up (collective).
  void detach() {
    if (records_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(records_);
      MPI_Win_free(&records_);
    }
    auto& S = detail::st();
    S.throw_on_fail = false;
    S.comm = MPI_COMM_WORLD;
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    attached() = false;
  }

  MPI_Comm comm() const { return comm_; }
  int me() const { return detail::st().me; }
  int np() const { return detail::st().np; }
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

  // One call of collective `c`: record, stage, kernel, collect.
  int call(int c, const std::function<void()>& stage, const std::function<void(const Ctx&)>& kernel,
           const std::function<void()>& collect) {
    if (broken_) return refuse_broken();
    const int64_t k = calls_++;
    const int64_t entry = ((k + 1) << 16) | int64_t(c + 1);
    Ctx ctx;
    ctx.me = me();
    ctx.np = np();
    ctx.call = int(k);
    ctx.comm = comm_;
    set_call(int(k));
    try {
      COLLC_MPI_CHECK(MPI_Accumulate(&entry, 1, MPI_INT64_T, ctx.me, 0, 1, MPI_INT64_T, MPI_REPLACE, records_));
      COLLC_MPI_CHECK(MPI_Win_flush(ctx.me, records_));
      stage();
      kernel(ctx);
      collect();
    } catch (const Failure& f) {
      int code = f.code == 3 ? kETimeout : f.code == 2 ? kEDomain : kEKernel;
      std::string msg = f.what;
      if (f.code == 3) {
        std::string peers;
        const int other = mismatch(k, c, &peers);
        if (other >= 0) code = kEMismatch;
        msg += "; " + peers;
      }
      mark(msg);
      last_error() = msg;
      return code;
    }
    return kOk;
  }

  // Reads every peer's call record; returns a peer that entered call k with another
  // collective (or -1) and describes where every peer is.
  int mismatch(int64_t k, int c, std::string* text) {
    int found = -1;
    for (int q = 0; q < np(); ++q) {
      if (q == me()) continue;
      int64_t dummy = 0, e = 0;
      if (MPI_Fetch_and_op(&dummy, &e, MPI_INT64_T, q, 0, MPI_NO_OP, records_) != MPI_SUCCESS ||
          MPI_Win_flush(q, records_) != MPI_SUCCESS) {
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
  void mark(const std::string& why) {
    if (!broken_) first_failure_ = why;
    broken_ = true;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win records_ = MPI_WIN_NULL;
  void* record_base_ = nullptr;
  std::vector<std::string> names_;
  int64_t calls_ = 0;
  bool broken_ = false;
  std::string first_failure_;
};

}  // namespace lib
}  // namespace collc_mpi

#endif  // COLLC_MPI_LIB_HPP
