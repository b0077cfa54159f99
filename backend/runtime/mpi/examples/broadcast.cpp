// collc reference program: broadcast (domain doc pypto-host-collectives.md §1.4, HEAD
// `4f787e9f0` symmetric per-tile barrier) PLUS a final read-complete round.
// Hand-written in the exact shape the collc MPI generator emits.
//
// Protocol: signal sig[NR]; data float[numel] in tiles of 256, T = ceil(numel / 256).
//   expected = 1
//   for each tile t:
//     if me == root: TLOAD tile -> TSTORE same place              ("stage")
//     for peer != me: TNOTIFY(remote sig[me] on peer, +1, AtomicAdd)
//     for peer != me: TWAIT(sig[peer], expected, GE); expected++
//     if me != root: TLOAD root's tile (remote) -> TSTORE own tile
//   read-complete round (NOT in the merged code; added by collc because the merged
//   protocol lets the root return - and overwrite its buffer for the next call - while
//   a non-root still reads the last tile):
//     for peer != me: TNOTIFY(remote sig[me] on peer, +1, AtomicAdd)
//     for peer != me: TWAIT(sig[peer], expected (= T+1), GE); expected++
//   epilogue: N = expected - 1 (= T+1): for peer != me: TNOTIFY(local sig[peer], -N, AtomicAdd)
// Credits per peer cell per call: T+1; waits [1..T+1]; reset -(T+1).

#include "collc_mpi.hpp"

namespace collc_program {

constexpr const char* kName = "broadcast";
constexpr int kMaxSupportedRanks = 16;

struct Args {
  collc_mpi::Window* sigwin = nullptr;  // the protocol's signal window
  MPI_Aint sig = 0;                     // signal "sig": int32[nranks]
  collc_mpi::Window* data = nullptr;    // tensor "data": float[numel] (in/out)
  int64_t numel = 0;                    // param numel
  int root = 0;                         // param root (kRoot)
  int64_t tile = 256;                   // param tile (kTileCount)
  float* ub = nullptr;                  // local UB tile: float[min(tile, numel)]
};

void setup(collc_mpi::Session& s, Args& a) {
  a.numel = s.param_i64("numel", 1000);
  a.root = int(s.param_i64("root", 0));
  a.tile = s.param_i64("tile", 256);
  a.sigwin = s.signal_window();
  a.sig = s.signal("sig", s.np());
  a.data = s.buffer<float>("data", a.numel > 0 ? a.numel : 1);
  a.ub = s.local_buffer<float>("ub", std::max<int64_t>(1, std::min(a.tile, a.numel)));
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

  float* ub = a.ub;  // UB tile
  int32_t expected = 1;

  for (int64_t base = 0; base < a.numel; base += a.tile) {
    const int64_t n = std::min<int64_t>(a.tile, a.numel - base);

    // [stage] root: TLOAD tile -> TSTORE same place (host memory: a local copy)
    if (me == a.root) {
      std::memcpy(ub, own + base, size_t(n) * sizeof(float));
      std::memcpy(own + base, ub, size_t(n) * sizeof(float));
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
      collc_mpi::get(ub, a.root, data, base, n);
      std::memcpy(own + base, ub, size_t(n) * sizeof(float));
    }
  }

  // [read-complete round: notify] +1 after the last tile's remote read has completed
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, peer, a.sig + me, 1);
  }

  // [read-complete round: wait] sig[peer] >= T+1: nobody reads the root's buffer any more
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::wait(sigwin, a.sig + peer, collc_mpi::Cmp::GE, expected, "read-complete");
  }
  expected += 1;

  // [epilogue] self-clearing reset: AtomicAdd(-(T+1)) on each own peer cell
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

#ifndef COLLC_NO_MAIN
#include "collc_mpi_main.hpp"
#endif
