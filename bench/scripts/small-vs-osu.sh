#!/usr/bin/env bash
# fabricbench's per-size time against OSU Micro-Benchmarks 7.4, op by op,
# 2 local ranks pinned (`mpirun --bind-to core`), the tools alternating
# round by round (which goes first alternates too), 8 B to 16 MiB:
#   all_reduce     osu_allreduce       -T mpi_float (fabricbench's default dtype)
#   pingpong       osu_latency         (both: half a round trip)
#   all_gather     osu_allgather       OSU size = bytes each rank sends = fabricbench's / 2
#   broadcast      osu_bcast           (in-place: MPI_Bcast has one buffer)
#   alltoall       osu_alltoall        OSU size = bytes to each rank = fabricbench's / 2
#   reduce_scatter osu_reduce_scatter  -T mpi_float; OSU calls MPI_Reduce_scatter,
#                                      fabricbench MPI_Reduce_scatter_block
# The statistic, like with like: a median over iterations on both sides.
# fabricbench's row median (`report rows`: per iteration, the slowest rank's
# time, iterations back to back, those under 50 us given their timing
# group's mean, stopped adaptively; a ping-pong's, rank 0's, the rank that
# starts each round trip) against OSU's P50 (-z: per iteration, the ranks'
# mean time, a barrier between iterations, OSU's default iteration counts;
# osu_latency: rank 0's). The slowest rank's time is never below the ranks'
# mean, so the collectives' comparison leans against fabricbench.
# Broadcast is held against OSU's Max Latency instead (-f: the slowest rank's
# mean over iterations): its root returns once its eager copy is out (OSU's
# Min column, 0.07-0.1 us at 256 B-2 KiB here), so the ranks' mean is about
# half the receiver's time and compares nothing with fabricbench's slowest
# rank. Its P50 is printed beside it.
# fabricbench's out-of-place rows (broadcast: in-place).
# OSU runs from one size below the first one compared (a lead-in row, not
# compared): its first row lands 0.05-0.1 us below its later rows whatever
# its size (osu_alltoall -z at 4 B: 0.46-0.51 us as its first row, 0.55 us
# as its third; at 8 B 0.44 first, 0.57-0.63 second; a warm-up of 200,000
# iterations, -x, leaves the first row as fast), so without it the 8 B rows
# held fabricbench against a mode that only OSU's first row is in
# (docs/figures.md, "OSU's first row").
# Prints per op and size the medians over rounds of each tool's figure and
# their ratio; exits 1 when any ratio is above GOAL.
#   bench/scripts/small-vs-osu.sh [rounds=3]
# Env: FB (the fabricbench binary), BUILD, PEERS (folder with the osu_* programs), GOAL (default 1.10),
# OPS (default: all six, space-separated), MAXBYTES (default 16M), FB_ARGS (more
# `fabricbench run` flags: `--timeout 0` runs without the watchdog, at
# MPI_THREAD_SINGLE as OSU does; docs/figures.md), OSU_ALONE=1 (OSU again in
# fabricbench's place: the comparison's own noise, what OSU against itself
# reads through the same rounds and medians).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-3}
bin=${FB:-${BUILD:-$here/build}/fabricbench}
peers=${PEERS:-$here/../shared/peers}
goal=${GOAL:-1.10}
ops=${OPS:-all_reduce pingpong all_gather broadcast alltoall reduce_scatter}
max_bytes=${MAXBYTES:-16777216}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
launch=(mpirun -np 2 --bind-to core)

# The OSU program of an op, its extra flags, and how many of fabricbench's
# bytes make one OSU size (2 where OSU counts what one of the 2 ranks sends).
osu_of() {
  case $1 in
    all_reduce) echo "osu_allreduce -T mpi_float|1" ;;
    pingpong) echo "osu_latency|1" ;;
    all_gather) echo "osu_allgather|2" ;;
    broadcast) echo "osu_bcast|1" ;;
    alltoall) echo "osu_alltoall|2" ;;
    reduce_scatter) echo "osu_reduce_scatter -T mpi_float|1" ;;
    *) echo "small-vs-osu: no OSU program for '$1'" >&2 && exit 2 ;;
  esac
}

fail() {
  echo "small-vs-osu: $1 failed:" >&2
  cat "$tmp/err" >&2
  exit 2
}

# One fabricbench launch for every op; rows as `op bytes median_us` in $tmp/fb.<k>.
run_fabricbench() {
  local k=$1 list
  if [ -n "${OSU_ALONE:-}" ]; then
    run_osu "$k" "$tmp/again.$k"
    awk '{ print $1, $2, $3 }' "$tmp/again.$k" >"$tmp/fb.$k"
    return
  fi
  list=$(echo "$ops" | tr ' ' ',')
  # shellcheck disable=SC2086 # FB_ARGS is a list of flags
  "${launch[@]}" "$bin" run -q --ops "$list" -b 8 -e "$max_bytes" ${FB_ARGS:-} --out "$tmp/fb.$k.jsonl" \
    </dev/null >/dev/null 2>"$tmp/err" || fail "fabricbench run"
  "$bin" report rows "$tmp/fb.$k.jsonl" | awk -F'\t' '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    ($(col["placement"]) == "out") != ($(col["op"]) == "broadcast") {
      print $(col["op"]), $(col["bytes"]), $(col["median_us"])
    }' >"$tmp/fb.$k"
}

# Each OSU program; rows as `op bytes held_us p50_us` (fabricbench's bytes) in $tmp/osu.<k>
# (or the file given second).
run_osu() {
  local k=$1 out=${2:-$tmp/osu.$1} op spec prog div
  : >"$out"
  for op in $ops; do
    spec=$(osu_of "$op")
    prog=${spec%|*}
    div=${spec#*|}
    # shellcheck disable=SC2086  # prog carries its flags
    # shellcheck disable=SC2046  # -f only where its column is the one held against
    "${launch[@]}" "$peers"/$prog -z $([ "$op" = broadcast ] && echo -f) -m "$((4 / div)):$((max_bytes / div))" \
      </dev/null >"$tmp/osu.out" 2>"$tmp/err" || fail "$prog"
    # Columns by their headers (osu_latency has no -f columns). Each row: the figure held against
    # (broadcast: Max Latency, the slowest rank; else P50), then P50.
    awk -v op="$op" -v div="$div" '
      /^# Size/ {
        gsub(/ Latency ?\(us\)/, "_Latency"); gsub(/ Tail Lat ?\(us\)/, "")
        for (i = 1; i <= NF; i++) col[$i] = i - 1
        held = op == "broadcast" ? col["Max_Latency"] : col["P50"]
        next
      }
      /^[0-9]/ && held && col["P50"] { print op, $1 * div, $held, $(col["P50"]); rows++ }
      END { if (!rows) exit 1 }' "$tmp/osu.out" >>"$out" || { cp "$tmp/osu.out" "$tmp/err"; fail "$prog (no rows with the columns this script reads)"; }
  done
}

for k in $(seq "$rounds"); do
  if ((k % 2)); then order=(run_fabricbench run_osu); else order=(run_osu run_fabricbench); fi
  for step in "${order[@]}"; do
    "$step" "$k"
    printf '%-15s round %d done (load %s)\n' "${step#run_}" "$k" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done

python3 - "$tmp" "$rounds" "$goal" "$ops" <<'EOF'
import statistics, sys
tmp, rounds, goal, ops = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split()
def table(name, column=2):
    per = {}
    for k in range(1, rounds + 1):
        for line in open(f"{tmp}/{name}.{k}"):
            op, size, *figures = line.split()
            per.setdefault((op, int(size)), []).append(float(figures[column - 2]))
    return {key: statistics.median(v) for key, v in per.items()}
fb, osu, osu_p50 = table("fb"), table("osu"), table("osu", 3)
worst = 0.0
print(f"{'op':15s} {'bytes':>9s} {'fb median us':>13s} {'OSU us':>11s} {'ratio':>6s} {'OSU P50 us':>11s}"
      "   (OSU us: its P50; broadcast: its Max Latency)")
for op in ops:
    for key in sorted(k for k in fb if k[0] == op and k in osu):
        r = fb[key] / osu[key] if osu[key] > 0 else float("inf")
        worst = max(worst, r)
        flag = "  above" if r > goal else ""
        print(f"{op:15s} {key[1]:9d} {fb[key]:13.3f} {osu[key]:11.3f} {r:6.2f} {osu_p50[key]:11.3f}{flag}")
print(f"medians of {rounds} rounds; worst ratio {worst:.2f} (goal: {goal:.2f} or less)")
sys.exit(0 if worst <= goal else 1)
EOF
