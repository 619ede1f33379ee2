#!/usr/bin/env bash
# The watchdog at scale, measured: rank 0's real monitor (its own process)
# against a simulated job (tests/scale/watchdog_sim.cpp: one process speaks
# the wire protocol for every other rank, a TCP connection per node leader,
# 8 ranks a node) at 512 to 8,192 ranks. For each size: rank 0's CPU share
# over a healthy stretch, its memory, the descriptors it holds, and the time
# from a planted fault to its report: a hang (a rank stops progressing) and
# a frozen rank (it stops reporting). Prints a table (markdown).
#   bench/scripts/watchdog-scale.sh [build dir] [timeout s] [healthy stretch s]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
timeout_s=${2:-5}
steady_s=${3:-8}
sim="$build/tests/scale/fb_watchdog_sim"
[ -x "$sim" ] || { echo "watchdog-scale.sh: build fb_watchdog_sim first: $sim is missing" >&2; exit 2; }
command -v jq >/dev/null || { echo "watchdog-scale.sh: needs jq" >&2; exit 2; }
echo "rank 0 against simulated ranks, 8 a node, --timeout $timeout_s, ${steady_s} s healthy before the fault; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| ranks | nodes | rank 0 descriptors | rank 0 CPU | rank 0 RSS (peak) | RSS growth | hang to report | frozen rank to report |"
echo "|---|---|---|---|---|---|---|---|"
for ranks in 512 1024 2048 4096 8192; do
  hang=$("$sim" --ranks $ranks --per-node 8 --timeout "$timeout_s" --steady "$steady_s" --fault hang:$((ranks / 2 + 3)) --check)
  frozen=$("$sim" --ranks $ranks --per-node 8 --timeout "$timeout_s" --steady "$steady_s" --fault freeze:$((ranks / 3 + 1)) --check)
  echo "$hang" | jq -r --argjson f "$(echo "$frozen" | jq .report_after_s)" \
    '"| \(.ranks) | \(.nodes) | \(.open_fds) | \(.cpu_share * 1000 | round / 10) % | \(.rss_peak_kib / 1024 * 10 | round / 10) MiB | \((.rss_peak_kib - .rss_before_kib) / 1024 * 10 | round / 10) MiB | \(.report_after_s * 100 | round / 100) s | \($f * 100 | round / 100) s |"'
done
