// collc/pto_comm.hpp — the ONE include of every collc-generated kernel.
//
//   #include "collc/pto_comm.hpp"
//
// CPU builds (everything compiled in this repository): the collc CPU runtime,
// collc/pto_comm_cpu.hpp. Ranks are threads, windows are shared host memory, signal cells are
// std::atomic<int32_t>. That file documents the API and its memory model in full.
//
// Ascend builds (__CCE_AICORE__ defined by the CCE compiler) and pto-isa's CPU simulation
// (__CPU_SIM, the a2a3sim build of pypto's kernels, where TNOTIFY / TWAIT / TLOAD / ... are
// pto-isa's own CPU implementations): the real pto-isa headers plus a
// thin adapter that gives the collc data-tile API (collc::Tile / TLOAD / TSTORE / TADD / ...)
// and CommRemotePtr on top of pto::Tile / pto::GlobalTensor. THE ASCEND BRANCH IS BEST EFFORT:
// there is no CCE toolchain here, so it has never been built by ccec. It follows the shapes of
// pypto's host-collective kernels (kernel.cpp.in in pypto/runtime/builtins/collectives) and of
// pto-isa's include/pto/comm headers, but expect to fix details on first contact with ccec.
// What IS checked without the toolchain: every example's Ascend build compiles under g++
// -fsyntax-only against declarations of the public API it uses (backend/runtime/ascend_decls/,
// each citing its source; backend/tests/ascend_syntax.rs), so C++ type errors and pto-isa's
// compile-time constraints (e.g. 32-byte aligned tile rows) fail the tests; and, with
// PTO_ISA_ROOT and SIMPLER_ROOT set, against the real headers in the CPU simulation
// (backend/tests/ascend_real.rs).
//
// The generator may use exactly this surface (identical spelling on both targets):
//
//   kernel entry   extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args)
//   context        CommContext (fields rankId and windowsIn[] ONLY; the Ascend struct is
//                  simpler's CommContext, which names the rank count rankNum, not rankSize,
//                  so pass the rank count as a scalar argument instead)
//                  CommRemotePtr(ctx, local_ptr, pe)
//   multicore      get_block_idx(args), get_block_num(args)
//   signals        pto::comm::Signal sig(cell_ptr);
//                  pto::comm::TNOTIFY(sig, value, pto::comm::NotifyOp::AtomicAdd | Set);
//                  pto::comm::TWAIT(sig, expected, pto::comm::WaitCmp::GE | EQ | ...);
//                  pto::comm::TTEST(sig, expected, cmp) -> bool
//   fences         pipe_barrier(PIPE_ALL); dsb(DSB_DDR); dcci(ptr, cache_line_t::ENTIRE_DATA_CACHE)
//                  (qualified: pto-isa's CPU simulation declares no bare ENTIRE_DATA_CACHE)
//   data tiles     collc::Tile<T, N> t(ub_byte_addr);   T = float | int32_t
//                  collc::TLOAD(t, gm_src, len); collc::TSTORE(gm_dst, t, len);
//                  collc::TADD / TMUL / TMAX / TMIN (dst, a, b); collc::TMOV(dst, src)
//                  length-explicit forms (generator): TADD / TMUL / TMAX / TMIN (dst, a, b, len),
//                  TMOV(dst, src, len), TSTORE_N(gm_dst, t, len): elements [0, len) whatever
//                  the tiles' valid lengths; dst.valid = len
//                  offset forms (tile slices, flat multi-dimensional tiles): TLOAD_AT(t, off,
//                  gm, len), TSTORE_AT(gm, t, off, len), TMOV_AT(d, doff, s, soff, len),
//                  TADD_AT / TMUL_AT / TMAX_AT / TMIN_AT (d, doff, a, aoff, b, boff, len)
//   checks         COLLC_CHECK(cond, "what"): index/rank/slice checks of generated code (CPU:
//                  a loud kernel error; Ascend: compiled out)
//                  COLLC_CALLS_BOUND(N, "what"): `calls <= N` (CPU: call N + 1 of a run is a
//                  loud kernel error; Ascend: compiled out, the host must not launch it)
//
// Everything else in either implementation is private.

#ifndef COLLC_PTO_COMM_HPP
#define COLLC_PTO_COMM_HPP

#include <cstdint>

#if defined(__CCE_AICORE__) || defined(__CPU_SIM)
// ============================================================================================
// Ascend (not built by ccec here: syntax-checked against backend/runtime/ascend_decls/) and
// pto-isa's CPU simulation (-D__CPU_SIM with the real pto-isa and simpler include paths).
// ============================================================================================
#include "collc/pto_comm_ascend.hpp"

#else
// ============================================================================================
// CPU: the collc runtime.
// ============================================================================================
#include "collc/pto_comm_cpu.hpp"
#endif

#endif  // COLLC_PTO_COMM_HPP
