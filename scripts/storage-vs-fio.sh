#!/usr/bin/env bash
# fabricbench storage beside fio on one node, the same pattern in the same
# run: one file per rank written then read sequentially in blocks, O_DIRECT,
# one process, sync I/O (fio: ioengine=psync, direct=1, end_fsync=1 on the
# write). Runs each ROUNDS times, alternating, and prints the median GB/s of
# each and their ratio (fabricbench / fio); exit 1 when a ratio is outside
# 0.90..1.10. A speed goal checked as a ratio against a reference run side by
# side, not in a timed test.
#   scripts/storage-vs-fio.sh [DIR] [BYTES] [BLOCK] [ROUNDS]    (default /var/tmp 1G 1M 3)
set -euo pipefail
dir=${1:-/var/tmp}
bytes=${2:-1G}
block=${3:-1M}
rounds=${4:-3}
fb=${FABRICBENCH:-$(dirname "$0")/../build/fabricbench}
command -v fio >/dev/null || { echo "storage-vs-fio: fio is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
[ -x "$fb" ] || { echo "storage-vs-fio: no fabricbench at $fb (set FABRICBENCH)" >&2; exit 2; }
[ -d "$dir" ] && [ -w "$dir" ] || { echo "storage-vs-fio: '$dir' is not a writable folder" >&2; exit 2; }
work=$(mktemp -d "$dir/fb-vs-fio.XXXXXX")
trap 'rm -rf "$work"' EXIT

fb_once() {  # prints "write_gbps read_gbps"
  "$fb" storage --path "$work" --patterns seq --direct on --block-sizes "$block" --bytes "$bytes" -q \
    --out "$work/r.jsonl" --overwrite 2>/dev/null
  jq -r 'select(.type=="storage") | "\(.pattern) \(.aggregate_gbps)"' "$work/r.jsonl" |
    awk '$1=="seq_write"{w=$2} $1=="seq_read"{r=$2} END{print w, r}'
}
fio_once() {  # the same: write with the fsync in the span, then read the file back
  local common=(--name=fb --filename="$work/fio.dat" --bs="$block" --size="$bytes" --direct=1 --ioengine=psync
                --numjobs=1 --output-format=json)
  local w r
  w=$(fio "${common[@]}" --rw=write --end_fsync=1 | jq '.jobs[0].write.bw_bytes / 1e9')
  r=$(fio "${common[@]}" --rw=read | jq '.jobs[0].read.bw_bytes / 1e9')
  rm -f "$work/fio.dat"
  echo "$w $r"
}
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

fbw=() fbr=() fiow=() fior=()
for ((i = 0; i < rounds; i++)); do
  read -r w r < <(fb_once); fbw+=("$w"); fbr+=("$r")
  read -r w r < <(fio_once); fiow+=("$w"); fior+=("$r")
done
fs=$(df -T "$work" | awk 'NR==2{print $2}')
status=0
for kind in write read; do
  if [ $kind = write ]; then a=$(printf '%s\n' "${fbw[@]}" | median); b=$(printf '%s\n' "${fiow[@]}" | median)
  else a=$(printf '%s\n' "${fbr[@]}" | median); b=$(printf '%s\n' "${fior[@]}" | median); fi
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", a / b}')
  ok=$(awk -v x="$ratio" 'BEGIN{print (x >= 0.9 && x <= 1.1) ? "within 10%" : "OUTSIDE 10%"}')
  [ "$ok" = "within 10%" ] || status=1
  printf 'seq_%s %s blocks %s O_DIRECT on %s (%s): fabricbench %.3f GB/s, fio %.3f GB/s, ratio %s (%s; median of %d)\n' \
    "$kind" "$block" "$bytes" "$dir" "$fs" "$a" "$b" "$ratio" "$ok" "$rounds"
done
exit $status
