#!/usr/bin/env bash
# The default sweep's wall time and the stability of its medians, before and
# after the adaptive stop, side by side in one script, alternating runs:
#   before  `run --median-ci 0 -n 20`: exactly 20 timed iterations per size
#           after 5 warm-up ones, the default until the adaptive stop (or,
#           with OLD=path/to/fabricbench, that binary's own default);
#   after   `run` as it is now (adaptive: docs/results-schema.md `stopped_by`).
# Prints each run's wall time, then per mode the median wall time and the
# spread of each row's median over the runs ((max - min) / median of the
# medians: the median and 90th percentile of that over rows, per size class).
#   bench/scripts/bench-sweep.sh [runs=3] [extra run flags...]
# 2 ranks, shared memory, --bind-to none (the README's launch line).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
shift || true
build=${BUILD:-$here/build}
bin=$build/fabricbench
old=${OLD:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=bench/scripts/timed-run.sh
. "$here/bench/scripts/timed-run.sh"
one() {  # mode run [run flags...]
  local mode=$1 k=$2
  shift 2
  if [[ $mode == before && -n $old ]]; then
    timed_run bench-sweep "$tmp/$mode.$k" "$old" -q "$@"
  elif [[ $mode == before ]]; then
    timed_run bench-sweep "$tmp/$mode.$k" "$bin" --median-ci 0 -n 20 -q "$@"
  else
    timed_run bench-sweep "$tmp/$mode.$k" "$bin" -q "$@"
  fi
}

for k in $(seq "$runs"); do
  if ((k % 2)); then one before "$k" "$@"; one after "$k" "$@"; else one after "$k" "$@"; one before "$k" "$@"; fi
done

python3 - "$tmp" "$runs" <<'EOF'
import statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
def rows(path):  # `fabricbench report rows`: a header line, then one row a line
    lines = open(path).read().splitlines()
    names = lines[0].split("\t")
    out = {}
    for line in lines[1:]:
        r = dict(zip(names, line.split("\t")))
        out[(r["op"], r["scope"], int(r["bytes"]), r["placement"])] = r
    return out
def cls(b):
    return "< 64 KiB" if b < 64 << 10 else ("64 KiB - 8 MiB" if b < 16 << 20 else ">= 16 MiB")
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]
walls = {}
for mode in ("before", "after"):
    walls[mode] = statistics.median(float(open(f"{tmp}/{mode}.{k}.wall").read()) for k in range(1, runs + 1))
    recs = [rows(f"{tmp}/{mode}.{k}.rows") for k in range(1, runs + 1)]
    keys = set.intersection(*(set(r) for r in recs))
    spread, iters = {}, {}
    for key in keys:
        meds = [float(r[key]["median_us"]) for r in recs]
        m = statistics.median(meds)
        spread.setdefault(cls(key[2]), []).append((max(meds) - min(meds)) / m if m > 0 else 0)
        iters.setdefault(cls(key[2]), []).append(statistics.median(int(r[key]["iterations"]) for r in recs))
    print(f"{mode:6s}: wall {walls[mode]:.1f} s (median of {runs}), {len(keys)} rows")
    for c in ("< 64 KiB", "64 KiB - 8 MiB", ">= 16 MiB"):
        if c in spread:
            print(f"    {c:15s} spread of medians over runs: median {100 * statistics.median(spread[c]):5.1f}%, "
                  f"p90 {100 * pct(spread[c], 0.9):5.1f}%; iterations per row: median {statistics.median(iters[c]):.0f}")
print(f"wall time after/before: {walls['after'] / walls['before']:.2f} (goal: 0.5 or less)")
EOF
