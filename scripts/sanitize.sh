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
# add no build target (they are in fb_watchdog_tests, on fb_core). Each
# build, label and tree is a timed phase held to its ceiling
# (scripts/lib/phases.sh; figures in docs/testing.md, "CI time"). Set
# FABRICBENCH_TSAN=0 to skip the TSan tree.
# Open MPI's own allocations kept until exit are suppressed by library name
# (tests/sanitizers/lsan.supp); fabricbench's code is checked in full.
# FABRICBENCH_SANITIZE_LABELS='unit|mpi|fuzz' adds the MPI tests (slow: every
# rank runs sanitized; build the whole tree for them).
#   scripts/sanitize.sh [extra ctest arguments]
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/usage.sh" || exit 2
help_if_asked "$0" "$@"
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FABRICBENCH_SANITIZED_BUILD:-$here/build-sanitized}
labels=${FABRICBENCH_SANITIZE_LABELS:-unit|fuzz}
jobs=$(nproc)
source "$here/scripts/lib/phases.sh"

# -O1: what the sanitizers' documentation recommends (reasonable speed, exact
# reports), and about a third less compile time than -O2 on CI's 2 cores.
# -gline-tables-only: a finding's stack names file and line, which is all a
# sanitizer report prints, without the type and variable information of -g.
sanitized_flags="-O1 -gline-tables-only -DNDEBUG"
configure() {  # configure DIR SANITIZERS [cmake arguments]
  local dir=$1 sanitizers=$2
  shift 2
  rm -rf "$dir" &&
    CC=clang CXX=clang++ cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitized_flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitized_flags" \
      -DFABRICBENCH_SANITIZE="$sanitizers" -DFABRICBENCH_BENCH=OFF -DFABRICBENCH_GPU=OFF "$@" >/dev/null
}

# Every program a `unit` test runs (fb_unit_programs, tests/CMakeLists.txt), and the harnesses.
targets=(fb_unit_programs $(sed -n 's/^fb_add_fuzzer(\([a-z_]*\) .*/fuzz_\1/p' "$here/tests/fuzz/CMakeLists.txt"))
[[ $labels == *mpi* ]] && targets=(all)
sanitized_tree() {  # run by `phase`: set -e does not reach inside, so each step is chained
  configure "$build" address,undefined -DFABRICBENCH_FUZZ=ON &&
    cmake --build "$build" -j "$jobs" --target "${targets[@]}"
}

phase setup "$here/scripts/setup.sh"
phase sanitize-build sanitized_tree
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
FB_PHASE_PREFIX=sanitize ctest_by_label "$build" "$jobs" -L "^($labels)\$" "$@" || status=$?

if [[ ${FABRICBENCH_TSAN:-1} != 0 ]]; then
  tsan=${FABRICBENCH_TSAN_BUILD:-$here/build-tsan}
  tsan_tree() {
    configure "$tsan" thread &&
      cmake --build "$tsan" -j "$jobs" --target fb_watchdog_tests fb_watchdog_sim
  }
  phase tsan-build tsan_tree
  phase tsan:tests ctest --test-dir "$tsan" --output-on-failure -j "$jobs" -R '^(Watch|Progress)|^unit[.]watchdog_scale' "$@" ||
    { [ "$status" -ne 0 ] || status=1; }
fi
exit "$status"
