#!/usr/bin/env bash
# The test command: install what is missing, build from a clean folder, run
# every ctest label (extra arguments go to ctest, e.g. -LE gpu or -L unit).
# Tests that need services (namespaces, Slurm daemons) start and stop their own.
# Each label runs as a phase of its own, timed against its ceiling
# (scripts/lib/phases.sh); every label runs even when one fails.
#   scripts/test.sh [ctest arguments]
set -euo pipefail
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib/usage.sh" || exit 2
help_if_asked "$0" "$@"
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FABRICBENCH_TEST_BUILD:-$here/build-test}
jobs=$(nproc)
source "$here/scripts/lib/phases.sh"

# -g1: line tables and function names, what a backtrace or a debugger's
# "where" needs, at four fifths of -g's compile time (the test tree is thrown
# away after the run; an installed build keeps the build type's full -g).
build_tree() {  # run by `phase`: set -e does not reach inside, so each step is chained
  rm -rf "$build" &&
    cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null &&
    cmake --build "$build" -j "$jobs"
}

phase setup "$here/scripts/setup.sh"
phase build build_tree
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest_by_label "$build" "$jobs" "$@"
