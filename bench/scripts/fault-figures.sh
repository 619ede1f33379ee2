#!/usr/bin/env bash
# Reliability figures, measured: every kind of injected fault (--inject,
# test-only) tried N times on 4 ranks of this machine (loopback only), each
# against the detection that must catch it; the time from a hang to its
# report; the finished rows lost after a kill. Prints one table; exits 1
# when a fault went undetected or a finished row was lost (mpi.bench.fault_figures
# runs it with one trial per kind).
#   bench/scripts/fault-figures.sh [trials per kind] [build dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
trials=${1:-5}
build=${2:-$here/build}
fb="$build/fabricbench"
[ -x "$fb" ] || { echo "fault-figures.sh: build first: $fb is missing" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rec="$work/r.jsonl"
timeout_s=5
# Both placements, as the rows expected below are counted (the host default is one).
sweep=(-b 1K -e 64K -f 4 -n 5 -w 1 --ops all_reduce,all_gather --placement both)

run() {
  rm -f "$rec"
  local t0=$(date +%s.%N)
  timeout 120 mpirun --oversubscribe --bind-to none -np 4 "$fb" run --progress off -q --out "$rec" "$@" \
    >"$work/out" 2>&1 || true
  wall=$(echo "$(date +%s.%N) - $t0" | bc)
}
# The record's lines through the binary (`report lines`: checked, at its schema), never its text; jq reads those.
lines() { "$fb" report lines "$rec" 2>/dev/null; }
closing() { lines | tail -n 1 | jq -c "$1"; }
# The rows that finish before all_gather 16K starts, as [op, bytes, in_place].
expected_rows=$(for op in all_reduce all_gather; do for b in 1024 4096 16384 65536; do
  [ "$op" = all_gather ] && [ $b = 16384 ] && break 2
  for p in false true; do echo "[\"$op\",$b,$p]"; done; done; done)

hang_ok=0; kill_ok=0; corrupt_ok=0; slow_ok=0; error_ok=0
latencies=(); walls=(); lost_rows=0
for ((t = 0; t < trials; t++)); do
  k=$((t % 4))
  run "${sweep[@]}" --timeout $timeout_s --inject "hang:rank=$k,op=all_gather,bytes=16K,after=$((t % 5))"
  [ "$(closing '.status == "hang" and .report.stuck_ranks == ['$k']')" = true ] && hang_ok=$((hang_ok + 1))
  latencies+=("$(closing '.report.stalled_s')"); walls+=("$wall")

  kk=$((1 + t % 3))  # rank 0 writes the record; its own loss is tested in tests/cli
  run "${sweep[@]}" --inject "kill:rank=$kk,op=all_gather,bytes=16K"
  got=$(lines | jq -c 'select(.type == "measurement") | [.op, .bytes, .in_place]')
  lost=$(comm -23 <(echo "$expected_rows" | sort) <(echo "$got" | sort) | grep -c . || true)
  lost_rows=$((lost_rows + lost))
  [ "$(closing '.status == "rank_lost" and .report.lost_ranks == ['$kk']')" = true ] && [ "$got" = "$expected_rows" ] &&
    kill_ok=$((kill_ok + 1))

  run -b 4K -e 16K -f 4 -n 4 -w 1 --ops all_reduce,all_gather --placement both -c --inject "corrupt:rank=$k,count=2"
  [ "$(lines | jq -s '[.[] | select(.type == "measurement")] | length == 8 and all(.wrong == 2 and .wrong_ranks == ['$k'])')" = true ] &&
    corrupt_ok=$((corrupt_ok + 1))

  run -b 256K -e 256K --ops all_reduce,all_gather --placement out -n 20 -w 2 --inject "slow:rank=$k,factor=4"
  [ "$(lines | jq -s '[.[] | select(.type == "measurement")] | length == 2 and all(.slowest_rank == '$k')')" = true ] &&
    slow_ok=$((slow_ok + 1))

  run "${sweep[@]}" --inject "error:rank=$k,op=all_gather,bytes=4K"
  [ "$(closing '.status == "error" and .report.rank == '$k'')" = true ] && error_ok=$((error_ok + 1))
done

stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "min %.2f median %.2f max %.2f", a[1], a[int((NR+1)/2)], a[NR]}'; }
echo "# $trials trials per kind, 4 ranks, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%-8s %8s %9s  %s\n' kind trials detected detection
printf '%-8s %8d %9d  %s\n' hang "$trials" $hang_ok "watchdog names the stuck rank (--timeout $timeout_s)"
printf '%-8s %8d %9d  %s\n' kill "$trials" $kill_ok "record: rank_lost naming the rank, every finished row kept"
printf '%-8s %8d %9d  %s\n' corrupt "$trials" $corrupt_ok "check counts exactly 2 per row on that rank only"
printf '%-8s %8d %9d  %s\n' slow "$trials" $slow_ok "slowest_rank is that rank in every row"
printf '%-8s %8d %9d  %s\n' error "$trials" $error_ok "record: error naming the rank"
echo "# hang to report, s (stuck rank's time without progress when reported): $(stats "${latencies[@]}") (target $timeout_s + 5)"
echo "# wall time of the hung runs, s, start to exit: $(stats "${walls[@]}")"
echo "# finished rows lost after kills: $lost_rows (of $((trials * $(echo "$expected_rows" | wc -l))) finished)"
missed=$((5 * trials - hang_ok - kill_ok - corrupt_ok - slow_ok - error_ok))
if [ "$missed" -gt 0 ] || [ "$lost_rows" -gt 0 ]; then
  echo "fault-figures.sh: $missed injected faults not detected as above, $lost_rows finished rows lost" >&2
  exit 1
fi
