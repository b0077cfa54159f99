// collc/chip_tensor.hpp — simpler's ChipTensor, the tensor descriptor a pypto host collective
// builtin receives in its args block (`args[i]` is a `__gm__ ChipTensor*`), as far as collc's
// pypto-ABI kernels use it (`collc emit --target ascend --abi pypto`, docs/pypto-abi.md).
//
// Source (public): hw-native-sys/simpler src/common/task_interface/tensor.h, `struct
// alignas(64) ChipTensor` (128 bytes, 2 cache lines; named `Tensor` before simpler's
// role-based rename, same layout, which is what pypto's kernel.cpp.in templates still spell):
//   cache line 1: PTOBufferHandle buffer {uint64_t addr (bytes); uint64_t size (bytes)};
//                 PTO2TaskId owner_task_id; uint64_t start_offset (ELEMENT offset of the view
//                 origin from buffer.addr); int32_t version; uint32_t ndims; DataType dtype;
//                 bool manual_dep; bool is_contiguous; AddressSpace address_space;
//                 uint32_t shapes[MAX_TENSOR_DIMS] (MAX_TENSOR_DIMS = 5)
//   cache line 2: uint64_t extent_elem_cache; uint32_t strides[MAX_TENSOR_DIMS]; uint8_t _pad_cl2[36]
// A kernel's data pointer is `reinterpret_cast<__gm__ T*>(t->buffer.addr) + t->start_offset`
// and its element count the product of shapes[0 .. ndims) (pypto's kernels, e.g.
// python/pypto/runtime/builtins/collectives/allreduce/templates/kernel.cpp.in).
// DataType and AddressSpace are one-byte enums there; collc kernels read neither, so their
// enumerators are not declared here. The CPU shim (collc/pypto_shim.hpp) builds these.
#ifndef COLLC_CHIP_TENSOR_HPP
#define COLLC_CHIP_TENSOR_HPP

#include <cstddef>
#include <cstdint>

struct PTOBufferHandle {
    uint64_t addr;  // device memory address (bytes)
    uint64_t size;  // total buffer size in bytes
};

struct PTO2TaskId {
    uint64_t raw;
};

enum class DataType : uint8_t;
enum class AddressSpace : uint8_t;

constexpr uint32_t MAX_TENSOR_DIMS = 5;

struct alignas(64) ChipTensor {
    PTOBufferHandle buffer;
    PTO2TaskId owner_task_id;
    uint64_t start_offset;
    int32_t version;
    uint32_t ndims;
    DataType dtype;
    bool manual_dep;
    bool is_contiguous;
    AddressSpace address_space;
    uint32_t shapes[MAX_TENSOR_DIMS];

    uint64_t extent_elem_cache;
    uint32_t strides[MAX_TENSOR_DIMS];
    uint8_t _pad_cl2[36];
};

static_assert(sizeof(ChipTensor) == 128, "ChipTensor is two cache lines");
static_assert(offsetof(ChipTensor, start_offset) == 24, "ChipTensor layout");
static_assert(offsetof(ChipTensor, ndims) == 36, "ChipTensor layout");
static_assert(offsetof(ChipTensor, shapes) == 44, "ChipTensor layout");
static_assert(offsetof(ChipTensor, strides) == 72, "ChipTensor layout");

#endif  // COLLC_CHIP_TENSOR_HPP
