#!/usr/bin/env bash
# Wall time of the default sweep against Intel MPI Benchmarks over the same
# ops and sizes, 2 local ranks, `mpirun --bind-to none` (the README's line),
# the two tools alternating round by round (which goes first alternates too):
#   fabricbench  `run --out REC` as it is (its own defaults: six collectives,
#                8 B to 64 MiB, x2 steps, one placement per op (out-of-place,
#                broadcast in-place: what IMB measures), the adaptive stop;
#                the table on stdout, to a file);
#   IMB-MPI1     Allreduce Reduce_scatter_block Bcast Sendrecv at 8 B..64 MiB
#                and Allgather Alltoall at 4 B..32 MiB per rank (IMB sizes
#                those by what each rank sends, fabricbench by the whole
#                buffer: the same bytes moved), its own iteration policy,
#                no 0-byte size; two launches, both counted.
# Prints each launch's wall time with the load average, the medians of the
# rounds and their ratio, and how fabricbench's rows stopped (`stopped_by`,
# rows whose 95% interval of the median is within the record's ±median_ci,
# through `report rows`); exits 1 when fabricbench / IMB is above GOAL.
# After the first fabricbench round it checks, through `report rows`, that
# the sweep's ops and size range are still the ones mapped above.
#   bench/scripts/sweep-vs-imb.sh [rounds=3]
# Env: FB (the fabricbench binary, default BUILD/fabricbench), BUILD (build folder), PEERS (folder with IMB-MPI1), GOAL (default 1.0).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-3}
bin=${FB:-${BUILD:-$here/build}/fabricbench}
peers=${PEERS:-$here/../shared/peers}
goal=${GOAL:-1.0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
launch=(mpirun -np 2 --bind-to none)

# Seconds since the epoch, to the nanosecond.
now() { date +%s.%N; }

# One launch of `tool` for round k; its wall time goes to $tmp/<tool>.<k>.wall.
one() {
  local tool=$1 k=$2 t0 t1
  t0=$(now)
  if [[ $tool == fabricbench ]]; then
    # The README's line as a user runs it (table on stdout), with --out for the check below.
    "${launch[@]}" "$bin" run --out "$tmp/fb.$k.jsonl" </dev/null >"$tmp/fb.$k.txt" 2>"$tmp/err" || fail "$tool"
  else
    "${launch[@]}" "$peers/IMB-MPI1" Allreduce Reduce_scatter_block Bcast Sendrecv -msglog 3:26 -zero_size off \
      </dev/null >"$tmp/imb.$k.a.txt" 2>"$tmp/err" || fail "$tool"
    "${launch[@]}" "$peers/IMB-MPI1" Allgather Alltoall -msglog 2:25 -zero_size off \
      </dev/null >"$tmp/imb.$k.b.txt" 2>"$tmp/err" || fail "$tool"
  fi
  t1=$(now)
  echo "$t1 - $t0" | bc >"$tmp/$tool.$k.wall"
  printf '%-11s round %d: %6.1f s (load %s)\n' "$tool" "$k" "$(cat "$tmp/$tool.$k.wall")" \
    "$(cut -d' ' -f1 /proc/loadavg)"
}

fail() {
  echo "sweep-vs-imb: the $1 launch failed:" >&2
  cat "$tmp/err" >&2
  exit 2
}

# The mapping above holds only for the default sweep's ops and sizes: say so
# if the binary's defaults moved (read through `report rows`, not the text).
check_mapping() {
  "$bin" report rows "$tmp/fb.1.jsonl" | awk -F'\t' '
    NR == 1 { next }
    { ops[$1] = 1; if (min == "" || $3 < min) min = $3; if ($3 > max) max = $3 }
    END {
      n = 0; for (o in ops) n++
      if (n != 6 || !("all_reduce" in ops) || !("all_gather" in ops) || !("reduce_scatter" in ops) ||
          !("broadcast" in ops) || !("alltoall" in ops) || !("sendrecv" in ops) || min != 8 || max != 67108864) {
        printf "sweep-vs-imb: the default sweep is no longer the six collectives at 8 B..64 MiB " > "/dev/stderr"
        printf "(%d ops, %s..%s B): update the IMB mapping\n", n, min, max > "/dev/stderr"
        exit 1
      }
    }' || exit 2
}

for k in $(seq "$rounds"); do
  if ((k % 2)); then order=(fabricbench imb); else order=(imb fabricbench); fi
  for tool in "${order[@]}"; do one "$tool" "$k"; done
  ((k == 1)) && check_mapping
done

# How each round's rows stopped, and how many reached the interval target
# (2%: `run`'s default --median-ci; the record states it in its options).
for k in $(seq "$rounds"); do
  "$bin" report rows "$tmp/fb.$k.jsonl" | awk -F'\t' -v k="$k" '
    NR == 1 { next }
    {
      n++; stop[$10]++
      half = ($9 - $6 > $6 - $8 ? $9 - $6 : $6 - $8) / $6  # the wider side, as the stop rule judges it
      if ($9 > 0 && half <= 0.02 * (1 + 1e-9)) ok++
    }
    END {
      printf "fabricbench round %d: %d rows, within +-2%%: %d; stopped_by", k, n, ok
      for (s in stop) printf " %s %d", s, stop[s]
      printf "\n"
    }'
done

python3 - "$tmp" "$rounds" "$goal" <<'EOF'
import statistics, sys
tmp, rounds, goal = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
med = {t: statistics.median(float(open(f"{tmp}/{t}.{k}.wall").read()) for k in range(1, rounds + 1))
       for t in ("fabricbench", "imb")}
ratio = med["fabricbench"] / med["imb"]
print(f"median of {rounds} rounds: fabricbench {med['fabricbench']:.1f} s, IMB {med['imb']:.1f} s")
print(f"wall time fabricbench / IMB: {ratio:.2f} (goal: {goal:.2f} or less)")
sys.exit(0 if ratio <= goal else 1)
EOF
