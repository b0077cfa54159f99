// bench_server.cpp - a persistent MPI timing server for benches/benches/mpi.rs.
//
// The Rust bench (criterion) generates collc MPI programs from .coll files with
// `collc_backend::mpi::emit`, splices them in at the marker line below (each inside its
// own namespace, with COLLC_NO_MAIN), builds this file with mpicxx and starts ONE
// `mpirun -np P` of it per process count. Rank 0 reads commands from stdin (mpirun
// forwards stdin to rank 0), broadcasts them, every rank executes them, rank 0 answers on
// stdout. So collc's generated protocols and the native MPI collectives are timed in the
// same job, with the same process count and MCA settings, one after the other.
//
// Commands (one line each; answers are one line):
//   oracle LEN       -> "ok" | "fail WHY"   the next LEN bytes on stdin are the oracle table
//                                           of the next collc case (collc_backend::mpi::table
//                                           of the case's protocol, params, np, 1 call)
//   prep CASE BYTES [NAME=VALUE]...
//                    -> "ok" | "fail WHY"   make CASE current at BYTES with these params
//                                           (windows allocated, one call run and checked:
//                                           outputs against the oracle table and, for
//                                           collc, every credit cell back at 0)
//   time ITERS       -> "t SECONDS"          ITERS repetitions of {refill (untimed);
//                                           MPI_Barrier; t0; op; t1}; SECONDS = sum over
//                                           repetitions of the max over ranks of t1 - t0
//   b2b ITERS        -> "t SECONDS"          ITERS ops back to back, no barrier, no refill
//                                           (max over ranks of the whole loop)
//   quit
// Cases: native_barrier, native_bcast, native_allreduce (MPI_Barrier, MPI_Bcast root 0,
// MPI_Allreduce sum in place, f32) and the collc_* cases registered by the spliced code.

#define COLLC_NO_MAIN
#include "collc_mpi.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bench {

/// One prepared (operation, size).
struct Case {
  virtual ~Case() = default;
  virtual void refill() {}            // untimed, before each timed repetition
  virtual void run() = 0;             // the timed collective
  virtual bool verify(std::string* why) = 0;  // one checked call (collective)
};

using KV = std::vector<std::pair<std::string, int64_t>>;
using Factory = std::function<std::unique_ptr<Case>(int64_t bytes, const KV& kv)>;

std::map<std::string, Factory>& registry() {
  static std::map<std::string, Factory> r;
  return r;
}

/// A collc-generated program: Session, Args, begin_call, kernel, prepare, check of one
/// namespace. Every repetition is call 0 (instance 0 of a `per call` window; repetitions
/// are separated by a barrier).
template <class Args>
struct GenCase : Case {
  collc_mpi::Params params;
  std::unique_ptr<collc_mpi::Session> session;
  Args args{};
  collc_mpi::Ctx ctx;
  std::function<void(const collc_mpi::Ctx&, const Args&)> kernel, prepare;
  std::function<void(const collc_mpi::Ctx&, const Args&, collc_mpi::Checker&)> check;
  bool refill_each = false;

  GenCase(const KV& kv, void (*setup_fn)(collc_mpi::Session&, Args&), void (*begin_fn)(Args&, int),
          void (*kernel_fn)(const collc_mpi::Ctx&, const Args&),
          void (*prepare_fn)(const collc_mpi::Ctx&, const Args&),
          void (*check_fn)(const collc_mpi::Ctx&, const Args&, collc_mpi::Checker&), bool refill)
      : kernel(kernel_fn), prepare(prepare_fn), check(check_fn), refill_each(refill) {
    for (const auto& p : kv) params.set(p.first, std::to_string(p.second));
    session = std::make_unique<collc_mpi::Session>(params);
    setup_fn(*session, args);
    session->allocate();
    begin_fn(args, 0);
    ctx.me = collc_mpi::rank();
    ctx.np = collc_mpi::size();
    ctx.call = 0;
    ctx.comm = MPI_COMM_WORLD;
  }
  void refill() override {
    if (refill_each) prepare(ctx, args);
  }
  void run() override { kernel(ctx, args); }
  bool verify(std::string* why) override {
    collc_mpi::set_call(0);
    collc_mpi::Checker chk;
    prepare(ctx, args);
    kernel(ctx, args);
    check(ctx, args, chk);
    MPI_Barrier(MPI_COMM_WORLD);
    long bad[2] = {chk.mismatches(), session->nonzero_cells(nullptr)}, all[2] = {0, 0};
    MPI_Allreduce(bad, all, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all[0] || all[1]) {
      *why = std::to_string(all[0]) + " mismatches, " + std::to_string(all[1]) + " nonzero credit cells";
      return false;
    }
    return true;
  }
};

template <class Args>
std::unique_ptr<Case> gen(const KV& kv, void (*s)(collc_mpi::Session&, Args&), void (*b)(Args&, int),
                          void (*k)(const collc_mpi::Ctx&, const Args&),
                          void (*p)(const collc_mpi::Ctx&, const Args&),
                          void (*c)(const collc_mpi::Ctx&, const Args&, collc_mpi::Checker&), bool refill) {
  return std::make_unique<GenCase<Args>>(kv, s, b, k, p, c, refill);
}

struct NativeBarrier : Case {
  void run() override { MPI_Barrier(MPI_COMM_WORLD); }
  bool verify(std::string*) override { return true; }
};

struct NativeVec : Case {
  bool allreduce;
  std::vector<float> buf;
  NativeVec(bool ar, int64_t n) : allreduce(ar), buf(size_t(n)) { fill(); }
  void fill() {
    const int me = collc_mpi::rank();
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = collc_mpi::oracle::input_value(false, 0, me, 0, int64_t(i));
  }
  void refill() override { fill(); }
  void run() override {
    if (allreduce)
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(buf.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
      MPI_Bcast(buf.data(), int(buf.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  }
  bool verify(std::string* why) override {
    fill();
    run();
    const int np = collc_mpi::size();
    long bad = 0;
    for (size_t i = 0; i < buf.size(); ++i) {
      float want = 0;
      if (allreduce)
        for (int r = 0; r < np; ++r) want += collc_mpi::oracle::input_value(false, 0, r, 0, int64_t(i));
      else
        want = collc_mpi::oracle::input_value(false, 0, 0, 0, int64_t(i));
      bad += buf[i] != want;
    }
    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all) *why = std::to_string(all) + " mismatches";
    return all == 0;
  }
};

}  // namespace bench

// @@COLLC_BENCH_PROGRAMS@@

int main(int argc, char** argv) {
  using namespace bench;
  collc_mpi::init(&argc, &argv);
  const int me = collc_mpi::rank();
  registry()["native_barrier"] = [](int64_t, const KV&) { return std::unique_ptr<Case>(new NativeBarrier()); };
  registry()["native_bcast"] = [](int64_t bytes, const KV&) {
    return std::unique_ptr<Case>(new NativeVec(false, std::max<int64_t>(1, bytes / 4)));
  };
  registry()["native_allreduce"] = [](int64_t bytes, const KV&) {
    return std::unique_ptr<Case>(new NativeVec(true, std::max<int64_t>(1, bytes / 4)));
  };
  register_programs();

  std::unique_ptr<Case> current;
  char line[256];
  for (;;) {
    std::memset(line, 0, sizeof line);
    if (me == 0) {
      if (!fgets(line, sizeof line, stdin)) std::strcpy(line, "quit");
      line[strcspn(line, "\r\n")] = '\0';
    }
    MPI_Bcast(line, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    char cmd[32] = {0}, name[128] = {0};
    long long a = 0;
    sscanf(line, "%31s", cmd);
    const std::string c = cmd;
    if (c == "quit") break;
    if (c == "oracle") {
      sscanf(line, "%*s %lld", &a);
      std::string text(size_t(a > 0 ? a : 0), '\0');
      long ok = 1;
      if (me == 0 && a > 0) ok = fread(&text[0], 1, text.size(), stdin) == text.size();
      MPI_Bcast(&ok, 1, MPI_LONG, 0, MPI_COMM_WORLD);
      if (ok && a > 0) MPI_Bcast(&text[0], int(a), MPI_CHAR, 0, MPI_COMM_WORLD);
      ok = ok && collc_mpi::oracle::parse(text, &collc_mpi::oracle::table());
      if (me == 0) {
        printf(ok ? "ok\n" : "fail bad oracle table\n");
        fflush(stdout);
      }
    } else if (c == "prep") {
      int used = 0;
      sscanf(line, "%*s %127s %lld%n", name, &a, &used);
      KV kv;
      {
        std::istringstream rest(std::string(line + used));
        std::string tok;
        while (rest >> tok) {
          const size_t eq = tok.find('=');
          if (eq != std::string::npos) kv.emplace_back(tok.substr(0, eq), std::stoll(tok.substr(eq + 1)));
        }
      }
      current.reset();  // frees the previous windows (collective)
      std::string why;
      auto it = registry().find(name);
      bool ok = it != registry().end();
      if (!ok) why = std::string("unknown case ") + name;
      if (ok) {
        current = it->second(a, kv);
        ok = current->verify(&why);
      }
      if (me == 0) {
        if (ok) printf("ok\n");
        else printf("fail %s\n", why.c_str());
        fflush(stdout);
      }
      if (!ok) current.reset();
    } else if (c == "time" || c == "b2b") {
      sscanf(line, "%*s %lld", &a);
      double total = 0;
      if (!current) {
        if (me == 0) printf("fail no case\n");
      } else if (c == "time") {
        std::vector<double> dt(size_t(a), 0.0), mx(size_t(a), 0.0);
        for (long long i = 0; i < a; ++i) {
          current->refill();
          MPI_Barrier(MPI_COMM_WORLD);
          const double t0 = MPI_Wtime();
          current->run();
          dt[size_t(i)] = MPI_Wtime() - t0;
        }
        MPI_Allreduce(dt.data(), mx.data(), int(a), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (double x : mx) total += x;
      } else {
        current->refill();
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (long long i = 0; i < a; ++i) current->run();
        double d = MPI_Wtime() - t0;
        MPI_Allreduce(&d, &total, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      }
      if (me == 0 && current) {
        printf("t %.9f\n", total);
      }
      if (me == 0) fflush(stdout);
    } else if (me == 0) {
      printf("fail unknown command %s\n", line);
      fflush(stdout);
    }
  }
  current.reset();
  collc_mpi::finalize();
  return 0;
}
