// NEGATIVE test program (must FAIL with exit 1): the pre-PR barrier (domain doc §1.5
// "Before"): AtomicAdd(+1) credits, wait GE 1, but NO self-clearing epilogue. From the
// second call on, the GE 1 waits pass on stale credits, and after K calls every cell
// holds K: the launcher's final "all cells back at 0" check must report them.
// Shape: identical to examples/barrier.cpp minus the [epilogue] step.

#include "collc_mpi.hpp"

namespace collc_program {

constexpr const char* kName = "neg_barrier_no_epilogue";
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

  // [notify] arrive: +1 into sig[me] on every peer
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, peer, a.sig + me, 1);
  }

  // [wait] every peer has arrived: sig[peer] >= 1
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::wait(sigwin, a.sig + peer, collc_mpi::Cmp::GE, 1, "barrier arrive");
  }

  // BUG: no epilogue - credits are never subtracted
}

void prepare(const collc_mpi::Ctx&, const Args&) {}
void check(const collc_mpi::Ctx&, const Args&, collc_mpi::Checker&) {}

}  // namespace collc_program

#include "collc_mpi_main.hpp"
