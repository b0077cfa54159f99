// collc reference kernel: barrier (self-clearing credit barrier).
//
// Hand-written in the exact shape the collc code generator emits; the generator's output for
// its spec (named below) must match this file up to names and comments. Protocol as in the
// merged pypto host builtin (domain doc §1.5), with collc's fences added.
//
// Signal: [P] int32 cells in every rank's window. Cell signal[j] in rank r's window is
// written remotely only by rank j (+1 per call) and reset locally only by rank r.
//
//   step 1  arrive    for peer != me: TNOTIFY(peer's signal[me], +1, AtomicAdd)
//   step 2  wait      for peer != me: TWAIT(signal[peer], GE 1)
//   step 3  epilogue  for peer != me: TNOTIFY(signal[peer], -1, AtomicAdd)
//
// Credits per peer cell per call: 1, waits [1], reset -1. A fast peer may already have sent
// its next call's +1 when our epilogue runs; AtomicAdd(-1) commutes with it, Set(0) would
// erase it and deadlock that peer's next wait.
//
// Spec: examples/barrier.coll. Args block (collc host ABI v2, collc/host_launch.hpp):
//   args[0] sig (int32 cells, [P])    args[1] P (nranks)    args[2] CommContext*

#include "collc/pto_comm.hpp"

namespace {
constexpr int32_t kMaxSupportedRanks = 16;
}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    // ---- args block ----------------------------------------------------------------------
    __gm__ int32_t* signal_base = reinterpret_cast<__gm__ int32_t*>(args[0]);
    const int32_t nranks = static_cast<int32_t>(args[1]);
    __gm__ CommContext* ctx = reinterpret_cast<__gm__ CommContext*>(args[2]);

    // ---- guards: rank-uniform values only, before the first notify -----------------------
    if (nranks <= 0 || nranks > kMaxSupportedRanks) {
        pipe_barrier(PIPE_ALL);
        return;
    }
    const int32_t me = static_cast<int32_t>(ctx->rankId);

    // ---- step 1: arrive — +1 into signal[me] of every peer -------------------------------
    // The notify publishes everything this rank wrote before the barrier.
    pipe_barrier(PIPE_ALL);
    dsb(DSB_DDR);
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(CommRemotePtr(ctx, signal_base + me, peer));
        pto::comm::TNOTIFY(sig, static_cast<int32_t>(1), pto::comm::NotifyOp::AtomicAdd);
    }

    // ---- step 2: wait — every peer's credit in my signal[peer] (g = 1) -------------------
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer);
        pto::comm::TWAIT(sig, static_cast<int32_t>(1), pto::comm::WaitCmp::GE);
    }
    pipe_barrier(PIPE_ALL);
    // Reads after the barrier must see what peers wrote before it.
    dcci(signal_base, ENTIRE_DATA_CACHE);

    // ---- step 3: epilogue — return this call's 1 credit per peer cell --------------------
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer);
        pto::comm::TNOTIFY(sig, static_cast<int32_t>(-1), pto::comm::NotifyOp::AtomicAdd);
    }
    pipe_barrier(PIPE_ALL);
}
