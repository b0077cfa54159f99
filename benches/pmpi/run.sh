#!/usr/bin/env bash
# Per-call latency of collectives answered by libcollc_pmpi.so against Open MPI native, in the
# same run (benches/pmpi/latency.c: MPI_<coll> and PMPI_<coll> in alternating blocks), at np 2
# and 4, 4 KiB / 64 KiB / 1 MiB; the date and `uptime` before and after, and the library's
# counters (what was served) after each run. Not a test: it asserts nothing.
#
#   benches/pmpi/run.sh            (COLLC, WORK, LIB: an already built libcollc_pmpi.so, NPS, BLOCKS)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COLLC=${COLLC:-$ROOT/target/debug/collc}
WORK=${WORK:-$(mktemp -d /tmp/collc-pmpi-bench.XXXXXX)}
NPS=${NPS:-"2 4"}
BLOCKS=${BLOCKS:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$WORK"
if [ -z "${LIB:-}" ]; then
  LIB=$WORK/pmpi/libcollc_pmpi.so
  "$COLLC" emit --target mpi --pmpi "$ROOT/examples/barrier.coll" "$ROOT/examples/allreduce_mesh.coll" \
    "$ROOT/examples/broadcast_read_complete.coll" "$ROOT/examples/reduce_scatter.coll" \
    "$ROOT/examples/allgather.coll" "$ROOT/examples/all_to_all.coll" "$ROOT/examples/all_to_all_v.coll" \
    -o "$WORK/pmpi" >/dev/null
fi
mpicc -O2 -Wall -Werror "$ROOT/benches/pmpi/latency.c" -o "$WORK/latency"
echo "start $(date -u '+%Y-%m-%d %H:%M') UTC; uptime: $(uptime)"
for np in $NPS; do
  tmp=$(mktemp -d /dev/shm/collc-pmpi-bench.XXXXXX)
  TMPDIR=$tmp mpirun --oversubscribe -np "$np" -x TMPDIR="$tmp" -x OMPI_MCA_osc=sm -x LD_PRELOAD="$LIB" \
    -x COLLC_PMPI_STATS=1 "$WORK/latency" "$BLOCKS" 2>"$WORK/stats-$np.txt"
  grep '^collc_pmpi: ' "$WORK/stats-$np.txt" | sed "s/^/  [np $np] /"
  rm -rf "$tmp"
done
echo "end $(date -u '+%Y-%m-%d %H:%M') UTC; uptime: $(uptime)"
