#!/usr/bin/env bash
# Per-call times of the examples of each collective -- the self-clearing ones already in
# examples/ and the log-round, epoch and credit-window ones -- on the host (`collc run`, rank
# threads) and on MPI (`collc run --target mpi`), against Open MPI's native MPI_Barrier,
# MPI_Bcast and MPI_Allreduce, at P = 2 and 4, f32 payload n = 1000 (Rabenseifner B = n / P),
# CALLS back-to-back calls per run (default 200). Prints one markdown table (microseconds per
# call, and the ratio to the native collective) with the date, load and cores. ~1-2 minutes.
#   benches/disciplines/run.sh [COLLC] [CALLS]      (default: target/debug/collc 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
COLLC=${1:-target/debug/collc}
CALLS=${2:-200}
N=1000
OUT=${COLLC_DISCIPLINES_BENCH_DIR:-target/collc-disciplines-bench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
mpicxx -std=c++17 -O2 benches/disciplines/mpi_native.cpp -o "$OUT/mpi_native"
START="$(date -u '+%Y-%m-%d %H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
# collective example params(P)
params() {
  case "$1" in
    barrier|dissemination_barrier|sense_reversing_barrier) echo "" ;;
    broadcast|broadcast_binomial|credit_window_pipeline) echo "--param n=$N --param root=0" ;;
    allreduce_mesh) echo "--param n=$N --param C=1 --param stride=1" ;;
    allreduce_ring) echo "--param n=$(( (N + $2 - 1) / $2 * $2 ))" ;;
    allreduce_rabenseifner) echo "--param B=$(( N / $2 ))" ;;
    *) echo "--param n=$N" ;;
  esac
}
ROWS="barrier:barrier barrier:dissemination_barrier barrier:sense_reversing_barrier
broadcast:broadcast broadcast:broadcast_binomial broadcast:credit_window_pipeline
allreduce:allreduce_ring allreduce:allreduce_mesh allreduce:allreduce_recursive_doubling
allreduce:allreduce_rabenseifner allreduce:allreduce_allpairs allreduce:epoch_allreduce"
declare -A T NATIVE
for P in 2 4; do
  # The native collectives: the best of 3 launches (one descheduled rank can cost a 10 ms
  # quantum per call on a loaded machine).
  lines=$(for _ in 1 2 3; do
    mpirun --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader -np "$P" "$OUT/mpi_native" "$N" "$CALLS"
  done)
  NATIVE[barrier,$P]=$(echo "$lines" | awk '{print $4}' | sort -g | head -1)
  NATIVE[broadcast,$P]=$(echo "$lines" | awk '{print $6}' | sort -g | head -1)
  NATIVE[allreduce,$P]=$(echo "$lines" | awk '{print $8}' | sort -g | head -1)
  for row in $ROWS; do
    ex=${row#*:}
    # shellcheck disable=SC2046
    h=$("$COLLC" run "examples/$ex.coll" -P "$P" $(params "$ex" "$P") --calls "$CALLS" \
        --no-bounded --allow-unverified 2>/dev/null | grep -o '([0-9.]* us/call)' | tr -d '(a-z/ )' || true)
    # shellcheck disable=SC2046
    ms=$("$COLLC" run --target mpi "examples/$ex.coll" -np "$P" $(params "$ex" "$P") --calls "$CALLS" \
        --no-bounded --allow-unverified 2>/dev/null | grep -o 'calls, [0-9.]* ms' | awk '{print $2}' || true)
    T[$ex,host,$P]=${h:-fail}
    T[$ex,mpi,$P]=$( [ -n "$ms" ] && awk -v m="$ms" -v c="$CALLS" 'BEGIN{printf "%.1f", m*1000/c}' || echo fail)
  done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a+0>0 && b+0>0) { r=a/b; printf (r>=10 ? "%.0fx" : (r>=1 ? "%.1fx" : "%.2gx")), r } else print "-" }'; }
echo "start: $START; end: $(date -u '+%H:%M UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "n = $N f32, $CALLS calls per run; us per call; ratios: MPI time / Open MPI's native"
echo "collective, and MPI time / the collective's first example (barrier, broadcast, allreduce_ring)"
echo
echo "| collective | example | host P=2 | host P=4 | MPI np 2 | MPI np 4 | np 2 / native | np 4 / native | np 2 / first | np 4 / first |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for row in $ROWS; do
  c=${row%%:*}; ex=${row#*:}
  case $c in barrier) b=barrier ;; broadcast) b=broadcast ;; *) b=allreduce_ring ;; esac
  echo "| $c | \`$ex\` | ${T[$ex,host,2]} | ${T[$ex,host,4]} | ${T[$ex,mpi,2]} | ${T[$ex,mpi,4]} | $(ratio "${T[$ex,mpi,2]}" "${NATIVE[$c,2]}") | $(ratio "${T[$ex,mpi,4]}" "${NATIVE[$c,4]}") | $(ratio "${T[$ex,mpi,2]}" "${T[$b,mpi,2]}") | $(ratio "${T[$ex,mpi,4]}" "${T[$b,mpi,4]}") |"
done
for c in barrier broadcast allreduce; do
  echo "| $c | Open MPI native | | | ${NATIVE[$c,2]} | ${NATIVE[$c,4]} | 1.0x | 1.0x | | |"
done
