// simpler's logical-SPMD block intrinsics, declared for a g++ syntax check.
//
// Source (public): hw-native-sys/simpler `intrinsic.h` (included by pypto's host allreduce
// kernel after the qualifier fallbacks):
//   static __aicore__ inline int32_t get_block_idx(__gm__ int64_t *args);
//   static __aicore__ inline int32_t get_block_num(__gm__ int64_t *args);
// (both read the task's LocalContext through a fixed args slot).
#ifndef COLLC_ASCEND_DECLS_INTRINSIC_H
#define COLLC_ASCEND_DECLS_INTRINSIC_H

#include <cstdint>

#include "cce_builtins.hpp"

__aicore__ int32_t get_block_idx(__gm__ int64_t* args);
__aicore__ int32_t get_block_num(__gm__ int64_t* args);

#endif  // COLLC_ASCEND_DECLS_INTRINSIC_H
