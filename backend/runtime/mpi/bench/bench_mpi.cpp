// bench_mpi.cpp - collc RMA credit-barrier protocols vs native MPI collectives.
//
// In one run (same process count, same osc/btl settings) times
//   barrier   : examples/barrier.cpp kernel      vs MPI_Barrier
//   broadcast : examples/broadcast.cpp kernel    vs MPI_Bcast      (root 0, f32)
//   allreduce : examples/allreduce.cpp kernel    vs MPI_Allreduce  (sum, f32, in place)
// for message sizes --min-bytes .. --max-bytes (x --factor, default 8 B .. 16 MiB, x4,
// plus the max itself). The collc kernels are the reference programs themselves,
// compiled in here (their namespaces renamed), on top of the same collc_mpi.hpp.
// Each collc size is run for every tile size in --tiles (256 = the protocol's kTileCount;
// a larger tile isolates the per-tile synchronisation cost).
//
// Method per (op, size, impl): verify once (prepare + op + check), warm-up, then R
// repetitions of { refill input (untimed); MPI_Barrier; t0; op; t1 }. A repetition's
// time is the max over ranks; we report the median (and min) over repetitions.
// R = clamp(budget / warm-up time, --min-reps, --max-reps), agreed by all ranks.
//
// Also reported: "b2b" = the same number of calls back to back with no barrier and no
// refill (mean per call, max over ranks), and for collc the op counters per call and the
// share of rank time spent inside wait() ("wait share", tile = first --tiles entry).
// "ratio" = collc(first tile) median / native median.
//
// Output: a human table on stdout (rank 0) and CSV rows (--csv FILE, appended).
//
//   mpirun ... -np 2 ./bench_mpi [--min-bytes 8] [--max-bytes 16777216] [--factor 4]
//        [--tiles 256,65536] [--budget-ms 800] [--min-reps 5] [--max-reps 2000]
//        [--warmup 3] [--ops barrier,broadcast,allreduce] [--csv out.csv]

#define COLLC_NO_MAIN
#include "../collc_mpi.hpp"

#define collc_program collc_barrier
#include "../examples/barrier.cpp"
#undef collc_program
#define collc_program collc_broadcast
#include "../examples/broadcast.cpp"
#undef collc_program
#define collc_program collc_allreduce
#include "../examples/allreduce.cpp"
#undef collc_program

#include <cmath>
#include <functional>
#include <sstream>

using namespace collc_mpi;

namespace {

struct Opts {
  long min_bytes = 8, max_bytes = 16L << 20, factor = 4;
  std::vector<long> tiles = {256, 65536};
  double budget_ms = 800;
  long min_reps = 5, max_reps = 2000, warmup = 3;
  std::string ops = "barrier,broadcast,allreduce";
  std::string csv;
};

struct Result {
  double median_us = 0, min_us = 0;
  double b2b_us = 0;  // back-to-back: mean per call of a barrier-free loop, max over ranks
  long reps = 0;
  bool ok = true;
  // collc only (per call, summed over ranks / averaged)
  double notifies = 0, waits = 0, polls_per_wait = 0, wait_frac = 0;
};

int g_me = 0, g_np = 1;

std::vector<long> split_longs(const std::string& s) {
  std::vector<long> v;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) v.push_back(strtol(t.c_str(), nullptr, 0));
  return v;
}

bool has_op(const Opts& o, const char* op) { return ("," + o.ops + ",").find(std::string(",") + op + ",") != std::string::npos; }

// Times `op` (collective on all ranks); `refill` runs untimed before each repetition.
Result measure(const Opts& o, const std::function<void()>& refill, const std::function<void()>& op,
               bool collc) {
  Result r;
  // warm-up (also estimates the cost of one call)
  double warm = 0;
  long nwarm = std::max(1L, o.warmup);
  for (long w = 0; w < nwarm; ++w) {
    refill();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    op();
    warm = MPI_Wtime() - t0;
    if (warm * 1e3 > o.budget_ms / 4) break;  // slow case: one warm-up is enough
  }
  double warm_max = 0;
  MPI_Allreduce(&warm, &warm_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long reps = long(o.budget_ms / 1e3 / std::max(warm_max, 1e-7));
  reps = std::max(o.min_reps, std::min(o.max_reps, reps));

  std::vector<double> dt(size_t(reps), 0.0), dtmax(size_t(reps), 0.0);
  reset_stats();
  for (long i = 0; i < reps; ++i) {
    refill();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    op();
    dt[size_t(i)] = MPI_Wtime() - t0;
  }
  MPI_Allreduce(dt.data(), dtmax.data(), int(reps), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::vector<double> sorted = dtmax;
  std::sort(sorted.begin(), sorted.end());
  r.median_us = (reps % 2 ? sorted[size_t(reps / 2)] : 0.5 * (sorted[size_t(reps / 2 - 1)] + sorted[size_t(reps / 2)])) * 1e6;
  r.min_us = sorted[0] * 1e6;
  r.reps = reps;
  const Stats timed = stats();  // op counters of the timed repetitions only

  // Back-to-back: the same number of calls with no barrier and no refill in between
  // (the usage the credit protocols are designed for); mean per call, max over ranks.
  refill();
  MPI_Barrier(MPI_COMM_WORLD);
  double b0 = MPI_Wtime();
  for (long i = 0; i < reps; ++i) op();
  double b2b = (MPI_Wtime() - b0) / double(reps), b2b_max = 0;
  MPI_Allreduce(&b2b, &b2b_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  r.b2b_us = b2b_max * 1e6;
  if (collc) {
    const Stats& s = timed;
    double total = 0;
    for (double d : dt) total += d;
    double loc[5] = {double(s.notifies), double(s.waits), double(s.polls), double(s.wait_ns) / 1e9, total}, sum[5];
    MPI_Allreduce(loc, sum, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    r.notifies = sum[0] / double(reps);
    r.waits = sum[1] / double(reps);
    r.polls_per_wait = sum[1] > 0 ? sum[2] / sum[1] : 0;
    r.wait_frac = sum[4] > 0 ? sum[3] / sum[4] : 0;
  }
  return r;
}

bool all_ok(bool mine) {
  int m = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&m, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

FILE* g_csv = nullptr;

void emit_csv(const char* op, long bytes, const char* impl, long tile, const Result& r) {
  if (g_me != 0 || !g_csv) return;
  fprintf(g_csv, "%d,%s,%ld,%s,%ld,%.3f,%.3f,%.3f,%ld,%d,%.1f,%.1f,%.2f,%.3f\n", g_np, op, bytes, impl, tile,
          r.median_us, r.min_us, r.b2b_us, r.reps, r.ok ? 1 : 0, r.notifies, r.waits, r.polls_per_wait,
          r.wait_frac);
  fflush(g_csv);
}

std::string fmt_bytes(long b) {
  char buf[32];
  if (b >= (1L << 20) && b % (1L << 20) == 0) snprintf(buf, sizeof buf, "%ld MiB", b >> 20);
  else if (b >= 1024 && b % 1024 == 0) snprintf(buf, sizeof buf, "%ld KiB", b >> 10);
  else snprintf(buf, sizeof buf, "%ld B", b);
  return buf;
}

// One collc measurement: declare/allocate the program's windows for `params`, verify
// one call with the program's own prepare/check, then time kernel calls.
template <class Setup, class Kernel, class Prepare, class Check, class ArgsT>
Result run_collc(const Opts& o, Params& params, ArgsT& a, Setup setup, Kernel kernel, Prepare prepare,
                 Check check, bool refill_each_rep) {
  Session s(params);
  setup(s, a);
  s.allocate();
  Ctx ctx;
  ctx.me = g_me;
  ctx.np = g_np;
  ctx.call = 0;
  set_call(0);
  Checker chk;
  prepare(ctx, a);
  kernel(ctx, a);
  check(ctx, a, chk);
  MPI_Barrier(MPI_COMM_WORLD);
  bool ok = s.nonzero_cells(nullptr) == 0 && chk.mismatches() == 0;
  std::function<void()> refill = [&] {
    if (refill_each_rep) prepare(ctx, a);
  };
  Result r = measure(o, refill, [&] { kernel(ctx, a); }, true);
  MPI_Barrier(MPI_COMM_WORLD);
  ok = ok && s.nonzero_cells(nullptr) == 0;
  r.ok = all_ok(ok);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  init(&argc, &argv);
  g_me = rank();
  g_np = size();
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (k == "--min-bytes") { o.min_bytes = strtol(v, nullptr, 0); ++i; }
    else if (k == "--max-bytes") { o.max_bytes = strtol(v, nullptr, 0); ++i; }
    else if (k == "--factor") { o.factor = strtol(v, nullptr, 0); ++i; }
    else if (k == "--tiles") { o.tiles = split_longs(v); ++i; }
    else if (k == "--budget-ms") { o.budget_ms = strtod(v, nullptr); ++i; }
    else if (k == "--min-reps") { o.min_reps = strtol(v, nullptr, 0); ++i; }
    else if (k == "--max-reps") { o.max_reps = strtol(v, nullptr, 0); ++i; }
    else if (k == "--warmup") { o.warmup = strtol(v, nullptr, 0); ++i; }
    else if (k == "--ops") { o.ops = v; ++i; }
    else if (k == "--csv") { o.csv = v; ++i; }
    else {
      if (g_me == 0) fprintf(stderr, "bench_mpi: unknown option %s\n", k.c_str());
      finalize();
      return 2;
    }
  }
  if (o.factor < 2 || o.min_bytes < 4 || o.max_bytes < o.min_bytes || o.tiles.empty() || o.min_reps < 1) {
    if (g_me == 0) fprintf(stderr, "bench_mpi: bad options\n");
    finalize();
    return 2;
  }
  if (g_me == 0 && !o.csv.empty()) {
    bool fresh = false;
    if (FILE* f = fopen(o.csv.c_str(), "r")) fclose(f);
    else fresh = true;
    g_csv = fopen(o.csv.c_str(), "a");
    if (g_csv && fresh)
      fprintf(g_csv, "np,op,bytes,impl,tile,median_us,min_us,b2b_us,reps,ok,notifies_per_call,waits_per_call,"
                     "polls_per_wait,wait_frac\n");
  }
  std::vector<long> sizes;
  for (long b = o.min_bytes; b <= o.max_bytes; b *= o.factor) sizes.push_back(b);
  if (sizes.back() != o.max_bytes) sizes.push_back(o.max_bytes);

  const char* osc = getenv("OMPI_MCA_osc");
  if (g_me == 0) {
    printf("> bench_mpi np=%d osc=%s oversubscribed=%s wait_spin=%ld wait_timeout_ms=%ld\n"
           "> time: median over barrier-separated reps of the max over ranks (us);"
           " b2b: barrier-free loop, mean per call, max over ranks (us)\n",
           g_np, osc && *osc ? osc : "default", oversubscribed() ? "yes" : "no", wait_spin(), wait_timeout_ms());
  }
  bool all_good = true;

  // ---- barrier ------------------------------------------------------------------------
  if (has_op(o, "barrier")) {
    Params p;
    collc_barrier::Args a{};
    Result rc = run_collc(o, p, a, collc_barrier::setup, collc_barrier::kernel, collc_barrier::prepare,
                          collc_barrier::check, false);
    Result rn = measure(o, [] {}, [] { MPI_Barrier(MPI_COMM_WORLD); }, false);
    all_good = all_good && rc.ok;
    emit_csv("barrier", 0, "collc", 0, rc);
    emit_csv("barrier", 0, "native", 0, rn);
    if (g_me == 0) {
      printf("\n### barrier (np=%d)\n\n", g_np);
      printf("| impl | median us | min us | b2b us | reps | notifies/call | waits/call | polls/wait | ok |\n"
             "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
      printf("| collc RMA | %.2f | %.2f | %.2f | %ld | %.0f | %.0f | %.1f | %s |\n", rc.median_us, rc.min_us,
             rc.b2b_us, rc.reps, rc.notifies, rc.waits, rc.polls_per_wait, rc.ok ? "yes" : "NO");
      printf("| MPI_Barrier | %.2f | %.2f | %.2f | %ld | | | | |\n", rn.median_us, rn.min_us, rn.b2b_us, rn.reps);
      printf("\nratio collc/native: %.2fx\n", rc.median_us / rn.median_us);
      fflush(stdout);
    }
  }

  // ---- broadcast / allreduce ------------------------------------------------------------
  for (int which = 0; which < 2; ++which) {
    const char* op = which == 0 ? "broadcast" : "allreduce";
    if (!has_op(o, op)) continue;
    if (g_me == 0) {
      printf("\n### %s f32 (np=%d)\n\n| bytes |", op, g_np);
      for (long t : o.tiles) printf(" collc tile=%ld us |", t);
      printf(" %s us | ratio | b2b collc tile=%ld | b2b native | wait share | ok |\n|---:|",
             which == 0 ? "MPI_Bcast" : "MPI_Allreduce", o.tiles[0]);
      for (size_t i = 0; i < o.tiles.size(); ++i) printf("---:|");
      printf("---:|---:|---:|---:|---:|---|\n");
      fflush(stdout);
    }
    for (long bytes : sizes) {
      const long numel = std::max(1L, bytes / 4);
      std::vector<Result> rcs;
      bool ok = true;
      for (long tile : o.tiles) {
        if (tile > numel && tile != o.tiles[0] && numel <= o.tiles[0]) {  // identical protocol as tiles[0]
          rcs.push_back(rcs.front());
          continue;
        }
        Params p;
        p.set("numel", std::to_string(numel));
        p.set("tile", std::to_string(tile));
        Result r;
        if (which == 0) {
          collc_broadcast::Args a{};
          r = run_collc(o, p, a, collc_broadcast::setup, collc_broadcast::kernel, collc_broadcast::prepare,
                        collc_broadcast::check, false);
        } else {
          collc_allreduce::Args a{};
          r = run_collc(o, p, a, collc_allreduce::setup, collc_allreduce::kernel, collc_allreduce::prepare,
                        collc_allreduce::check, true);
        }
        ok = ok && r.ok;
        emit_csv(op, bytes, "collc", tile, r);
        rcs.push_back(r);
      }
      // native, on a separate malloc'd (page-touched) buffer, same payload convention
      std::vector<float> buf(static_cast<size_t>(numel));
      auto fill = [&] {
        for (long i = 0; i < numel; ++i) buf[size_t(i)] = float(payload(0, g_me, i));
      };
      fill();
      bool nok = true;
      if (which == 0) {
        MPI_Bcast(buf.data(), int(numel), MPI_FLOAT, 0, MPI_COMM_WORLD);
        for (long i = 0; i < numel && nok; ++i) nok = buf[size_t(i)] == float(payload(0, 0, i));
      } else {
        MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(numel), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (long i = 0; i < numel && nok; ++i) {
          double want = 0;
          for (int r = 0; r < g_np; ++r) want += double(payload(0, r, i));
          nok = std::fabs(double(buf[size_t(i)]) - want) <= 1e-6 * std::max(1.0, want);
        }
      }
      Result rn = measure(
          o, which == 0 ? std::function<void()>([] {}) : std::function<void()>(fill),
          [&] {
            if (which == 0) MPI_Bcast(buf.data(), int(numel), MPI_FLOAT, 0, MPI_COMM_WORLD);
            else MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(numel), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
          },
          false);
      rn.ok = all_ok(nok);
      emit_csv(op, bytes, "native", 0, rn);
      ok = ok && rn.ok;
      all_good = all_good && ok;
      if (g_me == 0) {
        printf("| %s |", fmt_bytes(bytes).c_str());
        for (const Result& r : rcs) printf(" %.1f |", r.median_us);
        printf(" %.1f | %.1fx | %.1f | %.1f | %.0f%% | %s |\n", rn.median_us, rcs[0].median_us / rn.median_us,
               rcs[0].b2b_us, rn.b2b_us, 100.0 * rcs[0].wait_frac, ok ? "yes" : "NO");
        fflush(stdout);
      }
    }
  }
  if (g_csv) fclose(g_csv);
  finalize();
  return all_good ? 0 : 1;
}
