// NEGATIVE FIXTURE — the pre-#2279 barrier: AtomicAdd(+1) / GE 1 with no epilogue. Credits
// are never returned, so from the second call on every wait passes on the previous call's
// credit (a stale pass) and after K calls every peer cell holds K. The launcher's residue
// check must report COLLC_ERR_SIGNAL_RESIDUE.
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

    // ---- step 1: arrive ----------------------------------------------------------------------
    pipe_barrier(PIPE_ALL);
    dsb(DSB_DDR);
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(CommRemotePtr(ctx, signal_base + me, peer));
        pto::comm::TNOTIFY(sig, static_cast<int32_t>(1), pto::comm::NotifyOp::AtomicAdd);
    }

    // ---- step 2: wait (g = 1) ----------------------------------------------------------------
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer);
        pto::comm::TWAIT(sig, static_cast<int32_t>(1), pto::comm::WaitCmp::GE);
    }
    pipe_barrier(PIPE_ALL);
    // BUG: no epilogue.
}
