// collc reference program: allreduce, mesh, Sum over f32, single block
// (domain doc pypto-host-collectives.md §1.1, HEAD protocol with core_num = 1).
// Hand-written in the exact shape the collc MPI generator emits.
//
// Protocol: signal sig[NR] (1-D, signal_stride = 1, lane = peer*1 + 0); data float[numel]
// treated as a flat stream of 256-element chunks; n = ceil(numel / 256).
//   ready: for peer != me: TNOTIFY(remote sig[me] on peer, +1, AtomicAdd)
//          for peer != me: TWAIT(sig[peer], 1, GE)
//   e = 2
//   for each chunk:
//     acc = TLOAD own chunk; for peer != me: acc += TLOAD peer's chunk (remote)
//     for peer != me: TNOTIFY(remote sig[me] on peer, +1, AtomicAdd)      ("read done")
//     for peer != me: TWAIT(sig[peer], e, GE); e += 1
//     TSTORE acc -> own chunk        (only now: every peer has read our chunk; WAR)
//   epilogue: N = e - 1 (= 1 + n): for peer != me: TNOTIFY(local sig[peer], -N, AtomicAdd)
// Credits per peer cell per call: 1 + n; waits [1..n+1]; reset -(1+n).
//
// Deviation from the device kernel: loads use the exact chunk length. The device rounds
// loads up to 32 bytes (a DMA alignment artefact that may read past the tensor end); an
// MPI_Get past the end of a window is erroneous.

#include "collc_mpi.hpp"

namespace collc_program {

constexpr const char* kName = "allreduce";
constexpr int kMaxSupportedRanks = 16;

struct Args {
  collc_mpi::Window* sigwin = nullptr;  // the protocol's signal window
  MPI_Aint sig = 0;                     // signal "sig": int32[nranks] (stride 1, one block)
  collc_mpi::Window* data = nullptr;    // tensor "data": float[numel] (in/out, in place)
  int64_t numel = 0;                    // param numel
  int64_t tile = 256;                   // param tile (kTileCount)
  float* acc = nullptr;                 // local UB tile 0: float[min(tile, numel)]
  float* recv = nullptr;                // local UB tile 1: float[min(tile, numel)]
};

void setup(collc_mpi::Session& s, Args& a) {
  a.numel = s.param_i64("numel", 4127);
  a.tile = s.param_i64("tile", 256);
  a.sigwin = s.signal_window();
  a.sig = s.signal("sig", s.np());
  a.data = s.buffer<float>("data", a.numel > 0 ? a.numel : 1);
  a.acc = s.local_buffer<float>("acc", std::max<int64_t>(1, std::min(a.tile, a.numel)));
  a.recv = s.local_buffer<float>("recv", std::max<int64_t>(1, std::min(a.tile, a.numel)));
}

void kernel(const collc_mpi::Ctx& ctx, const Args& a) {
  const int me = ctx.me;
  const int nranks = ctx.np;
  const collc_mpi::Window& sigwin = *a.sigwin;
  const collc_mpi::Window& data = *a.data;
  float* own = data.local<float>();

  // [guard] rank-uniform early return, before the first notify
  if (nranks <= 0 || nranks > kMaxSupportedRanks) return;
  if (a.numel <= 0 || a.tile <= 0) return;

  float* acc = a.acc;    // UB tile 0
  float* recv = a.recv;  // UB tile 1

  // [ready barrier: notify] our input is in place
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, peer, a.sig + me, 1);
  }

  // [ready barrier: wait] every peer's input is in place: sig[peer] >= 1
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::wait(sigwin, a.sig + peer, collc_mpi::Cmp::GE, 1, "ready");
  }

  int32_t e = 2;
  for (int64_t base = 0; base < a.numel; base += a.tile) {
    const int64_t n = std::min<int64_t>(a.tile, a.numel - base);

    // [load + reduce] acc = own chunk; acc += each peer's chunk (remote get, flushed)
    std::memcpy(acc, own + base, size_t(n) * sizeof(float));
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == me) continue;
      collc_mpi::get(recv, peer, data, base, n);
      for (int64_t i = 0; i < n; ++i) acc[i] += recv[i];
    }

    // [read-done: notify] we finished reading every peer's chunk
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == me) continue;
      collc_mpi::notify_add(sigwin, peer, a.sig + me, 1);
    }

    // [read-done: wait] every peer finished reading our chunk: sig[peer] >= e
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == me) continue;
      collc_mpi::wait(sigwin, a.sig + peer, collc_mpi::Cmp::GE, e, "chunk read-done");
    }
    e += 1;

    // [store] TSTORE acc -> own chunk (safe: no peer reads it any more)
    std::memcpy(own + base, acc, size_t(n) * sizeof(float));
  }

  // [epilogue] self-clearing reset: AtomicAdd(-(1 + chunks)) on each own peer cell
  const int32_t credits = e - 1;
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    collc_mpi::notify_add(sigwin, me, a.sig + peer, -credits);
  }
}

// Input of call c: rank r holds payload(c, r, i).
void prepare(const collc_mpi::Ctx& ctx, const Args& a) {
  float* own = a.data->local<float>();
  for (int64_t i = 0; i < a.numel; ++i) own[i] = float(collc_mpi::payload(ctx.call, ctx.me, i));
}

// Output of call c: every rank holds sum_r payload(c, r, i). The reduction order is
// own + peers ascending, so compare with a tolerance once sums leave the exact-f32 range.
void check(const collc_mpi::Ctx& ctx, const Args& a, collc_mpi::Checker& chk) {
  const float* own = a.data->local<float>();
  for (int64_t i = 0; i < a.numel; ++i) {
    double want = 0;
    for (int r = 0; r < ctx.np; ++r) want += double(collc_mpi::payload(ctx.call, r, i));
    if (want < 16777216.0)
      chk.eq("data", i, double(own[i]), want);
    else
      chk.near("data", i, double(own[i]), want, 1e-6);
  }
}

}  // namespace collc_program

#ifndef COLLC_NO_MAIN
#include "collc_mpi_main.hpp"
#endif
