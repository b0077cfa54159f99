// collc reference kernel: mesh allreduce, Sum over f32, with multicore signal lanes.
//
// Hand-written in the exact shape the collc code generator emits; the generator's output for
// its spec (named below) must match this file up to names and comments. Protocol as in the
// merged pypto host builtin (domain doc §1.1), with collc's fences added.
//
// Data: numel f32 in every rank's window, overwritten in place by the sum over all ranks.
// Signal: [P, signal_stride] int32 cells; lane (peer, b) = signal_base + peer*signal_stride + b
// is written remotely only by rank `peer`'s block b and reset locally by its owner's block b.
// With one block (C = 1) and signal_stride = 1 this is the plain [P] signal.
//
// Block b of A = min(C, signal_stride) active blocks handles the 256-element chunks at
// base = b*256, b*256 + A*256, ... (chunk length min(256, numel - base)); n_b chunks.
//
//   step 1  ready      for peer != me: TNOTIFY(peer's lane[me][b], +1, AtomicAdd)
//                      for peer != me: TWAIT(lane[peer][b], GE 1)
//   per chunk i of block b (i = 0 .. n_b-1):
//   step 2  reduce     acc = own chunk; for peer != me: acc += peer's chunk (remote load)
//   step 3  read-done  for peer != me: TNOTIFY(peer's lane[me][b], +1, AtomicAdd)
//                      for peer != me: TWAIT(lane[peer][b], GE i+2)
//   step 4  store      own chunk = acc   (only now: no peer still reads it — WAR protection)
//   step 5  epilogue   for peer != me: TNOTIFY(lane[peer][b], -(1 + n_b), AtomicAdd)
//
// Credits per lane per call: 1 + n_b, waits 1, 2, ..., n_b + 1, reset -(1 + n_b). An idle lane
// (n_b = 0) still runs the ready barrier and resets -1; lanes >= A are never touched.
//
// Spec: examples/allreduce_mesh.coll. Args block (collc host ABI v2, collc/host_launch.hpp):
// buffers in declaration order, then P, then the params in declaration order, then the context:
//   args[0] sig (int32 cells, [P][stride])    args[1] data (f32, [n])
//   args[2] P (nranks)    args[3] n (numel)    args[4] C (blocks)    args[5] stride
//   args[6] CommContext*

#include "collc/pto_comm.hpp"

namespace {
constexpr int32_t kMaxSupportedRanks = 16;
constexpr int32_t kTileCount = 256;
}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    // ---- args block ----------------------------------------------------------------------
    __gm__ int32_t* signal_base = reinterpret_cast<__gm__ int32_t*>(args[0]);
    __gm__ float* data = reinterpret_cast<__gm__ float*>(args[1]);
    const int32_t nranks = static_cast<int32_t>(args[2]);
    const int64_t numel = args[3];
    const int64_t blocks = args[4];
    const int64_t signal_stride = args[5];
    __gm__ CommContext* ctx = reinterpret_cast<__gm__ CommContext*>(args[6]);
    const int32_t block_idx = get_block_idx(args);
    const int32_t block_num = get_block_num(args);

    // ---- guards: rank-uniform values only, before the first notify -----------------------
    // (block_num is the launch's core count, identical on every rank.)
    if (nranks <= 0 || nranks > kMaxSupportedRanks || numel <= 0 || signal_stride <= 0 || blocks <= 0 ||
        block_num != blocks || block_idx < 0 || block_idx >= block_num) {
        pipe_barrier(PIPE_ALL);
        return;
    }
    // A block at or beyond signal_stride would run into the next peer's lanes: clamp. The
    // clamp depends on C and signal_stride only, so block b returns on every rank.
    const int32_t active_blocks =
        static_cast<int32_t>(blocks < signal_stride ? blocks : signal_stride);
    if (block_idx >= active_blocks) {
        pipe_barrier(PIPE_ALL);
        return;
    }
    const int32_t me = static_cast<int32_t>(ctx->rankId);

    // ---- step 1: ready barrier — +1 to every peer, wait GE 1 -----------------------------
    // The notify publishes this rank's staged input to the peers that will load it.
    pipe_barrier(PIPE_ALL);
    dsb(DSB_DDR);
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(CommRemotePtr(ctx, signal_base + me * signal_stride + block_idx, peer));
        pto::comm::TNOTIFY(sig, static_cast<int32_t>(1), pto::comm::NotifyOp::AtomicAdd);
    }
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer * signal_stride + block_idx);
        pto::comm::TWAIT(sig, static_cast<int32_t>(1), pto::comm::WaitCmp::GE);
    }
    pipe_barrier(PIPE_ALL);
    // The remote loads below must see the peers' inputs released by the waits above.
    dcci(data, ENTIRE_DATA_CACHE);

    collc::Tile<float, kTileCount> acc_tile(0x0);
    collc::Tile<float, kTileCount> recv_tile(0x10000);

    int32_t read_done_expected = 2;
    for (int64_t base = static_cast<int64_t>(block_idx) * kTileCount; base < numel;
         base += static_cast<int64_t>(active_blocks) * kTileCount) {
        const int32_t chunk = static_cast<int32_t>(numel - base < kTileCount ? numel - base : kTileCount);

        // ---- step 2: reduce — own chunk + every peer's chunk (remote loads) --------------
        collc::TLOAD(acc_tile, data + base, chunk);
        for (int32_t peer = 0; peer < nranks; ++peer) {
            if (peer == me) continue;
            collc::TLOAD(recv_tile, CommRemotePtr(ctx, data + base, peer), chunk);
            collc::TADD(acc_tile, acc_tile, recv_tile);
        }

        // ---- step 3: read-done barrier — +1 to every peer, wait GE chunk_index + 2 -------
        pipe_barrier(PIPE_ALL);
        for (int32_t peer = 0; peer < nranks; ++peer) {
            if (peer == me) continue;
            pto::comm::Signal sig(CommRemotePtr(ctx, signal_base + me * signal_stride + block_idx, peer));
            pto::comm::TNOTIFY(sig, static_cast<int32_t>(1), pto::comm::NotifyOp::AtomicAdd);
        }
        for (int32_t peer = 0; peer < nranks; ++peer) {
            if (peer == me) continue;
            pto::comm::Signal sig(signal_base + peer * signal_stride + block_idx);
            pto::comm::TWAIT(sig, read_done_expected, pto::comm::WaitCmp::GE);
        }
        ++read_done_expected;
        pipe_barrier(PIPE_ALL);

        // ---- step 4: store — every peer has finished reading this chunk -----------------
        collc::TSTORE(data + base, acc_tile, chunk);
    }

    // ---- step 5: epilogue — return this call's 1 + n_b credits per peer lane ---------------
    pipe_barrier(PIPE_ALL);
    const int32_t credits = read_done_expected - 1;
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer * signal_stride + block_idx);
        pto::comm::TNOTIFY(sig, -credits, pto::comm::NotifyOp::AtomicAdd);
    }
    pipe_barrier(PIPE_ALL);
}
