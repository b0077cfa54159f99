// pto::comm instructions, declared for a g++ syntax check.
//
// Source (public): hw-native-sys/pto-isa include/pto/comm/pto_comm_inst.hpp (read from the
// mirror zouzias/pto-isa-mirror @ 36ab86f7):
//   template <typename GlobalSignalData, typename... WaitEvents>
//   PTO_INST void TNOTIFY(GlobalSignalData& dstSignalData, int32_t value, NotifyOp op, WaitEvents&... events);
//   template <typename GlobalSignalData, typename... WaitEvents>
//   PTO_INST void TWAIT(GlobalSignalData& signalData, int32_t cmpValue, WaitCmp cmp, WaitEvents&... events);
//   template <typename GlobalSignalData, typename... WaitEvents>
//   PTO_INST bool TTEST(GlobalSignalData& signalData, int32_t cmpValue, WaitCmp cmp, WaitEvents&... events);
//   TPUT(dstGlobal, srcGlobal, stagingTile, [AtomicType,] events...) -> RecordEvent
//   TGET(dstGlobal, srcGlobal, stagingTile, events...) -> RecordEvent
// ("Signal type must be int32_t": checked below.) Older pto-isa revisions took TWAIT's
// comparison before the value (`TWAIT(signal, cmp, cmpValue)`); the value-then-comparison
// order above is the one pypto's host kernels call and the one declared here.
#ifndef COLLC_ASCEND_DECLS_PTO_COMM_INST_HPP
#define COLLC_ASCEND_DECLS_PTO_COMM_INST_HPP

#include "comm_types.hpp"

namespace pto {
namespace comm {

template <typename GlobalSignalData, typename... WaitEvents>
PTO_INST void TNOTIFY(GlobalSignalData& /*dstSignalData*/, int32_t value, NotifyOp op, WaitEvents&...) {
    static_assert(is_global<GlobalSignalData>::value, "TNOTIFY: a signal GlobalTensor");
    static_assert(std::is_same<typename GlobalSignalData::DType, int32_t>::value, "Signal type must be int32_t");
    (void)value;
    (void)op;
}

template <typename GlobalSignalData, typename... WaitEvents>
PTO_INST void TWAIT(GlobalSignalData& /*signalData*/, int32_t cmpValue, WaitCmp cmp, WaitEvents&...) {
    static_assert(is_global<GlobalSignalData>::value, "TWAIT: a signal GlobalTensor");
    static_assert(std::is_same<typename GlobalSignalData::DType, int32_t>::value, "Signal type must be int32_t");
    (void)cmpValue;
    (void)cmp;
}

template <typename GlobalSignalData, typename... WaitEvents>
PTO_INST bool TTEST(GlobalSignalData& signalData, int32_t cmpValue, WaitCmp cmp, WaitEvents&...);

template <typename GlobalDstData, typename GlobalSrcData, typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TPUT(GlobalDstData& dstGlobalData, GlobalSrcData& srcGlobalData, TileData& stagingTileData,
                          WaitEvents&... events);

template <typename GlobalDstData, typename GlobalSrcData, typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TGET(GlobalDstData& dstGlobalData, GlobalSrcData& srcGlobalData, TileData& stagingTileData,
                          WaitEvents&... events);

}  // namespace comm
}  // namespace pto

#endif  // COLLC_ASCEND_DECLS_PTO_COMM_INST_HPP
