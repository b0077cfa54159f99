#!/usr/bin/env bash
# Tests for the collc MPI runtime (backend/runtime/mpi).
#
#  1. build every examples/*.cpp with `mpicxx -O2 -Wall -Wextra -Werror`
#  2. run each at -np 2 and -np 4 with --calls 3 for every osc component in
#     COLLC_TEST_OSC (default "sm rdma pt2pt"); assert exit 0 and a JSON line with
#     "ok":true, the right np and calls
#  3. stress: --calls 20 with COLLC_MPI_JITTER_US (random delays before every RMA op)
#  4. negative: tests/neg_barrier_ge2.cpp (wait GE 2 with one credit) must abort with
#     exit 3 within a short deadline, print the WAIT TIMEOUT report, and leave no
#     live processes behind (pgrep)
#  5. negative: tests/neg_barrier_no_epilogue.cpp must exit 1 reporting nonzero cells;
#     tests/neg_broadcast_head.cpp (merged pypto broadcast, no read-complete round)
#     must exit 1 with a MISMATCH under jitter
#
# Env: COLLC_TEST_OSC, COLLC_MPI_BUILD_DIR (default: a fresh temp dir),
#      MPIRUN_EXTRA (extra mpirun flags). Exit 0 iff every check passed.
set -u -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RT="$(cd "$HERE/.." && pwd)"
BUILD="${COLLC_MPI_BUILD_DIR:-$(mktemp -d /tmp/collc_mpi_test.XXXXXX)}"
mkdir -p "$BUILD"
OSC_LIST="${COLLC_TEST_OSC:-sm rdma pt2pt}"

command -v mpicxx >/dev/null || { echo "FATAL: mpicxx not found (apt-get install openmpi-bin libopenmpi-dev)"; exit 2; }
command -v mpirun >/dev/null || { echo "FATAL: mpirun not found"; exit 2; }

# mpirun flags needed on this machine (root, 2 cores, shared-memory RMA):
#   --allow-run-as-root          we run as root in the container
#   --oversubscribe              np 4 > 2 cores
#   --mca mpi_yield_when_idle 1  MPI progress loops yield the core (oversubscription)
#   --mca btl self,vader         loopback shared-memory transport only
#   --mca osc <sm|rdma|pt2pt>    one-sided component (sm recommended; rdma = default)
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader)
# shellcheck disable=SC2206
[ -n "${MPIRUN_EXTRA:-}" ] && MPIRUN+=(${MPIRUN_EXTRA})

PASS=0
FAIL=0
ok()   { PASS=$((PASS + 1)); echo "PASS $*"; }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL $*"; }

build() {  # build <src> <out>
  if mpicxx -O2 -Wall -Wextra -Werror -I"$RT" "$1" -o "$2" 2>"$2.build.log"; then
    ok "build $(basename "$1")"
  else
    bad "build $(basename "$1")"; sed 's/^/    /' "$2.build.log" | head -30
    return 1
  fi
}

# run_ok <label> <timeout_s> <np> <binary> [args...]: expect exit 0 and "ok":true
run_ok() {
  local label=$1 tmo=$2 np=$3; shift 3
  local out rc json
  out="$(timeout "$tmo" "${MPIRUN[@]}" -np "$np" "$@" 2>"$BUILD/stderr.txt")"; rc=$?
  json="$(printf '%s\n' "$out" | grep '^{' | tail -1)"
  if [ $rc -eq 0 ] && [[ "$json" == *'"ok":true'* ]] && [[ "$json" == *"\"np\":$np,"* ]]; then
    ok "$label -> $json"
  else
    bad "$label (rc=$rc) -> ${json:-<no json>}"; sed 's/^/    /' "$BUILD/stderr.txt" | head -20
  fi
}

# no_live_procs <name>: no running (non-zombie) process with this name after <= 10 s
no_live_procs() {
  local name=$1 i
  for i in $(seq 1 20); do
    if ! pgrep -r R,S,D,T -x "$name" >/dev/null; then
      pgrep -x "$name" >/dev/null && sleep 0.5   # let zombies be reaped, not required
      return 0
    fi
    sleep 0.5
  done
  pgrep -a -x "$name"
  return 1
}

echo "== collc MPI runtime tests  (build dir $BUILD)"
echo "   $(mpirun --version 2>&1 | head -1); $(mpicxx --version | head -1); nproc=$(nproc)"

# ---- 1+2: examples ---------------------------------------------------------------------
EXAMPLES=()
for src in "$RT"/examples/*.cpp; do
  name="$(basename "$src" .cpp)"
  build "$src" "$BUILD/$name" && EXAMPLES+=("$name")
done
for osc in $OSC_LIST; do
  for name in "${EXAMPLES[@]}"; do
    for np in 2 4; do
      run_ok "$name np=$np osc=$osc calls=3" 120 "$np" --mca osc "$osc" "$BUILD/$name" --calls 3
    done
  done
done
# parameter variants: partial last tile, single tile, non-zero root
run_ok "broadcast np=4 numel=257 root=3" 120 4 --mca osc sm "$BUILD/broadcast" --calls 3 --param numel=257 --param root=3
run_ok "broadcast np=2 numel=1 root=1" 120 2 --mca osc sm "$BUILD/broadcast" --calls 3 --param numel=1 --param root=1
run_ok "allreduce np=4 numel=1041" 120 4 --mca osc sm "$BUILD/allreduce" --calls 3 --param numel=1041
run_ok "allreduce np=3 numel=256" 120 3 --mca osc sm "$BUILD/allreduce" --calls 3 --param numel=256

# ---- 3: stress with skew + jitter --------------------------------------------------------
for name in "${EXAMPLES[@]}"; do
  for np in 2 4; do
    COLLC_MPI_JITTER_US=200 run_ok "$name np=$np calls=20 jitter=200us skew=100us" 180 "$np" \
      --mca osc sm "$BUILD/$name" --calls 20 --skew-us 100
  done
done

# ---- 4: negative: wait GE 2 with one credit ---------------------------------------------
if build "$HERE/neg_barrier_ge2.cpp" "$BUILD/neg_barrier_ge2"; then
  for np in 2 4; do
    t0=$(date +%s.%N)
    COLLC_MPI_WAIT_TIMEOUT_MS=1500 timeout 60 "${MPIRUN[@]}" -np "$np" --mca osc sm \
      "$BUILD/neg_barrier_ge2" --calls 3 >"$BUILD/neg.out" 2>"$BUILD/neg.err"; rc=$?
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    report="$(grep -m1 'WAIT TIMEOUT' "$BUILD/neg.err")"
    if [ $rc -eq 3 ] && [[ "$report" == *"expected cell >= 2, holds 1"* ]] && [[ "$report" == *"cell=sig["* ]] \
       && ! grep -q '"ok":true' "$BUILD/neg.out" && awk -v s="$secs" 'BEGIN{exit !(s < 20)}'; then
      ok "neg_barrier_ge2 np=$np failed as required in ${secs}s (rc=$rc): $report"
    else
      bad "neg_barrier_ge2 np=$np rc=$rc after ${secs}s report='${report}'"; sed 's/^/    /' "$BUILD/neg.err" | head -20
    fi
    if no_live_procs neg_barrier_ge2; then
      ok "neg_barrier_ge2 np=$np: no orphaned processes (pgrep)"
    else
      bad "neg_barrier_ge2 np=$np: processes left behind"
    fi
  done
fi

# ---- 5: negative: missing epilogue / missing read-complete round --------------------------
if build "$HERE/neg_barrier_no_epilogue.cpp" "$BUILD/neg_barrier_no_epilogue"; then
  timeout 60 "${MPIRUN[@]}" -np 4 --mca osc sm "$BUILD/neg_barrier_no_epilogue" --calls 3 \
    >"$BUILD/neg.out" 2>"$BUILD/neg.err"; rc=$?
  line="$(grep -m1 'NONZERO' "$BUILD/neg.err")"
  if [ $rc -eq 1 ] && grep -q '"ok":false' "$BUILD/neg.out" && [[ "$line" == *"=3"* ]]; then
    ok "neg_barrier_no_epilogue np=4 exit 1: $line"
  else
    bad "neg_barrier_no_epilogue rc=$rc: $(cat "$BUILD/neg.out") $line"
  fi
fi
if build "$HERE/neg_broadcast_head.cpp" "$BUILD/neg_broadcast_head"; then
  caught=""
  for attempt in 1 2 3; do
    COLLC_MPI_JITTER_US=300 timeout 120 "${MPIRUN[@]}" -np 2 --mca osc sm "$BUILD/neg_broadcast_head" \
      --calls 20 >"$BUILD/neg.out" 2>"$BUILD/neg.err"; rc=$?
    if [ $rc -eq 1 ] && grep -q 'MISMATCH' "$BUILD/neg.err"; then
      caught="attempt $attempt: $(grep -m1 'MISMATCH' "$BUILD/neg.err")"; break
    fi
  done
  if [ -n "$caught" ]; then ok "neg_broadcast_head np=2 jitter: race caught ($caught)"
  else bad "neg_broadcast_head: read-after-return race not caught in 3 attempts (last rc=$rc)"; fi
fi

echo "== $PASS passed, $FAIL failed"
[ $FAIL -eq 0 ]
