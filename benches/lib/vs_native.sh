#!/usr/bin/env bash
# The collc MPI library against Open MPI's native collectives at np 2 and 4, 4 KiB, 64 KiB,
# 1 MiB and 16 MiB, alternating blocks in one run (benches/lib/mpi_vs_native.cpp); records
# the date and the load before and after. A benchmark, not a test: nothing is asserted about
# time.   benches/lib/vs_native.sh [COLLC] [REPS]    (default: target/debug/collc, 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
COLLC=${1:-target/debug/collc}
REPS=${2:-5}
OUT=${COLLC_LIB_BENCH_DIR:-target/collc-lib-bench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
"$COLLC" emit --target mpi --lib collmpi examples/allreduce_mesh.coll examples/broadcast_read_complete.coll -o "$OUT/mpi" >/dev/null
mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX=1 benches/lib/mpi_vs_native.cpp $(PKG_CONFIG_PATH="$OUT/mpi" pkg-config --cflags --libs collmpi) -o "$OUT/mpi_vs_native"
for P in 2 4; do
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
  # The MCA settings of `collc run --target mpi` on one node (shared memory, osc/sm).
  mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca osc sm \
    -np "$P" "$OUT/mpi_vs_native" "$REPS"
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
