// collc/pto_sim_bridge.hpp — the entry of a collc Ascend kernel built for pto-isa's CPU
// simulation (`collc run --target pto-isa`, collc_backend::pto_sim::run).
//
// Included once, at the END of the kernel's translation unit (after `collc/pto_comm.hpp` and
// kernel_entry), in the a2a3sim build: `-D__CPU_SIM`, PTO_ISA_ROOT's and SIMPLER_ROOT's
// include directories, `-shared -fPIC -Wl,-Bsymbolic` (the kernel library binds its own
// symbols: the process also holds collc's CPU runtime, whose pto::comm names are the same).
// TNOTIFY / TWAIT / TGET / TPUT / TLOAD / ... are therefore pto-isa's own CPU implementations
// (include/pto/cpu/), and the types the kernel reads are simpler's own:
//
//   args[0 .. nargs-1]               the collc args block (buffers, then scalars; host_launch.hpp)
//   args[nargs]                      CommContext* (simpler's platform_comm/comm_context.h):
//                                    rankId, rankNum, windowsIn[pe] = base of pe's window
//   args[SPMD_LOCAL_CONTEXT_INDEX]   LocalContext* {block_idx, block_num} (simpler's intrinsic.h,
//                                    what get_block_idx(args) / get_block_num(args) read)
//   args[SPMD_GLOBAL_CONTEXT_INDEX]  GlobalContext* (zeroed)
//
// The collc host runner (collc/host_runner.cpp, given this library as its second argument)
// calls collc_pto_sim_call on every (rank, block) thread of the collc launcher, for every call.
// Nothing of collc's CPU runtime is compiled into this library.

#ifndef COLLC_PTO_SIM_BRIDGE_HPP
#define COLLC_PTO_SIM_BRIDGE_HPP

#include <cstdint>
#include <cstring>

#if !defined(__CPU_SIM)
#error "collc/pto_sim_bridge.hpp is the entry of pto-isa's CPU simulation build (-D__CPU_SIM)"
#endif

// Returns 0 after one kernel call, or 1 (nothing run) when the args block does not fit below
// simpler's context slots or the world is larger than simpler's CommContext holds.
extern "C" __attribute__((visibility("default"))) int32_t collc_pto_sim_call(const int64_t* collc_args, int32_t nargs,
                                                                          int32_t rank, int32_t nranks,
                                                                          uint8_t* const* windows, int32_t block,
                                                                          int32_t nblocks) {
    if (nargs < 0 || nargs >= SPMD_LOCAL_CONTEXT_INDEX || nranks < 1 ||
        nranks > static_cast<int32_t>(COMM_MAX_RANK_NUM) || rank < 0 || rank >= nranks) {
        return 1;
    }
    // Per (rank, block) thread: the context and args block of this call.
    thread_local CommContext ctx;
    thread_local LocalContext local;
    thread_local GlobalContext global;
    thread_local int64_t args[SPMD_GLOBAL_CONTEXT_INDEX + 1];
    std::memset(&ctx, 0, sizeof ctx);
    ctx.rankId = static_cast<uint32_t>(rank);
    ctx.rankNum = static_cast<uint32_t>(nranks);
    for (int32_t pe = 0; pe < nranks; ++pe) ctx.windowsIn[pe] = reinterpret_cast<uint64_t>(windows[pe]);
    std::memset(&local, 0, sizeof local);
    local.block_idx = block;
    local.block_num = nblocks;
    std::memset(&global, 0, sizeof global);
    std::memset(args, 0, sizeof args);
    for (int32_t i = 0; i < nargs; ++i) args[i] = collc_args[i];
    args[nargs] = reinterpret_cast<int64_t>(&ctx);
    args[SPMD_LOCAL_CONTEXT_INDEX] = reinterpret_cast<int64_t>(&local);
    args[SPMD_GLOBAL_CONTEXT_INDEX] = reinterpret_cast<int64_t>(&global);
    kernel_entry(args);
    return 0;
}

#endif  // COLLC_PTO_SIM_BRIDGE_HPP
