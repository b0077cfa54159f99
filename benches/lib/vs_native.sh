#!/usr/bin/env bash
# The collc MPI library against Open MPI's native collectives at np 2 and 4, 4 KiB, 64 KiB,
# 1 MiB and 16 MiB, alternating blocks in one run (benches/lib/mpi_vs_native.cpp); records
# the date and the load before and after. A benchmark, not a test: nothing is asserted about
# time.   benches/lib/vs_native.sh [COLLC] [REPS] [K]    (default: target/debug/collc, 5, 1)
# K > 1 builds the library from `collc opt --pass coalesce=K` of the two protocols (one credit
# round per K tiles of 256 elements; each result passes the gate or the script stops).
# COLLC_LIB_BENCH_PROGRAM=profile runs benches/lib/profile.cpp instead (where a library call
# spends its time); COLLC_LIB_BENCH_NP lists the process counts (default "2 4").
set -euo pipefail
cd "$(dirname "$0")/../.."
COLLC=${1:-target/debug/collc}
REPS=${2:-5}
K=${3:-1}
OUT=${COLLC_LIB_BENCH_DIR:-target/collc-lib-bench}
PROGRAM=${COLLC_LIB_BENCH_PROGRAM:-mpi_vs_native}
read -r -a NPS <<< "${COLLC_LIB_BENCH_NP:-2 4}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
PROTOCOLS=(examples/allreduce_mesh.coll examples/broadcast_read_complete.coll)
if [ "$K" -gt 1 ]; then
  for i in "${!PROTOCOLS[@]}"; do
    f=${PROTOCOLS[$i]}
    "$COLLC" opt "$f" --pass "coalesce=$K" -o "$OUT/$(basename "$f" .coll)_x$K.coll"
    PROTOCOLS[$i]="$OUT/$(basename "$f" .coll)_x$K.coll"
  done
fi
echo "protocols: ${PROTOCOLS[*]}"
"$COLLC" emit --target mpi --lib collmpi "${PROTOCOLS[@]}" -o "$OUT/mpi" >/dev/null
mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX=1 "benches/lib/$PROGRAM.cpp" $(PKG_CONFIG_PATH="$OUT/mpi" pkg-config --cflags --libs collmpi) -ldl -o "$OUT/$PROGRAM"
for P in "${NPS[@]}"; do
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
  # The MCA settings of `collc run --target mpi` on one node (shared memory, osc/sm).
  mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca osc sm \
    -np "$P" "$OUT/$PROGRAM" "$REPS"
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
