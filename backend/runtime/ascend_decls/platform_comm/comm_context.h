// simpler's device-side communication context, declared for a g++ syntax check.
//
// Source (public): hw-native-sys/simpler `platform_comm/comm_context.h` (the header pypto's
// host collective kernels include as "platform_comm/comm_context.h"): the ABI between the
// host (comm_hccl.cpp / comm_sim.cpp) and device kernels, byte-locked by static_asserts and
// mirrored by pto-isa's CommDeviceContext (include/pto/common/cpu_stub.hpp).
#ifndef COLLC_ASCEND_DECLS_COMM_CONTEXT_H
#define COLLC_ASCEND_DECLS_COMM_CONTEXT_H

#include <cstddef>
#include <cstdint>

static constexpr uint32_t COMM_MAX_RANK_NUM = 64;

struct CommContext {
    uint64_t workSpace;
    uint64_t workSpaceSize;

    uint32_t rankId;
    uint32_t rankNum;
    uint64_t winSize;
    uint64_t windowsIn[COMM_MAX_RANK_NUM];
    uint64_t windowsOut[COMM_MAX_RANK_NUM];
};

static_assert(sizeof(CommContext) == 1056, "CommContext size shifted");
static_assert(offsetof(CommContext, rankId) == 16, "CommContext layout drift");
static_assert(offsetof(CommContext, windowsIn) == 32, "CommContext layout drift");

#endif  // COLLC_ASCEND_DECLS_COMM_CONTEXT_H
