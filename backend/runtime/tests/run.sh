#!/usr/bin/env bash
# collc CPU runtime tests: builds the reference kernels (each + the host launcher as a shared
# library), the dlopen test driver and the negative fixtures, then runs every scenario twice:
# optimized (-O2) and under ThreadSanitizer (-O1 -g -fsanitize=thread, halt_on_error=1).
#
#   backend/runtime/tests/run.sh [--no-tsan] [--keep-going]
#
# Exit status 0 if every check passed, 1 otherwise. Build products and one log per check go to
# $COLLC_RUNTIME_BUILD_DIR (default: <repo>/target/collc-runtime). Every run is wrapped in
# `timeout`, so even a runtime bug cannot hang the suite. Needs g++ >= 9 (CXX overrides).

set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RT=$(dirname "$HERE")                       # backend/runtime
ROOT=$(cd "$RT/../.." && pwd)               # repository root
OUT=${COLLC_RUNTIME_BUILD_DIR:-$ROOT/target/collc-runtime}
CXX=${CXX:-g++}
RUN_TSAN=1
KEEP_GOING=0
for arg in "$@"; do
    case "$arg" in
        --no-tsan) RUN_TSAN=0 ;;
        --keep-going) KEEP_GOING=1 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "unknown argument: $arg" >&2; exit 2 ;;
    esac
done

WARN=(-std=c++17 -Wall -Wextra -Werror -pthread -I"$RT")
OPT_FLAGS=(-O2)
TSAN_FLAGS=(-O1 -g -fsanitize=thread)
RUN_LIMIT=120      # seconds; a check that takes longer counts as hung
export TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}"

PASSED=0
FAILED=0
FAILED_NAMES=()

mkdir -p "$OUT"

# record NAME STATUS DETAIL — print one result line, keep count.
record() {
    local name=$1 ok=$2 detail=$3
    if [ "$ok" = 1 ]; then
        PASSED=$((PASSED + 1))
        printf 'PASS  %-44s %s\n' "$name" "$detail"
    else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("$name")
        printf 'FAIL  %-44s %s\n' "$name" "$detail"
    fi
}

# show_log FILE — the tail of a failed check's log.
show_log() {
    sed -n '1,40p' "$1" | sed 's/^/      | /'
}

# build VARIANT — compile the driver, the two reference kernels and the fixtures.
build() {
    local variant=$1; shift
    local flags=("$@")
    local dir="$OUT/$variant"
    mkdir -p "$dir/logs"
    local ok=1
    local kernels=(
        examples/barrier_kernel
        examples/allreduce_kernel
        tests/kernels/broken_barrier_kernel
        tests/kernels/no_epilogue_barrier_kernel
        tests/kernels/set0_epilogue_barrier_kernel
        tests/kernels/racy_allreduce_kernel
    )
    for k in "${kernels[@]}"; do
        local name
        name=$(basename "$k")
        local log="$dir/logs/build-$name.log"
        if "$CXX" "${WARN[@]}" "${flags[@]}" -shared -fPIC "$RT/$k.cpp" "$RT/collc/host_launch.cpp" \
            -o "$dir/lib$name.so" >"$log" 2>&1; then
            record "$variant build $name" 1 "lib$name.so"
        else
            record "$variant build $name" 0 "see $log"; show_log "$log"; ok=0
        fi
    done
    local log="$dir/logs/build-driver.log"
    if "$CXX" "${WARN[@]}" "${flags[@]}" "$RT/tests/driver.cpp" -ldl -o "$dir/driver" >"$log" 2>&1; then
        record "$variant build driver" 1 "driver"
    else
        record "$variant build driver" 0 "see $log"; show_log "$log"; ok=0
    fi
    log="$dir/logs/build-runtime_unit.log"
    if "$CXX" "${WARN[@]}" "${flags[@]}" "$RT/tests/runtime_unit.cpp" -o "$dir/runtime_unit" >"$log" 2>&1; then
        record "$variant build runtime_unit" 1 "runtime_unit"
    else
        record "$variant build runtime_unit" 0 "see $log"; show_log "$log"; ok=0
    fi
    [ "$ok" = 1 ]
}

# unit VARIANT — the single-threaded API unit test must exit 0.
unit() {
    local variant=$1
    local log="$OUT/$variant/logs/runtime_unit.log"
    local rc=0
    timeout "$RUN_LIMIT" "$OUT/$variant/runtime_unit" >"$log" 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then
        record "$variant runtime-unit" 1 "$(grep -c '^PASS' "$log") API checks"
    else
        record "$variant runtime-unit" 0 "exit $rc"; show_log "$log"
        [ "$KEEP_GOING" = 1 ] || summary_and_exit
    fi
}

# check VARIANT NAME KERNEL [ENV=VAL ...] -- DRIVER-ARGS... — the driver must exit 0.
check() {
    local variant=$1 name=$2 kernel=$3; shift 3
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local dir="$OUT/$variant"
    local log="$dir/logs/$name.log"
    local rc=0
    env "${envs[@]}" timeout "$RUN_LIMIT" "$dir/driver" "$dir/lib$kernel.so" "$@" >"$log" 2>&1 || rc=$?
    local last
    last=$(grep -E '^(PASS|FAIL)' "$log" | tail -n 1)
    if [ "$rc" = 0 ]; then
        record "$variant $name" 1 "${last#PASS }"
    else
        [ "$rc" = 124 ] && last="HUNG (killed after ${RUN_LIMIT}s)"
        record "$variant $name" 0 "exit $rc: ${last:-no result line}"; show_log "$log"
        [ "$KEEP_GOING" = 1 ] || summary_and_exit
    fi
}

# check_tsan_race VARIANT NAME KERNEL -- DRIVER-ARGS... — the race must be detected: a TSan
# data-race report, or (when it does not come) wrong sums. TSan alone is timing-dependent
# here: ready and read-done credits share one cell, so when the slow rank's ready wait reads
# a value that already includes the peer's read-done +1, that acquire creates a happens-before
# edge from the peer's racy store to our load and TSan (correctly, for the C++ model) stays
# silent; the load then reads the peer's partial sum and the driver's check fails instead.
check_tsan_race() {
    local variant=$1 name=$2 kernel=$3; shift 4
    local dir="$OUT/$variant"
    local log="$dir/logs/$name.log"
    local rc=0
    timeout "$RUN_LIMIT" "$dir/driver" "$dir/lib$kernel.so" "$@" >"$log" 2>&1 || rc=$?
    local where
    where=$(grep -m1 'SUMMARY: ThreadSanitizer' "$log")
    if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q 'WARNING: ThreadSanitizer: data race' "$log"; then
        record "$variant $name" 1 "race reported: ${where#SUMMARY: ThreadSanitizer: }"
    elif [ "$rc" = 1 ] && grep -q '^FAIL allreduce.*wrong elements [1-9]' "$log"; then
        record "$variant $name" 1 "race detected as wrong sums (no TSan report in this interleaving)"
    else
        record "$variant $name" 0 "exit $rc, expected a ThreadSanitizer data race"; show_log "$log"
        [ "$KEEP_GOING" = 1 ] || summary_and_exit
    fi
}

summary_and_exit() {
    echo
    echo "collc runtime tests: $PASSED passed, $FAILED failed (logs: $OUT/<variant>/logs)"
    if [ "$FAILED" != 0 ]; then
        printf '  failed: %s\n' "${FAILED_NAMES[@]}"
        exit 1
    fi
    exit 0
}

# suite VARIANT — every scenario against one build.
suite() {
    local v=$1
    local T=COLLC_TWAIT_TIMEOUT_MS=500

    unit "$v"
    # Positive: semantics for 3 back-to-back calls with distinct payloads, cells back at 0.
    check "$v" api                         barrier_kernel -- api
    check "$v" barrier-P1                  barrier_kernel -- barrier 1 3
    check "$v" barrier-P2                  barrier_kernel -- barrier 2 3
    check "$v" barrier-P4                  barrier_kernel -- barrier 4 3
    check "$v" barrier-P8                  barrier_kernel -- barrier 8 3
    check "$v" barrier-P4-skew             barrier_kernel -- barrier 4 3 skew
    check "$v" barrier-P8-chaos            barrier_kernel -- barrier 8 50 chaos
    check "$v" allreduce-P2-n256           allreduce_kernel -- allreduce 2 3 256 1 1
    check "$v" allreduce-P4-n256           allreduce_kernel -- allreduce 4 3 256 1 1
    check "$v" allreduce-P2-n1000          allreduce_kernel -- allreduce 2 3 1000 1 1
    check "$v" allreduce-P4-n1000-skew     allreduce_kernel -- allreduce 4 3 1000 1 1 skew
    check "$v" allreduce-P8-n777           allreduce_kernel -- allreduce 8 3 777 1 1
    # Multicore lanes: the domain doc's test shapes (idle lane, stride > C, uneven chunks).
    check "$v" allreduce-P2-n1-C2-s2       allreduce_kernel -- allreduce 2 3 1 2 2
    check "$v" allreduce-P2-n4127-C4-s6    allreduce_kernel -- allreduce 2 3 4127 4 6
    check "$v" allreduce-P4-n1041-C2-s2    allreduce_kernel -- allreduce 4 3 1041 2 2 skew
    check "$v" allreduce-P4-n1041-chaos    allreduce_kernel -- allreduce 4 20 1041 2 2 chaos

    # Negative: deadlock -> loud timeout naming the cell; residue; lost credit; data race.
    check "$v" broken-barrier-P2-timeout   broken_barrier_kernel "$T" -- expect-timeout 2 3 5000
    check "$v" broken-barrier-P4-timeout   broken_barrier_kernel "$T" -- expect-timeout 4 3 5000
    check "$v" no-epilogue-residue         no_epilogue_barrier_kernel -- expect-residue 4 3
    check "$v" set0-epilogue-lost-credit   set0_epilogue_barrier_kernel "$T" -- expect-lost-credit 2 300
}

echo "collc runtime tests (CXX=$CXX, output $OUT)"

if build opt "${OPT_FLAGS[@]}"; then
    suite opt
else
    [ "$KEEP_GOING" = 1 ] || summary_and_exit
fi

if [ "$RUN_TSAN" = 1 ]; then
    if build tsan "${TSAN_FLAGS[@]}"; then
        suite tsan
        check_tsan_race tsan racy-allreduce-tsan-race racy_allreduce_kernel -- allreduce 2 3 256 1 1
    else
        [ "$KEEP_GOING" = 1 ] || summary_and_exit
    fi
fi

# Baselines: compile warning-free as a shared object and run a smoke test.
mkdir -p "$OUT/bench/logs"
log="$OUT/bench/logs/baselines.log"
if "$CXX" "${WARN[@]}" -O2 -shared -fPIC "$RT/bench/baselines.cpp" -o "$OUT/bench/libcollc_baselines.so" >"$log" 2>&1 &&
    "$CXX" "${WARN[@]}" -O2 "$RT/tests/baselines_smoke.cpp" "$RT/bench/baselines.cpp" -o "$OUT/bench/baselines_smoke" >>"$log" 2>&1 &&
    timeout "$RUN_LIMIT" "$OUT/bench/baselines_smoke" >>"$log" 2>&1; then
    record "baselines" 1 "$(grep -c '^PASS' "$log") baselines ok ($(grep 'pingpong' "$log" | sed 's/.*= //') ns ping-pong)"
else
    record "baselines" 0 "see $log"; show_log "$log"
fi

summary_and_exit
