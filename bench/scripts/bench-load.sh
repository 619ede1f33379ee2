#!/usr/bin/env bash
# Small-message medians under load with --bind-to none (issue 21: 2 ms steps
# when two ranks end up time-sharing one core), before and after, alternating
# launches in one script, with one busy loop per CPU running beside them:
#   before  OLD=path/to/fabricbench (a build without the per-rank CPU pinning)
#   after   this build's fabricbench
# Each launch: `run --ops pingpong,sendrecv -b 8 -e 8 -n 2000` (exactly 2000 iterations).
# Prints each launch's medians (us), then per mode and op the median and the
# largest over launches.
#   OLD=/work/main/build/fabricbench bench/scripts/bench-load.sh [launches=4]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
launches=${1:-4}
bin=${BUILD:-$here/build}/fabricbench
old=${OLD:?give OLD=path/to/the fabricbench to compare with}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
loads=()
cleanup() {
  for p in "${loads[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  loads+=($!)
done

one() {  # mode launch
  local mode=$1 k=$2 b=$bin fixed=(--median-ci 0)
  [[ $mode == before ]] && b=$old fixed=()  # a build before --median-ci runs exactly -n already
  mpirun -np 2 --oversubscribe --bind-to none "$b" run --ops pingpong,sendrecv -b 8 -e 8 -n 2000 -w 200 \
    "${fixed[@]}" --placement out -q --progress off --out "$tmp/$mode.$k.jsonl" </dev/null >/dev/null 2>"$tmp/err" ||
    { echo "bench-load: the $mode launch failed:" >&2; cat "$tmp/err" >&2; exit 1; }
}
for k in $(seq "$launches"); do
  if ((k % 2)); then one before "$k"; one after "$k"; else one after "$k"; one before "$k"; fi
done
# The records are read through this build's binary (`report rows`, which reads older records too), not their text.
python3 - "$tmp" "$launches" "$bin" <<'EOF'
import csv, io, statistics, subprocess, sys
tmp, n, fb = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for mode in ("before", "after"):
    per = {}
    for k in range(1, n + 1):
        rows = subprocess.run([fb, "report", "rows", f"{tmp}/{mode}.{k}.jsonl"], check=True, capture_output=True,
                              text=True).stdout
        for r in csv.DictReader(io.StringIO(rows), delimiter="\t"):
            per.setdefault(r["op"], []).append(float(r["median_us"]))
    for op, v in per.items():
        print(f"{mode:6s} {op:9s} 8 B medians us: {', '.join(f'{x:.2f}' for x in v)}; median {statistics.median(v):.2f}, max {max(v):.2f}")
EOF
