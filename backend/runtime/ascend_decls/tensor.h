// simpler's "tensor.h" (ChipTensor), declared for a g++ syntax check of pypto-ABI kernels.
//
// Source (public): hw-native-sys/simpler src/common/task_interface/tensor.h. The declaration
// collc uses is collc/chip_tensor.hpp (the same layout; the CPU shim builds it), which cites
// the fields and offsets; this file stands in for simpler's header under -D__CCE_AICORE__.
#ifndef COLLC_ASCEND_DECLS_TENSOR_H
#define COLLC_ASCEND_DECLS_TENSOR_H

#include "collc/chip_tensor.hpp"

#endif  // COLLC_ASCEND_DECLS_TENSOR_H
