#!/usr/bin/env bash
# Per-call latency and bandwidth of the MPI library's reduce_scatter and all_to_all_v against
# the test-harness path (`collc run --target mpi`) and Open MPI's native collectives
# (MPI_Reduce_scatter_block; MPI_Alltoall of the counts + MPI_Alltoallv), np 2 and 4, one short
# run (~1 minute). The library and native times come from examples/apps/mpi_kinds_app.cpp,
# which also checks every result against the native collective.
#   benches/lib/kinds_run.sh [COLLC]      (default: target/debug/collc)
set -euo pipefail
cd "$(dirname "$0")/../.."
COLLC=${1:-target/debug/collc}
OUT=${COLLC_LIB_BENCH_DIR:-target/collc-lib-bench}/kinds
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
"$COLLC" emit --target mpi --lib kindsmpi examples/reduce_scatter.coll examples/all_to_all_v.coll -o "$OUT/mpi" 2>/dev/null
mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX=1 examples/apps/mpi_kinds_app.cpp $(PKG_CONFIG_PATH="$OUT/mpi" pkg-config --cflags --libs kindsmpi) -o "$OUT/mpi_kinds_app"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
R=4
for P in 2 4; do
  # m = 64 (latency) and m = 4096 (bandwidth: reduce_scatter P*4096 floats in; all_to_all_v
  # P blocks of R*4096 floats).
  for M in 64 4096; do
    ITERS=$([ "$M" = 64 ] && echo 300 || echo 30)
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca osc sm \
      -np "$P" "$OUT/mpi_kinds_app" "$M" "$ITERS" "$R" | sed "s/^/library+native np=$P m=$M: /"
    "$COLLC" run --target mpi examples/reduce_scatter.coll -np "$P" --param m="$M" --calls "$ITERS" \
      --no-bounded --allow-unverified 2>/dev/null | grep -o 'ok (.*' | sed "s/^/mpi-harness reduce_scatter np=$P m=$M: /"
    "$COLLC" run --target mpi examples/all_to_all_v.coll -np "$P" --param m="$M" --param R="$R" --calls "$ITERS" \
      --no-bounded --allow-unverified 2>/dev/null | grep -o 'ok (.*' | sed "s/^/mpi-harness all_to_all_v np=$P m=$M: /"
  done
done
