#!/usr/bin/env bash
# How long `fabricbench report html` takes on a 10,000-row record, and how big
# the page is. The record is made the way a user's would be from nccl-tests
# logs: a log in nccl-tests' text layout (4 tests x 1250 sizes x 2
# placements, 8 ranks; figures from an alpha-beta line, not a measurement) is
# read by `report import nccl-tests` into a record through RecordWriter.
# Optionally a second, real record is timed beside it; and when Chromium is
# installed, the time it takes to open and draw the big page.
#   bench/scripts/bench-report-html.sh [runs] [REAL_RECORD.jsonl]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
fb=$("$here/scripts/lib/fabricbench-binary.sh" bench-report-html.sh)
runs=${1:-5}
real=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp/big.log" <<'EOF'
import sys
n, rows = 8, []
out = ["# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809"]
for op, factor, alpha, gbps in (("all_reduce", 2 * (n - 1) / n, 12.0, 230.0), ("all_gather", (n - 1) / n, 10.0, 240.0),
                                ("reduce_scatter", (n - 1) / n, 10.0, 240.0), ("sendrecv", 1.0, 8.0, 180.0)):
    out += [f"# Collective test starting: {op}_perf",
            "# nThread 1 nGpus 8 minBytes 4096 maxBytes 5120000 step: 4096(bytes) warmup iters: 5 iters: 20 agg iters: 1 "
            "validation: 1 graph: 0", "#", "# Using devices"]
    out += [f"#  Rank {r:2d} Group  0 Pid   7711 on    bench01 device {r:2d} [0x{0x18 + r:02x}] NVIDIA H100 80GB HBM3"
            for r in range(n)]
    out += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
            "busbw #wrong", "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
            "(GB/s)  (GB/s)"]
    for k in range(1, 1251):
        s = 4096 * k
        cells = []
        for t in (alpha + s / (gbps * 1e3), 0.99 * (alpha + s / (gbps * 1e3))):
            a = s / t / 1e3
            cells.append(f"{t:7.2f}  {a:6.2f}  {a * factor:6.2f}      0")
        out.append(f"{s:12d}  {s // 4:12d}     float     {'none' if op == 'all_gather' else 'sum':>4}      -1  " + "  ".join(cells))
    out += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 100.0 ", "#"]
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
rows() {  # RECORD: its measurement rows, read through the binary
  "$fb" report scopes --rows "$1" | awk -F'\t' '{n += $2} END {print n + 0}'
}

"$fb" report import nccl-tests "$tmp/big.log" --out "$tmp/big.jsonl" >/dev/null
echo "# record: $(rows "$tmp/big.jsonl") measurement rows, $(stat -c %s "$tmp/big.jsonl") bytes"

time_page() {  # RECORD NAME: the median of $runs builds of the page, and its size
  local times=()
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$fb" report html "$1" -o "$tmp/$2.html" --overwrite >/dev/null
    t1=$(date +%s.%N)
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')")
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  echo "$2: $(rows "$1") rows -> page $(stat -c %s "$tmp/$2.html") bytes, built in ${median} s" \
       "(median of $runs; all: ${times[*]})"
}
time_page "$tmp/big.jsonl" synthetic-10000-rows
[ -n "$real" ] && time_page "$real" "$(basename "$real" .jsonl)"

# What a reader waits for: headless Chromium (when installed) laying out the
# 10,000-row page and drawing its first 1280x2400 pixels, once.
if chromium=$(command -v chromium || command -v chromium-browser); then
  t0=$(date +%s.%N)
  "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp/profile" \
    --window-size=1280,2400 --screenshot="$tmp/big.png" "file://$tmp/synthetic-10000-rows.html" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "synthetic-10000-rows: opened and drawn by headless Chromium in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') s" \
       "(screenshot $(stat -c %s "$tmp/big.png" 2>/dev/null || echo none) bytes)"
fi
exit 0
