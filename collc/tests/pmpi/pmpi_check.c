/* A plain MPI program (no collc header) for libcollc_pmpi.so under LD_PRELOAD: calls in the
 * packaged protocols' domains, and calls that must pass through (another datatype, another
 * op, a user op, a derived datatype, count 0, an intercommunicator, a collective no protocol
 * covers), on MPI_COMM_WORLD, a split and a duplicate. Every result is compared with values
 * computed locally (small integers: exact in f32 whatever the order). Rank 0 prints
 * "ok N checks" and every rank exits 0, or the first wrong element is named (exit 1).
 *
 *   mpicc pmpi_check.c -o pmpi_check
 *   LD_PRELOAD=DIR/libcollc_pmpi.so COLLC_PMPI_STATS=1 mpirun -np 3 ./pmpi_check */
#include "pmpi_common.h"

static void my_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((float*)inout)[i] += ((float*)in)[i];
}

/* Allreduce of `n` floats on `comm` (sum, max), out of place and in place. */
static void allreduce_f32(MPI_Comm comm, int n, int iter) {
  int r = 0, p = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  float* in = malloc(sizeof(float) * (size_t)n);
  float* out = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < n; ++i) in[i] = (float)((r * 7 + i + iter) % 101);
  MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    float want = 0;
    for (int q = 0; q < p; ++q) want += (float)((q * 7 + i + iter) % 101);
    expect(out[i] == want, "allreduce sum", i, out[i], want);
  }
  memcpy(out, in, sizeof(float) * (size_t)n);
  MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_FLOAT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    float want = 0;
    for (int q = 0; q < p; ++q) want += (float)((q * 7 + i + iter) % 101);
    expect(out[i] == want, "allreduce in place", i, out[i], want);
  }
  MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_MAX, comm);
  for (int i = 0; i < n; ++i) {
    float want = 0;
    for (int q = 0; q < p; ++q) {
      float v = (float)((q * 7 + i + iter) % 101);
      if (q == 0 || v > want) want = v;
    }
    expect(out[i] == want, "allreduce max", i, out[i], want);
  }
  free(in);
  free(out);
}

static void bcast_f32(MPI_Comm comm, int n, int root) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  float* b = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < n; ++i) b[i] = r == root ? (float)(i % 977 + root) : -1.0f;
  MPI_Bcast(b, n, MPI_FLOAT, root, comm);
  for (int i = 0; i < n; ++i) expect(b[i] == (float)(i % 977 + root), "bcast", i, b[i], i % 977 + root);
  free(b);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int sizes[] = {1, 7, 1000, 4096, 65536};
  for (int it = 0; it < 3; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < 5; ++s) allreduce_f32(MPI_COMM_WORLD, sizes[s], it);
    for (int root = 0; root < np; ++root) bcast_f32(MPI_COMM_WORLD, 1000 + it, root);
  }
  /* Other element types: doubles and 64-bit integers. */
  double dv[1000], ds[1000];
  long lv[1000], ls[1000];
  for (int i = 0; i < 1000; ++i) dv[i] = me + i, lv[i] = (long)me * 1000000000L + i;
  MPI_Allreduce(dv, ds, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(lv, ls, 1000, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 1000; ++i) {
    double want = np * (np - 1) / 2.0 + (double)np * i;
    expect(ds[i] == want, "allreduce double", i, ds[i], want);
    long lwant = (long)np * (np - 1) / 2 * 1000000000L + (long)np * i;
    expect(ls[i] == lwant, "allreduce long", i, (double)ls[i], (double)lwant);
  }
  /* The other operators the protocol lists: min of doubles, max of longs, products of ints
   * (factors 1, 2, -1, -2: exact, wrapping as MPI's) and of floats (powers of two: exact). */
  int iv3[300], ip3[300];
  float fv3[300], fp3[300];
  for (int i = 0; i < 300; ++i) {
    dv[i] = (double)((me * 13 + i) % 37) - 18.5;
    lv[i] = ((long)(me * 29 + i) % 41 - 20) * 1000000000L;
    iv3[i] = (me + i) % 4 == 0 ? 1 : (me + i) % 4 == 1 ? 2 : (me + i) % 4 == 2 ? -1 : -2;
    fv3[i] = (me * 3 + i) % 3 == 0 ? 0.5f : (me * 3 + i) % 3 == 1 ? 2.0f : -1.0f;
  }
  MPI_Allreduce(dv, ds, 300, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(lv, ls, 300, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(iv3, ip3, 300, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
  MPI_Allreduce(fv3, fp3, 300, MPI_FLOAT, MPI_PROD, MPI_COMM_WORLD);
  for (int i = 0; i < 300; ++i) {
    double dmin = 0;
    long lmax = 0;
    int iprod = 1;
    float fprod = 1;
    for (int q = 0; q < np; ++q) {
      double d = (double)((q * 13 + i) % 37) - 18.5;
      long l = ((long)(q * 29 + i) % 41 - 20) * 1000000000L;
      if (q == 0 || d < dmin) dmin = d;
      if (q == 0 || l > lmax) lmax = l;
      iprod *= (q + i) % 4 == 0 ? 1 : (q + i) % 4 == 1 ? 2 : (q + i) % 4 == 2 ? -1 : -2;
      fprod *= (q * 3 + i) % 3 == 0 ? 0.5f : (q * 3 + i) % 3 == 1 ? 2.0f : -1.0f;
    }
    expect(ds[i] == dmin, "allreduce min double", i, ds[i], dmin);
    expect(ls[i] == lmax, "allreduce max long", i, (double)ls[i], (double)lmax);
    expect(ip3[i] == iprod, "allreduce prod int", i, ip3[i], iprod);
    expect(fp3[i] == fprod, "allreduce prod float", i, fp3[i], fprod);
  }
  /* Passed through: an operator no protocol lists (bitwise and), unsigned ints, a user op,
   * a derived datatype (bcast), count 0. Ints (bcast) are served. */
  int band = 0;
  int bits = 0xff ^ (1 << me % 8);
  MPI_Allreduce(&bits, &band, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
  int bwant = 0xff;
  for (int q = 0; q < np; ++q) bwant &= 0xff ^ (1 << q % 8);
  expect(band == bwant, "allreduce band", 0, band, bwant);
  unsigned u = (unsigned)me + 1, usum = 0;
  MPI_Allreduce(&u, &usum, 1, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
  expect(usum == (unsigned)(np * (np + 1) / 2), "allreduce unsigned", 0, usum, np * (np + 1) / 2.0);
  MPI_Op op;
  MPI_Op_create(my_sum, 1, &op);
  float f = (float)me, fsum = 0;
  MPI_Allreduce(&f, &fsum, 1, MPI_FLOAT, op, MPI_COMM_WORLD);
  expect(fsum == np * (np - 1) / 2.0f, "allreduce user op", 0, fsum, np * (np - 1) / 2.0);
  MPI_Op_free(&op);
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_FLOAT, &two);
  MPI_Type_commit(&two);
  float pair[2] = {1, 2}, pairs[2] = {0, 0};
  if (me == 0) pairs[0] = 5, pairs[1] = 6;
  MPI_Bcast(pairs, 1, two, 0, MPI_COMM_WORLD);
  MPI_Type_free(&two);
  expect(pairs[0] == 5 && pairs[1] == 6, "bcast derived", 0, pairs[0], 5);
  MPI_Allreduce(pair, pairs, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  int iv = me == 0 ? 42 : 0;
  MPI_Bcast(&iv, 1, MPI_INT, 0, MPI_COMM_WORLD);
  expect(iv == 42, "bcast int", 0, iv, 42);
  float* all = malloc(sizeof(float) * (size_t)np);
  MPI_Allgather(&f, 1, MPI_FLOAT, all, 1, MPI_FLOAT, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(all[q] == (float)q, "allgather", q, all[q], q);
  free(all);
  /* Several communicators: a split (even / odd ranks) and a duplicate, used alternately. */
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int it = 0; it < 3; ++it) {
    allreduce_f32(half, 1000, it);
    allreduce_f32(dup, 999, it);
    allreduce_f32(MPI_COMM_WORLD, 998, it);
    MPI_Barrier(half);
    bcast_f32(dup, 500, np - 1);
  }
  /* An intercommunicator between the halves: passes through. */
  if (np >= 2) {
    MPI_Comm inter;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 == 0 ? 1 : 0, 7, &inter);
    float x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, inter);
    int remote = 0;
    MPI_Comm_remote_size(inter, &remote);
    expect(y == (float)remote, "allreduce intercommunicator", 0, y, remote);
    MPI_Comm_free(&inter);
  }
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  report_checks();
  MPI_Finalize();
  return 0;
}
