// collc reference program: barrier (domain doc pypto-host-collectives.md §1.5, merged code)
// Hand-written in the exact shape the collc MPI generator emits.
//
// Protocol: signal sig[NR] (int32, cell j on rank r written only by rank j)
//   for peer != me: TNOTIFY(remote sig[me] on peer, +1, AtomicAdd)
//   for peer != me: TWAIT(sig[peer], 1, GE)
//   epilogue: for peer != me: TNOTIFY(local sig[peer], -1, AtomicAdd)
// Credits per peer cell per call: 1; waits [1]; reset -1.

#include "collc_mpi.hpp"

namespace collc_program {

constexpr const char* kName = "barrier";
constexpr int kMaxSupportedRanks = 16;

struct Args {
  collc_mpi::Window* sigwin = nullptr;  // the protocol's signal window
  MPI_Aint sig = 0;                     // signal "sig": int32[nranks]
  collc_mpi::Window* arrivals = nullptr;  // harness only (check): int32[1], used on rank 0
};

void setup(collc_mpi::Session& s, Args& a) {
  a.sigwin = s.signal_window();
  a.sig = s.signal("sig", s.np());
  a.arrivals = s.buffer<int32_t>("arrivals", 1);
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

  // [epilogue] self-clearing reset: AtomicAdd(-1) on each own peer cell
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, me, a.sig + peer, -1);
  }
}

// Input: count this rank's arrival at call `ctx.call` on rank 0 (harness counter,
// flushed before the kernel's first notify).
void prepare(const collc_mpi::Ctx& ctx, const Args& a) {
  (void)ctx;
  collc_mpi::harness_add_i32(*a.arrivals, 0, 0, 1);
}

// Barrier semantics: when call c returns on any rank, all ranks have entered call c,
// i.e. rank 0's arrival counter is >= np * (c + 1).
void check(const collc_mpi::Ctx& ctx, const Args& a, collc_mpi::Checker& chk) {
  const int32_t arrived = collc_mpi::harness_read_i32(*a.arrivals, 0, 0);
  const int32_t need = ctx.np * (ctx.call + 1);
  if (arrived < need) {
    char msg[160];
    snprintf(msg, sizeof msg, "barrier left early: %d arrivals on rank 0, need >= %d", arrived, need);
    chk.fail(msg);
  }
}

}  // namespace collc_program

#ifndef COLLC_NO_MAIN
#include "collc_mpi_main.hpp"
#endif
