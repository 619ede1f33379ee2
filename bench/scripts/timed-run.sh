# Sourced by the bench scripts that alternate two modes of `fabricbench run`
# (bench-sweep.sh, bench-counters.sh): one timed run of 2 local ranks.
#   timed_run NAME PREFIX BIN RUN_ARGS...
# runs `mpirun -np 2 --bind-to none BIN run RUN_ARGS... --out PREFIX.jsonl`,
# exits naming NAME if it fails, and leaves PREFIX.wall (seconds),
# PREFIX.err (its stderr) and PREFIX.rows: the rows read through the binary
# (`fabricbench report rows`, tab-separated), never the record's text.
timed_run() {
  local name=$1 prefix=$2 bin=$3 t0 t1
  shift 3
  t0=$(date +%s.%N)
  if ! mpirun -np 2 --bind-to none "$bin" run "$@" --out "$prefix.jsonl" </dev/null >/dev/null 2>"$prefix.err"; then
    echo "$name: the run $(basename "$prefix") failed:" >&2
    tail -n 20 "$prefix.err" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc >"$prefix.wall"
  printf '%-12s %6.1f s (load %s)\n' "$(basename "$prefix")" "$(cat "$prefix.wall")" "$(cut -d' ' -f1 /proc/loadavg)"
  "$bin" report rows "$prefix.jsonl" >"$prefix.rows"
}
