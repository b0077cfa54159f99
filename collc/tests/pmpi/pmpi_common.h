/* The preamble shared by the plain MPI clients of libcollc_pmpi.so (pmpi_check.c,
 * pmpi_kinds.c): the rank, the count of checks made, a check that names the first wrong
 * element and aborts, and rank 0's closing line "ok N checks" (N summed over the ranks). */
#ifndef COLLC_TESTS_PMPI_COMMON_H
#define COLLC_TESTS_PMPI_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long checks = 0;
static int me = 0;

/* One check: `ok`, or element `i` of `what` is `got` where `want` was expected (exit 1). */
static inline void expect(int ok, const char* what, int i, double got, double want) {
  ++checks;
  if (!ok) {
    fprintf(stderr, "rank %d: %s[%d] = %g, want %g\n", me, what, i, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* `n` floats (at least one, so that a count-0 call still gets a valid pointer). */
static inline float* floats(size_t n) { return malloc(sizeof(float) * (n > 0 ? n : 1)); }

/* Rank 0 prints "ok N checks", N the checks made by every rank (collective). */
static inline void report_checks(void) {
  long total = 0;
  MPI_Reduce(&checks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) printf("ok %ld checks\n", total);
}

#endif
