/* A plain MPI program (no collc header) for libcollc_pmpi.so under LD_PRELOAD:
 * MPI_Reduce_scatter_block, MPI_Allgather, MPI_Alltoall and MPI_Alltoallv on floats, at
 * several counts, out of place and in place, on MPI_COMM_WORLD, a split and a duplicate;
 * then calls that must pass through, a fixed number of each kind per rank (the test counts
 * them): another datatype, another op, a send type other than the receive type, count 0,
 * a count past the library's windows or the protocol's domain (run with COLLC_PMPI_MAX_COUNT=65536), MPI_IN_PLACE
 * for MPI_Alltoallv, and an intercommunicator. Every result is compared with values
 * computed locally (small integers: exact in f32 whatever the order). Rank 0 prints
 * "ok N checks" and every rank exits 0, or the first wrong element is named (exit 1).
 *
 *   mpicc pmpi_kinds.c -o pmpi_kinds
 *   LD_PRELOAD=DIR/libcollc_pmpi.so COLLC_PMPI_STATS=1 COLLC_PMPI_MAX_COUNT=65536 mpirun -np 3 ./pmpi_kinds */
#include "pmpi_common.h"

/* The element `i` of row `dest` that rank `src` sends at iteration `it`. */
static float val(int src, int dest, int i, int it) { return (float)((src * 31 + dest * 7 + i + it) % 97); }

static void reduce_scatter(MPI_Comm comm, int n, int it, int in_place) {
  int r = 0, p = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  float* send = floats((size_t)p * (size_t)n);
  float* recv = floats((size_t)n);
  for (int d = 0; d < p; ++d)
    for (int i = 0; i < n; ++i) send[(size_t)d * (size_t)n + (size_t)i] = val(r, d, i, it);
  float* out = in_place ? send : recv;
  MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : send, out, n, MPI_FLOAT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    float want = 0;
    for (int q = 0; q < p; ++q) want += val(q, r, i, it);
    expect(out[i] == want, in_place ? "reduce_scatter_block in place" : "reduce_scatter_block", i, out[i], want);
  }
  free(send);
  free(recv);
}

static void allgather(MPI_Comm comm, int n, int it, int in_place) {
  int r = 0, p = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  float* send = floats((size_t)n);
  float* recv = floats((size_t)p * (size_t)n);
  for (int i = 0; i < n; ++i) send[i] = val(r, 0, i, it);
  if (in_place) memcpy(recv + (size_t)r * (size_t)n, send, sizeof(float) * (size_t)n);
  MPI_Allgather(in_place ? MPI_IN_PLACE : send, n, MPI_FLOAT, recv, n, MPI_FLOAT, comm);
  for (int q = 0; q < p; ++q)
    for (int i = 0; i < n; ++i)
      expect(recv[(size_t)q * (size_t)n + (size_t)i] == val(q, 0, i, it), in_place ? "allgather in place" : "allgather", i,
             recv[(size_t)q * (size_t)n + (size_t)i], val(q, 0, i, it));
  free(send);
  free(recv);
}

static void alltoall(MPI_Comm comm, int n, int it, int in_place) {
  int r = 0, p = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  float* send = floats((size_t)p * (size_t)n);
  float* recv = floats((size_t)p * (size_t)n);
  for (int d = 0; d < p; ++d)
    for (int i = 0; i < n; ++i) send[(size_t)d * (size_t)n + (size_t)i] = val(r, d, i, it);
  float* out = in_place ? send : recv;
  MPI_Alltoall(in_place ? MPI_IN_PLACE : send, n, MPI_FLOAT, out, n, MPI_FLOAT, comm);
  for (int q = 0; q < p; ++q)
    for (int i = 0; i < n; ++i)
      expect(out[(size_t)q * (size_t)n + (size_t)i] == val(q, r, i, it), in_place ? "alltoall in place" : "alltoall", i,
             out[(size_t)q * (size_t)n + (size_t)i], val(q, r, i, it));
  free(send);
  free(recv);
}

/* Rank `src` sends (src + 2 * dest + k) % (n + 1) elements to `dest`: counts differ per
 * pair, some are 0 (never all of them); blocks are laid out in reverse order with a gap of 3 elements. */
static int vcount(int src, int dest, int n, int k) {
  const int c = (src + 2 * dest + k) % (n + 1);
  return c == 0 && src == dest ? 1 : c; /* never 0 to itself: no call has every count 0 */
}

static void alltoallv(MPI_Comm comm, int n, int it, int k) {
  int r = 0, p = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  int* sc = malloc(sizeof(int) * (size_t)p);
  int* sd = malloc(sizeof(int) * (size_t)p);
  int* rc = malloc(sizeof(int) * (size_t)p);
  int* rd = malloc(sizeof(int) * (size_t)p);
  int soff = 0, roff = 0;
  for (int j = p - 1; j >= 0; --j) {
    sc[j] = vcount(r, j, n, k);
    rc[j] = vcount(j, r, n, k);
    sd[j] = soff;
    rd[j] = roff;
    soff += sc[j] + 3;
    roff += rc[j] + 3;
  }
  float* send = floats((size_t)soff);
  float* recv = floats((size_t)roff);
  for (int i = 0; i < roff; ++i) recv[i] = -1;
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < sc[j]; ++i) send[sd[j] + i] = val(r, j, i, it);
  MPI_Alltoallv(send, sc, sd, MPI_FLOAT, recv, rc, rd, MPI_FLOAT, comm);
  for (int j = 0; j < p; ++j) {
    for (int i = 0; i < rc[j]; ++i) expect(recv[rd[j] + i] == val(j, r, i, it), "alltoallv", i, recv[rd[j] + i], val(j, r, i, it));
    if (j > 0) expect(recv[rd[j] + rc[j]] == -1, "alltoallv gap", rd[j] + rc[j], recv[rd[j] + rc[j]], -1);
  }
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(send);
  free(recv);
}

static void served(MPI_Comm comm, int it) {
  const int sizes[] = {1, 7, 300, 4000};
  for (int s = 0; s < 4; ++s) {
    for (int in_place = 0; in_place < 2; ++in_place) {
      reduce_scatter(comm, sizes[s], it, in_place);
      allgather(comm, sizes[s], it, in_place);
      alltoall(comm, sizes[s], it, in_place);
    }
    alltoallv(comm, sizes[s], it, s);
  }
}

/* Each call here passes through (the test counts them per rank): 2 reduce_scatter_block
 * (datatype, op) + 1 (count 0); 2 allgather (datatype, send type) + 1 (count); 1 alltoall
 * (datatype) + 1 (count); alltoallv: 1 in-place, 1 datatype, 2 count (all zero, too large). */
static void passed(int np) {
  double d[64], dr[64];
  int ints[64];
  float f[64], fr[64];
  for (int i = 0; i < 64; ++i) d[i] = me + i, f[i] = (float)(me + i), ints[i] = me;
  MPI_Reduce_scatter_block(d, dr, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 2; ++i) expect(dr[i] == (double)np * (me * 2 + i) + np * (np - 1) / 2.0, "reduce_scatter_block double", i, dr[i], 0);
  MPI_Reduce_scatter_block(f, fr, 2, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i < 2; ++i) expect(fr[i] == (float)(np - 1 + me * 2 + i), "reduce_scatter_block max", i, fr[i], np - 1 + me * 2 + i);
  MPI_Reduce_scatter_block(f, fr, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  int ir[64];
  MPI_Allgather(ints, 1, MPI_INT, ir, 1, MPI_INT, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(ir[q] == q, "allgather int", q, ir[q], q);
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_FLOAT, &two);
  MPI_Type_commit(&two);
  MPI_Allgather(f, 2, MPI_FLOAT, fr, 1, two, MPI_COMM_WORLD);
  MPI_Type_free(&two);
  for (int q = 0; q < np; ++q) expect(fr[2 * q] == (float)q && fr[2 * q + 1] == (float)(q + 1), "allgather derived", q, fr[2 * q], q);
  const int big = 65536 / np + 1; /* one element per rank past COLLC_PMPI_MAX_COUNT=65536 */
  float* b = floats((size_t)big);
  float* bb = floats((size_t)big * (size_t)np);
  for (int i = 0; i < big; ++i) b[i] = (float)(me + i % 5);
  MPI_Allgather(b, big, MPI_FLOAT, bb, big, MPI_FLOAT, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(bb[(size_t)q * (size_t)big + 3] == (float)(q + 3), "allgather big", q, bb[(size_t)q * (size_t)big + 3], q + 3);
  MPI_Alltoall(d, 1, MPI_DOUBLE, dr, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(dr[q] == (double)(q + me), "alltoall double", q, dr[q], q + me);
  float* ab = floats((size_t)big * (size_t)np);
  for (size_t i = 0; i < (size_t)big * (size_t)np; ++i) ab[i] = (float)(me * 3 + (int)(i / (size_t)big));
  MPI_Alltoall(ab, big, MPI_FLOAT, bb, big, MPI_FLOAT, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(bb[(size_t)q * (size_t)big] == (float)(q * 3 + me), "alltoall big", q, bb[(size_t)q * (size_t)big], q * 3 + me);
  int* c1 = malloc(sizeof(int) * (size_t)np);
  int* dz = malloc(sizeof(int) * (size_t)np);
  for (int q = 0; q < np; ++q) c1[q] = 1, dz[q] = q;
  for (int q = 0; q < np; ++q) f[q] = (float)(me * 10 + q);
  MPI_Alltoallv(MPI_IN_PLACE, c1, dz, MPI_FLOAT, f, c1, dz, MPI_FLOAT, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(f[q] == (float)(q * 10 + me), "alltoallv in place", q, f[q], q * 10 + me);
  MPI_Alltoallv(d, c1, dz, MPI_DOUBLE, dr, c1, dz, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(dr[q] == (double)(q + me), "alltoallv double", q, dr[q], q + me);
  for (int q = 0; q < np; ++q) c1[q] = 0;
  MPI_Alltoallv(f, c1, dz, MPI_FLOAT, fr, c1, dz, MPI_FLOAT, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) c1[q] = big, dz[q] = big * q; /* past the windows' rows (R = 1) */
  float* vb = floats((size_t)big * (size_t)np);
  float* vr = floats((size_t)big * (size_t)np);
  for (int q = 0; q < np; ++q) vb[dz[q]] = (float)(me * 100 + q);
  MPI_Alltoallv(vb, c1, dz, MPI_FLOAT, vr, c1, dz, MPI_FLOAT, MPI_COMM_WORLD);
  for (int q = 0; q < np; ++q) expect(vr[dz[q]] == (float)(q * 100 + me), "alltoallv big", q, vr[dz[q]], q * 100 + me);
  free(vb);
  free(vr);
  free(c1);
  free(dz);
  free(b);
  free(bb);
  free(ab);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int it = 0; it < 2; ++it) {
    served(MPI_COMM_WORLD, it);
    served(half, it);
    served(dup, it);
  }
  passed(np);
  /* An intercommunicator between the halves: one allgather, passed through. */
  MPI_Comm inter;
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 == 0 ? 1 : 0, 7, &inter);
  int remote = 0;
  MPI_Comm_remote_size(inter, &remote);
  float x = (float)me, y[64];
  MPI_Allgather(&x, 1, MPI_FLOAT, y, 1, MPI_FLOAT, inter);
  for (int q = 0; q < remote; ++q) expect(y[q] == (float)(2 * q + (me % 2 == 0 ? 1 : 0)), "allgather intercommunicator", q, y[q], 2 * q + (me % 2 == 0));
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  report_checks();
  MPI_Finalize();
  return 0;
}
