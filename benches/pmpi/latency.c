/* Per-call latency of MPI collectives answered by libcollc_pmpi.so against Open MPI's own, in
 * the same run: run under LD_PRELOAD, the program calls MPI_<coll> (intercepted: served by
 * collc when the call is in a packaged protocol's domain) and PMPI_<coll> (Open MPI's,
 * bypassing the library) in alternating blocks of N calls on the same buffers. Per block:
 * the slowest rank's time over N; per collective and size: the median over B blocks of
 * each, and their ratio. Sizes are the bytes of the largest buffer of a call (allreduce,
 * broadcast: the data; reduce_scatter_block, alltoall: the send buffer; allgather: the
 * receive buffer); floats. MPI_Alltoallv (uniform counts) is timed only where its block
 * fits all_to_all_v.coll's row length (m <= 4096).
 *
 *   LD_PRELOAD=DIR/libcollc_pmpi.so COLLC_PMPI_STATS=1 mpirun -np 4 ./latency [B]
 * prints "np coll bytes calls collc_us native_us ratio" lines on rank 0; the counters at
 * MPI_Finalize show what was served. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kAllreduce, kBcast, kReduceScatter, kAllgather, kAlltoall, kAlltoallv, kN };
static const char* const kName[kN] = {"MPI_Allreduce", "MPI_Bcast", "MPI_Reduce_scatter_block", "MPI_Allgather",
                                      "MPI_Alltoall", "MPI_Alltoallv"};

static int np = 1, me = 0;
static float *a, *b;
static int *counts, *displs;

/* One call of collective `c` on `n` floats (the largest buffer), through MPI_ or PMPI_. */
static void call(int c, int n, int native) {
  const int row = n / np;
  switch (c) {
    case kAllreduce:
      (native ? PMPI_Allreduce : MPI_Allreduce)(a, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case kBcast:
      (native ? PMPI_Bcast : MPI_Bcast)(a, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
      break;
    case kReduceScatter:
      (native ? PMPI_Reduce_scatter_block : MPI_Reduce_scatter_block)(a, b, row, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case kAllgather:
      (native ? PMPI_Allgather : MPI_Allgather)(a, row, MPI_FLOAT, b, row, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case kAlltoall:
      (native ? PMPI_Alltoall : MPI_Alltoall)(a, row, MPI_FLOAT, b, row, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    default:
      for (int q = 0; q < np; ++q) counts[q] = row, displs[q] = q * row;
      (native ? PMPI_Alltoallv : MPI_Alltoallv)(a, counts, displs, MPI_FLOAT, b, counts, displs, MPI_FLOAT, MPI_COMM_WORLD);
      break;
  }
}

/* Seconds per call of one block of `calls` calls: the slowest rank's. */
static double block(int c, int n, int native, int calls) {
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int k = 0; k < calls; ++k) call(c, n, native);
  double t = (MPI_Wtime() - t0) / calls, slowest = 0;
  PMPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int cmp(const void* x, const void* y) {
  const double d = *(const double*)x - *(const double*)y;
  return d < 0 ? -1 : d > 0;
}
static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int blocks = argc > 1 ? atoi(argv[1]) : 5;
  const int bytes[] = {4096, 65536, 1048576};
  const int calls[] = {20, 8, 3};
  a = malloc(1048576);
  b = malloc(1048576);
  counts = malloc(sizeof(int) * (size_t)np);
  displs = malloc(sizeof(int) * (size_t)np);
  for (int i = 0; i < 1048576 / 4; ++i) a[i] = (float)((me + i) % 7);
  double* ours = malloc(sizeof(double) * (size_t)blocks);
  double* theirs = malloc(sizeof(double) * (size_t)blocks);
  if (me == 0) printf("np coll bytes calls collc_us native_us ratio\n");
  for (int c = 0; c < kN; ++c)
    for (int s = 0; s < 3; ++s) {
      const int n = bytes[s] / 4;
      if (c == kAlltoallv && n / np > 4096) continue;
      call(c, n, 0); /* the first call creates the collc communicator */
      call(c, n, 1);
      for (int k = 0; k < blocks; ++k) {
        ours[k] = block(c, n, 0, calls[s]);
        theirs[k] = block(c, n, 1, calls[s]);
      }
      const double o = median(ours, blocks) * 1e6, t = median(theirs, blocks) * 1e6;
      if (me == 0) printf("%d %s %d %d %.1f %.1f %.2f\n", np, kName[c], bytes[s], calls[s], o, t, o / t);
      fflush(stdout);
    }
  free(ours);
  free(theirs);
  free(a);
  free(b);
  free(counts);
  free(displs);
  MPI_Finalize();
  return 0;
}
