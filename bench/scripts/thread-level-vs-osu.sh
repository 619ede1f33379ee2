#!/usr/bin/env bash
# Where the small-message gap to OSU comes from: per size, side by side in one
# run, the tools alternating round by round (the order rotates too),
# 2 local ranks pinned (`mpirun --bind-to core`):
#   fabricbench   `fabricbench run`'s row median (MPI_THREAD_SINGLE: its
#                 watchdog runs in a process of its own; with
#                 FABRICBENCH_WATCHDOG=thread set, on a thread, at FUNNELED);
#   fb-timeout0   the same with `--timeout 0`: no watchdog, so
#                 MPI_THREAD_SINGLE (the header's mpi_thread_level);
#   bare-funneled the bare loop (bench/bare_loop.hpp: the MPI calls alone,
#                 the same statistic as fabricbench's, no other thread)
#                 initialised at MPI_THREAD_FUNNELED;
#   bare-single   the same program at MPI_THREAD_SINGLE (MPI_Init), OSU's level;
#   osu           OSU 7.4's P50 (-z), osu_latency / osu_allreduce -T mpi_float.
# Prints per op and size the medians over rounds and the ratios to OSU. When
# bare-funneled sits at fabricbench's figure and bare-single at OSU's, the gap
# is the MPI library's cost of the thread level, not fabricbench's loop.
#   bench/scripts/thread-level-vs-osu.sh [rounds=3]
# Env: BUILD (the build folder: fabricbench and bench/fb_bare_loop), PEERS (the
# osu_* programs), OPS (default "pingpong all_reduce"), SIZES (default 8..4096).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-3}
build=${BUILD:-$here/build}
peers=${PEERS:-$here/../shared/peers}
ops=${OPS:-pingpong all_reduce}
sizes=${SIZES:-8 64 512 1024 2048 4096}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for f in "$build/fabricbench" "$build/bench/fb_bare_loop"; do
  [[ -x $f ]] || { echo "thread-level-vs-osu: no $f; build it (cmake --build $build)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
launch=(mpirun -np 2 --bind-to core)
min=$(echo "$sizes" | tr ' ' '\n' | sort -n | head -1)
max=$(echo "$sizes" | tr ' ' '\n' | sort -n | tail -1)

fail() {
  echo "thread-level-vs-osu: $1 failed:" >&2
  cat "$tmp/err" >&2
  exit 2
}

# Each tool appends `tool op bytes us` rows to $tmp/rows.
fabricbench_rows() {
  local tool=$1 record=$2
  shift 2
  "${launch[@]}" "$build/fabricbench" run -q --ops "$(echo "$ops" | tr ' ' ',')" -b "$min" -e "$max" "$@" \
    --out "$record" </dev/null >/dev/null 2>"$tmp/err" || fail "fabricbench run $*"
  "$build/fabricbench" report rows "$record" | awk -F'\t' -v sizes=" $sizes " -v tool="$tool" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $(col["placement"]) == "out" && index(sizes, " " $(col["bytes"]) " ") {
      print tool, $(col["op"]), $(col["bytes"]), $(col["median_us"])
    }' >>"$tmp/rows"
}
run_fabricbench() { fabricbench_rows fabricbench "$tmp/fb.$1.jsonl"; }
run_fb_timeout0() { fabricbench_rows fb-timeout0 "$tmp/fb0.$1.jsonl" --timeout 0; }

run_bare() {
  local level=$1 op bytes out
  for op in $ops; do
    for bytes in $sizes; do
      out=$(FB_BARE_THREAD_LEVEL=$level "${launch[@]}" -x FB_BARE_THREAD_LEVEL "$build/bench/fb_bare_loop" \
        "$op" "$bytes" 20000 2000 </dev/null 2>"$tmp/err") || fail "fb_bare_loop $op $bytes ($level)"
      echo "$out" | awk -v tool="bare-$level" '$1 == "bare" { print tool, $2, $3, $7 }' >>"$tmp/rows"
    done
  done
}
run_bare_funneled() { run_bare funneled; }
run_bare_single() { run_bare single; }

run_osu() {
  local op prog
  for op in $ops; do
    case $op in
      pingpong) prog=(osu_latency) ;;
      all_reduce) prog=(osu_allreduce -T mpi_float) ;;
      *) echo "thread-level-vs-osu: no OSU program for '$op'" >&2 && exit 2 ;;
    esac
    "${launch[@]}" "$peers/${prog[0]}" "${prog[@]:1}" -z -m "$min:$max" </dev/null >"$tmp/osu.out" 2>"$tmp/err" ||
      fail "${prog[0]}"
    awk -v op="$op" -v sizes=" $sizes " '
      /^# Size/ { for (i = 1; i <= NF; i++) if ($i == "P50") p50 = i - 2; next }
      /^[0-9]/ && p50 && index(sizes, " " $1 " ") { print "osu", op, $1, $p50 }' "$tmp/osu.out" >>"$tmp/rows"
  done
}

tools=(run_fabricbench run_fb_timeout0 run_bare_funneled run_bare_single run_osu)
for k in $(seq "$rounds"); do
  for i in "${!tools[@]}"; do
    step=${tools[$(((i + k) % ${#tools[@]}))]}
    "$step" "$k"
    printf '%-18s round %d done (load %s)\n' "${step#run_}" "$k" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done

python3 - "$tmp/rows" "$rounds" <<'PY'
import statistics, sys
rows, rounds = sys.argv[1], int(sys.argv[2])
per = {}
for line in open(rows):
    tool, op, size, us = line.split()
    per.setdefault((tool, op, int(size)), []).append(float(us))
med = {k: statistics.median(v) for k, v in per.items()}
tools = ["fabricbench", "fb-timeout0", "bare-funneled", "bare-single", "osu"]
print(f"{'op':11s} {'bytes':>6s} " + " ".join(f"{t:>13s}" for t in tools) +
      "   ratios to osu (fb, fb-timeout0, funneled, single)")
for op, size in sorted({(k[1], k[2]) for k in med}):
    v = [med.get((t, op, size)) for t in tools]
    if None in v:
        continue
    print(f"{op:11s} {size:6d} " + " ".join(f"{x:13.3f}" for x in v) +
          "   " + " ".join(f"{x / v[-1]:.2f}" for x in v[:-1]))
print(f"medians of {rounds} rounds, microseconds")
PY
