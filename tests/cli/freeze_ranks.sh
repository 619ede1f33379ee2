#!/usr/bin/env bash
# Freezes ranks of a running job the way a debugger, the OOM-stalled host or
# `scontrol suspend` does: SIGSTOP, and SIGCONT later (or never).
#   freeze_ranks.sh FABRICBENCH RECORD WHICH CONT_AFTER_S LIMIT_S -- MPIRUN-COMMAND...
# Starts the command; once RECORD holds a measurement row (read through
# FABRICBENCH's `report rows`, not by matching the record's text), SIGSTOPs the
# ranks WHICH ("all", or world ranks separated by commas), SIGCONTs them
# CONT_AFTER_S seconds later (0: never; they are continued when the script
# ends, whatever happens). After LIMIT_S seconds the job is killed.
# Prints "stopped_at_s", "continued_at_s", "exit_code" and "stop_to_exit_s"
# lines (seconds on one clock) and exits with the command's exit code.
set -u
fb=$1 record=$2 which=$3 cont_after=$4 limit=$5
shift 6
now() { date +%s.%N; }
"$@" &
job=$!
frozen=""
cleanup() {
  [ -n "$frozen" ] && kill -CONT $frozen 2>/dev/null
  kill -KILL $job 2>/dev/null
}
trap cleanup EXIT
trap 'exit 124' TERM INT
for _ in $(seq 600); do
  [ -s "$record" ] && "$fb" report rows "$record" 2>/dev/null | tail -n +2 | grep -q . && break
  kill -0 $job 2>/dev/null || break
  sleep 0.05
done
for p in $(pgrep -P $job); do
  r=$(tr '\0' '\n' </proc/$p/environ 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
  [ -z "$r" ] && continue
  if [ "$which" = all ] || [[ ",$which," == *",$r,"* ]]; then frozen="$frozen $p"; fi
done
[ -z "$frozen" ] && { echo "freeze_ranks.sh: no rank to freeze (the job ended first?)" >&2; exit 125; }
stopped=$(now)
kill -STOP $frozen
echo "stopped_at_s $stopped"
(
  if awk "BEGIN { exit !($cont_after > 0) }"; then sleep "$cont_after"; kill -CONT $frozen 2>/dev/null; echo "continued_at_s $(now)"; fi
) &
waker=$!
( sleep "$limit"; kill -KILL $job 2>/dev/null ) &
killer=$!
wait $job
code=$?
ended=$(now)
wait $waker 2>/dev/null
kill $killer 2>/dev/null
echo "exit_code $code"
echo "stop_to_exit_s $(echo "$ended - $stopped" | bc)"
exit $code
