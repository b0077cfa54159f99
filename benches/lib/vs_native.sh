#!/usr/bin/env bash
# The collc MPI library against Open MPI's native collectives at np 2 and 4, 4 KiB, 64 KiB,
# 1 MiB and 16 MiB, alternating blocks in one run (benches/lib/mpi_vs_native.cpp); records
# the date and the load before and after. A benchmark, not a test: nothing is asserted about
# time.   benches/lib/vs_native.sh [COLLC] [REPS] [K]    (default: target/debug/collc, 5, 1)
# K > 1 builds the library from `collc opt --pass coalesce=K` of the two protocols (one credit
# round per K tiles of 256 elements; each result passes the gate or the script stops).
# COLLC_LIB_BENCH_PROGRAM=profile runs benches/lib/profile.cpp instead (where a library call
# spends its time); COLLC_LIB_BENCH_NP lists the process counts (default "2 4").
# COLLC_LIB_BENCH_TUNE=1: `collc tune` builds one library (collk) of every shipped protocol of
# every kind that takes its count per call (TUNE_PROTOCOLS; with K > 1 each one the pass
# accepts is coalesced, the others are tuned as they are), measuring its decision table at the same process counts and sizes, and
# benches/lib/kinds_vs_native.cpp races every kind against Open MPI native
# (COLLC_LIB_BENCH_TUNE_REPS / _CALLS: the tuning run's blocks, default 3 and 4).
# COLLC_LIB_BENCH_TUNE=1 COLLC_LIB_BENCH_PROGRAM=profile: the tuned library is rebuilt from its
# sources with -DCOLLC_MPI_PROFILE (DIR/tuned/profile/libcollk.so) and
# benches/lib/kinds_profile.cpp splits each kind's call into staging copy in, copy out, waits
# and the rest, beside Open MPI native and a memcpy (COLLC_LIB_BENCH_SIZES_KIB: the sizes,
# default "1024 16384"). COLLC_LIB_BENCH_TUNED=DIR: use the library `collc tune` left in DIR
# (an earlier run's DIR/tuned) instead of tuning again.
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
TUNE_PROTOCOLS=(examples/barrier.coll examples/dissemination_barrier.coll
  examples/allreduce_mesh.coll examples/allreduce_ring.coll examples/allreduce_recursive_doubling.coll
  examples/broadcast_read_complete.coll examples/broadcast_binomial.coll
  examples/reduce_scatter.coll examples/incore_reduce_scatter.coll
  examples/allgather.coll examples/incore_allgather.coll examples/pull_allgather.coll
  examples/all_to_all.coll examples/incore_all_to_all.coll
  examples/all_to_all_v.coll examples/incore_all_to_all_v.coll)
LIB=collmpi
if [ "${COLLC_LIB_BENCH_TUNE:-0}" = 1 ]; then
  PROTOCOLS=("${TUNE_PROTOCOLS[@]}")
  LIB=collk
  if [ "$PROGRAM" = profile ]; then PROGRAM=kinds_profile; else PROGRAM=kinds_vs_native; fi
fi
if [ "$K" -gt 1 ]; then
  for i in "${!PROTOCOLS[@]}"; do
    f=${PROTOCOLS[$i]}
    case "$f" in *barrier*) continue ;; esac
    x="$OUT/$(basename "$f" .coll)_x$K.coll"
    if "$COLLC" opt "$f" --pass "coalesce=$K" -o "$x" 2>"$x.log"; then
      PROTOCOLS[$i]=$x
    elif [ "$LIB" = collk ]; then
      # A protocol the pass refuses (no TILE loop) is tuned as it is.
      echo "not coalesced: $f: $(head -c 160 "$x.log")"
    else
      cat "$x.log" >&2
      exit 1
    fi
  done
fi
echo "protocols: ${PROTOCOLS[*]}"
EXTRA=()
if [ "$LIB" = collk ]; then
  NP_LIST=$(echo "${NPS[*]}" | tr ' ' ',')
  PC=${COLLC_LIB_BENCH_TUNED:-$OUT/tuned}
  if [ -z "${COLLC_LIB_BENCH_TUNED:-}" ]; then
    echo "collc tune at np $NP_LIST: date $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$COLLC" tune --lib collk "${PROTOCOLS[@]}" --np "$NP_LIST" --counts 1024,16384,262144,4194304 \
      --reps "${COLLC_LIB_BENCH_TUNE_REPS:-3}" --calls "${COLLC_LIB_BENCH_TUNE_CALLS:-4}" -o "$PC"
  else
    echo "the library collc tune left in $PC (not tuned again)"
  fi
  # The tuning program's configuration (`np` in scope) configures the bench's communicator.
  grep -E '^ *cfg\.' "$PC/tune_collk.cpp" > "$PC/collk_config.inc"
  EXTRA=(-DCOLLK_CONFIG="\"$(realpath "$PC/collk_config.inc")\"")
else
  "$COLLC" emit --target mpi --lib collmpi "${PROTOCOLS[@]}" -o "$OUT/mpi" >/dev/null
  PC="$OUT/mpi"
fi
LIBS=$(PKG_CONFIG_PATH="$PC" pkg-config --cflags --libs "$LIB")
if [ "$PROGRAM" = kinds_profile ]; then
  # The library's own build (backend/src/library/mod.rs BUILD_FLAGS) with the profile table.
  mkdir -p "$PC/profile"
  mpicxx -std=c++17 -O2 -Wall -Wextra -Werror -pthread -shared -fPIC -fvisibility=hidden -DCOLLC_MPI_PROFILE \
    -I"$PC/src" -I"$PC" "$PC"/src/*.cpp -o "$PC/profile/libcollk.so"
  LIBS="-I$PC -L$PC/profile -Wl,-rpath,$(realpath "$PC/profile") -lcollk -pthread"
  ARGS=(${COLLC_LIB_BENCH_SIZES_KIB:-})
else
  ARGS=()
fi
mpicxx -std=c++17 -O2 -DOMPI_SKIP_MPICXX=1 "${EXTRA[@]}" "benches/lib/$PROGRAM.cpp" $LIBS -ldl -o "$OUT/$PROGRAM"
for P in "${NPS[@]}"; do
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
  # The MCA settings of `collc run --target mpi` on one node (shared memory, osc/sm).
  mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader --mca osc sm \
    -np "$P" "$OUT/$PROGRAM" "$REPS" "${ARGS[@]}"
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
