#!/usr/bin/env bash
# fabricbench storage beside fio on one node, the same pattern in the same
# run, O_DIRECT, one process, sync I/O, one call in flight (fio: ioengine=psync,
# iodepth=1, direct=1, fallocate=none). Runs each ROUNDS times, the tools taking
# turns going first, and prints the median GB/s of each and the median of
# the rounds' ratios (fabricbench / fio, each round's two runs back to back,
# so a disk whose speed drifts between rounds cancels out); exit 1 when that
# ratio is outside 0.90..1.10. A speed goal checked as a ratio against a
# reference run side by side, not in a timed test. CONTROL=fio runs fio in
# fabricbench's place: the same ratio of fio against itself, the noise floor
# of this disk in this scheme.
# Two patterns (PATTERN=seq, the default, or small):
#   seq    one file written then read sequentially in BLOCK blocks, the
#          write's fsync inside the span (fio: end_fsync=1);
#   small  FILES files of FILE_BYTES, each created, written whole, fsynced
#          and closed, then each opened, read whole and closed (fio:
#          nrfiles, openfiles=1, create_on_open=1, fsync after each file's
#          last write: fsync=N, not fsync_on_close=1, see fio_once).
# fabricbench's rows are read through the binary (`fabricbench report storage`),
# and the script stops (exit 2) if they say the calls were made otherwise
# than the fio flags printed first assume.
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
fb=$("$(dirname "$0")/../../scripts/lib/fabricbench-binary.sh" storage-vs-fio) || exit 2
control=${CONTROL:-}
case $control in "" | fio) ;; *) echo "storage-vs-fio: CONTROL=$control: fio or nothing" >&2; exit 2 ;; esac
command -v fio >/dev/null || { echo "storage-vs-fio: fio is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
[ -d "$dir" ] && [ -w "$dir" ] || { echo "storage-vs-fio: '$dir' is not a writable folder" >&2; exit 2; }
case $pattern in seq | small) ;; *) echo "storage-vs-fio: PATTERN=$pattern: seq or small" >&2; exit 2 ;; esac
work= rec=
trap 'rm -rf "$work" "$rec"' EXIT
work=$(mktemp -d "$dir/fb-vs-fio.XXXXXX")
# fabricbench's record goes off the disk under test, as fio's output (a pipe) does: the record is
# fsynced after every row, and on the disk under test that fsync (a journal commit and a cache flush,
# 0.18 s on this VM's disk, strace) sat between the write and the read and gave the read that long a
# pause that fio's read did not get in the same place.
if ! rec=$(mktemp -d /dev/shm/fb-vs-fio-record.XXXXXX 2>/dev/null); then
  rec=$(mktemp -d)
  echo "storage-vs-fio: no /dev/shm; fabricbench's record goes to $rec, which may be on the disk under test" >&2
fi

fb_once() {  # prints "write_gbps read_gbps"
  local flags=(--patterns seq --block-sizes "$block" --bytes "$bytes") sync=end
  [ "$pattern" = small ] && flags=(--patterns small --files "$files" --file-bytes "$file_bytes") sync=file
  "$fb" storage --path "$work" --direct on "${flags[@]}" -q --out "$rec/r.jsonl" --overwrite 2>/dev/null
  # Columns: target pattern mode nodes block_bytes file_bytes files cache io_engine queue_depth sync aggregate_gbps.
  "$fb" report storage "$rec/r.jsonl" | awk -F'\t' -v p="$pattern" -v sync="$sync" '
    $1 != "path" || $3 != "direct" { next }
    $8 != "bypassed" || $9 != "psync" || $10 != 1 || ($2 ~ /_write$/ && $11 != sync) {
      printf "storage-vs-fio: fabricbench %s ran cache=%s io_engine=%s queue_depth=%s sync=%s; fio is given O_DIRECT (bypassed), psync, iodepth 1, and for writes sync %s\n",
        $2, $8, $9, $10, $11, sync > "/dev/stderr"
      bad = 1
    }
    $2 == p "_write" { w = $12 }
    $2 == p "_read" { r = $12 }
    END { if (bad || w == "" || r == "") exit 2; print w, r }'
}
# fio's flags, beside what fabricbench does (its rows' io_engine, queue_depth, sync and fallocate):
# direct=1: O_DIRECT, as fabricbench's --direct on. ioengine=psync, iodepth=1 (its default), numjobs=1: one
# pread/pwrite at a time in one process. fallocate=none: fabricbench writes into a fresh file without reserving
# it first. scramble_buffers=0: fio by default rewrites part of its buffer before every write (against dedupe),
# which cost it 11% at 1M blocks on a RAM-backed disk (docs/storage.md, "Beside fio"); fabricbench stamps 24
# bytes per 4 KiB page instead. invalidate=0, fadvise_hint=0: fio calls posix_fadvise twice on every open
# (DONTNEED, SEQUENTIAL), fabricbench never does; with O_DIRECT neither changes what is read, so only the calls'
# cost would differ (1024 files: 2048 calls inside fio's span).
fio_flags=(--direct=1 --ioengine=psync --iodepth=1 --numjobs=1 --fallocate=none --scramble_buffers=0
           --invalidate=0 --fadvise_hint=0 --output-format=json)
if [ "$pattern" = small ]; then
  file_b=$(numfmt --from=iec "$file_bytes") || { echo "storage-vs-fio: FILE_BYTES=$file_bytes: a size such as 128K" >&2; exit 2; }
  bs_b=$((file_b > 16777216 ? 16777216 : file_b))  # fabricbench's block for small files: the file, up to 16 MiB
  fio_flags+=(--nrfiles="$files" --filesize="$file_b" --size=$((file_b * files)) --bs="$bs_b" --openfiles=1
              --file_service_type=sequential)
  # One fsync per file after its last write, inside its span, as fabricbench does before each close.
  # Not fsync_on_close=1: with it fio also reopens every file at the end of the job and fsyncs it again
  # (strace: open, fsync, close per file once all are written, inside fio's timed span), a second pass
  # fabricbench does not make; on a disk with a write-back cache each of those fsyncs is a flush.
  fio_write=(--create_on_open=1 --fsync=$(((file_b + bs_b - 1) / bs_b)))
else
  fio_flags+=(--bs="$block" --size="$bytes")
  fio_write=(--end_fsync=1)  # one fsync after the last block, inside the span
fi
# The same: write (fsync in the span), then read back, in one fio run whose read job starts when the
# write job ends (stonewall), as fabricbench reads right after it writes. Two fio runs put a process start
# (0.1-0.3 s) between the write and the read, time a virtual disk's host spends flushing the writes: fio's
# reads then ran 15-20% faster than fabricbench's on this VM (0.83-0.85 over three sessions).
fio_once() {  # prints "write_gbps read_gbps"
  local out
  mkdir -p "$work/fio"
  # One file name pattern for both jobs: the read job reads the write job's files. create_serialize=0:
  # by default fio sets up every job's files before the first job runs, so it would lay out (write) the
  # read job's file first and the write job would overwrite allocated blocks (1.7x faster here; strace
  # of a 1 GiB run: 1046 write() calls laying the file out besides the job's 1024 pwrite()s; none with it off).
  out=$(fio --directory="$work/fio" "${fio_flags[@]}" --create_serialize=0 --filename_format='fb.$filenum' \
    --name=write --rw=write "${fio_write[@]}" --name=read --stonewall --rw=read)
  rm -rf "$work/fio"
  jq -r '"\(.jobs[0].write.bw_bytes / 1e9) \(.jobs[1].read.bw_bytes / 1e9)"' <<<"$out"
}
median() { sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "# fabricbench storage --direct on: O_DIRECT, psync, queue depth 1, fallocate none, sync $([ "$pattern" = small ] && echo "per file" || echo "at the end")"
echo "# fio ${fio_flags[*]/--output-format=json/} ${fio_write[*]} (write), the same --rw=read (read)"
fbw=() fbr=() fiow=() fior=()
# The tools take turns going first (ABBA...): a disk whose speed drifts over the run (a virtual disk's
# host cache, write-back filling up) then favours neither. A tool that fails stops the script (set -e).
for ((i = 0; i < rounds; i++)); do
  for tool in $( ((i % 2 == 0)) && echo "fb fio" || echo "fio fb"); do
    runner=${tool}_once
    [ "$tool" = fb ] && [ "$control" = fio ] && runner=fio_once
    out=$("$runner")
    read -r w r <<<"$out"
    if [ "$tool" = fb ]; then fbw+=("$w") fbr+=("$r"); else fiow+=("$w") fior+=("$r"); fi
  done
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
  ratio=$(for ((i = 0; i < rounds; i++)); do awk -v a="${fbv[i]}" -v b="${fiov[i]}" 'BEGIN{print a / b}'; done | median)
  ratio=$(awk -v x="$ratio" 'BEGIN{printf "%.3f", x}')
  ok=$(awk -v x="$ratio" 'BEGIN{print (x >= 0.9 && x <= 1.1) ? "within 10%" : "OUTSIDE 10%"}')
  [ "$ok" = "within 10%" ] || status=1
  what="$block blocks $bytes"
  [ "$pattern" = small ] && what="$files files of $file_bytes"
  first=fabricbench
  [ "$control" = fio ] && first="fio (control)"
  printf '%s_%s %s O_DIRECT on %s (%s): %s %.3f GB/s (spread %s), fio %.3f GB/s (spread %s), ratio %s (%s; median of %d rounds'"'"' ratios)\n' \
    "$pattern" "$kind" "$what" "$dir" "$fs" "$first" "$a" "$sa" "$b" "$sb" "$ratio" "$ok" "$rounds"
done
exit $status
