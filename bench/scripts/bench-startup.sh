#!/usr/bin/env bash
# Start-up cost of `fabricbench run` above a plain MPI program, side by side in
# one script, alternating launches (issue 21: "under 0.2 s above MPI_Init"):
#   plain  build/bench/fb_bare_loop pingpong 8 0: MPI_Init, MPI_Finalize, nothing else;
#   run    fabricbench run, one 8-byte ping-pong row of 10 iterations (-v: its
#          rank 0 logs where the start went, "start-up: <phase> <ms>, ...").
# Prints each launch's wall time, the medians, their difference, and the
# phases of the last `run` launch.
#   bench/scripts/bench-startup.sh [launches=5]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
launches=${1:-5}
build=${BUILD:-$here/build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
launch=(mpirun -np 2 --oversubscribe --bind-to none)

wall() {  # name command...: appends the wall time to $tmp/name
  local name=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  if ! "$@" </dev/null >"$tmp/out" 2>&1; then
    echo "bench-startup: '$*' failed:" >&2
    cat "$tmp/out" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc >>"$tmp/$name"
}

for k in $(seq "$launches"); do
  wall plain "${launch[@]}" "$build/bench/fb_bare_loop" pingpong 8 0
  wall run "${launch[@]}" "$build/fabricbench" run -b 8 -e 8 --ops pingpong -n 10 --median-ci 0 -q -v --progress off
  grep -o 'start and end: .*' "$tmp/out" >"$tmp/phases" || true
  printf 'launch %d: plain %.2f s, run %.2f s\n' "$k" "$(tail -1 "$tmp/plain")" "$(tail -1 "$tmp/run")"
done
python3 - "$tmp" <<'EOF'
import statistics, sys
tmp = sys.argv[1]
plain = statistics.median(float(x) for x in open(f"{tmp}/plain"))
run = statistics.median(float(x) for x in open(f"{tmp}/run"))
print(f"median: plain MPI program {plain:.2f} s, fabricbench run {run:.2f} s, above the plain program {run - plain:.2f} s (goal: under 0.2)")
EOF
echo "last run's phases (rank 0, each since the previous mark): $(cat "$tmp/phases")"
