#!/usr/bin/env bash
# Real MPI clients, unchanged, on libcollc_pmpi.so (collc emit --target mpi --pmpi) under
# LD_PRELOAD: each is run natively and preloaded, and the two must agree.
#
#   mpi4py's own test suite (its sdist's test/ folder, MPI4PY_TESTS=DIR; mpi4py importable
#   by $PYTHON): the collective tests (test_cco_*.py; ALL=1: the whole suite) at np 2, 3, 4
#   (NPS). The per-test outcome lists (every rank's `test_x ... ok|FAIL|ERROR|skipped`) must
#   be identical with and without the library.
#   HPCC (Debian package hpcc, its sample input _hpccinf.txt: a 2 x 2 grid, so np 4): its
#   own checks must pass (hpccoutf.txt: Success=1, no failed residual check).
#
# The counters (COLLC_PMPI_STATS=1) of every preloaded run are printed; a client whose
# collectives were all passed through fails the script (served must be > 0).
# mpi4py initialises MPI with MPI_THREAD_MULTIPLE by default, under which the library passes
# everything through (collc_pmpi.hpp): both runs set MPI4PY_RC_THREAD_LEVEL=serialized.
# A client that is not installed is reported as SKIP (exit 0 unless REQUIRE=1).
#
#   scripts/pmpi_clients.sh            (COLLC, WORK, PYTHON, MPI4PY_TESTS, NPS, ALL, EXCLUDE, REQUIRE)
#
# EXCLUDE: mpi4py test modules left out of both runs (main.py -e PATTERN, space-separated).
# The library is built from every served kind's shipped example.
#
# Results (2026-12-06, Open MPI 4.1, mpi4py 4.1.2; the full table: docs/emit.md, "Real
# clients: results"): test_cco_* identical at np 2, 3, 4 (0 FAIL/ERROR either way); the
# whole suite (ALL=1 EXCLUDE=test_spawn: test_spawn errs natively, 2 ERRORs at np 2)
# identical at np 2, 3, 4; HPCC np 4 Success=1 both ways. Served at np 4 (test_cco_* /
# HPCC): MPI_Barrier 26240 / 1644, MPI_Bcast 360 / 1328, MPI_Allreduce 1440 / 2397,
# MPI_Reduce_scatter_block 156 / -, MPI_Allgather 552 / -, MPI_Alltoall 120 / 0,
# MPI_Alltoallv 1392 / - (-: the client makes no such call); passed through at np 4
# (test_cco_* / HPCC): 35736 / 1372, by reason: intercommunicator 6560 / 0, datatype
# 27472 / 1304, op 540 / 68, count 744 / 0, in-place 420 / 0.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COLLC=${COLLC:-$ROOT/target/debug/collc}
WORK=${WORK:-$(mktemp -d /tmp/collc-pmpi-clients.XXXXXX)}
PYTHON=${PYTHON:-python3}
NPS=${NPS:-"2 3 4"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$WORK"
status=0
skip() {
  echo "SKIP $1"
  if [ "${REQUIRE:-0}" = 1 ]; then status=1; fi
}

LIB=$WORK/pmpi/libcollc_pmpi.so
"$COLLC" emit --target mpi --pmpi "$ROOT/examples/barrier.coll" "$ROOT/examples/allreduce_mesh.coll" \
  "$ROOT/examples/broadcast_read_complete.coll" "$ROOT/examples/reduce_scatter.coll" \
  "$ROOT/examples/allgather.coll" "$ROOT/examples/all_to_all.coll" "$ROOT/examples/all_to_all_v.coll" \
  -o "$WORK/pmpi" 2>&1 | tail -1 | cut -c1-120

# mpirun NP OUTDIR [preload] -- CMD...: every rank's output in OUTDIR (Open MPI's
# --output-filename), the job's Open MPI files in a directory of its own.
run() {
  local np=$1 out=$2 pre=$3; shift 4
  local tmp; tmp=$(mktemp -d /dev/shm/collc-pmpi-job.XXXXXX)
  local env=(-x TMPDIR="$tmp" -x OMPI_MCA_osc=sm -x MPI4PY_RC_THREAD_LEVEL=serialized)
  if [ "$pre" = preload ]; then env+=(-x LD_PRELOAD="$LIB" -x COLLC_PMPI_STATS=1); fi
  rm -rf "$out"
  TMPDIR=$tmp timeout 1800 mpirun --oversubscribe -np "$np" "${env[@]}" --output-filename "$out" "$@" \
    >"$out.log" 2>&1 || echo "exit $? (np $np $pre)" >>"$out.log"
  rm -rf "$tmp"
}

# The served / passed-through counts of a preloaded run (rank 0's stderr); fails if none served.
counts() {
  local err; err=$(cat "$1"/1/rank.0/stderr 2>/dev/null || true)
  echo "$err" | grep '^collc_pmpi: ' | sed "s/^/    [$2] /"
  if ! echo "$err" | grep -Eq 'served [1-9]'; then
    echo "FAIL $2: no collective served"
    status=1
  fi
}

# Each rank's test outcomes, sorted.
outcomes() {
  for r in "$1"/1/rank.*; do
    grep -Eo '^test[^ ]* \([^)]*\) \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)' \
      "$r/stderr" | sed "s|^|$(basename "$r") |" || true
  done | sort
}

if [ -n "${MPI4PY_TESTS:-}" ] && "$PYTHON" -c 'import mpi4py' 2>/dev/null; then
  pattern=(test_cco_buf test_cco_obj test_cco_vec test_cco_nb_buf test_cco_nb_vec test_cco_pr_buf test_cco_pr_vec \
           test_cco_buf_inter test_cco_obj_inter test_cco_vec_inter test_cco_ngh_buf test_cco_ngh_obj test_cco_pr_ngh_buf)
  if [ "${ALL:-0}" = 1 ]; then pattern=(); fi
  for x in ${EXCLUDE:-}; do pattern+=(-e "$x"); done
  for np in $NPS; do
    for mode in native preload; do
      run "$np" "$WORK/mpi4py-$np-$mode" "$mode" -- "$PYTHON" "$MPI4PY_TESTS/main.py" -v "${pattern[@]}"
      outcomes "$WORK/mpi4py-$np-$mode" >"$WORK/mpi4py-$np-$mode.txt"
    done
    n=$(wc -l <"$WORK/mpi4py-$np-native.txt")
    bad=$(grep -c -E 'FAIL|ERROR' "$WORK/mpi4py-$np-native.txt" || true)
    if [ "$n" -gt 0 ] && cmp -s "$WORK/mpi4py-$np-native.txt" "$WORK/mpi4py-$np-preload.txt"; then
      echo "ok   mpi4py np $np: $n test outcomes (all ranks) identical with and without libcollc_pmpi.so ($bad FAIL/ERROR natively)"
    else
      echo "FAIL mpi4py np $np: outcomes differ or none ran ($n natively): diff $WORK/mpi4py-$np-native.txt $WORK/mpi4py-$np-preload.txt"
      status=1
    fi
    counts "$WORK/mpi4py-$np-preload" "mpi4py np $np"
  done
else
  skip "mpi4py: set MPI4PY_TESTS to an mpi4py sdist's test/ folder and make mpi4py importable by $PYTHON"
fi

if command -v hpcc >/dev/null && [ -f /usr/share/doc/hpcc/examples/_hpccinf.txt ]; then
  for mode in native preload; do
    d=$WORK/hpcc-$mode
    rm -rf "$d" && mkdir -p "$d" && cp /usr/share/doc/hpcc/examples/_hpccinf.txt "$d/hpccinf.txt"
    (cd "$d" && run 4 "$d/out" "$mode" -- hpcc)
    if grep -q '^Success=1' "$d/hpccoutf.txt" 2>/dev/null && ! grep -Eq '^ *[1-9][0-9]* tests? completed and failed' "$d/hpccoutf.txt"; then
      echo "ok   hpcc np 4 $mode: Success=1, no failed residual check"
    else
      echo "FAIL hpcc np 4 $mode: see $d/hpccoutf.txt and $d/out.log"
      status=1
    fi
  done
  counts "$WORK/hpcc-preload/out" "hpcc np 4"
else
  skip "hpcc: apt-get install hpcc"
fi
echo "work folder: $WORK"
exit $status
