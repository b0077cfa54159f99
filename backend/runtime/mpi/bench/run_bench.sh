#!/usr/bin/env bash
# Build bench_mpi and run it at -np 2 and -np 4 (same flags as tests/run.sh).
# Output: tables on stdout, CSV in ${1:-bench.csv} (appended). Extra args after the CSV
# path go to bench_mpi (e.g. --max-bytes 131072 --tiles 256).
set -eu -o pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RT="$(cd "$HERE/.." && pwd)"
CSV="${1:-bench.csv}"; shift || true
BUILD="${COLLC_MPI_BUILD_DIR:-$(mktemp -d /tmp/collc_mpi_bench.XXXXXX)}"
OSC="${COLLC_BENCH_OSC:-sm}"
mpicxx -O2 -Wall -Wextra -Werror -I"$RT" "$HERE/bench_mpi.cpp" -o "$BUILD/bench_mpi"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); nproc=$(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(mpirun --version | head -1)"
for np in 2 4; do
  mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader \
    --mca osc "$OSC" -np "$np" "$BUILD/bench_mpi" --csv "$CSV" "$@"
done
