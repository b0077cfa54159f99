// NEGATIVE test program (must FAIL): a barrier whose wait threshold exceeds the credits
// it receives. Every peer sends ONE credit (+1) but the wait demands sig[peer] >= 2,
// so every rank must hit the wait deadline (COLLC_MPI_WAIT_TIMEOUT_MS), print the
// timeout report (rank, cell, expected, comparison, held value) and MPI_Abort.
// Shape: identical to examples/barrier.cpp except the threshold of the [wait] step.

#include "collc_mpi.hpp"

namespace collc_program {

constexpr const char* kName = "neg_barrier_ge2";
constexpr int kMaxSupportedRanks = 16;

struct Args {
  collc_mpi::Window* sigwin = nullptr;  // the protocol's signal window
  MPI_Aint sig = 0;                     // signal "sig": int32[nranks]
};

void setup(collc_mpi::Session& s, Args& a) {
  a.sigwin = s.signal_window();
  a.sig = s.signal("sig", s.np());
}

void kernel(const collc_mpi::Ctx& ctx, const Args& a) {
  const int me = ctx.me;
  const int nranks = ctx.np;
  const collc_mpi::Window& sigwin = *a.sigwin;

  // [guard] rank-uniform early return, before the first notify
  if (nranks <= 0 || nranks > kMaxSupportedRanks) return;

  // [notify] arrive: +1 into sig[me] on every peer (one credit)
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, peer, a.sig + me, 1);
  }

  // [wait] BUG: threshold 2 with one credit per call -> can never be satisfied
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::wait(sigwin, a.sig + peer, collc_mpi::Cmp::GE, 2, "barrier arrive (GE 2, 1 credit)");
  }

  // [epilogue] self-clearing reset: AtomicAdd(-2) on each own peer cell
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, me, a.sig + peer, -2);
  }
}

void prepare(const collc_mpi::Ctx&, const Args&) {}
void check(const collc_mpi::Ctx&, const Args&, collc_mpi::Checker&) {}

}  // namespace collc_program

#include "collc_mpi_main.hpp"
