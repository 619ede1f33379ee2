#!/usr/bin/env bash
# The test command: install what is missing, build from a clean folder, run
# every ctest label (extra arguments go to ctest, e.g. -LE gpu or -L unit).
# Tests that need services (namespaces, Slurm daemons) start and stop their own.
#   scripts/test.sh [ctest arguments]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FABRICBENCH_TEST_BUILD:-$here/build-test}
jobs=$(nproc)

"$here/scripts/setup.sh"
rm -rf "$build"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
