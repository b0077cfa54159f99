// NEGATIVE FIXTURE — deliberately broken barrier: waits GE 2 but only one credit per call
// ever reaches each cell ("threshold grows faster than credits"). Every rank must hang in
// step 2; the runtime must turn that into a TWAIT timeout report naming the cell and the
// value it holds (1), and the launcher must still join every thread.
// Otherwise identical to examples/barrier_kernel.cpp.

#include "collc/pto_comm.hpp"

namespace {
constexpr int32_t kMaxSupportedRanks = 16;
}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    // ---- args block ----------------------------------------------------------------------
    __gm__ int32_t* signal_base = reinterpret_cast<__gm__ int32_t*>(args[0]);
    const int32_t nranks = static_cast<int32_t>(args[1]);
    __gm__ CommContext* ctx = reinterpret_cast<__gm__ CommContext*>(args[2]);

    // ---- guards ----------------------------------------------------------------------------
    if (nranks <= 0 || nranks > kMaxSupportedRanks) {
        pipe_barrier(PIPE_ALL);
        return;
    }
    const int32_t me = static_cast<int32_t>(ctx->rankId);

    // ---- step 1: arrive — ONE credit to every peer ---------------------------------------
    pipe_barrier(PIPE_ALL);
    dsb(DSB_DDR);
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(CommRemotePtr(ctx, signal_base + me, peer));
        pto::comm::TNOTIFY(sig, static_cast<int32_t>(1), pto::comm::NotifyOp::AtomicAdd);
    }

    // ---- step 2: BUG — waits for TWO credits ---------------------------------------------
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer);
        pto::comm::TWAIT(sig, static_cast<int32_t>(2), pto::comm::WaitCmp::GE);
    }
    pipe_barrier(PIPE_ALL);

    // ---- step 3: epilogue (never reached) ---------------------------------------------------
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer);
        pto::comm::TNOTIFY(sig, static_cast<int32_t>(-1), pto::comm::NotifyOp::AtomicAdd);
    }
    pipe_barrier(PIPE_ALL);
}
