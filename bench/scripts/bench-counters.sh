#!/usr/bin/env bash
# Do the error-counter reads around every row (docs/run.md, "Fabric health")
# disturb the timed loop? The same sweep with the counters read (`--counters
# /`, the default) and not read (`--counters off`), alternated run by run,
# side by side in one script. Prints per size class the median ratio of
# each row's median time (read / off) and, as the noise floor, the same
# ratio between two halves of the `off` runs; then the wall times, whose
# difference is the reads' own cost (outside the timed loop) and the
# per-row counters line of -v.
#   bench/scripts/bench-counters.sh [runs=4] [extra run flags...]
# 2 ranks, shared memory, --bind-to none (the README's launch line).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-4}
shift || true
bin=${BUILD:-$here/build}/fabricbench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sweep=(-b 8 -e 4M -f 4 --ops "all_reduce,pingpong" -n 200 -w 10 --median-ci 0)

# shellcheck source=bench/scripts/timed-run.sh
. "$here/bench/scripts/timed-run.sh"
one() {  # mode run [extra run flags...]
  local where=/
  [[ $1 == off ]] && where=off
  timed_run bench-counters "$tmp/$1.$2" "$bin" "${sweep[@]}" --counters "$where" -q -v "${@:3}"
}

for k in $(seq "$runs"); do
  if ((k % 2)); then one read "$k" "$@"; one off "$k" "$@"; else one off "$k" "$@"; one read "$k" "$@"; fi
done

python3 - "$tmp" "$runs" <<'PY'
import re, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
def rows(path):  # `fabricbench report rows`: a header line, then one row a line
    lines = open(path).read().splitlines()
    names = lines[0].split("\t")
    return {(r["op"], int(r["bytes"]), r["placement"]): float(r["median_us"])
            for r in (dict(zip(names, l.split("\t"))) for l in lines[1:])}
def cls(b):
    return "< 64 KiB" if b < 64 << 10 else ">= 64 KiB"
def med_of(recs, key):
    return statistics.median(r[key] for r in recs)
read = [rows(f"{tmp}/read.{k}.rows") for k in range(1, runs + 1)]
off = [rows(f"{tmp}/off.{k}.rows") for k in range(1, runs + 1)]
keys = set.intersection(*(set(r) for r in read + off))
half = max(1, runs // 2)
ratio, noise = {}, {}
for key in keys:
    ratio.setdefault(cls(key[1]), []).append(med_of(read, key) / med_of(off, key))
    if runs >= 2:
        noise.setdefault(cls(key[1]), []).append(med_of(off[:half], key) / med_of(off[half:], key))
print(f"{len(keys)} rows, {runs} runs each way")
for c in ("< 64 KiB", ">= 64 KiB"):
    if c not in ratio:
        continue
    line = f"  {c:10s} row median time read/off: median {statistics.median(ratio[c]):.3f} " \
           f"(rows {min(ratio[c]):.3f}-{max(ratio[c]):.3f})"
    if c in noise:
        line += f"; noise floor off/off: median {statistics.median(noise[c]):.3f} " \
                f"(rows {min(noise[c]):.3f}-{max(noise[c]):.3f})"
    print(line)
cost = []
for k in range(1, runs + 1):
    for m in re.finditer(r"counters: (\d+) files read before and after the row: ([\d.]+) us before, ([\d.]+) us after",
                         open(f"{tmp}/read.{k}.err").read()):
        cost.append(float(m.group(2)) + float(m.group(3)))
if cost:
    print(f"  reads per row on a leader: {m.group(1)} files, median {statistics.median(cost):.0f} us "
          f"(outside the timed loop), {len(cost)} rows")
wall = {mode: statistics.median(float(open(f"{tmp}/{mode}.{k}.wall").read()) for k in range(1, runs + 1))
        for mode in ("read", "off")}
print(f"  wall: read {wall['read']:.1f} s, off {wall['off']:.1f} s (median of {runs})")
PY
