#!/usr/bin/env bash
# Buffers used in place against staged, in one run, alternating blocks, with Open MPI's
# collective as the yardstick, at np 2 and 4; records the date and the load before and after.
# A benchmark, not a test: nothing is asserted about time (each library result is compared
# bitwise with Open MPI's before timing).
#   benches/lib/exchange_ab.sh [COLLC] [REPS] [SIZE_KIB]   (default: target/debug/collc, 5, 1024)
# COLLC_LIB_BENCH_AB picks the switch:
#   read (default): inputs read in place (collc_mpi_lib.hpp ReadInPlace) against staged
#     (COLLC_MPI_READ_IN_PLACE=0): the shipped allgather, all_to_all and all_to_all_v
#     (benches/lib/exchange_ab.cpp). SIZE_KIB: allgather's input, all_to_all(_v)'s send; at
#     most 16384, a multiple of np / 256.
#   write: outputs written in place (WriteInPlace) against copied out
#     (COLLC_MPI_WRITE_IN_PLACE=0): a pulled allgather, allreduce_allpairs and
#     credit_window_pipeline, with the shipped push allgather (what the tuned library runs)
#     beside them (benches/lib/write_ab.cpp). SIZE_KIB: allgather's input, the allreduce's and
#     broadcast's data; at most 16384; the allreduce is verified up to 1024 KiB and the
#     broadcast up to 256 KiB, and each is left out above.
# COLLC_LIB_BENCH_NP lists the process counts (default "2 4"); COLLC_LIB_BENCH_DIR the build
# folder (default target/collc-lib-bench).
set -euo pipefail
cd "$(dirname "$0")/../.."
COLLC=${1:-target/debug/collc}
REPS=${2:-5}
SIZE_KIB=${3:-1024}
case "${COLLC_LIB_BENCH_AB:-read}" in
  read)
    PROG=exchange_ab LIB=xab
    FILES=(examples/allgather.coll examples/all_to_all.coll examples/all_to_all_v.coll) ;;
  write)
    PROG=write_ab LIB=wab
    FILES=(examples/allgather.coll examples/pull_allgather.coll examples/allreduce_allpairs.coll
      examples/credit_window_pipeline.coll) ;;
  *) echo "COLLC_LIB_BENCH_AB is read or write" >&2; exit 2 ;;
esac
OUT=${COLLC_LIB_BENCH_DIR:-target/collc-lib-bench}/$PROG
read -r -a NPS <<< "${COLLC_LIB_BENCH_NP:-2 4}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
"$COLLC" emit --target mpi --lib "$LIB" "${FILES[@]}" -o "$OUT/lib" >/dev/null
mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX=1 "benches/lib/$PROG.cpp" \
  $(PKG_CONFIG_PATH="$OUT/lib" pkg-config --cflags --libs "$LIB") -o "$OUT/$PROG"
for P in "${NPS[@]}"; do
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
  # The MCA settings of `collc run --target mpi` on one node (shared memory, osc/sm).
  mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca osc sm \
    -np "$P" "$OUT/$PROG" "$REPS" "$SIZE_KIB"
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
