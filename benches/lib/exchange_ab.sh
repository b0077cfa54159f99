#!/usr/bin/env bash
# Inputs read in place against staged (collc_mpi_lib.hpp ReadInPlace): the collc MPI library
# of the shipped allgather, all_to_all and all_to_all_v on two communicators, one staging the
# input (COLLC_MPI_READ_IN_PLACE=0 at its creation) and one reading it in place, with Open
# MPI's collective as the yardstick, alternating blocks in one run (benches/lib/exchange_ab.cpp)
# at np 2 and 4; records the date and the load before and after. A benchmark, not a test:
# nothing is asserted about time (each library result is compared bitwise with Open MPI's
# before timing).
#   benches/lib/exchange_ab.sh [COLLC] [REPS] [SIZE_KIB]   (default: target/debug/collc, 5, 1024)
# SIZE_KIB is the size of the call's count argument (allgather's input, all_to_all(_v)'s send;
# at most 16384, a multiple of np / 256). COLLC_LIB_BENCH_NP lists the process counts
# (default "2 4"); COLLC_LIB_BENCH_DIR the build folder (default target/collc-lib-bench).
set -euo pipefail
cd "$(dirname "$0")/../.."
COLLC=${1:-target/debug/collc}
REPS=${2:-5}
SIZE_KIB=${3:-1024}
OUT=${COLLC_LIB_BENCH_DIR:-target/collc-lib-bench}/exchange_ab
read -r -a NPS <<< "${COLLC_LIB_BENCH_NP:-2 4}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
"$COLLC" emit --target mpi --lib xab examples/allgather.coll examples/all_to_all.coll examples/all_to_all_v.coll \
  -o "$OUT/lib" >/dev/null
mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX=1 benches/lib/exchange_ab.cpp \
  $(PKG_CONFIG_PATH="$OUT/lib" pkg-config --cflags --libs xab) -o "$OUT/exchange_ab"
for P in "${NPS[@]}"; do
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
  # The MCA settings of `collc run --target mpi` on one node (shared memory, osc/sm).
  mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca osc sm \
    -np "$P" "$OUT/exchange_ab" "$REPS" "$SIZE_KIB"
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
