// collc/pto_comm_ascend.hpp — the Ascend branch of collc/pto_comm.hpp: the real pto-isa and
// simpler headers plus collc's thin adapter (collc::Tile / TLOAD / TSTORE / TADD / ..., and
// CommRemotePtr) on top of pto::Tile / pto::GlobalTensor. Included by collc/pto_comm.hpp under
// __CCE_AICORE__ or __CPU_SIM; a pypto template (`collc emit --target ascend --abi pypto
// -o kernel.cpp.in`) carries this file's text inline, so the rendered kernel needs nothing of
// collc on its include path. See collc/pto_comm.hpp for the surface the generator may use.

#ifndef COLLC_PTO_COMM_ASCEND_HPP
#define COLLC_PTO_COMM_ASCEND_HPP

#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/comm/comm_types.hpp>
#include <pto/comm/pto_comm_inst.hpp>
// simpler's runtime headers: CommContext (rankId, rankNum, windowsIn[64], ...) and the
// logical-SPMD block intrinsics get_block_idx(args) / get_block_num(args).
#include "platform_comm/comm_context.h"
#include "intrinsic.h"

#ifndef __gm__
#define __gm__
#endif

// Same byte offset inside pe's window (identical to the helper in pypto's kernels).
template <typename T>
AICORE inline __gm__ T* CommRemotePtr(__gm__ CommContext* ctx, __gm__ T* local_ptr, int pe) {
    uint64_t local_base = ctx->windowsIn[ctx->rankId];
    uint64_t offset = reinterpret_cast<uint64_t>(local_ptr) - local_base;
    return reinterpret_cast<__gm__ T*>(ctx->windowsIn[pe] + offset);
}

namespace collc {

// A 1 x N vector tile placed at a fixed UB byte address (TASSIGN), valid length set per op.
template <typename T, int32_t Capacity>
class Tile {
public:
    using value_type = T;
    static constexpr int32_t kCapacity = Capacity;
    using Data = pto::Tile<pto::TileType::Vec, T, 1, Capacity, pto::BLayout::RowMajor, -1, -1>;

    AICORE explicit Tile(uint32_t ub_addr) : tile_(1, Capacity), ub_addr_(ub_addr) { TASSIGN(tile_, ub_addr); }
    AICORE uint32_t ub_addr() const { return ub_addr_; }
    AICORE Data& raw() { return tile_; }
    AICORE const Data& raw() const { return tile_; }
    AICORE void set_valid(int32_t len) { tile_.SetValidShape(1, len); }

private:
    Data tile_;
    uint32_t ub_addr_;
};

namespace detail {
using ShapeDyn = pto::Shape<pto::DYNAMIC, pto::DYNAMIC, pto::DYNAMIC, pto::DYNAMIC, pto::DYNAMIC>;
using StrideDyn = pto::Stride<pto::DYNAMIC, pto::DYNAMIC, pto::DYNAMIC, pto::DYNAMIC, pto::DYNAMIC>;
template <typename T>
using Global = pto::GlobalTensor<T, ShapeDyn, StrideDyn, pto::Layout::ND>;
constexpr int kTransferAlignmentBytes = 32;
// MTE transfers move whole 32-byte blocks: round the element count up (may read past the
// end of the source; the collc launcher pads every window buffer to 64 bytes).
template <typename T>
AICORE inline int transfer_len(int32_t len) {
    return ((len * static_cast<int>(sizeof(T)) + kTransferAlignmentBytes - 1) / kTransferAlignmentBytes) *
           (kTransferAlignmentBytes / static_cast<int>(sizeof(T)));
}
}  // namespace detail

// The adapter serialises conservatively with pipe_barrier(PIPE_ALL) after each step instead
// of fine-grained set_flag/wait_flag pairs: correct first, fast later.
template <typename T, int32_t N>
AICORE inline void TLOAD(Tile<T, N>& dst, __gm__ const T* src, int32_t len) {
    const int tl = detail::transfer_len<T>(len);
    detail::ShapeDyn shape(1, 1, 1, 1, tl);
    detail::StrideDyn stride(tl, tl, tl, tl, 1);
    detail::Global<T> g(const_cast<__gm__ T*>(src), shape, stride);
    dst.set_valid(tl);
    pto::TLOAD(dst.raw(), g);
    pipe_barrier(PIPE_ALL);
    dst.set_valid(len);
}

template <typename T, int32_t N>
AICORE inline void TSTORE(__gm__ T* dst, Tile<T, N>& src, int32_t len) {
    detail::ShapeDyn shape(1, 1, 1, 1, len);
    detail::StrideDyn stride(len, len, len, len, 1);
    detail::Global<T> g(dst, shape, stride);
    src.set_valid(len);
    pto::TSTORE(g, src.raw());
    pipe_barrier(PIPE_ALL);
}

template <typename T, int32_t N>
AICORE inline void TMOV(Tile<T, N>& dst, Tile<T, N>& src) {
    pto::TMOV(dst.raw(), src.raw());
    pipe_barrier(PIPE_ALL);
}

// Length-explicit forms (see the CPU runtime): set the valid lengths, then the plain op.
template <typename T, int32_t N, int32_t M>
AICORE inline void TMOV(Tile<T, N>& dst, Tile<T, M>& src, int32_t len) {
    src.set_valid(len);
    dst.set_valid(len);
    pto::TMOV(dst.raw(), src.raw());
    pipe_barrier(PIPE_ALL);
}
template <typename T, int32_t N>
AICORE inline void TSTORE_N(__gm__ T* dst, Tile<T, N>& src, int32_t len) {
    TSTORE(dst, src, len);
}

// Offset forms: a tile slice [off, off + len) is a tile placed at ub_addr + off * sizeof(T).
template <typename T, int32_t N>
AICORE inline Tile<T, N> at(Tile<T, N>& t, int32_t off) {
    return Tile<T, N>(t.ub_addr() + static_cast<uint32_t>(off) * sizeof(T));
}
template <typename T, int32_t N>
AICORE inline void TLOAD_AT(Tile<T, N>& dst, int32_t off, __gm__ const T* src, int32_t len) {
    Tile<T, N> v = at(dst, off);
    TLOAD(v, src, len);
}
template <typename T, int32_t N>
AICORE inline void TSTORE_AT(__gm__ T* dst, Tile<T, N>& src, int32_t off, int32_t len) {
    Tile<T, N> v = at(src, off);
    TSTORE(dst, v, len);
}
template <typename T, int32_t N, int32_t M>
AICORE inline void TMOV_AT(Tile<T, N>& dst, int32_t doff, Tile<T, M>& src, int32_t soff, int32_t len) {
    Tile<T, N> d = at(dst, doff);
    Tile<T, M> s = at(src, soff);
    TMOV(d, s, len);
}
// The binary tile ops TADD/TMUL/TMAX/TMIN: one helper (the valid lengths when given, pto's
// instruction, the barrier); COLLC_ASCEND_BINARY names pto's instruction and declares the
// plain, length-explicit and offset (`_AT`) forms over it.
namespace detail {
template <typename Op, typename T, int32_t N, int32_t M1, int32_t M2>
AICORE inline void binary(Tile<T, N>& dst, Tile<T, M1>& a, Tile<T, M2>& b, int32_t len) {
    if (len >= 0) {
        a.set_valid(len);
        b.set_valid(len);
        dst.set_valid(len);
    }
    Op::run(dst.raw(), a.raw(), b.raw());
    pipe_barrier(PIPE_ALL);
}
}  // namespace detail
#define COLLC_ASCEND_BINARY(NAME)                                                                              \
    namespace detail {                                                                                         \
    struct NAME##_op {                                                                                         \
        template <typename D, typename A, typename B>                                                          \
        AICORE static void run(D& d, A& a, B& b) {                                                             \
            pto::NAME(d, a, b);                                                                                \
        }                                                                                                      \
    };                                                                                                         \
    }                                                                                                          \
    template <typename T, int32_t N>                                                                           \
    AICORE inline void NAME(Tile<T, N>& dst, Tile<T, N>& a, Tile<T, N>& b) {                                   \
        detail::binary<detail::NAME##_op>(dst, a, b, -1);                                                      \
    }                                                                                                          \
    template <typename T, int32_t N, int32_t M1, int32_t M2>                                                   \
    AICORE inline void NAME(Tile<T, N>& dst, Tile<T, M1>& a, Tile<T, M2>& b, int32_t len) {                    \
        detail::binary<detail::NAME##_op>(dst, a, b, len);                                                     \
    }                                                                                                          \
    template <typename T, int32_t N, int32_t M1, int32_t M2>                                                   \
    AICORE inline void NAME##_AT(Tile<T, N>& dst, int32_t doff, Tile<T, M1>& a, int32_t aoff, Tile<T, M2>& b, \
                                 int32_t boff, int32_t len) {                                                  \
        Tile<T, N> d = at(dst, doff);                                                                          \
        Tile<T, M1> x = at(a, aoff);                                                                           \
        Tile<T, M2> y = at(b, boff);                                                                           \
        detail::binary<detail::NAME##_op>(d, x, y, len);                                                       \
    }
COLLC_ASCEND_BINARY(TADD)
COLLC_ASCEND_BINARY(TMUL)
COLLC_ASCEND_BINARY(TMAX)
COLLC_ASCEND_BINARY(TMIN)
#undef COLLC_ASCEND_BINARY

}  // namespace collc

#define COLLC_CHECK(cond, what) ((void)0)
// `calls <= N`: a kernel cannot count its launches, so on Ascend the host enforces the bound
// (it must not launch call N + 1 on one signal buffer); the CPU runtime refuses it.
#define COLLC_CALLS_BOUND(max, what) ((void)0)
#define COLLC_TRACE_FENCE() ((void)0)
#define COLLC_TRACE_GET(ptr, len) ((void)0)
#define COLLC_TRACE_PUT(ptr, len) ((void)0)

#endif  // COLLC_PTO_COMM_ASCEND_HPP
