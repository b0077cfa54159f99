// NEGATIVE FIXTURE — barrier with a Set(0) epilogue (pypto #2279 intermediate 07f845906).
// The reset does not commute with a fast peer's next-call credit: if peer q has already left
// call k and sent its call k+1 +1 into our signal[q] before our epilogue runs, Set(0) erases
// that credit. The hang is delayed, not immediate: our call k+1 wait on signal[q] then passes
// on q's call k+2 credit, and so on — the pair runs one credit out of phase (each wait passes
// on a credit of the wrong call) until the LAST call, whose wait has no later credit to
// borrow and never passes. Under COLLC_RUN_CHAOS a credit is lost within a few hundred calls;
// the runtime must report a TWAIT timeout on a GE 1 wait whose cell holds 0 in a call k >= 1
// (observed: always the final call).
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

    // ---- step 3: BUG — epilogue resets with Set(0) instead of AtomicAdd(-1) ------------
    for (int32_t peer = 0; peer < nranks; ++peer) {
        if (peer == me) continue;
        pto::comm::Signal sig(signal_base + peer);
        pto::comm::TNOTIFY(sig, static_cast<int32_t>(0), pto::comm::NotifyOp::Set);  // BUG
    }
    pipe_barrier(PIPE_ALL);
}
