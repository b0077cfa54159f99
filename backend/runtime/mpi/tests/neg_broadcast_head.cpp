// NEGATIVE test program (must FAIL under COLLC_MPI_JITTER_US): broadcast exactly as
// MERGED in pypto (domain doc §1.4, HEAD `4f787e9f0`): symmetric per-tile barrier, reset
// -T, and NO read-complete round after the last tile. A root can return from call c and
// overwrite its buffer with call c+1's payload while a non-root still reads the last
// tile; with jittered RMA timing the launcher's output check sees call c+1 values.
// This is the reason examples/broadcast.cpp adds the final (+1, GE T+1, -(T+1)) round.
// Shape: examples/broadcast.cpp minus the read-complete round.

#include "collc_mpi.hpp"

#include <vector>

namespace collc_program {

constexpr const char* kName = "neg_broadcast_head";
constexpr int kMaxSupportedRanks = 16;

struct Args {
  collc_mpi::Window* sigwin = nullptr;  // the protocol's signal window
  MPI_Aint sig = 0;                     // signal "sig": int32[nranks]
  collc_mpi::Window* data = nullptr;    // tensor "data": float[numel] (in/out)
  int64_t numel = 0;                    // param numel
  int root = 0;                         // param root (kRoot)
  int64_t tile = 256;                   // param tile (kTileCount)
};

void setup(collc_mpi::Session& s, Args& a) {
  a.numel = s.param_i64("numel", 1000);
  a.root = int(s.param_i64("root", 0));
  a.tile = s.param_i64("tile", 256);
  a.sigwin = s.signal_window();
  a.sig = s.signal("sig", s.np());
  a.data = s.buffer<float>("data", a.numel > 0 ? a.numel : 1);
}

void kernel(const collc_mpi::Ctx& ctx, const Args& a) {
  const int me = ctx.me;
  const int nranks = ctx.np;
  const collc_mpi::Window& sigwin = *a.sigwin;
  const collc_mpi::Window& data = *a.data;
  float* own = data.local<float>();

  // [guard] rank-uniform early return, before the first notify
  if (nranks <= 0 || nranks > kMaxSupportedRanks) return;
  if (a.root < 0 || a.root >= nranks) return;
  if (a.numel <= 0 || a.tile <= 0) return;

  std::vector<float> ub(size_t(a.tile));  // UB tile
  int32_t expected = 1;

  for (int64_t base = 0; base < a.numel; base += a.tile) {
    const int64_t n = std::min<int64_t>(a.tile, a.numel - base);

    // [stage] root: TLOAD tile -> TSTORE same place (host memory: a local copy)
    if (me == a.root) {
      std::memcpy(ub.data(), own + base, size_t(n) * sizeof(float));
      std::memcpy(own + base, ub.data(), size_t(n) * sizeof(float));
    }

    // [tile barrier: notify] +1 into sig[me] on every peer (every rank, incl. non-roots)
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == me) continue;
      collc_mpi::notify_add(sigwin, peer, a.sig + me, 1);
    }

    // [tile barrier: wait] sig[peer] >= expected
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == me) continue;
      collc_mpi::wait(sigwin, a.sig + peer, collc_mpi::Cmp::GE, expected, "tile barrier");
    }
    expected += 1;

    // [read] non-root: TLOAD root's tile (remote get, flushed) -> TSTORE own tile
    if (me != a.root) {
      collc_mpi::get(ub.data(), a.root, data, base, n);
      std::memcpy(own + base, ub.data(), size_t(n) * sizeof(float));
    }
  }

  // [epilogue] self-clearing reset: AtomicAdd(-T) on each own peer cell
  const int32_t credits = expected - 1;
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, me, a.sig + peer, -credits);
  }
}

// Input of call c: root holds payload(c, root, i); every other rank holds its own
// payload(c, me, i), which the broadcast must overwrite.
void prepare(const collc_mpi::Ctx& ctx, const Args& a) {
  float* own = a.data->local<float>();
  for (int64_t i = 0; i < a.numel; ++i) own[i] = float(collc_mpi::payload(ctx.call, ctx.me, i));
}

// Output of call c: every rank holds payload(c, root, i).
void check(const collc_mpi::Ctx& ctx, const Args& a, collc_mpi::Checker& chk) {
  const float* own = a.data->local<float>();
  for (int64_t i = 0; i < a.numel; ++i)
    chk.eq("data", i, own[i], float(collc_mpi::payload(ctx.call, a.root, i)));
}

}  // namespace collc_program

#include "collc_mpi_main.hpp"
