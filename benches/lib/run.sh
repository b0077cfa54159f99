#!/usr/bin/env bash
# Per-call latency and bandwidth of the collc libraries (host threads and MPI) against the
# test-harness path (`collc run`) and Open MPI's native collectives, np 2 and 4, n = 256
# floats (latency) and n = 262144 floats (1 MiB, bandwidth). Short runs (~1 minute).
#   benches/lib/run.sh [COLLC]      (default: target/debug/collc)
set -euo pipefail
cd "$(dirname "$0")/../.."
COLLC=${1:-target/debug/collc}
OUT=${COLLC_LIB_BENCH_DIR:-target/collc-lib-bench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
FILES="examples/allreduce_mesh.coll examples/broadcast_read_complete.coll"
"$COLLC" emit --target host --lib coll $FILES -o "$OUT/host" 2>/dev/null
"$COLLC" emit --target mpi --lib collmpi $FILES -o "$OUT/mpi" 2>/dev/null
g++ -std=c++17 -O2 benches/lib/host_lib_bench.cpp $(PKG_CONFIG_PATH="$OUT/host" pkg-config --cflags --libs coll) -o "$OUT/host_lib_bench"
mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX=1 benches/lib/mpi_lib_bench.cpp $(PKG_CONFIG_PATH="$OUT/mpi" pkg-config --cflags --libs collmpi) -o "$OUT/mpi_lib_bench"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
for P in 2 4; do
  for N in 256 262144; do
    CALLS=$([ "$N" = 256 ] && echo 500 || echo 50)
    "$OUT/host_lib_bench" "$P" "$N" "$CALLS"
    # The test-harness path: the launcher's K back-to-back calls with staging and collecting hooks.
    for F in allreduce_mesh broadcast_read_complete; do
      EXTRA=$([ "$F" = allreduce_mesh ] && echo "--param C=1 --param stride=1" || echo "--param root=0")
      "$COLLC" run --target host examples/$F.coll -P "$P" --param n="$N" $EXTRA --calls "$CALLS" \
        --no-bounded --allow-unverified 2>/dev/null | grep -o 'ok: .*' | sed "s/^/host-harness $F P=$P n=$N: /"
      "$COLLC" run --target mpi examples/$F.coll -np "$P" --param n="$N" $EXTRA --calls "$CALLS" \
        --no-bounded --allow-unverified 2>/dev/null | grep -o 'ok (.*' | sed "s/^/mpi-harness $F np=$P n=$N: /"
    done
    # The same MCA settings as `collc run --target mpi` on one node (shared memory, osc/sm).
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca osc sm \
      -np "$P" "$OUT/mpi_lib_bench" "$N" "$CALLS"
  done
done
