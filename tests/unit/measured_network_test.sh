#!/usr/bin/env bash
# scripts/measured-network.sh: which --network spec a results file gives the
# model (the quick start and the model plots use it). A record's inventory
# lines name scopes too ("scope":"inter" in paths[]); only measurement lines
# may decide, or a one-host run is taken for an inter-node one and the
# model refuses it (the quick start's last step failed so).
set -u
script=${1:?usage: measured_network_test.sh scripts/measured-network.sh}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
expect() {  # NAME EXPECTED_OUTPUT EXPECTED_EXIT FILE
  local out rc
  out=$(bash "$script" "$4" 2>/dev/null)
  rc=$?
  if [ "$out" != "$2" ] || [ "$rc" != "$3" ]; then
    echo "FAIL $1: got '$out' (exit $rc), expected '$2' (exit $3)"
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
}
header='{"type":"run","command":"run"}'
inventory='{"type":"inventory","rank":0,"host":"n1","paths":[{"scope":"intra","class":"shm"},{"scope":"inter","class":"tcp"}]}'
row() { echo "{\"type\":\"measurement\",\"op\":\"all_reduce\",\"backend\":\"mpi\",\"scope\":\"$1\",\"path\":\"shm\",\"bytes\":8}"; }

printf '%s\n%s\n%s\n%s\n' "$header" "$inventory" "$(row global)" "$(row intra)" >"$dir/one-host.jsonl"
expect "one host: its first measured scope stands in" "$dir/one-host.jsonl@global" 0 "$dir/one-host.jsonl"

printf '%s\n%s\n%s\n%s\n' "$header" "$inventory" "$(row intra)" "$(row inter)" >"$dir/nodes.jsonl"
expect "across nodes: the file itself" "$dir/nodes.jsonl" 0 "$dir/nodes.jsonl"

printf '%s\n%s\n%s\n' "$header" "$inventory" "$(row rail)" >"$dir/rails.jsonl"
expect "rail rows are inter-node too" "$dir/rails.jsonl" 0 "$dir/rails.jsonl"

printf '%s\n%s\n' "$header" "$inventory" >"$dir/empty.jsonl"
expect "no measurement rows: an error" "" 2 "$dir/empty.jsonl"

[ "$failures" -eq 0 ]
