// Unit test of the CPU runtime API surface the reference kernels do not exercise: TTEST,
// NotifyOp::Set, every WaitCmp, the compile-time TNOTIFY<op> form, int32 and float tiles with
// TMUL/TMAX/TMIN/TMOV, CommRemotePtr arithmetic, block intrinsics outside a launcher run.
// Single-threaded, no launcher: TWAIT is only called when already satisfied.

#include <cstdio>

#include "collc/pto_comm.hpp"

namespace {
int g_failures = 0;
void expect(bool cond, const char* what) {
    std::printf("%s unit: %s\n", cond ? "PASS" : "FAIL", what);
    if (!cond) ++g_failures;
}
}  // namespace

int main() {
    using pto::comm::NotifyOp;
    using pto::comm::Signal;
    using pto::comm::WaitCmp;

    alignas(64) int32_t cells[4] = {0, 0, 0, 0};
    Signal s(&cells[1]);

    pto::comm::TNOTIFY(s, 5, NotifyOp::AtomicAdd);
    pto::comm::TNOTIFY(s, -2, NotifyOp::AtomicAdd);
    expect(cells[1] == 3 && cells[0] == 0 && cells[2] == 0, "TNOTIFY AtomicAdd +5 -2 touches one cell");
    pto::comm::TNOTIFY(s, 7, NotifyOp::Set);
    expect(cells[1] == 7, "TNOTIFY Set 7");
    pto::comm::TNOTIFY<NotifyOp::AtomicAdd>(s, 1);
    expect(cells[1] == 8, "TNOTIFY<AtomicAdd> compile-time form");

    expect(pto::comm::TTEST(s, 8, WaitCmp::EQ) && !pto::comm::TTEST(s, 9, WaitCmp::EQ), "TTEST EQ");
    expect(pto::comm::TTEST(s, 9, WaitCmp::NE) && !pto::comm::TTEST(s, 8, WaitCmp::NE), "TTEST NE");
    expect(pto::comm::TTEST(s, 7, WaitCmp::GT) && !pto::comm::TTEST(s, 8, WaitCmp::GT), "TTEST GT");
    expect(pto::comm::TTEST(s, 8, WaitCmp::GE) && !pto::comm::TTEST(s, 9, WaitCmp::GE), "TTEST GE");
    expect(pto::comm::TTEST(s, 9, WaitCmp::LT) && !pto::comm::TTEST(s, 8, WaitCmp::LT), "TTEST LT");
    expect(pto::comm::TTEST(s, 8, WaitCmp::LE) && !pto::comm::TTEST(s, 7, WaitCmp::LE), "TTEST LE");
    pto::comm::TWAIT(s, 8, WaitCmp::GE);  // satisfied: returns at once
    pto::comm::TWAIT(s, 8, WaitCmp::EQ);
    expect(true, "TWAIT on a satisfied cell returns");

    // CommRemotePtr: same offset in the other window.
    alignas(64) static uint8_t win0[256];
    alignas(64) static uint8_t win1[256];
    CommContext ctx{};
    ctx.rankId = 1;
    ctx.rankSize = 2;
    ctx.windowsIn[0] = reinterpret_cast<uint64_t>(win0);
    ctx.windowsIn[1] = reinterpret_cast<uint64_t>(win1);
    float* local = reinterpret_cast<float*>(win1 + 64) + 3;
    float* remote = CommRemotePtr(&ctx, local, 0);
    expect(reinterpret_cast<uint8_t*>(remote) == win0 + 64 + 3 * sizeof(float), "CommRemotePtr offset mapping");
    expect(CommRemotePtr(&ctx, local, 1) == local, "CommRemotePtr to self is the identity");

    expect(get_block_idx() == 0 && get_block_num() == 1, "block intrinsics outside a run: block 0 of 1");

    // Tiles.
    const float fa[5] = {1, -2, 3, -4, 5};
    const float fb[5] = {2, 2, -1, -1, 0.5f};
    collc::Tile<float, 8> ta(0x0), tb(0x100), tc(0x200);
    collc::TLOAD(ta, fa, 5);
    collc::TLOAD(tb, fb, 5);
    float out[5] = {};
    collc::TMUL(tc, ta, tb);
    collc::TSTORE(out, tc, 5);
    expect(out[0] == 2 && out[1] == -4 && out[2] == -3 && out[3] == 4 && out[4] == 2.5f && tc.valid() == 5, "f32 TMUL");
    collc::TMAX(tc, ta, tb);
    collc::TSTORE(out, tc, 5);
    expect(out[0] == 2 && out[1] == 2 && out[2] == 3 && out[3] == -1 && out[4] == 5, "f32 TMAX");
    collc::TMIN(tc, ta, tb);
    collc::TSTORE(out, tc, 3);
    expect(out[0] == 1 && out[1] == -2 && out[2] == -1, "f32 TMIN, partial TSTORE");

    const int32_t ia[3] = {7, 8, 9};
    const int32_t ib[3] = {1, 2, 3};
    collc::Tile<int32_t, 4> xa(0x0), xb(0x40), xc(0x80);
    collc::TLOAD(xa, ia, 3);
    collc::TLOAD(xb, ib, 3);
    collc::TADD(xc, xa, xb);
    collc::TMOV(xa, xc);
    int32_t iout[3] = {};
    collc::TSTORE(iout, xa, 3);
    expect(iout[0] == 8 && iout[1] == 10 && iout[2] == 12 && xa.valid() == 3, "int32 TADD + TMOV");

    // Fences and pipe intrinsics compile and run.
    pipe_barrier(PIPE_ALL);
    dsb(DSB_DDR);
    dcci(cells, ENTIRE_DATA_CACHE);
    dcci(cells, SINGLE_CACHE_LINE, CACHELINE_OUT);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    expect(true, "pipe_barrier / dsb / dcci / set_flag / wait_flag");

    return g_failures == 0 ? 0 : 1;
}
