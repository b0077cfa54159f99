// collc_pmpi.hpp: the fixed half of libcollc_pmpi.so (`collc emit --target mpi --pmpi`):
// MPI's profiling interface answering MPI collectives with verified collc protocols.
//
// The generated half (collc_pmpi.cpp) defines the intercepted MPI_* functions: a call whose
// communicator, datatype, op, count and root fall in a packaged protocol's domain goes to
// that protocol's collc MPI library (one communicator of it per MPI communicator and root,
// created at the first such call, freed by a communicator delete attribute or at
// MPI_Finalize); every other call passes through to PMPI_* and is counted by reason.
// COLLC_PMPI_STATS=1 prints the counts (summed over the ranks of MPI_COMM_WORLD) on stderr
// of rank 0 at MPI_Finalize.
//
// Consistency: the decision to serve reads only arguments MPI requires to be the same on
// every rank of the call (count and datatype of a predefined type, op, root, the
// communicator), so every rank decides alike; MPI_Alltoallv's counts differ from rank to
// rank, so it first agrees on the largest with one PMPI_Allreduce. A rank passing a derived datatype whose type
// signature equals another rank's predefined one would decide differently: such calls are
// not supported (they pass through only if every rank's datatype is derived).
//
// Threads: under MPI_THREAD_MULTIPLE every call passes through (reason thread-multiple);
// below it the MPI standard lets only one thread call at a time.
//
// Re-entry: the collc libraries call MPI themselves (MPI_Comm_dup, MPI_Win_allocate,
// MPI_Allreduce, ...); those calls reach these wrappers and go straight to PMPI_*
// (uncounted).
#ifndef COLLC_PMPI_HPP
#define COLLC_PMPI_HPP

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <map>
#include <vector>

namespace collc_pmpi {

enum Coll { kBarrier, kBcast, kAllreduce, kReduceScatterBlock, kAllgather, kAlltoall, kAlltoallv, kNColl };
static const char* const kCollName[kNColl] = {"MPI_Barrier",   "MPI_Bcast",    "MPI_Allreduce", "MPI_Reduce_scatter_block",
                                              "MPI_Allgather", "MPI_Alltoall", "MPI_Alltoallv"};

enum Reason { kNoProtocol, kThreadMultiple, kInterComm, kInPlace, kDatatype, kOp, kCount, kCreate, kNReason };
static const char* const kReasonName[kNReason] = {
    "no-protocol",  // no packaged protocol implements this collective
    "thread-multiple",  // MPI_THREAD_MULTIPLE: everything passes through
    "intercommunicator",
    "in-place",  // MPI_IN_PLACE where the packaged protocol does not support it
    "datatype",  // not the protocol's element type (derived datatypes included)
    "op",  // not the protocol's operator (user ops included)
    "count",  // zero, negative, or past the largest count the communicator's windows hold
    "create-failed",  // the protocol's communicator could not be made here (its domain at this P)
};

struct Stats {
  long long served[kNColl] = {};
  long long passed[kNColl][kNReason] = {};
};
inline Stats& stats() {
  static Stats s;
  return s;
}
inline int& depth() {
  static thread_local int d = 0;
  return d;
}
inline bool& thread_multiple() {
  static bool t = false;
  return t;
}

/// Inside: calls made while collc runs a collective go straight to PMPI.
struct Inside {
  Inside() { ++depth(); }
  ~Inside() { --depth(); }
};

inline int pass(Coll c, Reason r) {
  ++stats().passed[c][r];
  return 0;
}

/// The largest element count a communicator's windows hold: $COLLC_PMPI_MAX_COUNT, else
/// 262144 (1 MiB of f32), at most the protocol's domain.
inline long long max_count(long long domain_hi) {
  long long n = 262144;
  if (const char* e = std::getenv("COLLC_PMPI_MAX_COUNT")) {
    long long v = std::atoll(e);
    if (v > 0) n = v;
  }
  return n < domain_hi ? n : domain_hi;
}

/// The largest row length of a collective whose windows hold `rows` rows (P, or P blocks of
/// rows): $COLLC_PMPI_MAX_COUNT (else 262144) elements over the rows, at most the protocol's
/// domain; 0 when not even one element per row fits.
inline long long max_row(long long domain_hi, long long rows) {
  const long long n = max_count(static_cast<long long>(1) << 62) / (rows > 0 ? rows : 1);
  return n < domain_hi ? n : domain_hi;
}

inline int comm_size(MPI_Comm comm) {
  int n = 0;
  PMPI_Comm_size(comm, &n);
  return n;
}
inline int comm_rank(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}
inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

/// MPI_Alltoallv: the largest send or receive count over every rank of `comm` (one
/// PMPI_Allreduce, so every rank decides alike); -1 if a rank passed a negative count.
inline long long agreed_count(const int* sendcounts, const int* recvcounts, int np, MPI_Comm comm) {
  long long mx = 0;
  for (int j = 0; j < np; ++j) {
    if (sendcounts[j] < 0 || recvcounts[j] < 0) mx = (static_cast<long long>(1) << 62);
    if (sendcounts[j] > mx) mx = sendcounts[j];
    if (recvcounts[j] > mx) mx = recvcounts[j];
  }
  long long all = 0;
  PMPI_Allreduce(&mx, &all, 1, MPI_LONG_LONG, MPI_MAX, comm);
  return all >= (static_cast<long long>(1) << 62) ? -1 : all;
}

/// Per MPI communicator: the collc communicators made for it (per collective and root), in
/// creation order, each with its free function.
struct Instance {
  int coll;
  int root;
  void* comm;  // nullptr: creation failed (pass through)
  int (*free_fn)(void*);
};
struct CommState {
  std::vector<Instance> made;
};

/// Every CommState alive, in creation order (freed in that order at MPI_Finalize).
inline std::vector<CommState*>& alive() {
  static std::vector<CommState*> v;
  return v;
}

inline void free_state(CommState* s) {
  Inside in;
  for (Instance& i : s->made)
    if (i.comm != nullptr) i.free_fn(i.comm);
  s->made.clear();
  auto& a = alive();
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k] == s) {
      a.erase(a.begin() + long(k));
      break;
    }
  delete s;
}

inline int delete_fn(MPI_Comm, int, void* attr, void*) {
  // Only a state still alive (MPI_Finalize may have freed it already).
  for (CommState* s : alive())
    if (s == attr) {
      free_state(s);
      break;
    }
  return MPI_SUCCESS;
}

inline int keyval() {
  static int k = MPI_KEYVAL_INVALID;
  if (k == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k, nullptr);
  return k;
}

/// The communicator's state, made at its first collective.
inline CommState* state(MPI_Comm comm) {
  void* v = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval(), &v, &found);
  if (found) return static_cast<CommState*>(v);
  CommState* s = new CommState();
  PMPI_Comm_set_attr(comm, keyval(), s);
  alive().push_back(s);
  return s;
}

/// The collc communicator of collective `coll` at `root` on `comm`, made by `create` at
/// the first call (collective: every rank of `comm` is in the same call); nullptr if that
/// failed.
template <class Create>
inline void* instance(MPI_Comm comm, int coll, int root, int (*free_fn)(void*), Create create) {
  CommState* s = state(comm);
  for (Instance& i : s->made)
    if (i.coll == coll && i.root == root) return i.comm;
  void* made = nullptr;
  {
    Inside in;
    made = create();
  }
  s->made.push_back(Instance{coll, root, made, free_fn});
  return made;
}

/// Why a call on `comm` cannot be served whatever its other arguments, or -1.
inline int comm_reason(MPI_Comm comm) {
  if (thread_multiple()) return kThreadMultiple;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return kInterComm;
  return -1;
}

/// Prints the counts summed over MPI_COMM_WORLD on rank 0 (COLLC_PMPI_STATS=1).
inline void report() {
  const char* e = std::getenv("COLLC_PMPI_STATS");
  if (e == nullptr || std::strcmp(e, "1") != 0) return;
  Stats sum;
  PMPI_Reduce(stats().served, sum.served, kNColl, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&stats().passed[0][0], &sum.passed[0][0], kNColl * kNReason, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  int me = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (me != 0) return;
  std::fprintf(stderr, "collc_pmpi: calls summed over the ranks of MPI_COMM_WORLD\n");
  for (int c = 0; c < kNColl; ++c) {
    std::fprintf(stderr, "collc_pmpi: %s served %lld", kCollName[c], sum.served[c]);
    for (int r = 0; r < kNReason; ++r)
      if (sum.passed[c][r] != 0) std::fprintf(stderr, ", passed through (%s) %lld", kReasonName[r], sum.passed[c][r]);
    std::fprintf(stderr, "\n");
  }
}

/// Frees every collc communicator still alive, in creation order (MPI_Finalize).
inline void finalize() {
  while (!alive().empty()) {
    CommState* s = alive().front();
    free_state(s);
  }
}

}  // namespace collc_pmpi

#endif  // COLLC_PMPI_HPP
