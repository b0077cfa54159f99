// CCE compiler builtins as seen by AI Core kernel code (declarations for a g++ syntax check).
//
// Sources (public):
//   * hw-native-sys/pto-isa (mirror zouzias/pto-isa-mirror) include/pto/common/cpu_stub.hpp:
//     pipe_t and PIPE_S..PIPE_FIX, pipe_barrier(pipe_t), set_flag/wait_flag(pipe_t, pipe_t,
//     event), EVENT_ID0..7, mem_dsb_t with DSB_DDR/DSB_ALL/DSB_UB, dsb(mem_dsb_t),
//     cache_line_t with SINGLE_CACHE_LINE/ENTIRE_DATA_CACHE, dcci_dst_t with CACHELINE_OUT,
//     dcci(addr, cache_line) and dcci(addr, cache_line, dst); the empty qualifiers __gm__,
//     __aicore__, AICORE, __ubuf__ of its CPU build.
//   * pto-isa's own kernel code spells the cache-line operand qualified, on the NPU and in
//     the CPU simulation alike: `dcci((__gm__ void*)channels, cache_line_t::ENTIRE_DATA_CACHE)`
//     (include/pto/comm/async/sdma/sdma_async_detail_post.hpp), `dcci(ptr,
//     cache_line_t::SINGLE_CACHE_LINE)` (include/pto/comm/a2a3/TNotify.hpp). In the CPU
//     simulation (`-D__CPU_SIM`) cpu_stub.hpp declares `struct cache_line_t { static
//     constexpr int SINGLE_CACHE_LINE, ENTIRE_DATA_CACHE, CACHELINE_OUT; }` and `struct
//     dcci_dst_t { static constexpr int CACHELINE_OUT; }`: there the bare names are not
//     declared at all. Only the qualified spelling builds in both modes, so cache_line_t and
//     dcci_dst_t are scoped enums here (a bare `ENTIRE_DATA_CACHE` or an int is rejected).
//     `dsb(DSB_DDR)` and `PIPE_ALL` are unqualified in both.
// Not modelled: the __gm__ / __ubuf__ address spaces (empty here, as in pto-isa's CPU stub).
#ifndef COLLC_ASCEND_DECLS_CCE_BUILTINS_HPP
#define COLLC_ASCEND_DECLS_CCE_BUILTINS_HPP

#include <cstddef>
#include <cstdint>
#include <type_traits>

#define __gm__
#define __ubuf__
#define __aicore__
#define __global__
#define AICORE
#define PTO_INST
#define PTO_INTERNAL

enum pipe_t { PIPE_S = 0, PIPE_V = 1, PIPE_MTE1 = 2, PIPE_MTE2 = 3, PIPE_MTE3 = 4, PIPE_M = 5, PIPE_ALL = 6, PIPE_FIX = 7 };
enum event_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
enum mem_dsb_t { DSB_ALL, DSB_DDR, DSB_UB };
enum class cache_line_t { SINGLE_CACHE_LINE, ENTIRE_DATA_CACHE, CACHELINE_OUT };
enum class dcci_dst_t { CACHELINE_ALL, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

void pipe_barrier(pipe_t pipe);
void set_flag(pipe_t src, pipe_t dst, event_t event);
void wait_flag(pipe_t src, pipe_t dst, event_t event);
void dsb(mem_dsb_t kind);
void dcci(const volatile void* addr, cache_line_t line);
void dcci(const volatile void* addr, cache_line_t line, dcci_dst_t dst);

#endif  // COLLC_ASCEND_DECLS_CCE_BUILTINS_HPP
