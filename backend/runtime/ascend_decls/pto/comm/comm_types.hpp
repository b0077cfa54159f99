// pto::comm types used by collc kernels, declared for a g++ syntax check.
//
// Source (public): hw-native-sys/pto-isa include/pto/comm/comm_types.hpp (@ 12fa0752):
//   enum class NotifyOp : uint8_t { AtomicAdd = 0, Set = 1 };
//   enum class WaitCmp : uint8_t { EQ = 0, NE = 1, GT = 2, GE = 3, LT = 4, LE = 5 };
//   using Signal = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 1>, Stride<1, 1, 1, 1, 1>, Layout::ND>;
// (so a Signal is constructed from an `__gm__ int32_t*` cell address and nothing else).
#ifndef COLLC_ASCEND_DECLS_COMM_TYPES_HPP
#define COLLC_ASCEND_DECLS_COMM_TYPES_HPP

#include "../pto-inst.hpp"

namespace pto {
namespace comm {

enum class NotifyOp : uint8_t { AtomicAdd = 0, Set = 1 };
enum class WaitCmp : uint8_t { EQ = 0, NE = 1, GT = 2, GE = 3, LT = 4, LE = 5 };
enum class AtomicType : uint8_t { AtomicNone = 0, AtomicAdd = 1 };

using Signal = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 1>, Stride<1, 1, 1, 1, 1>, Layout::ND>;

}  // namespace comm
}  // namespace pto

#endif  // COLLC_ASCEND_DECLS_COMM_TYPES_HPP
