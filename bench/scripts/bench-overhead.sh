#!/usr/bin/env bash
# Harness overhead of `fabricbench run` against a bare MPI_Allreduce loop, same
# run, same buffers, 2 ranks (see bench/overhead_vs_bare.cpp). Builds first.
#   bench/scripts/bench-overhead.sh [rounds] [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-9}
build=${2:-$here/build}
cmake -S "$here" -B "$build" >/dev/null
cmake --build "$build" --target fb_overhead_bench fb_engine_bench >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun -np 2 --bind-to none "$build/bench/fb_overhead_bench" "$rounds"
echo "# per-iteration cost of the timed loop itself (Google Benchmark, one process):"
"$build/bench/fb_engine_bench" --benchmark_filter='BM_TimedIteration|BM_MeasurementOfNoOp' 2>/dev/null | grep -E '^BM_'
