// NEGATIVE FIXTURE — racy mesh allreduce: the TSTORE of each reduced chunk is hoisted ABOVE
// the read-done barrier (the write-after-read bug the read-done round exists to prevent). A
// peer may still be loading the chunk this rank overwrites. ThreadSanitizer must report a data
// race (and without TSan the sums may come out wrong).
// Otherwise identical to examples/allreduce_kernel.cpp.

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

        // ---- BUG: store before the read-done barrier --------------------------------------
        collc::TSTORE(data + base, acc_tile, chunk);

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
