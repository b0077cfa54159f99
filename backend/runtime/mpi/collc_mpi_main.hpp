// collc_mpi_main.hpp - launcher `main()` for collc-generated MPI protocol programs.
//
// Include this LAST in a generated program, after it has defined, in namespace
// `collc_program`:
//
//   constexpr const char* kName;                       // collective name, for reports
//   struct Args;                                       // window handles, cell bases, params
//   void setup  (collc_mpi::Session& s, Args& a);      // read params, declare signals/buffers
//   void kernel (const collc_mpi::Ctx& c, const Args& a);                       // the protocol
//   void prepare(const collc_mpi::Ctx& c, const Args& a);                       // inputs of call c.call
//   void check  (const collc_mpi::Ctx& c, const Args& a, collc_mpi::Checker& k); // outputs of call c.call
// and (generated programs always; hand-written ones may omit it: a no-op stands in)
//   void begin_call(Args& a, int call);                // select call `call`'s instances
// (setup() allocates the instances of `per call` windows and value signals with
// Session::buffers_per_call / value_signal_per_call, sized by Session::calls()).
//
// Command line:
//   prog [--calls K] [--param name=value]... [--skew-us N] [--oracle FILE] [--help]
//     --calls K      back-to-back calls through ONE signal window, no barrier between
//                    them (default 1)
//     --param n=v    protocol parameter, read by setup() (unknown names are an error)
//     --skew-us N    before call c, rank r sleeps ((3c + 5r) mod np) * N microseconds so
//                    that ranks enter calls out of step (default 0: natural skew only)
//     --trace FILE   record this rank's notify/wait/fence/get/put events, written to
//                    FILE.rank<R> after the last call (collc run --target mpi --trace;
//                    also env COLLC_MPI_TRACE_FILE / COLLC_MPI_TRACE_CAPACITY)
//     --trace-capacity N  events a rank can record (default 65536; past it: dropped, reported)
//     --oracle FILE  the collective's meaning for this np, params and calls, as a table
//                    generated from collc_spec::meaning (collc_mpi::oracle, written by
//                    `collc run --target mpi`); without it a generated program stages no
//                    inputs and checks no outputs ("oracle":false in the report)
//
// Per call c (on each rank, independently): begin_call() selects call c's per-call
// instances, prepare() writes this rank's payload for call c into its own windows, kernel()
// runs the protocol, check() verifies the outputs.
// After the last call: MPI_Barrier, then every signal cell of every rank must read 0.
// Rank 0 prints ONE JSON line on stdout, e.g.
//   {"ok":true,"program":"barrier","np":4,"calls":3,"params":{},"mismatches":0,
//    "nonzero_cells":0,"win_model":"unified","osc":"sm",...}
// Exit code (all ranks): 0 ok, 1 wrong result or nonzero cell, 2 usage error;
// 3 = wait timeout and 4 = contract/MPI error come from MPI_Abort inside the runtime.

#ifndef COLLC_MPI_MAIN_HPP
#define COLLC_MPI_MAIN_HPP

#include "collc_mpi.hpp"

#include <unistd.h>

namespace collc_mpi {
namespace launcher {

inline void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s [--calls K] [--param name=value]... [--skew-us N] [--oracle FILE] [--trace FILE] [--trace-capacity N]\n"
          "env: COLLC_MPI_WAIT_TIMEOUT_MS (default 20000), COLLC_MPI_WAIT_SPIN,\n"
          "     COLLC_MPI_WAIT_YIELD_US, COLLC_MPI_WAIT_SLEEP_MAX_US, COLLC_MPI_JITTER_US\n",
          prog);
}

inline bool parse_long(const char* s, long min_ok, long* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < min_ok) return false;
  *out = v;
  return true;
}

}  // namespace launcher
}  // namespace collc_mpi

namespace collc_program {
// A hand-written program may have no begin_call(); a program's own (a non-template, exact
// match) wins over this one.
template <class A> inline void begin_call(A&, int) {}
}  // namespace collc_program

int main(int argc, char** argv) {
  using namespace collc_mpi;
  init(&argc, &argv);
  const int me = rank(), np = size();

  // ---- command line -----------------------------------------------------------------
  long calls = 1, skew_us = 0;
  std::string oracle_path, trace_file;
  long trace_capacity = 65536;
  // Tracing may also come from the environment (mpirun forwards COLLC_MPI_*).
  if (const char* e = getenv("COLLC_MPI_TRACE_FILE")) trace_file = e;
  if (const char* e = getenv("COLLC_MPI_TRACE_CAPACITY")) launcher::parse_long(e, 1, &trace_capacity);
  Params params;
  bool bad = false;
  for (int i = 1; i < argc && !bad; ++i) {
    std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) {
      bad = !launcher::parse_long(argv[++i], 1, &calls);
    } else if (a == "--skew-us" && i + 1 < argc) {
      bad = !launcher::parse_long(argv[++i], 0, &skew_us);
    } else if (a == "--oracle" && i + 1 < argc) {
      oracle_path = argv[++i];
    } else if (a == "--trace" && i + 1 < argc) {
      trace_file = argv[++i];
    } else if (a == "--trace-capacity" && i + 1 < argc) {
      bad = !launcher::parse_long(argv[++i], 1, &trace_capacity);
    } else if (a == "--param" && i + 1 < argc) {
      bad = !params.parse(argv[++i]);
    } else if (a.rfind("--param=", 0) == 0) {
      bad = !params.parse(a.substr(8));
    } else if (a == "--help" || a == "-h") {
      if (me == 0) launcher::usage(argv[0]);
      finalize();
      return 0;
    } else {
      bad = true;
    }
    if (bad && me == 0) fprintf(stderr, "collc_mpi: bad argument near \"%s\"\n", a.c_str());
  }
  if (bad) {
    if (me == 0) launcher::usage(argv[0]);
    finalize();
    return 2;
  }

  // ---- the collective's meaning (a table generated from collc_spec::meaning) -----------
  if (!oracle_path.empty()) {
    if (!oracle::load(oracle_path.c_str()) || oracle::table().calls < calls) {
      if (me == 0)
        fprintf(stderr, "collc_mpi: --oracle %s: not a table for np %d and %ld calls\n", oracle_path.c_str(), np,
                calls);
      finalize();
      return 2;
    }
  }

  // ---- declare + allocate symmetric objects ------------------------------------------
  Session session(params);
  session.set_calls(calls);
  collc_program::Args args{};
  collc_program::setup(session, args);
  std::vector<std::string> unused = params.unused();
  if (!unused.empty()) {
    if (me == 0)
      for (const auto& u : unused)
        fprintf(stderr, "collc_mpi: unknown --param %s for program %s\n", u.c_str(),
                collc_program::kName);
    finalize();
    return 2;
  }
  if (!trace_file.empty()) trace_start(trace_file, size_t(trace_capacity));
  session.allocate();

  // ---- K back-to-back calls, no barrier in between ------------------------------------
  Checker checker;
  Ctx ctx;
  ctx.me = me;
  ctx.np = np;
  ctx.comm = MPI_COMM_WORLD;
  reset_stats();
  const double t0 = MPI_Wtime();
  for (long c = 0; c < calls; ++c) {
    ctx.call = int(c);
    set_call(int(c));
    if (skew_us > 0) usleep(useconds_t(((3 * c + 5 * me) % np) * skew_us));
    collc_program::begin_call(args, int(c));
    collc_program::prepare(ctx, args);
    collc_program::kernel(ctx, args);
    lag_before_check();
    collc_program::check(ctx, args, checker);
  }
  const double t1 = MPI_Wtime();
  trace_write();

  // ---- every cell back at 0 -----------------------------------------------------------
  COLLC_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));  // all epilogues (flushed) have landed
  std::vector<std::string> cells;
  long nonzero = session.nonzero_cells(&cells);
  if (nonzero) {
    std::string line;
    for (size_t i = 0; i < cells.size() && i < 16; ++i) line += (i ? " " : "") + cells[i];
    fprintf(stderr, "collc_mpi: rank=%d NONZERO signal cells after %ld calls: %s\n", me, calls,
            line.c_str());
  }

  // ---- aggregate report on rank 0 ------------------------------------------------------
  const Stats& s = stats();
  long local[2] = {checker.mismatches(), nonzero}, total[2] = {0, 0};
  COLLC_MPI_CHECK(MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  unsigned long long ops[7] = {s.notifies, s.waits, s.polls, s.gets, s.puts, s.bytes_get + s.bytes_put,
                               s.wait_ns},
                     ops_sum[7];
  COLLC_MPI_CHECK(MPI_Reduce(ops, ops_sum, 7, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  double wall = t1 - t0, wall_max = 0;
  COLLC_MPI_CHECK(MPI_Reduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  const bool ok = total[0] == 0 && total[1] == 0;
  if (me == 0) {
    const char* osc = getenv("OMPI_MCA_osc");
    printf("{\"ok\":%s,\"program\":\"%s\",\"np\":%d,\"calls\":%ld,\"params\":%s,"
           "\"mismatches\":%ld,\"nonzero_cells\":%ld,\"win_model\":\"%s\",\"osc\":\"%s\","
           "\"wait_timeout_ms\":%ld,\"oversubscribed\":%s,\"wait_spin\":%ld,\"skew_us\":%ld,\"wall_ms\":%.3f,\"notifies\":%llu,"
           "\"waits\":%llu,\"polls\":%llu,\"gets\":%llu,\"puts\":%llu,\"rma_bytes\":%llu,"
           "\"wait_ms\":%.3f,\"oracle\":%s}\n",
           ok ? "true" : "false", collc_program::kName, np, calls, params.json().c_str(), total[0],
           total[1], session.model_name(), osc && *osc ? osc : "default", wait_timeout_ms(),
           oversubscribed() ? "true" : "false", wait_spin(), skew_us,
           wall_max * 1e3, ops_sum[0], ops_sum[1], ops_sum[2], ops_sum[3], ops_sum[4], ops_sum[5],
           double(ops_sum[6]) / 1e6, oracle::table().loaded ? "true" : "false");
    fflush(stdout);
  }
  session.release();
  finalize();
  return ok ? 0 : 1;
}

#endif  // COLLC_MPI_MAIN_HPP
