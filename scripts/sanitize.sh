#!/usr/bin/env bash
# The sanitizer and fuzzing step of CI (.ci/run runs it after scripts/test.sh):
# a second build, with clang, AddressSanitizer + UndefinedBehaviorSanitizer
# (LeakSanitizer included) and libFuzzer coverage, of what the unit tests run
# and the fuzz harnesses only (no GPU code, no benchmarks), then
#   ctest -L unit   every unit test under the sanitizers: a finding fails it;
#   ctest -L fuzz   each harness fuzzed for FABRICBENCH_FUZZ_SECONDS (default
#                   60) from its seeds in tests/fuzz/corpus/.
# Then a third build, with clang and ThreadSanitizer (GPU and benchmarks
# off), of the threads' tests only (fb_core and two test programs, to keep
# CI's 2-core run short): the watchdog's, the progress board's and the
# engine's thread tests (fb_watchdog_tests: whole jobs of watchdog threads in
# one process, agents, hubs, the judge; the engine's loop on threads of its
# own under those watchdog threads, which read its board, abort the group it
# is blocked in and seal the record it writes) and the scale simulation
# (rank 0's monitor thread against 4,096 simulated ranks). The engine's tests
# add no build target (they are in fb_watchdog_tests, on fb_core): one more
# file to compile (69 s under TSan at a load average of 12) and 2 s of tests.
# The whole step measured then: build 970 s from an empty tree, 53 tests
# 27 s. Set FABRICBENCH_TSAN=0 to skip it.
# Open MPI's own allocations kept until exit are suppressed by library name
# (tests/sanitizers/lsan.supp); fabricbench's code is checked in full.
# FABRICBENCH_SANITIZE_LABELS='unit|mpi|fuzz' adds the MPI tests (slow: every
# rank runs sanitized; build the whole tree for them).
#   scripts/sanitize.sh [extra ctest arguments]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FABRICBENCH_SANITIZED_BUILD:-$here/build-sanitized}
labels=${FABRICBENCH_SANITIZE_LABELS:-unit|fuzz}
jobs=$(nproc)

"$here/scripts/setup.sh"
rm -rf "$build"
start=$(date +%s)
# -O1: what the sanitizers' documentation recommends (reasonable speed, exact
# reports), and about a third less compile time than -O2 on CI's 2 cores.
sanitized_flags="-O1 -g -DNDEBUG"
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitized_flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitized_flags" \
  -DFABRICBENCH_SANITIZE=address,undefined -DFABRICBENCH_FUZZ=ON -DFABRICBENCH_BENCH=OFF -DFABRICBENCH_GPU=OFF >/dev/null
# Every program a `unit` test runs (fb_unit_programs, tests/CMakeLists.txt), and the harnesses.
targets=(fb_unit_programs $(sed -n 's/^fb_add_fuzzer(\([a-z_]*\) .*/fuzz_\1/p' "$here/tests/fuzz/CMakeLists.txt"))
[[ $labels == *mpi* ]] && targets=(all)
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
echo "sanitize.sh: sanitized build took $(($(date +%s) - start)) s" >&2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "$build" --output-on-failure -j "$jobs" -L "^($labels)\$" "$@"

[[ ${FABRICBENCH_TSAN:-1} == 0 ]] && exit 0
tsan=${FABRICBENCH_TSAN_BUILD:-$here/build-tsan}
rm -rf "$tsan"
start=$(date +%s)
CC=clang CXX=clang++ cmake -S "$here" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitized_flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitized_flags" \
  -DFABRICBENCH_SANITIZE=thread -DFABRICBENCH_BENCH=OFF -DFABRICBENCH_GPU=OFF >/dev/null
cmake --build "$tsan" -j "$jobs" --target fb_watchdog_tests fb_watchdog_sim
echo "sanitize.sh: thread-sanitized build took $(($(date +%s) - start)) s" >&2
start=$(date +%s)
ctest --test-dir "$tsan" --output-on-failure -j "$jobs" -R '^(Watch|Progress)|^unit[.]watchdog_scale' "$@"
echo "sanitize.sh: thread-sanitized tests took $(($(date +%s) - start)) s" >&2
