#!/usr/bin/env bash
# scripts/measured-network.sh: which --network spec a results file gives the
# model (the quick start and the model plots use it), on records that
# fabricbench writes here: two local ranks (one host: its first scope stands
# in), the same ranks taken as two nodes (FABRICBENCH_RANKS_PER_NODE=1: inter
# rows, the file itself), and a topo record (no measurement rows: exit 2).
# The script once matched the record's text and stopped finding rows when
# the lines gained a key (run_id), so the quick start never reached its
# model table; it now asks the binary (`report scopes`).
set -u
script=${1:?usage: measured_network_test.sh scripts/measured-network.sh FABRICBENCH MPIEXEC}
export FABRICBENCH=${2:?} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec=${3:?}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
expect() {  # NAME EXPECTED_OUTPUT EXPECTED_EXIT FILE
  local out rc
  out=$(bash "$script" "$4" 2>"$dir/stderr")
  rc=$?
  if [ "$out" != "$2" ] || [ "$rc" != "$3" ]; then
    echo "FAIL $1: got '$out' (exit $rc), expected '$2' (exit $3); stderr: $(cat "$dir/stderr")"
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
}
run2() {  # OUT [fabricbench run arguments]: a two-rank sweep of two small sizes
  local out=$1
  shift
  "$mpiexec" --allow-run-as-root --oversubscribe --bind-to none -np 2 -x FABRICBENCH_RANKS_PER_NODE \
    "$FABRICBENCH" run -b 8 -e 64 -f 8 -n 2 -w 1 --ops all_reduce,sendrecv --quiet --out "$out" "$@" ||
    { echo "FAIL: fabricbench run $* exited $?"; exit 1; }
}

export FABRICBENCH_RANKS_PER_NODE=2  # both ranks on one node, as they are
run2 "$dir/one-host.jsonl"
expect "one host: its first measured scope stands in" "$dir/one-host.jsonl@global" 0 "$dir/one-host.jsonl"

FABRICBENCH_RANKS_PER_NODE=1 run2 "$dir/nodes.jsonl" --scope global,inter
expect "across nodes: the file itself" "$dir/nodes.jsonl" 0 "$dir/nodes.jsonl"

"$mpiexec" --allow-run-as-root --oversubscribe --bind-to none -np 2 "$FABRICBENCH" topo --out "$dir/topo.jsonl" >/dev/null ||
  { echo "FAIL: fabricbench topo exited $?"; exit 1; }
expect "no measurement rows: an error" "" 2 "$dir/topo.jsonl"
grep -q "no measurement rows" "$dir/stderr" || { echo "FAIL: the error does not say why: $(cat "$dir/stderr")"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ]
