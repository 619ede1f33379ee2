#!/usr/bin/env bash
# fabricbench storage beside fio on one node, the same pattern in the same
# run, O_DIRECT, one process, sync I/O (fio: ioengine=psync, direct=1). Runs
# each ROUNDS times, alternating, and prints the median GB/s of each and
# their ratio (fabricbench / fio); exit 1 when a ratio is outside 0.90..1.10.
# A speed goal checked as a ratio against a reference run side by side, not
# in a timed test. Two patterns (PATTERN=seq, the default, or small):
#   seq    one file written then read sequentially in BLOCK blocks, the
#          write's fsync inside the span (fio: end_fsync=1);
#   small  FILES files of FILE_BYTES, each created, written whole, fsynced
#          and closed, then each opened, read whole and closed (fio:
#          nrfiles, openfiles=1, create_on_open=1, fsync_on_close=1).
#   bench/scripts/storage-vs-fio.sh [DIR] [BYTES] [BLOCK] [ROUNDS]    (default /var/tmp 1G 1M 3)
#   VERBOSE=1 prints every round's figures to stderr.
#   PATTERN=small FILES=1024 FILE_BYTES=128K bench/scripts/storage-vs-fio.sh [DIR] [-] [-] [ROUNDS]
set -euo pipefail
dir=${1:-/var/tmp}
bytes=${2:-1G}
block=${3:-1M}
rounds=${4:-3}
pattern=${PATTERN:-seq}
files=${FILES:-1024}
file_bytes=${FILE_BYTES:-128K}
fb=${FABRICBENCH:-$(dirname "$0")/../../build/fabricbench}
command -v fio >/dev/null || { echo "storage-vs-fio: fio is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
[ -x "$fb" ] || { echo "storage-vs-fio: no fabricbench at $fb (set FABRICBENCH)" >&2; exit 2; }
[ -d "$dir" ] && [ -w "$dir" ] || { echo "storage-vs-fio: '$dir' is not a writable folder" >&2; exit 2; }
case $pattern in seq | small) ;; *) echo "storage-vs-fio: PATTERN=$pattern: seq or small" >&2; exit 2 ;; esac
work=$(mktemp -d "$dir/fb-vs-fio.XXXXXX")
trap 'rm -rf "$work"' EXIT

fb_once() {  # prints "write_gbps read_gbps"
  local flags=(--patterns seq --block-sizes "$block" --bytes "$bytes")
  [ "$pattern" = small ] && flags=(--patterns small --files "$files" --file-bytes "$file_bytes")
  "$fb" storage --path "$work" --direct on "${flags[@]}" -q --out "$work/r.jsonl" --overwrite 2>/dev/null
  jq -r 'select(.type=="storage") | "\(.pattern) \(.aggregate_gbps)"' "$work/r.jsonl" |
    awk -v p="$pattern" '$1==p"_write"{w=$2} $1==p"_read"{r=$2} END{print w, r}'
}
fio_once() {  # the same: write (fsync in the span), then read back
  # fallocate=none: fabricbench writes into a fresh file without reserving it first, so fio does too.
  # scramble_buffers=0: fio by default rewrites part of its buffer before every write (against dedupe),
  # which costs it 11% at 1M blocks on a RAM-backed disk (docs/storage.md, "Beside fio"); fabricbench stamps 24 bytes
  # per 4 KiB page instead. Either way no dedupe happens on the filesystems this compares.
  local common=(--name=fb --directory="$work/fio" --direct=1 --ioengine=psync --numjobs=1 --fallocate=none
                --scramble_buffers=0 --output-format=json)
  if [ "$pattern" = small ]; then
    common+=(--nrfiles="$files" --filesize="$file_bytes" --size=$(("$(numfmt --from=iec "$file_bytes")" * files))
             --bs="$(numfmt --from=iec "$file_bytes" | awk '{print ($1 > 16777216) ? 16777216 : $1}')"
             --openfiles=1 --file_service_type=sequential)
    local wflags=(--create_on_open=1 --fsync_on_close=1)
  else
    common+=(--bs="$block" --size="$bytes")
    local wflags=(--end_fsync=1)
  fi
  local w r
  mkdir -p "$work/fio"
  w=$(fio "${common[@]}" --rw=write "${wflags[@]}" | jq '.jobs[0].write.bw_bytes / 1e9')
  r=$(fio "${common[@]}" --rw=read | jq '.jobs[0].read.bw_bytes / 1e9')
  rm -rf "$work/fio"
  echo "$w $r"
}
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

fbw=() fbr=() fiow=() fior=()
# The tools take turns going first (ABBA...): a disk whose speed drifts over the run (a virtual disk's
# host cache, write-back filling up) then favours neither.
for ((i = 0; i < rounds; i++)); do
  if ((i % 2 == 0)); then
    read -r w r < <(fb_once); fbw+=("$w"); fbr+=("$r")
    read -r w r < <(fio_once); fiow+=("$w"); fior+=("$r")
  else
    read -r w r < <(fio_once); fiow+=("$w"); fior+=("$r")
    read -r w r < <(fb_once); fbw+=("$w"); fbr+=("$r")
  fi
done
# Each tool's own spread over its rounds (max/min - 1): a ratio outside 10% means little when one tool
# alone varies by more than that from round to round.
if [ -n "${VERBOSE:-}" ]; then  # every round's GB/s, in the order they ran
  printf 'round %d: fabricbench write %s read %s; fio write %s read %s\n' \
    $(for ((i = 0; i < rounds; i++)); do echo "$i ${fbw[i]} ${fbr[i]} ${fiow[i]} ${fior[i]}"; done) >&2
fi
spread() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END{printf "%.0f%%", 100 * (hi / lo - 1)}'; }
fs=$(df -T "$work" | awk 'NR==2{print $2}')
status=0
for kind in write read; do
  if [ $kind = write ]; then fbv=("${fbw[@]}") fiov=("${fiow[@]}"); else fbv=("${fbr[@]}") fiov=("${fior[@]}"); fi
  a=$(printf '%s\n' "${fbv[@]}" | median); b=$(printf '%s\n' "${fiov[@]}" | median)
  sa=$(printf '%s\n' "${fbv[@]}" | spread); sb=$(printf '%s\n' "${fiov[@]}" | spread)
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", a / b}')
  ok=$(awk -v x="$ratio" 'BEGIN{print (x >= 0.9 && x <= 1.1) ? "within 10%" : "OUTSIDE 10%"}')
  [ "$ok" = "within 10%" ] || status=1
  what="$block blocks $bytes"
  [ "$pattern" = small ] && what="$files files of $file_bytes"
  printf '%s_%s %s O_DIRECT on %s (%s): fabricbench %.3f GB/s (spread %s), fio %.3f GB/s (spread %s), ratio %s (%s; median of %d)\n' \
    "$pattern" "$kind" "$what" "$dir" "$fs" "$a" "$sa" "$b" "$sb" "$ratio" "$ok" "$rounds"
done
exit $status
